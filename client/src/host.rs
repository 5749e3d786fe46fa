//! Opening a volume's host (container file or device) with the user's own
//! rights: what they cannot open, the daemon never sees. The daemon gets
//! the descriptor, never the path. And the new private files the client
//! writes (header backups, keyfiles).

use crate::bus::{Failure, exit};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Opens `path` for reading (and writing with `write`). Only a regular
/// file or a block device is a host: the open never blocks (a FIFO would
/// wait for a writer forever), and anything else is refused by its type
/// before the daemon or a password prompt is involved.
pub fn open(path: &Path, write: bool) -> Result<File, Failure> {
    let file = OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| open_failure(path, &e))?;
    let kind = file
        .metadata()
        .map_err(|e| open_failure(path, &e))?
        .file_type();
    if !(kind.is_file() || kind.is_block_device()) {
        return Err(not_a_host(path, describe(kind)));
    }
    // Back to blocking I/O for the daemon, which shares this open file.
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function owns (`file` is alive);
    // F_GETFL/F_SETFL read and set status flags and touch no memory.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        let e = std::io::Error::last_os_error();
        return Err(open_failure(path, &e));
    }
    Ok(file)
}

/// Opens a volume's host, as [`open`]; a file too small to be any volume
/// is refused at once (exit 7, as the daemon refuses it), before any
/// password is asked.
pub fn open_volume(path: &Path, write: bool) -> Result<File, Failure> {
    let file = open(path, write)?;
    refuse_too_small(&file, path)?;
    Ok(file)
}

fn refuse_too_small(file: &File, path: &Path) -> Result<(), Failure> {
    use tcd_proto::contract::options::MIN_VOLUME_BYTES;
    match file.metadata() {
        Ok(m) if m.is_file() && m.len() < MIN_VOLUME_BYTES => Err(Failure::invalid(format!(
            "{}: the volume is {} bytes: smaller than any TrueCrypt or VeraCrypt volume \
             ({MIN_VOLUME_BYTES} bytes)",
            path.display(),
            m.len()
        ))),
        _ => Ok(()),
    }
}

/// Opens a volume's host to mount it, as [`open`]; one on a read-only
/// file system, or one the user may not write, that was to be written is
/// opened read-only instead, as VeraCrypt mounts it (why, then: the mount
/// must be read-only).
pub fn open_to_mount(path: &Path, write: bool) -> Result<(File, Option<&'static str>), Failure> {
    let (file, fell_back) = match open(path, write) {
        Err(_) if write && on_read_only_fs(path) => {
            (open(path, false)?, Some("is on a read-only file system"))
        }
        // A file the user may read but not write (its mode, or an
        // immutable flag), as VeraCrypt mounts it: read-only; what cannot
        // be read either keeps the first refusal.
        Err(f) if write && f.code == exit::PERMISSION_DENIED => match open(path, false) {
            Ok(file) => (file, Some("cannot be written (permission denied)")),
            Err(_) => return Err(f),
        },
        other => (other?, None),
    };
    refuse_too_small(&file, path)?;
    Ok((file, fell_back))
}

/// Whether `path`'s file system is mounted read-only.
fn on_read_only_fs(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: statvfs reads the NUL-terminated path and fills the struct
    // it is given, or fails and leaves it unread.
    let st = unsafe {
        if libc::statvfs(c.as_ptr(), st.as_mut_ptr()) != 0 {
            return false;
        }
        st.assume_init()
    };
    st.f_flag & libc::ST_RDONLY != 0
}

/// What a file that is no volume is, in words ("a FIFO").
pub(crate) fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "a folder"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else {
        "not a regular file"
    }
}

/// Refuses a path that is there and can hold no volume (a folder, a FIFO,
/// a character device), as [`open`] refuses it: said before anything is
/// asked, by a command that would make a volume there.
pub fn refuse_no_host(path: &Path) -> Result<(), Failure> {
    use std::os::unix::fs::FileTypeExt;
    match std::fs::metadata(path) {
        Ok(m) if !(m.is_file() || m.file_type().is_block_device()) => {
            Err(not_a_host(path, describe(m.file_type())))
        }
        _ => Ok(()),
    }
}

