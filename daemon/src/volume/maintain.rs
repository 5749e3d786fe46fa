//! Changing what opens a volume (password, keyfiles, PIM, PRF, format), and
//! backing up and restoring its headers. The master keys never change, so
//! the data area is never touched.
//!
//! Crash safety: a change rewrites a volume's primary header and then its
//! embedded backup, each made durable before the next is written. A crash
//! before the first write completes leaves the old password working (the
//! backup still has it); between the two writes, the new password opens the
//! primary header and the old one the backup; after both, the new one opens
//! both. No moment has both headers in flight.

use super::create::{GROUP_BYTES, SealWith, seal, write_durably};
use super::header::{HEADER_BYTES, Location};
use super::kdf::{Format, Prf};
use super::opened::UNIT;
use super::unlock::{self, Credentials, SearchOptions, Target, Unlocked};
use crate::engine::Engine;
use crate::error::{Error, Result};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::sync::atomic::AtomicBool;
use zeroize::Zeroizing;

/// Size of a header backup file: the volume header's 64 KiB slot, then the
/// hidden volume header's (random bytes when there is no hidden volume, so
/// a backup does not tell whether one exists), laid out as TrueCrypt's are.
/// The headers are copied as they are on disk (TrueCrypt re-encrypts them
/// under fresh salts; either way only the password opens them).
pub const BACKUP_FILE_BYTES: usize = tcd_proto::contract::options::BACKUP_FILE_BYTES as usize;

/// What a volume should open with after a change.
#[derive(Debug, Clone, Copy)]
pub struct Rekey<'a> {
    pub creds: Credentials<'a>,
    /// A new PRF, or `None` to keep the current one.
    pub prf: Option<Prf>,
    /// Convert to this format (`None` keeps it: a TrueCrypt volume stays
    /// TrueCrypt).
    pub format: Option<Format>,
}

/// One header write of a change, in the order the writes must land.
pub struct HeaderWrite {
    pub offset: u64,
    pub bytes: Zeroizing<[u8; HEADER_BYTES]>,
}

impl std::fmt::Debug for HeaderWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeaderWrite")
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

/// The header locations of the volume whose header was found at `found`,
/// primary first. TrueCrypt 5 (header version 3) had no backup headers.
fn locations_of(found: Location, version: u16) -> &'static [Location] {
    match found {
        Location::HiddenLegacy => &[Location::HiddenLegacy],
        Location::System => &[Location::System],
        Location::Primary if version < 4 => &[Location::Primary],
        Location::Primary | Location::Backup => &[Location::Primary, Location::Backup],
        Location::HiddenPrimary | Location::HiddenBackup => {
            &[Location::HiddenPrimary, Location::HiddenBackup]
        }
    }
}

/// Plans a change of credentials: unlocks with `old` and returns the header
/// writes, primary first, that make `new` open the volume instead.
/// [`apply`] carries them out; [`change_credentials`] does both.
pub fn plan_rekey(
    engine: &Engine,
    host: &File,
    old: Credentials<'_>,
    target: Target,
    new: &Rekey<'_>,
    opts: &SearchOptions,
    cancel: &AtomicBool,
) -> Result<Vec<HeaderWrite>> {
    plan_rekey_saying(engine, host, old, target, new, opts, cancel).map(|(writes, _)| writes)
}

