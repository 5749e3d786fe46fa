//! PBKDF2-HMAC-Whirlpool on a table-driven compression function.
//!
//! Whirlpool's compression is the block cipher W keyed by the chaining
//! value, in Miyaguchi–Preneel mode: H' = W[H](m) ^ H ^ m. W runs ten
//! rounds on an 8x8 byte state, each the substitution γ, the column
//! rotation π, the row-by-matrix product θ and the key addition σ, and its
//! key schedule runs the same round on the key with round constants. The
//! first three steps of a round are one table lookup per input byte here:
//! `TABLE[k][x]` is byte `x` substituted and multiplied by row `k` of the
//! matrix, so an output row is eight lookups, one from each input row.
//!
//! Every PBKDF2 iteration hashes 64 bytes after the key's block, so both
//! hashes are two compressions: the message block, then the one padding
//! block of a 128-byte message. That block is a constant, but the key it
//! meets is the chaining value of the message block, so only its zero rows
//! fall out of the compression (inlined, they cost nothing). The state is
//! kept as eight big-endian row words, which are the hash's output bytes
//! as they are: the output is the next message without conversion.
//!
//! The tables and the round constants are computed at compile time from
//! the definition (Barreto and Rijmen, "The Whirlpool hashing function",
//! 2003): the S-box from its mini-boxes E and R, the circulant matrix
//! cir(1, 1, 4, 1, 8, 5, 2, 9) over GF(2^8) modulo x^8 + x^4 + x^3 + x^2 + 1.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use zeroize::Zeroize;

use super::CANCEL_CHECK_EVERY;

/// The mini-box E: E(u) = B^u in GF(2^4) modulo x^4 + x + 1, E(F) = 0.
const E: [u8; 16] = [
    0x1, 0xb, 0x9, 0xc, 0xd, 0x6, 0xf, 0x3, 0xe, 0x8, 0x7, 0x4, 0xa, 0x2, 0x5, 0x0,
];

/// The pseudo-random mini-box R.
const R: [u8; 16] = [
    0x7, 0xc, 0xb, 0xd, 0xe, 0x4, 0x9, 0xf, 0x6, 0x3, 0x8, 0xa, 0x2, 0x5, 0x1, 0x0,
];

/// E's inverse.
const E_INV: [u8; 16] = {
    let mut inv = [0u8; 16];
    let mut u = 0;
    while u < 16 {
        inv[E[u] as usize] = u as u8;
        u += 1;
    }
    inv
};

/// The S-box: the high nibble through E and the low through E^-1, R of
/// their sum added to both, then E and E^-1 again.
const SBOX: [u8; 256] = {
    let mut sbox = [0u8; 256];
    let mut x = 0;
    while x < 256 {
        let a = E[x >> 4];
        let b = E_INV[x & 0xf];
        let r = R[(a ^ b) as usize];
        sbox[x] = (E[(a ^ r) as usize] << 4) | E_INV[(b ^ r) as usize];
        x += 1;
    }
    sbox
};

/// Product in GF(2^8) modulo x^8 + x^4 + x^3 + x^2 + 1 (0x11d).
const fn gf_mul(a: u8, b: u8) -> u8 {
    let mut a = a as u16;
    let mut b = b;
    let mut product = 0u16;
    while b != 0 {
        if b & 1 != 0 {
            product ^= a;
        }
        a <<= 1;
        if a & 0x100 != 0 {
            a ^= 0x11d;
        }
        b >>= 1;
    }
    product as u8
}

/// The first row of the circulant matrix of θ: row `k` is this row
/// rotated right by `k` places.
const CIRCULANT: [u8; 8] = [1, 1, 4, 1, 8, 5, 2, 9];

/// `TABLE[k][x]`: byte `x` substituted, times row `k` of the matrix, as a
/// big-endian row word (column 0 in the top byte).
static TABLE: [[u64; 256]; 8] = {
    let mut table = [[0u64; 256]; 8];
    let mut k = 0;
    while k < 8 {
        let mut x = 0;
        while x < 256 {
            let mut row = 0u64;
            let mut j = 0;
            while j < 8 {
                let m = CIRCULANT[(j + 8 - k) % 8];
                row |= (gf_mul(SBOX[x], m) as u64) << (56 - 8 * j);
                j += 1;
            }
            table[k][x] = row;
            x += 1;
        }
        k += 1;
    }
    table
};

/// The key schedule's round constants: row 0 of round r's constant is
/// S-box entries 8(r - 1) .. 8r, its other rows zero.
const ROUND_CONSTANTS: [u64; 10] = {
    let mut rc = [0u64; 10];
    let mut r = 0;
    while r < 10 {
        let mut j = 0;
        while j < 8 {
            rc[r] |= (SBOX[8 * r + j] as u64) << (56 - 8 * j);
            j += 1;
        }
        r += 1;
    }
    rc
};

type Words = [u64; 8];

