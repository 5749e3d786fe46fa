//! Which processes hold a mounted filesystem, as `fuser -m` says: those
//! whose working folder, root, an open file or a mapped file lies on it,
//! or that hold its block device open.
//!
//! Files are matched by device number, never by path: after a lazy
//! unmount the kernel shows a holder's paths relative to a mount no longer
//! in any tree. Each descriptor is inspected with `AT_STATX_DONT_SYNC`, so
//! a file on a stuck network or FUSE filesystem cannot hold up the scan.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

// Defined with the errors that name holders.
pub use crate::error::Holder;

/// What the scan looks for: files on the filesystem of device number
/// `fs_dev`, and the block device `block` itself (its `rdev`).
#[derive(Debug, Clone, Copy)]
pub struct Target {
    pub fs_dev: u64,
    pub block: Option<u64>,
}

/// The device number (and, for a block device, its own number) of the
/// file `path` names, without following a last symlink's target beyond
/// what `/proc` magic links resolve to.
fn stat(path: &Path) -> Option<(u64, Option<u64>)> {
    let c = CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statx is plain data; all-zero is a valid value.
    let mut st: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated and `st` a live buffer, both outliving
    // the call.
    let rc = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::AT_STATX_DONT_SYNC | libc::AT_NO_AUTOMOUNT,
            libc::STATX_TYPE,
            &mut st,
        )
    };
    if rc != 0 {
        return None;
    }
    let dev = libc::makedev(st.stx_dev_major, st.stx_dev_minor);
    let block = (u32::from(st.stx_mode) & libc::S_IFMT == libc::S_IFBLK)
        .then(|| libc::makedev(st.stx_rdev_major, st.stx_rdev_minor));
    Some((dev, block))
}

impl Target {
    fn matches(&self, path: &Path) -> bool {
        match stat(path) {
            Some((dev, block)) => dev == self.fs_dev || (block.is_some() && block == self.block),
            None => false,
        }
    }

    /// Whether a line of `/proc/PID/maps` maps a file of the filesystem.
    fn maps_line(&self, line: &str) -> bool {
        let Some(dev) = line.split_whitespace().nth(3) else {
            return false;
        };
        let Some((major, minor)) = dev.split_once(':') else {
            return false;
        };
        match (
            u32::from_str_radix(major, 16),
            u32::from_str_radix(minor, 16),
        ) {
            (Ok(major), Ok(minor)) => {
                let d = libc::makedev(major, minor);
                d != 0 && d == self.fs_dev
            }
            _ => false,
        }
    }

    /// Whether process `pid` holds the filesystem.
    fn held_by(&self, pid: &Path) -> bool {
        if self.matches(&pid.join("cwd")) || self.matches(&pid.join("root")) {
            return true;
        }
        if let Ok(fds) = std::fs::read_dir(pid.join("fd"))
            && fds.flatten().any(|fd| self.matches(&fd.path()))
        {
            return true;
        }
        std::fs::read_to_string(pid.join("maps"))
            .is_ok_and(|maps| maps.lines().any(|l| self.maps_line(l)))
    }
}

/// The processes holding `target`, in order of pid; `except` (the daemon's
/// own helpers, such as a FUSE driver serving the filesystem) left out.
/// The daemon itself never counts.
pub fn scan(target: Target, except: &[u32]) -> Vec<Holder> {
    let me = std::process::id();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found: Vec<Holder> = procs
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            if pid == me || except.contains(&pid) || !target.held_by(&e.path()) {
                return None;
            }
            let uid = std::fs::read_to_string(e.path().join("status"))
                .ok()?
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))?
                .split_whitespace()
                .next()?
                .parse()
                .ok()?;
            let command = std::fs::read_to_string(e.path().join("comm"))
                .unwrap_or_default()
                .trim()
                .to_owned();
            Some(Holder { pid, uid, command })
        })
        .collect();
    found.sort_by_key(|h| h.pid);
    found
}

