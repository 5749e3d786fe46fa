//! System encryption opened without its boot loader, as VeraCrypt's
//! `--mount-options=system` and cryptsetup's `--tcrypt-system` do: the
//! header lies in the drive's first track (at 31744), and its data offset
//! and size give the encrypted area in drive bytes. XTS data units count
//! from the start of the drive, so a partition's units are numbered from
//! the partition's start on the drive.

use super::header::Header;
use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Where a system-encrypted volume's data lies in its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Area {
    /// Bytes into the host.
    pub offset: u64,
    pub size: u64,
    /// The host's first byte in drive bytes (a partition's start; 0 for a
    /// drive or a disk image): the data units are numbered from the drive's.
    pub host_start: u64,
}

/// Where `host` starts in its drive if it is a partition (a block device
/// with `/sys/dev/block/M:m/partition`); None for a drive or a file. The
/// drive itself is never opened here: its first track, where a
/// partition's system header lies, is the caller's to read with its own
/// rights (it may read the partition and not the drive).
pub fn partition_start(host: &File) -> Result<Option<u64>> {
    let meta = host
        .metadata()
        .map_err(|e| io("cannot inspect the volume", e))?;
    let Some(sys) = partition_sysfs(&meta) else {
        return Ok(None);
    };
    let start: u64 = read_number(&sys.join("start"))?;
    Ok(Some(start.saturating_mul(512)))
}

/// The `/sys/dev/block/M:m` folder of a block device that is a partition;
/// None for a drive or anything that is no block device.
pub fn partition_sysfs(meta: &std::fs::Metadata) -> Option<PathBuf> {
    if !meta.file_type().is_block_device() {
        return None;
    }
    let rdev = meta.rdev();
    let sys = PathBuf::from(format!(
        "/sys/dev/block/{}:{}",
        libc::major(rdev),
        libc::minor(rdev)
    ));
    sys.join("partition").exists().then_some(sys)
}

fn read_number(path: &Path) -> Result<u64> {
    let text = std::fs::read_to_string(path).map_err(|e| io("cannot read the partition", e))?;
    text.trim()
        .parse()
        .map_err(|_| Error::InvalidArgument(format!("{} is not a number", path.display())))
}

fn io(what: &str, source: std::io::Error) -> Error {
    Error::Io {
        what: what.into(),
        source,
    }
}

/// The data area of a `host_size`-byte host under system header `h`. A
/// partition (`partition_start` given) is the volume whole, and must lie
/// inside the encrypted area; a drive or a disk image holds the encrypted
/// area at the header's data offset, `volume_size` bytes long (as
/// cryptsetup maps it).
pub fn area(h: &Header, host_size: u64, partition_start: Option<u64>) -> Result<Area> {
    let area_end = h.data_offset.saturating_add(h.data_size);
    match partition_start {
        Some(start) => {
            let end = start.saturating_add(host_size);
            if start < h.data_offset || end > area_end || !start.is_multiple_of(512) {
                return Err(Error::InvalidArgument(format!(
                    "the partition ({host_size} bytes at {start} of the drive) is not inside the encrypted area ({} bytes at {}): give the encrypted partition, or wait until its encryption is complete",
                    h.data_size, h.data_offset
                )));
            }
            Ok(Area {
                offset: 0,
                size: host_size - host_size % 512,
                host_start: start,
            })
        }
        None => {
            let size = h.volume_size;
            if h.data_offset == 0
                || !h.data_offset.is_multiple_of(512)
                || !size.is_multiple_of(512)
                || h.data_offset
                    .checked_add(size)
                    .is_none_or(|e| e > host_size)
            {
                return Err(Error::InvalidArgument(format!(
                    "the encrypted area ({size} bytes at {}) does not fit the {host_size}-byte drive",
                    h.data_offset
                )));
            }
            Ok(Area {
                offset: h.data_offset,
                size,
                host_start: 0,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volume::kdf::Format;

    /// The header of the corpus's `sys_vc_1_mbr_full` image: encrypted
    /// from sector 63, 64 GB of key scope, the drive's 36801 sectors after 63.
    fn header(data_offset: u64, data_size: u64, volume_size: u64) -> Header {
        Header {
            format: Format::VeraCrypt,
            version: 5,
            min_program_version: 0x010b,
            hidden_volume_size: 0,
            volume_size,
            data_offset,
            data_size,
            flags: 1,
            sector_size: 512,
            master_keys: zeroize::Zeroizing::new([0u8; 256]),
        }
    }

    #[test]
    fn a_partition_is_the_volume_whole_with_units_from_the_drive() {
        let h = header(32256, 64_424_477_184, 18_842_112);
        let part = 16 << 20;
        assert_eq!(
            area(&h, part, Some(2048 * 512)).unwrap(),
            Area {
                offset: 0,
                size: part,
                host_start: 2048 * 512
            }
        );
        // Before the encrypted area (the boot partition of a partly
        // encrypted drive), or past its end (encryption not finished).
        assert!(area(&h, part, Some(512)).is_err());
        let short = header(1 << 20, 8 << 20, 16 << 20);
        assert!(area(&short, part, Some(1 << 20)).is_err());
    }

    #[test]
    fn a_file_or_a_character_device_is_no_partition() {
        let f = tempfile::tempfile().unwrap();
        assert!(partition_start(&f).unwrap().is_none());
        // /dev/null is a device, but no block device.
        let null = File::open("/dev/null").unwrap();
        assert!(partition_start(&null).unwrap().is_none());
    }

    #[test]
    fn a_drive_or_image_holds_the_encrypted_area_where_the_header_says() {
        let h = header(32256, 64_424_477_184, 18_842_112);
        assert_eq!(
            area(&h, 18_874_368, None).unwrap(),
            Area {
                offset: 32256,
                size: 18_842_112,
                host_start: 0
            }
        );
        // A drive too small for it (a truncated image).
        assert!(area(&h, 18_000_000, None).is_err());
        assert!(area(&header(0, 1 << 20, 1 << 20), 18_874_368, None).is_err());
    }
}
