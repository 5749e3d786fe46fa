//! Mount points: checked before use, and mounted through a descriptor so a
//! folder swapped for a symlink after the check is never followed
//! (VeraCrypt's CVE-2025-23021).

use crate::error::{Error, Result};
use std::ffi::{CStr, CString};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use tcd_proto::mount_table;

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
            // O_NOFOLLOW with O_DIRECTORY says ENOTDIR of a link too.
            Some(libc::ENOTDIR) if path.is_symlink() => refuse(path, "is a symlink"),
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
    if tcd_proto::mount_points::is_system_folder(&real) {
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
    /// What the caller asked for beyond these.
    pub fs: FsOptions,
}

pub use tcd_proto::fs_options::{FsOptions, without_owners};

pub(super) fn c_string(bytes: &[u8]) -> Result<CString> {
    CString::new(bytes).map_err(|_| Error::InvalidArgument("a path holds a NUL byte".into()))
}

/// Mounts `device` on `target` with nosuid and nodev; the handle that
/// alone unmounts it.
pub fn mount(device: &Path, target: &Target, options: &Options) -> Result<MountedFs> {
    options
        .fs
        .check_for(&options.fs_type)
        .map_err(Error::InvalidArgument)?;
    let mut flags = libc::MS_NOSUID | libc::MS_NODEV;
    if options.read_only {
        flags |= libc::MS_RDONLY;
    }
    if options.fs.noatime {
        flags |= libc::MS_NOATIME;
    }
    if options.fs.noexec {
        flags |= libc::MS_NOEXEC;
    }
    let mut data = Vec::new();
    if let Some(owner) = options.owner
        && without_owners(&options.fs_type)
    {
        data.extend(options.fs.ownership(owner));
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
    let rc = call(&data)?;
    // A journal or log that needs replaying on a device the kernel may not
    // write: never mounted without the replay (a stale view that hides
    // the last fsync'ed files). The daemon serves read-only mounts of these
    // filesystems through a writable overlay in memory, so this is a
    // last resort.
    if rc != 0
        && options.read_only
        && matches!(options.fs_type.as_str(), "ext3" | "ext4" | "xfs")
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::EROFS)
    {
        return Err(Error::JournalNeedsReplay {
            fs_type: options.fs_type.clone(),
            why: "its device is read-only".into(),
        });
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
    let located = std::fs::metadata(device)
        .map(|m| std::os::unix::fs::MetadataExt::rdev(&m))
        .map_err(|e| Error::Io {
            what: format!("cannot inspect {}", device.display()),
            source: e,
        })
        .and_then(|rdev| {
            // btrfs gives its files an anonymous device number (one per
            // subvolume), never the block device's: its mount is known by
            // the source the kernel records for it instead.
            let ours = if options.fs_type == "btrfs" {
                Ours::Source(device.to_path_buf())
            } else {
                Ours::Device(rdev)
            };
            MountedFs::locate(target, ours)
        });
    match located {
        Err(Error::MountPoint { path, problem }) => match undo_mount(target, device) {
            Ok(()) => Err(Error::MountPoint { path, problem }),
            // The caller hears that a filesystem stays mounted, not only
            // the log.
            Err(e) => Err(Error::MountPoint {
                path,
                problem: format!(
                    "{problem}; the filesystem mounted there could not be detached ({e}): \
                     unmount it by hand before dismounting the volume"
                ),
            }),
        },
        other => {
            if other.is_err() {
                let _ = undo_mount(target, device);
            }
            other
        }
    }
}

/// A mount made but not found again (its folder moved or changed while it
/// was made): detached wherever that folder is now, if what is mounted
/// there comes from `device`, so that no filesystem is left on a device
/// the caller is about to take down (its users would hang).
fn undo_mount(target: &Target, device: &Path) -> Result<()> {
    let undone = std::fs::read_link(format!("/proc/self/fd/{}", target.dir.as_raw_fd()))
        .map_err(|e| Error::Io {
            what: format!("cannot find where {} went", target.path.display()),
            source: e,
        })
        .and_then(|now| unmount_stale(&now, device));
    if let Err(e) = &undone {
        tracing::error!(
            "a filesystem of {} mounted on {} could not be detached: {e}",
            device.display(),
            target.path.display()
        );
    }
    undone
}

/// How the daemon's own mount is told from anything else at the mount
/// point: its files' device number, or the source in the mount table.
pub enum Ours {
    Device(u64),
    Source(PathBuf),
}

impl Ours {
    fn matches(&self, st: &Stat) -> bool {
        match self {
            Ours::Device(dev) => st.dev == *dev,
            Ours::Source(device) => mount_source(st.mount_id).is_some_and(|s| s == *device),
        }
    }
}

/// The source of mount `mount_id` in this process's mount table.
fn mount_source(mount_id: u64) -> Option<PathBuf> {
    mount_table::now()
        .into_iter()
        .find(|m| m.id == mount_id)
        .map(|m| m.source)
}

/// Unmounts the filesystem at `path`, a folder of the daemon's own (its
/// runtime folder): never a path a user can change. A busy filesystem is
/// [`Error::Busy`] unless `force`, which detaches it lazily.
pub fn unmount(path: &Path, force: bool) -> Result<()> {
    let at = c_string(path.as_os_str().as_bytes())?;
    umount_at(&at, force, &path.display().to_string())
}

/// How often a busy unmount is tried again, 100 ms apart.
const BUSY_RETRIES: u32 = 10;

fn umount_at(at: &CStr, force: bool, shown: &str) -> Result<()> {
    let flags = if force { libc::MNT_DETACH } else { 0 };
    // SAFETY: `at` is a NUL-terminated path that outlives the call.
    let rc = unsafe { libc::umount2(at.as_ptr(), flags | libc::UMOUNT_NOFOLLOW) };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EBUSY) => Err(Error::Busy(shown.to_owned())),
        _ => Err(Error::Io {
            what: format!("cannot unmount {shown}"),
            source: e,
        }),
    }
}