/// θ(π(γ(a))): output row `i` takes column `k` from row `i - k`.
#[inline(always)]
fn rho(a: &Words) -> Words {
    core::array::from_fn(|i| {
        let byte = |k: usize| ((a[(i + 8 - k) % 8] >> (56 - 8 * k)) & 0xff) as usize;
        TABLE[0][byte(0)]
            ^ TABLE[1][byte(1)]
            ^ TABLE[2][byte(2)]
            ^ TABLE[3][byte(3)]
            ^ TABLE[4][byte(4)]
            ^ TABLE[5][byte(5)]
            ^ TABLE[6][byte(6)]
            ^ TABLE[7][byte(7)]
    })
}

/// The compression: h = W[h](m) ^ h ^ m. Not inlined: the four calls of
/// an iteration stay one copy of its twenty rounds.
#[inline(never)]
fn compress(h: &mut Words, m: &Words) {
    let mut key = *h;
    let mut state: Words = core::array::from_fn(|i| m[i] ^ key[i]);
    for rc in ROUND_CONSTANTS {
        key = rho(&key);
        key[0] ^= rc;
        state = rho(&state);
        for (s, k) in state.iter_mut().zip(&key) {
            *s ^= k;
        }
    }
    for i in 0..8 {
        h[i] ^= state[i] ^ m[i];
    }
}

fn words(bytes: &[u8]) -> Words {
    let mut w = [0u64; 8];
    for (w, b) in w.iter_mut().zip(bytes.chunks_exact(8)) {
        let mut be = [0u8; 8];
        be.copy_from_slice(b);
        *w = u64::from_be_bytes(be);
    }
    w
}

fn bytes_of(w: &Words) -> [u8; 64] {
    let mut bytes = [0u8; 64];
    for (b, w) in bytes.chunks_exact_mut(8).zip(w) {
        b.copy_from_slice(&w.to_be_bytes());
    }
    bytes
}

/// Whirlpool of `done` bytes already compressed into `h` (a multiple of
/// 64) followed by `msg`: the padding is a one bit, zeros, and the length
/// in bits in the last 32 bytes of the last block.
fn finish(mut h: Words, done: u64, msg: &[u8]) -> Words {
    let mut blocks = msg.chunks_exact(64);
    for block in &mut blocks {
        let mut m = words(block);
        compress(&mut h, &m);
        m.zeroize();
    }
    let tail = blocks.remainder();
    let mut last = [0u8; 128];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    let len = if tail.len() < 32 { 64 } else { 128 };
    let bits = (u128::from(done) + msg.len() as u128) * 8;
    last[len - 16..len].copy_from_slice(&bits.to_be_bytes());
    for block in last[..len].chunks_exact(64) {
        let mut m = words(block);
        compress(&mut h, &m);
        m.zeroize();
    }
    last.zeroize();
    h
}

/// The hash state after one 64-byte block (the key's ipad or opad).
struct Keyed {
    h: Words,
}

impl Drop for Keyed {
    fn drop(&mut self) {
        self.h.zeroize();
    }
}

/// The padding block of a 128-byte message: the one bit, then 1024 in
/// the length field.
const PAD: Words = [1 << 63, 0, 0, 0, 0, 0, 0, 1024];
const ZERO: Words = [0; 8];

impl Keyed {
    fn new(key: &[u8; 64], byte: u8) -> Keyed {
        let mut pad = [0u8; 64];
        for (p, k) in pad.iter_mut().zip(key) {
            *p = k ^ byte;
        }
        let mut m = words(&pad);
        pad.zeroize();
        let mut h = ZERO;
        compress(&mut h, &m);
        m.zeroize();
        Keyed { h }
    }

    /// Whirlpool of the key's block then the 64 bytes `m`, in `out`.
    #[inline(always)]
    fn hash(&self, m: &Words, out: &mut Words) {
        let mut h = self.h;
        compress(&mut h, m);
        compress(&mut h, &PAD);
        *out = h;
        h.zeroize();
    }

    /// Whirlpool of the key's block then `msg`, of any length.
    fn hash_any(&self, msg: &[u8]) -> Words {
        finish(self.h, 64, msg)
    }
}

/// U1 = HMAC(P, S || INT(i)) for output block `number`.
fn first_u(inner: &Keyed, outer: &Keyed, salt: &[u8], number: u32) -> Words {
    let mut msg = Vec::with_capacity(salt.len() + 4);
    msg.extend_from_slice(salt);
    msg.extend_from_slice(&number.to_be_bytes());
    let mut t = inner.hash_any(&msg);
    let mut u = ZERO;
    outer.hash(&t, &mut u);
    t.zeroize();
    u
}

