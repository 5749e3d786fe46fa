//! Camellia on AVX2, 32 blocks byte-sliced: after a byte transpose, ymm
//! register `p` holds byte `p` (most significant first) of all 32 blocks,
//! so every S-box, the P function (byte XORs) and FL/FL⁻¹ (byte logic
//! with a carried bit for the 32-bit rotation) work on 32 blocks at once.
//!
//! An S-box is nine `vpshufb`s of 16-entry tables and some byte logic
//! (`affine` module): an affine map, an inversion in `GF(2^8)` as a tower
//! over `GF(16)`, another affine map. No address depends on data or key.
//!
//! Soundness: everything here is `#[target_feature(enable = "avx2")]`;
//! `mod.rs` calls [`crypt`] only for a path whose AVX2 support was
//! confirmed by `is_x86_feature_detected!` at key setup.

use core::arch::x86_64::*;

use super::affine::{A_OVER, AFFINE, INV};
use super::{P_ROWS, SBOX_OF_BYTE, Schedule};
use zeroize::Zeroize;

/// Bytes per batch: 32 blocks.
const BATCH: usize = 512;

/// Byte register `c` of the state sits at index `REV[c]` of the transposed
/// array (the transpose below reverses the bits of both indices).
const REV: [usize; 16] = [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15];

/// The blocks of `blocks` (whole 16-byte blocks; any trailing bytes are
/// left alone) through Camellia in the direction of `s`.
#[target_feature(enable = "avx2")]
pub(super) fn crypt(s: &Schedule, blocks: &mut [u8]) {
    let (whole, rest) = blocks.as_chunks_mut::<BATCH>();
    for b in whole {
        batch(s, b);
    }
    let n = rest.len() / 16 * 16;
    if n > 0 {
        let mut buf = [0u8; BATCH];
        buf[..n].copy_from_slice(&rest[..n]);
        batch(s, &mut buf);
        rest[..n].copy_from_slice(&buf[..n]);
        buf.zeroize();
    }
}

#[target_feature(enable = "avx2")]
fn batch(s: &Schedule, b: &mut [u8; BATCH]) {
    let mut r = [_mm256_setzero_si256(); 16];
    for (i, reg) in r.iter_mut().enumerate() {
        // SAFETY: blocks i and i + 16 lie inside the 512-byte batch.
        *reg = unsafe {
            _mm256_set_m128i(
                _mm_loadu_si128(b.as_ptr().add(16 * (i + 16)).cast()),
                _mm_loadu_si128(b.as_ptr().add(16 * i).cast()),
            )
        };
    }
    transpose(&mut r);
    let mut x: [__m256i; 16] = core::array::from_fn(|c| r[REV[c]]);
    rounds(s, &mut x);
    // The output block is D2 || D1.
    for c in 0..16 {
        r[REV[c]] = x[(c + 8) % 16];
    }
    transpose(&mut r);
    for (i, reg) in r.iter().enumerate() {
        // SAFETY: as above.
        unsafe {
            _mm_storeu_si128(
                b.as_mut_ptr().add(16 * i).cast(),
                _mm256_castsi256_si128(*reg),
            );
            _mm_storeu_si128(
                b.as_mut_ptr().add(16 * (i + 16)).cast(),
                _mm256_extracti128_si256::<1>(*reg),
            );
        }
    }
    x.zeroize_regs();
    r.zeroize_regs();
}

/// Wipes registers left in memory.
trait ZeroizeRegs {
    fn zeroize_regs(&mut self);
}
impl ZeroizeRegs for [__m256i; 16] {
    #[inline(always)]
    fn zeroize_regs(&mut self) {
        for v in self.iter_mut() {
            // SAFETY: a valid, aligned, exclusive reference.
            unsafe { core::ptr::write_volatile(v, _mm256_setzero_si256()) };
        }
    }
}

/// A 16×16 byte transpose in each 128-bit lane, with the bits of the
/// register index and of the byte position each reversed: four rounds of
/// byte interleaves, each moving one bit of the byte position into the
/// register index. Its own inverse.
#[target_feature(enable = "avx2")]
fn transpose(r: &mut [__m256i; 16]) {
    for k in 0..4 {
        for i in 0..16 {
            if i & (1 << k) == 0 {
                let j = i | 1 << k;
                let lo = _mm256_unpacklo_epi8(r[i], r[j]);
                let hi = _mm256_unpackhi_epi8(r[i], r[j]);
                r[i] = lo;
                r[j] = hi;
            }
        }
    }
}

#[target_feature(enable = "avx2")]
fn rounds(s: &Schedule, x: &mut [__m256i; 16]) {
    let (d1, d2) = x.split_at_mut(8);
    let (d1, d2): (&mut [__m256i; 8], &mut [__m256i; 8]) = match (d1.try_into(), d2.try_into()) {
        (Ok(a), Ok(b)) => (a, b),
        _ => unreachable!("16 registers split in halves of 8"),
    };
    add_key(d1, s.kw[0]);
    add_key(d2, s.kw[1]);
    for g in 0..4 {
        for r in 0..3 {
            feistel(d1, d2, s.k[6 * g + 2 * r]);
            feistel(d2, d1, s.k[6 * g + 2 * r + 1]);
        }
        if g < 3 {
            fl(d1, s.ke[2 * g]);
            fl_inv(d2, s.ke[2 * g + 1]);
        }
    }
    add_key(d2, s.kw[2]);
    add_key(d1, s.kw[3]);
}

