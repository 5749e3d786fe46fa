//! Header maintenance: what a header says, a new password (or keyfiles,
//! PIM, PRF, format), header backups and their restore.

use super::mount::{credentials, format_of, prf_named};
use super::{App, Caller};
use crate::error::{Error, Result};
use crate::volume::kdf::Scope;
use crate::volume::maintain;
use crate::volume::opened::{OpenVolume, TimesKept};
use crate::volume::unlock::{ProgressSink, Target};
use std::fs::File;
use std::sync::atomic::AtomicBool;
use tcd_proto::contract::{HeaderInfo, NewCredentials, SearchOptions, Secret, SecretList};
use zeroize::Zeroizing;

/// A volume and the credentials that open it, as a call names them.
pub struct Opening {
    pub host: File,
    pub password: Secret,
    pub keyfiles: SecretList,
    pub options: SearchOptions,
    /// Where the search's progress goes.
    pub progress: Option<ProgressSink>,
}

/// What `with_volume` hands the work: the engine's search, checked and
/// counted.
pub(super) struct Checked {
    pub search: crate::volume::unlock::SearchOptions,
    pub creds: crate::cache::Cached,
    _slot: crate::engine::trials::SearchSlot,
}

impl App {
    /// Only reading a header takes it from a header file (`detached`): the
    /// other operations write the volume's own headers, or back them up.
    pub(super) fn check_opening(
        &self,
        caller: &Caller,
        o: &Opening,
        detached: bool,
    ) -> Result<Checked> {
        if !detached && o.options.system_encryption == Some(true) {
            return Err(Error::InvalidArgument(
                "option system_encryption: only HeaderInfo and Mount open a system drive".into(),
            ));
        }
        if !detached && o.options.detached_header.is_some() {
            return Err(Error::InvalidArgument(
                "option detached_header: only HeaderInfo and Mount read a detached header".into(),
            ));
        }
        if o.options.skip_data_check.is_some() {
            return Err(Error::InvalidArgument(
                "option skip_data_check: only RestoreHeaders, from a backup file, checks the \
                 volume's data"
                    .into(),
            ));
        }
        if !detached && o.options.backup_header == Some(true) {
            return Err(Error::InvalidArgument(
                "option backup_header: only HeaderInfo and Mount open by the backup header".into(),
            ));
        }
        super::input::bounded_keyfiles("keyfiles", &o.keyfiles)?;
        let mut search = self.search_of(&o.options)?;
        if search.backup_only && (search.system || search.detached.is_some()) {
            return Err(Error::InvalidArgument(
                "option backup_header: a system drive or a header file has no backup header".into(),
            ));
        }
        search.progress = o.progress.clone();
        let pim = o.options.pim.unwrap_or(0);
        let slot = self.search_slot(caller, &mut search, &[pim])?;
        Ok(Checked {
            search,
            creds: credentials(o.password.clone(), o.keyfiles.clone(), pim),
            _slot: slot,
        })
    }

    /// What a volume's header says, without mounting it.
    pub fn header_info(
        &self,
        caller: &Caller,
        o: Opening,
        cancel: &AtomicBool,
    ) -> Result<HeaderInfo> {
        let (v, pim, _times) = self.open_header(caller, o, cancel)?;
        let info = v.info();
        let key_bits = u32::try_from(info.chain.key_bytes() * 8).unwrap_or(u32::MAX);
        let scope = if info.system {
            Scope::System
        } else {
            Scope::Volume
        };
        let argon2 = info.prf.argon2_cost(pim);
        // Told before a new hidden volume's password is asked: the outer
        // volume, opened first, already holds one. A host cut short says
        // nothing here: `info` still shows the header.
        let end_in_use = match info.hidden || info.system {
            true => None,
            false => v.end_in_use(crate::volume::create::HIDDEN_END_RESERVE).ok(),
        };
        Ok(HeaderInfo {
            format: Some(info.format.name().to_owned()),
            header_version: Some(u32::from(info.header_version)),
            encryption: Some(info.chain.name.to_owned()),
            hash: Some(info.prf.name().to_owned()),
            hidden: Some(info.hidden),
            used_backup_header: Some(info.used_backup_header),
            data_offset: Some(info.data_offset),
            size: Some(info.data_size),
            sector_size: Some(info.sector_size),
            weak_keys: Some(info.weak_keys),
            backends: Some(info.backends.join(",")),
            pim: Some(pim),
            iterations: info.prf.iterations_in(info.format, pim, scope),
            argon2_memory_kib: argon2.map(|c| c.memory_kib),
            argon2_passes: argon2.map(|c| c.passes),
            key_bits: Some(key_bits),
            mode: Some(info.chain.cryptsetup_mode().to_owned()),
            system_encryption: Some(info.system),
            minimum_version: Some(info.minimum_version()),
            end_in_use,
        })
    }

    /// The master key of the volume the credentials open: root only,
    /// whatever polkit would allow, since it decrypts the volume for as
    /// long as its header lives, whatever the password becomes.
    pub fn header_master_key(
        &self,
        caller: &Caller,
        o: Opening,
        cancel: &AtomicBool,
    ) -> Result<Secret> {
        if caller.uid != 0 {
            return Err(Error::PermissionDenied(
                "only root may read a master key".into(),
            ));
        }
        let (v, _, _times) = self.open_header(caller, o, cancel)?;
        Ok(Secret(v.master_key()))
    }

