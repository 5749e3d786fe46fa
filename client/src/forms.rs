//! What a desktop dialog fills in, turned into the same calls and option
//! structs `tcctl` sends: the host and keyfiles opened with the user's own
//! rights, descriptors and bytes handed over, never paths.

use crate::bus::{Client, Failure};
use crate::cli::{Encryption, Hash, wire_name};
use crate::input::{absolute, read_keyfiles};
use clap::ValueEnum;
use std::path::{Path, PathBuf};
use tcd_proto::contract::options::{MountFilesystem, VolumeFormat};
use tcd_proto::contract::volume::HeaderInfo;
use tcd_proto::contract::{MountOptions, SearchOptions, Secret, SecretList};
use zbus::zvariant::OwnedObjectPath;
use zeroize::Zeroizing;

/// The Mount dialog.
#[derive(Debug, Default, Clone)]
pub struct MountForm {
    pub volume: PathBuf,
    pub keyfiles: Vec<PathBuf>,
    /// 0: the format's default.
    pub pim: u32,
    pub truecrypt: bool,
    /// None: every one (Auto).
    pub hash: Option<String>,
    pub encryption: Option<String>,
    pub readonly: bool,
    pub mount_point: Option<PathBuf>,
    pub block_device_only: bool,
    pub cache: bool,
    pub dismount_idle_minutes: u32,
    /// Opened by the backup header embedded in the volume only (`tcctl
    /// -m headerbak`).
    pub backup_header: bool,
    /// A partition of a system-encrypted drive, opened without pre-boot
    /// authentication (`tcctl -m system`): its header in the drive's first
    /// track; read-only unless `readonly` is false.
    pub system_encryption: bool,
    /// With a hidden volume to protect: its PIM (0: the default) and its
    /// keyfiles, read as the volume's own keyfiles are.
    pub protect_hidden_pim: u32,
    pub protect_hidden_keyfiles: Vec<PathBuf>,
}

/// The hashes (PRFs) a search may be narrowed to, as the daemon names them.
pub fn hashes() -> Vec<String> {
    Hash::value_variants()
        .iter()
        // SHA-1 (TrueCrypt before 5.0) is taken but not offered.
        .filter(|h| h.to_possible_value().is_some_and(|v| !v.is_hide_set()))
        .map(|h| wire_name(*h))
        .collect()
}

/// The encryption algorithms and cascades, as the daemon names them.
pub fn encryptions() -> Vec<String> {
    Encryption::value_variants()
        .iter()
        .map(|e| wire_name(*e))
        .collect()
}

impl MountForm {
    /// `Mount`'s options; the hidden volume's password, when it is to be
    /// protected, goes in as a secret, with its PIM (its keyfiles are
    /// added by [`MountForm::mount`], which reads them).
    pub fn options(&self, protect_hidden: Option<&[u8]>) -> MountOptions {
        let nonzero = |n: u32| (n != 0).then_some(n);
        let (system, headerbak) = (self.system_encryption, self.backup_header);
        MountOptions {
            // Unticked, the daemon decides (read-only for volumes of
            // TrueCrypt before 5.0); for system encryption unticked is
            // read-write, as `tcctl -m system --read-write`.
            readonly: if self.readonly {
                Some(true)
            } else {
                system.then_some(false)
            },
            filesystem: Some(if self.block_device_only {
                MountFilesystem::None
            } else {
                MountFilesystem::Auto
            }),
            cache: Some(self.cache),
            dismount_idle_seconds: Some(self.dismount_idle_minutes.saturating_mul(60)),
            mount_point: self.mount_point.as_deref().map(absolute),
            protect_hidden_password: protect_hidden.map(|p| Secret::new(p.to_vec())),
            protect_hidden_pim: protect_hidden.and_then(|_| nonzero(self.protect_hidden_pim)),
            ..Default::default()
        }
        .with_search(SearchOptions {
            hash: self.hash.clone(),
            encryption: self.encryption.clone(),
            format: self.truecrypt.then_some(VolumeFormat::TrueCrypt),
            pim: nonzero(self.pim),
            system_encryption: system.then_some(true),
            backup_header: headerbak.then_some(true),
            ..Default::default()
        })
    }

    /// What cannot go together, refused before the daemon is asked, in
    /// the words `tcctl` uses for its options.
    pub fn refuse_unsupported(&self, protect_hidden: bool) -> Result<(), Failure> {
        let why = if self.system_encryption && self.backup_header {
            "system encryption and the backup header cannot go together: a system drive has no \
             backup header"
        } else if self.system_encryption && protect_hidden {
            "system encryption and protecting a hidden volume cannot go together: a system \
             drive has no hidden volume"
        } else if self.truecrypt && protect_hidden && self.protect_hidden_pim != 0 {
            "TrueCrypt volumes have no PIM (the hidden volume's PIM goes with VeraCrypt volumes)"
        } else {
            return Ok(());
        };
        Err(Failure::invalid(why.into()))
    }

