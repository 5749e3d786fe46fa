//! Block devices a volume may be on, as `tcctl mount-devices` tries them
//! and the desktop's Select Device lists them: those that hold data and
//! that nothing uses (not mounted, not swap, not held by another device,
//! not a disk with partitions, not a tcd volume's host or device), each
//! with its stable name (`/dev/disk/by-id/…`) where it has one.

use crate::bus::{Client, Failure};
use std::path::{Path, PathBuf};
use tcd_proto::mount_table;

/// A device offered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// `/dev/NAME`.
    pub path: PathBuf,
    /// Its stable name, else its path: what a volume field is given.
    pub name: String,
    /// Bytes.
    pub size: u64,
    /// The user may open it for reading and writing.
    pub yours: bool,
}

/// The devices nothing uses and tcd does not serve, with their stable
/// names.
pub fn offered(c: &Client) -> Result<Vec<Device>, Failure> {
    Ok(free(c)?
        .into_iter()
        .map(|path| {
            let name = tcd_proto::devices::stable_name(&path)
                .unwrap_or_else(|| path.to_string_lossy().into_owned());
            let sys = path
                .file_name()
                .map(|n| Path::new("/sys/class/block").join(n));
            let size = sys
                .and_then(|s| read(&s.join("size")))
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0)
                .saturating_mul(512);
            let yours = crate::host::open(&path, true).is_ok();
            Device {
                path,
                name,
                size,
                yours,
            }
        })
        .collect())
}

/// [`unused_devices`] less the hosts tcd has open and the devices it made.
pub fn free(c: &Client) -> Result<Vec<PathBuf>, Failure> {
    let busy: Vec<PathBuf> = c
        .list()?
        .iter()
        .flat_map(|v| [v.host(), v.device()])
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    Ok(unused_devices()
        .into_iter()
        .filter(|d| !busy.contains(d))
        .collect())
}

/// Block devices (`/dev/NAME`, canonical) that hold data and that nothing
/// uses: not mounted, not swap, not held by another device (a RAID or
/// device-mapper member), not a disk with partitions (its partitions are
/// offered), not an empty loop device or a partition left of one, a RAM
/// disk or a CD drive.
pub fn unused_devices() -> Vec<PathBuf> {
    let used = in_use();
    let served = tcd_fuse_mounts();
    let Ok(entries) = std::fs::read_dir("/sys/class/block") else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let sys = e.path();
            candidate(&sys)
                && !decrypted_by_tcd(&sys, &served)
                && !partition_of_nothing_to_try(&sys, &served)
        })
        .filter_map(|e| {
            let dev = read(&e.path().join("dev"))?;
            (!used.contains(&dev)).then(|| Path::new("/dev").join(e.file_name()))
        })
        .filter(|p| p.exists())
        .collect();
    found.sort();
    found
}

/// Whether the device at `sys` (its /sys/class/block entry) holds data
/// of its own.
fn candidate(sys: &Path) -> bool {
    let name = sys
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let skipped_kind = ["ram", "zram", "sr", "fd"]
        .iter()
        .any(|k| name.starts_with(k));
    let size = read(&sys.join("size"))
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    let held = std::fs::read_dir(sys.join("holders")).is_ok_and(|mut h| h.next().is_some());
    let partitioned = std::fs::read_dir(sys).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().join("partition").exists())
    });
    !skipped_kind && size > 0 && !held && !partitioned
}

/// Where tcd daemons serve decrypted volumes (FUSE mounts named `tcd`).
fn tcd_fuse_mounts() -> Vec<PathBuf> {
    mount_table::now()
        .into_iter()
        .filter(|m| {
            m.fs_type == "fuse.tcd" || (m.fs_type == "fuse" && m.source == Path::new("tcd"))
        })
        .map(|m| m.point)
        .collect()
}

/// Whether the loop device at `sys` serves a volume a tcd daemon decrypts
/// (this one's or another's): plaintext, never a volume to try.
fn decrypted_by_tcd(sys: &Path, served: &[PathBuf]) -> bool {
    read(&sys.join("loop/backing_file"))
        .is_some_and(|back| served.iter().any(|m| Path::new(&back).starts_with(m)))
}

/// Whether the device at `sys` is a partition of a loop device that is
/// detached (the kernel keeps partitions partx added past a detach: reading
/// them fails) or that serves a volume tcd decrypts.
fn partition_of_nothing_to_try(sys: &Path, served: &[PathBuf]) -> bool {
    if !sys.join("partition").exists() {
        return false;
    }
    let Some(disk) = sys
        .canonicalize()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
    else {
        return false;
    };
    let is_loop = disk
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("loop"));
    is_loop && (!disk.join("loop").exists() || decrypted_by_tcd(&disk, served))
}

/// `major:minor` of every device mounted (in any namespace this process
/// sees) or used as swap.
fn in_use() -> Vec<String> {
    let mut used: Vec<String> = mount_table::now().into_iter().map(|m| m.device).collect();
    for swap in std::fs::read_to_string("/proc/swaps")
        .unwrap_or_default()
        .lines()
        .skip(1)
    {
        let dev = swap.split_whitespace().next().and_then(|p| {
            let name = Path::new(p).canonicalize().ok()?;
            read(
                &Path::new("/sys/class/block")
                    .join(name.file_name()?)
                    .join("dev"),
            )
        });
        used.extend(dev);
    }
    used
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok().map(|s| s.trim().to_owned())
}
