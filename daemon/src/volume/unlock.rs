//! Opening a volume by trial, as TrueCrypt does: every PRF of every format
//! against every header location, every cipher chain against every derived
//! key, in parallel on all cores, stopping at the first header that
//! decrypts and validates. Each trial runs under one of the engine's
//! permits (see [`crate::engine::trials`]), so searches of different
//! callers share the cores trial by trial.
//!
//! The primary headers (the volume's at 0, the hidden volume's at 64 KiB)
//! are tried first; only when neither opens are the embedded backups (and
//! TrueCrypt 5's hidden header location) tried, and the result says so.

use super::header::{ENCRYPTED_BYTES, HEADER_BYTES, Header, Location, SALT_BYTES};
use super::kdf::{self, Format, HEADER_KEY_BYTES, KdfLimits, Prf};
use super::keyfile;
use crate::engine::{Chain, Engine, chain::CHAINS};
use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
    /// Whose search this is (a uid), for the fair share of the cores.
    pub caller: u32,
}

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

struct Job {
    location: Location,
    offset: u64,
    format: Format,
    prf: Prf,
}

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
    let mut untried = Vec::new();
    let phases: &[&[Location]] = if opts.try_backup {
        &[primary, backup]
    } else {
        &[primary]
    };
    for phase in phases {
        if let Some(mut found) = search(engine, host, size, creds, phase, opts, stop, &mut untried)?
        {
            found
                .header
                .settle_legacy_data_area(found.location.is_hidden(), size);
            return Ok(Some(found));
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
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

/// Roughly how long deriving one header key takes: iterations times the
/// time per iteration for the whole 192-byte key (blocks of output times
/// the hash's speed, as `examples/kdf_speed` measures on x86_64).
fn trial_cost(prf: Prf, format: Format, pim: u32) -> u64 {
    let per_iteration: u64 = match prf {
        Prf::Sha256 => 9,
        Prf::Sha512 => 19,
        Prf::Blake2s => 38,
        Prf::Ripemd160 => 48,
        Prf::Whirlpool => 80,
        Prf::Streebog => 196,
        // Memory-hard: last.
        Prf::Argon2id => return u64::MAX,
    };
    prf.iterations(format, pim)
        .map_or(u64::MAX, |n| u64::from(n) * per_iteration)
}

#[allow(clippy::too_many_arguments)]
fn search(
    engine: &Engine,
    host: &File,
    size: u64,
    creds: Credentials<'_>,
    locations: &[Location],
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
    let mut headers = Vec::new();
    for &location in locations {
        let Some(offset) = location.offset(size) else {
            continue;
        };
        let mut h = [0u8; HEADER_BYTES];
        host.read_exact_at(&mut h, offset).map_err(|e| Error::Io {
            what: format!("cannot read the {}", location.describe()),
            source: e,
        })?;
        headers.push((location, offset, h));
    }
    let mut jobs = Vec::new();
    for (format, _) in &passwords {
        for &prf in Prf::all(*format) {
            if opts.prf.is_some_and(|p| p != prf) {
                continue;
            }
            for (location, offset, _) in &headers {
                jobs.push(Job {
                    location: *location,
                    offset: *offset,
                    format: *format,
                    prf,
                });
            }
        }
    }
    // Cheapest trials first, so a TrueCrypt volume (a few thousand
    // iterations) opens at once instead of after VeraCrypt's long ones.
    jobs.sort_by_key(|j| trial_cost(j.prf, j.format, creds.pim));
    if jobs.is_empty() {
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
        return Ok(None);
    }
    let chains: Vec<&'static Chain> = match opts.chain {
        Some(c) => vec![c],
        None => CHAINS.iter().collect(),
    };
    let skipped = std::sync::Mutex::new(Vec::new());
    let run = |job: &Job| -> Option<Unlocked> {
        if cancel.load(Ordering::Relaxed) {
            return None;
        }
        let password = &passwords.iter().find(|(f, _)| *f == job.format)?.1;
        let (_, _, raw) = headers.iter().find(|(l, _, _)| *l == job.location)?;
        let mut salt = [0u8; SALT_BYTES];
        salt.copy_from_slice(&raw[..SALT_BYTES]);
        let mut key = Zeroizing::new([0u8; HEADER_KEY_BYTES]);
        let derived = kdf::derive_header_key(
            job.prf,
            job.format,
            creds.pim,
            password,
            &salt,
            &opts.limits,
            cancel,
            &mut key,
        );
        match derived {
            Ok(()) => {}
            Err(Error::Cancelled) => return None,
            Err(e) => {
                if let Ok(mut s) = skipped.lock() {
                    s.push(format!("{} ({e})", job.prf.name()));
                }
                return None;
            }
        }
        for &chain in &chains {
            if job.format == Format::TrueCrypt && !chain.truecrypt {
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
                    if let Ok(mut s) = skipped.lock() {
                        s.push(format!("{} (no allowed backend)", chain.name));
                    }
                    continue;
                }
            };
            let mut plain = Zeroizing::new([0u8; ENCRYPTED_BYTES]);
            plain.copy_from_slice(&raw[SALT_BYTES..]);
            if hc.decrypt(&mut plain[..], 0).is_err() {
                continue;
            }
            if let Ok(header) = Header::parse(&plain, job.format) {
                cancel.store(true, Ordering::Relaxed);
                return Some(Unlocked {
                    header,
                    location: job.location,
                    header_offset: job.offset,
                    prf: job.prf,
                    chain,
                    salt,
                });
            }
        }
        None
    };
    // One thread per core takes the next trial, cheapest first, each
    // under a permit; the permits are shared with every other search.
    let next = AtomicUsize::new(0);
    let found = std::sync::Mutex::new(None);
    let workers = engine.threads().clamp(1, jobs.len());
    let started = std::thread::scope(|s| {
        let mut started = 0;
        for i in 0..workers {
            let worker = || {
                while !cancel.load(Ordering::Relaxed) {
                    let Some(_permit) = engine.trials().acquire(opts.caller, cancel) else {
                        break;
                    };
                    let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) else {
                        break;
                    };
                    if let Some(u) = run(job) {
                        if let Ok(mut f) = found.lock() {
                            *f = Some(u);
                        }
                        break;
                    }
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
    Ok(found.into_inner().unwrap_or_else(|p| p.into_inner()))
}
