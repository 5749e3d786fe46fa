//! Whether a host about to be written over (a new volume, a restored
//! header) is in use outside the daemon's own table, as mkfs and
//! cryptsetup refuse: a block device the kernel has claimed (a filesystem
//! mounted from it or from one of its partitions, a device stacked on it),
//! or a file a loop device is attached to.

use crate::error::{Error, Result};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A block device held exclusively while it is written, so that nobody
/// mounts it meanwhile; nothing for a file.
pub struct Claim {
    _held: Option<File>,
}

/// Claims `host` for writing, or says who uses it
/// ([`Error::Busy`], naming the mount, the stacked device or the loop
/// device).
pub fn claim(host: &File) -> Result<Claim> {
    let meta = host.metadata().map_err(|e| Error::Io {
        what: "cannot inspect the volume".into(),
        source: e,
    })?;
    let name = shown(host);
    if meta.file_type().is_block_device() {
        // The same device opened again, exclusively: the kernel refuses
        // while a filesystem, a partition's filesystem or a stacked
        // device has it.
        let again = format!("/proc/self/fd/{}", host.as_raw_fd());
        return match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
            .open(again)
        {
            Ok(f) => Ok(Claim { _held: Some(f) }),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                Err(Error::Busy(device_users(&name, meta.rdev())))
            }
            Err(e) => Err(Error::Io {
                what: format!("cannot open {} exclusively", name.display()),
                source: e,
            }),
        };
    }
    if let Some(loop_device) = tcd_proto::devices::loop_device_over(meta.dev(), meta.ino()) {
        return Err(Error::Busy(format!(
            "{} (the backing file of {})",
            name.display(),
            loop_device.display()
        )));
    }
    Ok(Claim { _held: None })
}

/// The host's name as the daemon sees it, for messages.
fn shown(host: &File) -> PathBuf {
    std::fs::read_link(format!("/proc/self/fd/{}", host.as_raw_fd()))
        .unwrap_or_else(|_| PathBuf::from("the volume"))
}

/// "/dev/sdb (mounted on /mnt)", "/dev/sdb (held by /dev/mapper/x)", or
/// what the kernel's refusal alone says.
fn device_users(name: &Path, rdev: u64) -> String {
    let mounts: Vec<String> = super::holders::mounts_from(rdev)
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if !mounts.is_empty() {
        return format!("{} (mounted on {})", name.display(), mounts.join(", "));
    }
    let stacked = super::holders::stacked_on(name);
    if !stacked.is_empty() {
        return format!("{} (held by {})", name.display(), stacked.join(", "));
    }
    format!(
        "{} (in use by the kernel: a partition of it mounted, or a device on it)",
        name.display()
    )
}
