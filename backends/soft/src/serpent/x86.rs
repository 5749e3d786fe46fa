//! SIMD lanes for x86_64: word w of 4 blocks in an xmm register (SSE2), of
//! 8 blocks in a ymm register (AVX2, or
//! AVX-512VL with `vpternlogd` and `vprold`), or of 16 blocks in a zmm
//! register (AVX-512F). Two register sets are processed side by side
//! ([`Pair`]) so that the out-of-order core always has independent work.
//!
//! Soundness: the register wrapper types below are private to this module
//! and are only ever created inside the `#[target_feature]` batch functions
//! at the bottom, which `mod.rs` calls only for a path whose CPU features
//! were confirmed by `is_x86_feature_detected!` at key setup (and in one
//! test function, called only after the same check). So every
//! intrinsic reached through them runs on a CPU that has its feature.

use core::arch::x86_64::*;

use super::lanes::{Lanes, RoundKeys, decrypt, encrypt, tern_imms};

/// Both halves side by side: twice the blocks per batch, two independent
/// dependency chains.
#[derive(Clone, Copy)]
struct Pair<V>(V, V);

impl<V: Lanes> Lanes for Pair<V> {
    #[inline(always)]
    fn splat(k: u32) -> Self {
        Pair(V::splat(k), V::splat(k))
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        Pair(self.0.xor(o.0), self.1.xor(o.1))
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        Pair(self.0.and(o.0), self.1.and(o.1))
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        Pair(self.0.or(o.0), self.1.or(o.1))
    }
    #[inline(always)]
    fn andnot(self, o: Self) -> Self {
        Pair(self.0.andnot(o.0), self.1.andnot(o.1))
    }
    #[inline(always)]
    fn rotl<const N: i32>(self) -> Self {
        Pair(self.0.rotl::<N>(), self.1.rotl::<N>())
    }
    #[inline(always)]
    fn shl<const N: i32>(self) -> Self {
        Pair(self.0.shl::<N>(), self.1.shl::<N>())
    }
    #[inline(always)]
    fn xor3(a: Self, b: Self, c: Self) -> Self {
        Pair(V::xor3(a.0, b.0, c.0), V::xor3(a.1, b.1, c.1))
    }
    #[inline(always)]
    fn sbox<const S: usize>(x: [Self; 4]) -> [Self; 4] {
        let lo = V::sbox::<S>([x[0].0, x[1].0, x[2].0, x[3].0]);
        let hi = V::sbox::<S>([x[0].1, x[1].1, x[2].1, x[3].1]);
        [
            Pair(lo[0], hi[0]),
            Pair(lo[1], hi[1]),
            Pair(lo[2], hi[2]),
            Pair(lo[3], hi[3]),
        ]
    }
}

/// Runs `$e` (intrinsics of this module's register types).
macro_rules! simd {
    ($e:expr) => {
        // SAFETY: the register types are only created inside the
        // `#[target_feature]` batch functions of this module, which run only
        // after the matching `is_x86_feature_detected!` checks (see the
        // module documentation), so the CPU supports these instructions.
        unsafe { $e }
    };
}

/// A box as 12 `vpternlogd`: per output bit, f (x3 = 1) and g (x3 = 0) as
/// functions of (x2, x1, x0), then the multiplexer `x3 ? f : g` (0xCA).
macro_rules! tern_sbox {
    ($x:expr, $s:literal) => {{
        const I: [[i32; 2]; 4] = tern_imms($s);
        let [x0, x1, x2, x3] = $x;
        [
            Self::tern::<0xCA>(
                x3,
                Self::tern::<{ I[0][0] }>(x2, x1, x0),
                Self::tern::<{ I[0][1] }>(x2, x1, x0),
            ),
            Self::tern::<0xCA>(
                x3,
                Self::tern::<{ I[1][0] }>(x2, x1, x0),
                Self::tern::<{ I[1][1] }>(x2, x1, x0),
            ),
            Self::tern::<0xCA>(
                x3,
                Self::tern::<{ I[2][0] }>(x2, x1, x0),
                Self::tern::<{ I[2][1] }>(x2, x1, x0),
            ),
            Self::tern::<0xCA>(
                x3,
                Self::tern::<{ I[3][0] }>(x2, x1, x0),
                Self::tern::<{ I[3][1] }>(x2, x1, x0),
            ),
        ]
    }};
}

