//! PBKDF2-HMAC-SHA-512 over several independent chains at once: one SIMD
//! lane per chain (2 with SSE2, 4 with AVX2, 8 with AVX-512, or 4 in
//! 256-bit AVX-512VL vectors for up to four chains).
//!
//! The chains share the password, so every lane starts each compression
//! from the same keyed inner or outer state (a broadcast), and every
//! iteration hashes a one-block message whose second half (the padding) is
//! the same constant in every lane: only the previous output differs. The
//! whole loop stays in 64-bit words; bytes appear only at its ends.

use super::sha2_chains::{Keyed, first_u512};
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use zeroize::Zeroize;

pub use tcd_backend_kit::simd::Level;

use super::CANCEL_CHECK_EVERY;

/// SHA-512's round constants.
const K: [u64; 80] = [
    0x428a2f98d728ae22,
    0x7137449123ef65cd,
    0xb5c0fbcfec4d3b2f,
    0xe9b5dba58189dbbc,
    0x3956c25bf348b538,
    0x59f111f1b605d019,
    0x923f82a4af194f9b,
    0xab1c5ed5da6d8118,
    0xd807aa98a3030242,
    0x12835b0145706fbe,
    0x243185be4ee4b28c,
    0x550c7dc3d5ffb4e2,
    0x72be5d74f27b896f,
    0x80deb1fe3b1696b1,
    0x9bdc06a725c71235,
    0xc19bf174cf692694,
    0xe49b69c19ef14ad2,
    0xefbe4786384f25e3,
    0x0fc19dc68b8cd5b5,
    0x240ca1cc77ac9c65,
    0x2de92c6f592b0275,
    0x4a7484aa6ea6e483,
    0x5cb0a9dcbd41fbd4,
    0x76f988da831153b5,
    0x983e5152ee66dfab,
    0xa831c66d2db43210,
    0xb00327c898fb213f,
    0xbf597fc7beef0ee4,
    0xc6e00bf33da88fc2,
    0xd5a79147930aa725,
    0x06ca6351e003826f,
    0x142929670a0e6e70,
    0x27b70a8546d22ffc,
    0x2e1b21385c26c926,
    0x4d2c6dfc5ac42aed,
    0x53380d139d95b3df,
    0x650a73548baf63de,
    0x766a0abb3c77b2a8,
    0x81c2c92e47edaee6,
    0x92722c851482353b,
    0xa2bfe8a14cf10364,
    0xa81a664bbc423001,
    0xc24b8b70d0f89791,
    0xc76c51a30654be30,
    0xd192e819d6ef5218,
    0xd69906245565a910,
    0xf40e35855771202a,
    0x106aa07032bbd1b8,
    0x19a4c116b8d2d0c8,
    0x1e376c085141ab53,
    0x2748774cdf8eeb99,
    0x34b0bcb5e19b48a8,
    0x391c0cb3c5c95a63,
    0x4ed8aa4ae3418acb,
    0x5b9cca4f7763e373,
    0x682e6ff3d6b2b8a3,
    0x748f82ee5defb2fc,
    0x78a5636f43172f60,
    0x84c87814a1f0ab72,
    0x8cc702081a6439ec,
    0x90befffa23631e28,
    0xa4506cebde82bde9,
    0xbef9a3f7b2c67915,
    0xc67178f2e372532b,
    0xca273eceea26619c,
    0xd186b8c721c0c207,
    0xeada7dd6cde0eb1e,
    0xf57d4f7fee6ed178,
    0x06f067aa72176fba,
    0x0a637dc5a2c898a6,
    0x113f9804bef90dae,
    0x1b710b35131c471b,
    0x28db77f523047d84,
    0x32caab7b40c72493,
    0x3c9ebe0a15c9bebc,
    0x431d67c49c100d4c,
    0x4cc5d4becb3e42b6,
    0x597f299cfc657e2a,
    0x5fcb6fab3ad6faec,
    0x6c44198c4a475817,
];

/// The padding word after a 64-byte message that follows one 128-byte key
/// block: the 0x80 byte, then (word 15) the length in bits, 1536.
const PAD_FIRST: u64 = 0x8000_0000_0000_0000;
const PAD_BITS: u64 = 1536;

