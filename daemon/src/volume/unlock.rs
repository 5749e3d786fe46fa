//! Opening a volume by trial, as TrueCrypt does: every PRF of every format
//! against every header location, every cipher chain against every derived
//! key, in parallel on all cores, stopping at the first header that
//! decrypts and validates. Each trial runs under one of the engine's
//! permits (see [`crate::engine::trials`]), so searches of different
//! callers share the cores trial by trial.
//!
//! The primary headers (the volume's at 0, the hidden volume's at 64 KiB)
//! are tried first, every PRF of them before any backup header; a backup
//! header (or TrueCrypt 5's hidden header location) opens the volume only
//! when neither primary one does, and the result says so. Credentials
//! that open both the volume's and the hidden volume's header open the
//! volume, as TrueCrypt tries its header first.
//!
//! A trial is one part of one header key's derivation: a PBKDF2 output
//! block (3 of them for SHA-512, 6 for SHA-256) or a whole Argon2id
//! derivation. The parts are independent, so the cores share one key's
//! work, and the backup headers' trials follow the primary ones' without a
//! pause: no core waits while work is left.

use super::header::{ENCRYPTED_BYTES, HEADER_BYTES, Header, Location, SALT_BYTES};
use super::kdf::{self, Format, HEADER_KEY_BYTES, KdfLimits, Prf};
use super::keyfile;
use crate::engine::chain::{CHAINS, LEGACY_CHAINS};
use crate::engine::{Chain, Engine, legacy};
use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use zeroize::Zeroizing;

/// What the user typed.
#[derive(Clone, Copy)]
pub struct Credentials<'a> {
    pub password: &'a [u8],
    /// Keyfile contents in the order given (only the first MiB counts).
    pub keyfiles: &'a [&'a [u8]],
    /// VeraCrypt's PIM; 0 for the default.
    pub pim: u32,
}

impl std::fmt::Debug for Credentials<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("keyfiles", &self.keyfiles.len())
            .field("pim", &(self.pim != 0))
            .finish_non_exhaustive()
    }
}

/// Which volume the password should open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The outer (or only) volume or the hidden one, whichever the password opens.
    Any,
    /// Only the outer volume's header.
    Outer,
    /// Only the hidden volume's header.
    Hidden,
}

/// Narrowing the search (`--hash`, `--encryption`, TrueCrypt mode) and its bounds.
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    pub format: Option<Format>,
    pub prf: Option<Prf>,
    pub chain: Option<&'static Chain>,
    /// Force one backend for every layer.
    pub backend: Option<String>,
    pub limits: KdfLimits,
    /// Try the embedded backup headers when the primary ones fail.
    pub try_backup: bool,
    /// Try the embedded backup headers only (VeraCrypt's `headerbak`).
    pub backup_only: bool,
    /// A search for either volume looks for the hidden one only
    /// (cryptsetup's `--tcrypt-hidden`).
    pub hidden_only: bool,
    /// Whose search this is (a uid), for the fair share of the cores.
    pub caller: u32,
    /// The headers come from a header file, not from the host.
    pub detached: Option<DetachedHeader>,
    /// Told how the search goes (see [`Progress`]).
    pub progress: Option<ProgressSink>,
    /// Look for system encryption's header (at 31744 of the drive, with
    /// the boot loader's iteration counts) instead of a volume's.
    pub system: bool,
}

/// A header file apart from its volume (as VeraCrypt's header backups and
/// cryptsetup's `--header` have it): the volume's header at 0, a hidden
/// volume's at 64 KiB. Encrypted, but never printed either.
#[derive(Clone)]
pub struct DetachedHeader(pub std::sync::Arc<Zeroizing<Vec<u8>>>);

impl DetachedHeader {
    /// Where `location` is in the file: only the primary ones are there,
    /// and a system header is the bytes' first sector (read from byte
    /// 31744 of its drive).
    fn read(&self, location: Location) -> Option<[u8; HEADER_BYTES]> {
        let at = match location {
            Location::Primary | Location::System => 0,
            Location::HiddenPrimary => 65536,
            _ => return None,
        };
        let bytes = self.0.get(at..at + HEADER_BYTES)?;
        bytes.try_into().ok()
    }
}