/// The `sbox` method of a lanes type that has `tern`: dispatch on the
/// constant box number to the ternary-logic form.
macro_rules! tern_sbox_method {
    () => {
        #[inline(always)]
        fn sbox<const S: usize>(x: [Self; 4]) -> [Self; 4] {
            match S {
                0 => tern_sbox!(x, 0),
                1 => tern_sbox!(x, 1),
                2 => tern_sbox!(x, 2),
                3 => tern_sbox!(x, 3),
                4 => tern_sbox!(x, 4),
                5 => tern_sbox!(x, 5),
                6 => tern_sbox!(x, 6),
                7 => tern_sbox!(x, 7),
                8 => tern_sbox!(x, 8),
                9 => tern_sbox!(x, 9),
                10 => tern_sbox!(x, 10),
                11 => tern_sbox!(x, 11),
                12 => tern_sbox!(x, 12),
                13 => tern_sbox!(x, 13),
                14 => tern_sbox!(x, 14),
                _ => tern_sbox!(x, 15),
            }
        }
    };
}

/// Word lanes of 4 blocks, SSE2 (every x86_64 CPU).
#[derive(Clone, Copy)]
struct X(__m128i);

impl Lanes for X {
    #[inline(always)]
    fn splat(k: u32) -> Self {
        X(simd!(_mm_set1_epi32(k as i32)))
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        X(simd!(_mm_xor_si128(self.0, o.0)))
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        X(simd!(_mm_and_si128(self.0, o.0)))
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        X(simd!(_mm_or_si128(self.0, o.0)))
    }
    #[inline(always)]
    fn andnot(self, o: Self) -> Self {
        X(simd!(_mm_andnot_si128(self.0, o.0)))
    }
    #[inline(always)]
    fn rotl<const N: i32>(self) -> Self {
        X(simd!(_mm_or_si128(
            _mm_sll_epi32(self.0, _mm_cvtsi32_si128(N)),
            _mm_srl_epi32(self.0, _mm_cvtsi32_si128(32 - N)),
        )))
    }
    #[inline(always)]
    fn shl<const N: i32>(self) -> Self {
        X(simd!(_mm_slli_epi32::<N>(self.0)))
    }
}

/// Word lanes of 8 blocks, AVX2 only.
#[derive(Clone, Copy)]
struct Y2(__m256i);

impl Lanes for Y2 {
    #[inline(always)]
    fn splat(k: u32) -> Self {
        Y2(simd!(_mm256_set1_epi32(k as i32)))
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        Y2(simd!(_mm256_xor_si256(self.0, o.0)))
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        Y2(simd!(_mm256_and_si256(self.0, o.0)))
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        Y2(simd!(_mm256_or_si256(self.0, o.0)))
    }
    #[inline(always)]
    fn andnot(self, o: Self) -> Self {
        Y2(simd!(_mm256_andnot_si256(self.0, o.0)))
    }
    #[inline(always)]
    fn rotl<const N: i32>(self) -> Self {
        Y2(simd!(_mm256_or_si256(
            _mm256_sll_epi32(self.0, _mm_cvtsi32_si128(N)),
            _mm256_srl_epi32(self.0, _mm_cvtsi32_si128(32 - N)),
        )))
    }
    #[inline(always)]
    fn shl<const N: i32>(self) -> Self {
        Y2(simd!(_mm256_slli_epi32::<N>(self.0)))
    }
}

/// Word lanes of 8 blocks with AVX-512F + VL (ternary logic, rotates).
#[derive(Clone, Copy)]
struct Y5(__m256i);

impl Y5 {
    #[inline(always)]
    fn tern<const IMM: i32>(a: Self, b: Self, c: Self) -> Self {
        Y5(simd!(_mm256_ternarylogic_epi32::<IMM>(a.0, b.0, c.0)))
    }
}

