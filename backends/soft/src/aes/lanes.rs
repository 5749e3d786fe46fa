//! Sixteen 32-bit lanes: one bit-plane of a 32-block batch.
//!
//! Lane `4·r + c` holds the byte at row `r`, column `c` of the AES state,
//! so every permutation the cipher needs moves whole rows (groups of four
//! lanes) and rotates lanes within a row.
//!
//! `Portable` (off x86_64) is plain Rust over four rows of `[u32; 4]`;
//! [`Xmm`] is the same with one SSE2 register per row (the x86_64
//! baseline). [`Ymm`] (x86_64) is two AVX2 registers of two rows each, and
//! [`Zmm`] (x86_64) one AVX-512 register; each is only ever created inside
//! functions compiled with `avx2` or `avx512f`, reached after runtime
//! detection.

use super::sbox::Bits;

/// Lane of the byte at row `r`, column `c`.
pub(crate) const fn lane(r: usize, c: usize) -> usize {
    4 * r + c
}

/// Lane indices of [`Lanes::grid`]: out(r, c) = in(r', c + SHIFT·r') with
/// r' = r + DR (mod 4).
const fn grid_index(dr: usize, shift: usize) -> [u32; 16] {
    let mut idx = [0u32; 16];
    let mut r = 0;
    while r < 4 {
        let mut c = 0;
        while c < 4 {
            let rr = (r + dr) % 4;
            idx[lane(r, c)] = lane(rr, (c + shift * rr) % 4) as u32;
            c += 1;
        }
        r += 1;
    }
    idx
}

/// For [`Ymm`]'s `grid`: per output register (rows 2h, 2h+1), the lanes of
/// the row pair it draws from (rows 2h+DR, 2h+1+DR, placed side by side)
/// that land in each of its lanes.
#[cfg(target_arch = "x86_64")]
const fn ymm_grid_index(dr: usize, shift: usize) -> [[u32; 8]; 2] {
    let mut idx = [[0u32; 8]; 2];
    let mut h = 0;
    while h < 2 {
        let mut j = 0;
        while j < 8 {
            let (r, c) = (2 * h + j / 4, j % 4);
            let rr = (r + dr) % 4;
            idx[h][j] = (4 * (j / 4) + (c + shift * rr) % 4) as u32;
            j += 1;
        }
        h += 1;
    }
    idx
}

/// Lane indices of [`Lanes::lane_xor`].
const fn xor_index(d: usize) -> [u32; 16] {
    let mut idx = [0u32; 16];
    let mut l = 0;
    while l < 16 {
        idx[l] = (l ^ d) as u32;
        l += 1;
    }
    idx
}

pub(crate) trait Lanes: Bits {
    /// Lane `l` is the little-endian `u32` at bytes `4l..4l+4`.
    fn load(bytes: &[u8; 64]) -> Self;
    fn store(self, bytes: &mut [u8; 64]);
    fn from_array(lanes: &[u32; 16]) -> Self;
    fn splat(x: u32) -> Self;
    fn shl<const N: u32>(self) -> Self;
    fn shr<const N: u32>(self) -> Self;
    /// out(r, c) = in(r + DR, c + SHIFT·(r + DR)), indices mod 4.
    fn grid<const DR: usize, const SHIFT: usize>(self) -> Self;
    /// Lane `l` of the result is lane `l ^ D` (D is 4 or 8: whole rows).
    fn lane_xor<const D: usize>(self) -> Self;

