//! Twofish on AVX-512 with VBMI and GFNI, no gathers: 16 blocks per 512-bit
//! register (one register per 32-bit word of the state, lane `i` belonging
//! to block `i`).
//!
//! `g` works on bytes: each key-dependent S-box s_j is a 256-byte table held
//! in four registers and looked up with `vpermi2b` (two 128-entry permutes,
//! zero-masked to the bytes at position j whose top bit selects them), and
//! the MDS matrix is applied with `gf2p8affineqb`, which multiplies every
//! byte by a constant of GF(2^8) modulo Twofish's polynomial (a linear map
//! over GF(2), so an 8x8 bit matrix), plus byte shuffles that route each
//! product to its output byte. (16-lane gathers from the 32-bit tables were
//! tried first: on Zen 4 they ran no faster than the portable code.)
//!
//! Everything here is only reached through [`encrypt`] and [`decrypt`],
//! whose caller checked `avx512f`, `avx512bw`, `avx512vbmi` and `gfni` at key
//! setup.

use super::{MDS, MDS_POLY, Schedule, gf_mul};
use core::arch::x86_64::*;

/// Blocks per call of the inner functions: `GROUPS` registers of 16.
const GROUPS: usize = 2;
/// Bytes handled per inner call.
pub const CHUNK: usize = 16 * 16 * GROUPS;

/// The `gf2p8affineqb` matrix of multiplication by `c` modulo the MDS
/// polynomial: byte 7-i of the matrix is the row giving output bit i.
const fn mul_matrix(c: u8) -> i64 {
    let mut m = 0u64;
    let mut i = 0;
    while i < 8 {
        let mut row = 0u8;
        let mut k = 0;
        while k < 8 {
            if (gf_mul(c, 1 << k, MDS_POLY) >> i) & 1 == 1 {
                row |= 1 << k;
            }
            k += 1;
        }
        m |= (row as u64) << (8 * (7 - i));
        i += 1;
    }
    m as i64
}

/// `vpshufb` control, repeated in each dword of a 128-bit lane: output
/// byte i of a dword takes the `n`-th input byte j (in order) with
/// MDS[i][j] == c, or zero if there is none.
const fn route(c: u8, n: usize) -> [i32; 4] {
    let mut out = [0i32; 4];
    let mut dw = 0;
    while dw < 4 {
        let mut v = 0u32;
        let mut i = 0;
        while i < 4 {
            let mut sel = 0x80u32;
            let mut seen = 0;
            let mut j = 0;
            while j < 4 {
                if MDS[i][j] == c {
                    if seen == n {
                        sel = (4 * dw + j) as u32;
                    }
                    seen += 1;
                }
                j += 1;
            }
            v |= sel << (8 * i);
            i += 1;
        }
        out[dw] = v as i32;
        dw += 1;
    }
    out
}

const MUL_5B: i64 = mul_matrix(0x5B);
const MUL_EF: i64 = mul_matrix(0xEF);
const ROUTE_01: [i32; 4] = route(0x01, 0);
const ROUTE_5B: [[i32; 4]; 2] = [route(0x5B, 0), route(0x5B, 1)];
const ROUTE_EF: [[i32; 4]; 2] = [route(0xEF, 0), route(0xEF, 1)];
/// Bytes at position 0 of each dword, as a 64-bit mask.
const POS0: u64 = 0x1111_1111_1111_1111;

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
fn control(c: [i32; 4]) -> __m512i {
    _mm512_set4_epi32(c[3], c[2], c[1], c[0])
}

/// The S-boxes as registers: `t[j][q]` holds s_j(64q .. 64q+63).
struct Tables {
    t: [[__m512i; 4]; 4],
}

impl Tables {
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
    fn new(sb: &[[u8; 256]; 4]) -> Tables {
        Tables {
            t: core::array::from_fn(|j| {
                core::array::from_fn(|q| {
                    let bytes = &sb[j][64 * q..64 * q + 64];
                    // SAFETY: `bytes` is exactly 64 bytes, one unaligned load.
                    unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
                })
            }),
        }
    }
}