impl Lanes for Y5 {
    #[inline(always)]
    fn splat(k: u32) -> Self {
        Y5(simd!(_mm256_set1_epi32(k as i32)))
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        Y5(simd!(_mm256_xor_si256(self.0, o.0)))
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        Y5(simd!(_mm256_and_si256(self.0, o.0)))
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        Y5(simd!(_mm256_or_si256(self.0, o.0)))
    }
    #[inline(always)]
    fn andnot(self, o: Self) -> Self {
        Y5(simd!(_mm256_andnot_si256(self.0, o.0)))
    }
    #[inline(always)]
    fn rotl<const N: i32>(self) -> Self {
        Y5(simd!(_mm256_rol_epi32::<N>(self.0)))
    }
    #[inline(always)]
    fn shl<const N: i32>(self) -> Self {
        Y5(simd!(_mm256_slli_epi32::<N>(self.0)))
    }
    #[inline(always)]
    fn xor3(a: Self, b: Self, c: Self) -> Self {
        Y5::tern::<0x96>(a, b, c)
    }
    tern_sbox_method!();
}

/// Word lanes of 16 blocks, AVX-512F.
#[derive(Clone, Copy)]
struct Z(__m512i);

impl Z {
    #[inline(always)]
    fn tern<const IMM: i32>(a: Self, b: Self, c: Self) -> Self {
        Z(simd!(_mm512_ternarylogic_epi32::<IMM>(a.0, b.0, c.0)))
    }
}

impl Lanes for Z {
    #[inline(always)]
    fn splat(k: u32) -> Self {
        Z(simd!(_mm512_set1_epi32(k as i32)))
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        Z(simd!(_mm512_xor_si512(self.0, o.0)))
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        Z(simd!(_mm512_and_si512(self.0, o.0)))
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        Z(simd!(_mm512_or_si512(self.0, o.0)))
    }
    #[inline(always)]
    fn andnot(self, o: Self) -> Self {
        Z(simd!(_mm512_andnot_si512(self.0, o.0)))
    }
    #[inline(always)]
    fn rotl<const N: i32>(self) -> Self {
        Z(simd!(_mm512_rol_epi32::<N>(self.0)))
    }
    #[inline(always)]
    fn shl<const N: i32>(self) -> Self {
        Z(simd!(_mm512_sll_epi32(self.0, _mm_cvtsi32_si128(N))))
    }
    #[inline(always)]
    fn xor3(a: Self, b: Self, c: Self) -> Self {
        Z::tern::<0x96>(a, b, c)
    }
    tern_sbox_method!();
}

/// 4x4 transpose of 32-bit words inside each 128-bit lane: turns four
/// registers of whole blocks into four registers of words (word i of every
/// block in `out[i]`), and back, since it is its own inverse.
macro_rules! transpose4 {
    ($v:expr, $lo32:ident, $hi32:ident, $lo64:ident, $hi64:ident) => {{
        let [v0, v1, v2, v3] = $v;
        let t0 = $lo32(v0, v1);
        let t1 = $lo32(v2, v3);
        let t2 = $hi32(v0, v1);
        let t3 = $hi32(v2, v3);
        [$lo64(t0, t1), $hi64(t0, t1), $lo64(t2, t3), $hi64(t2, t3)]
    }};
}

/// Loads 4 blocks (64 bytes) as word lanes.
#[inline(always)]
fn load_x(b: &[u8; 64]) -> [__m128i; 4] {
    let p = b.as_ptr().cast::<__m128i>();
    // SAFETY: four unaligned 16-byte loads at offsets 0, 16, 32, 48 of a
    // 64-byte array stay in bounds; SSE2 is part of x86_64.
    let v = unsafe {
        [
            _mm_loadu_si128(p),
            _mm_loadu_si128(p.add(1)),
            _mm_loadu_si128(p.add(2)),
            _mm_loadu_si128(p.add(3)),
        ]
    };
    simd!(transpose4!(
        v,
        _mm_unpacklo_epi32,
        _mm_unpackhi_epi32,
        _mm_unpacklo_epi64,
        _mm_unpackhi_epi64
    ))
}

