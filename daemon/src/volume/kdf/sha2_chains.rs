//! PBKDF2-HMAC-SHA-512 and PBKDF2-HMAC-SHA-256 on the bare compression
//! functions.
//!
//! After the first HMAC, every PBKDF2 iteration hashes a message of one
//! fixed length (the previous output), so both of its hashes are exactly
//! one compression of a block whose padding never changes: from the keyed
//! inner and outer states, computed once per password. The `sha2` crate's
//! compression functions pick their fastest code at run time (SHA-NI for
//! SHA-256, AVX2 for SHA-512's message schedule).

use crate::error::{Error, Result};
use hmac::digest::{FixedOutput, KeyInit, Update};
use sha2::Digest;
use sha2::block_api::{compress256, compress512};
use std::sync::atomic::{AtomicBool, Ordering};
use zeroize::Zeroize;

use super::CANCEL_CHECK_EVERY;

/// SHA-512's initial state.
const SHA512_IV: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];

/// SHA-256's initial state.
const SHA256_IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The HMAC-SHA-512 states after the key's ipad and opad blocks.
struct Keyed512 {
    inner: [u64; 8],
    outer: [u64; 8],
}

impl Drop for Keyed512 {
    fn drop(&mut self) {
        self.inner.zeroize();
        self.outer.zeroize();
    }
}

struct Keyed256 {
    inner: [u32; 8],
    outer: [u32; 8],
}

impl Drop for Keyed256 {
    fn drop(&mut self) {
        self.inner.zeroize();
        self.outer.zeroize();
    }
}

fn keyed512(password: &[u8]) -> Keyed512 {
    let mut key = [0u8; 128];
    if password.len() > 128 {
        let mut digest = sha2::Sha512::digest(password);
        key[..64].copy_from_slice(&digest);
        digest.as_mut_slice().zeroize();
    } else {
        key[..password.len()].copy_from_slice(password);
    }
    let mut pad = [0u8; 128];
    let mut state = |byte: u8| {
        for (p, k) in pad.iter_mut().zip(&key) {
            *p = k ^ byte;
        }
        let mut s = SHA512_IV;
        compress512(&mut s, &[pad]);
        s
    };
    let keyed = Keyed512 {
        inner: state(0x36),
        outer: state(0x5c),
    };
    key.zeroize();
    pad.zeroize();
    keyed
}

fn keyed256(password: &[u8]) -> Keyed256 {
    let mut key = [0u8; 64];
    if password.len() > 64 {
        let mut digest = sha2::Sha256::digest(password);
        key[..32].copy_from_slice(&digest);
        digest.as_mut_slice().zeroize();
    } else {
        key[..password.len()].copy_from_slice(password);
    }
    let mut pad = [0u8; 64];
    let mut state = |byte: u8| {
        for (p, k) in pad.iter_mut().zip(&key) {
            *p = k ^ byte;
        }
        let mut s = SHA256_IV;
        compress256(&mut s, &[pad]);
        s
    };
    let keyed = Keyed256 {
        inner: state(0x36),
        outer: state(0x5c),
    };
    key.zeroize();
    pad.zeroize();
    keyed
}

/// PBKDF2-HMAC-SHA-512 output blocks `first`, `first + 1`, ... into `out`.
pub(crate) fn pbkdf2_sha512(
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    cancel: &AtomicBool,
    first: usize,
    out: &mut [u8],
) -> Result<()> {
    if iterations == 0 {
        return Err(Error::Kdf("PBKDF2 needs at least one iteration".into()));
    }
    let keyed = keyed512(password);
    // The message block of every iteration's two hashes: 64 bytes of the
    // previous output, then the padding of a 128 + 64-byte message.
    let mut block = [0u8; 128];
    block[64] = 0x80;
    block[112..].copy_from_slice(&((128u128 + 64) * 8).to_be_bytes());
    let mut acc = [0u64; 8];
    let mut result = Ok(());
    'blocks: for (index, chunk) in out.chunks_mut(64).enumerate() {
        let Ok(number) = u32::try_from(first + index + 1) else {
            result = Err(Error::Kdf("PBKDF2 output too long".into()));
            break;
        };
        // U1 = HMAC(P, S || INT(i)): a message of any length.
        let mut mac = <hmac::Hmac<sha2::Sha512> as KeyInit>::new_from_slice(password)
            .map_err(|_| Error::Kdf("HMAC key".into()))?;
        mac.update(salt);
        mac.update(&number.to_be_bytes());
        let mut u = mac.finalize_fixed();
        block[..64].copy_from_slice(&u);
        u.as_mut_slice().zeroize();
        for (a, b) in acc.iter_mut().zip(block[..64].chunks_exact(8)) {
            *a = u64::from_be_bytes(b.try_into().unwrap_or_default());
        }
        let mut left = iterations - 1;
        while left > 0 {
            let run = left.min(CANCEL_CHECK_EVERY);
            for _ in 0..run {
                let mut s = keyed.inner;
                compress512(&mut s, &[block]);
                store_be64(&mut block, &s);
                let mut s = keyed.outer;
                compress512(&mut s, &[block]);
                store_be64(&mut block, &s);
                for (a, w) in acc.iter_mut().zip(s) {
                    *a ^= w;
                }
            }
            left -= run;
            if cancel.load(Ordering::Relaxed) {
                result = Err(Error::Cancelled);
                break 'blocks;
            }
        }
        let mut bytes = [0u8; 128];
        store_be64(&mut bytes, &acc);
        chunk.copy_from_slice(&bytes[..chunk.len()]);
        bytes.zeroize();
    }
    block.zeroize();
    acc.zeroize();
    result
}

