//! VeraCrypt's Expand Volume: a file container grown (or a volume on a
//! device that has grown) keeps its master key; its data area reaches the
//! new end, the new space is encrypted zeros (random to anyone without the
//! key) unless asked not to, and both headers say the new size.
//!
//! Crash safety, as a password change, and a backup header at the host's
//! end at every moment: the new end's header group (random, the backup
//! header with the new size at its start) is written first, which grows a
//! container to its new size in the same write; then the new space is
//! filled and synced (the old backup headers among it); then the primary
//! header. Until the primary lands, the primary header opens the volume at
//! its old size (the data area it names is untouched) and the new backup
//! header at its new size; a torn primary leaves the new backup header;
//! after it, both say the new size. An expansion stopped before the end
//! (a crash, a cancel) is finished by expanding again to the same size:
//! from the old size while the primary header says it; and once both
//! headers say the new size (the embedded backup header restored over a
//! damaged primary) by filling the data area's end that was never written
//! (sectors of zeros on the host: an encrypted sector is all zeros by a
//! chance of 2^-4096) before the filesystem is grown.

use super::create::{GROUP_BYTES, SealWith, fill_encrypted, random, seal, write_durably};
use super::header::{Header, Location};
use super::unlock::{self, Credentials, SearchOptions, Target};
use crate::engine::Engine;
use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use zeroize::Zeroizing;

/// The expansion to make: the host's new size (`None`: a block device's
/// own, which has grown), and whether to encrypt the new space.
#[derive(Debug, Clone, Copy)]
pub struct Expansion {
    pub new_size: Option<u64>,
    pub fill: bool,
}

/// What an expansion does, found before anything is written.
#[derive(Debug)]
pub struct Plan {
    /// The host's size before and after.
    pub old_size: u64,
    pub new_size: u64,
    /// The data area's old and new size.
    pub old_data_size: u64,
    pub new_data_size: u64,
    /// The header with the new size (the master key unchanged).
    header: Header,
    pub chain: &'static crate::engine::chain::Chain,
    pub prf: super::kdf::Prf,
    pub format: super::kdf::Format,
    /// The backup header opened it: the primary did not.
    pub by_backup: bool,
    /// Both headers said the new size already: the bytes at the data
    /// area's end never written, filled to finish the expansion (no header
    /// is written).
    pub unfinished: Option<u64>,
    is_file: bool,
}

/// The writes of an expansion, in order, for the crash test: each returns
/// after its bytes are durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The new end's header group: random, with the backup header of the
    /// new size at its start (a container grows to its new size here).
    Backup,
    /// The new space is encrypted (or only the old backup headers, which
    /// become data).
    Fill,
    /// The primary header with the new size.
    Primary,
}

pub const STEPS: [Step; 3] = [Step::Backup, Step::Fill, Step::Primary];

/// Opens the volume `creds` open and plans its expansion. Refuses a hidden
/// volume, system encryption, a TrueCrypt 5 volume (no backup header to
/// move), and a size that does not grow the volume.
pub fn plan(
    engine: &Engine,
    host: &File,
    creds: Credentials<'_>,
    to: &Expansion,
    opts: &SearchOptions,
    cancel: &AtomicBool,
) -> Result<Plan> {
    let u = unlock::unlock(engine, host, creds, Target::Any, opts, cancel)?;
    super::create::refuse_legacy(u.chain, u.prf)?;
    match u.location {
        Location::Primary | Location::Backup => {}
        Location::HiddenPrimary | Location::HiddenBackup | Location::HiddenLegacy => {
            return Err(Error::InvalidArgument(
                "a hidden volume cannot be expanded: it lies inside its outer volume".into(),
            ));
        }
        Location::System => {
            return Err(Error::InvalidArgument(
                "system encryption cannot be expanded".into(),
            ));
        }
    }
    let h = &u.header;
    if h.version < 4 || h.hidden_volume_size != 0 {
        return Err(Error::InvalidArgument(
            "a TrueCrypt 5 volume has no backup header to move: it cannot be expanded".into(),
        ));
    }
    let old_size = unlock::host_size(host)?;
    let is_file = host
        .metadata()
        .map(|m| m.file_type().is_file())
        .unwrap_or(false);
    let new_size = match (to.new_size, is_file) {
        (Some(n), true) => n,
        (None, false) => old_size,
        (Some(_), false) => {
            return Err(Error::InvalidArgument(
                "a device's volume grows to the device's size: give no size".into(),
            ));
        }
        (None, true) => return Err(Error::InvalidArgument("the new size is missing".into())),
    };
    let sector = u64::from(h.sector_size.max(512));
    let new_data_size = new_size.saturating_sub(GROUP_BYTES + h.data_offset) / sector * sector;
    let mut unfinished = None;
    if new_data_size <= h.data_size {
        let same = new_data_size == h.data_size && new_size == old_size;
        let tail = match same {
            true => unwritten_tail(host, h.data_offset, h.data_size, sector, cancel)?,
            false => 0,
        };
        if tail == 0 {
            return Err(no_growth(h, old_size, new_size, is_file, sector));
        }
        unfinished = Some(tail);
    }
    let mut header = h.clone();
    header.volume_size = new_data_size;
    header.data_size = new_data_size;
    Ok(Plan {
        old_size,
        new_size,
        old_data_size: h.data_size,
        new_data_size,
        header,
        chain: u.chain,
        prf: u.prf,
        format: h.format,
        by_backup: u.location == Location::Backup,
        unfinished,
        is_file,
    })
}

