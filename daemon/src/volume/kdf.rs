//! Header key derivation: PBKDF2-HMAC with each PRF of TrueCrypt 7 and
//! VeraCrypt, the PIM, and VeraCrypt's Argon2id.
//!
//! PBKDF2 (PKCS #5 v2.0) is written here over the `hmac` crate rather than
//! taken from the `pbkdf2` crate so that the iteration loop can look at a
//! cancel flag: a trial search runs several derivations at once and stops
//! the others as soon as one of them opens the header.
//!
//! The keyed HMAC state (the hash state after the ipad and opad blocks) is
//! computed once per derivation and cloned for every iteration, so an
//! iteration costs exactly two compression-function calls for the
//! Merkle–Damgård hashes (SHA-2, Whirlpool, RIPEMD-160) — what the
//! `pbkdf2` crate and VeraCrypt do too. SHA-512 and SHA-256 run on the bare
//! compression functions ([`sha2_chains`]), Streebog and Whirlpool on
//! their own table-driven compressions ([`streebog_tables`],
//! [`whirlpool_tables`]), each checked against the generic code over
//! random inputs. SHA-512, BLAKE2s and RIPEMD-160 also run several
//! independent chains at once in SIMD lanes ([`sha512_lanes`],
//! [`blake2s_lanes`], [`ripemd160_lanes`]).
//!
//! The output blocks of one derivation are independent:
//! [`derive_header_key_parts`] derives some of them, so that a search
//! spreads one key over the cores.

mod blake2s_lanes;
mod ripemd160_lanes;
mod sha2_chains;
mod sha512_lanes;
mod streebog_tables;
mod whirlpool_tables;

pub use sha512_lanes::Level;

use crate::error::{Error, Result};
use hmac::digest::{FixedOutput, KeyInit, Output, OutputSizeUser, Update};
use std::sync::atomic::{AtomicBool, Ordering};
use zeroize::Zeroize;

/// Bytes of header key derived: enough for a three-cipher cascade.
pub const HEADER_KEY_BYTES: usize = 192;

/// The header salt's length in bytes.
pub const SALT_BYTES: usize = 64;

/// The largest PIM VeraCrypt accepts for a non-system volume (its
/// `MAX_PIM_VALUE`): 15000 + 1000 * PIM still fits in a signed 32-bit int.
pub const MAX_PIM: u32 = 2_147_468;

/// How many PBKDF2 iterations run between two looks at the cancel flag.
/// SHA-512 runs about 2 million iterations a second on one core, Whirlpool
/// about 0.5 million, so this is at most a few milliseconds of work.
const CANCEL_CHECK_EVERY: u32 = 4096;

/// The two volume formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    TrueCrypt,
    VeraCrypt,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::TrueCrypt => "TrueCrypt",
            Format::VeraCrypt => "VeraCrypt",
        }
    }
}

/// Pseudo-random functions (and Argon2id) of header key derivation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Prf {
    Sha512,
    Whirlpool,
    Sha256,
    Blake2s,
    Streebog,
    Ripemd160,
    /// TrueCrypt 4's, for its legacy headers only (2000 iterations).
    Sha1,
    Argon2id,
}

/// Bounds on what one derivation may use. The default is VeraCrypt's own
/// range (what an administrator may ask for); the policy sets tighter ones
/// for everyone else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KdfLimits {
    /// Argon2id memory bound in KiB; a volume needing more is refused.
    pub argon2_max_memory_kib: u32,
    /// The largest PIM for the PBKDF2 PRFs.
    pub max_pim: u32,
    /// The largest PIM for Argon2id (its passes grow with it).
    pub argon2_max_pim: u32,
}

impl Default for KdfLimits {
    fn default() -> Self {
        KdfLimits {
            argon2_max_memory_kib: 1024 * 1024,
            max_pim: MAX_PIM,
            argon2_max_pim: MAX_PIM,
        }
    }
}

impl KdfLimits {
    /// Refuses a PBKDF2 PIM above the bound.
    pub fn pbkdf2_allowed(&self, pim: u32) -> Result<()> {
        // Past the format's own range no policy is involved.
        if pim > MAX_PIM {
            return Err(Error::InvalidPim(pim));
        }
        if pim > self.max_pim {
            return Err(Error::OverLimit(format!(
                "PIM {pim} is above the {} allowed for PBKDF2 (policy: max_pim)",
                self.max_pim
            )));
        }
        Ok(())
    }

    /// Argon2id's cost at `pim` if it is within the bounds.
    pub fn argon2_allowed(&self, pim: u32) -> Result<Argon2Cost> {
        let cost = Prf::Argon2id
            .argon2_cost(pim)
            .ok_or(Error::InvalidPim(pim))?;
        if pim > self.argon2_max_pim {
            return Err(Error::OverLimit(format!(
                "PIM {pim} is above the {} allowed for Argon2id (policy: argon2_max_pim)",
                self.argon2_max_pim
            )));
        }
        if cost.memory_kib > self.argon2_max_memory_kib {
            return Err(Error::Argon2Memory {
                needed_mib: u64::from(cost.memory_kib) / 1024,
                limit_mib: u64::from(self.argon2_max_memory_kib) / 1024,
            });
        }
        Ok(cost)
    }

    /// Whether a search for `prf` (None: every PRF) at `pim` can try
    /// anything within the bounds; said before any work, so a request no
    /// trial of which is allowed is refused at once rather than searched.
    pub fn request_allowed(&self, prf: Option<Prf>, pim: u32) -> Result<()> {
        match prf {
            Some(Prf::Argon2id) => self.argon2_allowed(pim).map(|_| ()),
            Some(_) => self.pbkdf2_allowed(pim),
            None => self
                .pbkdf2_allowed(pim)
                .or_else(|e| self.argon2_allowed(pim).map(|_| ()).map_err(|_| e)),
        }
    }
}

/// The cost of VeraCrypt's Argon2id for one PIM (parallelism is always 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Argon2Cost {
    /// Memory in KiB (Argon2's `m_cost`).
    pub memory_kib: u32,
    /// Passes over the memory (Argon2's `t_cost`).
    pub passes: u32,
}