impl std::fmt::Debug for DetachedHeader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DetachedHeader({} bytes)", self.0.len())
    }
}

/// How far a search is: which format and PRF it tries, on which headers,
/// and an estimate of what is left. Nothing in it is secret.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    pub format: Format,
    pub prf: Prf,
    /// Trying the backup headers: no primary header opened.
    pub backup: bool,
    /// The share of the search's work done, 0 to 1.
    pub done: f64,
    /// The time left, once a first trial has ended.
    pub left: Option<std::time::Duration>,
}

/// Where a search's [`Progress`] goes: called from the search's threads,
/// at each change of PRF or format and otherwise at most every
/// [`REPORT_EVERY`], so it should only hand the news on.
#[derive(Clone)]
pub struct ProgressSink(pub std::sync::Arc<dyn Fn(Progress) + Send + Sync>);

impl std::fmt::Debug for ProgressSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressSink")
    }
}

/// The least time between two reports of one search.
pub const REPORT_EVERY: Duration = Duration::from_millis(250);

impl SearchOptions {
    pub fn new() -> Self {
        SearchOptions {
            try_backup: true,
            ..Default::default()
        }
    }
}

/// A header that opened, and how.
#[derive(Debug)]
pub struct Unlocked {
    pub header: Header,
    pub location: Location,
    pub header_offset: u64,
    pub prf: Prf,
    pub chain: &'static Chain,
    pub salt: [u8; SALT_BYTES],
}

impl Unlocked {
    pub fn used_backup(&self) -> bool {
        self.location.is_backup()
    }
}

/// The size of a file or block device.
pub fn host_size(host: &File) -> Result<u64> {
    use std::io::{Seek, SeekFrom};
    let mut h = host;
    h.seek(SeekFrom::End(0)).map_err(|e| Error::Io {
        what: "cannot find the size of the volume".into(),
        source: e,
    })
}

pub use tcd_proto::contract::options::MIN_VOLUME_BYTES;

/// Opens the header `creds` unlock in `host`, trying every combination the
/// options allow. `cancel` stops the search when set (by a caller that went
/// away); the search only reads it.
pub fn unlock(
    engine: &Engine,
    host: &File,
    creds: Credentials<'_>,
    target: Target,
    opts: &SearchOptions,
    cancel: &AtomicBool,
) -> Result<Unlocked> {
    let size = host_size(host)?;
    // Nothing to search: said as such, not as a wrong password.
    if size < MIN_VOLUME_BYTES {
        return Err(Error::NotAVolume(format!(
            "the volume is {size} bytes: smaller than any TrueCrypt or VeraCrypt volume \
             ({MIN_VOLUME_BYTES} bytes)"
        )));
    }
    // The trials stop on `stop`: set when one of them finds the header, or
    // (through the watcher) when the caller cancels.
    let stop = AtomicBool::new(cancel.load(Ordering::Relaxed));
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                if cancel.load(Ordering::Relaxed) {
                    stop.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        });
        let r = unlock_phases(engine, host, size, creds, target, opts, &stop);
        done.store(true, Ordering::Relaxed);
        // The trials' threads and buffers are gone: their memory goes back
        // (the daemon's memory is locked, and would stay at its peak).
        crate::memory::give_back();
        if cancel.load(Ordering::Relaxed) {
            tracing::info!(caller = opts.caller, "header search cancelled");
        }
        match r {
            Err(Error::Cancelled) | Ok(None) if cancel.load(Ordering::Relaxed) => {
                Err(Error::Cancelled)
            }
            Ok(Some(found)) => Ok(found),
            Ok(None) => Err(Error::Cancelled),
            Err(e) => Err(e),
        }
    })
}

