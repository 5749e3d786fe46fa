//! Volume Tools, as the desktop application's dialog fills them in: a
//! volume's header opened with its password, keyfiles and PIM, then shown,
//! given new credentials (and converted to the VeraCrypt format), backed
//! up or restored — the calls `tcctl info`,
//! `change-password`, `backup-header` and `restore-header` make, the host
//! opened with the user's own rights.

use crate::bus::{Client, Failure, HeaderInfo};
use crate::input::read_keyfiles;
use std::fs::File;
use std::path::{Path, PathBuf};
use tcd_proto::contract::options::{BACKUP_FILE_BYTES, VolumeFormat};
use tcd_proto::contract::{NewCredentials, SearchOptions};

/// What opens a volume's header.
#[derive(Debug, Default, Clone)]
pub struct HeaderForm {
    pub volume: PathBuf,
    pub keyfiles: Vec<PathBuf>,
    /// 0: the format's default.
    pub pim: u32,
    pub truecrypt: bool,
}

/// The new credentials of a change of password.
#[derive(Debug, Default, Clone)]
pub struct NewSecrets {
    pub keyfiles: Vec<PathBuf>,
    /// `None`: the PIM that opened it.
    pub pim: Option<u32>,
    /// `None`: the PRF it has.
    pub hash: Option<String>,
    /// `None`: the format it has; VeraCrypt converts a TrueCrypt volume
    /// (`tcctl change-password --to veracrypt`).
    pub to: Option<VolumeFormat>,
}

impl HeaderForm {
    fn search(&self) -> SearchOptions {
        SearchOptions {
            format: self.truecrypt.then_some(VolumeFormat::TrueCrypt),
            pim: (self.pim != 0).then_some(self.pim),
            ..Default::default()
        }
    }

    /// `HeaderInfo`: what `tcctl info` shows.
    pub fn info(&self, c: &Client, password: &[u8]) -> Result<HeaderInfo, Failure> {
        let host = crate::host::open(&self.volume, false)?;
        let keyfiles = read_keyfiles(&self.keyfiles)?;
        c.header_info(&host, password, &keyfiles, self.search())
    }

    /// `ChangePassword`; the new password judged as `tcctl` judges it.
    pub fn change_password(
        &self,
        c: &Client,
        old: &[u8],
        new: &[u8],
        secrets: &NewSecrets,
    ) -> Result<(), Failure> {
        let host = crate::host::open(&self.volume, true)?;
        let keyfiles = read_keyfiles(&self.keyfiles)?;
        let new_kf = read_keyfiles(&secrets.keyfiles)?;
        crate::input::judge_new_password(new, !new_kf.is_empty(), false, "--new-keyfile")?.say();
        // The PIM it keeps (the one that opened it) unless a new one.
        let pim = secrets.pim.unwrap_or(self.pim);
        crate::input::judge_new_pim(new, pim, !new_kf.is_empty(), false)?.say();
        let new_o = NewCredentials {
            pim: secrets.pim,
            hash: secrets.hash.clone(),
            format: secrets.to,
        };
        c.change_password(&host, old, &keyfiles, self.search(), new, &new_kf, new_o)
    }

    /// `BackupHeaders` into `to`, a new file only its owner may read; a
    /// failure leaves no file.
    pub fn backup(&self, c: &Client, password: &[u8], to: &Path) -> Result<(), Failure> {
        let host = crate::host::open(&self.volume, false)?;
        let keyfiles = read_keyfiles(&self.keyfiles)?;
        let out = new_backup_file(to)?;
        let r = c.backup_headers(&host, &out, password, &keyfiles, self.search());
        if r.is_err() {
            let _ = std::fs::remove_file(to);
        }
        r
    }

    /// `RestoreHeaders` from `from`, or the embedded backup header when
    /// `None`; which header of the backup was used.
    pub fn restore(
        &self,
        c: &Client,
        password: &[u8],
        from: Option<&Path>,
    ) -> Result<String, Failure> {
        let host = crate::host::open(&self.volume, true)?;
        let file = from.map(open_backup).transpose()?;
        let keyfiles = read_keyfiles(&self.keyfiles)?;
        c.restore_headers(&host, file.as_ref(), password, &keyfiles, self.search())
    }
}

const BACKUP_RULE: &str = "a header backup never replaces a file; name a new one";

/// A header backup's file: new, mode 0600, never over another.
pub fn new_backup_file(path: &Path) -> Result<File, Failure> {
    crate::host::create_private(path, BACKUP_RULE)
}

/// Refuses a header backup's path that is taken (or whose folder is
/// missing) before any password is asked; `new_backup_file` makes it after.
pub fn check_backup_path(path: &Path) -> Result<(), Failure> {
    crate::host::refuse_folder_name(path)?;
    if path.is_dir() {
        return Err(Failure::invalid(format!(
            "{} is a folder: a header backup is written to a new file; name one (in {}, say)",
            path.display(),
            path.display()
        )));
    }
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(Failure {
            code: crate::bus::exit::INVALID_ARGUMENT,
            message: format!("{} exists: {BACKUP_RULE}", path.display()),
        });
    }
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::metadata(folder).map_err(|e| Failure::file(folder, &e))?;
    // A full filesystem is said before the password, as create says it.
    match crate::host::free_space(folder) {
        Ok(free) if free < BACKUP_FILE_BYTES => Err(Failure::invalid(format!(
            "{}: not enough free space for the header backup: {BACKUP_FILE_BYTES} bytes are needed \
             and its filesystem has {free} free",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// A header backup to restore from.
pub fn open_backup(path: &Path) -> Result<File, Failure> {
    crate::host::refuse_folder_name(path)?;
    let f = crate::input::open_regular(path).map_err(|e| Failure::file(path, &e))?;
    // Refused before a password is asked (the daemon checks it again).
    match f.metadata() {
        Ok(m) if m.len() != BACKUP_FILE_BYTES => Err(Failure::invalid(format!(
            "{}: a header backup is {BACKUP_FILE_BYTES} bytes; this one is {}",
            path.display(),
            m.len()
        ))),
        _ => Ok(f),
    }
}