    /// Opens the volume of `o` for a look at its header; with the PIM
    /// that opened it, and its container's times, put back once the look
    /// is over.
    fn open_header(
        &self,
        caller: &Caller,
        o: Opening,
        cancel: &AtomicBool,
    ) -> Result<(OpenVolume, u32, Option<TimesKept>)> {
        let times = TimesKept::keep(&o.host, caller.uid);
        let c = self.check_opening(caller, &o, true)?;
        let kf = c.creds.keyfile_refs();
        let creds = c.creds.credentials(&kf);
        let engine = self.table.engine();
        let v = OpenVolume::open(engine, o.host, creds, Target::Any, &c.search, cancel, true)?;
        Ok((v, c.creds.pim, times))
    }

    /// Rewrites the headers with new credentials (works on a mounted
    /// volume too); the format the header was converted to, if it was.
    pub fn change_password(
        &self,
        caller: &Caller,
        o: Opening,
        new_password: Secret,
        new_keyfiles: SecretList,
        new: NewCredentials,
        cancel: &AtomicBool,
    ) -> Result<Option<crate::volume::kdf::Format>> {
        super::input::bounded_keyfiles("new keyfiles", &new_keyfiles)?;
        super::input::refuse_read_only(&o.host, "changing its password")?;
        let _times = TimesKept::keep(&o.host, caller.uid);
        let c = self.check_opening(caller, &o, false)?;
        let new_prf = new.hash.as_deref().map(prf_named).transpose()?;
        // A new password keeps the PIM unless a new one is given, as
        // VeraCrypt's own change does; TrueCrypt has none.
        let to_truecrypt =
            new.format == Some(tcd_proto::contract::options::VolumeFormat::TrueCrypt);
        let new_pim = new
            .pim
            .unwrap_or(if to_truecrypt { 0 } else { c.creds.pim });
        c.search.limits.request_allowed(new_prf, new_pim)?;
        let new_creds = credentials(new_password, new_keyfiles, new_pim);
        let nkf = new_creds.keyfile_refs();
        let okf = c.creds.keyfile_refs();
        let rekey = maintain::Rekey {
            creds: new_creds.credentials(&nkf),
            prf: new_prf,
            format: new.format.map(format_of),
        };
        let creds = c.creds.credentials(&okf);
        let engine = self.table.engine();
        maintain::change_credentials(
            engine,
            &o.host,
            creds,
            Target::Any,
            &rekey,
            &c.search,
            cancel,
        )
    }

    /// Both header slots of the volume the password opens (128 KiB, the
    /// same whether or not a hidden volume exists), written to `backup`.
    pub fn backup_headers(
        &self,
        caller: &Caller,
        o: Opening,
        mut backup: File,
        cancel: &AtomicBool,
    ) -> Result<()> {
        let _times = TimesKept::keep(&o.host, caller.uid);
        let c = self.check_opening(caller, &o, false)?;
        let kf = c.creds.keyfile_refs();
        let creds = c.creds.credentials(&kf);
        let bytes =
            maintain::backup_headers(self.table.engine(), &o.host, creds, &c.search, cancel)?;
        std::io::Write::write_all(&mut backup, &bytes)
            .and_then(|()| backup.sync_all())
            .map_err(|e| Error::Io {
                what: "cannot write the header backup".into(),
                source: e,
            })
    }

    /// Restores the header the password opens from a backup file, or with
    /// `backup` None from the volume's embedded backup header. Returns
    /// which header it restored.
    pub fn restore_headers(
        &self,
        caller: &Caller,
        mut o: Opening,
        backup: Option<File>,
        cancel: &AtomicBool,
    ) -> Result<&'static str> {
        // Taken out here: no other call takes it.
        let check_data = match (o.options.skip_data_check.take(), &backup) {
            (Some(true), Some(_)) => false,
            (_, Some(_)) => true,
            (Some(_), None) => {
                return Err(Error::InvalidArgument(
                    "option skip_data_check: only a restore from a backup file checks the \
                     volume's data"
                        .into(),
                ));
            }
            (None, None) => false,
        };
        super::input::refuse_read_only(&o.host, "restoring its header")?;
        let _times = TimesKept::keep(&o.host, caller.uid);
        let c = self.check_opening(caller, &o, false)?;
        // Dismount it first: its header is in use.
        self.table.refuse_mounted(&o.host)?;
        let _claim = crate::mount::in_use::claim(&o.host)?;
        let kf = c.creds.keyfile_refs();
        let creds = c.creds.credentials(&kf);
        let engine = self.table.engine();
        let location = match backup {
            None => maintain::restore_from_embedded(engine, &o.host, creds, &c.search, cancel)?,
            Some(f) => {
                // Its size said as it is, not as far as it was read.
                if let Ok(m) = f.metadata()
                    && m.is_file()
                    && m.len() != maintain::BACKUP_FILE_BYTES as u64
                {
                    return Err(maintain::not_a_backup_size(m.len()));
                }
                let mut bytes = Zeroizing::new(Vec::new());
                std::io::Read::read_to_end(
                    &mut std::io::Read::take(f, maintain::BACKUP_FILE_BYTES as u64 + 1),
                    &mut bytes,
                )
                .map_err(|e| Error::Io {
                    what: "cannot read the header backup".into(),
                    source: e,
                })?;
                maintain::restore_from_file(
                    engine, &o.host, &bytes, creds, &c.search, check_data, cancel,
                )?
            }
        };
        Ok(location.describe())
    }
}