fn unlock_phases(
    engine: &Engine,
    host: &File,
    size: u64,
    creds: Credentials<'_>,
    target: Target,
    opts: &SearchOptions,
    stop: &AtomicBool,
) -> Result<Option<Unlocked>> {
    let target = match target {
        Target::Any if opts.hidden_only => Target::Hidden,
        t => t,
    };
    let primary: &[Location] = match target {
        Target::Any => &[Location::Primary, Location::HiddenPrimary],
        Target::Outer => &[Location::Primary],
        Target::Hidden => &[Location::HiddenPrimary],
    };
    let backup: &[Location] = match target {
        Target::Any => &[
            Location::Backup,
            Location::HiddenBackup,
            Location::HiddenLegacy,
        ],
        Target::Outer => &[Location::Backup],
        Target::Hidden => &[Location::HiddenBackup, Location::HiddenLegacy],
    };
    // Asked for one algorithm that no allowed backend serves: say so,
    // rather than search for nothing and report a wrong password.
    if let Some(chain) = opts.chain {
        for cipher in chain.ciphers {
            engine.pick(cipher, opts.backend.as_deref())?;
        }
    }
    // A header file holds no backups: its primary slots are all there is.
    let backups = opts.try_backup && opts.detached.is_none();
    let phases: &[&[Location]] = match (opts.backup_only, backups) {
        // System encryption has one header (its backup is on the Rescue Disk).
        _ if opts.system => &[&[Location::System]],
        (true, _) => &[backup],
        (false, true) => &[primary, backup],
        (false, false) => &[primary],
    };
    let mut untried = Vec::new();
    if let Some(mut found) = search(engine, host, size, creds, phases, opts, stop, &mut untried)? {
        found
            .header
            .settle_legacy_data_area(found.location.is_hidden(), size);
        return Ok(Some(found));
    }
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    untried.sort();
    untried.dedup();
    Err(Error::NotUnlocked { untried })
}

/// The password with keyfiles applied as `format` does it, or None when
/// this format cannot have been used with these credentials.
fn password_for(
    creds: &Credentials<'_>,
    format: Format,
    forced: bool,
) -> Result<Option<Zeroizing<Vec<u8>>>> {
    if format == Format::TrueCrypt && creds.pim != 0 {
        // TrueCrypt has no PIM.
        return if forced {
            Err(Error::InvalidPim(creds.pim))
        } else {
            Ok(None)
        };
    }
    match keyfile::apply(creds.password, creds.keyfiles, format) {
        Ok(p) => Ok(Some(p)),
        Err(Error::PasswordTooLong { .. }) if !forced => Ok(None),
        Err(e) => Err(e),
    }
}

/// Where a PRF comes in a search: TrueCrypt's (a few thousand iterations)
/// before VeraCrypt's, and VeraCrypt's in its own order (SHA-512, its
/// default, first) but with Argon2id, one part that cannot be shared, ahead
/// of the last two PRFs, whose many blocks then keep the other core busy
/// while it runs.
fn search_rank(format: Format, prf: Prf) -> (u8, u8) {
    let format_rank = match format {
        Format::TrueCrypt => 0,
        Format::VeraCrypt => 1,
    };
    let prf_rank = match prf {
        Prf::Sha512 => 0,
        Prf::Sha256 => 1,
        Prf::Whirlpool => 2,
        Prf::Blake2s => 3,
        Prf::Argon2id => 4,
        Prf::Streebog => 5,
        Prf::Ripemd160 => 6,
        Prf::Sha1 => 7,
    };
    (format_rank, prf_rank)
}

/// One header key to derive and try: a header location with one PRF.
struct Derivation {
    /// 0 for the primary headers, 1 for the backups.
    phase: usize,
    location: Location,
    offset: u64,
    format: Format,
    prf: Prf,
    /// The key as its parts arrive.
    key: std::sync::Mutex<Zeroizing<[u8; HEADER_KEY_BYTES]>>,
    /// Parts not derived yet; whoever derives the last one tries the key.
    left: AtomicUsize,
    /// A part failed (a bound, a cancel): the other parts are not derived.
    failed: AtomicBool,
}