    /// Mounts: the host opened with the caller's rights (for writing unless
    /// read-only), the keyfiles read (the hidden volume's too, when it is
    /// protected; and a system partition's header from its drive, as
    /// `tcctl -m system` reads it), then `Mount`.
    pub fn mount(
        &self,
        c: &Client,
        password: &[u8],
        protect_hidden: Option<&[u8]>,
    ) -> Result<OwnedObjectPath, Failure> {
        self.refuse_unsupported(protect_hidden.is_some())?;
        let host = crate::host::open(&self.volume, !self.readonly)?;
        let keyfiles = read_keyfiles(&self.keyfiles)?;
        let mut options = self.options(protect_hidden);
        if protect_hidden.is_some() && !self.protect_hidden_keyfiles.is_empty() {
            let hidden = read_keyfiles(&self.protect_hidden_keyfiles)?;
            let bytes = hidden.iter().map(|k| k.to_vec()).collect();
            options.protect_hidden_keyfiles = Some(SecretList::new(bytes));
        }
        if self.system_encryption {
            options.detached_header = crate::host::system_header(&self.volume, &host)?;
        }
        c.mount(&host, &absolute(&self.volume), password, &keyfiles, options)
    }
}

/// The policy in force with hardware acceleration on or off and the
/// backends allowed (`None`: all), the rest as it is.
pub fn policy_with(
    now: &crate::bus::PolicyView,
    acceleration: bool,
    allowed: Option<Vec<String>>,
) -> Result<String, Failure> {
    use tcd_proto::contract::policy::{Acceleration, Policy};
    let mut policy = Policy::parse(&now.text)
        .map_err(|e| Failure::invalid(format!("the daemon's policy does not parse: {e}")))?;
    policy.hardware_acceleration = if acceleration {
        Acceleration::Auto
    } else {
        Acceleration::Disabled
    };
    policy.allowed = allowed;
    Ok(policy.to_text())
}

/// `Benchmark`, with `progress(done, total)` as the daemon reports it.
pub fn benchmark(
    c: &Client,
    buffer_bytes: u64,
    progress: impl Fn(u32, u32) + Send + 'static,
) -> Result<crate::bus::Bench, Failure> {
    c.with_signals(
        "BenchmarkProgress",
        move |m| {
            if let Ok((done, total)) = m.body().deserialize::<(u32, u32)>() {
                progress(done, total);
            }
        },
        || c.benchmark(buffer_bytes, false),
    )
}

/// The filesystems a new volume may get, as the daemon names them.
pub fn filesystems() -> Vec<String> {
    crate::cli::NewFilesystem::value_variants()
        .iter()
        .map(|f| wire_name(*f))
        .collect()
}

/// Where the Volume Creation Wizard puts the new volume.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A new container file of the size given.
    #[default]
    NewFile,
    /// A device or an existing file, all of it: what was there is gone.
    Existing,
    /// A hidden volume in the free space of an outer volume.
    Hidden,
}

/// The Volume Creation Wizard.
#[derive(Debug, Default, Clone)]
pub struct CreateForm {
    pub volume: PathBuf,
    pub place: Place,
    /// Bytes: the new file's size, or the hidden volume's.
    pub size: u64,
    pub truecrypt: bool,
    pub encryption: String,
    pub hash: String,
    pub filesystem: String,
    pub quick: bool,
    pub pim: u32,
    pub keyfiles: Vec<PathBuf>,
    /// A device's logical sector size for the volume (0: the device's).
    pub sector_size: u32,
}

/// The outer volume of a new hidden volume, opened with its credentials.
#[derive(Debug, Clone)]
pub struct Outer {
    pub password: Zeroizing<Vec<u8>>,
    pub pim: u32,
    pub keyfiles: Vec<PathBuf>,
    /// The hash that opened it, which narrows the daemon's second look.
    pub hash: Option<String>,
    /// The largest hidden volume its data area leaves room for, in bytes.
    pub limit: u64,
}

/// Where the daemon puts a hidden volume: never in the outer volume's
/// first 64 KiB (its filesystem's own header) nor its last 4 KiB.
const HIDDEN_KEEP_CLEAR: u64 = 65536 + 4096;

/// The largest hidden volume an outer data area of `size` bytes leaves
/// room for; files of the outer volume in that space lower it (the daemon
/// then refuses, and says how much fits behind them).
pub fn hidden_limit(size: u64) -> u64 {
    size.saturating_sub(HIDDEN_KEEP_CLEAR) / 512 * 512
}

/// The hash of the outer volume `info` describes; refused when the
/// password opened a hidden volume rather than its outer one.
pub fn outer_hash(volume: &Path, info: &HeaderInfo) -> Result<Option<String>, Failure> {
    if info.hidden == Some(true) {
        return Err(Failure::invalid(format!(
            "{}: that password opens a hidden volume; a new hidden volume goes inside an outer \
             volume, opened with the outer volume's password",
            volume.display()
        )));
    }
    Ok(info.hash.clone())
}

