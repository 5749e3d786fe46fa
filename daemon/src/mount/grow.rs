//! Growing the filesystem inside an expanded volume, through the data
//! path a mount uses (FUSE file, loop device): ext2/3/4 offline with
//! `e2fsck` then `resize2fs`, NTFS offline with `ntfsresize`; XFS and
//! btrfs mounted on a private folder (`xfs_growfs`, `btrfs filesystem
//! resize max`). Others are left as they are, with what would grow them.

use super::{BlockExport, FuseLoop, detect_filesystem, tools};
use crate::error::Result;
use crate::volume::opened::OpenVolume;
use std::path::Path;
use std::sync::Arc;

/// What became of the filesystem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grown {
    /// Its type (`blkid`'s name), empty when there is none.
    pub filesystem: String,
    pub grown: bool,
    /// When it was not grown: why, and how to grow it.
    pub note: String,
}

/// Serves `volume` under `folder` (made and removed here) and grows its
/// filesystem to fill it.
pub fn grow(volume: Arc<OpenVolume>, folder: &Path, serving: super::Serving) -> Result<Grown> {
    let export = Box::new(FuseLoop::start(volume, folder, serving, false)?);
    let result = grow_on(export.device(), &folder.with_extension("fs"));
    let closed = export.close();
    let grown = result?;
    closed?;
    Ok(grown)
}

fn grow_on(device: &Path, staging: &Path) -> Result<Grown> {
    let Some(fs) = detect_filesystem(device)? else {
        return Ok(not_grown(
            "",
            "the volume holds no filesystem the daemon recognises",
        ));
    };
    let dev = device.as_os_str();
    match fs.as_str() {
        "ext2" | "ext3" | "ext4" => {
            // resize2fs grows an unmounted filesystem only after a check.
            tools::run_for(
                "e2fsck",
                ["-f".as_ref(), "-p".as_ref(), dev],
                tools::MKFS_LIMIT,
            )?;
            tools::run_for("resize2fs", [dev], tools::MKFS_LIMIT)?;
        }
        "xfs" => mounted(device, staging, "xfs", &["xfs_growfs"])?,
        // The kernel grows a btrfs device to 256 MiB or more only.
        "btrfs" if device_size(device) < BTRFS_SMALLEST => {
            return Ok(not_grown(
                &fs,
                "btrfs is grown to 256 MiB or more only: expand the volume to at least that, \
                 or copy its files into a new volume",
            ));
        }
        "btrfs" => mounted(
            device,
            staging,
            "btrfs",
            &["btrfs", "filesystem", "resize", "max"],
        )?,
        "vfat" => {
            return Ok(not_grown(
                &fs,
                "FAT is not grown here: grow it with fatresize, or copy its files into a new volume",
            ));
        }
        "exfat" => {
            return Ok(not_grown(
                &fs,
                "exFAT cannot be grown on Linux: copy its files into a new volume, or grow it on Windows (Disk Management)",
            ));
        }
        "ntfs" => {
            // To the device's size, with no prompt (stdin is not a
            // terminal); twice, as a filesystem grown before is still
            // marked for Windows' chkdsk, which ntfsresize sets on every
            // resize.
            tools::run_for(
                "ntfsresize",
                ["--force".as_ref(), "--force".as_ref(), dev],
                tools::MKFS_LIMIT,
            )?;
        }
        _ => return Ok(not_grown(&fs, "the daemon does not grow this filesystem")),
    }
    Ok(Grown {
        filesystem: fs,
        grown: true,
        note: String::new(),
    })
}

/// The filesystem a volume's first sector shows, when it is one the
/// daemon cannot grow: exFAT (its name at byte 3) or FAT (its type at byte
/// 54, FAT32's at byte 82), as blkid knows them.
pub fn ungrowable(boot: &[u8; 512]) -> Option<&'static str> {
    if &boot[3..11] == b"EXFAT   " {
        return Some("exFAT");
    }
    let fat = |at: usize| boot[at..at + 3] == *b"FAT";
    (boot[510..512] == [0x55, 0xaa] && (fat(54) || fat(82))).then_some("FAT")
}

/// The smallest size the kernel resizes a btrfs device to.
pub const BTRFS_SMALLEST: u64 = 256 << 20;
/// Where a btrfs filesystem's magic lies: in its superblock at 64 KiB.
pub const BTRFS_MAGIC_AT: u64 = (64 << 10) + 0x40;
/// The magic itself.
pub const BTRFS_MAGIC: [u8; 8] = *b"_BHRfS_M";

/// The size of the block device `device` (0 when it cannot be read).
fn device_size(device: &Path) -> u64 {
    std::fs::File::open(device)
        .and_then(|mut f| std::io::Seek::seek(&mut f, std::io::SeekFrom::End(0)))
        .unwrap_or(0)
}

fn not_grown(fs: &str, note: &str) -> Grown {
    Grown {
        filesystem: fs.to_owned(),
        grown: false,
        note: note.to_owned(),
    }
}

/// Mounts `device` on `staging` (a private folder), runs `tool` on it, and
/// unmounts: XFS and btrfs grow only while mounted.
fn mounted(device: &Path, staging: &Path, fs: &str, tool: &[&str]) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(staging)
        .map_err(|source| crate::error::Error::Io {
            what: "cannot make a folder to grow the filesystem in".into(),
            source,
        })?;
    let result = tools::run(
        "mount",
        [
            "-t".as_ref(),
            fs.as_ref(),
            device.as_os_str(),
            staging.as_os_str(),
        ],
    )
    .and_then(|_| {
        let (name, args) = tool.split_first().unwrap_or((&"true", &[]));
        let grown = tools::run_for(
            name,
            args.iter().map(|a| a.as_ref()).chain([staging.as_os_str()]),
            tools::MKFS_LIMIT,
        );
        let unmounted = tools::run("umount", [staging]);
        grown.and(unmounted).map(|_| ())
    });
    let _ = std::fs::remove_dir(staging);
    result
}