/// Argon2id's one part at its default cost (about 3 s on one core), in
/// the units of [`iteration_cost`], for the estimate of the time left.
const ARGON2_WEIGHT: u64 = 80_000_000;

/// What one PBKDF2 iteration of one chain costs, in tenths of SHA-512's
/// (the ratios `kdf_speed` measures on AVX2 and AVX-512 machines alike,
/// rounded): weighing iterations alone, the fast PRFs tried first made
/// the early estimate of the time left far too short.
fn iteration_cost(prf: Prf) -> u64 {
    match prf {
        Prf::Sha512 => 10,
        Prf::Sha256 | Prf::Sha1 => 5,
        Prf::Blake2s => 3,
        Prf::Ripemd160 => 4,
        Prf::Whirlpool => 40,
        Prf::Streebog => 85,
        Prf::Argon2id => 1,
    }
}

/// The work of one part of `d`'s derivation, for the estimate: Argon2id's
/// scaled by its memory times passes against its default's.
fn weight(d: &Derivation, pim: u32) -> u64 {
    if let Some(n) = d.prf.iterations(d.format, pim) {
        return u64::from(n) * iteration_cost(d.prf);
    }
    let work = |c: super::kdf::Argon2Cost| u64::from(c.memory_kib) * u64::from(c.passes);
    match (d.prf.argon2_cost(pim), d.prf.argon2_cost(0)) {
        (Some(c), Some(default)) => ARGON2_WEIGHT * work(c) / work(default).max(1),
        _ => ARGON2_WEIGHT,
    }
}

/// Tells a search's sink how it goes: at a change of PRF, format or
/// headers, and otherwise at most every [`REPORT_EVERY`].
struct Reporter<'a> {
    sink: Option<&'a ProgressSink>,
    pim: u32,
    total: u64,
    done: AtomicU64,
    start: Instant,
    /// When the last report went, and what it said was being tried.
    last: Mutex<Option<(Instant, usize, Format, Prf)>>,
}

impl<'a> Reporter<'a> {
    fn new(sink: Option<&'a ProgressSink>, derivations: &[Derivation], pim: u32) -> Self {
        let total = derivations
            .iter()
            .map(|d| weight(d, pim) * d.prf.key_parts() as u64)
            .sum();
        Reporter {
            sink,
            pim,
            total,
            done: AtomicU64::new(0),
            start: Instant::now(),
            last: Mutex::new(None),
        }
    }

    /// A part of `d` is about to be derived
    /// (`finished`: `n` parts of it just were).
    fn at(&self, d: &Derivation, finished: Option<(&Derivation, usize)>) {
        let Some(sink) = self.sink else { return };
        if let Some((f, n)) = finished {
            self.done
                .fetch_add(weight(f, self.pim) * n as u64, Ordering::Relaxed);
        }
        let now = Instant::now();
        {
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            let changed = |&(_, phase, format, prf): &(Instant, usize, Format, Prf)| {
                (phase, format, prf) != (d.phase, d.format, d.prf)
            };
            let due = last
                .as_ref()
                .is_none_or(|l| changed(l) || now.duration_since(l.0) >= REPORT_EVERY);
            if !due {
                return;
            }
            *last = Some((now, d.phase, d.format, d.prf));
        }
        let done = self.done.load(Ordering::Relaxed).min(self.total);
        let share = done as f64 / self.total.max(1) as f64;
        // Checked: a share of nothing, or a time past what a Duration
        // holds, is no estimate (and no panic).
        let left = (done > 0)
            .then(|| {
                let ratio = (self.total - done) as f64 / done as f64;
                Duration::try_from_secs_f64(now.duration_since(self.start).as_secs_f64() * ratio)
                    .ok()
            })
            .flatten();
        (sink.0)(Progress {
            format: d.format,
            prf: d.prf,
            backup: d.phase > 0,
            done: share,
            left,
        });
    }
}