/// PBKDF2-HMAC-Whirlpool output blocks `first`, `first + 1`, ... into
/// `out`.
pub(crate) fn pbkdf2_whirlpool(
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
    let mut key = [0u8; 64];
    if password.len() > 64 {
        let mut digest = bytes_of(&finish(ZERO, 0, password));
        key.copy_from_slice(&digest);
        digest.zeroize();
    } else {
        key[..password.len()].copy_from_slice(password);
    }
    let inner = Keyed::new(&key, 0x36);
    let outer = Keyed::new(&key, 0x5c);
    key.zeroize();
    let mut u = ZERO;
    let mut t = ZERO;
    let mut acc = ZERO;
    let mut result = Ok(());
    'blocks: for (index, chunk) in out.chunks_mut(64).enumerate() {
        let Ok(number) = u32::try_from(first + index + 1) else {
            result = Err(Error::Kdf("PBKDF2 output too long".into()));
            break;
        };
        u = first_u(&inner, &outer, salt, number);
        acc = u;
        let mut left = iterations - 1;
        while left > 0 {
            let run = left.min(CANCEL_CHECK_EVERY);
            for _ in 0..run {
                inner.hash(&u, &mut t);
                outer.hash(&t, &mut u);
                for (a, w) in acc.iter_mut().zip(&u) {
                    *a ^= w;
                }
            }
            left -= run;
            if cancel.load(Ordering::Relaxed) {
                result = Err(Error::Cancelled);
                break 'blocks;
            }
        }
        let mut bytes = bytes_of(&acc);
        chunk.copy_from_slice(&bytes[..chunk.len()]);
        bytes.zeroize();
    }
    u.zeroize();
    t.zeroize();
    acc.zeroize();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use whirlpool::Digest;

    #[test]
    fn the_sbox_and_constants_are_the_published_ones() {
        // The first entries of the S-box table in the specification.
        assert_eq!(SBOX[..8], [0x18, 0x23, 0xc6, 0xe8, 0x87, 0xb8, 0x01, 0x4f]);
        assert_eq!(ROUND_CONSTANTS[0], 0x1823_c6e8_87b8_014f);
        let mut seen = [false; 256];
        for s in SBOX {
            seen[usize::from(s)] = true;
        }
        assert!(seen.iter().all(|&s| s), "the S-box is a permutation");
    }

    #[test]
    fn the_compression_matches_the_reference_hash() {
        // Whirlpool of 128 bytes through `Keyed` (a zero-byte pad leaves
        // the key block as it is) against the `whirlpool` crate.
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..20 {
            let mut key = [0u8; 64];
            rng.fill(&mut key[..]);
            let mut msg = [0u8; 64];
            rng.fill(&mut msg[..]);
            let keyed = Keyed::new(&key, 0);
            let mut out = ZERO;
            keyed.hash(&words(&msg), &mut out);
            let mut whole = key.to_vec();
            whole.extend_from_slice(&msg);
            let want = whirlpool::Whirlpool::digest(&whole);
            assert_eq!(bytes_of(&out)[..], want[..]);
        }
    }

    #[test]
    fn the_hash_of_any_length_matches_the_reference_hash() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(11);
        for len in (0..200).chain([255, 256, 1000]) {
            let msg: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            let want = whirlpool::Whirlpool::digest(&msg);
            assert_eq!(
                bytes_of(&finish(ZERO, 0, &msg))[..],
                want[..],
                "{len} bytes"
            );
        }
    }

    #[test]
    fn agrees_with_the_generic_pbkdf2_over_random_inputs() {
        let never = AtomicBool::new(false);
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x0311_4bf0);
        for case in 0..60 {
            let pw_len = match case % 4 {
                0 => 0,
                1 => 64,
                2 => rng.random_range(65..200),
                _ => rng.random_range(1..64),
            };
            let password: Vec<u8> = (0..pw_len).map(|_| rng.random()).collect();
            let salt: Vec<u8> = (0..rng.random_range(0..100))
                .map(|_| rng.random())
                .collect();
            let iterations = rng.random_range(1..20);
            let out_len = rng.random_range(1..200);
            let first = rng.random_range(0..4);
            let mut want = vec![0u8; out_len + first * 64];
            super::super::pbkdf2_from::<hmac::Hmac<whirlpool::Whirlpool>>(
                &password, &salt, iterations, &never, 0, &mut want,
            )
            .expect("reference");
            let mut got = vec![0u8; out_len];
            pbkdf2_whirlpool(&password, &salt, iterations, &never, first, &mut got).expect("fast");
            assert_eq!(
                hex::encode(&got),
                hex::encode(&want[first * 64..]),
                "case {case}: {pw_len}-byte password, {iterations} iterations, block {first}"
            );
        }
    }

    #[test]
    fn a_cancelled_derivation_stops() {
        let cancel = AtomicBool::new(true);
        let mut out = [0u8; 64];
        let result = pbkdf2_whirlpool(b"pw", b"salt", CANCEL_CHECK_EVERY + 2, &cancel, 0, &mut out);
        assert!(matches!(result, Err(Error::Cancelled)));
    }
}