/// The same code for the same problem, whichever command met it.
fn not_a_host(path: &Path, what: &str) -> Failure {
    Failure {
        code: exit::INVALID_ARGUMENT,
        message: format!(
            "{}: is {what}; a volume is a container file or a block device",
            path.display()
        ),
    }
}

/// Whether `p` ends in `/`, naming a folder.
pub fn names_a_folder(p: &Path) -> bool {
    p.as_os_str().as_encoded_bytes().ends_with(b"/")
}

/// A file's name given with a trailing `/` (`vol.hc/`) names a folder:
/// refused, as cp and dd refuse it, rather than read as the file's name.
pub fn refuse_folder_name(p: &Path) -> Result<(), Failure> {
    // A folder there is said as a folder, by the command's own words.
    match names_a_folder(p) && p.as_os_str() != "/" && !p.is_dir() {
        true => Err(Failure::invalid(format!(
            "{}: not a folder (a name ending in / names a folder; a file is named without it)",
            p.display()
        ))),
        false => Ok(()),
    }
}

pub fn open_failure(path: &Path, e: &std::io::Error) -> Failure {
    let shown = path.display();
    match e.raw_os_error() {
        Some(libc::ENOENT) => Failure {
            code: exit::NOT_FOUND,
            message: format!("{shown}: no such file or device"),
        },
        // `vol.hc/`: the name of a folder given to a file.
        // `vol.hc/` names a folder; otherwise a part of the path is a file.
        Some(libc::ENOTDIR) => match refuse_folder_name(path) {
            Err(f) => f,
            Ok(()) => Failure {
                code: exit::NOT_FOUND,
                message: format!("{shown}: no such file or device (a part of its path is a file)"),
            },
        },
        Some(libc::ELOOP) => Failure::invalid(format!(
            "{shown}: too many levels of symbolic links (a link that leads back to itself)"
        )),
        Some(libc::EISDIR) => not_a_host(path, "a folder"),
        Some(libc::ENXIO) => Failure {
            code: exit::NOT_FOUND,
            message: format!("{shown}: no such device (is the disk attached?)"),
        },
        Some(libc::EACCES) => Failure {
            code: exit::PERMISSION_DENIED,
            message: format!("{shown}: permission denied"),
        },
        // Root is refused a write only by the file's own flags.
        Some(libc::EPERM) => Failure {
            code: exit::PERMISSION_DENIED,
            message: format!(
                "{shown}: permission denied (an immutable or append-only file: lsattr(1) shows \
                 its flags, chattr(1) lifts them)"
            ),
        },
        Some(libc::EROFS) => Failure {
            code: exit::PERMISSION_DENIED,
            message: format!("{shown}: is on a read-only file system, where nothing can change it"),
        },
        Some(libc::ETXTBSY) | Some(libc::EBUSY) => Failure {
            code: exit::BUSY,
            message: format!("{shown}: {e}"),
        },
        _ => Failure {
            code: exit::FAILED,
            message: format!("{shown}: {}", crate::bus::io_text(e)),
        },
    }
}