/// Opens the outer volume of a new hidden volume (read-only, with the
/// caller's rights): its hash, and how large the hidden volume may be.
pub fn open_outer(
    c: &Client,
    volume: &Path,
    password: Zeroizing<Vec<u8>>,
    pim: u32,
    keyfiles: Vec<PathBuf>,
) -> Result<Outer, Failure> {
    let host = crate::host::open(volume, false)?;
    let read = read_keyfiles(&keyfiles)?;
    let search = SearchOptions {
        pim: (pim != 0).then_some(pim),
        ..Default::default()
    };
    let info = c.header_info(&host, &password, &read, search)?;
    let hash = outer_hash(volume, &info)?;
    Ok(Outer {
        password,
        pim,
        keyfiles,
        hash,
        limit: hidden_limit(info.size.unwrap_or(0)),
    })
}

impl CreateForm {
    /// Has the daemon write the volume, with `progress(done, total)` in
    /// bytes: into a new file of the user's (never one that exists; a
    /// failed or cancelled creation leaves no file behind), over a device
    /// or file the user may write, or hidden inside `outer`.
    pub fn create(
        &self,
        c: &Client,
        password: &[u8],
        outer: Option<&Outer>,
        progress: impl Fn(u64, u64) + Send + 'static,
    ) -> Result<(), Failure> {
        let keyfiles = read_keyfiles(&self.keyfiles)?;
        crate::input::judge_new_password(password, !keyfiles.is_empty(), false, "--keyfile")?.say();
        let mut options = self.options();
        if self.place == Place::Hidden {
            let outer = outer.ok_or_else(|| {
                Failure::invalid("open the outer volume first, with its password".into())
            })?;
            let outer_keyfiles = read_keyfiles(&outer.keyfiles)?;
            crate::options::create_hidden(
                &mut options,
                self.size,
                &outer.password,
                outer.pim,
                outer_keyfiles.iter().map(|k| k.to_vec()).collect(),
            );
            options.outer_hash = outer.hash.clone();
        }
        let host = self.open_host()?;
        let made = c.with_signals(
            "CreateProgress",
            move |m| {
                if let Ok((done, total)) = m.body().deserialize::<(u64, u64)>() {
                    progress(done, total);
                }
            },
            || c.create(&host, password, &keyfiles, options),
        );
        if made.is_err() && self.place == Place::NewFile {
            let _ = std::fs::remove_file(&self.volume);
        }
        made
    }

    fn open_host(&self) -> Result<std::fs::File, Failure> {
        if self.place != Place::NewFile {
            return crate::host::open(&self.volume, true);
        }
        let shown = self.volume.display();
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&self.volume)
            .and_then(|f| f.set_len(self.size).map(|()| f))
            .map_err(|e| Failure::invalid(format!("{shown}: {e}")))
    }

    fn options(&self) -> tcd_proto::contract::CreateOptions {
        tcd_proto::contract::CreateOptions {
            format: Some(if self.truecrypt {
                VolumeFormat::TrueCrypt
            } else {
                VolumeFormat::VeraCrypt
            }),
            encryption: Some(self.encryption.clone()),
            hash: Some(self.hash.clone()),
            filesystem: tcd_proto::contract::options::NewFilesystem::ALL
                .into_iter()
                .find(|f| f.key() == self.filesystem),
            quick: Some(self.quick),
            pim: (self.pim != 0).then_some(self.pim),
            sector_size: (self.sector_size != 0).then_some(self.sector_size),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mount_dialogs_backup_header_and_system_options_reach_mount_as_tcctl_sends_them() {
        let bak = MountForm {
            backup_header: true,
            ..Default::default()
        };
        let o = bak.options(None);
        assert_eq!((o.backup_header, o.system_encryption), (Some(true), None));
        assert_eq!(o.readonly, None);
        let sys = MountForm {
            system_encryption: true,
            ..Default::default()
        };
        let o = sys.options(None);
        assert_eq!((o.backup_header, o.system_encryption), (None, Some(true)));
        // Unticked read-only is read-write, as `-m system --read-write`.
        assert_eq!(o.readonly, Some(false));
        let both = MountForm {
            system_encryption: true,
            backup_header: true,
            ..Default::default()
        };
        let refused = both.refuse_unsupported(false).expect_err("refused");
        assert!(
            refused.message.contains("no backup header"),
            "{}",
            refused.message
        );
        assert!(sys.refuse_unsupported(true).is_err());
        assert!(bak.refuse_unsupported(true).is_ok());
    }

    #[test]
    fn the_hidden_volumes_pim_goes_with_its_password_only() {
        let form = MountForm {
            protect_hidden_pim: 7,
            ..Default::default()
        };
        let o = form.options(Some(b"inner"));
        let password = o.protect_hidden_password.as_ref().map(Secret::as_bytes);
        assert_eq!(password, Some(&b"inner"[..]));
        assert_eq!(o.protect_hidden_pim, Some(7));
        assert_eq!(form.options(None).protect_hidden_pim, None);
        let truecrypt = MountForm {
            truecrypt: true,
            ..form
        };
        let refused = truecrypt.refuse_unsupported(true).expect_err("refused");
        assert!(refused.message.contains("no PIM"), "{}", refused.message);
        assert!(truecrypt.refuse_unsupported(false).is_ok());
    }
}