/// PBKDF2-HMAC-SHA-256 output blocks `first`, `first + 1`, ... into `out`.
pub(crate) fn pbkdf2_sha256(
    password: &[u8],
    salt: &[u8],
    iterations: u32,
    cancel: &AtomicBool,
    first: usize,
    out: &mut [u8],
) -> Result<()> {
    if iterations == 0 {
        return Err(Error::Kdf("PBKDF2 needs at least one iteration".into()));
    }
    let keyed = keyed256(password);
    // 32 bytes of the previous output, then the padding of a 64 + 32-byte
    // message.
    let mut block = [0u8; 64];
    block[32] = 0x80;
    block[56..].copy_from_slice(&((64u64 + 32) * 8).to_be_bytes());
    let mut acc = [0u32; 8];
    let mut result = Ok(());
    'blocks: for (index, chunk) in out.chunks_mut(32).enumerate() {
        let Ok(number) = u32::try_from(first + index + 1) else {
            result = Err(Error::Kdf("PBKDF2 output too long".into()));
            break;
        };
        let mut mac = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(password)
            .map_err(|_| Error::Kdf("HMAC key".into()))?;
        mac.update(salt);
        mac.update(&number.to_be_bytes());
        let mut u = mac.finalize_fixed();
        block[..32].copy_from_slice(&u);
        u.as_mut_slice().zeroize();
        for (a, b) in acc.iter_mut().zip(block[..32].chunks_exact(4)) {
            *a = u32::from_be_bytes(b.try_into().unwrap_or_default());
        }
        let mut left = iterations - 1;
        while left > 0 {
            let run = left.min(CANCEL_CHECK_EVERY);
            for _ in 0..run {
                let mut s = keyed.inner;
                compress256(&mut s, &[block]);
                store_be32(&mut block, &s);
                let mut s = keyed.outer;
                compress256(&mut s, &[block]);
                store_be32(&mut block, &s);
                for (a, w) in acc.iter_mut().zip(s) {
                    *a ^= w;
                }
            }
            left -= run;
            if cancel.load(Ordering::Relaxed) {
                result = Err(Error::Cancelled);
                break 'blocks;
            }
        }
        let mut bytes = [0u8; 64];
        store_be32(&mut bytes, &acc);
        chunk.copy_from_slice(&bytes[..chunk.len()]);
        bytes.zeroize();
    }
    block.zeroize();
    acc.zeroize();
    result
}

/// Writes the state as big-endian bytes at the start of `block`.
#[inline(always)]
fn store_be64(block: &mut [u8], state: &[u64; 8]) {
    for (b, w) in block.chunks_exact_mut(8).zip(state) {
        b.copy_from_slice(&w.to_be_bytes());
    }
}

#[inline(always)]
fn store_be32(block: &mut [u8], state: &[u32; 8]) {
    for (b, w) in block.chunks_exact_mut(4).zip(state) {
        b.copy_from_slice(&w.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn agree_with_the_generic_pbkdf2_over_random_inputs() {
        // The `hmac` and `sha2` crates through the generic PBKDF2 are the
        // reference: random passwords (empty, short, a block long, longer
        // than a block), salts, iteration counts, output lengths and first
        // blocks, from a fixed seed.
        let never = AtomicBool::new(false);
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x5ead_c0de);
        for case in 0..200 {
            let pw_len = match case % 5 {
                0 => 0,
                1 => 64,
                2 => 128,
                3 => rng.random_range(129..300),
                _ => rng.random_range(1..128),
            };
            let password: Vec<u8> = (0..pw_len).map(|_| rng.random()).collect();
            let salt: Vec<u8> = (0..rng.random_range(0..100))
                .map(|_| rng.random())
                .collect();
            let iterations = rng.random_range(1..70);
            let out_len = rng.random_range(1..200);
            let first = rng.random_range(0..4);
            for (name, block, fast, generic) in [
                (
                    "SHA-512",
                    64,
                    pbkdf2_sha512
                        as fn(&[u8], &[u8], u32, &AtomicBool, usize, &mut [u8]) -> Result<()>,
                    super::super::pbkdf2_from::<hmac::Hmac<sha2::Sha512>>
                        as fn(&[u8], &[u8], u32, &AtomicBool, usize, &mut [u8]) -> Result<()>,
                ),
                (
                    "SHA-256",
                    32,
                    pbkdf2_sha256,
                    super::super::pbkdf2_from::<hmac::Hmac<sha2::Sha256>>,
                ),
            ] {
                let mut want = vec![0u8; out_len + first * block];
                generic(&password, &salt, iterations, &never, 0, &mut want).expect("reference");
                let mut got = vec![0u8; out_len];
                fast(&password, &salt, iterations, &never, first, &mut got).expect("fast");
                assert_eq!(
                    hex::encode(&got),
                    hex::encode(&want[first * block..]),
                    "{name} case {case}: {pw_len}-byte password, {} salt bytes, {iterations} iterations, block {first}",
                    salt.len()
                );
            }
        }
    }

    #[test]
    fn a_cancel_stops_them() {
        let cancel = AtomicBool::new(true);
        let mut out = [0u8; 64];
        for f in [pbkdf2_sha512, pbkdf2_sha256] {
            let r = f(b"pw", b"salt", 100_000, &cancel, 0, &mut out);
            assert!(matches!(r, Err(Error::Cancelled)), "{r:?}");
        }
    }
}
