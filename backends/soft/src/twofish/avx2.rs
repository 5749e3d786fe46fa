//! Twofish on AVX2: 8 blocks per 256-bit register (one register per 32-bit
//! word of the state, lane `i` belonging to block `i`), two register sets
//! side by side, and `g` as four `vpgatherdd` lookups into the key's 32-bit
//! "full keying" tables (S-box and MDS column in one word), the same tables
//! and the same secret-indexed lookups as the portable code, eight at a
//! time. For processors with AVX2 but without the AVX-512 VBMI and GFNI of
//! the `avx512` module.
//!
//! Everything here is only reached through [`encrypt`] and [`decrypt`],
//! whose caller checked `avx2` at key setup.

use super::Schedule;
use core::arch::x86_64::*;

/// Register sets of 8 blocks processed side by side.
const GROUPS: usize = 2;
/// Bytes handled per inner call.
pub const CHUNK: usize = 16 * 8 * GROUPS;

/// Eight lookups of `table` at the indices in `idx` (each in 0..256).
#[inline]
#[target_feature(enable = "avx2")]
fn look(table: &[u32; 256], idx: __m256i) -> __m256i {
    // SAFETY: every index is below 256 (masked or shifted down to 8 bits by
    // the callers), so each 4-byte read lies inside `table`.
    unsafe { _mm256_i32gather_epi32::<4>(table.as_ptr().cast(), idx) }
}

/// g(x) for every dword of `x`; with `ROT`, g(x <<< 8).
#[inline]
#[target_feature(enable = "avx2")]
fn g<const ROT: bool>(s: &[[u32; 256]; 4], x: __m256i) -> __m256i {
    let m = _mm256_set1_epi32(0xFF);
    let b0 = _mm256_and_si256(x, m);
    let b1 = _mm256_and_si256(_mm256_srli_epi32::<8>(x), m);
    let b2 = _mm256_and_si256(_mm256_srli_epi32::<16>(x), m);
    let b3 = _mm256_srli_epi32::<24>(x);
    // x <<< 8 moves byte 3 to position 0, byte 0 to 1, and so on.
    let [i0, i1, i2, i3] = if ROT {
        [b3, b0, b1, b2]
    } else {
        [b0, b1, b2, b3]
    };
    _mm256_xor_si256(
        _mm256_xor_si256(look(&s[0], i0), look(&s[1], i1)),
        _mm256_xor_si256(look(&s[2], i2), look(&s[3], i3)),
    )
}

#[inline]
#[target_feature(enable = "avx2")]
fn rol1(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_slli_epi32::<1>(x), _mm256_srli_epi32::<31>(x))
}

#[inline]
#[target_feature(enable = "avx2")]
fn ror1(x: __m256i) -> __m256i {
    _mm256_or_si256(_mm256_srli_epi32::<1>(x), _mm256_slli_epi32::<31>(x))
}

/// 4x4 transpose of 32-bit words within each 128-bit lane of four
/// registers: blocks in, one word of every block per register out. It is
/// its own inverse.
#[inline]
#[target_feature(enable = "avx2")]
fn transpose(x: [__m256i; 4]) -> [__m256i; 4] {
    let t0 = _mm256_unpacklo_epi32(x[0], x[1]);
    let t1 = _mm256_unpackhi_epi32(x[0], x[1]);
    let t2 = _mm256_unpacklo_epi32(x[2], x[3]);
    let t3 = _mm256_unpackhi_epi32(x[2], x[3]);
    [
        _mm256_unpacklo_epi64(t0, t2),
        _mm256_unpackhi_epi64(t0, t2),
        _mm256_unpacklo_epi64(t1, t3),
        _mm256_unpackhi_epi64(t1, t3),
    ]
}

#[inline]
#[target_feature(enable = "avx2")]
fn load(chunk: &[u8; CHUNK], group: usize) -> [__m256i; 4] {
    core::array::from_fn(|r| {
        let bytes = &chunk[128 * group + 32 * r..128 * group + 32 * r + 32];
        // SAFETY: `bytes` is exactly 32 bytes, one unaligned 256-bit load.
        unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) }
    })
}

#[inline]
#[target_feature(enable = "avx2")]
fn store(chunk: &mut [u8; CHUNK], group: usize, x: [__m256i; 4]) {
    for (r, v) in x.into_iter().enumerate() {
        let bytes = &mut chunk[128 * group + 32 * r..128 * group + 32 * r + 32];
        // SAFETY: `bytes` is exactly 32 writable bytes, one unaligned store.
        unsafe { _mm256_storeu_si256(bytes.as_mut_ptr().cast(), v) }
    }
}

#[inline]
#[target_feature(enable = "avx2")]
fn key(k: u32) -> __m256i {
    _mm256_set1_epi32(k as i32)
}