/// Stores word lanes back as 4 blocks.
#[inline(always)]
fn store_x(b: &mut [u8; 64], x: [__m128i; 4]) {
    let v = simd!(transpose4!(
        x,
        _mm_unpacklo_epi32,
        _mm_unpackhi_epi32,
        _mm_unpacklo_epi64,
        _mm_unpackhi_epi64
    ));
    let p = b.as_mut_ptr().cast::<__m128i>();
    // SAFETY: four unaligned 16-byte stores inside the 64-byte array; SSE2
    // is part of x86_64.
    unsafe {
        _mm_storeu_si128(p, v[0]);
        _mm_storeu_si128(p.add(1), v[1]);
        _mm_storeu_si128(p.add(2), v[2]);
        _mm_storeu_si128(p.add(3), v[3]);
    }
}

/// Loads 8 blocks (128 bytes) as word lanes.
#[inline(always)]
fn load_y(b: &[u8; 128]) -> [__m256i; 4] {
    let p = b.as_ptr().cast::<__m256i>();
    // SAFETY: four unaligned 32-byte loads at offsets 0, 32, 64, 96 of a
    // 128-byte array stay in bounds; AVX2 is enabled in every caller (the
    // batch functions below, reached only after detection).
    let v = unsafe {
        [
            _mm256_loadu_si256(p),
            _mm256_loadu_si256(p.add(1)),
            _mm256_loadu_si256(p.add(2)),
            _mm256_loadu_si256(p.add(3)),
        ]
    };
    simd!(transpose4!(
        v,
        _mm256_unpacklo_epi32,
        _mm256_unpackhi_epi32,
        _mm256_unpacklo_epi64,
        _mm256_unpackhi_epi64
    ))
}

/// Stores word lanes back as 8 blocks.
#[inline(always)]
fn store_y(b: &mut [u8; 128], x: [__m256i; 4]) {
    let v = simd!(transpose4!(
        x,
        _mm256_unpacklo_epi32,
        _mm256_unpackhi_epi32,
        _mm256_unpacklo_epi64,
        _mm256_unpackhi_epi64
    ));
    let p = b.as_mut_ptr().cast::<__m256i>();
    // SAFETY: four unaligned 32-byte stores inside the 128-byte array; see
    // `load_y` for the CPU feature.
    unsafe {
        _mm256_storeu_si256(p, v[0]);
        _mm256_storeu_si256(p.add(1), v[1]);
        _mm256_storeu_si256(p.add(2), v[2]);
        _mm256_storeu_si256(p.add(3), v[3]);
    }
}

/// Loads 16 blocks (256 bytes) as word lanes.
#[inline(always)]
fn load_z(b: &[u8; 256]) -> [__m512i; 4] {
    let p = b.as_ptr().cast::<__m512i>();
    // SAFETY: four unaligned 64-byte loads inside the 256-byte array;
    // AVX-512F is enabled in every caller (after detection).
    let v = unsafe {
        [
            _mm512_loadu_si512(p),
            _mm512_loadu_si512(p.add(1)),
            _mm512_loadu_si512(p.add(2)),
            _mm512_loadu_si512(p.add(3)),
        ]
    };
    simd!(transpose4!(
        v,
        _mm512_unpacklo_epi32,
        _mm512_unpackhi_epi32,
        _mm512_unpacklo_epi64,
        _mm512_unpackhi_epi64
    ))
}

/// Stores word lanes back as 16 blocks.
#[inline(always)]
fn store_z(b: &mut [u8; 256], x: [__m512i; 4]) {
    let v = simd!(transpose4!(
        x,
        _mm512_unpacklo_epi32,
        _mm512_unpackhi_epi32,
        _mm512_unpacklo_epi64,
        _mm512_unpackhi_epi64
    ));
    let p = b.as_mut_ptr().cast::<__m512i>();
    // SAFETY: four unaligned 64-byte stores inside the 256-byte array; see
    // `load_z` for the CPU feature.
    unsafe {
        _mm512_storeu_si512(p, v[0]);
        _mm512_storeu_si512(p.add(1), v[1]);
        _mm512_storeu_si512(p.add(2), v[2]);
        _mm512_storeu_si512(p.add(3), v[3]);
    }
}

/// Bytes per batch of the SSE2 path: 4 blocks.
pub(super) const XMM_BYTES: usize = 64;
/// Bytes per batch of the ymm paths: 8 blocks.
pub(super) const YMM_BYTES: usize = 128;
/// Bytes per batch of the zmm path: 16 blocks.
pub(super) const ZMM_BYTES: usize = 256;