impl Prf {
    /// The PRFs a trial tries for `format`, in the order it tries them.
    pub fn all(format: Format) -> &'static [Prf] {
        match format {
            Format::TrueCrypt => &[Prf::Ripemd160, Prf::Sha512, Prf::Whirlpool, Prf::Sha1],
            Format::VeraCrypt => &[
                Prf::Sha512,
                Prf::Sha256,
                Prf::Whirlpool,
                Prf::Blake2s,
                Prf::Streebog,
                Prf::Ripemd160,
                Prf::Argon2id,
            ],
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Prf::Sha512 => "SHA-512",
            Prf::Whirlpool => "Whirlpool",
            Prf::Sha256 => "SHA-256",
            Prf::Blake2s => "BLAKE2s-256",
            Prf::Streebog => "Streebog",
            Prf::Ripemd160 => "RIPEMD-160",
            Prf::Sha1 => "SHA-1",
            Prf::Argon2id => "Argon2id",
        }
    }

    /// Parses a PRF name as users type it (`sha512`, `SHA-512`, ...).
    /// Case, `-` and `_` do not matter.
    pub fn by_name(name: &str) -> Option<Prf> {
        let key: String = name
            .trim()
            .chars()
            .filter(|c| *c != '-' && *c != '_')
            .map(|c| c.to_ascii_lowercase())
            .collect();
        match key.as_str() {
            "sha512" => Some(Prf::Sha512),
            "sha256" => Some(Prf::Sha256),
            "whirlpool" => Some(Prf::Whirlpool),
            "ripemd160" | "rmd160" => Some(Prf::Ripemd160),
            "sha1" => Some(Prf::Sha1),
            "blake2s" | "blake2s256" => Some(Prf::Blake2s),
            "streebog" | "streebog512" | "stribog" | "stribog512" => Some(Prf::Streebog),
            "argon2id" | "argon2" => Some(Prf::Argon2id),
            _ => None,
        }
    }

    /// Bytes of one PBKDF2 output block (the hash's output); Argon2id
    /// gives the whole key at once.
    pub fn block_bytes(self) -> usize {
        match self {
            Prf::Sha512 | Prf::Whirlpool | Prf::Streebog => 64,
            Prf::Sha256 | Prf::Blake2s => 32,
            Prf::Ripemd160 | Prf::Sha1 => 20,
            Prf::Argon2id => HEADER_KEY_BYTES,
        }
    }

    /// How many independent parts the header key's derivation has: its
    /// PBKDF2 output blocks (3 for SHA-512, 6 for SHA-256, 10 for
    /// RIPEMD-160); 1 for Argon2id.
    pub fn key_parts(self) -> usize {
        HEADER_KEY_BYTES.div_ceil(self.block_bytes())
    }

    /// SHA-1 opens only TrueCrypt 4's headers (versions 1 and 2).
    pub fn legacy_only(self) -> bool {
        self == Prf::Sha1
    }

    /// The PRFs TrueCrypt 4 used (RIPEMD-160, SHA-1, Whirlpool): its
    /// headers are tried with keys of these only.
    pub fn in_legacy_headers(self) -> bool {
        matches!(self, Prf::Ripemd160 | Prf::Sha1 | Prf::Whirlpool)
    }

    /// Whether `format` knows this PRF at all.
    pub fn in_format(self, format: Format) -> bool {
        Prf::all(format).contains(&self)
    }

    /// PBKDF2 iterations for a normal (non-system) volume; None for Argon2id,
    /// for a PRF the format does not have, and for a PIM the format does not
    /// accept (TrueCrypt has no PIM: any PIM but 0 is None; VeraCrypt PIMs
    /// above [`MAX_PIM`] are None).
    ///
    /// TrueCrypt 7: RIPEMD-160 2000, SHA-512 1000, Whirlpool 1000.
    /// VeraCrypt: PIM 0 gives 500000 (RIPEMD-160: 655331), any other PIM
    /// 15000 + 1000 * PIM for every PRF.
    pub fn iterations(self, format: Format, pim: u32) -> Option<u32> {
        self.iterations_in(format, pim, Scope::Volume)
    }

    /// PBKDF2 iterations for a volume or for system encryption, whose boot
    /// loader must derive the key quickly: TrueCrypt's RIPEMD-160 1000;
    /// VeraCrypt's SHA-256, BLAKE2s and Streebog 200000 (PIM p: 2048 * p)
    /// and RIPEMD-160 327661 (PIM p: 2048 * p). SHA-512 and Whirlpool are
    /// as for a volume; Argon2id has no system form.
    pub fn iterations_in(self, format: Format, pim: u32, scope: Scope) -> Option<u32> {
        let boot_count = matches!(
            (format, self),
            (Format::TrueCrypt, Prf::Ripemd160)
                | (
                    Format::VeraCrypt,
                    Prf::Sha256 | Prf::Blake2s | Prf::Streebog | Prf::Ripemd160
                )
        );
        if scope == Scope::Volume || !boot_count {
            return self.volume_iterations(format, pim);
        }
        match (format, pim, self) {
            (Format::TrueCrypt, 0, _) => Some(1000),
            (Format::TrueCrypt, _, _) => None,
            (_, p, _) if p > MAX_PIM => None,
            (_, 0, Prf::Ripemd160) => Some(327_661),
            (_, 0, _) => Some(200_000),
            // Above 2^32 / 2048 no boot loader takes the PIM.
            (_, p, _) => p.checked_mul(2048),
        }
    }

    fn volume_iterations(self, format: Format, pim: u32) -> Option<u32> {
        if !self.in_format(format) {
            return None;
        }
        match format {
            Format::TrueCrypt => {
                if pim != 0 {
                    return None;
                }
                match self {
                    Prf::Ripemd160 | Prf::Sha1 => Some(2000),
                    Prf::Sha512 | Prf::Whirlpool => Some(1000),
                    _ => None,
                }
            }
            Format::VeraCrypt => {
                if self == Prf::Argon2id || pim > MAX_PIM {
                    return None;
                }
                if pim == 0 {
                    Some(if self == Prf::Ripemd160 {
                        655_331
                    } else {
                        500_000
                    })
                } else {
                    Some(15_000 + 1_000 * pim)
                }
            }
        }
    }

    /// VeraCrypt's Argon2id cost for a PIM (0 means the default, 12): memory
    /// min(64 + (PIM-1)*32, 1024) MiB; passes 3 + (PIM-1)/3 up to PIM 31,
    /// 13 + (PIM-31) above. None unless this is Argon2id and the PIM is at
    /// most [`MAX_PIM`].
    pub fn argon2_cost(self, pim: u32) -> Option<Argon2Cost> {
        if self != Prf::Argon2id || pim > MAX_PIM {
            return None;
        }
        let pim = if pim == 0 { 12 } else { pim };
        let memory_mib = (64 + (pim - 1).min(30) * 32).min(1024);
        let passes = if pim <= 31 {
            3 + (pim - 1) / 3
        } else {
            13 + (pim - 31)
        };
        Some(Argon2Cost {
            memory_kib: memory_mib * 1024,
            passes,
        })
    }
}