/// g(x) for every dword of `x`.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
fn g(tb: &Tables, x: __m512i) -> __m512i {
    // s = (s_0(x0), s_1(x1), s_2(x2), s_3(x3)) in every dword: byte j of a
    // dword goes through table j; its top bit picks the table's half.
    let top = _mm512_movepi8_mask(x);
    let look = |j: usize| {
        let pos = POS0 << j;
        let t = &tb.t[j];
        let lo = _mm512_maskz_permutex2var_epi8(pos & !top, t[0], x, t[1]);
        let hi = _mm512_maskz_permutex2var_epi8(pos & top, t[2], x, t[3]);
        (lo, hi)
    };
    let (a0, b0) = look(0);
    let (a1, b1) = look(1);
    let (a2, b2) = look(2);
    let (a3, b3) = look(3);
    // The eight pieces have disjoint bytes: OR them.
    let s = _mm512_or_si512(
        _mm512_ternarylogic_epi32::<0xFE>(a0, b0, a1),
        _mm512_ternarylogic_epi32::<0xFE>(b1, a2, _mm512_ternarylogic_epi32::<0xFE>(b2, a3, b3)),
    );
    // z = MDS . s: the products by 5B and EF, routed to their rows.
    let s5b = _mm512_gf2p8affine_epi64_epi8::<0>(s, _mm512_set1_epi64(MUL_5B));
    let sef = _mm512_gf2p8affine_epi64_epi8::<0>(s, _mm512_set1_epi64(MUL_EF));
    let z = _mm512_ternarylogic_epi32::<0x96>(
        _mm512_shuffle_epi8(s, control(ROUTE_01)),
        _mm512_shuffle_epi8(s5b, control(ROUTE_5B[0])),
        _mm512_shuffle_epi8(s5b, control(ROUTE_5B[1])),
    );
    _mm512_ternarylogic_epi32::<0x96>(
        z,
        _mm512_shuffle_epi8(sef, control(ROUTE_EF[0])),
        _mm512_shuffle_epi8(sef, control(ROUTE_EF[1])),
    )
}