/// One trial: output blocks (derivation, part) of derivations of one PRF
/// and format, derived at once.
struct Task {
    chains: Vec<(usize, usize)>,
}

/// The trials of a search, in the derivations' order. The blocks of the
/// consecutive derivations of one phase, format and PRF are independent
/// chains of one password: they go into trials of as many as the PRF runs
/// at once, but no bigger than an even share of the threads, so every
/// core has one.
fn tasks_of(derivations: &[Derivation], threads: usize, level: kdf::Level) -> Vec<Task> {
    let mut tasks = Vec::new();
    let mut start = 0;
    while start < derivations.len() {
        let key = |d: &Derivation| (d.phase, d.format, d.prf);
        let this = key(&derivations[start]);
        let end = derivations[start..]
            .iter()
            .position(|d| key(d) != this)
            .map_or(derivations.len(), |n| start + n);
        let chains: Vec<(usize, usize)> = (start..end)
            .flat_map(|i| (0..this.2.key_parts()).map(move |part| (i, part)))
            .collect();
        let size = this
            .2
            .chains_at_once(level)
            .min(chains.len().div_ceil(threads.max(1)))
            .max(1);
        tasks.extend(chains.chunks(size).map(|c| Task { chains: c.to_vec() }));
        start = end;
    }
    tasks
}

/// Puts block `part` of `d`'s key (in its bytes of `out`) in place; the
/// whole key if that was the last block missing.
fn deposit(
    d: &Derivation,
    part: usize,
    out: &[u8; HEADER_KEY_BYTES],
) -> Option<Zeroizing<[u8; HEADER_KEY_BYTES]>> {
    let len = d.prf.block_bytes();
    let bytes = part * len..((part + 1) * len).min(HEADER_KEY_BYTES);
    let mut key = d.key.lock().unwrap_or_else(|p| p.into_inner());
    key[bytes.clone()].copy_from_slice(&out[bytes]);
    if d.left.fetch_sub(1, Ordering::AcqRel) != 1 {
        return None;
    }
    let mut whole = Zeroizing::new([0u8; HEADER_KEY_BYTES]);
    whole.copy_from_slice(&key[..]);
    key.fill(0);
    Some(whole)
}