/// Derives the 192-byte header key from a password (keyfiles already
/// applied) and the header's 64-byte salt. Checks `cancel` often enough that
/// a cancelled search stops within a fraction of a second.
#[allow(clippy::too_many_arguments)]
pub fn derive_header_key(
    prf: Prf,
    format: Format,
    pim: u32,
    password: &[u8],
    salt: &[u8; 64],
    limits: &KdfLimits,
    cancel: &AtomicBool,
    out: &mut [u8; HEADER_KEY_BYTES],
) -> Result<()> {
    let parts = prf.key_parts();
    let level = simd_level();
    if prf.chains_at_once(level) == 1 {
        return derive_header_key_parts(
            (prf, format, pim, Scope::Volume),
            password,
            salt,
            limits,
            cancel,
            0..parts,
            out,
        );
    }
    // The blocks at once, each into a key of its own, then put together.
    let mut outs: Vec<zeroize::Zeroizing<[u8; HEADER_KEY_BYTES]>> = (0..parts)
        .map(|_| zeroize::Zeroizing::new([0u8; HEADER_KEY_BYTES]))
        .collect();
    let mut chains: Vec<KeyPart<'_>> = outs
        .iter_mut()
        .enumerate()
        .map(|(part, o)| KeyPart { salt, part, out: o })
        .collect();
    derive_header_key_chains(
        (prf, format, pim, Scope::Volume),
        password,
        limits,
        cancel,
        level,
        &mut chains,
    )?;
    drop(chains);
    let len = prf.block_bytes();
    for (part, o) in outs.iter().enumerate() {
        let bytes = part * len..((part + 1) * len).min(HEADER_KEY_BYTES);
        out[bytes.clone()].copy_from_slice(&o[bytes]);
    }
    Ok(())
}

/// Whose header a key is derived for: a volume's, or system encryption's
/// (the boot loader's iteration counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    #[default]
    Volume,
    System,
}

/// Derives only the PBKDF2 output blocks `parts` (of [`Prf::key_parts`]) of
/// the header key of a volume or of system encryption (`scope`) into
/// their bytes of `out`, leaving its other bytes as they are. The blocks
/// of one key are independent: a search derives them on several cores at
/// once. Argon2id has one part, the whole key.
pub fn derive_header_key_parts(
    (prf, format, pim, scope): (Prf, Format, u32, Scope),
    password: &[u8],
    salt: &[u8; 64],
    limits: &KdfLimits,
    cancel: &AtomicBool,
    parts: std::ops::Range<usize>,
    out: &mut [u8; HEADER_KEY_BYTES],
) -> Result<()> {
    if parts.start >= parts.end || parts.end > prf.key_parts() {
        return Err(Error::Kdf("no such part of the header key".into()));
    }
    check_request(prf, format, cancel)?;
    if prf == Prf::Argon2id {
        if scope == Scope::System {
            return Err(Error::PrfNotInFormat {
                prf: prf.name(),
                format: "system encryption",
            });
        }
        return argon2id(pim, password, salt, limits, cancel, out);
    }
    let iterations = prf
        .iterations_in(format, pim, scope)
        .ok_or(Error::InvalidPim(pim))?;
    limits.pbkdf2_allowed(pim)?;
    // The bytes of the blocks asked for (the last block of RIPEMD-160's
    // key is cut short).
    let len = prf.block_bytes();
    let first = parts.start;
    let bytes = &mut out[first * len..(parts.end * len).min(HEADER_KEY_BYTES)];
    let result = pbkdf2_chain(prf, password, salt, iterations, cancel, first, bytes);
    if result.is_err() {
        bytes.zeroize();
    }
    result
}

/// PBKDF2 of `prf` on one chain, output blocks `first`, `first + 1`, ...
/// into `out`: the loop a search runs for a PRF without SIMD lanes.
fn pbkdf2_chain(
    prf: Prf,
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    cancel: &AtomicBool,
    first: usize,
    bytes: &mut [u8],
) -> Result<()> {
    match prf {
        Prf::Sha512 => sha2_chains::pbkdf2_sha512(password, salt, iterations, cancel, first, bytes),
        Prf::Sha256 => sha2_chains::pbkdf2_sha256(password, salt, iterations, cancel, first, bytes),
        Prf::Whirlpool => {
            whirlpool_tables::pbkdf2_whirlpool(password, salt, iterations, cancel, first, bytes)
        }
        Prf::Ripemd160 => pbkdf2_from::<hmac::Hmac<ripemd::Ripemd160>>(
            password, salt, iterations, cancel, first, bytes,
        ),
        Prf::Sha1 => {
            pbkdf2_from::<hmac::Hmac<sha1::Sha1>>(password, salt, iterations, cancel, first, bytes)
        }
        Prf::Streebog => {
            streebog_tables::pbkdf2_streebog(password, salt, iterations, cancel, first, bytes)
        }
        Prf::Blake2s => pbkdf2_from::<hmac::SimpleHmac<blake2::Blake2s256>>(
            password, salt, iterations, cancel, first, bytes,
        ),
        Prf::Argon2id => Err(Error::Kdf(
            "unreachable: Argon2id is not a PBKDF2 PRF".into(),
        )),
    }
}

/// Refuses a PRF the format lacks, and a search already cancelled.
fn check_request(prf: Prf, format: Format, cancel: &AtomicBool) -> Result<()> {
    if !prf.in_format(format) {
        return Err(Error::PrfNotInFormat {
            prf: prf.name(),
            format: format.name(),
        });
    }
    if cancel.load(Ordering::Relaxed) {
        return Err(Error::Cancelled);
    }
    Ok(())
}

/// One PBKDF2 output block (`part`, of [`Prf::key_parts`]) of the header
/// key of `salt`, derived into its bytes of `out`.
pub struct KeyPart<'a> {
    pub salt: &'a [u8; SALT_BYTES],
    pub part: usize,
    pub out: &'a mut [u8; HEADER_KEY_BYTES],
}

/// The SIMD level the key derivation runs at: the fastest this processor
/// has at or below the `TCD_SIMD` cap.
pub fn simd_level() -> Level {
    sha512_lanes::level_for(tcd_backend_kit::simd::cap())
}

impl Prf {
    /// How many output blocks (of any salts) one call of
    /// [`derive_header_key_chains`] runs at once at `level`; beyond that
    /// they run one group after another.
    pub fn chains_at_once(self, level: Level) -> usize {
        match self {
            Prf::Sha512 => sha512_lanes::lanes(level),
            Prf::Blake2s => blake2s_lanes::lanes(level),
            Prf::Ripemd160 => ripemd160_lanes::lanes(level),
            _ => 1,
        }
    }
}

