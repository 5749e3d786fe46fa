//! Camellia on AVX2, 32 blocks byte-sliced: after a byte transpose, ymm
//! register `p` holds byte `p` (most significant first) of all 32 blocks,
//! so every S-box, the P function (byte XORs) and FL/FL⁻¹ (byte logic
//! with a carried bit for the 32-bit rotation) work on 32 blocks at once.
//!
//! An S-box lookup is sixteen `vpshufb`s, one per 16-entry slice of the
//! table indexed by the low nibble, and fifteen `vpblendvb`s that keep the
//! slice of the high nibble. Every slice is read for every byte: no address
//! depends on data or key.
//!
//! Soundness: everything here is `#[target_feature(enable = "avx2")]`;
//! `mod.rs` calls [`crypt`] only for a path whose AVX2 support was
//! confirmed by `is_x86_feature_detected!` at key setup.

use core::arch::x86_64::*;

use super::{P_ROWS, SBOX_OF_BYTE, Schedule, sbox};
use zeroize::Zeroize;

/// Bytes per batch: 32 blocks.
const BATCH: usize = 512;

/// `TABLES[s][h]`: entries `16h..16h+15` of S-box kind `s`, in both
/// 128-bit lanes.
static TABLES: [[[u8; 32]; 16]; 4] = tables();

const fn tables() -> [[[u8; 32]; 16]; 4] {
    let mut t = [[[0u8; 32]; 16]; 4];
    let mut s = 0;
    while s < 4 {
        let mut i = 0;
        while i < 256 {
            let v = sbox(s, i as u8);
            t[s][i / 16][i % 16] = v;
            t[s][i / 16][16 + i % 16] = v;
            i += 1;
        }
        s += 1;
    }
    t
}

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

/// S-box kind `s` on every byte of `x`: each 16-entry slice of the table
/// looked up by the low nibble, then the slice of the high nibble picked
/// by a tree of byte blends on its four bits.
#[inline]
#[target_feature(enable = "avx2")]
fn lookup(s: usize, x: __m256i) -> __m256i {
    let lo = _mm256_and_si256(x, splat(0x0f));
    // Bit 4 + level of each byte of x moved to its top bit, which
    // `vpblendvb` reads.
    let bits = [
        _mm256_slli_epi16::<3>(x),
        _mm256_slli_epi16::<2>(x),
        _mm256_add_epi8(x, x),
        x,
    ];
    let slice = |h: usize| {
        // SAFETY: a 32-byte table.
        let t = unsafe { _mm256_loadu_si256(TABLES[s][h].as_ptr().cast()) };
        _mm256_shuffle_epi8(t, lo)
    };
    // Pairs blended as soon as both are looked up, so fewer values are
    // live at once.
    let mut v: [__m256i; 8] =
        core::array::from_fn(|k| _mm256_blendv_epi8(slice(2 * k), slice(2 * k + 1), bits[0]));
    for level in 1..4 {
        let step = 1 << (level - 1);
        for k in (0..8).step_by(2 * step) {
            v[k] = _mm256_blendv_epi8(v[k], v[k + step], bits[level]);
        }
    }
    v[0]
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
