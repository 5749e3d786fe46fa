//! Filesystems the kernel lacks, mounted through a FUSE driver: FAT through
//! `fusefat`, exFAT through `mount.exfat-fuse`, NTFS through `ntfs-3g`
//! where the kernel has no `ntfs3`. Many kernels without dm-crypt
//! (containers, locked-down hosts) also lack vfat and exfat.
//!
//! The driver mounts on a staging folder under the daemon's runtime folder
//! (root's alone), and the daemon then bind-mounts that onto the checked
//! mount point through its `O_NOFOLLOW` descriptor, so a driver that
//! resolves paths itself is never handed a folder a user could swap.

use super::mountpoint::{FsOptions, MountedFs, Options, Ours, Target, c_string};
use super::tools;
use crate::error::{Error, Result};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a driver's process may take to go after its unmount.
const EXIT_WAIT: Duration = Duration::from_secs(30);

/// A filesystem served by a driver process.
#[derive(Debug)]
pub struct UserFs {
    pid: Option<u32>,
}

/// The driver for `fs_type`, if there is one.
fn driver(fs_type: &str) -> Option<&'static str> {
    match fs_type {
        "vfat" => Some("fusefat"),
        "exfat" => Some("mount.exfat-fuse"),
        "ntfs" => Some("ntfs-3g"),
        _ => None,
    }
}

/// Whether the kernel has its NTFS driver, `ntfs3`, loading the module
/// if modprobe can.
fn kernel_has_ntfs3() -> bool {
    kernel_has("ntfs3") || (tools::run("modprobe", ["-q", "ntfs3"]).is_ok() && kernel_has("ntfs3"))
}

/// The type the kernel mounts a filesystem blkid calls `fs_type` as:
/// NTFS through `ntfs3` (the old `ntfs` driver of older kernels only reads).
pub fn kernel_type(fs_type: &str) -> String {
    match fs_type {
        "ntfs" => "ntfs3".to_owned(),
        other => other.to_owned(),
    }
}

/// Whether the running kernel mounts `fs_type` itself.
pub fn kernel_has(fs_type: &str) -> bool {
    std::fs::read_to_string("/proc/filesystems")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().last() == Some(fs_type))
}

/// Whether `fs_type` goes through a driver here: the kernel lacks it and a
/// driver exists.
pub fn needed(fs_type: &str) -> bool {
    match fs_type {
        "ntfs" => !kernel_has_ntfs3(),
        _ => driver(fs_type).is_some() && !kernel_has(fs_type),
    }
}

/// Why fusefat takes no `fmask=` or `dmask=`: libfuse's `umask=` is its
/// only mode option, for files and folders alike.
pub const FUSEFAT_MASKS: &str = "fs options: fmask= and dmask= are not available for FAT here: \
     the kernel lacks vfat, and its FUSE driver, fusefat, has one mask for files and folders; \
     use umask=";

/// The owner and mode options `tool` takes: fusefat one mask for all
/// (`mount` refuses fmask= and dmask= for it), the others both masks.
fn ownership(tool: &str, fs: &FsOptions, owner: (u32, u32)) -> Vec<String> {
    let mut v = fs.ownership(owner);
    if tool == "fusefat" {
        v.retain(|o| !o.starts_with("fmask=") && !o.starts_with("dmask="));
        v.push(format!("umask={:03o}", fs.masks().0));
    }
    v
}

/// Mounts `device` (of `options.fs_type`) on `target` through its driver,
/// staging in `staging` (made, root's alone); the driver and the handle of
/// the mount on `target`.
pub fn mount(
    device: &Path,
    target: &Target,
    options: &Options,
    staging: &Path,
) -> Result<(UserFs, MountedFs)> {
    let tool = driver(&options.fs_type)
        .ok_or_else(|| Error::InvalidArgument(format!("no driver for {}", options.fs_type)))?;
    options
        .fs
        .check_for(&options.fs_type)
        .map_err(Error::InvalidArgument)?;
    if tool == "fusefat" && (options.fs.fmask.is_some() || options.fs.dmask.is_some()) {
        return Err(Error::InvalidArgument(FUSEFAT_MASKS.into()));
    }
    let io = |what: String| move |source| Error::Io { what, source };
    std::fs::create_dir_all(staging).map_err(io(format!("cannot make {}", staging.display())))?;
    let mut opts = vec![
        // Users reach files only as their modes allow.
        "allow_other".to_owned(),
        "default_permissions".to_owned(),
        "nosuid".to_owned(),
        "nodev".to_owned(),
    ];
    // Names the device in the mount table, so a later daemon finds it
    // (ntfs-3g names it so itself, and refuses the option).
    if tool != "ntfs-3g" {
        opts.push(format!("fsname={}", device.display()));
    }
    opts.push(match (tool, options.read_only) {
        (_, true) => "ro".to_owned(),
        ("fusefat", false) => "rw+".to_owned(),
        (_, false) => "rw".to_owned(),
    });
    if let Some(owner) = options.owner {
        opts.extend(ownership(tool, &options.fs, owner));
    }
    for (on, word) in [
        (options.fs.noatime, "noatime"),
        (options.fs.noexec, "noexec"),
    ] {
        if on {
            opts.push(word.to_owned());
        }
    }
    let opts = opts.join(",");
    let args: Vec<&std::ffi::OsStr> = match tool {
        // fusefat and ntfs-3g take the image and folder first.
        "fusefat" | "ntfs-3g" => vec![
            device.as_os_str(),
            staging.as_os_str(),
            "-o".as_ref(),
            opts.as_ref(),
        ],
        _ => vec![
            "-o".as_ref(),
            opts.as_ref(),
            device.as_os_str(),
            staging.as_os_str(),
        ],
    };
    // The drivers mount, then go to the background: success means
    // mounted.
    tools::run(tool, args)?;
    let fs = UserFs {
        pid: driver_pid(staging),
    };
    let mounted = match bind(staging, target, options) {
        Ok(m) => m,
        Err(e) => {
            let _ = super::mountpoint::unmount(staging, true);
            fs.wait_gone();
            return Err(e);
        }
    };
    // The staging mount is no longer needed: the bind holds the filesystem.
    let _ = super::mountpoint::unmount(staging, true);
    let _ = std::fs::remove_dir(staging);
    Ok((fs, mounted))
}

