//! The header-key PRFs' checks: each hash's published digests, and PBKDF2
//! known answers through every path the key search takes
//! (`kdf::pbkdf2_paths`: the one-chain loops, the SIMD lanes at each level);
//! Argon2id's known answers through each build of its memory fill.

use super::{Check, lines, unhex};
use crate::volume::argon2id::{self, Fill};
use crate::volume::kdf::{self, Pbkdf2Path, Prf};
use sha2::Digest;

const HASHES: &str = include_str!("vectors/hashes.txt");
const ARGON2ID: &str = include_str!("vectors/argon2id.txt");
/// The published PBKDF2 vectors the key derivation's tests use, and the
/// ones VeraCrypt's self-test checks.
const PBKDF2: [&str; 2] = [
    include_str!("../volume/testdata/pbkdf2_kat.txt"),
    include_str!("vectors/pbkdf2.txt"),
];

/// The PBKDF2 PRFs (Argon2id is not one).
const PRFS: [Prf; 7] = [
    Prf::Sha512,
    Prf::Sha256,
    Prf::Whirlpool,
    Prf::Ripemd160,
    Prf::Streebog,
    Prf::Blake2s,
    Prf::Sha1,
];

pub fn run() -> Vec<Check> {
    let mut checks: Vec<Check> = PRFS.iter().map(|&p| hash(p)).collect();
    for prf in PRFS {
        for path in kdf::pbkdf2_paths(prf) {
            // BLAKE2s's one chain is what its lanes are held to.
            if (prf, path) == (Prf::Blake2s, Pbkdf2Path::Chain) {
                continue;
            }
            checks.push(Check {
                algorithm: format!("PBKDF2-HMAC-{}", prf.name()),
                backend: "tcd".into(),
                path: path.name(),
                problem: pbkdf2(prf, path).err(),
            });
        }
    }
    checks.extend(Fill::all().into_iter().map(|fill| Check {
        algorithm: Prf::Argon2id.name().to_owned(),
        backend: "tcd".into(),
        path: fill.name().into(),
        problem: argon2id_answers(fill).err(),
    }));
    checks
}

/// The reference implementation's Argon2id answers through `fill`.
fn argon2id_answers(fill: Fill) -> Result<(), String> {
    let never = std::sync::atomic::AtomicBool::new(false);
    let mut seen = 0;
    for line in lines(ARGON2ID) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [passes, memory_kib, password, salt, want] = f[..] else {
            return Err(format!("malformed Argon2id vector: {line}"));
        };
        let bad = |what: &str| format!("bad {what} in an Argon2id vector: {line}");
        let passes: u32 = passes.parse().map_err(|_| bad("passes"))?;
        let memory_kib: u32 = memory_kib.parse().map_err(|_| bad("memory"))?;
        let want = unhex(want)?;
        let mut got = vec![0u8; want.len()];
        argon2id::hash_with(
            fill,
            &unhex(password)?,
            &unhex(salt)?,
            memory_kib,
            passes,
            &never,
            &mut got,
        )
        .map_err(|e| e.to_string())?;
        if got != want {
            return Err(format!(
                "wrong key from {passes} passes over {memory_kib} KiB"
            ));
        }
        seen += 1;
    }
    if seen == 0 {
        return Err("no vector".into());
    }
    Ok(())
}

fn digest(prf: Prf, message: &[u8]) -> Vec<u8> {
    match prf {
        Prf::Sha512 => sha2::Sha512::digest(message).to_vec(),
        Prf::Sha256 => sha2::Sha256::digest(message).to_vec(),
        Prf::Whirlpool => whirlpool::Whirlpool::digest(message).to_vec(),
        Prf::Ripemd160 => ripemd::Ripemd160::digest(message).to_vec(),
        Prf::Sha1 => sha1::Sha1::digest(message).to_vec(),
        Prf::Streebog => streebog::Streebog512::digest(message).to_vec(),
        Prf::Blake2s => blake2::Blake2s256::digest(message).to_vec(),
        Prf::Argon2id => Vec::new(),
    }
}

/// The hash under `prf`'s HMAC against its published digests.
fn hash(prf: Prf) -> Check {
    let result = (|| {
        let mut seen = 0;
        for line in lines(HASHES) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let [name, message, want] = f[..] else {
                return Err(format!("malformed hash vector: {line}"));
            };
            if Prf::by_name(name) != Some(prf) {
                continue;
            }
            seen += 1;
            if digest(prf, &unhex(message)?) != unhex(want)? {
                return Err(format!("wrong digest of {message}"));
            }
        }
        if seen == 0 {
            return Err("no vector".into());
        }
        Ok(())
    })();
    Check {
        algorithm: prf.name().to_owned(),
        backend: "tcd".into(),
        path: "digest".into(),
        problem: result.err(),
    }
}

/// `prf`'s published PBKDF2 vectors along `path`. BLAKE2s has none
/// published: its lanes are held to the one-chain HMAC, whose hash the
/// digest check covers.
fn pbkdf2(prf: Prf, path: Pbkdf2Path) -> Result<(), String> {
    let mut seen = 0;
    for line in PBKDF2.iter().flat_map(|t| lines(t)) {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [name, iterations, password, salt, want] = f[..] else {
            return Err(format!("malformed PBKDF2 vector: {line}"));
        };
        if Prf::by_name(name) != Some(prf) {
            continue;
        }
        seen += 1;
        let iterations: u32 = iterations
            .parse()
            .map_err(|_| format!("bad iterations {iterations}"))?;
        let want = unhex(want)?;
        let got = along(
            prf,
            path,
            &unhex(password)?,
            &unhex(salt)?,
            iterations,
            want.len(),
        )?;
        if got != want {
            return Err(format!("wrong key from {iterations} iterations"));
        }
    }
    if seen == 0 && prf == Prf::Blake2s {
        let (password, salt) = (b"password", [0x12, 0x34, 0x56, 0x78]);
        let chain = along(prf, Pbkdf2Path::Chain, password, &salt, 5, 96)?;
        if along(prf, path, password, &salt, 5, 96)? != chain {
            return Err("the lanes differ from the one-chain HMAC".into());
        }
        seen += 1;
    }
    if seen == 0 {
        return Err("no vector".into());
    }
    Ok(())
}

fn along(
    prf: Prf,
    path: Pbkdf2Path,
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    len: usize,
) -> Result<Vec<u8>, String> {
    let mut out = vec![0u8; len];
    kdf::pbkdf2_along((prf, path), password, salt, iterations, &mut out)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prf_passes_on_every_path() {
        let checks = run();
        for c in &checks {
            assert_eq!(c.problem, None, "{} {}", c.algorithm, c.path);
        }
        assert!(checks.len() >= 2 * PRFS.len(), "{checks:?}");
    }
}
