//! Loop devices over the FUSE volume file, through `losetup`.

use super::tools;
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Attaches a free loop device to `file` with `sector`-byte logical blocks.
/// Unless `discard`, the device stops advertising discards (TRIM).
pub fn attach(file: &Path, sector: u32, read_only: bool, discard: bool) -> Result<PathBuf> {
    let sector = sector.to_string();
    let mut args = vec![
        "--find".as_ref(),
        "--show".as_ref(),
        "--sector-size".as_ref(),
        sector.as_ref(),
        // Direct I/O: the loop device submits reads and writes of the
        // volume file asynchronously, many at once, and keeps no page
        // cache of its own under the filesystem's.
        "--direct-io=on".as_ref(),
    ];
    if read_only {
        args.push("--read-only".as_ref());
    }
    args.push(file.as_os_str());
    let dev = tools::output("losetup", args)?;
    if !dev.starts_with("/dev/loop") {
        return Err(Error::ToolFailed {
            tool: "losetup".into(),
            message: format!("unexpected device name {dev:?}"),
        });
    }
    let dev = PathBuf::from(dev);
    set_read_ahead(&dev);
    // The block layer's read-only flag outlives a detach: a device a
    // killed daemon left read-only would refuse this volume's writes.
    if !read_only && is_read_only(&dev).unwrap_or(false) {
        set_read_only(&dev, false).map_err(|e| Error::Io {
            what: format!("cannot make {} writable again", dev.display()),
            source: e,
        })?;
    }
    if !discard && !read_only {
        stop_advertising_discards(&dev, &sector);
    }
    Ok(dev)
}

/// A loop device over a file says it takes discards, and the first one
/// the volume file refuses is reported done to whoever sent it (fstrim
/// counts the bytes as trimmed) before the kernel withdraws the claim.
/// One discard of a single sector, sent here and refused by the volume
/// file without touching a byte, withdraws it before anyone else sees the
/// device: `fstrim` and `blkdiscard` are then told "not supported", as on
/// dm-crypt without `allow_discards`.
fn stop_advertising_discards(device: &Path, sector: &str) {
    let Ok(len) = sector.parse::<u64>() else {
        return;
    };
    let refused = std::fs::OpenOptions::new()
        .write(true)
        .open(device)
        .and_then(|f| {
            let range = [0u64, len];
            // SAFETY: BLKDISCARD reads two u64 (offset, length) through
            // the pointer, which points to a live array of two; the
            // descriptor is open for the duration of the call.
            let rc = unsafe {
                libc::ioctl(
                    std::os::fd::AsRawFd::as_raw_fd(&f),
                    BLKDISCARD,
                    range.as_ptr(),
                )
            };
            match rc {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    let Some(name) = device.file_name() else {
        return;
    };
    let knob = Path::new("/sys/block")
        .join(name)
        .join("queue/discard_max_bytes");
    let left = std::fs::read_to_string(&knob).unwrap_or_default();
    if left.trim() != "0" {
        tracing::warn!(
            "{} still advertises discards ({}, probe: {refused:?}); they stop at the volume file",
            device.display(),
            left.trim()
        );
    }
}

/// `_IO(0x12, 119)` from `linux/fs.h`.
const BLKDISCARD: libc::Ioctl = 0x1277;

/// Large reads keep the cipher at full width on all cores: the loop
/// device's default read-ahead (128 KiB) sends the FUSE file reads of
/// 128 KiB, which run on one core. A failure only costs speed.
fn set_read_ahead(device: &Path) {
    if let Some(name) = device.file_name() {
        let knob = Path::new("/sys/block")
            .join(name)
            .join("queue/read_ahead_kb");
        if let Err(e) = std::fs::write(&knob, "1024") {
            tracing::debug!("cannot raise {}: {e}", knob.display());
        }
    }
}

/// `_IO(0x12, 93)` and `_IO(0x12, 94)` from `linux/fs.h`.
const BLKROSET: libc::Ioctl = 0x125d;
const BLKROGET: libc::Ioctl = 0x125e;

/// Sets or clears the block layer's read-only flag of `device`
/// (`blockdev --setro`): set, the kernel fails every write to the device
/// with `EPERM` before it reaches the file behind it, whoever opened it
/// and however. The flag stays with the device after a detach, so whoever
/// sets it clears it before letting the device go.
pub fn set_read_only(device: &Path, read_only: bool) -> std::io::Result<()> {
    let f = std::fs::File::open(device)?;
    let flag = libc::c_int::from(read_only);
    // SAFETY: BLKROSET reads one int through the pointer, which points to
    // a live local; the descriptor is open for the duration of the call.
    let rc = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&f),
            BLKROSET,
            &flag as *const libc::c_int,
        )
    };
    match rc {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Whether the kernel refuses writes to `device` (`blockdev --getro`).
pub fn is_read_only(device: &Path) -> std::io::Result<bool> {
    let f = std::fs::File::open(device)?;
    let mut flag: libc::c_int = 0;
    // SAFETY: BLKROGET writes one int through the pointer, which points to
    // a live local; the descriptor is open for the duration of the call.
    let rc = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(&f),
            BLKROGET,
            &mut flag as *mut libc::c_int,
        )
    };
    match rc {
        0 => Ok(flag != 0),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// Detaches loop device `device` if it is still attached to `file`,
/// writable again for its next user (see [`set_read_only`]; a device
/// attached read-only stays so for the kernel until its detach, whatever
/// the flag). A device detached by someone else (root by hand, the
/// kernel's autoclear) is detached already; if it has since been attached
/// to another file it is that file's, and is left alone. The device is
/// held open from that check to the detach, so it cannot change hands
/// between them: the kernel detaches a device others hold open only when
/// the last of them closes it (as `losetup --detach` does).
pub fn detach_from(device: &Path, file: &Path) -> Result<()> {
    let io = |source| Error::Io {
        what: format!("cannot detach {}", device.display()),
        source,
    };
    let held = match std::fs::File::open(device) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(e)),
    };
    if !backed_by(device, file) {
        if bound(device) {
            tracing::warn!(
                "{} was detached by hand and now serves another file: left to it",
                device.display()
            );
        }
        return Ok(());
    }
    if is_read_only(device).unwrap_or(false)
        && let Err(e) = set_read_only(device, false)
    {
        tracing::warn!("{} stays read-only after its detach: {e}", device.display());
    }
    // SAFETY: LOOP_CLR_FD takes no argument and touches no memory of
    // ours; the descriptor is open for the duration of the call.
    let rc = unsafe { libc::ioctl(std::os::fd::AsRawFd::as_raw_fd(&held), LOOP_CLR_FD, 0) };
    match rc {
        0 => Ok(()),
        // Detached in the meantime: what was asked is done.
        _ if !bound(device) => Ok(()),
        _ => Err(io(std::io::Error::last_os_error())),
    }
}