impl UserFs {
    /// The driver's process, if it was found.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// After a lazy unmount: waits, however long, until the driver has
    /// gone (it goes when the filesystem's last user leaves).
    pub fn wait_gone_unbounded(&self) {
        if let Some(pid) = self.pid {
            let proc = PathBuf::from(format!("/proc/{pid}"));
            while proc.exists() {
                std::thread::sleep(Duration::from_millis(250));
            }
        }
    }

    /// After the unmount: waits until the driver has written everything
    /// and gone, so the loop device under it can go too.
    pub fn wait_gone(&self) {
        let Some(pid) = self.pid else {
            return;
        };
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let start = Instant::now();
        while proc.exists() && start.elapsed() < EXIT_WAIT {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The driver process serving `staging` (found by its command line).
fn driver_pid(staging: &Path) -> Option<u32> {
    let want = staging.as_os_str().as_bytes();
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        cmdline
            .split(|b| *b == 0)
            .any(|arg| arg == want)
            .then_some(pid)
    })
}

/// Sets nosuid, nodev (and read-only, noexec, noatime as asked) on the
/// staging mount, then bind-mounts it onto `target` through its
/// descriptor; the bind keeps those flags. No path a user controls is
/// used.
fn bind(staging: &Path, target: &Target, options: &Options) -> Result<MountedFs> {
    let dev_of = |p: &Path| {
        std::fs::metadata(p)
            .map(|m| m.dev())
            .map_err(|e| Error::Io {
                what: format!("{}", p.display()),
                source: e,
            })
    };
    let staged_dev = dev_of(staging)?;
    if staged_dev == dev_of(staging.parent().unwrap_or(Path::new("/")))? {
        return Err(Error::ToolFailed {
            tool: "FUSE filesystem driver".into(),
            message: "reported success but mounted nothing".into(),
        });
    }
    let staged = c_string(staging.as_os_str().as_bytes())?;
    let at = c_string(format!("/proc/self/fd/{}", target.dir().as_raw_fd()).as_bytes())?;
    let none = c_string(b"none")?;
    let empty = c_string(b"")?;
    let call = |source: &std::ffi::CStr, to: &std::ffi::CStr, flags: libc::c_ulong, what: &str| {
        // SAFETY: NUL-terminated strings that outlive the call; mount(2)
        // keeps none of them.
        let rc = unsafe {
            libc::mount(
                source.as_ptr(),
                to.as_ptr(),
                none.as_ptr(),
                flags,
                empty.as_ptr().cast(),
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(Error::Io {
                what: format!("cannot {what} ({})", target.path().display()),
                source: std::io::Error::last_os_error(),
            })
        }
    };
    // A bind remount sets the mount's flags to exactly these: any left out
    // (a driver's noexec among them) is cleared.
    let mut flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_NOSUID | libc::MS_NODEV;
    for (on, flag) in [
        (options.read_only, libc::MS_RDONLY),
        (options.fs.noexec, libc::MS_NOEXEC),
        (options.fs.noatime, libc::MS_NOATIME),
    ] {
        if on {
            flags |= flag;
        }
    }
    call(
        &none,
        &staged,
        flags,
        "set the mount flags of the filesystem",
    )?;
    call(
        &staged,
        &at,
        libc::MS_BIND,
        "bind the filesystem to its mount point",
    )?;
    MountedFs::locate(target, Ours::Device(staged_dev))
}
