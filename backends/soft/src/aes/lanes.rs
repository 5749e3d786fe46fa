//! Sixteen 32-bit lanes: one bit-plane of a 32-block batch.
//!
//! Lane `4·r + c` holds the byte at row `r`, column `c` of the AES state,
//! so every permutation the cipher needs moves whole rows (groups of four
//! lanes) and rotates lanes within a row.
//!
//! [`Portable`] is plain Rust over four rows of `[u32; 4]`, which the
//! compiler turns into whatever vectors the enclosing function's target
//! features allow (row rotations become `pshufd`). [`Zmm`] (x86_64) is one
//! AVX-512 register; it is only ever created inside functions compiled with
//! `avx512f`, reached after runtime detection.

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

#[derive(Clone, Copy)]
pub(crate) struct Portable([[u32; 4]; 4]);

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
pub(crate) use x86::Zmm;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Bits, Lanes, grid_index, xor_index};
    use core::arch::x86_64::*;

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
