//! TrueCrypt's Tools > Benchmark, run inside the daemon on the engine a
//! mounted volume would use: every encryption algorithm on each choice of
//! backends that may serve it, over one buffer on all cores, and the header
//! key derivation of each PRF.

use crate::engine::Engine;
use crate::engine::chain::{CHAINS, Chain};
use crate::error::{Error, Result};
use crate::volume::kdf::{self, Format, KdfLimits, Prf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;
use zeroize::Zeroizing;

/// The PIM the PBKDF2 timing runs at (16,000 iterations), scaled to the
/// default iteration counts for the report.
const TIMING_PIM: u32 = 1;

#[derive(Debug, Clone, PartialEq)]
pub struct CipherRow {
    pub encryption: &'static str,
    /// The backends that served it, "+"-joined in order of first use.
    pub backends: String,
    pub encrypt_mbs: f64,
    pub decrypt_mbs: f64,
    pub mean_mbs: f64,
    /// AES ran on processor instructions in this row.
    pub hardware_aes: bool,
    /// The code path each cipher ran (`-` where its backend does not say),
    /// "+"-joined in the order the encryption's name lists the ciphers (as
    /// `backends`; AES-Twofish's AES first).
    pub simd: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KdfRow {
    pub prf: &'static str,
    /// Iterations of a VeraCrypt volume at the default PIM (Argon2id:
    /// passes over its 416 MiB).
    pub iterations: u32,
    /// PBKDF2 iterations (of the whole 192-byte header key) per second, on
    /// one core (Argon2id: passes).
    pub per_second: f64,
    /// Seconds one header trial takes at the default PIM, on one core.
    pub trial_seconds: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub threads: u32,
    pub buffer_bytes: u64,
    /// Passes over the buffer in each direction.
    pub passes: u32,
    pub ciphers: Vec<CipherRow>,
    pub kdfs: Vec<KdfRow>,
}

/// One row to measure: an algorithm, and the backend forced for it (None:
/// each cipher from the preferred backend).
pub(crate) fn plan(engine: &Engine) -> Vec<(&'static Chain, Option<String>)> {
    let backends = engine.backends();
    let mut rows = Vec::new();
    for chain in CHAINS {
        let mut seen: Vec<String> = Vec::new();
        let mut choices: Vec<Option<String>> = vec![None];
        for b in &backends {
            let serves_all = chain.ciphers.iter().all(|c| {
                b.info
                    .ciphers
                    .iter()
                    .any(|i| i.name.eq_ignore_ascii_case(c))
            });
            if b.info.available && serves_all {
                choices.push(Some(b.info.name.clone()));
            }
        }
        for forced in choices {
            let Ok(label) = label(engine, chain, forced.as_deref()) else {
                continue;
            };
            if !seen.contains(&label) {
                seen.push(label);
                rows.push((chain, forced));
            }
        }
    }
    rows
}

pub(crate) fn label(
    engine: &Engine,
    chain: &'static Chain,
    forced: Option<&str>,
) -> Result<String> {
    let mut names: Vec<String> = Vec::new();
    // In the name's order, as a volume's backends are said.
    for c in chain.ciphers.iter().rev() {
        let name = engine.pick(c, forced)?.info.name.clone();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names.join("+"))
}

/// Argon2id's row: its passes at the default PIM, and the time of one
/// header trial there, scaled from a trial at PIM 1 (64 MiB, 3 passes) by
/// memory times passes, which its time follows; the default's 416 MiB
/// would take that much more memory from everything else running.
fn argon2id_row(salt: &[u8; kdf::SALT_BYTES], cancel: &AtomicBool) -> Result<KdfRow> {
    let cost = |pim| Prf::Argon2id.argon2_cost(pim).ok_or(Error::InvalidPim(pim));
    let (timed, default) = (cost(1)?, cost(0)?);
    let mut out = Zeroizing::new([0u8; kdf::HEADER_KEY_BYTES]);
    let t = Instant::now();
    kdf::derive_header_key(
        Prf::Argon2id,
        Format::VeraCrypt,
        1,
        b"benchmark",
        salt,
        &KdfLimits::default(),
        cancel,
        &mut out,
    )?;
    let work = |c: kdf::Argon2Cost| f64::from(c.memory_kib) * f64::from(c.passes);
    let trial_seconds = t.elapsed().as_secs_f64().max(1e-9) * work(default) / work(timed);
    Ok(KdfRow {
        prf: Prf::Argon2id.name(),
        iterations: default.passes,
        per_second: f64::from(default.passes) / trial_seconds,
        trial_seconds,
    })
}

/// How many steps [`run`] reports progress over.
pub fn steps(engine: &Engine) -> u32 {
    let prfs = Prf::all(Format::VeraCrypt).len();
    u32::try_from(plan(engine).len() + prfs).unwrap_or(u32::MAX)
}

/// Bytes encrypted between two looks at the cancel flag: a fraction of a
/// second even for a three-cipher cascade in software on one core.
const PIECE_BYTES: usize = 4 << 20;

/// Runs `f` over `buf` in pieces of whole 512-byte units (with the first
/// unit's number), stopping when `cancel` is set, so a benchmark whose
/// client left stops at once rather than after a pass over the buffer.
fn in_pieces(
    buf: &mut [u8],
    cancel: &AtomicBool,
    mut f: impl FnMut(&mut [u8], u64) -> Result<()>,
) -> Result<()> {
    for (i, piece) in buf.chunks_mut(PIECE_BYTES).enumerate() {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        f(piece, (i * (PIECE_BYTES / 512)) as u64)?;
    }
    Ok(())
}

/// The code path of each cipher of `chain` in `cipher`, "+"-joined, in
/// the order its name lists them.
pub(crate) fn paths(chain: &Chain, cipher: &crate::engine::VolumeCipher) -> String {
    // In the name's order, as the backends are said.
    chain
        .ciphers
        .iter()
        .rev()
        .map(|c| cipher.path_of(c).unwrap_or_else(|| "-".into()))
        .collect::<Vec<_>>()
        .join("+")
}

/// Runs the benchmark over a buffer of `buffer_bytes` (rounded down to
/// whole 512-byte units, at least one), `passes` times in each direction,
/// calling `progress(done, total)` after each step.
pub fn run(
    engine: &Engine,
    buffer_bytes: u64,
    passes: u32,
    cancel: &AtomicBool,
    mut progress: impl FnMut(u32, u32),
) -> Result<Report> {
    let len = usize::try_from(buffer_bytes)
        .map_err(|_| Error::InvalidArgument("buffer too large".into()))?
        / 512
        * 512;
    let len = len.max(512);
    let mut buf = Vec::new();
    buf.try_reserve_exact(len)
        .map_err(|_| Error::InvalidArgument(format!("cannot allocate {len} bytes")))?;
    buf.resize(len, 0u8);
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (i % 251) as u8;
    }
    let rows = plan(engine);
    let total = steps(engine);
    let mut done = 0;
    let mut ciphers = Vec::new();
    for (chain, forced) in rows {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let mut key = Zeroizing::new(vec![0u8; chain.key_bytes()]);
        getrandom::fill(&mut key[..]).map_err(|e| Error::Random(e.to_string()))?;
        let cipher = engine.volume_cipher(chain, &key, forced.as_deref())?;
        let passes = passes.max(1);
        let t = Instant::now();
        for _ in 0..passes {
            in_pieces(&mut buf, cancel, |piece, unit| cipher.encrypt(piece, unit))?;
        }
        let enc = t.elapsed().as_secs_f64();
        let t = Instant::now();
        for _ in 0..passes {
            in_pieces(&mut buf, cancel, |piece, unit| cipher.decrypt(piece, unit))?;
        }
        let dec = t.elapsed().as_secs_f64();
        let mb = len as f64 * f64::from(passes) / 1e6;
        let rate = |s: f64| if s > 0.0 { mb / s } else { f64::INFINITY };
        let layers = cipher.backends();
        // Both in the name's order.
        let hardware_aes = chain.ciphers.iter().rev().zip(&layers).any(|(c, b)| {
            *c == "AES"
                && engine
                    .backends()
                    .iter()
                    .any(|l| l.info.name == *b && l.info.uses_cpu_crypto)
        });
        ciphers.push(CipherRow {
            encryption: chain.name,
            backends: label(engine, chain, forced.as_deref())?,
            encrypt_mbs: rate(enc),
            decrypt_mbs: rate(dec),
            mean_mbs: rate((enc + dec) / 2.0),
            hardware_aes,
            simd: paths(chain, &cipher),
        });
        done += 1;
        progress(done, total);
    }
    let mut kdfs = Vec::new();
    let salt = [0x5au8; kdf::SALT_BYTES];
    let timed = Prf::Sha512
        .iterations(Format::VeraCrypt, TIMING_PIM)
        .unwrap_or(16_000);
    for &prf in Prf::all(Format::VeraCrypt) {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        if prf == Prf::Argon2id {
            kdfs.push(argon2id_row(&salt, cancel)?);
            done += 1;
            progress(done, total);
            continue;
        }
        let Some(iterations) = prf.iterations(Format::VeraCrypt, 0) else {
            continue;
        };
        let mut out = Zeroizing::new([0u8; kdf::HEADER_KEY_BYTES]);
        let t = Instant::now();
        kdf::derive_header_key(
            prf,
            Format::VeraCrypt,
            TIMING_PIM,
            b"benchmark",
            &salt,
            &KdfLimits::default(),
            cancel,
            &mut out,
        )?;
        let secs = t.elapsed().as_secs_f64().max(1e-9);
        let per_second = f64::from(timed) / secs;
        kdfs.push(KdfRow {
            prf: prf.name(),
            iterations,
            per_second,
            trial_seconds: f64::from(iterations) / per_second,
        });
        done += 1;
        progress(done, total);
    }
    Ok(Report {
        threads: u32::try_from(engine.threads()).unwrap_or(u32::MAX),
        buffer_bytes: len as u64,
        passes: passes.max(1),
        ciphers,
        kdfs,
    })
}