/// A system-encrypted partition's header: the 512 bytes at byte 31744 of
/// its drive, read with the user's own rights (the daemon never opens a
/// drive for a caller who may have been given only the partition). None
/// when `host` is no partition: a drive or disk image holds its header.
pub fn system_header(
    path: &Path,
    host: &File,
) -> Result<Option<tcd_proto::contract::Secret>, Failure> {
    use std::os::unix::fs::{FileExt, MetadataExt};
    let meta = host.metadata().map_err(|e| open_failure(path, &e))?;
    if !meta.file_type().is_block_device() {
        return Ok(None);
    }
    let (major, minor) = (libc::major(meta.rdev()), libc::minor(meta.rdev()));
    let sys = std::path::PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    if !sys.join("partition").exists() {
        return Ok(None);
    }
    let unknown = |why: String| Failure {
        code: exit::FAILED,
        message: format!(
            "{}: cannot find the partition's drive ({why})",
            path.display()
        ),
    };
    let drive_sys = std::fs::canonicalize(&sys)
        .map_err(|e| unknown(e.to_string()))?
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| unknown("no parent in /sys".into()))?;
    let name = drive_sys
        .file_name()
        .ok_or_else(|| unknown("no name in /sys".into()))?;
    let drive = Path::new("/dev").join(name);
    let in_track = |f: Failure| Failure {
        message: format!(
            "{} (the system header of {} lies in its drive's first track)",
            f.message,
            path.display()
        ),
        ..f
    };
    let file = File::open(&drive).map_err(|e| in_track(open_failure(&drive, &e)))?;
    // The node must be the drive sysfs names, not another device so named.
    let want =
        std::fs::read_to_string(drive_sys.join("dev")).map_err(|e| unknown(e.to_string()))?;
    let got = file.metadata().map_err(|e| open_failure(&drive, &e))?;
    let node = format!("{}:{}", libc::major(got.rdev()), libc::minor(got.rdev()));
    if !got.file_type().is_block_device() || want.trim() != node {
        return Err(unknown(format!("{} is another device", drive.display())));
    }
    let mut header = zeroize::Zeroizing::new(vec![0u8; 512]);
    file.read_exact_at(&mut header, 31744)
        .map_err(|e| in_track(open_failure(&drive, &e)))?;
    Ok(Some(tcd_proto::contract::Secret(header)))
}

/// A new file of the user's at `path` that only they may read (mode
/// 0600), never one that exists: that is refused, `rule` saying why.
pub fn create_private(path: &Path, rule: &str) -> Result<File, Failure> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => Failure {
                code: exit::INVALID_ARGUMENT,
                message: format!("{} exists: {rule}", path.display()),
            },
            _ => Failure::file(path, &e),
        })
}

/// The bytes this user may still write in the filesystem holding `folder`.
pub fn free_space(folder: &Path) -> std::io::Result<u64> {
    free_in(&File::open(folder)?)
}

/// Whether `path` is a block device (a link to one too).
pub fn is_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}