#[allow(clippy::too_many_arguments)]
fn search(
    engine: &Engine,
    host: &File,
    size: u64,
    creds: Credentials<'_>,
    phases: &[&[Location]],
    opts: &SearchOptions,
    cancel: &AtomicBool,
    untried: &mut Vec<String>,
) -> Result<Option<Unlocked>> {
    let formats: &[Format] = match opts.format {
        Some(Format::TrueCrypt) => &[Format::TrueCrypt],
        Some(Format::VeraCrypt) => &[Format::VeraCrypt],
        None => &[Format::VeraCrypt, Format::TrueCrypt],
    };
    let mut passwords = Vec::new();
    for &format in formats {
        if let Some(p) = password_for(&creds, format, opts.format.is_some())? {
            passwords.push((format, p));
        }
    }
    if passwords.is_empty() {
        // Too long for every format: say so rather than "wrong password".
        keyfile::check_password_len(creds.password, Format::VeraCrypt)?;
    }
    // The headers of every phase. A primary header that cannot be read
    // ends the search; a backup header that cannot be read is said only
    // if no primary header opens.
    let mut headers = Vec::new();
    let mut backup_error = None;
    for (phase, locations) in phases.iter().enumerate() {
        for &location in *locations {
            if let Some(file) = &opts.detached {
                if let Some(h) = file.read(location) {
                    headers.push((phase, location, 0, h));
                }
                continue;
            }
            let Some(offset) = location.offset(size) else {
                continue;
            };
            let mut h = [0u8; HEADER_BYTES];
            if let Err(e) = host.read_exact_at(&mut h, offset) {
                let e = Error::Io {
                    what: format!("cannot read the {}", location.describe()),
                    source: e,
                };
                if phase == 0 {
                    return Err(e);
                }
                backup_error.get_or_insert(e);
                continue;
            }
            headers.push((phase, location, offset, h));
        }
    }
    let mut derivations = Vec::new();
    for (format, _) in &passwords {
        for &prf in Prf::all(*format) {
            if opts.prf.is_some_and(|p| p != prf) || (opts.system && prf == Prf::Argon2id) {
                continue;
            }
            for (phase, location, offset, _) in &headers {
                derivations.push(Derivation {
                    phase: *phase,
                    location: *location,
                    offset: *offset,
                    format: *format,
                    prf,
                    key: std::sync::Mutex::new(Zeroizing::new([0u8; HEADER_KEY_BYTES])),
                    left: AtomicUsize::new(prf.key_parts()),
                    failed: AtomicBool::new(false),
                });
            }
        }
    }
    // Stable: the locations of one PRF stay in their order.
    derivations.sort_by_key(|d| (d.phase, search_rank(d.format, d.prf)));
    if derivations.is_empty() {
        // Headers to try but none in a format with the PRF asked for.
        if let Some(prf) = opts.prf
            && !headers.is_empty()
            && !passwords.is_empty()
        {
            return Err(Error::PrfNotInFormat {
                prf: prf.name(),
                format: "the formats tried",
            });
        }
        return match backup_error {
            Some(e) => Err(e),
            None => Ok(None),
        };
    }
    let level = kdf::simd_level();
    let tasks = tasks_of(&derivations, engine.threads(), level);
    let chains: Vec<&'static Chain> = match opts.chain {
        Some(c) => vec![c],
        None => CHAINS.iter().collect(),
    };
    let skipped = std::sync::Mutex::new(Vec::new());
    let skip = |what: String| {
        if let Ok(mut s) = skipped.lock() {
            s.push(what);
        }
    };
    // Tries the chains on a whole key.
    let try_key = |d: &Derivation, key: &[u8; HEADER_KEY_BYTES]| -> Option<Unlocked> {
        let (_, _, _, raw) = headers.iter().find(|(_, l, _, _)| *l == d.location)?;
        let found = |header: Header, chain: &'static Chain| {
            let mut salt = [0u8; SALT_BYTES];
            salt.copy_from_slice(&raw[..SALT_BYTES]);
            Unlocked {
                header,
                location: d.location,
                header_offset: d.offset,
                prf: d.prf,
                chain,
                salt,
            }
        };
        for &chain in &chains {
            if (d.format == Format::TrueCrypt && !chain.truecrypt) || d.prf.legacy_only() {
                continue;
            }
            let hc = match engine.volume_cipher_units(
                chain,
                &key[..],
                opts.backend.as_deref(),
                ENCRYPTED_BYTES as u32,
            ) {
                Ok(c) => c,
                Err(_) => {
                    skip(match opts.backend.as_deref() {
                        Some(b) => format!("{} (not in backend {b})", chain.name),
                        None => format!("{} (no allowed backend)", chain.name),
                    });
                    continue;
                }
            };
            let mut plain = Zeroizing::new([0u8; ENCRYPTED_BYTES]);
            plain.copy_from_slice(&raw[SALT_BYTES..]);
            if hc.decrypt(&mut plain[..], 0).is_err() {
                continue;
            }
            if let Ok(header) = Header::parse(&plain, d.format) {
                return Some(found(header, chain));
            }
        }
        if d.format == Format::TrueCrypt && d.prf.in_legacy_headers() && !opts.system {
            let (chain, header) = legacy_header(engine, key, raw, opts, &skip)?;
            return Some(found(header, chain));
        }
        None
    };
    // Derives the task's blocks; the one who derives a key's last block
    // tries it.
    let run = |task: &Task| -> Option<Unlocked> {
        let live: Vec<(&Derivation, usize)> = task
            .chains
            .iter()
            .filter_map(|&(i, part)| Some((derivations.get(i)?, part)))
            .filter(|(d, _)| !d.failed.load(Ordering::Relaxed))
            .collect();
        let &(first, _) = live.first()?;
        if cancel.load(Ordering::Relaxed) {
            return None;
        }
        let password = &passwords.iter().find(|(f, _)| *f == first.format)?.1;
        let salts: Vec<[u8; SALT_BYTES]> = live
            .iter()
            .map(|(d, _)| {
                let mut salt = [0u8; SALT_BYTES];
                if let Some((_, _, _, raw)) = headers.iter().find(|(_, l, _, _)| *l == d.location) {
                    salt.copy_from_slice(&raw[..SALT_BYTES]);
                }
                salt
            })
            .collect();
        let mut outs: Vec<Zeroizing<[u8; HEADER_KEY_BYTES]>> = live
            .iter()
            .map(|_| Zeroizing::new([0u8; HEADER_KEY_BYTES]))
            .collect();
        let mut parts: Vec<kdf::KeyPart<'_>> = live
            .iter()
            .zip(&salts)
            .zip(outs.iter_mut())
            .map(|((&(_, part), salt), out)| kdf::KeyPart { salt, part, out })
            .collect();
        let scope = if opts.system {
            kdf::Scope::System
        } else {
            kdf::Scope::Volume
        };
        let derived = kdf::derive_header_key_chains(
            (first.prf, first.format, creds.pim, scope),
            password,
            &opts.limits,
            cancel,
            level,
            &mut parts,
        );
        drop(parts);
        if let Err(e) = derived {
            for (d, _) in &live {
                if !d.failed.swap(true, Ordering::Relaxed) && !matches!(e, Error::Cancelled) {
                    skip(format!("{} ({e})", d.prf.name()));
                }
            }
            return None;
        }
        live.iter()
            .zip(&outs)
            .find_map(|(&(d, part), out)| deposit(d, part, out).and_then(|key| try_key(d, &key)))
    };
    // One thread per core takes the next task in order, each under a
    // permit; the permits are shared with every other search. The
    // volume's primary header that opens stops the search at once; any
    // other header that opens stops the taking of tasks, and wins only if
    // the tasks still running (all of them were taken before it) open no
    // header before it in TrueCrypt's order: the volume's, then the hidden
    // volume's, primary headers before backups. So credentials that open
    // both the outer and the hidden volume open the outer one, every time.
    let next = AtomicUsize::new(0);
    let no_more = AtomicBool::new(false);
    let reporter = Reporter::new(opts.progress.as_ref(), &derivations, creds.pim);
    let found: std::sync::Mutex<Option<((usize, bool), Unlocked)>> = std::sync::Mutex::new(None);
    let workers = engine.threads().clamp(1, tasks.len());
    let started = std::thread::scope(|s| {
        let mut started = 0;
        for i in 0..workers {
            let worker = || {
                let mut finished = None;
                while !cancel.load(Ordering::Relaxed) && !no_more.load(Ordering::Relaxed) {
                    let Some(_permit) = engine.trials().acquire(opts.caller, cancel) else {
                        break;
                    };
                    let Some(task) = tasks.get(next.fetch_add(1, Ordering::Relaxed)) else {
                        break;
                    };
                    let lead = task.chains.first().and_then(|&(i, _)| derivations.get(i));
                    if let Some(d) = lead {
                        reporter.at(d, finished.take());
                        finished = Some((d, task.chains.len()));
                    }
                    let Some(u) = run(task) else {
                        continue;
                    };
                    let rank = (lead.map_or(0, |d| d.phase), u.location.is_hidden());
                    if rank == (0, false) {
                        cancel.store(true, Ordering::Relaxed);
                    } else {
                        no_more.store(true, Ordering::Relaxed);
                    }
                    let mut f = found.lock().unwrap_or_else(|p| p.into_inner());
                    if f.as_ref().is_none_or(|(old, _)| *old > rank) {
                        *f = Some((rank, u));
                    }
                    break;
                }
            };
            let spawned = std::thread::Builder::new()
                .name(format!("tcd-trial-{i}"))
                .spawn_scoped(s, worker);
            if spawned.is_ok() {
                started += 1;
            }
        }
        started
    });
    if started == 0 {
        return Err(Error::ThreadPool(
            "cannot start a header-search thread".into(),
        ));
    }
    if let Ok(s) = skipped.into_inner() {
        untried.extend(s);
    }
    let found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    match (found, backup_error) {
        (Some((_, u)), _) => Ok(Some(u)),
        (None, Some(e)) if !cancel.load(Ordering::Relaxed) => Err(e),
        (None, _) => Ok(None),
    }
}

