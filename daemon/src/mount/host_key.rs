//! What a volume's host occupies, so that one host is never mounted twice
//! under two names: a file by its device and inode (links and bind mounts
//! lead to the same one), a block device by the stretch of its drive it
//! covers (a drive and a partition of it share sectors: VeraCrypt system
//! encryption opens either), a loop device by the file behind it (the
//! file and a loop device over it are the same bytes).

use std::fs::Metadata;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostKey {
    /// A file: its filesystem's device and its inode.
    File { dev: u64, ino: u64 },
    /// Bytes `start..end` of the drive numbered `drive` (a whole drive
    /// runs to the end of all numbers); for a loop device (or a partition
    /// of one), the file it reads too.
    Disk {
        drive: u64,
        start: u64,
        end: u64,
        file: Option<(u64, u64)>,
    },
}

impl HostKey {
    /// The key of an open host.
    pub fn of(meta: &Metadata) -> HostKey {
        if !meta.file_type().is_block_device() {
            return HostKey::File {
                dev: meta.dev(),
                ino: meta.ino(),
            };
        }
        let rdev = meta.rdev();
        let sys = format!("/sys/dev/block/{}:{}", libc::major(rdev), libc::minor(rdev));
        let mut key = partition(Path::new(&sys)).unwrap_or(HostKey::Disk {
            drive: rdev,
            start: 0,
            end: u64::MAX,
            file: None,
        });
        if let HostKey::Disk { drive, file, .. } = &mut key
            && libc::major(*drive) == LOOP_MAJOR
        {
            *file = loop_backing(*drive);
        }
        key
    }

    /// Whether the two share any byte.
    pub fn overlaps(&self, other: &HostKey) -> bool {
        match (self, other) {
            (
                HostKey::Disk {
                    drive, start, end, ..
                },
                HostKey::Disk {
                    drive: d,
                    start: s,
                    end: e,
                    ..
                },
            ) => drive == d && start < e && s < end,
            // A loop device (or its partition) and the file it reads.
            (HostKey::Disk { file: Some(f), .. }, HostKey::File { dev, ino })
            | (HostKey::File { dev, ino }, HostKey::Disk { file: Some(f), .. }) => {
                *f == (*dev, *ino)
            }
            (a, b) => a == b,
        }
    }
}

/// Loop devices' block major number.
const LOOP_MAJOR: u32 = 7;

/// `LOOP_GET_STATUS64` (linux/loop.h).
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

/// The device and inode of the file loop device `drive` reads, as the
/// kernel recorded it when the file was attached (`LOOP_GET_STATUS64`),
/// whatever name is at its path now; None for a device with no file. Any
/// stretch of the file counts as the whole: a loop device over part of a
/// mounted volume's file overlaps it all the same.
fn loop_backing(drive: u64) -> Option<(u64, u64)> {
    use std::os::fd::AsRawFd;
    let uevent = format!(
        "/sys/dev/block/{}:{}/uevent",
        libc::major(drive),
        libc::minor(drive)
    );
    let uevent = std::fs::read_to_string(uevent).ok()?;
    let name = uevent.lines().find_map(|l| l.strip_prefix("DEVNAME="))?;
    if name.contains('/') {
        return None;
    }
    let device = std::fs::File::open(Path::new("/dev").join(name)).ok()?;
    if device.metadata().ok()?.rdev() != drive {
        return None;
    }
    // struct loop_info64: five u64 (device, inode, rdevice, offset, size
    // limit), four u32, three name and key arrays (64 + 64 + 32 bytes) and
    // two u64: 232 bytes.
    let mut info = [0u64; 29];
    // SAFETY: LOOP_GET_STATUS64 writes one struct loop_info64 (232 bytes)
    // through the pointer, which points to a live, zeroed, 8-aligned array
    // of that size; the descriptor is open for the duration of the call.
    let rc = unsafe { libc::ioctl(device.as_raw_fd(), LOOP_GET_STATUS64, info.as_mut_ptr()) };
    (rc == 0).then_some((info[0], info[1]))
}

/// A partition's stretch of its drive, from sysfs; None for a drive (or
/// when sysfs does not say).
fn partition(sys: &Path) -> Option<HostKey> {
    std::fs::metadata(sys.join("partition")).ok()?;
    let number = |p: &Path| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let start = number(&sys.join("start"))?.checked_mul(512)?;
    let size = number(&sys.join("size"))?.checked_mul(512)?;
    // The drive is the partition's parent in the device tree.
    let drive_dev =
        std::fs::read_to_string(std::fs::canonicalize(sys).ok()?.parent()?.join("dev")).ok()?;
    let (major, minor) = drive_dev.trim().split_once(':')?;
    Some(HostKey::Disk {
        drive: libc::makedev(major.parse().ok()?, minor.parse().ok()?),
        start,
        end: start.checked_add(size)?,
        file: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRIVE: HostKey = HostKey::Disk {
        drive: 7,
        start: 0,
        end: u64::MAX,
        file: None,
    };

    fn part(start: u64, end: u64) -> HostKey {
        HostKey::Disk {
            drive: 7,
            start,
            end,
            file: None,
        }
    }

    #[test]
    fn a_drive_overlaps_its_partitions_and_they_overlap_only_each_other() {
        assert!(DRIVE.overlaps(&part(1 << 20, 2 << 20)));
        assert!(part(1 << 20, 2 << 20).overlaps(&DRIVE));
        assert!(!part(1 << 20, 2 << 20).overlaps(&part(2 << 20, 3 << 20)));
        assert!(part(1 << 20, 2 << 20).overlaps(&part(1 << 20, 2 << 20)));
        let other = HostKey::Disk {
            drive: 8,
            start: 0,
            end: u64::MAX,
            file: None,
        };
        assert!(!DRIVE.overlaps(&other));
        let file = HostKey::File { dev: 7, ino: 0 };
        assert!(!file.overlaps(&DRIVE) && file.overlaps(&file));
        // A loop device over that file, and a partition of it, are it.
        let looped = HostKey::Disk {
            drive: 9,
            start: 0,
            end: u64::MAX,
            file: Some((7, 0)),
        };
        assert!(looped.overlaps(&file) && file.overlaps(&looped));
        assert!(!looped.overlaps(&HostKey::File { dev: 7, ino: 1 }));
    }

    #[test]
    fn a_file_is_known_by_its_inode() {
        let f = tempfile::NamedTempFile::new().unwrap();
        let a = HostKey::of(&f.as_file().metadata().unwrap());
        let b = HostKey::of(&std::fs::metadata(f.path()).unwrap());
        assert_eq!(a, b);
    }
}