/// The bytes this user may still write in the filesystem holding `file`.
fn free_in(file: &File) -> std::io::Result<u64> {
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: fstatvfs fills the statvfs it is given for an open
    // descriptor, or fails and leaves it unread.
    let st = unsafe {
        if libc::fstatvfs(file.as_raw_fd(), st.as_mut_ptr()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        st.assume_init()
    };
    // Nothing is written to a read-only filesystem, whatever its room:
    // said as such (EROFS), not as a lack of space.
    if st.f_flag & libc::ST_RDONLY != 0 {
        return Err(std::io::Error::from_raw_os_error(libc::EROFS));
    }
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// Refuses to grow `file` (shown as `shown`) by `more` bytes where its
/// filesystem has fewer free for this user, before anything is written:
/// VeraCrypt's "not enough free space". Space left `sparse` (a quick
/// format, no random fill) is taken only as the volume is written: then a
/// warning says so. A filesystem that cannot say is left to the writes,
/// which report a full disk themselves.
pub fn check_room(file: &File, shown: &Path, more: u64, sparse: bool) -> Result<(), Failure> {
    let Ok(free) = free_in(file) else {
        return Ok(());
    };
    if more <= free {
        return Ok(());
    }
    if sparse {
        eprintln!(
            "tcctl: warning: {}: {} more than its filesystem has free ({}): writes into the \
             volume fail once that filesystem is full",
            shown.display(),
            crate::output::human_size(more - free),
            crate::output::human_size(free)
        );
        return Ok(());
    }
    Err(Failure::invalid(format!(
        "{}: not enough free space: {} more are needed and its filesystem has {} free",
        shown.display(),
        crate::output::human_size(more),
        crate::output::human_size(free)
    )))
}

/// Whether `host` begins with a partition table (a GPT, or an MBR whose
/// four entries are well formed): a whole drive, perhaps one encrypted as
/// a system drive, whose header is in its first track.
pub fn partition_table(host: &File) -> bool {
    use std::os::unix::fs::FileExt;
    let mut head = [0u8; 520];
    if host.read_exact_at(&mut head, 0).is_err() {
        return false;
    }
    if &head[512..520] == b"EFI PART" {
        return true;
    }
    let entries = &head[446..510];
    let well_formed = entries.chunks(16).all(|e| matches!(e[0], 0x00 | 0x80));
    let used = entries.chunks(16).any(|e| e[4] != 0);
    head[510..512] == [0x55, 0xaa] && well_formed && used
}

/// The unencrypted filesystem or container whose signature begins
/// `host`, if any: told after a wrong password, since no password opens
/// it (a TrueCrypt or VeraCrypt volume begins with its salt, random
/// bytes, so each signature is checked with enough of its fields that
/// chance never forms one).
pub fn plain_signature(host: &File) -> Option<&'static str> {
    use std::os::unix::fs::FileExt;
    let mut head = vec![0u8; 0x10048];
    let n = host.read_at(&mut head, 0).ok()?;
    head.truncate(n);
    let at = |off: usize, magic: &[u8]| head.get(off..off + magic.len()) == Some(magic);
    let le32 = |off: usize| {
        head.get(off..off + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    // ext2/3/4: the magic, a revision of 0 or 1 and a block size of 1 to
    // 64 KiB in its superblock at 1024.
    let ext = at(1080, &[0x53, 0xef])
        && le32(1024 + 76).is_some_and(|r| r <= 1)
        && le32(1024 + 24).is_some_and(|b| b <= 6);
    let boot = at(510, &[0x55, 0xaa]);
    [
        (ext, "ext4 (or ext2/ext3) filesystem"),
        (at(0, b"LUKS\xba\xbe"), "LUKS container"),
        (at(0, b"XFSB"), "XFS filesystem"),
        (at(0x10040, b"_BHRfS_M"), "btrfs filesystem"),
        (at(3, b"NTFS    ") && boot, "NTFS filesystem"),
        (at(3, b"EXFAT   ") && boot, "exFAT filesystem"),
        (
            (at(54, b"FAT12   ") || at(54, b"FAT16   ") || at(82, b"FAT32   ")) && boot,
            "FAT filesystem",
        ),
    ]
    .into_iter()
    .find_map(|(found, what)| found.then_some(what))
}

#[cfg(test)]
mod tests {
    use super::{partition_table, plain_signature};
    use std::io::Write;

    /// A file of `bytes` in the temporary folder, open for reading.
    fn file_of(bytes: &[u8], name: &str) -> std::fs::File {
        let path = std::env::temp_dir().join(format!("tcctl-sig-{name}-{}", std::process::id()));
        std::fs::File::create(&path)
            .and_then(|mut f| f.write_all(bytes))
            .expect("scratch file");
        let f = std::fs::File::open(&path).expect("open");
        let _ = std::fs::remove_file(&path);
        f
    }

    #[test]
    fn random_heads_are_no_filesystem_and_signatures_are_named() {
        // Random bytes, as a volume's salt and encrypted header begin it.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut head = vec![0u8; 0x10048];
        for round in 0..64 {
            for b in head.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            // Even with ext's two-byte magic in place by chance.
            head[1080] = 0x53;
            head[1081] = 0xef;
            head[510] = 0x55;
            head[511] = 0xaa;
            let f = file_of(&head, "random");
            assert_eq!(plain_signature(&f), None, "{round}");
            assert!(!partition_table(&f), "{round}");
        }
        head[1024 + 76..1024 + 80].copy_from_slice(&1u32.to_le_bytes());
        head[1024 + 24..1024 + 28].copy_from_slice(&2u32.to_le_bytes());
        assert_eq!(
            plain_signature(&file_of(&head, "ext")),
            Some("ext4 (or ext2/ext3) filesystem")
        );
        assert_eq!(
            plain_signature(&file_of(b"LUKS\xba\xbe\0\x02", "luks")),
            Some("LUKS container")
        );
    }
}