/// Tries TrueCrypt 4's chains (LRW and CBC, header versions 1 and 2) on
/// a derived header key: those named like the chain asked for, or all.
fn legacy_header(
    engine: &Engine,
    key: &[u8; HEADER_KEY_BYTES],
    raw: &[u8; HEADER_BYTES],
    opts: &SearchOptions,
    skip: &dyn Fn(String),
) -> Option<(&'static Chain, Header)> {
    let set = engine.backend_set();
    let asked = |c: &&Chain| opts.chain.is_none_or(|o| o.name == c.name);
    let mut unserved = false;
    for chain in LEGACY_CHAINS.iter().filter(asked) {
        let Ok(cipher) = legacy::key(&set, chain, &key[..], opts.backend.as_deref()) else {
            unserved = true;
            continue;
        };
        let mut plain = Zeroizing::new([0u8; ENCRYPTED_BYTES]);
        plain.copy_from_slice(&raw[SALT_BYTES..]);
        if cipher.decrypt_header(&mut plain[..]).is_err() {
            continue;
        }
        if let Ok(header) = Header::parse_legacy(&plain) {
            return Some((chain, header));
        }
    }
    if unserved {
        skip("TrueCrypt 4's modes (no allowed backend serves raw block ciphers)".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volume::kdf::Level;

    fn derivation(phase: usize, location: Location, format: Format, prf: Prf) -> Derivation {
        Derivation {
            phase,
            location,
            offset: 0,
            format,
            prf,
            key: std::sync::Mutex::new(Zeroizing::new([0u8; HEADER_KEY_BYTES])),
            left: AtomicUsize::new(prf.key_parts()),
            failed: AtomicBool::new(false),
        }
    }

    #[test]
    fn trials_group_the_chains_of_one_prf_and_phase_with_one_share_per_core() {
        let vc = Format::VeraCrypt;
        let derivations = [
            derivation(0, Location::Primary, vc, Prf::Sha512),
            derivation(0, Location::HiddenPrimary, vc, Prf::Sha512),
            derivation(0, Location::Primary, vc, Prf::Whirlpool),
            derivation(1, Location::Backup, vc, Prf::Sha512),
        ];
        let shape = |threads, level| -> Vec<Vec<(usize, usize)>> {
            tasks_of(&derivations, threads, level)
                .into_iter()
                .map(|t| t.chains)
                .collect()
        };
        // Two cores, four lanes: the six primary SHA-512 blocks in two
        // trials of three (one per core), Whirlpool one block a trial, the
        // backup's three blocks apart from the primary ones.
        assert_eq!(
            shape(2, Level::Avx2),
            vec![
                vec![(0, 0), (0, 1), (0, 2)],
                vec![(1, 0), (1, 1), (1, 2)],
                vec![(2, 0)],
                vec![(2, 1)],
                vec![(2, 2)],
                vec![(3, 0), (3, 1)],
                vec![(3, 2)],
            ]
        );
        // One core: as many as the lanes hold.
        assert_eq!(
            shape(1, Level::Sse2)[..3],
            [
                vec![(0, 0), (0, 1)],
                vec![(0, 2), (1, 0)],
                vec![(1, 1), (1, 2)]
            ]
        );
        assert_eq!(
            shape(1, Level::Avx2)[0],
            vec![(0, 0), (0, 1), (0, 2), (1, 0)]
        );
    }
}