/// [`plan_rekey`], and the format the header is converted to (none when
/// it keeps its own).
fn plan_rekey_saying(
    engine: &Engine,
    host: &File,
    old: Credentials<'_>,
    target: Target,
    new: &Rekey<'_>,
    opts: &SearchOptions,
    cancel: &AtomicBool,
) -> Result<(Vec<HeaderWrite>, Option<Format>)> {
    let u = unlock::unlock(engine, host, old, target, opts, cancel)?;
    let size = unlock::host_size(host)?;
    let mut header = u.header.clone();
    if header.version < 4 {
        // Keep the on-disk form TrueCrypt 5 reads (see `settle_legacy_data_area`).
        header.data_offset = 0;
    }
    let prf = new.prf.unwrap_or(u.prf);
    super::create::refuse_legacy(u.chain, prf)?;
    if let Some(format) = new.format
        && format != header.format
    {
        if header.version < 4 {
            // TrueCrypt 5 kept its data right after the header and has no
            // backup header: a version-5 header cannot describe that layout.
            return Err(Error::InvalidArgument(
                "a TrueCrypt 5 volume cannot be converted; copy its files into a new volume".into(),
            ));
        }
        if format == Format::TrueCrypt && !u.chain.truecrypt {
            return Err(Error::InvalidArgument(format!(
                "TrueCrypt has no {} cipher",
                u.chain.name
            )));
        }
        header.format = format;
        header.version = header.version.max(5);
        header.min_program_version = match format {
            Format::TrueCrypt => 0x0700,
            Format::VeraCrypt => 0x010b,
        };
    }
    if !prf.in_format(header.format) {
        return Err(Error::PrfNotInFormat {
            prf: prf.name(),
            format: header.format.name(),
        });
    }
    let backend = opts.backend.as_deref();
    let mut writes = Vec::new();
    for &location in locations_of(u.location, u.header.version) {
        let offset = location.offset(size).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "the host has no room for its {}",
                location.describe()
            ))
        })?;
        let with = SealWith {
            prf,
            chain: u.chain,
            limits: &opts.limits,
            backend,
        };
        let bytes = seal(engine, &header, &new.creds, &with, cancel)?;
        writes.push(HeaderWrite { offset, bytes });
    }
    let converted = (header.format != u.header.format).then_some(header.format);
    Ok((writes, converted))
}

/// Carries out planned header writes in order, each durable before the next.
pub fn apply(host: &File, writes: &[HeaderWrite]) -> Result<()> {
    for w in writes {
        write_durably(host, &w.bytes[..], w.offset)?;
    }
    Ok(())
}

/// Changes what opens the volume that `old` opens (see the module's notes
/// on crash safety); the format its header was converted to, if it was.
pub fn change_credentials(
    engine: &Engine,
    host: &File,
    old: Credentials<'_>,
    target: Target,
    new: &Rekey<'_>,
    opts: &SearchOptions,
    cancel: &AtomicBool,
) -> Result<Option<Format>> {
    let (writes, converted) = plan_rekey_saying(engine, host, old, target, new, opts, cancel)?;
    apply(host, &writes)?;
    Ok(converted)
}

fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io {
        what: what.to_owned(),
        source,
    }
}