/// 4x4 transpose of 32-bit words within each 128-bit lane of four
/// registers: blocks in, one word of every block per register out. It is
/// its own inverse.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
fn transpose(x: [__m512i; 4]) -> [__m512i; 4] {
    let t0 = _mm512_unpacklo_epi32(x[0], x[1]);
    let t1 = _mm512_unpackhi_epi32(x[0], x[1]);
    let t2 = _mm512_unpacklo_epi32(x[2], x[3]);
    let t3 = _mm512_unpackhi_epi32(x[2], x[3]);
    [
        _mm512_unpacklo_epi64(t0, t2),
        _mm512_unpackhi_epi64(t0, t2),
        _mm512_unpacklo_epi64(t1, t3),
        _mm512_unpackhi_epi64(t1, t3),
    ]
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
fn load(chunk: &[u8; CHUNK], group: usize) -> [__m512i; 4] {
    core::array::from_fn(|r| {
        let bytes = &chunk[256 * group + 64 * r..256 * group + 64 * r + 64];
        // SAFETY: `bytes` is exactly 64 bytes, one unaligned 512-bit load.
        unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
    })
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
fn store(chunk: &mut [u8; CHUNK], group: usize, x: [__m512i; 4]) {
    for (r, v) in x.into_iter().enumerate() {
        let bytes = &mut chunk[256 * group + 64 * r..256 * group + 64 * r + 64];
        // SAFETY: `bytes` is exactly 64 writable bytes, one unaligned store.
        unsafe { _mm512_storeu_si512(bytes.as_mut_ptr().cast(), v) }
    }
}

#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
fn key(k: u32) -> __m512i {
    _mm512_set1_epi32(k as i32)
}

/// F of (x, y) with subkeys (k0, k1): (T0 + T1 + k0, T0 + 2 T1 + k1).
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
fn f(tb: &Tables, x: __m512i, y: __m512i, k0: __m512i, k1: __m512i) -> (__m512i, __m512i) {
    let t0 = g(tb, x);
    let t1 = g(tb, _mm512_rol_epi32::<8>(y));
    let t01 = _mm512_add_epi32(t0, t1);
    (
        _mm512_add_epi32(t01, k0),
        _mm512_add_epi32(_mm512_add_epi32(t01, t1), k1),
    )
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
fn encrypt_chunk(ks: &Schedule, tb: &Tables, chunk: &mut [u8; CHUNK]) {
    let k = &ks.k;
    let mut st: [[__m512i; 4]; GROUPS] = core::array::from_fn(|g| {
        let w = transpose(load(chunk, g));
        core::array::from_fn(|i| _mm512_xor_si512(w[i], key(k[i])))
    });
    for r in 0..8 {
        let rk: [__m512i; 4] = core::array::from_fn(|i| key(k[8 + 4 * r + i]));
        for [a, b, c, d] in st.iter_mut() {
            let (f0, f1) = f(tb, *a, *b, rk[0], rk[1]);
            *c = _mm512_ror_epi32::<1>(_mm512_xor_si512(*c, f0));
            *d = _mm512_xor_si512(_mm512_rol_epi32::<1>(*d), f1);
        }
        for [a, b, c, d] in st.iter_mut() {
            let (f0, f1) = f(tb, *c, *d, rk[2], rk[3]);
            *a = _mm512_ror_epi32::<1>(_mm512_xor_si512(*a, f0));
            *b = _mm512_xor_si512(_mm512_rol_epi32::<1>(*b), f1);
        }
    }
    for (g, [a, b, c, d]) in st.into_iter().enumerate() {
        let out = [
            _mm512_xor_si512(c, key(k[4])),
            _mm512_xor_si512(d, key(k[5])),
            _mm512_xor_si512(a, key(k[6])),
            _mm512_xor_si512(b, key(k[7])),
        ];
        store(chunk, g, transpose(out));
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
fn decrypt_chunk(ks: &Schedule, tb: &Tables, chunk: &mut [u8; CHUNK]) {
    let k = &ks.k;
    // Registers hold (a, b, c, d) = (C2, C3, C0, C1) after whitening.
    let mut st: [[__m512i; 4]; GROUPS] = core::array::from_fn(|g| {
        let w = transpose(load(chunk, g));
        [
            _mm512_xor_si512(w[2], key(k[6])),
            _mm512_xor_si512(w[3], key(k[7])),
            _mm512_xor_si512(w[0], key(k[4])),
            _mm512_xor_si512(w[1], key(k[5])),
        ]
    });
    for r in (0..8).rev() {
        let rk: [__m512i; 4] = core::array::from_fn(|i| key(k[8 + 4 * r + i]));
        for [a, b, c, d] in st.iter_mut() {
            let (f0, f1) = f(tb, *c, *d, rk[2], rk[3]);
            *a = _mm512_xor_si512(_mm512_rol_epi32::<1>(*a), f0);
            *b = _mm512_ror_epi32::<1>(_mm512_xor_si512(*b, f1));
        }
        for [a, b, c, d] in st.iter_mut() {
            let (f0, f1) = f(tb, *a, *b, rk[0], rk[1]);
            *c = _mm512_xor_si512(_mm512_rol_epi32::<1>(*c), f0);
            *d = _mm512_ror_epi32::<1>(_mm512_xor_si512(*d, f1));
        }
    }
    for (g, w) in st.into_iter().enumerate() {
        let out: [__m512i; 4] = core::array::from_fn(|i| _mm512_xor_si512(w[i], key(k[i])));
        store(chunk, g, transpose(out));
    }
}

/// Encrypts whole `CHUNK`s of `blocks` and returns how many bytes it did.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
pub fn encrypt(ks: &Schedule, blocks: &mut [u8]) -> usize {
    let (chunks, _) = blocks.as_chunks_mut::<CHUNK>();
    if chunks.is_empty() {
        return 0;
    }
    let tb = Tables::new(&ks.sb);
    for c in chunks.iter_mut() {
        encrypt_chunk(ks, &tb, c);
    }
    chunks.len() * CHUNK
}

/// Decrypts whole `CHUNK`s of `blocks` and returns how many bytes it did.
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi,gfni")]
pub fn decrypt(ks: &Schedule, blocks: &mut [u8]) -> usize {
    let (chunks, _) = blocks.as_chunks_mut::<CHUNK>();
    if chunks.is_empty() {
        return 0;
    }
    let tb = Tables::new(&ks.sb);
    for c in chunks.iter_mut() {
        decrypt_chunk(ks, &tb, c);
    }
    chunks.len() * CHUNK
}
