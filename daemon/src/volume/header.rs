//! The volume header: where it lies, and its decrypted layout.
//!
//! A header is 512 bytes: a 64-byte salt in the clear, then 448 bytes
//! encrypted as one XTS data unit numbered 0 under the header key. Decrypted
//! (offsets from the start of the header, big-endian):
//!
//! | at  | size | field |
//! | --- | ---- | ----- |
//! | 64  | 4    | magic `TRUE` (TrueCrypt) or `VERA` (VeraCrypt) |
//! | 68  | 2    | header version (1, 2: TrueCrypt 4's CBC/LRW; 3: TrueCrypt 5, 4: 6, 5: 7 and VeraCrypt) |
//! | 70  | 2    | minimum program version to open it |
//! | 72  | 4    | CRC-32 of bytes 256..512 (the master keys) |
//! | 92  | 8    | hidden volume size (in a hidden volume's header) |
//! | 100 | 8    | volume size |
//! | 108 | 8    | data area offset, from the start of the host |
//! | 116 | 8    | data area size |
//! | 124 | 4    | flags (bit 0 system encryption, bit 1 in-place encryption) |
//! | 128 | 4    | sector size (version 5; 512 before) |
//! | 252 | 4    | CRC-32 of bytes 64..252 (version 4 and later) |
//! | 256 | 256  | master keys: primaries of the chain's layers, then secondaries |

use super::kdf::Format;
use zeroize::Zeroizing;

pub const HEADER_BYTES: usize = 512;
pub const SALT_BYTES: usize = 64;
/// The encrypted part, one XTS data unit.
pub const ENCRYPTED_BYTES: usize = 448;
pub const MASTER_KEY_BYTES: usize = 256;

/// Offsets within the decrypted 448 bytes (header offset minus 64).
mod at {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 4;
    pub const MIN_PROGRAM: usize = 6;
    pub const KEY_CRC: usize = 8;
    pub const HIDDEN_SIZE: usize = 28;
    pub const VOLUME_SIZE: usize = 36;
    pub const DATA_OFFSET: usize = 44;
    pub const DATA_SIZE: usize = 52;
    pub const FLAGS: usize = 60;
    pub const SECTOR_SIZE: usize = 64;
    pub const HEADER_CRC: usize = 188;
    pub const KEYS: usize = 192;
}

/// Where a header lies in the host, relative to its start or end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Location {
    /// The volume header at offset 0.
    Primary,
    /// The hidden volume's header at 64 KiB.
    HiddenPrimary,
    /// The embedded backup of the volume header, 128 KiB from the end.
    Backup,
    /// The embedded backup of the hidden volume's header, 64 KiB from the end.
    HiddenBackup,
    /// Where TrueCrypt before 6.0 kept a hidden volume's header: 1536 bytes
    /// from the end.
    HiddenLegacy,
    /// System encryption's header, in the drive's first track at 31744
    /// (sector 62), before the first partition.
    System,
}

/// Where system encryption keeps its header in the drive.
pub const SYSTEM_HEADER_OFFSET: u64 = 31744;

impl Location {
    /// Byte offset in a host of `host_size` bytes, if it fits.
    pub fn offset(self, host_size: u64) -> Option<u64> {
        let from_end = |n: u64| host_size.checked_sub(n);
        let at = match self {
            Location::Primary => Some(0),
            Location::HiddenPrimary => Some(65536),
            Location::Backup => from_end(131072),
            Location::HiddenBackup => from_end(65536),
            Location::HiddenLegacy => from_end(1536),
            Location::System => Some(SYSTEM_HEADER_OFFSET),
        }?;
        (at + HEADER_BYTES as u64 <= host_size).then_some(at)
    }

    pub fn is_hidden(self) -> bool {
        matches!(
            self,
            Location::HiddenPrimary | Location::HiddenBackup | Location::HiddenLegacy
        )
    }

    pub fn is_backup(self) -> bool {
        matches!(self, Location::Backup | Location::HiddenBackup)
    }

    pub fn describe(self) -> &'static str {
        match self {
            Location::Primary => "primary header",
            Location::HiddenPrimary => "hidden volume header",
            Location::Backup => "backup header",
            Location::HiddenBackup => "hidden volume backup header",
            Location::HiddenLegacy => "hidden volume header (TrueCrypt 5 location)",
            Location::System => "system encryption header",
        }
    }
}

/// A decrypted, validated header.
#[derive(Clone)]
pub struct Header {
    pub format: Format,
    pub version: u16,
    pub min_program_version: u16,
    pub hidden_volume_size: u64,
    pub volume_size: u64,
    pub data_offset: u64,
    pub data_size: u64,
    pub flags: u32,
    pub sector_size: u32,
    pub master_keys: Zeroizing<[u8; MASTER_KEY_BYTES]>,
}