/// Defines one batch function: name, target features, lanes type, loader,
/// storer, direction, batch size. Batches are processed two at a time as a
/// [`Pair`], an odd last one alone.
macro_rules! batch_fn {
    ($name:ident, $feat:literal, $V:ident, $load:ident, $store:ident, $dir:ident, $bytes:expr) => {
        #[target_feature(enable = $feat)]
        pub(super) fn $name(rk: &RoundKeys, batches: &mut [[u8; $bytes]]) {
            let mut pairs = batches.chunks_exact_mut(2);
            for pair in &mut pairs {
                if let [lo, hi] = pair {
                    let a = $load(lo).map($V);
                    let c = $load(hi).map($V);
                    let x = [
                        Pair(a[0], c[0]),
                        Pair(a[1], c[1]),
                        Pair(a[2], c[2]),
                        Pair(a[3], c[3]),
                    ];
                    let y = $dir(x, rk);
                    $store(lo, y.map(|p| p.0.0));
                    $store(hi, y.map(|p| p.1.0));
                }
            }
            for b in pairs.into_remainder() {
                let y = $dir($load(b).map($V), rk);
                $store(b, y.map(|v| v.0));
            }
        }
    };
}

batch_fn!(sse2_encrypt, "sse2", X, load_x, store_x, encrypt, XMM_BYTES);
batch_fn!(sse2_decrypt, "sse2", X, load_x, store_x, decrypt, XMM_BYTES);
batch_fn!(
    avx2_encrypt,
    "avx2",
    Y2,
    load_y,
    store_y,
    encrypt,
    YMM_BYTES
);
batch_fn!(
    avx2_decrypt,
    "avx2",
    Y2,
    load_y,
    store_y,
    decrypt,
    YMM_BYTES
);
batch_fn!(
    ymm512_encrypt,
    "avx2,avx512f,avx512vl",
    Y5,
    load_y,
    store_y,
    encrypt,
    YMM_BYTES
);
batch_fn!(
    ymm512_decrypt,
    "avx2,avx512f,avx512vl",
    Y5,
    load_y,
    store_y,
    decrypt,
    YMM_BYTES
);
batch_fn!(
    zmm_encrypt,
    "avx2,avx512f",
    Z,
    load_z,
    store_z,
    encrypt,
    ZMM_BYTES
);
batch_fn!(
    zmm_decrypt,
    "avx2,avx512f",
    Z,
    load_z,
    store_z,
    decrypt,
    ZMM_BYTES
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serpent::lanes::{BOXES, flip_words};

    /// Every box on all 16 inputs through the AVX2 lanes type itself (the
    /// circuits as the AVX2 path runs them, complements and all): lane word
    /// j of `x[i]` carries input bit i of nibble `v` in bit v, for the 16
    /// nibbles.
    #[target_feature(enable = "avx2")]
    fn avx2_boxes() -> [[u32; 4]; 16] {
        let mut x = [0u32; 4];
        for v in 0..16u32 {
            for (i, xi) in x.iter_mut().enumerate() {
                *xi |= ((v >> i) & 1) << v;
            }
        }
        let x = x.map(Y2::splat);
        let mut out = [[0u32; 4]; 16];
        macro_rules! run {
            ($($s:literal)*) => {$(
                let y = Y2::sbox::<$s>(x);
                for (o, yi) in out[$s].iter_mut().zip(y) {
                    *o = _mm256_extract_epi32::<5>(yi.0) as u32;
                }
            )*};
        }
        run!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15);
        out
    }

    #[test]
    fn serpent_avx2_sbox_circuits_match_tables() {
        if !is_x86_feature_detected!("avx2") {
            return;
        }
        // SAFETY: AVX2 was detected just above.
        let y = unsafe { avx2_boxes() };
        for (s, ys) in y.iter().enumerate() {
            let f = flip_words(s);
            for (v, &expected) in BOXES[s].iter().enumerate() {
                let out: u8 = (0..4)
                    .map(|i| ((((ys[i] ^ f[i]) >> v) & 1) as u8) << i)
                    .sum();
                assert_eq!(out, expected, "box {s} input {v}");
            }
        }
    }
}
