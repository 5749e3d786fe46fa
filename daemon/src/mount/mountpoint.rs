//! Mount points: checked before use, and mounted through a descriptor so a
//! folder swapped for a symlink after the check is never followed
//! (VeraCrypt's CVE-2025-23021).

use crate::error::{Error, Result};
use std::ffi::CString;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Folders no volume is mounted on or under.
const SYSTEM: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin",
    "/sys", "/usr", "/var/lib", "/var/log",
];
/// Folders no volume is mounted on (their subfolders are fine).
const SYSTEM_EXACT: &[&str] = &[
    "/", "/home", "/media", "/mnt", "/opt", "/root", "/run", "/srv", "/tmp", "/var",
];

/// A mount point that passed the checks, held open.
#[derive(Debug)]
pub struct Target {
    dir: File,
    path: PathBuf,
}

impl Target {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The uid owning the folder.
    pub fn owner(&self) -> Option<u32> {
        use std::os::unix::fs::MetadataExt;
        self.dir.metadata().ok().map(|m| m.uid())
    }

    /// The folder, opened without following links.
    pub(super) fn dir(&self) -> &File {
        &self.dir
    }
}

fn refuse(path: &Path, why: &str) -> Error {
    Error::MountPoint {
        path: path.display().to_string(),
        problem: why.to_owned(),
    }
}

/// Checks `path` as a mount point: an absolute path to an existing folder,
/// reached through no symlink, not a system folder, and empty unless
/// `allow_non_empty`.
pub fn check(path: &Path, allow_non_empty: bool) -> Result<Target> {
    if !path.is_absolute() {
        return Err(refuse(path, "not an absolute path"));
    }
    let dir = File::options()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENOENT) => refuse(path, "does not exist"),
            Some(libc::ELOOP) => refuse(path, "is a symlink"),
            Some(libc::ENOTDIR) => refuse(path, "is not a folder"),
            _ => refuse(path, &e.to_string()),
        })?;
    // Where the descriptor really is: a symlink among the parents shows here.
    let real = std::fs::read_link(format!("/proc/self/fd/{}", dir.as_raw_fd()))
        .map_err(|e| refuse(path, &e.to_string()))?;
    let normal: PathBuf = path.components().collect();
    if real != normal {
        return Err(refuse(path, "is reached through a symlink"));
    }
    if SYSTEM_EXACT.iter().any(|s| real == Path::new(s))
        || SYSTEM.iter().any(|s| real.starts_with(s))
    {
        return Err(refuse(path, "is a system folder"));
    }
    if !allow_non_empty {
        let mut entries = std::fs::read_dir(format!("/proc/self/fd/{}", dir.as_raw_fd()))
            .map_err(|e| refuse(path, &e.to_string()))?;
        if entries.next().is_some() {
            return Err(refuse(path, "is not empty"));
        }
    }
    Ok(Target { dir, path: real })
}

/// What to mount and how.
#[derive(Debug, Clone)]
pub struct Options {
    pub fs_type: String,
    pub read_only: bool,
    /// Owner for filesystems without owners (FAT, exFAT, NTFS).
    pub owner: Option<(u32, u32)>,
    /// Let the filesystem send discards (TRIM) down; off by default, since
    /// they show which blocks hold data.
    pub discard: bool,
}

pub(super) fn c_string(bytes: &[u8]) -> Result<CString> {
    CString::new(bytes).map_err(|_| Error::InvalidArgument("a path holds a NUL byte".into()))
}

/// Mounts `device` on `target` with nosuid and nodev.
pub fn mount(device: &Path, target: &Target, options: &Options) -> Result<()> {
    let mut flags = libc::MS_NOSUID | libc::MS_NODEV;
    if options.read_only {
        flags |= libc::MS_RDONLY;
    }
    let mut data = Vec::new();
    if let Some((uid, gid)) = options.owner
        && matches!(
            options.fs_type.as_str(),
            "vfat" | "exfat" | "ntfs" | "ntfs3"
        )
    {
        data.push(format!("uid={uid},gid={gid}"));
    }
    if options.discard {
        data.push("discard".into());
    }
    let source = c_string(device.as_os_str().as_bytes())?;
    let at = c_string(format!("/proc/self/fd/{}", target.dir.as_raw_fd()).as_bytes())?;
    let fs_type = c_string(options.fs_type.as_bytes())?;
    let call = |data: &[String]| -> Result<i32> {
        let data = c_string(data.join(",").as_bytes())?;
        // SAFETY: every pointer is a NUL-terminated string that outlives
        // the call; mount(2) reads them and keeps none.
        Ok(unsafe {
            libc::mount(
                source.as_ptr(),
                at.as_ptr(),
                fs_type.as_ptr(),
                flags,
                data.as_ptr().cast(),
            )
        })
    };
    let mut rc = call(&data)?;
    // A journal that needs replaying cannot be replayed read-only (a
    // volume whose daemon was killed): mount without replaying it, as
    // the kernel suggests, rather than not at all.
    if rc != 0
        && options.read_only
        && matches!(options.fs_type.as_str(), "ext3" | "ext4")
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EROFS)
    {
        tracing::warn!(
            "{}: the journal needs recovery; mounting read-only without replaying it",
            device.display()
        );
        data.push("noload".into());
        rc = call(&data)?;
    }
    if rc != 0 {
        return Err(Error::Io {
            what: format!(
                "cannot mount the {} filesystem on {}",
                options.fs_type,
                target.path.display()
            ),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(())
}

/// Unmounts the filesystem at `path`. A busy filesystem is
/// [`Error::Busy`] unless `force`, which detaches it lazily.
pub fn unmount(path: &Path, force: bool) -> Result<()> {
    let at = c_string(path.as_os_str().as_bytes())?;
    let flags = if force { libc::MNT_DETACH } else { 0 };
    // SAFETY: `at` is a NUL-terminated path that outlives the call.
    let rc = unsafe { libc::umount2(at.as_ptr(), flags | libc::UMOUNT_NOFOLLOW) };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EBUSY) => Err(Error::Busy(path.display().to_string())),
        _ => Err(Error::Io {
            what: format!("cannot unmount {}", path.display()),
            source: e,
        }),
    }
}