impl Header {
    /// TrueCrypt 4 and 5 (header versions 1 to 3) leave the data-area
    /// offset zero: its data area follows the one header sector, and a
    /// hidden volume's ends where its header starts, 1536 bytes before the
    /// end of the host. A TrueCrypt 4 volume that does not give its size
    /// runs to the end of the host.
    pub fn settle_legacy_data_area(&mut self, hidden: bool, host_size: u64) {
        if self.version >= 4 || self.data_offset != 0 {
            return;
        }
        let size = if hidden {
            self.hidden_volume_size
        } else if self.volume_size == 0 && self.version <= 2 {
            host_size.saturating_sub(HEADER_BYTES as u64)
        } else {
            self.volume_size
        };
        if self.data_size == 0 {
            self.data_size = size;
        }
        self.data_offset = if hidden {
            // An impossible size leaves the offset zero, which opening
            // then refuses as overlapping the header.
            host_size
                .checked_sub(size)
                .and_then(|x| x.checked_sub(1536))
                .unwrap_or(0)
        } else {
            HEADER_BYTES as u64
        };
    }
}

impl std::fmt::Debug for Header {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Header")
            .field("format", &self.format)
            .field("version", &self.version)
            .field(
                "min_program_version",
                &format_args!("{:#06x}", self.min_program_version),
            )
            .field("hidden_volume_size", &self.hidden_volume_size)
            .field("volume_size", &self.volume_size)
            .field("data_offset", &self.data_offset)
            .field("data_size", &self.data_size)
            .field("flags", &self.flags)
            .field("sector_size", &self.sector_size)
            .finish_non_exhaustive()
    }
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn be64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

/// Header flag: system encryption.
pub const FLAG_SYSTEM: u32 = 1;

/// Why decrypted bytes are not a header (kept private to the search: a user
/// only ever hears "wrong password or keyfile, or not a volume").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotAHeader {
    Magic,
    KeyCrc,
    HeaderCrc,
    Version,
    Layout,
}

impl Header {
    /// Validates the decrypted 448 bytes of a TrueCrypt 5 or later header
    /// (versions 3 and up). `magic` is what the format under trial writes.
    pub fn parse(plain: &[u8; ENCRYPTED_BYTES], format: Format) -> Result<Header, NotAHeader> {
        Self::parse_versions(plain, format, 3..=u16::MAX)
    }

    /// Validates the decrypted 448 bytes of a TrueCrypt 4 header (versions
    /// 1 and 2, decrypted in LRW or CBC mode): no header CRC, 512-byte
    /// sectors.
    pub fn parse_legacy(plain: &[u8; ENCRYPTED_BYTES]) -> Result<Header, NotAHeader> {
        Self::parse_versions(plain, Format::TrueCrypt, 1..=2)
    }

    fn parse_versions(
        plain: &[u8; ENCRYPTED_BYTES],
        format: Format,
        versions: std::ops::RangeInclusive<u16>,
    ) -> Result<Header, NotAHeader> {
        let magic: &[u8; 4] = match format {
            Format::TrueCrypt => b"TRUE",
            Format::VeraCrypt => b"VERA",
        };
        if &plain[at::MAGIC..at::MAGIC + 4] != magic {
            return Err(NotAHeader::Magic);
        }
        if be32(plain, at::KEY_CRC) != crc32fast::hash(&plain[at::KEYS..]) {
            return Err(NotAHeader::KeyCrc);
        }
        let version = be16(plain, at::VERSION);
        if !versions.contains(&version) {
            // Versions 1 and 2 are TrueCrypt 4's CBC/LRW volumes, read
            // only by `parse_legacy`.
            return Err(NotAHeader::Version);
        }
        if version >= 4 && be32(plain, at::HEADER_CRC) != crc32fast::hash(&plain[..at::HEADER_CRC])
        {
            return Err(NotAHeader::HeaderCrc);
        }
        let sector_size = if version >= 5 {
            be32(plain, at::SECTOR_SIZE)
        } else {
            512
        };
        if !(512..=4096).contains(&sector_size) || !sector_size.is_power_of_two() {
            return Err(NotAHeader::Layout);
        }
        let mut master_keys = Zeroizing::new([0u8; MASTER_KEY_BYTES]);
        master_keys.copy_from_slice(&plain[at::KEYS..]);
        Ok(Header {
            format,
            version,
            min_program_version: be16(plain, at::MIN_PROGRAM),
            hidden_volume_size: be64(plain, at::HIDDEN_SIZE),
            volume_size: be64(plain, at::VOLUME_SIZE),
            data_offset: be64(plain, at::DATA_OFFSET),
            data_size: be64(plain, at::DATA_SIZE),
            flags: be32(plain, at::FLAGS),
            sector_size,
            master_keys,
        })
    }