/// "PID 1234 (bash), PID 99 (sleep)".
pub fn describe(holders: &[Holder]) -> String {
    holders
        .iter()
        .map(|h| format!("PID {} ({})", h.pid, h.command))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What keeps a block device in use, apart from the daemon's own mounts
/// of it: filesystems mounted from it (in the daemon's mount namespace),
/// devices stacked on it (device-mapper, md), and processes holding it
/// open or using a filesystem mounted from it.
#[derive(Debug, Default)]
pub struct DeviceUse {
    pub mounts: Vec<std::path::PathBuf>,
    pub stacked: Vec<String>,
    pub processes: Vec<Holder>,
    /// What to scan again to name the processes, while the device is held.
    pub target: Option<Target>,
}

impl DeviceUse {
    pub fn is_empty(&self) -> bool {
        self.mounts.is_empty() && self.stacked.is_empty() && self.processes.is_empty()
    }

    /// "/dev/loop4 (mounted on /mnt/x; held by /dev/mapper/y)", or the
    /// device alone when only processes hold it.
    pub fn describe(&self, device: &Path) -> String {
        let mut parts = Vec::new();
        if !self.mounts.is_empty() {
            let at: Vec<String> = self
                .mounts
                .iter()
                .map(|m| m.display().to_string())
                .collect();
            parts.push(format!("mounted on {}", at.join(", ")));
        }
        if !self.stacked.is_empty() {
            parts.push(format!("held by {}", self.stacked.join(", ")));
        }
        match parts.is_empty() {
            true => device.display().to_string(),
            false => format!("{} ({})", device.display(), parts.join("; ")),
        }
    }
}

/// Who uses block device `device` now (see [`DeviceUse`]). Processes
/// alone may be a prober that opens the device for a moment (udev after
/// a write): they count only if they still hold it after a second (10 ×
/// 100 ms).
pub fn device_use(device: &Path) -> DeviceUse {
    let mut tries = 0;
    loop {
        let used = device_use_now(device);
        if tries >= 10 || used.is_empty() || !used.mounts.is_empty() || !used.stacked.is_empty() {
            return used;
        }
        tries += 1;
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn device_use_now(device: &Path) -> DeviceUse {
    let Some((_, Some(rdev))) = stat(device) else {
        return DeviceUse::default();
    };
    // Files of a filesystem mounted from the device carry its number.
    let target = Target {
        fs_dev: rdev,
        block: Some(rdev),
    };
    DeviceUse {
        mounts: mounts_from(rdev),
        stacked: stacked_on(device),
        processes: scan(target, &[]),
        target: Some(target),
    }
}

/// Mount points of filesystems whose device number is `rdev`.
pub(crate) fn mounts_from(rdev: u64) -> Vec<std::path::PathBuf> {
    let wanted = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    tcd_proto::mount_table::now()
        .into_iter()
        .filter(|m| m.device == wanted)
        .map(|m| m.point)
        .collect()
}

/// Devices stacked on `device` (`/sys/block/NAME/holders`): a
/// device-mapper target by its `/dev/mapper` name, others by `/dev` name.
pub(crate) fn stacked_on(device: &Path) -> Vec<String> {
    let Some(name) = device.file_name() else {
        return Vec::new();
    };
    let Ok(dir) = std::fs::read_dir(Path::new("/sys/block").join(name).join("holders")) else {
        return Vec::new();
    };
    let mut found: Vec<String> = dir
        .flatten()
        .map(|e| {
            let dm = Path::new("/sys/block").join(e.file_name()).join("dm/name");
            match std::fs::read_to_string(dm) {
                Ok(n) if !n.trim().is_empty() => format!("/dev/mapper/{}", n.trim()),
                _ => format!("/dev/{}", e.file_name().to_string_lossy()),
            }
        })
        .collect();
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_whose_folder_is_on_the_filesystem_holds_it() {
        let dir = std::env::temp_dir();
        let (dev, _) = stat(&dir).expect("stat");
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .current_dir(&dir)
            .spawn()
            .expect("sleep");
        let found = scan(
            Target {
                fs_dev: dev,
                block: None,
            },
            &[],
        );
        let _ = child.kill();
        let _ = child.wait();
        let h = found
            .iter()
            .find(|h| h.pid == child.id())
            .expect("the child is found");
        assert_eq!(h.command, "sleep");
        assert!(describe(&found).contains(&format!("PID {} (sleep)", child.id())));
    }

    #[test]
    fn a_device_in_use_is_described_by_its_mounts_and_stacked_devices() {
        let used = DeviceUse {
            mounts: vec!["/mnt/x".into()],
            stacked: vec!["/dev/mapper/y".into()],
            ..DeviceUse::default()
        };
        assert_eq!(
            used.describe(Path::new("/dev/loop4")),
            "/dev/loop4 (mounted on /mnt/x; held by /dev/mapper/y)"
        );
        assert_eq!(
            DeviceUse::default().describe(Path::new("/dev/loop4")),
            "/dev/loop4"
        );
    }

    #[test]
    fn a_device_nobody_uses_is_free() {
        // The root filesystem's own folder is no block device.
        assert!(device_use(Path::new("/")).is_empty());
    }

    #[test]
    fn maps_lines_match_by_device() {
        let t = Target {
            fs_dev: libc::makedev(7, 3),
            block: None,
        };
        assert!(t.maps_line("7f00-7f10 r--p 00000000 07:03 12 /x/lib.so"));
        assert!(!t.maps_line("7f00-7f10 r--p 00000000 07:04 12 /x/lib.so"));
        assert!(!t.maps_line("7f00-7f10 rw-p 00000000 00:00 0 "));
        assert!(!t.maps_line("garbage"));
    }
}