/// F of (x, y) with subkeys (k0, k1): (T0 + T1 + k0, T0 + 2 T1 + k1).
#[inline]
#[target_feature(enable = "avx2")]
fn f(
    s: &[[u32; 256]; 4],
    x: __m256i,
    y: __m256i,
    k0: __m256i,
    k1: __m256i,
) -> (__m256i, __m256i) {
    let t0 = g::<false>(s, x);
    let t1 = g::<true>(s, y);
    let t01 = _mm256_add_epi32(t0, t1);
    (
        _mm256_add_epi32(t01, k0),
        _mm256_add_epi32(_mm256_add_epi32(t01, t1), k1),
    )
}

#[target_feature(enable = "avx2")]
fn encrypt_chunk(ks: &Schedule, chunk: &mut [u8; CHUNK]) {
    let (s, k) = (&ks.s, &ks.k);
    let mut st: [[__m256i; 4]; GROUPS] = core::array::from_fn(|g| {
        let w = transpose(load(chunk, g));
        core::array::from_fn(|i| _mm256_xor_si256(w[i], key(k[i])))
    });
    for r in 0..8 {
        let rk: [__m256i; 4] = core::array::from_fn(|i| key(k[8 + 4 * r + i]));
        for [a, b, c, d] in st.iter_mut() {
            let (f0, f1) = f(s, *a, *b, rk[0], rk[1]);
            *c = ror1(_mm256_xor_si256(*c, f0));
            *d = _mm256_xor_si256(rol1(*d), f1);
        }
        for [a, b, c, d] in st.iter_mut() {
            let (f0, f1) = f(s, *c, *d, rk[2], rk[3]);
            *a = ror1(_mm256_xor_si256(*a, f0));
            *b = _mm256_xor_si256(rol1(*b), f1);
        }
    }
    for (g, [a, b, c, d]) in st.into_iter().enumerate() {
        let out = [
            _mm256_xor_si256(c, key(k[4])),
            _mm256_xor_si256(d, key(k[5])),
            _mm256_xor_si256(a, key(k[6])),
            _mm256_xor_si256(b, key(k[7])),
        ];
        store(chunk, g, transpose(out));
    }
}

#[target_feature(enable = "avx2")]
fn decrypt_chunk(ks: &Schedule, chunk: &mut [u8; CHUNK]) {
    let (s, k) = (&ks.s, &ks.k);
    // Registers hold (a, b, c, d) = (C2, C3, C0, C1) after whitening.
    let mut st: [[__m256i; 4]; GROUPS] = core::array::from_fn(|g| {
        let w = transpose(load(chunk, g));
        [
            _mm256_xor_si256(w[2], key(k[6])),
            _mm256_xor_si256(w[3], key(k[7])),
            _mm256_xor_si256(w[0], key(k[4])),
            _mm256_xor_si256(w[1], key(k[5])),
        ]
    });
    for r in (0..8).rev() {
        let rk: [__m256i; 4] = core::array::from_fn(|i| key(k[8 + 4 * r + i]));
        for [a, b, c, d] in st.iter_mut() {
            let (f0, f1) = f(s, *c, *d, rk[2], rk[3]);
            *a = _mm256_xor_si256(rol1(*a), f0);
            *b = ror1(_mm256_xor_si256(*b, f1));
        }
        for [a, b, c, d] in st.iter_mut() {
            let (f0, f1) = f(s, *a, *b, rk[0], rk[1]);
            *c = _mm256_xor_si256(rol1(*c), f0);
            *d = ror1(_mm256_xor_si256(*d, f1));
        }
    }
    for (g, w) in st.into_iter().enumerate() {
        let out: [__m256i; 4] = core::array::from_fn(|i| _mm256_xor_si256(w[i], key(k[i])));
        store(chunk, g, transpose(out));
    }
}

/// Encrypts whole `CHUNK`s of `blocks` and returns how many bytes it did.
#[target_feature(enable = "avx2")]
pub fn encrypt(ks: &Schedule, blocks: &mut [u8]) -> usize {
    let (chunks, _) = blocks.as_chunks_mut::<CHUNK>();
    for c in chunks.iter_mut() {
        encrypt_chunk(ks, c);
    }
    chunks.len() * CHUNK
}

/// Decrypts whole `CHUNK`s of `blocks` and returns how many bytes it did.
#[target_feature(enable = "avx2")]
pub fn decrypt(ks: &Schedule, blocks: &mut [u8]) -> usize {
    let (chunks, _) = blocks.as_chunks_mut::<CHUNK>();
    for c in chunks.iter_mut() {
        decrypt_chunk(ks, c);
    }
    chunks.len() * CHUNK
}
