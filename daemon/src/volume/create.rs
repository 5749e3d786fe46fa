//! Making volumes: a standard volume over a whole host, and a hidden volume
//! inside an existing one.
//!
//! Layout of a host of `S` bytes, as TrueCrypt 7 and VeraCrypt write it:
//!
//! | host bytes              | holds |
//! | ----------------------- | ----- |
//! | 0 .. 512                | volume header |
//! | 65536 .. 66048          | hidden volume header (random bytes if none) |
//! | 131072 .. S − 131072    | data area of the outer volume (rounded down to whole sectors) |
//! | S − 131072 ..           | backup of the volume header |
//! | S − 65536 ..            | backup of the hidden volume header (or random) |
//!
//! Every byte of the two 128 KiB header groups that is not a header is
//! random, so a volume without a hidden volume looks like one with. Each
//! header is sealed under its own random salt.

use super::header::{
    ENCRYPTED_BYTES, HEADER_BYTES, Header, Location, MASTER_KEY_BYTES, SALT_BYTES,
};
use super::kdf::{self, Format, KdfLimits, Prf};
use super::keyfile;
use super::opened::UNIT;
use super::unlock::{self, Credentials, SearchOptions, Target};
use crate::engine::{Chain, Engine};
use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use zeroize::Zeroizing;

/// Bytes of one header group (a header's 64 KiB slot and the hidden one's).
pub const GROUP_BYTES: u64 = tcd_proto::contract::options::HEADER_GROUP_BYTES;
/// Bytes at the end of the outer data area a hidden volume leaves to the
/// outer filesystem (TrueCrypt's reserved end area).
pub const HIDDEN_END_RESERVE: u64 = 4096;
/// Header version both programs write today.
const HEADER_VERSION: u16 = 5;
/// Write and fill in steps of this size.
const STEP: usize = 1 << 20;

/// How the data area is prepared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// Headers only: fast, but what was on the host stays, and a fresh file
    /// keeps plaintext zeros that show which parts hold data later.
    Quick,
    /// Every data sector encrypted, so used and free space look alike.
    Full,
}

/// What to make.
#[derive(Debug, Clone)]
pub struct CreateOptions {
    pub format: Format,
    pub chain: &'static Chain,
    pub prf: Prf,
    /// Sector size the volume presents; `None`: 512 in a file, the logical
    /// sector size of a block device (4096 on 4K-native drives). The XTS
    /// data unit stays 512 bytes whatever this is.
    pub sector_size: Option<u32>,
    pub fill: Fill,
    /// Force one backend for every layer.
    pub backend: Option<String>,
    pub limits: KdfLimits,
    /// A hidden volume's outer volume opens with this PRF (all if None).
    pub outer_prf: Option<Prf>,
}

impl CreateOptions {
    /// VeraCrypt format, AES, SHA-512, the host's sector size, full fill:
    /// what VeraCrypt proposes.
    pub fn new() -> Self {
        CreateOptions {
            format: Format::VeraCrypt,
            chain: Chain::by_name("AES").unwrap_or(&crate::engine::chain::CHAINS[0]),
            prf: Prf::Sha512,
            sector_size: None,
            fill: Fill::Full,
            backend: None,
            limits: KdfLimits::default(),
            outer_prf: None,
        }
    }
}

impl Default for CreateOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// Where a new volume's data went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Created {
    pub data_offset: u64,
    pub data_size: u64,
}

/// Fills `buf` from the operating system's random source.
pub(crate) fn random(buf: &mut [u8]) -> Result<()> {
    getrandom::fill(buf).map_err(|e| Error::Random(e.to_string()))
}

