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

/// One SHA-2 hash as the loop below needs it: its compression function on
/// eight words, and the sizes that follow from the word size.
pub(super) trait Sha2 {
    type Word: Copy + Default + std::ops::BitXorAssign + Zeroize;
    /// A message block: 16 words.
    type Block: Copy + AsRef<[u8]> + AsMut<[u8]> + Zeroize;
    type Hash: Digest;
    type Mac: KeyInit + Update + FixedOutput;
    const IV: [Self::Word; 8];
    const EMPTY_BLOCK: Self::Block;
    const WORD_BYTES: usize;
    fn compress(state: &mut [Self::Word; 8], block: &Self::Block);
    fn load(bytes: &[u8]) -> Self::Word;
    fn store(word: Self::Word, bytes: &mut [u8]);
}

pub(super) struct Sha512;
pub(super) struct Sha256;

impl Sha2 for Sha512 {
    type Word = u64;
    type Block = [u8; 128];
    type Hash = sha2::Sha512;
    type Mac = hmac::Hmac<sha2::Sha512>;
    const IV: [u64; 8] = SHA512_IV;
    const EMPTY_BLOCK: [u8; 128] = [0; 128];
    const WORD_BYTES: usize = 8;
    #[inline(always)]
    fn compress(state: &mut [u64; 8], block: &[u8; 128]) {
        compress512(state, std::slice::from_ref(block));
    }
    #[inline(always)]
    fn load(bytes: &[u8]) -> u64 {
        u64::from_be_bytes(bytes.try_into().unwrap_or_default())
    }
    #[inline(always)]
    fn store(word: u64, bytes: &mut [u8]) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
}

impl Sha2 for Sha256 {
    type Word = u32;
    type Block = [u8; 64];
    type Hash = sha2::Sha256;
    type Mac = hmac::Hmac<sha2::Sha256>;
    const IV: [u32; 8] = SHA256_IV;
    const EMPTY_BLOCK: [u8; 64] = [0; 64];
    const WORD_BYTES: usize = 4;
    #[inline(always)]
    fn compress(state: &mut [u32; 8], block: &[u8; 64]) {
        compress256(state, std::slice::from_ref(block));
    }
    #[inline(always)]
    fn load(bytes: &[u8]) -> u32 {
        u32::from_be_bytes(bytes.try_into().unwrap_or_default())
    }
    #[inline(always)]
    fn store(word: u32, bytes: &mut [u8]) {
        bytes.copy_from_slice(&word.to_be_bytes());
    }
}

/// The HMAC states after the key's ipad and opad blocks.
pub(super) struct Keyed<H: Sha2> {
    pub(super) inner: [H::Word; 8],
    pub(super) outer: [H::Word; 8],
}

impl<H: Sha2> Drop for Keyed<H> {
    fn drop(&mut self) {
        self.inner.zeroize();
        self.outer.zeroize();
    }
}

impl<H: Sha2> Keyed<H> {
    pub(super) fn new(password: &[u8]) -> Self {
        let mut key = H::EMPTY_BLOCK;
        let k = key.as_mut();
        if password.len() > k.len() {
            let mut digest = H::Hash::digest(password);
            k[..digest.len()].copy_from_slice(&digest);
            digest.as_mut_slice().zeroize();
        } else {
            k[..password.len()].copy_from_slice(password);
        }
        let mut pad = H::EMPTY_BLOCK;
        let mut state = |byte: u8| {
            for (p, k) in pad.as_mut().iter_mut().zip(key.as_ref()) {
                *p = k ^ byte;
            }
            let mut s = H::IV;
            H::compress(&mut s, &pad);
            s
        };
        let keyed = Keyed {
            inner: state(0x36),
            outer: state(0x5c),
        };
        key.zeroize();
        pad.zeroize();
        keyed
    }
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
    pbkdf2::<Sha512>(password, salt, iterations, cancel, first, out)
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
    pbkdf2::<Sha256>(password, salt, iterations, cancel, first, out)
}

fn pbkdf2<H: Sha2>(
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
    let keyed = Keyed::<H>::new(password);
    let output = 8 * H::WORD_BYTES;
    // The message block of every iteration's two hashes: the previous
    // output, then the padding of a message one block plus one output
    // long (its bit length big-endian at the end).
    let mut block = H::EMPTY_BLOCK;
    let len = block.as_ref().len();
    block.as_mut()[output] = 0x80;
    block.as_mut()[len - 8..].copy_from_slice(&(((len + output) * 8) as u64).to_be_bytes());
    let mut acc = [H::Word::default(); 8];
    let mut result = Ok(());
    'blocks: for (index, chunk) in out.chunks_mut(output).enumerate() {
        let Ok(number) = u32::try_from(first + index + 1) else {
            result = Err(Error::Kdf("PBKDF2 output too long".into()));
            break;
        };
        if let Err(e) = first_u::<H>(password, salt, number, &mut block.as_mut()[..output]) {
            result = Err(e);
            break;
        }
        for (a, b) in acc
            .iter_mut()
            .zip(block.as_ref().chunks_exact(H::WORD_BYTES))
        {
            *a = H::load(b);
        }
        let mut left = iterations - 1;
        while left > 0 {
            let run = left.min(CANCEL_CHECK_EVERY);
            for _ in 0..run {
                let mut s = keyed.inner;
                H::compress(&mut s, &block);
                store::<H>(block.as_mut(), &s);
                let mut s = keyed.outer;
                H::compress(&mut s, &block);
                store::<H>(block.as_mut(), &s);
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
        let mut bytes = H::EMPTY_BLOCK;
        store::<H>(bytes.as_mut(), &acc);
        chunk.copy_from_slice(&bytes.as_ref()[..chunk.len()]);
        bytes.zeroize();
    }
    block.zeroize();
    acc.zeroize();
    result
}

/// U1 = HMAC(P, S || INT(i)) of block `number` (1-based) into `out`: a
/// message of any length, so through the `hmac` crate.
fn first_u<H: Sha2>(password: &[u8], salt: &[u8], number: u32, out: &mut [u8]) -> Result<()> {
    let mut mac =
        <H::Mac as KeyInit>::new_from_slice(password).map_err(|_| Error::Kdf("HMAC key".into()))?;
    mac.update(salt);
    mac.update(&number.to_be_bytes());
    let mut u = mac.finalize_fixed();
    out.copy_from_slice(&u);
    u.as_mut_slice().zeroize();
    Ok(())
}

/// U1 of SHA-512 block `block` (0-based) as eight big-endian words.
pub(super) fn first_u512(password: &[u8], salt: &[u8], block: usize) -> Result<[u64; 8]> {
    let number =
        u32::try_from(block + 1).map_err(|_| Error::Kdf("PBKDF2 output too long".into()))?;
    let mut bytes = [0u8; 64];
    let result = first_u::<Sha512>(password, salt, number, &mut bytes);
    let mut words = [0u64; 8];
    for (w, b) in words.iter_mut().zip(bytes.chunks_exact(8)) {
        *w = Sha512::load(b);
    }
    bytes.zeroize();
    result.map(|()| words)
}

/// Writes the state as big-endian bytes at the start of `block`.
#[inline(always)]
fn store<H: Sha2>(block: &mut [u8], state: &[H::Word; 8]) {
    for (b, w) in block.chunks_exact_mut(H::WORD_BYTES).zip(state) {
        H::store(*w, b);
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
