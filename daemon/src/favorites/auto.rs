//! Mounting favorites: the last PRF and encryption tried first, and the
//! daemon's own mounts of system favorites (at start, when their device
//! appears) with the credentials their administrator gave them.

use super::Favorite;
use crate::cache::Cached;
use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// Where a favorite's volume is now: its file, or the device its stable
/// name points to (`None` when the device is absent).
pub fn locate(fav: &Favorite) -> Option<PathBuf> {
    tcd_proto::devices::locate(&fav.host)
}

/// The device number `fav` is on now, if it is a present device.
pub fn device_number(fav: &Favorite) -> Option<u64> {
    if !fav.host.starts_with("/dev/") {
        return None;
    }
    let p = locate(fav)?;
    let m = std::fs::metadata(p).ok()?;
    std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()).then(|| m.rdev())
}

/// Bytes of a password file (a password has at most 128).
const MAX_PASSWORD_FILE: u64 = 4096;
/// Keyfiles of one system favorite, folders' files included.
const MAX_KEYFILES: usize = 256;

/// Opens a file the daemon reads as root for nobody in particular (a
/// system favorite's keyfile or password file, or a folder of keyfiles)
/// without following a symbolic link or waiting on a pipe: only a regular
/// file (or, with `folder`, a folder) of root's that no one else may
/// change is accepted, so no user can plant one or hold the daemon.
/// `private`: readable by no one else either.
fn open_root_file(path: &Path, what: &str, folder: bool, private: bool) -> Result<File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let unsafe_file = |problem: String| Error::UnsafeFile {
        path: format!("the {what} {}", path.display()),
        problem,
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => unsafe_file("is a symbolic link".into()),
            // Named by an administrator and gone: said plainly, not as an
            // I/O failure.
            Some(libc::ENOENT) => {
                Error::NotFound(format!("the {what} {} does not exist", path.display()))
            }
            _ => Error::Io {
                what: format!("cannot open the {what} {}", path.display()),
                source: e,
            },
        })?;
    let meta = f.metadata().map_err(|e| Error::Io {
        what: format!("cannot inspect the {what} {}", path.display()),
        source: e,
    })?;
    let kind = meta.file_type();
    if !(kind.is_file() || folder && kind.is_dir()) {
        let is = if kind.is_fifo() {
            "a pipe"
        } else if kind.is_socket() {
            "a socket"
        } else if kind.is_dir() {
            "a folder"
        } else if kind.is_block_device() || kind.is_char_device() {
            "a device"
        } else {
            "not a regular file"
        };
        return Err(unsafe_file(format!("is {is}, not a regular file")));
    }
    let others = if private { 0o077 } else { 0o022 };
    if meta.uid() != 0 || meta.permissions().mode() & others != 0 {
        return Err(unsafe_file(format!(
            "must be root's and {} by no one else",
            if private { "readable" } else { "writable" }
        )));
    }
    Ok(f)
}

/// At most `max` bytes of `f`.
fn read_up_to(f: File, max: u64, what: &str, path: &Path) -> Result<Zeroizing<Vec<u8>>> {
    let mut bytes = Zeroizing::new(Vec::new());
    std::io::Read::read_to_end(&mut std::io::Read::take(f, max), &mut bytes).map_err(|e| {
        Error::Io {
            what: format!("cannot read the {what} {}", path.display()),
            source: e,
        }
    })?;
    Ok(bytes)
}

/// A system favorite's password file: root's, private, a few bytes.
fn read_password_file(path: &Path) -> Result<Zeroizing<Vec<u8>>> {
    let what = "password file";
    let f = open_root_file(path, what, false, true)?;
    let bytes = read_up_to(f, MAX_PASSWORD_FILE + 1, what, path)?;
    if bytes.len() as u64 > MAX_PASSWORD_FILE {
        return Err(Error::TooLarge(format!(
            "the {what} {} has more than {MAX_PASSWORD_FILE} bytes",
            path.display()
        )));
    }
    Ok(bytes)
}

/// A system favorite's keyfiles, as TrueCrypt takes them (the first MiB
/// of a file; a folder stands for the files directly in it, not hidden
/// ones, in byte order of their names), each opened as
/// [`open_root_file`] says.
fn read_keyfiles(paths: &[String]) -> Result<Vec<Zeroizing<Vec<u8>>>> {
    use crate::volume::keyfile::MAX_READ;
    let what = "keyfile";
    let mut out = Vec::new();
    for p in paths {
        let path = Path::new(p);
        let f = open_root_file(path, what, true, false)?;
        let is_dir = f.metadata().is_ok_and(|m| m.is_dir());
        if !is_dir {
            out.push(read_up_to(f, MAX_READ as u64, what, path)?);
        } else {
            // The folder as opened, not whatever its path names by now.
            use std::os::fd::AsRawFd;
            let dir = PathBuf::from(format!("/proc/self/fd/{}", f.as_raw_fd()));
            let io = |e| Error::Io {
                what: format!("cannot list the keyfile folder {}", path.display()),
                source: e,
            };
            let mut names = Vec::new();
            for entry in std::fs::read_dir(&dir).map_err(io)? {
                let entry = entry.map_err(io)?;
                let name = entry.file_name();
                let hidden = name.as_encoded_bytes().first() == Some(&b'.');
                // Subfolders do not count (TrueCrypt's rule); anything else
                // is opened and must pass.
                if hidden || entry.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                names.push(name);
                if names.len() > MAX_KEYFILES {
                    break;
                }
            }
            if names.is_empty() {
                return Err(Error::Keyfile {
                    path: path.display().to_string(),
                    problem: "folder has no keyfiles".into(),
                });
            }
            names.sort();
            for name in names {
                let shown = path.join(&name);
                let f =
                    open_root_file(&dir.join(&name), what, false, false).map_err(|e| match e {
                        Error::UnsafeFile { problem, .. } => Error::UnsafeFile {
                            path: format!("the {what} {}", shown.display()),
                            problem,
                        },
                        other => other,
                    })?;
                out.push(read_up_to(f, MAX_READ as u64, what, &shown)?);
            }
        }
        if out.len() > MAX_KEYFILES {
            return Err(Error::TooLarge(format!(
                "more than {MAX_KEYFILES} keyfiles"
            )));
        }
    }
    Ok(out)
}