/// An anonymous in-memory file holding `bytes`, so the ordinary search can
/// run over a header group that is not at the start of a host.
fn memory_file(bytes: &[u8]) -> Result<File> {
    // SAFETY: memfd_create takes a NUL-terminated name and flags and returns
    // a new descriptor or -1; nothing else is touched.
    let fd = unsafe { libc::memfd_create(c"tcd-header-group".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(Error::Io {
            what: "cannot make an in-memory file".into(),
            source: std::io::Error::last_os_error(),
        });
    }
    // SAFETY: `fd` was just returned by memfd_create and is owned by no one
    // else.
    let mut f = unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    f.write_all(bytes)
        .map_err(io("cannot fill an in-memory file"))?;
    Ok(f)
}

/// Unlocks the volume or hidden header of a 128 KiB header group.
fn unlock_group(
    engine: &Engine,
    group: &[u8],
    creds: Credentials<'_>,
    opts: &SearchOptions,
    cancel: &AtomicBool,
) -> Result<Unlocked> {
    let file = memory_file(group)?;
    let mut opts = opts.clone();
    opts.try_backup = false;
    unlock::unlock(engine, &file, creds, Target::Any, &opts, cancel)
}

fn read_group(host: &File, offset: u64) -> Result<Zeroizing<Vec<u8>>> {
    let mut group = Zeroizing::new(vec![0u8; BACKUP_FILE_BYTES]);
    host.read_exact_at(&mut group, offset)
        .map_err(io("cannot read the volume headers"))?;
    Ok(group)
}

/// TrueCrypt before 6.0 kept one header and no header group (header
/// versions 1 to 3: its legacy modes, and TrueCrypt 5's XTS): nothing of
/// it is backed up or restored (a group's backup slot is its data).
fn refuse_legacy_header(u: &Unlocked) -> Result<()> {
    if u.chain.mode.is_legacy() || u.header.version < 4 {
        return Err(Error::InvalidArgument(format!(
            "a volume of TrueCrypt before 6.0 (header version {}) has one header and no header \
             group to back up or restore; copy its files into a new volume",
            u.header.version
        )));
    }
    Ok(())
}

/// The contents of a header backup file for the volume `creds` opens (its
/// outer or its hidden password): both header slots of the header group
/// that opened, as they are on disk.
pub fn backup_headers(
    engine: &Engine,
    host: &File,
    creds: Credentials<'_>,
    opts: &SearchOptions,
    cancel: &AtomicBool,
) -> Result<Zeroizing<Vec<u8>>> {
    let u = unlock::unlock(engine, host, creds, Target::Any, opts, cancel)?;
    refuse_legacy_header(&u)?;
    let size = unlock::host_size(host)?;
    let group_at = match u.location {
        Location::Primary | Location::HiddenPrimary => 0,
        Location::Backup | Location::HiddenBackup => size - GROUP_BYTES,
        Location::HiddenLegacy => {
            return Err(Error::InvalidArgument(
                "TrueCrypt 5 hidden volumes have no header group to back up".into(),
            ));
        }
        Location::System => {
            return Err(Error::InvalidArgument(
                "a system encryption header is backed up on the VeraCrypt Rescue Disk, not here"
                    .into(),
            ));
        }
    };
    read_group(host, group_at)
}

/// A file of `bytes` bytes, refused as a header backup.
pub fn not_a_backup_size(bytes: u64) -> Error {
    Error::InvalidArgument(format!(
        "a header backup is {BACKUP_FILE_BYTES} bytes; this one is {bytes}"
    ))
}

/// Writes the header that `creds` opens in a backup file (`backup`, as
/// [`backup_headers`] makes) to the volume's primary and backup locations.
/// Only the volume the password opens is restored: restoring the outer
/// volume's header never touches the hidden volume's. With `check_data`,
/// a backup whose keys read the volume's data as noise is refused (see
/// [`reads_as_noise`]).
pub fn restore_from_file(
    engine: &Engine,
    host: &File,
    backup: &[u8],
    creds: Credentials<'_>,
    opts: &SearchOptions,
    check_data: bool,
    cancel: &AtomicBool,
) -> Result<Location> {
    if backup.len() > BACKUP_FILE_BYTES {
        return Err(Error::InvalidArgument(format!(
            "a header backup is {BACKUP_FILE_BYTES} bytes; this one is larger"
        )));
    }
    if backup.len() != BACKUP_FILE_BYTES {
        return Err(not_a_backup_size(backup.len() as u64));
    }
    let u = unlock_group(engine, backup, creds, opts, cancel)?;
    refuse_legacy_header(&u)?;
    let size = unlock::host_size(host)?;
    check_fits(&u, size)?;
    if !check_same_volume(engine, host, &u, size, creds, opts, cancel)?
        && check_data
        && reads_as_noise(engine, host, &u)?
    {
        return Err(Error::InvalidArgument(
            "the backup's keys read this volume's data as noise: the backup is of another \
             volume of the same size, or this volume holds no filesystem, only random data; \
             nothing was written (option skip_data_check restores it all the same)"
                .into(),
        ));
    }
    let (at, targets): (usize, &[Location]) = match u.location {
        Location::Primary => (0, &[Location::Primary, Location::Backup]),
        _ => (
            GROUP_BYTES as usize / 2,
            &[Location::HiddenPrimary, Location::HiddenBackup],
        ),
    };
    for &t in targets {
        let offset = t.offset(size).ok_or_else(|| {
            Error::InvalidArgument("the host is too small for this header".into())
        })?;
        write_durably(host, &backup[at..at + HEADER_BYTES], offset)?;
    }
    Ok(u.location)
}

/// Copies the embedded backup header that `creds` opens over the damaged
/// primary one. Returns which volume's header was restored.
pub fn restore_from_embedded(
    engine: &Engine,
    host: &File,
    creds: Credentials<'_>,
    opts: &SearchOptions,
    cancel: &AtomicBool,
) -> Result<Location> {
    let size = unlock::host_size(host)?;
    // Two header groups do not fit: no volume with backup headers is
    // there, only one of TrueCrypt before 5.0 could be, with one header.
    use tcd_proto::contract::options::{MIN_WITH_BACKUP_BYTES, no_embedded_backup};
    if size < MIN_WITH_BACKUP_BYTES {
        return Err(Error::InvalidArgument(no_embedded_backup(size)));
    }
    let group = read_group(host, size - GROUP_BYTES)?;
    let u = match unlock_group(engine, &group, creds, opts, cancel) {
        Err(Error::NotUnlocked { untried }) => {
            // A volume of TrueCrypt before 6.0 has no backup to open: its
            // one header, if the password opens it, says so. Else the
            // password is wrong, as it was.
            let own = unlock::unlock(engine, host, creds, Target::Outer, opts, cancel);
            if let Ok(own) = own {
                refuse_legacy_header(&own)?;
            }
            return Err(Error::NotUnlocked { untried });
        }
        r => r?,
    };
    refuse_legacy_header(&u)?;
    check_fits(&u, size)?;
    let (at, target) = match u.location {
        Location::Primary => (0, Location::Primary),
        _ => (GROUP_BYTES as usize / 2, Location::HiddenPrimary),
    };
    let offset = target
        .offset(size)
        .ok_or_else(|| Error::InvalidArgument("the host is too small for this header".into()))?;
    write_durably(host, &group[at..at + HEADER_BYTES], offset)?;
    Ok(if target == Location::Primary {
        Location::Backup
    } else {
        Location::HiddenBackup
    })
}

/// A backup of another volume would make this one unreadable, and its
/// embedded backup with it: refused. An outer volume's data area fills
/// its host between the two header groups, so a header describing any
/// other size is another volume's; and where this volume's own header
/// still opens with the same password, its master keys must be the
/// backup's (a password change keeps them). Whether that header opened
/// (the keys then known to be the same).
fn check_same_volume(
    engine: &Engine,
    host: &File,
    backup: &Unlocked,
    size: u64,
    creds: Credentials<'_>,
    opts: &SearchOptions,
    cancel: &AtomicBool,
) -> Result<bool> {
    let h = &backup.header;
    let outer = backup.location == Location::Primary;
    if outer && h.data_offset.saturating_add(h.data_size) != size.saturating_sub(GROUP_BYTES) {
        let this = size.saturating_sub(GROUP_BYTES + h.data_offset);
        // A smaller one may be this volume's from before an expansion.
        let or_older = match h.data_size < this {
            true => ", or saved before this volume was expanded",
            false => "",
        };
        return Err(Error::InvalidArgument(format!(
            "the backup is of another volume{or_older}: its data area is {} bytes, this \
             volume's {this}; nothing was written",
            h.data_size,
        )));
    }
    // Searched as widely as the backup was: this volume's header may use
    // another hash or cipher than the backup's (then it is no copy of it).
    let mut look = opts.clone();
    look.progress = None;
    let target = if outer { Target::Outer } else { Target::Hidden };
    match unlock::unlock(engine, host, creds, target, &look, cancel) {
        Ok(current) if current.header.master_keys[..] != h.master_keys[..] => {
            Err(Error::InvalidArgument(
                "the backup is of another volume: the password opens this volume's own header \
                 too, and its keys differ from the backup's; nothing was written"
                    .into(),
            ))
        }
        Err(Error::Cancelled) => Err(Error::Cancelled),
        Ok(_) => Ok(true),
        // Damaged (why one restores), or another password's: the keys
        // cannot be compared.
        Err(_) => Ok(false),
    }
}

/// Bytes of the data area's start read by [`reads_as_noise`].
const DATA_CHECKED: u64 = 64 << 10;

/// Whether `backup`'s keys read the start of this volume's data area as
/// noise: each sector written on the host decrypts to bytes spread over
/// all 256 values as evenly as chance spreads them, as another key's
/// plaintext is. A filesystem's sectors, text, zeros (a filled volume's
/// unused space) and patterns are spread far less evenly, or more; a
/// sector still zero on the host (never written) says nothing. False
/// when no sector says.
fn reads_as_noise(engine: &Engine, host: &File, backup: &Unlocked) -> Result<bool> {
    let h = &backup.header;
    let len = h.data_size.min(DATA_CHECKED) / UNIT * UNIT;
    let mut buf = Zeroizing::new(vec![0u8; len as usize]);
    host.read_exact_at(&mut buf, h.data_offset)
        .map_err(|source| Error::Io {
            what: "cannot read the volume's data".into(),
            source,
        })?;
    let written: Vec<bool> = buf
        .chunks(UNIT as usize)
        .map(|s| s.iter().any(|&b| b != 0))
        .collect();
    let cipher = engine.volume_cipher(backup.chain, &h.master_keys[..], None)?;
    cipher.decrypt(&mut buf, h.data_offset / UNIT)?;
    let mut said = false;
    for (sector, _) in buf.chunks(UNIT as usize).zip(written).filter(|(_, w)| *w) {
        if !spread_as_chance(sector) {
            return Ok(false);
        }
        said = true;
    }
    Ok(said)
}

/// Whether a 512-byte sector's bytes are spread over the 256 values as
/// random bytes are: twice the chi-square statistic against 2 of each
/// is within 260 to 900 (random bytes: 510 on average, standard deviation
/// about 50; 100,000 random sectors gave 338 to 752). Text and metadata
/// give thousands, zeros and repeated patterns far more, or near 0. A
/// random sector outside the range lets the restore go ahead, as it went
/// before the check.
fn spread_as_chance(sector: &[u8]) -> bool {
    let mut counts = [0u32; 256];
    for &b in sector {
        counts[usize::from(b)] += 1;
    }
    let expected = (sector.len() / 256) as i64;
    let twice_chi2: i64 = counts
        .iter()
        .map(|&n| (i64::from(n) - expected).pow(2))
        .sum();
    (260..=900).contains(&twice_chi2)
}

/// A header about to be restored must describe a data area inside this
/// host, clear of the header groups.
fn check_fits(u: &Unlocked, size: u64) -> Result<()> {
    let h = &u.header;
    let fits = h.data_offset >= GROUP_BYTES
        && h.data_offset
            .checked_add(h.data_size)
            .is_some_and(|end| end <= size.saturating_sub(GROUP_BYTES));
    if fits {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "this header's data area ({} bytes at {}) does not fit the {size}-byte volume: is it the backup of another volume?",
            h.data_size, h.data_offset
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::spread_as_chance;

    #[test]
    fn only_bytes_spread_as_chance_spreads_them_read_as_noise() {
        for _ in 0..1000 {
            let mut random = [0u8; 512];
            getrandom::fill(&mut random).expect("random bytes");
            assert!(spread_as_chance(&random));
        }
        let zeros = [0u8; 512];
        let text: Vec<u8> = b"a line of a text file, as a volume may hold one\n"
            .iter()
            .copied()
            .cycle()
            .take(512)
            .collect();
        // Each byte value twice: as even as can be, evener than chance.
        let pattern: Vec<u8> = (0..512).map(|i| (i as u8) ^ 0x5a).collect();
        let mut superblock = [0u8; 512];
        superblock[56..58].copy_from_slice(&[0x53, 0xef]);
        for sector in [&zeros[..], &text, &pattern, &superblock] {
            assert!(!spread_as_chance(sector));
        }
    }
}