    /// ShiftRows: row r rotates left by r.
    #[inline(always)]
    fn sr(self) -> Self {
        self.grid::<0, 1>()
    }
    /// InvShiftRows.
    #[inline(always)]
    fn isr(self) -> Self {
        self.grid::<0, 3>()
    }
    /// ShiftRows, then each column's next row.
    #[inline(always)]
    fn sr_rot1(self) -> Self {
        self.grid::<1, 1>()
    }
    /// Each column's next row.
    #[inline(always)]
    fn rot1(self) -> Self {
        self.grid::<1, 0>()
    }
    /// Each column's row two below.
    #[inline(always)]
    fn rot2(self) -> Self {
        self.grid::<2, 0>()
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[derive(Clone, Copy)]
pub(crate) struct Portable([[u32; 4]; 4]);

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn rotate_row(x: [u32; 4], k: usize) -> [u32; 4] {
    // `k` is a compile-time constant after inlining: no data dependence.
    match k % 4 {
        0 => x,
        1 => [x[1], x[2], x[3], x[0]],
        2 => [x[2], x[3], x[0], x[1]],
        _ => [x[3], x[0], x[1], x[2]],
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Portable {
    #[inline(always)]
    fn each(mut self, f: impl Fn(u32) -> u32) -> Self {
        for row in self.0.iter_mut() {
            for x in row.iter_mut() {
                *x = f(*x);
            }
        }
        self
    }
    #[inline(always)]
    fn zip(mut self, other: Self, f: impl Fn(u32, u32) -> u32) -> Self {
        for (row, o) in self.0.iter_mut().zip(other.0) {
            for (x, y) in row.iter_mut().zip(o) {
                *x = f(*x, y);
            }
        }
        self
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Bits for Portable {
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        self.zip(other, |x, y| x ^ y)
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        self.zip(other, |x, y| x & y)
    }
}

#[cfg(not(target_arch = "x86_64"))]
impl Lanes for Portable {
    #[inline(always)]
    fn load(bytes: &[u8; 64]) -> Self {
        let (words, _) = bytes.as_chunks::<4>();
        let mut r = [[0u32; 4]; 4];
        for (l, w) in words.iter().enumerate() {
            r[l / 4][l % 4] = u32::from_le_bytes(*w);
        }
        Portable(r)
    }
    #[inline(always)]
    fn store(self, bytes: &mut [u8; 64]) {
        let (words, _) = bytes.as_chunks_mut::<4>();
        for (l, w) in words.iter_mut().enumerate() {
            *w = self.0[l / 4][l % 4].to_le_bytes();
        }
    }
    #[inline(always)]
    fn from_array(lanes: &[u32; 16]) -> Self {
        let (rows, _) = lanes.as_chunks::<4>();
        Portable([rows[0], rows[1], rows[2], rows[3]])
    }
    #[inline(always)]
    fn splat(x: u32) -> Self {
        Portable([[x; 4]; 4])
    }
    #[inline(always)]
    fn shl<const N: u32>(self) -> Self {
        self.each(|x| x << N)
    }
    #[inline(always)]
    fn shr<const N: u32>(self) -> Self {
        self.each(|x| x >> N)
    }
    #[inline(always)]
    fn grid<const DR: usize, const SHIFT: usize>(self) -> Self {
        let r = |r: usize| {
            let rr = (r + DR) % 4;
            rotate_row(self.0[rr], SHIFT * rr)
        };
        Portable([r(0), r(1), r(2), r(3)])
    }
    #[inline(always)]
    fn lane_xor<const D: usize>(self) -> Self {
        let d = D / 4;
        Portable([self.0[d], self.0[1 ^ d], self.0[2 ^ d], self.0[3 ^ d]])
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{Xmm, Ymm, Zmm};

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Bits, Lanes, grid_index, xor_index, ymm_grid_index};
    use core::arch::x86_64::*;

    /// Four SSE2 registers, one row each: the baseline x86_64 path.
    /// The portable type (used off x86_64) computes the same, but as sixteen
    /// scalars per plane the compiler must re-vectorise the whole cipher,
    /// which takes it minutes; here the vectors are explicit. SSE2 is part
    /// of the x86_64 baseline, so every intrinsic used is available.
    #[derive(Clone, Copy)]
    pub(crate) struct Xmm([__m128i; 4]);

    impl Xmm {
        #[inline(always)]
        fn each(self, f: impl Fn(__m128i) -> __m128i) -> Self {
            Xmm([f(self.0[0]), f(self.0[1]), f(self.0[2]), f(self.0[3])])
        }
        #[inline(always)]
        fn zip(self, o: Self, f: impl Fn(__m128i, __m128i) -> __m128i) -> Self {
            Xmm([
                f(self.0[0], o.0[0]),
                f(self.0[1], o.0[1]),
                f(self.0[2], o.0[2]),
                f(self.0[3], o.0[3]),
            ])
        }
    }

    /// Row rotated left by `k` lanes (`k` is a constant after inlining).
    #[inline(always)]
    fn rotate_row(x: __m128i, k: usize) -> __m128i {
        // SAFETY: SSE2 is part of the x86_64 baseline.
        unsafe {
            match k % 4 {
                0 => x,
                1 => _mm_shuffle_epi32::<0x39>(x),
                2 => _mm_shuffle_epi32::<0x4e>(x),
                _ => _mm_shuffle_epi32::<0x93>(x),
            }
        }
    }

    impl Bits for Xmm {
        #[inline(always)]
        fn xor(self, other: Self) -> Self {
            // SAFETY: SSE2 is part of the x86_64 baseline.
            self.zip(other, |x, y| unsafe { _mm_xor_si128(x, y) })
        }
        #[inline(always)]
        fn and(self, other: Self) -> Self {
            // SAFETY: SSE2 is part of the x86_64 baseline.
            self.zip(other, |x, y| unsafe { _mm_and_si128(x, y) })
        }
    }

    impl Lanes for Xmm {
        #[inline(always)]
        fn load(bytes: &[u8; 64]) -> Self {
            let (rows, _) = bytes.as_chunks::<16>();
            // SAFETY: each pointer covers 16 readable bytes; the load has
            // no alignment requirement.
            let row = |r: usize| unsafe { _mm_loadu_si128(rows[r].as_ptr().cast()) };
            Xmm([row(0), row(1), row(2), row(3)])
        }
        #[inline(always)]
        fn store(self, bytes: &mut [u8; 64]) {
            let (rows, _) = bytes.as_chunks_mut::<16>();
            for (row, x) in rows.iter_mut().zip(self.0) {
                // SAFETY: the pointer covers 16 writable bytes; the store
                // has no alignment requirement.
                unsafe { _mm_storeu_si128(row.as_mut_ptr().cast(), x) }
            }
        }
        #[inline(always)]
        fn from_array(lanes: &[u32; 16]) -> Self {
            let (rows, _) = lanes.as_chunks::<4>();
            // SAFETY: each pointer covers 16 readable bytes; the load has
            // no alignment requirement.
            let row = |r: usize| unsafe { _mm_loadu_si128(rows[r].as_ptr().cast()) };
            Xmm([row(0), row(1), row(2), row(3)])
        }
        #[inline(always)]
        fn splat(x: u32) -> Self {
            // SAFETY: SSE2 is part of the x86_64 baseline.
            let v = unsafe { _mm_set1_epi32(x as i32) };
            Xmm([v; 4])
        }
        #[inline(always)]
        fn shl<const N: u32>(self) -> Self {
            // SAFETY: SSE2 is part of the x86_64 baseline.
            let n = unsafe { _mm_cvtsi32_si128(N as i32) };
            // SAFETY: as above.
            self.each(|x| unsafe { _mm_sll_epi32(x, n) })
        }
        #[inline(always)]
        fn shr<const N: u32>(self) -> Self {
            // SAFETY: SSE2 is part of the x86_64 baseline.
            let n = unsafe { _mm_cvtsi32_si128(N as i32) };
            // SAFETY: as above.
            self.each(|x| unsafe { _mm_srl_epi32(x, n) })
        }
        #[inline(always)]
        fn grid<const DR: usize, const SHIFT: usize>(self) -> Self {
            let r = |r: usize| {
                let rr = (r + DR) % 4;
                rotate_row(self.0[rr], SHIFT * rr)
            };
            Xmm([r(0), r(1), r(2), r(3)])
        }
        #[inline(always)]
        fn lane_xor<const D: usize>(self) -> Self {
            let d = D / 4;
            Xmm([self.0[d], self.0[1 ^ d], self.0[2 ^ d], self.0[3 ^ d]])
        }
    }

    /// Two AVX2 registers: lanes 0..8 (rows 0 and 1) and lanes 8..16 (rows 2
    /// and 3). Every method is `#[inline(always)]` and a `Ymm` is only
    /// constructed inside `#[target_feature(enable = "avx2")]` functions that
    /// the cipher calls after `is_x86_feature_detected!` confirmed AVX2, so
    /// the intrinsics below always run on a CPU that has them.
    #[derive(Clone, Copy)]
    pub(crate) struct Ymm([__m256i; 2]);

    impl Ymm {
        #[inline(always)]
        fn each(self, f: impl Fn(__m256i) -> __m256i) -> Self {
            Ymm([f(self.0[0]), f(self.0[1])])
        }
        #[inline(always)]
        fn zip(self, o: Self, f: impl Fn(__m256i, __m256i) -> __m256i) -> Self {
            Ymm([f(self.0[0], o.0[0]), f(self.0[1], o.0[1])])
        }
        /// Rows `a` and `a + 1` (mod 4) side by side (`a` a constant after
        /// inlining).
        #[inline(always)]
        fn row_pair(self, a: usize) -> __m256i {
            let [lo, hi] = self.0;
            // SAFETY: AVX2 is present (see the type's documentation).
            unsafe {
                match a % 4 {
                    0 => lo,
                    1 => _mm256_permute2x128_si256::<0x21>(lo, hi),
                    2 => hi,
                    _ => _mm256_permute2x128_si256::<0x03>(lo, hi),
                }
            }
        }
    }

    impl Bits for Ymm {
        #[inline(always)]
        fn xor(self, other: Self) -> Self {
            // SAFETY: AVX2 is present (see the type's documentation).
            self.zip(other, |x, y| unsafe { _mm256_xor_si256(x, y) })
        }
        #[inline(always)]
        fn and(self, other: Self) -> Self {
            // SAFETY: AVX2 is present (see the type's documentation).
            self.zip(other, |x, y| unsafe { _mm256_and_si256(x, y) })
        }
    }

    impl Lanes for Ymm {
        #[inline(always)]
        fn load(bytes: &[u8; 64]) -> Self {
            let (halves, _) = bytes.as_chunks::<32>();
            // SAFETY: AVX2 is present; each pointer covers 32 readable
            // bytes and the load has no alignment requirement.
            let half = |h: usize| unsafe { _mm256_loadu_si256(halves[h].as_ptr().cast()) };
            Ymm([half(0), half(1)])
        }
        #[inline(always)]
        fn store(self, bytes: &mut [u8; 64]) {
            let (halves, _) = bytes.as_chunks_mut::<32>();
            for (half, x) in halves.iter_mut().zip(self.0) {
                // SAFETY: AVX2 is present; the pointer covers 32 writable
                // bytes and the store has no alignment requirement.
                unsafe { _mm256_storeu_si256(half.as_mut_ptr().cast(), x) }
            }
        }
        #[inline(always)]
        fn from_array(lanes: &[u32; 16]) -> Self {
            let (halves, _) = lanes.as_chunks::<8>();
            // SAFETY: AVX2 is present; each pointer covers 32 readable
            // bytes and the load has no alignment requirement.
            let half = |h: usize| unsafe { _mm256_loadu_si256(halves[h].as_ptr().cast()) };
            Ymm([half(0), half(1)])
        }
        #[inline(always)]
        fn splat(x: u32) -> Self {
            // SAFETY: AVX2 is present (see the type's documentation).
            let v = unsafe { _mm256_set1_epi32(x as i32) };
            Ymm([v; 2])
        }
        #[inline(always)]
        fn shl<const N: u32>(self) -> Self {
            // SAFETY: AVX2 is present (see the type's documentation).
            let n = unsafe { _mm_cvtsi32_si128(N as i32) };
            // SAFETY: as above.
            self.each(|x| unsafe { _mm256_sll_epi32(x, n) })
        }
        #[inline(always)]
        fn shr<const N: u32>(self) -> Self {
            // SAFETY: AVX2 is present (see the type's documentation).
            let n = unsafe { _mm_cvtsi32_si128(N as i32) };
            // SAFETY: as above.
            self.each(|x| unsafe { _mm256_srl_epi32(x, n) })
        }
        #[inline(always)]
        fn grid<const DR: usize, const SHIFT: usize>(self) -> Self {
            let idx = const { ymm_grid_index(DR, SHIFT) };
            let out = |h: usize| {
                let pair = self.row_pair(2 * h + DR);
                if SHIFT == 0 {
                    return pair;
                }
                // SAFETY: AVX2 is present; `idx[h]` covers 32 readable
                // bytes. vpermd uses only the low 3 bits of each index.
                unsafe {
                    let i = _mm256_loadu_si256(idx[h].as_ptr().cast());
                    _mm256_permutevar8x32_epi32(pair, i)
                }
            };
            Ymm([out(0), out(1)])
        }
        #[inline(always)]
        fn lane_xor<const D: usize>(self) -> Self {
            const { assert!(D == 4 || D == 8) };
            let [lo, hi] = self.0;
            if D == 8 {
                return Ymm([hi, lo]);
            }
            // D == 4: swap the rows inside each register.
            // SAFETY: AVX2 is present (see the type's documentation).
            self.each(|x| unsafe { _mm256_permute4x64_epi64::<0x4e>(x) })
        }
    }

    /// One AVX-512 register. Every method is `#[inline(always)]` and a `Zmm`
    /// is only constructed inside `#[target_feature(enable = "avx512f")]`
    /// functions that the cipher calls after `is_x86_feature_detected!`
    /// confirmed AVX-512F, so the intrinsics below always run on a CPU that
    /// has them.
    #[derive(Clone, Copy)]
    pub(crate) struct Zmm(__m512i);

    impl Zmm {
        #[inline(always)]
        fn permute(self, idx: &[u32; 16]) -> Self {
            // SAFETY: AVX-512F is present; `idx` covers 64 readable bytes.
            // vpermd uses only the low 4 bits of each index.
            Zmm(unsafe {
                let i = _mm512_loadu_si512(idx.as_ptr().cast());
                _mm512_permutexvar_epi32(i, self.0)
            })
        }
    }

    impl Bits for Zmm {
        #[inline(always)]
        fn xor(self, other: Self) -> Self {
            // SAFETY: AVX-512F is present (see the type's documentation).
            Zmm(unsafe { _mm512_xor_si512(self.0, other.0) })
        }
        #[inline(always)]
        fn and(self, other: Self) -> Self {
            // SAFETY: AVX-512F is present (see the type's documentation).
            Zmm(unsafe { _mm512_and_si512(self.0, other.0) })
        }
    }

    impl Lanes for Zmm {
        #[inline(always)]
        fn load(bytes: &[u8; 64]) -> Self {
            // SAFETY: AVX-512F is present; the pointer covers 64 readable
            // bytes and the load has no alignment requirement.
            Zmm(unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) })
        }
        #[inline(always)]
        fn store(self, bytes: &mut [u8; 64]) {
            // SAFETY: AVX-512F is present; the pointer covers 64 writable
            // bytes and the store has no alignment requirement.
            unsafe { _mm512_storeu_si512(bytes.as_mut_ptr().cast(), self.0) }
        }
        #[inline(always)]
        fn from_array(lanes: &[u32; 16]) -> Self {
            // SAFETY: AVX-512F is present; the pointer covers 64 readable
            // bytes and the load has no alignment requirement.
            Zmm(unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) })
        }
        #[inline(always)]
        fn splat(x: u32) -> Self {
            // SAFETY: AVX-512F is present (see the type's documentation).
            Zmm(unsafe { _mm512_set1_epi32(x as i32) })
        }
        #[inline(always)]
        fn shl<const N: u32>(self) -> Self {
            // SAFETY: AVX-512F is present (see the type's documentation).
            Zmm(unsafe { _mm512_slli_epi32::<N>(self.0) })
        }
        #[inline(always)]
        fn shr<const N: u32>(self) -> Self {
            // SAFETY: AVX-512F is present (see the type's documentation).
            Zmm(unsafe { _mm512_srli_epi32::<N>(self.0) })
        }
        #[inline(always)]
        fn grid<const DR: usize, const SHIFT: usize>(self) -> Self {
            self.permute(&const { grid_index(DR, SHIFT) })
        }
        #[inline(always)]
        fn lane_xor<const D: usize>(self) -> Self {
            self.permute(&const { xor_index(D) })
        }
    }
}