/// One PBKDF2 output block to derive: HMAC chain `block` (0-based) over
/// `salt`, into `out` (at most 64 bytes: the block, or its first bytes).
pub(crate) struct Job<'a> {
    pub salt: &'a [u8],
    pub block: usize,
    pub out: &'a mut [u8],
}

/// Sets each lane's first HMAC output (U1) from its job; a lane with no
/// job repeats the first job's chain, so every lane runs the same count.
pub(crate) fn start_lanes<W: Copy, const LANES: usize>(
    group: &[Job<'_>],
    u: &mut [[W; 8]; LANES],
    first: impl Fn(&Job<'_>) -> Result<[W; 8]>,
) -> Result<()> {
    for (lane, job) in group.iter().enumerate() {
        u[lane] = first(job)?;
    }
    for lane in group.len()..LANES {
        u[lane] = u[0];
    }
    Ok(())
}

/// Gives each job the first bytes of its lane's output: `bytes_of`
/// writes lane `i`'s words, as the hash orders its bytes, into the
/// buffer, which is wiped afterwards.
pub(crate) fn hand_out<const N: usize>(
    group: &mut [Job<'_>],
    mut bytes_of: impl FnMut(usize, &mut [u8; N]),
) {
    let mut bytes = [0u8; N];
    for (lane, job) in group.iter_mut().enumerate() {
        bytes_of(lane, &mut bytes);
        let n = job.out.len().min(N);
        job.out[..n].copy_from_slice(&bytes[..n]);
    }
    bytes.zeroize();
}

/// The fastest level at or below `cap` that this processor runs.
pub fn level_for(cap: Level) -> Level {
    tcd_backend_kit::simd::best(cap)
}

/// How many chains one call runs at once at `level`.
pub fn lanes(level: Level) -> usize {
    match level {
        Level::Avx512 => 8,
        Level::Avx2 => 4,
        Level::Sse2 => 2,
    }
}

/// Derives every job's block: PBKDF2-HMAC-SHA-512 of `password`, running
/// up to [`lanes`]`(level)` of them at once, at `level` or the best below
/// it that this processor runs.
pub(crate) fn pbkdf2_sha512_jobs(
    password: &[u8],
    iterations: u32,
    cancel: &AtomicBool,
    level: Level,
    jobs: &mut [Job<'_>],
) -> Result<()> {
    if iterations == 0 {
        return Err(Error::Kdf("PBKDF2 needs at least one iteration".into()));
    }
    let keyed = Keyed::<super::sha2_chains::Sha512>::new(password);
    let mut result = Ok(());
    for group in jobs.chunks_mut(lanes(level)) {
        result = run_group(password, &keyed, iterations, cancel, level, group);
        if result.is_err() {
            break;
        }
    }
    result
}

fn run_group(
    password: &[u8],
    keyed: &Keyed<super::sha2_chains::Sha512>,
    iterations: u32,
    cancel: &AtomicBool,
    level: Level,
    group: &mut [Job<'_>],
) -> Result<()> {
    let mut u = [[0u64; 8]; 8];
    if let Err(e) = start_lanes(group, &mut u, |job| {
        first_u512(password, job.salt, job.block)
    }) {
        u.zeroize();
        return Err(e);
    }
    // Never above what this processor runs, whatever the caller asked.
    let result = match level_for(level) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level_for` gave AVX-512 only where the processor has it,
        // and checked AVX-512VL with it.
        Level::Avx512 if group.len() <= 4 => unsafe {
            avx512vl::chains(&keyed.inner, &keyed.outer, &mut u, iterations, cancel)
        },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level_for` gave AVX-512 only where the processor has it.
        Level::Avx512 => unsafe {
            avx512::chains(&keyed.inner, &keyed.outer, &mut u, iterations, cancel)
        },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level_for` gave AVX2 only where the processor has it.
        Level::Avx2 => unsafe {
            avx2::chains(&keyed.inner, &keyed.outer, &mut u, iterations, cancel)
        },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: SSE2 is the x86_64 baseline.
        _ => unsafe { sse2::chains(&keyed.inner, &keyed.outer, &mut u, iterations, cancel) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => Err(Error::Kdf(
            "no multi-lane SHA-512 on this architecture".into(),
        )),
    };
    if result.is_ok() {
        hand_out(group, |lane, bytes: &mut [u8; 64]| {
            for (b, w) in bytes.chunks_exact_mut(8).zip(&u[lane]) {
                b.copy_from_slice(&w.to_be_bytes());
            }
        });
    }
    u.zeroize();
    result
}

/// The compression and the PBKDF2 loop, written once over a module's
/// vector type `V` and its lane operations; `$feature` is the target
/// feature they are compiled for.
macro_rules! chains_body {
    ($feature:literal) => {
        /// One SHA-512 compression of the block (`w`, then the fixed
        /// padding) from the state `init` (the same in every lane).
        #[target_feature(enable = $feature)]
        #[inline]
        fn compress(init: &[V; 8], u: &[V; 8]) -> [V; 8] {
            let mut w = [splat(0); 16];
            w[..8].copy_from_slice(u);
            w[8] = splat(PAD_FIRST);
            w[15] = splat(PAD_BITS);
            let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = *init;
            for (i, k) in K.iter().enumerate() {
                let wi = if i < 16 {
                    w[i]
                } else {
                    let x = add(
                        add(ssig1(w[(i + 14) & 15]), w[(i + 9) & 15]),
                        add(ssig0(w[(i + 1) & 15]), w[i & 15]),
                    );
                    w[i & 15] = x;
                    x
                };
                // h + K + W does not wait for e: the path from e to the
                // next e is then Σ1, two adds and the add of d.
                let hkw = add(h, add(splat(*k), wi));
                let t1 = add(add(hkw, ch(e, f, g)), bsig1(e));
                let t2 = add(bsig0(a), maj(a, b, c));
                h = g;
                g = f;
                f = e;
                e = add(d, t1);
                d = c;
                c = b;
                b = a;
                a = add(t1, t2);
            }
            let out = [a, b, c, d, e, f, g, h];
            let mut s = *init;
            for (s, o) in s.iter_mut().zip(out) {
                *s = add(*s, o);
            }
            s
        }

        /// Runs iterations 2..=`iterations` of every lane's chain: `u`
        /// holds each lane's U1 on entry and its output block on return.
        #[target_feature(enable = $feature)]
        pub(super) fn chains(
            inner: &[u64; 8],
            outer: &[u64; 8],
            u: &mut [[u64; 8]; 8],
            iterations: u32,
            cancel: &AtomicBool,
        ) -> Result<()> {
            let inner = inner.map(|w| splat(w));
            let outer = outer.map(|w| splat(w));
            let mut cur = [splat(0); 8];
            for (j, c) in cur.iter_mut().enumerate() {
                *c = gather(u, j);
            }
            let mut acc = cur;
            let mut left = iterations - 1;
            while left > 0 {
                let run = left.min(CANCEL_CHECK_EVERY);
                for _ in 0..run {
                    let s = compress(&inner, &cur);
                    cur = compress(&outer, &s);
                    for (a, c) in acc.iter_mut().zip(&cur) {
                        *a = xor(*a, *c);
                    }
                }
                left -= run;
                if cancel.load(Ordering::Relaxed) {
                    return Err(Error::Cancelled);
                }
            }
            for (j, a) in acc.iter().enumerate() {
                scatter(*a, u, j);
            }
            Ok(())
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::*;
    use std::arch::x86_64::*;
    type V = __m128i;
    const LANES: usize = 2;

    macro_rules! rotr {
        ($x:expr, $n:literal) => {
            _mm_or_si128(_mm_srli_epi64::<$n>($x), _mm_slli_epi64::<{ 64 - $n }>($x))
        };
    }
    #[target_feature(enable = "sse2")]
    #[inline]
    fn splat(x: u64) -> V {
        _mm_set1_epi64x(x as i64)
    }
    #[target_feature(enable = "sse2")]
    #[inline]
    fn add(a: V, b: V) -> V {
        _mm_add_epi64(a, b)
    }
    #[target_feature(enable = "sse2")]
    #[inline]
    fn xor(a: V, b: V) -> V {
        _mm_xor_si128(a, b)
    }
    #[target_feature(enable = "sse2")]
    #[inline]
    fn bsig0(x: V) -> V {
        xor(xor(rotr!(x, 28), rotr!(x, 34)), rotr!(x, 39))
    }
    #[target_feature(enable = "sse2")]
    #[inline]
    fn bsig1(x: V) -> V {
        xor(xor(rotr!(x, 14), rotr!(x, 18)), rotr!(x, 41))
    }
    #[target_feature(enable = "sse2")]
    #[inline]
    fn ssig0(x: V) -> V {
        xor(xor(rotr!(x, 1), rotr!(x, 8)), _mm_srli_epi64::<7>(x))
    }
    #[target_feature(enable = "sse2")]
    #[inline]
    fn ssig1(x: V) -> V {
        xor(xor(rotr!(x, 19), rotr!(x, 61)), _mm_srli_epi64::<6>(x))
    }
    #[target_feature(enable = "sse2")]
    #[inline]
    fn ch(e: V, f: V, g: V) -> V {
        xor(_mm_and_si128(e, f), _mm_andnot_si128(e, g))
    }
    #[target_feature(enable = "sse2")]
    #[inline]
    fn maj(a: V, b: V, c: V) -> V {
        _mm_or_si128(_mm_and_si128(a, b), _mm_and_si128(c, _mm_or_si128(a, b)))
    }
    #[target_feature(enable = "sse2")]
    #[inline]
    fn gather(u: &[[u64; 8]; 8], j: usize) -> V {
        let mut w = [0u64; LANES];
        for (lane, w) in w.iter_mut().enumerate() {
            *w = u[lane][j];
        }
        // SAFETY: `w` is LANES u64s, 16 bytes; unaligned load.
        unsafe { _mm_loadu_si128(w.as_ptr().cast()) }
    }
    #[target_feature(enable = "sse2")]
    #[inline]
    fn scatter(v: V, u: &mut [[u64; 8]; 8], j: usize) {
        let mut w = [0u64; LANES];
        // SAFETY: `w` is LANES u64s, 16 bytes; unaligned store.
        unsafe { _mm_storeu_si128(w.as_mut_ptr().cast(), v) };
        for (lane, w) in w.iter().enumerate() {
            u[lane][j] = *w;
        }
    }
    chains_body!("sse2");
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;
    use std::arch::x86_64::*;
    type V = __m256i;
    const LANES: usize = 4;

    macro_rules! rotr {
        ($x:expr, $n:literal) => {
            _mm256_or_si256(
                _mm256_srli_epi64::<$n>($x),
                _mm256_slli_epi64::<{ 64 - $n }>($x),
            )
        };
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn splat(x: u64) -> V {
        _mm256_set1_epi64x(x as i64)
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn add(a: V, b: V) -> V {
        _mm256_add_epi64(a, b)
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn xor(a: V, b: V) -> V {
        _mm256_xor_si256(a, b)
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn bsig0(x: V) -> V {
        xor(xor(rotr!(x, 28), rotr!(x, 34)), rotr!(x, 39))
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn bsig1(x: V) -> V {
        xor(xor(rotr!(x, 14), rotr!(x, 18)), rotr!(x, 41))
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn ssig0(x: V) -> V {
        xor(xor(rotr!(x, 1), rotr!(x, 8)), _mm256_srli_epi64::<7>(x))
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn ssig1(x: V) -> V {
        xor(xor(rotr!(x, 19), rotr!(x, 61)), _mm256_srli_epi64::<6>(x))
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn ch(e: V, f: V, g: V) -> V {
        xor(_mm256_and_si256(e, f), _mm256_andnot_si256(e, g))
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn maj(a: V, b: V, c: V) -> V {
        _mm256_or_si256(
            _mm256_and_si256(a, b),
            _mm256_and_si256(c, _mm256_or_si256(a, b)),
        )
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn gather(u: &[[u64; 8]; 8], j: usize) -> V {
        let mut w = [0u64; LANES];
        for (lane, w) in w.iter_mut().enumerate() {
            *w = u[lane][j];
        }
        // SAFETY: `w` is LANES u64s, 32 bytes; unaligned load.
        unsafe { _mm256_loadu_si256(w.as_ptr().cast()) }
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn scatter(v: V, u: &mut [[u64; 8]; 8], j: usize) {
        let mut w = [0u64; LANES];
        // SAFETY: `w` is LANES u64s, 32 bytes; unaligned store.
        unsafe { _mm256_storeu_si256(w.as_mut_ptr().cast(), v) };
        for (lane, w) in w.iter().enumerate() {
            u[lane][j] = *w;
        }
    }
    chains_body!("avx2");
}

/// The AVX-512 lane operations (rotations and three-input logic in one
/// instruction each) over 512-bit vectors (8 lanes) or, with AVX-512VL,
/// 256-bit ones (4 lanes), which issue on more ports: the faster choice
/// for up to four chains.
macro_rules! avx512_module {
    ($name:ident, $feature:literal, $V:ident, $lanes:literal, $set1:ident, $add:ident,
     $xor:ident, $ror:ident, $srli:ident, $tern:ident, $load:ident, $store:ident) => {
        #[cfg(target_arch = "x86_64")]
        mod $name {
            use super::*;
            use std::arch::x86_64::*;
            type V = $V;
            const LANES: usize = $lanes;

            #[target_feature(enable = $feature)]
            #[inline]
            fn splat(x: u64) -> V {
                $set1(x as i64)
            }
            #[target_feature(enable = $feature)]
            #[inline]
            fn add(a: V, b: V) -> V {
                $add(a, b)
            }
            #[target_feature(enable = $feature)]
            #[inline]
            fn xor(a: V, b: V) -> V {
                $xor(a, b)
            }
            /// a ^ b ^ c in one instruction.
            #[target_feature(enable = $feature)]
            #[inline]
            fn xor3(a: V, b: V, c: V) -> V {
                $tern::<0x96>(a, b, c)
            }
            #[target_feature(enable = $feature)]
            #[inline]
            fn bsig0(x: V) -> V {
                xor3($ror::<28>(x), $ror::<34>(x), $ror::<39>(x))
            }
            #[target_feature(enable = $feature)]
            #[inline]
            fn bsig1(x: V) -> V {
                xor3($ror::<14>(x), $ror::<18>(x), $ror::<41>(x))
            }
            #[target_feature(enable = $feature)]
            #[inline]
            fn ssig0(x: V) -> V {
                xor3($ror::<1>(x), $ror::<8>(x), $srli::<7>(x))
            }
            #[target_feature(enable = $feature)]
            #[inline]
            fn ssig1(x: V) -> V {
                xor3($ror::<19>(x), $ror::<61>(x), $srli::<6>(x))
            }
            /// (e & f) | (!e & g).
            #[target_feature(enable = $feature)]
            #[inline]
            fn ch(e: V, f: V, g: V) -> V {
                $tern::<0xca>(e, f, g)
            }
            /// The majority of a, b, c.
            #[target_feature(enable = $feature)]
            #[inline]
            fn maj(a: V, b: V, c: V) -> V {
                $tern::<0xe8>(a, b, c)
            }
            #[target_feature(enable = $feature)]
            #[inline]
            fn gather(u: &[[u64; 8]; 8], j: usize) -> V {
                let mut w = [0u64; LANES];
                for (lane, w) in w.iter_mut().enumerate() {
                    *w = u[lane][j];
                }
                // SAFETY: `w` is LANES u64s, the vector's size; unaligned load.
                unsafe { $load(w.as_ptr().cast()) }
            }
            #[target_feature(enable = $feature)]
            #[inline]
            fn scatter(v: V, u: &mut [[u64; 8]; 8], j: usize) {
                let mut w = [0u64; LANES];
                // SAFETY: `w` is LANES u64s, the vector's size; unaligned store.
                unsafe { $store(w.as_mut_ptr().cast(), v) };
                for (lane, w) in w.iter().enumerate() {
                    u[lane][j] = *w;
                }
            }
            chains_body!($feature);
        }
    };
}

avx512_module!(
    avx512,
    "avx512f",
    __m512i,
    8,
    _mm512_set1_epi64,
    _mm512_add_epi64,
    _mm512_xor_si512,
    _mm512_ror_epi64,
    _mm512_srli_epi64,
    _mm512_ternarylogic_epi64,
    _mm512_loadu_si512,
    _mm512_storeu_si512
);
avx512_module!(
    avx512vl,
    "avx512f,avx512vl",
    __m256i,
    4,
    _mm256_set1_epi64x,
    _mm256_add_epi64,
    _mm256_xor_si256,
    _mm256_ror_epi64,
    _mm256_srli_epi64,
    _mm256_ternarylogic_epi64,
    _mm256_loadu_si256,
    _mm256_storeu_si256
);

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Every level this processor runs: each forced one falls back to the
    /// best below it, so this is what `TCD_SIMD` can select here.
    fn levels() -> Vec<Level> {
        let mut levels: Vec<Level> = Level::ALL.into_iter().map(level_for).collect();
        levels.dedup();
        levels
    }

    #[test]
    fn agree_with_the_pbkdf2_crate_at_every_level() {
        // The `pbkdf2` crate over `sha2` 0.10 is the reference: random
        // passwords (empty, short, a block long, longer), salts, iteration
        // counts, output lengths, block numbers and group sizes (a partial
        // group, a full one, more than one), from a fixed seed.
        let never = AtomicBool::new(false);
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x1a4e_5eed);
        for level in levels() {
            for case in 0..60 {
                let pw_len = match case % 5 {
                    0 => 0,
                    1 => 64,
                    2 => 128,
                    3 => rng.random_range(129..300),
                    _ => rng.random_range(1..128),
                };
                let password: Vec<u8> = (0..pw_len).map(|_| rng.random()).collect();
                let iterations = rng.random_range(1..80);
                // Every group size: partial, full, more than one.
                let count = 1 + case % (2 * lanes(level) + 1);
                let specs: Vec<(Vec<u8>, usize, usize)> = (0..count)
                    .map(|_| {
                        let salt = (0..rng.random_range(0..100))
                            .map(|_| rng.random())
                            .collect();
                        (salt, rng.random_range(0..4), rng.random_range(1..=64))
                    })
                    .collect();
                let mut outs: Vec<Vec<u8>> = specs.iter().map(|s| vec![0u8; s.2]).collect();
                let mut jobs: Vec<Job<'_>> = specs
                    .iter()
                    .zip(outs.iter_mut())
                    .map(|((salt, block, _), out)| Job {
                        salt,
                        block: *block,
                        out,
                    })
                    .collect();
                pbkdf2_sha512_jobs(&password, iterations, &never, level, &mut jobs).expect("lanes");
                for ((salt, block, len), got) in specs.iter().zip(&outs) {
                    let mut want = vec![0u8; (block + 1) * 64];
                    pbkdf2::pbkdf2_hmac::<sha2_ref::Sha512>(&password, salt, iterations, &mut want);
                    assert_eq!(
                        hex::encode(got),
                        hex::encode(&want[block * 64..block * 64 + len]),
                        "{level:?} case {case}: {pw_len}-byte password, {} salt bytes, \
                         {iterations} iterations, block {block}, {count} jobs",
                        salt.len()
                    );
                }
            }
        }
    }

    #[test]
    fn the_forced_levels_fall_back_to_what_the_processor_has() {
        assert_eq!(level_for(Level::Sse2), Level::Sse2);
        #[cfg(target_arch = "x86_64")]
        {
            let avx2 = std::arch::is_x86_feature_detected!("avx2");
            let avx512 = std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512vl");
            let want = |has: bool, below: Level, at: Level| if has { at } else { below };
            assert_eq!(level_for(Level::Avx2), want(avx2, Level::Sse2, Level::Avx2));
            assert_eq!(
                level_for(Level::Avx512),
                want(avx512, level_for(Level::Avx2), Level::Avx512)
            );
        }
    }

    #[test]
    fn a_cancel_stops_every_level() {
        let cancel = AtomicBool::new(true);
        for level in levels() {
            let mut out = [0u8; 64];
            let mut jobs = [Job {
                salt: b"salt",
                block: 0,
                out: &mut out,
            }];
            let r = pbkdf2_sha512_jobs(b"pw", 100_000, &cancel, level, &mut jobs);
            assert!(matches!(r, Err(Error::Cancelled)), "{level:?}: {r:?}");
        }
    }
}