type Lanes = fn(&[u8], u32, &AtomicBool, Level, &mut [sha512_lanes::Job<'_>]) -> Result<()>;

/// The SIMD-lane PBKDF2 of `prf`, if it has one.
fn lanes_of(prf: Prf) -> Option<Lanes> {
    match prf {
        Prf::Sha512 => Some(sha512_lanes::pbkdf2_sha512_jobs),
        Prf::Blake2s => Some(blake2s_lanes::pbkdf2_blake2s_jobs),
        Prf::Ripemd160 => Some(ripemd160_lanes::pbkdf2_ripemd160_jobs),
        _ => None,
    }
}

/// One way the key derivation computes PBKDF2: the one-chain loop, or
/// independent chains in SIMD lanes at a level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pbkdf2Path {
    Chain,
    Lanes(Level),
}

impl Pbkdf2Path {
    /// The path's name in the self-test's table.
    pub fn name(self) -> String {
        match self {
            Pbkdf2Path::Chain => "one chain".into(),
            Pbkdf2Path::Lanes(level) => format!("{} lanes", level.name().to_uppercase()),
        }
    }
}

/// Every path a derivation may take for `prf` on this processor: the one
/// chain, and the lanes at each `TCD_SIMD` level this processor runs.
pub fn pbkdf2_paths(prf: Prf) -> Vec<Pbkdf2Path> {
    let mut paths = vec![Pbkdf2Path::Chain];
    if lanes_of(prf).is_none() {
        return paths;
    }
    for cap in Level::ALL {
        let path = Pbkdf2Path::Lanes(sha512_lanes::level_for(cap));
        if !paths.contains(&path) {
            paths.push(path);
        }
    }
    paths
}

/// PBKDF2 of `prf` along `path` with any iteration count and output
/// length: the self-test's entry to the search's own code.
pub fn pbkdf2_along(
    (prf, path): (Prf, Pbkdf2Path),
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    out: &mut [u8],
) -> Result<()> {
    let never = AtomicBool::new(false);
    match (path, lanes_of(prf)) {
        (Pbkdf2Path::Lanes(level), Some(lanes)) => {
            let mut jobs: Vec<sha512_lanes::Job<'_>> = out
                .chunks_mut(prf.block_bytes())
                .enumerate()
                .map(|(block, out)| sha512_lanes::Job { salt, block, out })
                .collect();
            lanes(password, iterations, &never, level, &mut jobs)
        }
        _ => pbkdf2_chain(prf, password, salt, iterations, &never, 0, out),
    }
}

/// Derives several output blocks of one password's header keys, each of
/// its own salt and part: the independent chains of a search (the blocks
/// of one key, the salts of the header slots). SHA-512, BLAKE2s and
/// RIPEMD-160 run [`Prf::chains_at_once`] of them at once in SIMD lanes at
/// `level` (one [`simd_level`] gave); the other PRFs one after another.
#[allow(clippy::too_many_arguments)]
pub fn derive_header_key_chains(
    (prf, format, pim, scope): (Prf, Format, u32, Scope),
    password: &[u8],
    limits: &KdfLimits,
    cancel: &AtomicBool,
    level: Level,
    chains: &mut [KeyPart<'_>],
) -> Result<()> {
    if chains.iter().any(|c| c.part >= prf.key_parts()) {
        return Err(Error::Kdf("no such part of the header key".into()));
    }
    let lanes = match lanes_of(prf) {
        Some(lanes) => lanes,
        None => {
            for c in chains.iter_mut() {
                let parts = c.part..c.part + 1;
                let cost = (prf, format, pim, scope);
                derive_header_key_parts(cost, password, c.salt, limits, cancel, parts, c.out)?;
            }
            return Ok(());
        }
    };
    check_request(prf, format, cancel)?;
    let iterations = prf
        .iterations_in(format, pim, scope)
        .ok_or(Error::InvalidPim(pim))?;
    limits.pbkdf2_allowed(pim)?;
    let len = prf.block_bytes();
    let mut jobs: Vec<sha512_lanes::Job<'_>> = chains
        .iter_mut()
        .map(|c| sha512_lanes::Job {
            salt: &c.salt[..],
            block: c.part,
            // RIPEMD-160's last block is cut short at the key's end.
            out: &mut c.out[c.part * len..((c.part + 1) * len).min(HEADER_KEY_BYTES)],
        })
        .collect();
    let result = lanes(password, iterations, cancel, level, &mut jobs);
    if result.is_err() {
        for job in &mut jobs {
            job.out.zeroize();
        }
    }
    result
}

/// PBKDF2 with the HMAC type `M` (PKCS #5 v2.0, section 5.2): block i of the
/// output is U1 ^ U2 ^ ... ^ Uc with U1 = PRF(P, S || INT(i)) and
/// Uj = PRF(P, Uj-1). Every block runs `iterations` HMACs; `cancel` is read
/// every [`CANCEL_CHECK_EVERY`] of them.
#[cfg(test)]
pub(crate) fn pbkdf2<M>(
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    cancel: &AtomicBool,
    out: &mut [u8],
) -> Result<()>
where
    M: KeyInit + Update + FixedOutput + Clone,
{
    pbkdf2_from::<M>(password, salt, iterations, cancel, 0, out)
}

/// PBKDF2 output from block `first` (0-based) on: `out` holds blocks
/// `first`, `first + 1`, ... of the whole output.
pub(crate) fn pbkdf2_from<M>(
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    cancel: &AtomicBool,
    first: usize,
    out: &mut [u8],
) -> Result<()>
where
    M: KeyInit + Update + FixedOutput + Clone,
{
    if iterations == 0 {
        return Err(Error::Kdf("PBKDF2 needs at least one iteration".into()));
    }
    // HMAC takes keys of any length: this cannot fail.
    let keyed = M::new_from_slice(password).map_err(|_| Error::Kdf("HMAC key".into()))?;
    let mut u = Output::<M>::default();
    let mut acc = Output::<M>::default();
    let result = pbkdf2_blocks(
        &keyed, salt, iterations, cancel, first, out, &mut u, &mut acc,
    );
    u.as_mut_slice().zeroize();
    acc.as_mut_slice().zeroize();
    // `keyed` (and every clone) wipes its hash states on drop (the hash
    // crates' `zeroize` feature).
    drop(keyed);
    result
}

#[allow(clippy::too_many_arguments)]
fn pbkdf2_blocks<M>(
    keyed: &M,
    salt: &[u8],
    iterations: u32,
    cancel: &AtomicBool,
    first: usize,
    out: &mut [u8],
    u: &mut Output<M>,
    acc: &mut Output<M>,
) -> Result<()>
where
    M: Update + FixedOutput + Clone + OutputSizeUser,
{
    for (index, chunk) in out.chunks_mut(u.len()).enumerate() {
        let block_number = u32::try_from(first + index + 1)
            .map_err(|_| Error::Kdf("PBKDF2 output too long".into()))?;
        let mut mac = keyed.clone();
        mac.update(salt);
        mac.update(&block_number.to_be_bytes());
        mac.finalize_into(u);
        acc.copy_from_slice(u);

        let mut left = iterations - 1;
        while left > 0 {
            let run = left.min(CANCEL_CHECK_EVERY);
            for _ in 0..run {
                let mut mac = keyed.clone();
                mac.update(u);
                mac.finalize_into(u);
                xor_into(acc, u);
            }
            left -= run;
            if cancel.load(Ordering::Relaxed) {
                return Err(Error::Cancelled);
            }
        }
        chunk.copy_from_slice(&acc[..chunk.len()]);
    }
    Ok(())
}

#[inline(always)]
fn xor_into(acc: &mut [u8], u: &[u8]) {
    for (a, b) in acc.iter_mut().zip(u) {
        *a ^= *b;
    }
}

/// VeraCrypt's Argon2id: Argon2id version 0x13, parallelism 1, no secret and
/// no associated data, password = the password bytes after keyfiles, salt =
/// the header's 64-byte salt, output = the whole 192-byte header key.
fn argon2id(
    pim: u32,
    password: &[u8],
    salt: &[u8; 64],
    limits: &KdfLimits,
    cancel: &AtomicBool,
    out: &mut [u8; HEADER_KEY_BYTES],
) -> Result<()> {
    let cost = limits.argon2_allowed(pim)?;
    let result = super::argon2id::hash(password, salt, cost.memory_kib, cost.passes, cancel, out);
    if result.is_err() {
        out.zeroize();
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volume::keyfile;
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::time::{Duration, Instant};

    const KAT: &str = include_str!("testdata/pbkdf2_kat.txt");
    const VOLUMES: &str = include_str!("testdata/volumes.txt");

    fn never() -> AtomicBool {
        AtomicBool::new(false)
    }

    #[test]
    fn prf_names() {
        for (text, prf) in [
            ("sha512", Prf::Sha512),
            ("SHA-512", Prf::Sha512),
            ("Sha512", Prf::Sha512),
            ("sha256", Prf::Sha256),
            ("SHA-256", Prf::Sha256),
            ("whirlpool", Prf::Whirlpool),
            ("WHIRLPOOL", Prf::Whirlpool),
            ("ripemd160", Prf::Ripemd160),
            ("RIPEMD-160", Prf::Ripemd160),
            ("blake2s", Prf::Blake2s),
            ("BLAKE2s-256", Prf::Blake2s),
            ("streebog", Prf::Streebog),
            ("Stribog", Prf::Streebog),
            ("stribog512", Prf::Streebog),
            ("argon2id", Prf::Argon2id),
            ("Argon2ID", Prf::Argon2id),
            ("sha1", Prf::Sha1),
            ("SHA-1", Prf::Sha1),
        ] {
            assert_eq!(Prf::by_name(text), Some(prf), "{text}");
        }
        for bad in ["", "md5", "sha-3", "blake2b", "argon2i"] {
            assert_eq!(Prf::by_name(bad), None, "{bad}");
        }
        for format in [Format::TrueCrypt, Format::VeraCrypt] {
            for &prf in Prf::all(format) {
                assert_eq!(Prf::by_name(prf.name()), Some(prf));
            }
        }
    }

    #[test]
    fn system_iteration_counts() {
        let (tc, vc, sys) = (Format::TrueCrypt, Format::VeraCrypt, Scope::System);
        assert_eq!(Prf::Ripemd160.iterations_in(tc, 0, sys), Some(1000));
        assert_eq!(Prf::Sha512.iterations_in(tc, 0, sys), Some(1000));
        assert_eq!(Prf::Ripemd160.iterations_in(tc, 1, sys), None);
        for prf in [Prf::Sha256, Prf::Blake2s, Prf::Streebog] {
            assert_eq!(prf.iterations_in(vc, 0, sys), Some(200_000), "{prf:?}");
            assert_eq!(prf.iterations_in(vc, 10, sys), Some(20_480), "{prf:?}");
            assert_eq!(prf.iterations_in(vc, MAX_PIM, sys), None, "{prf:?}");
        }
        assert_eq!(Prf::Ripemd160.iterations_in(vc, 0, sys), Some(327_661));
        assert_eq!(Prf::Ripemd160.iterations_in(vc, 10, sys), Some(20_480));
        for prf in [Prf::Sha512, Prf::Whirlpool] {
            assert_eq!(prf.iterations_in(vc, 0, sys), Some(500_000), "{prf:?}");
            assert_eq!(prf.iterations_in(vc, 10, sys), Some(25_000), "{prf:?}");
        }
        assert_eq!(Prf::Argon2id.iterations_in(vc, 0, sys), None);
    }

    #[test]
    fn iteration_counts() {
        let tc = Format::TrueCrypt;
        let vc = Format::VeraCrypt;
        assert_eq!(Prf::Ripemd160.iterations(tc, 0), Some(2000));
        assert_eq!(Prf::Sha512.iterations(tc, 0), Some(1000));
        assert_eq!(Prf::Whirlpool.iterations(tc, 0), Some(1000));
        for prf in [Prf::Sha256, Prf::Blake2s, Prf::Streebog, Prf::Argon2id] {
            assert_eq!(prf.iterations(tc, 0), None, "{prf:?} is not TrueCrypt");
        }
        // TrueCrypt has no PIM.
        assert_eq!(Prf::Sha512.iterations(tc, 1), None);

        for prf in [
            Prf::Sha512,
            Prf::Whirlpool,
            Prf::Sha256,
            Prf::Blake2s,
            Prf::Streebog,
        ] {
            assert_eq!(prf.iterations(vc, 0), Some(500_000));
            assert_eq!(prf.iterations(vc, 1), Some(16_000));
            assert_eq!(prf.iterations(vc, 485), Some(500_000));
            assert_eq!(prf.iterations(vc, 1234), Some(1_249_000));
            assert_eq!(prf.iterations(vc, MAX_PIM), Some(2_147_483_000));
            assert_eq!(prf.iterations(vc, MAX_PIM + 1), None);
        }
        assert_eq!(Prf::Ripemd160.iterations(vc, 0), Some(655_331));
        assert_eq!(Prf::Ripemd160.iterations(vc, 10), Some(25_000));
        assert_eq!(Prf::Argon2id.iterations(vc, 0), None);
    }

    #[test]
    fn argon2_costs() {
        let cost = |pim| Prf::Argon2id.argon2_cost(pim).unwrap();
        // PIM 0 is 12: 64 + 11*32 = 416 MiB, 3 + 11/3 = 6 passes (VeraCrypt's
        // documentation gives these numbers for PIM 12).
        assert_eq!(
            cost(0),
            Argon2Cost {
                memory_kib: 416 * 1024,
                passes: 6
            }
        );
        assert_eq!(cost(12), cost(0));
        assert_eq!(
            cost(1),
            Argon2Cost {
                memory_kib: 64 * 1024,
                passes: 3
            }
        );
        assert_eq!(
            cost(8),
            Argon2Cost {
                memory_kib: 288 * 1024,
                passes: 5
            }
        );
        assert_eq!(
            cost(30),
            Argon2Cost {
                memory_kib: 992 * 1024,
                passes: 12
            }
        );
        assert_eq!(
            cost(31),
            Argon2Cost {
                memory_kib: 1024 * 1024,
                passes: 13
            }
        );
        assert_eq!(
            cost(33),
            Argon2Cost {
                memory_kib: 1024 * 1024,
                passes: 15
            }
        );
        assert_eq!(
            cost(1000),
            Argon2Cost {
                memory_kib: 1024 * 1024,
                passes: 982
            }
        );
        assert_eq!(Prf::Argon2id.argon2_cost(MAX_PIM + 1), None);
        assert_eq!(Prf::Sha512.argon2_cost(0), None);
    }

    #[test]
    fn argon2_memory_limit_refuses_before_allocating() {
        let limits = KdfLimits {
            argon2_max_memory_kib: 100 * 1024,
            ..KdfLimits::default()
        };
        let mut out = [0u8; HEADER_KEY_BYTES];
        let start = Instant::now();
        let r = derive_header_key(
            Prf::Argon2id,
            Format::VeraCrypt,
            0,
            b"pw",
            &[7; 64],
            &limits,
            &never(),
            &mut out,
        );
        assert!(
            matches!(
                r,
                Err(Error::Argon2Memory {
                    needed_mib: 416,
                    limit_mib: 100
                })
            ),
            "{r:?}"
        );
        assert!(start.elapsed() < Duration::from_millis(50));
        // PIM 1 (64 MiB) fits the same limit; a cancel before starting stops it.
        let cancel = AtomicBool::new(true);
        let r = derive_header_key(
            Prf::Argon2id,
            Format::VeraCrypt,
            1,
            b"pw",
            &[7; 64],
            &limits,
            &cancel,
            &mut out,
        );
        assert!(matches!(r, Err(Error::Cancelled)), "{r:?}");
    }

    #[test]
    fn a_pim_past_the_formats_range_is_out_of_range_not_over_a_policy() {
        // Root's limits are the format's own: nothing of the policy's.
        let r = KdfLimits::default().pbkdf2_allowed(99_999_999);
        assert!(matches!(r, Err(Error::InvalidPim(99_999_999))), "{r:?}");
        let r = KdfLimits::default().pbkdf2_allowed(MAX_PIM);
        assert!(r.is_ok(), "{r:?}");
    }

    #[test]
    fn pim_limits_refuse_before_any_work() {
        let limits = KdfLimits {
            max_pim: 2000,
            argon2_max_pim: 31,
            ..KdfLimits::default()
        };
        let mut out = [0u8; HEADER_KEY_BYTES];
        let start = Instant::now();
        for (prf, pim) in [
            (Prf::Sha512, 2001),
            (Prf::Argon2id, 32),
            (Prf::Argon2id, MAX_PIM),
        ] {
            let r = derive_header_key(
                prf,
                Format::VeraCrypt,
                pim,
                b"pw",
                &[7; 64],
                &limits,
                &never(),
                &mut out,
            );
            assert!(
                matches!(r, Err(Error::OverLimit(_))),
                "{prf:?} {pim}: {r:?}"
            );
            assert!(limits.request_allowed(Some(prf), pim).is_err());
        }
        assert!(start.elapsed() < Duration::from_millis(50));
        // No hash named: refused only when neither kind may run.
        assert!(limits.request_allowed(None, 31).is_ok());
        assert!(limits.request_allowed(None, 2000).is_ok());
        assert!(limits.request_allowed(None, 2001).is_err());
        assert!(limits.request_allowed(Some(Prf::Argon2id), 0).is_ok());
    }

    #[test]
    fn refusals() {
        let mut out = [0u8; HEADER_KEY_BYTES];
        let l = KdfLimits::default();
        let salt = [0u8; 64];
        let r = derive_header_key(
            Prf::Sha256,
            Format::TrueCrypt,
            0,
            b"p",
            &salt,
            &l,
            &never(),
            &mut out,
        );
        assert!(matches!(r, Err(Error::PrfNotInFormat { .. })), "{r:?}");
        let r = derive_header_key(
            Prf::Sha512,
            Format::TrueCrypt,
            5,
            b"p",
            &salt,
            &l,
            &never(),
            &mut out,
        );
        assert!(matches!(r, Err(Error::InvalidPim(5))), "{r:?}");
        let r = derive_header_key(
            Prf::Sha512,
            Format::VeraCrypt,
            MAX_PIM + 1,
            b"p",
            &salt,
            &l,
            &never(),
            &mut out,
        );
        assert!(matches!(r, Err(Error::InvalidPim(_))), "{r:?}");
    }

    #[test]
    fn cancel_stops_a_500000_iteration_derivation_quickly() {
        // Argon2id at PIM 0 is 416 MiB over 6 passes: seconds of work.
        for prf in [Prf::Sha512, Prf::Whirlpool, Prf::Streebog, Prf::Argon2id] {
            let cancel = AtomicBool::new(false);
            let mut out = [0u8; HEADER_KEY_BYTES];
            let started = Instant::now();
            let r = std::thread::scope(|s| {
                let worker = s.spawn(|| {
                    derive_header_key(
                        prf,
                        Format::VeraCrypt,
                        0,
                        b"password",
                        &[1; 64],
                        &KdfLimits::default(),
                        &cancel,
                        &mut out,
                    )
                });
                std::thread::sleep(Duration::from_millis(50));
                let asked = Instant::now();
                cancel.store(true, Ordering::Relaxed);
                let r = worker.join().expect("derivation thread");
                (r, asked.elapsed())
            });
            assert!(matches!(r.0, Err(Error::Cancelled)), "{prf:?}: {:?}", r.0);
            assert!(
                r.1 < Duration::from_secs(1),
                "{prf:?} took {:?} to stop",
                r.1
            );
            assert!(started.elapsed() < Duration::from_secs(2));
            assert_eq!(
                out, [0u8; HEADER_KEY_BYTES],
                "a cancelled derivation leaves no key"
            );
        }
    }

    fn run_pbkdf2(prf: &str, password: &[u8], salt: &[u8], iterations: u32, out: &mut [u8]) {
        let c = never();
        let r = match prf {
            "sha256" => pbkdf2::<hmac::Hmac<sha2::Sha256>>(password, salt, iterations, &c, out),
            "sha512" => pbkdf2::<hmac::Hmac<sha2::Sha512>>(password, salt, iterations, &c, out),
            "streebog" => {
                pbkdf2::<hmac::Hmac<streebog::Streebog512>>(password, salt, iterations, &c, out)
            }
            other => panic!("no PRF {other} in the KAT runner"),
        };
        r.expect("pbkdf2");
    }

    #[test]
    fn pbkdf2_known_answers() {
        let mut count = 0;
        for line in KAT
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            let f: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(f.len(), 5, "bad KAT line {line}");
            let iterations: u32 = f[1].parse().expect("iterations");
            let password = hex::decode(f[2]).expect("hex");
            let salt = hex::decode(f[3]).expect("hex");
            let expected = hex::decode(f[4]).expect("hex");
            let mut out = vec![0u8; expected.len()];
            run_pbkdf2(f[0], &password, &salt, iterations, &mut out);
            assert_eq!(hex::encode(&out), f[4], "{line}");
            count += 1;
        }
        assert_eq!(count, 13);
    }

    #[test]
    fn chains_of_several_salts_give_their_keys_at_every_level() {
        // The blocks of three salts' keys, shuffled into one call, each
        // equal to its key derived alone on the one-chain code.
        let l = KdfLimits::default();
        let salts: Vec<[u8; 64]> = (0..3u8)
            .map(|s| std::array::from_fn(|i| (i as u8).wrapping_mul(7) ^ s))
            .collect();
        let mut levels: Vec<Level> = Level::ALL
            .into_iter()
            .map(sha512_lanes::level_for)
            .collect();
        levels.dedup();
        for (format, pim, prf) in [
            (Format::VeraCrypt, 2, Prf::Sha512),
            (Format::TrueCrypt, 0, Prf::Sha512),
            (Format::VeraCrypt, 1, Prf::Sha256),
            (Format::VeraCrypt, 1, Prf::Blake2s),
            (Format::TrueCrypt, 0, Prf::Ripemd160),
        ] {
            let want: Vec<[u8; HEADER_KEY_BYTES]> = salts
                .iter()
                .map(|salt| {
                    let mut key = [0u8; HEADER_KEY_BYTES];
                    let parts = 0..prf.key_parts();
                    derive_header_key_parts(
                        (prf, format, pim, Scope::Volume),
                        b"pw",
                        salt,
                        &l,
                        &never(),
                        parts,
                        &mut key,
                    )
                    .expect("one key");
                    key
                })
                .collect();
            for &level in &levels {
                let mut got = vec![[0u8; HEADER_KEY_BYTES]; salts.len()];
                let mut chains: Vec<KeyPart<'_>> = Vec::new();
                let mut outs = vec![[0u8; HEADER_KEY_BYTES]; salts.len() * prf.key_parts()];
                let mut index = Vec::new();
                for (o, out) in outs.iter_mut().enumerate() {
                    let (s, part) = (o % salts.len(), o / salts.len());
                    index.push((s, part));
                    chains.push(KeyPart {
                        salt: &salts[s],
                        part,
                        out,
                    });
                }
                derive_header_key_chains(
                    (prf, format, pim, Scope::Volume),
                    b"pw",
                    &l,
                    &never(),
                    level,
                    &mut chains,
                )
                .expect("chains");
                drop(chains);
                let len = prf.block_bytes();
                for ((s, part), out) in index.into_iter().zip(&outs) {
                    let bytes = part * len..((part + 1) * len).min(HEADER_KEY_BYTES);
                    got[s][bytes.clone()].copy_from_slice(&out[bytes]);
                }
                assert_eq!(got, want, "{prf:?} at {level:?}");
            }
        }
    }

    #[test]
    fn the_parts_of_a_key_put_together_are_the_whole_key() {
        // Each part derived alone (as a search spreads them over the
        // cores), in any order, gives the bytes of the one-piece derivation
        // and leaves the other bytes alone.
        let l = KdfLimits::default();
        let salt: [u8; 64] = std::array::from_fn(|i| i as u8 ^ 0x3c);
        for (format, pim, prf) in [
            (Format::TrueCrypt, 0, Prf::Ripemd160),
            (Format::TrueCrypt, 0, Prf::Sha512),
            (Format::TrueCrypt, 0, Prf::Whirlpool),
            (Format::VeraCrypt, 1, Prf::Sha256),
            (Format::VeraCrypt, 1, Prf::Blake2s),
            (Format::VeraCrypt, 1, Prf::Streebog),
        ] {
            let mut whole = [0u8; HEADER_KEY_BYTES];
            derive_header_key(prf, format, pim, b"pw", &salt, &l, &never(), &mut whole)
                .expect("whole key");
            let parts = prf.key_parts();
            assert_eq!(parts, HEADER_KEY_BYTES.div_ceil(prf.block_bytes()));
            let mut pieced = [0xEEu8; HEADER_KEY_BYTES];
            for part in (0..parts).rev() {
                derive_header_key_parts(
                    (prf, format, pim, Scope::Volume),
                    b"pw",
                    &salt,
                    &l,
                    &never(),
                    part..part + 1,
                    &mut pieced,
                )
                .expect("one part");
                let from = part * prf.block_bytes();
                assert!(
                    pieced[..from].iter().all(|&b| b == 0xEE),
                    "{prf:?}: part {part} wrote outside its bytes"
                );
            }
            assert_eq!(pieced, whole, "{prf:?}");
            // Two parts at once, the last one cut short for RIPEMD-160.
            let mut two = [0u8; HEADER_KEY_BYTES];
            derive_header_key_parts(
                (prf, format, pim, Scope::Volume),
                b"pw",
                &salt,
                &l,
                &never(),
                parts - 2..parts,
                &mut two,
            )
            .expect("two parts");
            let from = (parts - 2) * prf.block_bytes();
            assert_eq!(two[from..], whole[from..], "{prf:?}");
            for bad in [parts..parts + 1, 1..1] {
                let r = derive_header_key_parts(
                    (prf, format, pim, Scope::Volume),
                    b"pw",
                    &salt,
                    &l,
                    &never(),
                    bad,
                    &mut two,
                );
                assert!(matches!(r, Err(Error::Kdf(_))), "{prf:?}: {r:?}");
            }
        }
        assert_eq!(Prf::Argon2id.key_parts(), 1);
        assert_eq!(Prf::Sha512.key_parts(), 3);
        assert_eq!(Prf::Sha256.key_parts(), 6);
        assert_eq!(Prf::Ripemd160.key_parts(), 10);
    }

    #[test]
    fn blake2s_hmac_is_standard() {
        // HMAC-BLAKE2s-256 through SimpleHmac against HMAC computed by hand
        // (RFC 2104) from the plain hash, key shorter and longer than a block.
        use blake2::Digest;
        fn by_hand(key: &[u8], msg: &[u8]) -> Vec<u8> {
            let mut k = [0u8; 64];
            if key.len() > 64 {
                k[..32].copy_from_slice(&blake2::Blake2s256::digest(key));
            } else {
                k[..key.len()].copy_from_slice(key);
            }
            let ipad: Vec<u8> = k.iter().map(|b| b ^ 0x36).collect();
            let opad: Vec<u8> = k.iter().map(|b| b ^ 0x5c).collect();
            let inner = blake2::Blake2s256::new()
                .chain_update(&ipad)
                .chain_update(msg)
                .finalize();
            blake2::Blake2s256::new()
                .chain_update(&opad)
                .chain_update(inner)
                .finalize()
                .to_vec()
        }
        for key in [&b"key"[..], &[0xAB; 100][..]] {
            let mut out = [0u8; 32];
            pbkdf2::<hmac::SimpleHmac<blake2::Blake2s256>>(key, b"salt", 1, &never(), &mut out)
                .expect("pbkdf2");
            let mut msg = b"salt".to_vec();
            msg.extend_from_slice(&1u32.to_be_bytes());
            assert_eq!(out.to_vec(), by_hand(key, &msg));
        }
    }

    // ----- the real volumes -------------------------------------------------

    struct Volume {
        name: String,
        format: Format,
        prf: Prf,
        pim: u32,
        password: Vec<u8>,
        keyfiles: Vec<String>,
        offset: u64,
        magic: [u8; 4],
    }

    fn volumes() -> Vec<Volume> {
        VOLUMES
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                assert_eq!(f.len(), 8, "bad volume line {line}");
                Volume {
                    name: f[0].to_string(),
                    format: if f[1] == "tc" {
                        Format::TrueCrypt
                    } else {
                        Format::VeraCrypt
                    },
                    prf: Prf::by_name(f[2]).expect("PRF name"),
                    pim: f[3].parse().expect("PIM"),
                    password: if f[4] == "-" {
                        Vec::new()
                    } else {
                        f[4].as_bytes().to_vec()
                    },
                    keyfiles: if f[5] == "-" {
                        Vec::new()
                    } else {
                        f[5].split(',').map(String::from).collect()
                    },
                    offset: f[6].parse().expect("offset"),
                    magic: f[7].as_bytes().try_into().expect("4-byte magic"),
                }
            })
            .collect()
    }

    /// The corpus archive in the shared folder (`$TCD_SHARED`, else
    /// `../shared` beside the repository), as the end-to-end tests find it.
    fn archive() -> PathBuf {
        let shared = std::env::var_os("TCD_SHARED")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"));
        shared.join("tcrypt-images/tcrypt-images.tar.xz")
    }

    /// Unpacks the named members of the corpus into a fresh temporary folder.
    fn unpack(names: &[&str]) -> (tempfile::TempDir, PathBuf) {
        let archive = archive();
        assert!(
            archive.is_file(),
            "the tcrypt-images corpus is missing at {} (set TCD_SHARED)",
            archive.display()
        );
        let dir = tempfile::tempdir().expect("temporary folder");
        let mut cmd = Command::new("tar");
        cmd.arg("xJf").arg(&archive).arg("-C").arg(dir.path());
        for n in names {
            cmd.arg(format!("tcrypt-images/{n}"));
        }
        let out = match cmd.output() {
            Ok(out) => out,
            Err(e) => panic!("cannot run `tar` to unpack the corpus (tar and xz are needed): {e}"),
        };
        assert!(
            out.status.success(),
            "`tar xJf` failed (tar and xz are needed to unpack {}): {}",
            archive.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let root = dir.path().join("tcrypt-images");
        (dir, root)
    }

    fn read_header(path: &Path, offset: u64) -> [u8; 512] {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open(path).expect("volume file");
        f.seek(SeekFrom::Start(offset)).expect("seek");
        let mut h = [0u8; 512];
        f.read_exact(&mut h).expect("512-byte header");
        h
    }

    /// Decrypts bytes 64..512 as XTS-AES unit 0 and compares the magic.
    fn shows_magic(header: &[u8; 512], key: &[u8; HEADER_KEY_BYTES], magic: &[u8; 4]) -> bool {
        use cipher::KeyInit;
        let c1 = aes::Aes256::new_from_slice(&key[0..32]).expect("AES key");
        let c2 = aes::Aes256::new_from_slice(&key[32..64]).expect("AES key");
        let xts = xts_mode::Xts128::new(c1, c2);
        let mut area = header[64..512].to_vec();
        xts.decrypt_sector(&mut area, xts_mode::get_tweak_default(0));
        &area[..4] == magic
    }

    fn derive(
        v: &Volume,
        password: &[u8],
        keyfiles: &[&[u8]],
        salt: &[u8; 64],
    ) -> [u8; HEADER_KEY_BYTES] {
        let mixed = keyfile::apply(password, keyfiles, v.format).expect("keyfile pool");
        let mut key = [0u8; HEADER_KEY_BYTES];
        derive_header_key(
            v.prf,
            v.format,
            v.pim,
            &mixed,
            salt,
            &KdfLimits::default(),
            &never(),
            &mut key,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", v.name));
        key
    }

    /// Opens every listed volume matching `select`; for the first of them
    /// (and any TrueCrypt one: they are cheap) also checks a wrong password.
    fn open_volumes(select: impl Fn(&Volume) -> bool) {
        let chosen: Vec<Volume> = volumes().into_iter().filter(|v| select(v)).collect();
        assert!(!chosen.is_empty());
        let mut names: Vec<&str> = chosen.iter().map(|v| v.name.as_str()).collect();
        names.extend(
            chosen
                .iter()
                .flat_map(|v| v.keyfiles.iter().map(String::as_str)),
        );
        names.sort_unstable();
        names.dedup();
        let (_dir, root) = unpack(&names);
        for (i, v) in chosen.iter().enumerate() {
            let header = read_header(&root.join(&v.name), v.offset);
            let salt: [u8; 64] = header[..64].try_into().expect("salt");
            let contents: Vec<Vec<u8>> = v
                .keyfiles
                .iter()
                .map(|k| std::fs::read(root.join(k)).expect("keyfile"))
                .collect();
            let kfs: Vec<&[u8]> = contents.iter().map(Vec::as_slice).collect();
            let started = Instant::now();
            let key = derive(v, &v.password, &kfs, &salt);
            assert!(
                shows_magic(&header, &key, &v.magic),
                "{} (header at {}) does not open",
                v.name,
                v.offset
            );
            eprintln!("{} @{}: opens ({:?})", v.name, v.offset, started.elapsed());

            // Wrong inputs: every TrueCrypt volume (cheap) and the first
            // volume of each VeraCrypt group get a wrong password; keyfile
            // variants run for TrueCrypt and for VeraCrypt SHA-256 (the
            // fastest 500,000-iteration PRF).
            if i == 0 || v.format == Format::TrueCrypt {
                let mut wrong = v.password.clone();
                wrong.push(b'x');
                let key = derive(v, &wrong, &kfs, &salt);
                assert!(
                    !shows_magic(&header, &key, &v.magic),
                    "{}: wrong password",
                    v.name
                );
            }
            if !kfs.is_empty() && (v.format == Format::TrueCrypt || v.prf == Prf::Sha256) {
                let key = derive(v, &v.password, &kfs[..1], &salt);
                assert!(
                    !shows_magic(&header, &key, &v.magic),
                    "{}: one keyfile",
                    v.name
                );
                let key = derive(v, &v.password, &[], &salt);
                assert!(
                    !shows_magic(&header, &key, &v.magic),
                    "{}: no keyfile",
                    v.name
                );
            }
        }
    }

    #[test]
    fn corpus_truecrypt_volumes_open() {
        open_volumes(|v| v.format == Format::TrueCrypt);
    }

    #[test]
    fn corpus_veracrypt_sha512_volumes_open() {
        open_volumes(|v| v.format == Format::VeraCrypt && v.prf == Prf::Sha512);
    }

    #[test]
    fn corpus_veracrypt_sha256_volumes_open() {
        open_volumes(|v| v.format == Format::VeraCrypt && v.prf == Prf::Sha256);
    }

    #[test]
    fn corpus_veracrypt_blake2s_volumes_open() {
        open_volumes(|v| v.format == Format::VeraCrypt && v.prf == Prf::Blake2s);
    }

    #[test]
    fn corpus_veracrypt_whirlpool_and_ripemd160_volumes_open() {
        open_volumes(|v| {
            v.format == Format::VeraCrypt && matches!(v.prf, Prf::Whirlpool | Prf::Ripemd160)
        });
    }

    #[test]
    fn corpus_veracrypt_argon2id_pim0_opens() {
        open_volumes(|v| v.name == "vc_1-argon2id-xts-aes");
    }

    #[test]
    fn corpus_veracrypt_argon2id_pim8_opens() {
        open_volumes(|v| v.name == "vcpim_1_8-argon2id-xts-aes");
    }

    #[test]
    fn corpus_veracrypt_argon2id_pim33_opens() {
        open_volumes(|v| v.name == "vcpim_1_33-argon2id-xts-aes");
    }
}