/// A filesystem the daemon mounted, held by the folder its mount point is
/// in (an `O_PATH` descriptor, which follows renames and never pins the
/// mount itself), the mount point's name there, and the kernel's ID of the
/// mount. The mount point is a mount point, so it cannot be renamed or
/// removed; whatever a user does to the path above it (renaming a parent,
/// putting a symlink or a FIFO in its place), sync and unmount reach this
/// mount, through `/proc/self/fd/PARENT/NAME`, or nothing.
#[derive(Debug)]
pub struct MountedFs {
    parent: OwnedFd,
    name: CString,
    mount_id: u64,
}

/// What `statx` says of a name in a folder, without following a symlink.
struct Stat {
    mount_id: u64,
    dev: u64,
    mount_root: bool,
}

fn stat_at(dir: &OwnedFd, name: &CStr) -> std::io::Result<Stat> {
    // SAFETY: statx is plain data; all-zero is a valid value.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: `dir` is an open descriptor, `name` a NUL-terminated string
    // and `st` a live statx buffer, all outliving the call.
    let rc = unsafe {
        libc::statx(
            dir.as_raw_fd(),
            name.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW | libc::AT_NO_AUTOMOUNT,
            libc::STATX_BASIC_STATS | libc::STATX_MNT_ID,
            &mut st,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(Stat {
        mount_id: st.stx_mnt_id,
        dev: libc::makedev(st.stx_dev_major, st.stx_dev_minor),
        mount_root: st.stx_attributes & libc::STATX_ATTR_MOUNT_ROOT as u64 != 0,
    })
}

/// Opens `path` as an `O_PATH` folder, with no symlink anywhere on the way.
pub fn open_dir_no_symlinks(path: &Path) -> Result<OwnedFd> {
    let refuse = |e: std::io::Error| Error::Io {
        what: format!("cannot open {} without following symlinks", path.display()),
        source: e,
    };
    // SAFETY: open_how is plain data; all-zero is a valid value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
    let at = c_string(path.as_os_str().as_bytes())?;
    // SAFETY: openat2 reads `at` and `how`, both live for the call, and
    // returns a new descriptor or -1.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            at.as_ptr(),
            &mut how as *mut libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return Err(refuse(std::io::Error::last_os_error()));
    }
    // SAFETY: a descriptor openat2 just returned, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

impl MountedFs {
    /// The mount just made on `target`, whose filesystem has device number
    /// `dev`. Found from the mount point's descriptor, not its path: its
    /// folder is `..` of it, its name the one the kernel shows now.
    pub fn locate(target: &Target, ours: Ours) -> Result<MountedFs> {
        let fd = target.dir.as_raw_fd();
        let lost = |why: String| Error::MountPoint {
            path: target.path.display().to_string(),
            problem: why,
        };
        let parent = File::options()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(format!("/proc/self/fd/{fd}/.."))
            .map(OwnedFd::from)
            .map_err(|e| lost(format!("cannot open its folder: {e}")))?;
        let now = std::fs::read_link(format!("/proc/self/fd/{fd}"))
            .map_err(|e| lost(format!("cannot read where it is: {e}")))?;
        let name = now
            .file_name()
            .ok_or_else(|| lost("has no name".into()))
            .and_then(|n| c_string(n.as_bytes()))?;
        let st = stat_at(&parent, &name).map_err(|e| lost(e.to_string()))?;
        if !st.mount_root || !ours.matches(&st) {
            return Err(lost("changed while the volume was being mounted".into()));
        }
        Ok(MountedFs {
            parent,
            name,
            mount_id: st.mount_id,
        })
    }

    /// `/proc/self/fd/PARENT/NAME`: the mount point, reached through the
    /// daemon's own descriptor.
    fn at(&self) -> Result<CString> {
        let mut p = format!("/proc/self/fd/{}/", self.parent.as_raw_fd()).into_bytes();
        p.extend_from_slice(self.name.as_bytes());
        c_string(&p)
    }

    /// Where the mount is now, for people to read (never used to act).
    pub fn path(&self) -> PathBuf {
        let dir = std::fs::read_link(format!("/proc/self/fd/{}", self.parent.as_raw_fd()))
            .unwrap_or_default();
        dir.join(std::ffi::OsStr::from_bytes(self.name.as_bytes()))
    }

    /// The kernel's ID of the mount.
    pub fn mount_id(&self) -> u64 {
        self.mount_id
    }

    /// Whether the mount point still shows this mount: `Ok(true)` it does,
    /// `Ok(false)` the mount is gone; another mount over it is an error.
    fn check(&self) -> Result<bool> {
        let present = mount_ids().contains(&self.mount_id);
        match stat_at(&self.parent, &self.name) {
            Ok(st) if st.mount_id == self.mount_id => Ok(true),
            _ if !present => Ok(false),
            _ => Err(Error::Busy(format!(
                "{} (another filesystem is mounted over it)",
                self.path().display()
            ))),
        }
    }

    /// Whether the mount is gone from the kernel's table (unmounted
    /// outside the daemon); another mount over it is not its going.
    pub fn is_gone(&self) -> bool {
        matches!(self.check(), Ok(false))
    }

    /// syncfs(2) on the mounted filesystem, so a dismount loses nothing
    /// even if the unmount is lazy. Opens the filesystem's root as a
    /// folder without blocking, never what a path points to.
    pub fn sync(&self) {
        let Ok(at) = self.at() else {
            return;
        };
        // SAFETY: `at` is NUL-terminated and outlives the call; open
        // returns a new descriptor or -1.
        let fd = unsafe {
            libc::open(
                at.as_ptr(),
                libc::O_RDONLY
                    | libc::O_DIRECTORY
                    | libc::O_NOFOLLOW
                    | libc::O_NONBLOCK
                    | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return;
        }
        // SAFETY: a descriptor open just returned, owned by nothing else.
        let root = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut st = std::mem::MaybeUninit::<libc::statx>::zeroed();
        // SAFETY: `root` is open, the empty name with AT_EMPTY_PATH names
        // it, and `st` is a live statx buffer.
        let rc = unsafe {
            libc::statx(
                root.as_raw_fd(),
                c"".as_ptr(),
                libc::AT_EMPTY_PATH,
                libc::STATX_MNT_ID,
                st.as_mut_ptr(),
            )
        };
        // SAFETY: statx filled the buffer when it returned 0.
        if rc != 0 || unsafe { st.assume_init_ref() }.stx_mnt_id != self.mount_id {
            return;
        }
        // SAFETY: syncfs takes an open descriptor and nothing else.
        unsafe {
            libc::syncfs(root.as_raw_fd());
        }
    }

    /// Unmounts this mount, and only it. A busy filesystem is
    /// [`Error::Busy`] unless `force`, which detaches it lazily; a mount
    /// already gone is fine.
    pub fn unmount(&self, force: bool) -> Result<()> {
        if !self.check()? {
            return Ok(());
        }
        let shown = self.path().display().to_string();
        // A filesystem is busy for a moment while anything looks at it (the
        // daemon's own checks, a desktop's file monitor): only a busy
        // answer that lasts is the user's.
        let mut tries = 0;
        loop {
            match umount_at(&self.at()?, force, &shown) {
                Err(Error::Busy(_)) if !force && tries < BUSY_RETRIES => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
                Err(Error::Io { .. }) if !self.check()? => return Ok(()),
                other => return other,
            }
        }
    }

    /// Makes the filesystem read-only, as one still in use is before its
    /// lazy unmount: what was written is on the volume, clean, and its
    /// remaining users can read but not write. Fails (busy) while a file
    /// is open for writing.
    pub fn remount_read_only(&self) -> Result<()> {
        if !self.check()? {
            return Ok(());
        }
        let at = self.at()?;
        let flags = libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV;
        // SAFETY: `at` is a NUL-terminated path that outlives the call; a
        // remount takes no source, type or data.
        let rc = unsafe {
            libc::mount(
                std::ptr::null(),
                at.as_ptr(),
                std::ptr::null(),
                flags,
                std::ptr::null(),
            )
        };
        if rc == 0 {
            return Ok(());
        }
        Err(Error::Io {
            what: format!("cannot make {} read-only", self.path().display()),
            source: std::io::Error::last_os_error(),
        })
    }

    /// The device number of the filesystem mounted here.
    pub fn device(&self) -> Option<u64> {
        stat_at(&self.parent, &self.name)
            .ok()
            .filter(|st| st.mount_id == self.mount_id)
            .map(|st| st.dev)
    }

    /// Removes the (now empty) mount point folder the daemon made.
    pub fn remove_dir(&self) {
        // SAFETY: `parent` is an open folder and `name` a NUL-terminated
        // name in it; unlinkat only removes an empty folder.
        unsafe {
            libc::unlinkat(
                self.parent.as_raw_fd(),
                self.name.as_ptr(),
                libc::AT_REMOVEDIR,
            );
        }
    }
}

/// The IDs of every mount in the daemon's namespace.
fn mount_ids() -> Vec<u64> {
    mount_table::now().iter().map(|m| m.id).collect()
}

/// Unmounts (lazily) what a killed daemon left at `path`, a mount point
/// the mount table names, if the filesystem there comes from `device`:
/// the folder is opened with no symlink on the way and the mount is checked
/// by its source before anything is unmounted.
pub fn unmount_stale(path: &Path, device: &Path) -> Result<()> {
    let parent = open_dir_no_symlinks(path.parent().unwrap_or(Path::new("/")))?;
    let name = c_string(path.file_name().unwrap_or_default().as_bytes())?;
    let st = match stat_at(&parent, &name) {
        Ok(st) => st,
        // A filesystem shut down after its device failed (XFS) answers
        // no stat of its root: the kernel's table says what is mounted
        // there.
        Err(e) if e.raw_os_error() == Some(libc::EIO) => {
            return unmount_stale_unanswering(&parent, &name, path, device);
        }
        Err(e) => {
            return Err(Error::Io {
                what: format!("cannot inspect {}", path.display()),
                source: e,
            });
        }
    };
    if !st.mount_root || mount_source(st.mount_id).as_deref() != Some(device) {
        return Err(Error::MountPoint {
            path: path.display().to_string(),
            problem: format!("does not hold a filesystem of {}", device.display()),
        });
    }
    let held = MountedFs {
        parent,
        name,
        mount_id: st.mount_id,
    };
    held.unmount(true)
}

/// [`unmount_stale`] of a mount whose root answers no stat: unmounted
/// (lazily) if the topmost mount on `path` in the kernel's table is one of
/// `device`. `parent` is `path`'s folder, opened with no symlink on the
/// way, so `parent/name` is `path`.
fn unmount_stale_unanswering(
    parent: &OwnedFd,
    name: &CStr,
    path: &Path,
    device: &Path,
) -> Result<()> {
    let topmost = mount_table::now().into_iter().rfind(|m| m.point == path);
    if topmost.map(|m| m.source).as_deref() != Some(device) {
        return Err(Error::MountPoint {
            path: path.display().to_string(),
            problem: format!("does not hold a filesystem of {}", device.display()),
        });
    }
    let mut at = format!("/proc/self/fd/{}/", parent.as_raw_fd()).into_bytes();
    at.extend_from_slice(name.to_bytes());
    umount_at(&c_string(&at)?, true, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_to_a_folder_is_refused_as_a_link() {
        let dir = std::env::temp_dir().join(format!("tcd-mountpoint-{}", std::process::id()));
        let folder = dir.join("folder");
        std::fs::create_dir_all(&folder).expect("folder");
        let link = dir.join("link");
        let file = dir.join("file");
        std::os::unix::fs::symlink(&folder, &link).expect("link");
        std::fs::write(&file, b"").expect("file");
        let problem = |p: &Path| match check(p, false) {
            Err(Error::MountPoint { problem, .. }) => problem,
            other => format!("{:?}", other.map(|t| t.path)),
        };
        assert_eq!(problem(&link), "is a symlink");
        assert_eq!(problem(&file), "is not a folder");
        assert_eq!(
            problem(&folder),
            format!("{:?}", Ok::<_, ()>(folder.clone()))
        );
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