#[inline]
#[target_feature(enable = "avx2")]
fn splat(b: u8) -> __m256i {
    _mm256_set1_epi8(b as i8)
}

#[inline]
#[target_feature(enable = "avx2")]
fn add_key(h: &mut [__m256i; 8], k: u64) {
    for (v, kb) in h.iter_mut().zip(k.to_be_bytes()) {
        *v = _mm256_xor_si256(*v, splat(kb));
    }
}

/// `b ^= F(a, k)`.
#[inline]
#[target_feature(enable = "avx2")]
fn feistel(a: &[__m256i; 8], b: &mut [__m256i; 8], k: u64) {
    let kb = k.to_be_bytes();
    let t: [__m256i; 8] =
        core::array::from_fn(|i| lookup(SBOX_OF_BYTE[i], _mm256_xor_si256(a[i], splat(kb[i]))));
    for (j, v) in b.iter_mut().enumerate() {
        for (i, ti) in t.iter().enumerate() {
            if P_ROWS[j] >> i & 1 == 1 {
                *v = _mm256_xor_si256(*v, *ti);
            }
        }
    }
}

/// A 16-byte table in both 128-bit lanes.
#[inline]
#[target_feature(enable = "avx2")]
fn table(t: &[u8; 16]) -> __m256i {
    // SAFETY: reads the 16 bytes of `t`.
    _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(t.as_ptr().cast()) })
}

/// S-box kind `s` on every byte of `x`, as `affine::model` on one byte:
/// the input map by nibbles, the inversion in the tower field, the output
/// map by the inversion's two nibbles.
#[inline]
#[target_feature(enable = "avx2")]
fn lookup(s: usize, x: __m256i) -> __m256i {
    let (in_lo, in_hi, out_i, out_j, c) = &AFFINE[s];
    let nib = splat(0x0f);
    let lo = _mm256_and_si256(x, nib);
    let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(x), nib);
    let w = _mm256_xor_si256(
        _mm256_shuffle_epi8(table(in_lo), lo),
        _mm256_shuffle_epi8(table(in_hi), hi),
    );
    let k = _mm256_and_si256(w, nib);
    let i = _mm256_and_si256(_mm256_srli_epi16::<4>(w), nib);
    let inv = table(&INV);
    let ak = _mm256_shuffle_epi8(table(&A_OVER), k);
    let j = _mm256_xor_si256(i, k);
    let iak = _mm256_xor_si256(_mm256_shuffle_epi8(inv, i), ak);
    let jak = _mm256_xor_si256(_mm256_shuffle_epi8(inv, j), ak);
    let io = _mm256_xor_si256(_mm256_shuffle_epi8(inv, iak), j);
    let jo = _mm256_xor_si256(_mm256_shuffle_epi8(inv, jak), i);
    _mm256_xor_si256(
        _mm256_xor_si256(
            _mm256_shuffle_epi8(table(out_i), io),
            _mm256_shuffle_epi8(table(out_j), jo),
        ),
        splat(*c),
    )
}

/// The 32-bit words `w` (four byte registers, most significant first)
/// rotated left by one bit.
#[inline]
#[target_feature(enable = "avx2")]
fn rotl1(w: [__m256i; 4]) -> [__m256i; 4] {
    let one = splat(1);
    core::array::from_fn(|b| {
        let carry = _mm256_and_si256(_mm256_srli_epi16::<7>(w[(b + 1) % 4]), one);
        _mm256_or_si256(_mm256_add_epi8(w[b], w[b]), carry)
    })
}

#[inline]
#[target_feature(enable = "avx2")]
fn fl(h: &mut [__m256i; 8], k: u64) {
    let kb = k.to_be_bytes();
    let a = rotl1(core::array::from_fn(|i| {
        _mm256_and_si256(h[i], splat(kb[i]))
    }));
    for i in 0..4 {
        h[4 + i] = _mm256_xor_si256(h[4 + i], a[i]);
    }
    for i in 0..4 {
        h[i] = _mm256_xor_si256(h[i], _mm256_or_si256(h[4 + i], splat(kb[4 + i])));
    }
}

#[inline]
#[target_feature(enable = "avx2")]
fn fl_inv(h: &mut [__m256i; 8], k: u64) {
    let kb = k.to_be_bytes();
    for i in 0..4 {
        h[i] = _mm256_xor_si256(h[i], _mm256_or_si256(h[4 + i], splat(kb[4 + i])));
    }
    let a = rotl1(core::array::from_fn(|i| {
        _mm256_and_si256(h[i], splat(kb[i]))
    }));
    for i in 0..4 {
        h[4 + i] = _mm256_xor_si256(h[4 + i], a[i]);
    }
}