/// The logical sector size of a block device, or 512 for a regular file.
pub fn host_sector_size(host: &File) -> Result<u32> {
    use std::os::unix::fs::FileTypeExt;
    let meta = host.metadata().map_err(|e| Error::Io {
        what: "cannot inspect the host".into(),
        source: e,
    })?;
    if !meta.file_type().is_block_device() {
        return Ok(512);
    }
    let mut size: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int through the pointer, which points to
    // a live c_int; the descriptor is open for the duration of the call.
    let rc = unsafe {
        libc::ioctl(
            std::os::fd::AsRawFd::as_raw_fd(host),
            libc::BLKSSZGET,
            &mut size as *mut libc::c_int,
        )
    };
    if rc != 0 || size < 512 {
        return Err(Error::Io {
            what: "cannot read the device's sector size".into(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(size as u32)
}

/// How a header is sealed: its PRF, its chain, and the bounds on both.
pub(crate) struct SealWith<'a> {
    pub prf: Prf,
    pub chain: &'static Chain,
    pub limits: &'a KdfLimits,
    pub backend: Option<&'a str>,
}

/// Encrypts `header` under a fresh salt and a key derived from `creds`:
/// the 512 bytes to write at any header location.
pub(crate) fn seal(
    engine: &Engine,
    header: &Header,
    creds: &Credentials<'_>,
    with: &SealWith<'_>,
    cancel: &AtomicBool,
) -> Result<Zeroizing<[u8; HEADER_BYTES]>> {
    let SealWith {
        prf,
        chain,
        limits,
        backend,
    } = *with;
    if header.format == Format::TrueCrypt && creds.pim != 0 {
        return Err(Error::InvalidArgument(
            "TrueCrypt volumes have no PIM".into(),
        ));
    }
    let password = keyfile::apply(creds.password, creds.keyfiles, header.format)?;
    let mut out = Zeroizing::new([0u8; HEADER_BYTES]);
    let mut salt = [0u8; SALT_BYTES];
    random(&mut salt)?;
    let mut key = Zeroizing::new([0u8; kdf::HEADER_KEY_BYTES]);
    kdf::derive_header_key(
        prf,
        header.format,
        creds.pim,
        &password,
        &salt,
        limits,
        cancel,
        &mut key,
    )?;
    let mut body = header.serialize();
    engine
        .volume_cipher_units(chain, &key[..], backend, ENCRYPTED_BYTES as u32)?
        .encrypt(&mut body[..], 0)?;
    out[..SALT_BYTES].copy_from_slice(&salt);
    out[SALT_BYTES..].copy_from_slice(&body[..]);
    Ok(out)
}

/// Random master keys for `chain`, with no layer whose XTS halves match.
fn master_keys(chain: &'static Chain) -> Result<Zeroizing<[u8; MASTER_KEY_BYTES]>> {
    let mut keys = Zeroizing::new([0u8; MASTER_KEY_BYTES]);
    random(&mut keys[..])?;
    let probe = Header {
        format: Format::VeraCrypt,
        version: HEADER_VERSION,
        min_program_version: 0,
        hidden_volume_size: 0,
        volume_size: 0,
        data_offset: 0,
        data_size: 0,
        flags: 0,
        sector_size: 512,
        master_keys: keys.clone(),
    };
    if probe.has_equal_xts_halves(chain.ciphers.len()) {
        // Only a broken random source gets here.
        return Err(Error::WeakKeys);
    }
    Ok(keys)
}

fn new_header(
    opts: &CreateOptions,
    keys: Zeroizing<[u8; MASTER_KEY_BYTES]>,
    sector_size: u32,
    hidden_size: u64,
    data_offset: u64,
    data_size: u64,
) -> Header {
    Header {
        format: opts.format,
        version: HEADER_VERSION,
        // The minimum program versions TrueCrypt 7.1a and VeraCrypt write
        // into new headers (VeraCrypt's constant 0x010b reads as 1.0b).
        min_program_version: match opts.format {
            Format::TrueCrypt => 0x0700,
            Format::VeraCrypt => 0x010b,
        },
        hidden_volume_size: hidden_size,
        volume_size: data_size,
        data_offset,
        data_size,
        flags: 0,
        sector_size,
        master_keys: keys,
    }
}

fn sealing(opts: &CreateOptions) -> SealWith<'_> {
    SealWith {
        prf: opts.prf,
        chain: opts.chain,
        limits: &opts.limits,
        backend: opts.backend.as_deref(),
    }
}

/// Checks the options against each other and the host; returns the sector
/// size to use.
fn check_options(opts: &CreateOptions, creds: &Credentials<'_>, host: &File) -> Result<u32> {
    refuse_legacy(opts.chain, opts.prf)?;
    if !opts.prf.in_format(opts.format) {
        return Err(Error::PrfNotInFormat {
            prf: opts.prf.name(),
            format: opts.format.name(),
        });
    }
    if opts.format == Format::TrueCrypt && !opts.chain.truecrypt {
        return Err(Error::InvalidArgument(format!(
            "TrueCrypt has no {} cipher",
            opts.chain.name
        )));
    }
    let device = host_sector_size(host)?;
    let sector = opts.sector_size.unwrap_or(device);
    if !(sector.is_power_of_two() && (512..=4096).contains(&sector)) {
        return Err(Error::InvalidArgument(format!(
            "sector size {sector} is not 512, 1024, 2048 or 4096"
        )));
    }
    if sector < device {
        return Err(Error::InvalidArgument(format!(
            "sector size {sector} is smaller than the device's {device}"
        )));
    }
    // Refuse a too-long password before spending time on anything.
    keyfile::check_password_len(creds.password, opts.format)?;
    Ok(sector)
}

/// TrueCrypt 4's modes and its SHA-1 open, but tcd never writes them:
/// TrueCrypt 7.1a called them deprecated.
pub fn refuse_legacy(chain: &Chain, prf: Prf) -> Result<()> {
    if chain.mode.is_legacy() {
        return Err(Error::InvalidArgument(format!(
            "{} is a mode of TrueCrypt before 5.0 (deprecated since TrueCrypt 5): tcd opens such \
             volumes but never writes their headers; copy the files into a new volume",
            chain.mode.name()
        )));
    }
    if prf.legacy_only() {
        return Err(Error::InvalidArgument(
            "SHA-1 is the hash of TrueCrypt before 5.0 (deprecated since TrueCrypt 5): tcd opens \
             such volumes but never makes new headers with it"
                .into(),
        ));
    }
    Ok(())
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        what: what.to_owned(),
        source,
    }
}

/// Writes `bytes` at `offset` of `host` and makes them durable before
/// returning, so writes land in the order they are made.
pub(crate) fn write_durably(host: &File, bytes: &[u8], offset: u64) -> Result<()> {
    host.write_all_at(bytes, offset)
        .map_err(io("cannot write a volume header"))?;
    host.sync_data().map_err(io("cannot sync the volume"))
}

/// A 64 KiB header slot: random bytes with `header` (if any) at its start.
fn slot(header: Option<&[u8; HEADER_BYTES]>) -> Result<Zeroizing<Vec<u8>>> {
    let mut s = Zeroizing::new(vec![0u8; (GROUP_BYTES / 2) as usize]);
    random(&mut s)?;
    if let Some(h) = header {
        s[..HEADER_BYTES].copy_from_slice(h);
    }
    Ok(s)
}

/// Makes a volume over all of `host` (a file of the wanted size, or a
/// block device). `progress(done, total)` follows the data fill.
pub fn create(
    engine: &Engine,
    host: &File,
    creds: Credentials<'_>,
    opts: &CreateOptions,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &AtomicBool,
) -> Result<Created> {
    let sector_size = check_options(opts, &creds, host)?;
    let size = unlock::host_size(host)?;
    let sector = u64::from(sector_size);
    let data_size = size.saturating_sub(2 * GROUP_BYTES) / sector * sector;
    // Room for at least a small FAT filesystem, as TrueCrypt asks.
    let min = 2 * GROUP_BYTES + 32 * 1024;
    if data_size < 32 * 1024 {
        return Err(Error::VolumeTooSmall { size, min });
    }
    let keys = master_keys(opts.chain)?;
    let header = new_header(opts, keys, sector_size, 0, GROUP_BYTES, data_size);
    let backend = opts.backend.as_deref();
    let primary = seal(engine, &header, &creds, &sealing(opts), cancel)?;
    let backup = seal(engine, &header, &creds, &sealing(opts), cancel)?;

    if opts.fill == Fill::Full {
        let cipher = engine.volume_cipher(opts.chain, &header.master_keys[..], backend)?;
        fill_encrypted(host, &cipher, GROUP_BYTES, data_size, progress, cancel)?;
    }
    // Headers last: an interrupted creation leaves no volume that opens.
    let backup_at = size - GROUP_BYTES;
    write_durably(host, &slot(None)?, GROUP_BYTES / 2)?;
    write_durably(host, &slot(None)?, backup_at + GROUP_BYTES / 2)?;
    write_durably(host, &slot(Some(&backup))?, backup_at)?;
    write_durably(host, &slot(Some(&primary))?, 0)?;
    Ok(Created {
        data_offset: GROUP_BYTES,
        data_size,
    })
}

/// Encrypts zeros over `len` bytes at host offset `start` (units numbered
/// from the start of the host), so every sector reads as random.
pub(crate) fn fill_encrypted(
    host: &File,
    cipher: &crate::engine::VolumeCipher,
    start: u64,
    len: u64,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &AtomicBool,
) -> Result<()> {
    let mut buf = vec![0u8; STEP];
    let mut done = 0u64;
    while done < len {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let n = (len - done).min(STEP as u64) as usize;
        let chunk = &mut buf[..n];
        chunk.fill(0);
        let at = start + done;
        cipher.encrypt(chunk, at / UNIT)?;
        host.write_all_at(chunk, at)
            .map_err(io("cannot write the data area"))?;
        done += n as u64;
        progress(done, len);
    }
    host.sync_data().map_err(io("cannot sync the volume"))
}

/// Makes a hidden volume of `size` bytes at the end of the outer volume's
/// data area, leaving the outer filesystem its reserved end area.
///
/// The outer volume must have been fully filled: a sector that reads as
/// zeros on the host is plaintext, and zeros around a region of random
/// bytes would show where the hidden volume is. Such an outer volume is
/// refused with [`Error::OuterNotFilled`]. The space the hidden volume
/// takes must also hold nothing the outer filesystem wrote: a filled outer
/// volume decrypts to zeros where nothing was written, so any other sector
/// there is the outer's data (or data it since freed, which cannot be told
/// apart), and the hidden volume would overwrite it:
/// [`Error::HiddenOverOuterData`], with the largest size that fits, as
/// VeraCrypt's wizard offers only the space after the outer's last used
/// cluster.
#[allow(clippy::too_many_arguments)] // two sets of credentials, as VeraCrypt asks
pub fn create_hidden(
    engine: &Engine,
    host: &File,
    outer: Credentials<'_>,
    hidden: Credentials<'_>,
    size: u64,
    opts: &CreateOptions,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &AtomicBool,
) -> Result<Created> {
    let sector_size = check_options(opts, &hidden, host)?;
    // The same password and keyfiles would open the outer volume where
    // the hidden one is meant (the outer's header is tried first).
    if hidden.password == outer.password && hidden.keyfiles == outer.keyfiles {
        return Err(Error::InvalidArgument(
            "the hidden volume's password (with its keyfiles) must differ from the outer \
             volume's: the same one would open the outer volume"
                .into(),
        ));
    }
    let host_size = unlock::host_size(host)?;
    let mut search = SearchOptions::new();
    search.limits = opts.limits;
    search.backend = opts.backend.clone();
    search.prf = opts.outer_prf;
    let o = unlock::unlock(engine, host, outer, Target::Outer, &search, cancel)?;
    let sector = u64::from(sector_size);
    let outer_end = o.header.data_offset + o.header.data_size;
    let size = size / sector * sector;
    let end = outer_end.saturating_sub(HIDDEN_END_RESERVE);
    // Keep the outer's first 64 KiB (its filesystem's own header) clear.
    let lowest = o.header.data_offset + 65536;
    let start = end.checked_sub(size).map(|s| s / sector * sector);
    let Some(start) = start.filter(|&s| s >= lowest && size >= 32 * 1024) else {
        return Err(Error::HiddenDoesNotFit {
            size,
            room: end.saturating_sub(lowest),
        });
    };
    check_outer_filled(host, o.header.data_offset, outer_end, cancel)?;
    let outer_cipher =
        engine.volume_cipher(o.chain, &o.header.master_keys[..], opts.backend.as_deref())?;
    if let Some(fs) = spreading_filesystem(host, &outer_cipher, o.header.data_offset)? {
        return Err(Error::InvalidArgument(format!(
            "the outer volume holds {fs}, which puts new files anywhere in it: its next writes \
             would land in a hidden volume at its end (a hidden volume goes into a FAT, exFAT \
             or NTFS outer volume, which fill from the start)"
        )));
    }
    if let Some(used) = last_written(host, &outer_cipher, start, end, cancel)? {
        // A hidden volume fills its space to the end: a second one would
        // find the first's last sector in use.
        if used + UNIT >= end {
            return Err(Error::OuterEndInUse);
        }
        let free_from = (used + UNIT).div_ceil(sector) * sector;
        return Err(Error::HiddenOverOuterData {
            offset: used,
            size,
            room: end.saturating_sub(free_from.max(lowest)),
        });
    }

    refuse_hidden_there(engine, host, hidden, opts, cancel)?;

    let keys = master_keys(opts.chain)?;
    let data_size = end - start;
    let header = new_header(opts, keys, sector_size, data_size, start, data_size);
    let backend = opts.backend.as_deref();
    let primary = seal(engine, &header, &hidden, &sealing(opts), cancel)?;
    let backup = seal(engine, &header, &hidden, &sealing(opts), cancel)?;
    let cipher = engine.volume_cipher(opts.chain, &header.master_keys[..], backend)?;
    fill_encrypted(host, &cipher, start, data_size, progress, cancel)?;
    let backup_at = Location::HiddenBackup
        .offset(host_size)
        .ok_or(Error::VolumeTooSmall {
            size: host_size,
            min: 2 * GROUP_BYTES,
        })?;
    write_durably(host, &backup[..], backup_at)?;
    write_durably(host, &primary[..], GROUP_BYTES / 2)?;
    Ok(Created {
        data_offset: start,
        data_size,
    })
}

/// Refuses a hidden volume the new one's credentials already open: one
/// the end check cannot see (an expand of its outer volume moved it off
/// the end), whose header the new one would overwrite. A hidden volume
/// under another password stays unseen: that is what hides it.
fn refuse_hidden_there(
    engine: &Engine,
    host: &File,
    hidden: Credentials<'_>,
    opts: &CreateOptions,
    cancel: &AtomicBool,
) -> Result<()> {
    let mut search = SearchOptions::new();
    search.limits = opts.limits;
    search.backend = opts.backend.clone();
    search.prf = Some(opts.prf);
    search.format = Some(opts.format);
    match unlock::unlock(engine, host, hidden, Target::Hidden, &search, cancel) {
        Ok(_) => Err(Error::HiddenThere),
        Err(Error::NotUnlocked { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The outer volume's filesystem, when it is one that spreads new files
/// over the whole volume (ext2/3/4's block groups, XFS's allocation
/// groups, Btrfs's chunks) rather than filling it from the start.
fn spreading_filesystem(
    host: &File,
    cipher: &crate::engine::VolumeCipher,
    data_offset: u64,
) -> Result<Option<&'static str>> {
    let sector = |at: u64| -> Result<Zeroizing<Vec<u8>>> {
        let mut s = Zeroizing::new(vec![0u8; UNIT as usize]);
        host.read_exact_at(&mut s, at)
            .map_err(io("cannot read the outer volume"))?;
        cipher.decrypt(&mut s, at / UNIT)?;
        Ok(s)
    };
    // ext's magic 0xEF53 at byte 1080; XFS's "XFSB" at 0; Btrfs's
    // "_BHRfS_M" at 65600.
    if sector(data_offset + 1024)?[56..58] == [0x53, 0xEF] {
        return Ok(Some("an ext2/3/4 filesystem"));
    }
    if sector(data_offset)?.starts_with(b"XFSB") {
        return Ok(Some("an XFS filesystem"));
    }
    if &sector(data_offset + 65536)?[64..72] == b"_BHRfS_M" {
        return Ok(Some("a Btrfs filesystem"));
    }
    Ok(None)
}

/// The host offset of the last sector in `start..end` that does not
/// decrypt to zeros, read from the end down: what the outer volume holds
/// there.
fn last_written(
    host: &File,
    cipher: &crate::engine::VolumeCipher,
    start: u64,
    end: u64,
    cancel: &AtomicBool,
) -> Result<Option<u64>> {
    let mut buf = Zeroizing::new(vec![0u8; STEP]);
    let mut top = end;
    while top > start {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let n = (top - start).min(STEP as u64);
        let at = top - n;
        let chunk = &mut buf[..n as usize];
        host.read_exact_at(chunk, at)
            .map_err(io("cannot read the outer volume"))?;
        cipher.decrypt(chunk, at / UNIT)?;
        if let Some(i) = chunk
            .chunks(UNIT as usize)
            .rposition(|s| s.iter().any(|&b| b != 0))
        {
            return Ok(Some(at + i as u64 * UNIT));
        }
        top = at;
    }
    Ok(None)
}

/// Refuses an outer data area with a sector of zeros on the host.
fn check_outer_filled(host: &File, start: u64, end: u64, cancel: &AtomicBool) -> Result<()> {
    let mut buf = vec![0u8; STEP];
    let mut at = start;
    while at < end {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let n = (end - at).min(STEP as u64) as usize;
        host.read_exact_at(&mut buf[..n], at)
            .map_err(io("cannot read the outer volume"))?;
        if let Some(i) = buf[..n]
            .chunks(UNIT as usize)
            .position(|s| s.iter().all(|&b| b == 0))
        {
            return Err(Error::OuterNotFilled {
                offset: at + i as u64 * UNIT,
            });
        }
        at += n as u64;
    }
    Ok(())
}
