//! The 128-bit AES-NI path: one block per register, eight blocks in flight,
//! for processors without VAES. Needs AES-NI and SSE2.

use super::keys::{ROUND_KEYS, load128, store128};
use core::arch::x86_64::{
    __m128i, _mm_add_epi64, _mm_aesdec_si128, _mm_aesdeclast_si128, _mm_aesenc_si128,
    _mm_aesenclast_si128, _mm_and_si128, _mm_set_epi32, _mm_set_epi64x, _mm_setzero_si128,
    _mm_shuffle_epi32, _mm_srai_epi32, _mm_xor_si128,
};
use zeroize::Zeroize;

/// Blocks in flight in the main loop.
const WIDE: usize = 8;
/// Units whose tweaks are encrypted together.
const TWEAK_BATCH: usize = 8;

type RoundKeys = [__m128i; ROUND_KEYS];

/// Multiplies a tweak by alpha: shift the 128-bit value left by one and fold
/// the bit shifted out of the top back in as 0x87.
#[inline]
#[target_feature(enable = "sse2")]
fn mul_alpha(t: __m128i) -> __m128i {
    // Dword 0 gets the sign of dword 3 (bit 127, folded as 0x87), dword 2
    // the sign of dword 1 (bit 63, which crosses into the high qword).
    let signs = _mm_shuffle_epi32::<0x13>(_mm_srai_epi32::<31>(t));
    let carries = _mm_and_si128(signs, _mm_set_epi32(0, 1, 0, 0x87));
    _mm_xor_si128(_mm_add_epi64(t, t), carries)
}

/// Encrypts `N` blocks side by side. The last round key is per block, so a
/// caller can fold the post-whitening tweak into it.
#[inline]
#[target_feature(enable = "aes,sse2")]
fn encrypt_n<const N: usize>(rk: &RoundKeys, x: &mut [__m128i; N], last: &[__m128i; N]) {
    for v in x.iter_mut() {
        *v = _mm_xor_si128(*v, rk[0]);
    }
    for k in &rk[1..ROUND_KEYS - 1] {
        for v in x.iter_mut() {
            *v = _mm_aesenc_si128(*v, *k);
        }
    }
    for (v, l) in x.iter_mut().zip(last) {
        *v = _mm_aesenclast_si128(*v, *l);
    }
}

/// XTS over `N` consecutive blocks of one unit; `t` holds the tweak of the
/// first and is advanced past the last.
#[inline]
#[target_feature(enable = "aes,sse2")]
fn run<const N: usize, const ENC: bool>(
    rk: &RoundKeys,
    blocks: &mut [[u8; 16]; N],
    t: &mut __m128i,
) {
    let mut tw = [*t; N];
    for i in 1..N {
        tw[i] = mul_alpha(tw[i - 1]);
    }
    *t = mul_alpha(tw[N - 1]);
    let mut x = [_mm_setzero_si128(); N];
    for i in 0..N {
        x[i] = _mm_xor_si128(_mm_xor_si128(load128(&blocks[i]), tw[i]), rk[0]);
    }
    for k in &rk[1..ROUND_KEYS - 1] {
        for v in x.iter_mut() {
            *v = if ENC {
                _mm_aesenc_si128(*v, *k)
            } else {
                _mm_aesdec_si128(*v, *k)
            };
        }
    }
    for i in 0..N {
        // The last round ends with an XOR of its key: fold the
        // post-whitening tweak into it.
        let last = _mm_xor_si128(rk[ROUND_KEYS - 1], tw[i]);
        let out = if ENC {
            _mm_aesenclast_si128(x[i], last)
        } else {
            _mm_aesdeclast_si128(x[i], last)
        };
        store128(&mut blocks[i], out);
    }
}

/// XTS over one data unit whose first tweak is `t`.
#[inline]
#[target_feature(enable = "aes,sse2")]
fn unit<const ENC: bool>(rk: &RoundKeys, data: &mut [u8], mut t: __m128i) {
    let (blocks, _) = data.as_chunks_mut::<16>();
    let (wide, rest) = blocks.as_chunks_mut::<WIDE>();
    for c in wide {
        run::<WIDE, ENC>(rk, c, &mut t);
    }
    let (four, rest) = rest.as_chunks_mut::<4>();
    for c in four {
        run::<4, ENC>(rk, c, &mut t);
    }
    let (two, rest) = rest.as_chunks_mut::<2>();
    for c in two {
        run::<2, ENC>(rk, c, &mut t);
    }
    let (one, _) = rest.as_chunks_mut::<1>();
    for c in one {
        run::<1, ENC>(rk, c, &mut t);
    }
}

/// XTS over `data`, consecutive units of `unit_size` bytes from `first_unit`.
/// `rk` are the data key's encryption or decryption round keys (per `ENC`),
/// `tk` the tweak key's encryption round keys.
#[target_feature(enable = "aes,sse2")]
pub(crate) fn crypt<const ENC: bool>(
    rk: &RoundKeys,
    tk: &RoundKeys,
    data: &mut [u8],
    first_unit: u64,
    unit_size: usize,
) {
    let mut tweaks = [_mm_setzero_si128(); TWEAK_BATCH];
    let last = [tk[ROUND_KEYS - 1]; TWEAK_BATCH];
    let mut unit_no = first_unit;
    for group in data.chunks_mut(unit_size * TWEAK_BATCH) {
        for (i, t) in tweaks.iter_mut().enumerate() {
            // Unit numbers past the end are encrypted but never used.
            *t = _mm_set_epi64x(0, unit_no.wrapping_add(i as u64) as i64);
        }
        encrypt_n(tk, &mut tweaks, &last);
        for (data, t) in group.chunks_exact_mut(unit_size).zip(&tweaks) {
            unit::<ENC>(rk, data, *t);
        }
        unit_no = unit_no.wrapping_add(TWEAK_BATCH as u64);
    }
    tweaks.zeroize();
}