/// `LOOP_CLR_FD` from `linux/loop.h`.
const LOOP_CLR_FD: libc::Ioctl = 0x4c01;

/// Whether loop device `device` has a backing file.
fn bound(device: &Path) -> bool {
    device.file_name().is_some_and(|name| {
        Path::new("/sys/block")
            .join(name)
            .join("loop/backing_file")
            .exists()
    })
}

/// Loop devices whose backing file lies under `folder` (left behind by a
/// daemon that was killed), with that file.
pub fn attached_under(folder: &Path) -> Result<Vec<(PathBuf, PathBuf)>> {
    let list = tools::output(
        "losetup",
        ["--list", "--noheadings", "--output", "NAME,BACK-FILE"],
    )?;
    Ok(list
        .lines()
        .filter_map(|l| l.split_once(char::is_whitespace))
        .map(|(name, back)| (PathBuf::from(name), PathBuf::from(back.trim())))
        .filter(|(_, back)| back.starts_with(folder))
        .collect())
}

/// Waits (up to `limit`) until the kernel has released `file`, the backing
/// file of the detached loop device `device`.
pub fn wait_released(device: &Path, file: &Path, limit: std::time::Duration) {
    let start = std::time::Instant::now();
    while backed_by(device, file) && start.elapsed() < limit {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Whether loop device `device` is still attached to `file` (a device
/// released and attached again to another file is not).
pub fn backed_by(device: &Path, file: &Path) -> bool {
    let Some(name) = device.file_name() else {
        return false;
    };
    let backing = Path::new("/sys/block").join(name).join("loop/backing_file");
    std::fs::read_to_string(backing).is_ok_and(|b| Path::new(b.trim_end_matches('\n')) == file)
}
