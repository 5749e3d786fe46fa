//! The error state of a mounted volume's filesystem, as the kernel shows
//! it: a filesystem mounted read-write whose superblock the kernel turned
//! read-only (ext4's and FAT's answer to errors, and a journal that could
//! not be written), and ext4's error count in sysfs. No request of the data
//! path sees these: the kernel stops writing instead.

use crate::volume::health::Health;
use std::path::Path;
use tcd_proto::mount_table::Mount;

/// What to look at for one mounted filesystem.
#[derive(Debug, Clone)]
pub struct FsWatch {
    /// The mount's ID in `/proc/self/mountinfo`.
    mount_id: u64,
    /// `/sys/fs/ext4/<device>/errors_count` for ext2, ext3 and ext4.
    errors_file: Option<std::path::PathBuf>,
    /// The count when the volume was mounted: the superblock keeps errors
    /// of earlier mounts.
    errors_at_mount: u64,
    /// Mounted read-only: nothing to lose, nothing to watch.
    read_only: bool,
    /// Set before the daemon itself makes the filesystem read-only (a
    /// forced dismount): from then on a read-only superblock is its own
    /// doing, not the kernel's answer to errors. Shared by every clone.
    made_read_only: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl FsWatch {
    /// Watches the mount `mount_id` of `device` (a filesystem of `fs_type`).
    pub fn new(mount_id: u64, device: &Path, fs_type: &str, read_only: bool) -> FsWatch {
        let errors_file = matches!(fs_type, "ext2" | "ext3" | "ext4")
            .then(|| device.file_name())
            .flatten()
            .map(|name| Path::new("/sys/fs/ext4").join(name).join("errors_count"));
        let errors_at_mount = errors_file.as_deref().and_then(read_count).unwrap_or(0);
        FsWatch {
            mount_id,
            errors_file,
            errors_at_mount,
            read_only,
            made_read_only: Default::default(),
        }
    }

    /// Said before the daemon remounts the filesystem read-only itself.
    pub fn made_read_only(&self) {
        self.made_read_only
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Records in `health` what the kernel shows now; `table` is the
    /// kernel's mount table, read once for all volumes.
    pub fn check(&self, table: &[Mount], health: &Health) {
        if self.read_only {
            return;
        }
        // `table` was read before this flag: a remount of the daemon's own
        // that it caught half done (the superblock read-only, the mount not
        // yet) is not taken for the kernel's.
        let ours = self
            .made_read_only
            .load(std::sync::atomic::Ordering::SeqCst);
        if !ours && remounted_read_only(table, self.mount_id) {
            health.fs_remounted_read_only();
        }
        if let Some(n) = self.errors_file.as_deref().and_then(read_count) {
            health.fs_errors(n.saturating_sub(self.errors_at_mount));
        }
    }
}

fn read_count(file: &Path) -> Option<u64> {
    std::fs::read_to_string(file).ok()?.trim().parse().ok()
}

/// Whether the mount `id` is read-write while its filesystem is read-only:
/// the kernel turned the superblock read-only under a read-write mount
/// (a remount by a user changes both).
fn remounted_read_only(table: &[Mount], id: u64) -> bool {
    table
        .iter()
        .any(|m| m.id == id && m.mounted_read_write && m.fs_read_only)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcd_proto::mount_table::parse;

    const TABLE: &[u8] = b"\
22 27 0:21 / /proc rw,relatime - proc proc rw
101 27 7:5 / /run/media/u/tcd1 rw,nosuid,nodev,relatime shared:80 - ext4 /dev/loop5 ro,errors=remount-ro
102 27 7:6 / /run/media/u/tcd2 rw,nosuid,nodev,relatime - ext4 /dev/loop6 rw
103 27 7:7 / /run/media/u/tcd3 ro,nosuid,nodev,relatime - ext4 /dev/loop7 ro
";

    #[test]
    fn only_a_read_write_mount_of_a_read_only_filesystem_was_remounted_by_the_kernel() {
        assert!(remounted_read_only(&parse(TABLE), 101));
        assert!(!remounted_read_only(&parse(TABLE), 102));
        assert!(
            !remounted_read_only(&parse(TABLE), 103),
            "mounted read-only"
        );
        assert!(!remounted_read_only(&parse(TABLE), 10), "no such mount");
    }

    #[test]
    fn a_read_only_mount_is_not_watched() {
        let h = Health::new(false);
        FsWatch::new(101, Path::new("/dev/loop5"), "ext4", true).check(&parse(TABLE), &h);
        assert!(h.is_ok());
        let h = Health::new(true);
        FsWatch::new(101, Path::new("/dev/loop5"), "ext4", false).check(&parse(TABLE), &h);
        assert!(h.problems()[0].contains("remounted read-only"));
    }

    #[test]
    fn the_daemons_own_read_only_remount_is_not_the_kernels() {
        let h = Health::new(false);
        let w = FsWatch::new(101, Path::new("/dev/loop5"), "ext4", false);
        // A clone, as the health check takes one, sees the flag.
        let seen = w.clone();
        w.made_read_only();
        seen.check(&parse(TABLE), &h);
        assert!(h.is_ok(), "{:?}", h.problems());
    }
}