    /// The decrypted 448 bytes of this header, CRCs computed.
    pub fn serialize(&self) -> Zeroizing<[u8; ENCRYPTED_BYTES]> {
        let mut p = Zeroizing::new([0u8; ENCRYPTED_BYTES]);
        let magic: &[u8; 4] = match self.format {
            Format::TrueCrypt => b"TRUE",
            Format::VeraCrypt => b"VERA",
        };
        p[at::MAGIC..at::MAGIC + 4].copy_from_slice(magic);
        p[at::VERSION..at::VERSION + 2].copy_from_slice(&self.version.to_be_bytes());
        p[at::MIN_PROGRAM..at::MIN_PROGRAM + 2]
            .copy_from_slice(&self.min_program_version.to_be_bytes());
        p[at::HIDDEN_SIZE..at::HIDDEN_SIZE + 8]
            .copy_from_slice(&self.hidden_volume_size.to_be_bytes());
        p[at::VOLUME_SIZE..at::VOLUME_SIZE + 8].copy_from_slice(&self.volume_size.to_be_bytes());
        p[at::DATA_OFFSET..at::DATA_OFFSET + 8].copy_from_slice(&self.data_offset.to_be_bytes());
        p[at::DATA_SIZE..at::DATA_SIZE + 8].copy_from_slice(&self.data_size.to_be_bytes());
        p[at::FLAGS..at::FLAGS + 4].copy_from_slice(&self.flags.to_be_bytes());
        if self.version >= 5 {
            p[at::SECTOR_SIZE..at::SECTOR_SIZE + 4]
                .copy_from_slice(&self.sector_size.to_be_bytes());
        }
        p[at::KEYS..].copy_from_slice(&self.master_keys[..]);
        let key_crc = crc32fast::hash(&p[at::KEYS..]);
        p[at::KEY_CRC..at::KEY_CRC + 4].copy_from_slice(&key_crc.to_be_bytes());
        if self.version >= 4 {
            let crc = crc32fast::hash(&p[..at::HEADER_CRC]);
            p[at::HEADER_CRC..at::HEADER_CRC + 4].copy_from_slice(&crc.to_be_bytes());
        }
        p
    }

    /// True when the XTS primary and secondary keys of some layer are equal
    /// (a weak key TrueCrypt refuses to create).
    pub fn has_equal_xts_halves(&self, layers: usize) -> bool {
        let k = 32;
        (0..layers).any(|i| {
            self.master_keys[i * k..(i + 1) * k]
                == self.master_keys[(layers + i) * k..(layers + i + 1) * k]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(format: Format, version: u16) -> Header {
        let mut keys = Zeroizing::new([0u8; MASTER_KEY_BYTES]);
        for (i, b) in keys.iter_mut().enumerate() {
            *b = i as u8;
        }
        Header {
            format,
            version,
            min_program_version: 0x0700,
            hidden_volume_size: 0,
            volume_size: 1 << 20,
            data_offset: 131072,
            data_size: 1 << 20,
            flags: 0,
            sector_size: 512,
            master_keys: keys,
        }
    }

    #[test]
    fn serialize_then_parse_round_trips() {
        for (format, version) in [
            (Format::TrueCrypt, 5),
            (Format::VeraCrypt, 5),
            (Format::TrueCrypt, 4),
        ] {
            let h = sample(format, version);
            let bytes = h.serialize();
            let back = Header::parse(&bytes, format).expect("parses");
            assert_eq!(back.data_offset, 131072);
            assert_eq!(back.volume_size, 1 << 20);
            assert_eq!(back.master_keys[..], h.master_keys[..]);
            let other = if format == Format::TrueCrypt {
                Format::VeraCrypt
            } else {
                Format::TrueCrypt
            };
            assert_eq!(Header::parse(&bytes, other).err(), Some(NotAHeader::Magic));
        }
    }

    #[test]
    fn every_corruption_is_caught() {
        let bytes = sample(Format::VeraCrypt, 5).serialize();
        for (pos, expect) in [
            (200, NotAHeader::KeyCrc),
            (40, NotAHeader::HeaderCrc),
            (8, NotAHeader::KeyCrc),
        ] {
            let mut b = *bytes;
            b[pos] ^= 1;
            assert_eq!(
                Header::parse(&b, Format::VeraCrypt).err(),
                Some(expect),
                "byte {pos}"
            );
        }
    }

    #[test]
    fn legacy_versions_parse_only_as_legacy_and_run_to_the_host_end() {
        let mut h = sample(Format::TrueCrypt, 2);
        h.data_offset = 0;
        h.data_size = 0;
        h.volume_size = 0;
        let bytes = h.serialize();
        assert_eq!(
            Header::parse(&bytes, Format::TrueCrypt).err(),
            Some(NotAHeader::Version)
        );
        let mut back = Header::parse_legacy(&bytes).expect("legacy");
        back.settle_legacy_data_area(false, 1 << 20);
        assert_eq!((back.data_offset, back.data_size), (512, (1 << 20) - 512));
        let modern = sample(Format::TrueCrypt, 5).serialize();
        assert_eq!(
            Header::parse_legacy(&modern).err(),
            Some(NotAHeader::Version)
        );
    }

    #[test]
    fn locations_fit_the_host() {
        assert_eq!(Location::Backup.offset(1 << 20), Some((1 << 20) - 131072));
        assert_eq!(Location::HiddenPrimary.offset(65536), None);
        assert_eq!(Location::HiddenLegacy.offset(1000), None);
    }
}