/// A system favorite's system header when its volume is a partition: the
/// 512 bytes at byte 31744 of its drive, read by the daemon itself (an
/// administrator named the volume); None for a drive or a disk image,
/// which hold their header.
pub fn system_header(path: &Path) -> Result<Option<Zeroizing<Vec<u8>>>> {
    use std::os::unix::fs::FileExt;
    let io = |what: String| move |e| Error::Io { what, source: e };
    let meta = std::fs::metadata(path).map_err(io(format!("cannot inspect {}", path.display())))?;
    let Some(sys) = crate::volume::system::partition_sysfs(&meta) else {
        return Ok(None);
    };
    let no_drive = || {
        Error::InvalidArgument(format!(
            "{}: cannot find the partition's drive, whose first track holds its system header",
            path.display()
        ))
    };
    let drive_sys = std::fs::canonicalize(&sys)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .ok_or_else(no_drive)?;
    let drive = Path::new("/dev").join(drive_sys.file_name().ok_or_else(no_drive)?);
    let want = std::fs::read_to_string(drive_sys.join("dev")).map_err(|_| no_drive())?;
    let file = open_host(&drive, false)?;
    let got = file
        .metadata()
        .map_err(io(format!("cannot inspect {}", drive.display())))?
        .rdev();
    if want.trim() != format!("{}:{}", libc::major(got), libc::minor(got)) {
        return Err(no_drive());
    }
    let mut header = Zeroizing::new(vec![0u8; 512]);
    file.read_exact_at(&mut header, 31744).map_err(io(format!(
        "cannot read the first track of {}",
        drive.display()
    )))?;
    Ok(Some(header))
}

/// Opens a system favorite's volume as root without waiting on a pipe
/// put in its place: a regular file or a block device only.
/// Opens a system favorite's container or device as the daemon.
pub fn open_host(path: &Path, write: bool) -> Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let io = |e| Error::Io {
        what: format!("cannot open {}", path.display()),
        source: e,
    };
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(io)?;
    let kind = f.metadata().map_err(io)?.file_type();
    if !(kind.is_file() || kind.is_block_device()) {
        return Err(Error::InvalidArgument(format!(
            "{} is neither a container file nor a block device",
            path.display()
        )));
    }
    // Back to ordinary blocking reads for the volume's own I/O.
    // SAFETY: F_SETFL on a descriptor this function owns; no pointers.
    let r = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETFL, 0) };
    if r != 0 {
        return Err(io(std::io::Error::last_os_error()));
    }
    Ok(f)
}

/// The credentials of a system favorite the daemon mounts itself: its
/// password file (without the line end) and keyfiles, each a file of
/// root's that no one else may change.
pub fn system_credentials(fav: &Favorite) -> Result<Cached> {
    if fav.password_file.is_none() && fav.keyfiles.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "favorite {:?} has no password file or keyfiles for mounting without a user",
            fav.name
        )));
    }
    let mut password = match &fav.password_file {
        Some(p) => read_password_file(Path::new(p))?,
        None => Zeroizing::new(Vec::new()),
    };
    while password.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        password.pop();
    }
    Ok(Cached {
        password,
        keyfiles: read_keyfiles(&fav.keyfiles)?,
        pim: fav.pim,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_files_are_opened_without_following_links_or_waiting_on_pipes() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("key");
        std::fs::write(&key, b"secret key bytes").unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        let k = |p: &Path| read_keyfiles(&[p.display().to_string()]);
        assert_eq!(&k(&key).unwrap()[0][..], b"secret key bytes");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&key, &link).unwrap();
        let e = k(&link).unwrap_err();
        assert!(
            matches!(e, Error::UnsafeFile { .. }) && e.to_string().contains("symbolic link"),
            "{e}"
        );
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo reads it only.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = k(&fifo).unwrap_err();
        assert!(e.to_string().contains("a pipe"), "{e}");
        let e = read_password_file(&fifo).unwrap_err();
        assert!(matches!(e, Error::UnsafeFile { .. }), "{e}");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o620)).unwrap();
        let e = k(&key).unwrap_err();
        assert!(e.to_string().contains("writable by no one else"), "{e}");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(k(&key).is_ok(), "a keyfile others may read is still root's");
        let e = read_password_file(&key).unwrap_err();
        assert!(e.to_string().contains("readable by no one else"), "{e}");
        // A folder counts its regular files; a link or pipe inside is refused.
        let folder = dir.path().join("keys");
        std::fs::create_dir(&folder).unwrap();
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(folder.join("a"), b"a").unwrap();
        assert_eq!(k(&folder).unwrap().len(), 1);
        std::os::unix::fs::symlink(&key, folder.join("b")).unwrap();
        let e = k(&folder).unwrap_err();
        assert!(e.to_string().contains("keys/b"), "{e}");
    }
}