/// Why `new_size` does not grow the volume `h` describes, on a host of
/// `old_size` bytes.
fn no_growth(h: &Header, old_size: u64, new_size: u64, is_file: bool, sector: u64) -> Error {
    let old_end = h.data_offset + h.data_size;
    if !is_file {
        return Error::InvalidArgument(format!(
            "the volume already fills its device ({old_size} bytes): grow the device (or its \
             partition) first"
        ));
    }
    // The same size again: the container is the volume's already.
    if new_size <= old_size {
        return Error::InvalidArgument(format!(
            "the container holds {old_size} bytes already, all of them the volume's (its data \
             area ends at {old_end}, and the backup headers take the last {GROUP_BYTES}): only \
             a larger size grows it"
        ));
    }
    Error::InvalidArgument(format!(
        "{new_size} bytes would not grow the volume: its data area ends at {old_end}, and the \
         backup headers take the last {GROUP_BYTES} (the data area grows in whole sectors of \
         {sector} bytes)"
    ))
}

/// The bytes at the end of the data area (`len` bytes at host offset
/// `start`) that were never written: whole sectors of zeros on the host,
/// counted back from its end.
fn unwritten_tail(
    host: &File,
    start: u64,
    len: u64,
    sector: u64,
    cancel: &AtomicBool,
) -> Result<u64> {
    const CHUNK: u64 = 1 << 20;
    let mut buf = vec![0u8; CHUNK as usize];
    let mut end = start + len;
    while end > start {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let n = (end - start).min(CHUNK);
        let chunk = &mut buf[..n as usize];
        host.read_exact_at(chunk, end - n)
            .map_err(|source| Error::Io {
                what: "cannot read the data area".into(),
                source,
            })?;
        let zeros = chunk
            .rchunks(sector as usize)
            .take_while(|s| s.iter().all(|&b| b == 0))
            .count() as u64
            * sector;
        if zeros < n {
            return Ok(start + len - end + zeros);
        }
        end -= n;
    }
    Ok(len)
}

/// Carries out `plan`'s steps up to and including `last` (all of them:
/// `Step::Primary`). `progress(done, total)` follows the fill.
#[allow(clippy::too_many_arguments)]
pub fn apply(
    engine: &Engine,
    host: &File,
    creds: Credentials<'_>,
    plan: &Plan,
    fill: bool,
    opts: &SearchOptions,
    until: Step,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &AtomicBool,
) -> Result<()> {
    if let Some(tail) = plan.unfinished {
        return finish(engine, host, plan, tail, fill, opts, progress, cancel);
    }
    let with = SealWith {
        prf: plan.prf,
        chain: plan.chain,
        limits: &opts.limits,
        backend: opts.backend.as_deref(),
    };
    // Sealed before anything is written: a wrong limit or a cancel stops
    // the expansion while the volume is still as it was.
    let backup = seal(engine, &plan.header, &creds, &with, cancel)?;
    let primary = seal(engine, &plan.header, &creds, &with, cancel)?;
    for step in STEPS {
        match step {
            Step::Backup => write_backup_group(host, plan, &backup[..])?,
            Step::Fill => fill_new_space(engine, host, plan, fill, opts, progress, cancel)?,
            Step::Primary => write_durably(host, &primary[..], 0)?,
        }
        if step == until {
            break;
        }
    }
    Ok(())
}

/// Finishes an expansion whose headers both say the new size: the last
/// `tail` bytes of the data area, never written, are encrypted zeros (left
/// as they are when not `fill`).
#[allow(clippy::too_many_arguments)]
fn finish(
    engine: &Engine,
    host: &File,
    plan: &Plan,
    tail: u64,
    fill: bool,
    opts: &SearchOptions,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &AtomicBool,
) -> Result<()> {
    if fill {
        let h = &plan.header;
        let cipher =
            engine.volume_cipher(plan.chain, &h.master_keys[..], opts.backend.as_deref())?;
        let start = h.data_offset + h.data_size - tail;
        fill_encrypted(host, &cipher, start, tail, progress, cancel)?;
    }
    progress(tail, tail);
    Ok(())
}

/// The new end's header group, as a new volume's: random around the backup
/// header and in the hidden volume's backup slot. Written past a
/// container's end, it grows the container in the same durable write.
fn write_backup_group(host: &File, plan: &Plan, backup: &[u8]) -> Result<()> {
    let mut group = Zeroizing::new(vec![0u8; GROUP_BYTES as usize]);
    random(&mut group)?;
    group[..backup.len()].copy_from_slice(backup);
    write_durably(host, &group, plan.new_size - GROUP_BYTES)?;
    if plan.is_file {
        // Already this long; a container that was longer (an expansion
        // stopped once and run again) is cut back to the planned end.
        host.set_len(plan.new_size).map_err(|source| Error::Io {
            what: "cannot size the container".into(),
            source,
        })?;
        host.sync_all().map_err(|source| Error::Io {
            what: "cannot sync the container".into(),
            source,
        })?;
    }
    Ok(())
}

/// Encrypts zeros from the old data area's end to the new one's (the old
/// backup headers among them).
fn fill_new_space(
    engine: &Engine,
    host: &File,
    plan: &Plan,
    fill: bool,
    opts: &SearchOptions,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &AtomicBool,
) -> Result<()> {
    let h = &plan.header;
    let start = h.data_offset + plan.old_data_size;
    let len = h.data_offset + plan.new_data_size - start;
    if fill {
        let cipher =
            engine.volume_cipher(plan.chain, &h.master_keys[..], opts.backend.as_deref())?;
        fill_encrypted(host, &cipher, start, len, progress, cancel)?;
    } else {
        // The old backup headers become data: overwritten all the same.
        let cipher =
            engine.volume_cipher(plan.chain, &h.master_keys[..], opts.backend.as_deref())?;
        fill_encrypted(host, &cipher, start, len.min(GROUP_BYTES), progress, cancel)?;
        progress(len, len);
    }
    Ok(())
}
