//! The SSE2 path: a block in an xmm register, each round the XOR of 16
//! table entries loaded straight into it, the byte indices taken from the
//! block's two 64-bit halves in general registers (already scaled by the
//! entry size, so an index is one shift and one AND).
//!
//! Soundness: SSE2 is part of x86-64 itself, so every intrinsic here runs
//! on any processor this code is built for. The table loads stay inside
//! the 64 KiB of one direction's [`Tables`] (see `lookup`).

use core::arch::x86_64::*;

use super::{Kuznyechik, LANES, PI, PI_INV, Tables};

/// Bytes per table (256 entries of 16 bytes).
const TABLE: usize = 256 * 16;

/// The entry at byte offset `off` (masked to a multiple of 16 below 4096)
/// of table `j`.
#[inline]
#[target_feature(enable = "sse2")]
fn entry(t: &Tables, j: usize, off: u64) -> __m128i {
    let off = (off & 0xFF0) as usize;
    let base: *const u8 = (&raw const t.t).cast();
    // SAFETY: j < 16 and off <= 0xFF0, so the 16 bytes read lie inside the
    // 16 * 4096 bytes of `t.t`; entries are 16-byte aligned (`Entry`).
    unsafe { _mm_load_si128(base.add((j % 16) * TABLE + off).cast()) }
}

/// Entry `(w >> 8k) & 0xFF` of table `j`: `w` is the 64-bit half of the
/// block that holds byte `j` (`k = j % 8`).
#[inline]
#[target_feature(enable = "sse2")]
fn lookup(t: &Tables, j: usize, w: u64) -> __m128i {
    // The byte times 16, the entry's offset in its table.
    match j % 8 {
        0 => entry(t, j, w << 4),
        k => entry(t, j, w >> (8 * k - 4)),
    }
}

/// The block's two 64-bit halves (bytes 0..8 and 8..16, little-endian).
#[inline]
#[target_feature(enable = "sse2")]
fn halves(x: __m128i) -> (u64, u64) {
    let lo = _mm_cvtsi128_si64(x) as u64;
    let hi = _mm_cvtsi128_si64(_mm_unpackhi_epi64(x, x)) as u64;
    (lo, hi)
}

/// One round: the XOR over j of `t[j][byte j of x]`.
#[inline]
#[target_feature(enable = "sse2")]
fn round(t: &Tables, x: __m128i) -> __m128i {
    let (lo, hi) = halves(x);
    // Two accumulators: shorter dependency chains.
    let mut a = lookup(t, 0, lo);
    let mut b = lookup(t, 8, hi);
    for j in 1..8 {
        a = _mm_xor_si128(a, lookup(t, j, lo));
        b = _mm_xor_si128(b, lookup(t, 8 + j, hi));
    }
    _mm_xor_si128(a, b)
}

#[inline]
#[target_feature(enable = "sse2")]
fn load(b: &[u8; 16]) -> __m128i {
    // SAFETY: 16 readable bytes; unaligned load.
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

#[inline]
#[target_feature(enable = "sse2")]
fn store(b: &mut [u8; 16], x: __m128i) {
    // SAFETY: 16 writable bytes; unaligned store.
    unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), x) }
}

#[inline]
#[target_feature(enable = "sse2")]
fn encrypt_n<const N: usize>(c: &Kuznyechik, blocks: &mut [[u8; 16]; N]) {
    let (t, k) = (&c.tables.enc, &c.keys.enc);
    let mut x: [__m128i; N] = core::array::from_fn(|i| load(&blocks[i]));
    for rk in &k[..9] {
        let rk = load(rk);
        for x in &mut x {
            *x = round(t, _mm_xor_si128(*x, rk));
        }
    }
    let last = load(&k[9]);
    for (b, x) in blocks.iter_mut().zip(x) {
        store(b, _mm_xor_si128(x, last));
    }
}

/// `s` on every byte of `x` (the last step of decryption), through
/// general registers.
#[inline]
#[target_feature(enable = "sse2")]
fn sub(s: &[u8; 256], x: __m128i) -> __m128i {
    let half = |w: u64| {
        (0..8).fold(0u64, |acc, k| {
            acc | u64::from(s[usize::from((w >> (8 * k)) as u8)]) << (8 * k)
        })
    };
    let (lo, hi) = halves(x);
    _mm_set_epi64x(half(hi) as i64, half(lo) as i64)
}

/// The first table round of decryption, `t[j][pi(byte j of x)]`: the
/// decryption tables start with pi^-1, so this is L^-1(x).
#[inline]
#[target_feature(enable = "sse2")]
fn round_pi(t: &Tables, x: __m128i) -> __m128i {
    let (lo, hi) = halves(x);
    let off = |j: usize, w: u64| u64::from(PI[usize::from((w >> (8 * (j % 8))) as u8)]) << 4;
    let mut a = entry(t, 0, off(0, lo));
    let mut b = entry(t, 8, off(8, hi));
    for j in 1..8 {
        a = _mm_xor_si128(a, entry(t, j, off(j, lo)));
        b = _mm_xor_si128(b, entry(t, 8 + j, off(8 + j, hi)));
    }
    _mm_xor_si128(a, b)
}

#[inline]
#[target_feature(enable = "sse2")]
fn decrypt_n<const N: usize>(c: &Kuznyechik, blocks: &mut [[u8; 16]; N]) {
    let (t, k) = (&c.tables.dec, &c.keys.dec);
    let mut y: [__m128i; N] = core::array::from_fn(|i| load(&blocks[i]));
    for y in &mut y {
        *y = _mm_xor_si128(round_pi(t, *y), load(&k[0]));
    }
    for rk in &k[1..9] {
        let rk = load(rk);
        for y in &mut y {
            *y = _mm_xor_si128(round(t, *y), rk);
        }
    }
    let first = load(&k[9]);
    for (b, y) in blocks.iter_mut().zip(y) {
        store(b, _mm_xor_si128(sub(&PI_INV, y), first));
    }
}

/// Runs `group` over runs of `LANES` blocks and `one` over the rest.
#[inline]
#[target_feature(enable = "sse2")]
fn run(
    c: &Kuznyechik,
    blocks: &mut [u8],
    group: fn(&Kuznyechik, &mut [[u8; 16]; LANES]),
    one: fn(&Kuznyechik, &mut [[u8; 16]; 1]),
) {
    // The trait promises a multiple of 16 bytes; a stray tail is left as is.
    let (blocks, _) = blocks.as_chunks_mut::<16>();
    let (groups, rest) = blocks.as_chunks_mut::<LANES>();
    for g in groups {
        group(c, g);
    }
    for b in rest {
        one(c, core::array::from_mut(b));
    }
}

#[target_feature(enable = "sse2")]
fn encrypt_sse2(c: &Kuznyechik, blocks: &mut [u8]) {
    run(c, blocks, |c, g| encrypt_n(c, g), |c, b| encrypt_n(c, b));
}

#[target_feature(enable = "sse2")]
fn decrypt_sse2(c: &Kuznyechik, blocks: &mut [u8]) {
    run(c, blocks, |c, g| decrypt_n(c, g), |c, b| decrypt_n(c, b));
}

pub(super) fn encrypt(c: &Kuznyechik, blocks: &mut [u8]) {
    // SAFETY: SSE2 is part of x86-64.
    unsafe { encrypt_sse2(c, blocks) }
}

pub(super) fn decrypt(c: &Kuznyechik, blocks: &mut [u8]) {
    // SAFETY: SSE2 is part of x86-64.
    unsafe { decrypt_sse2(c, blocks) }
}
