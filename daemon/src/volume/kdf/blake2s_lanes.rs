//! PBKDF2-HMAC-BLAKE2s-256 over several independent chains at once: one
//! SIMD lane per chain (4 with SSE2, 8 with AVX2, 16 with AVX-512, or 8 in
//! 256-bit AVX-512VL vectors for up to eight chains).
//!
//! As for SHA-512 ([`super::sha512_lanes`]), every lane starts each
//! compression from the same keyed inner or outer state, and the block
//! each iteration compresses is the previous 32-byte output, 32 zero bytes,
//! a byte count of 96 and the final-block flag: the same in every lane
//! but for the output words.

use super::sha512_lanes::{Job, Level, hand_out, level_for, start_lanes};
use crate::error::{Error, Result};
use hmac::digest::{FixedOutput, KeyInit, Update};
use std::sync::atomic::{AtomicBool, Ordering};
use zeroize::Zeroize;

use super::CANCEL_CHECK_EVERY;

const IV: [u32; 8] = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

/// The message word order of each of the ten rounds.
const SIGMA: [[usize; 16]; 10] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

/// BLAKE2s-256's block: 64 bytes.
const BLOCK: usize = 64;

/// How many chains one call runs at once at `level`.
pub fn lanes(level: Level) -> usize {
    match level {
        Level::Avx512 => 16,
        Level::Avx2 => 8,
        Level::Sse2 => 4,
    }
}

/// One scalar BLAKE2s compression of `m` into `h` after `t` bytes, the
/// last block if `last`: for the keyed states, once per password.
fn compress(h: &mut [u32; 8], m: &[u32; 16], t: u64, last: bool) {
    let mut v = [0u32; 16];
    v[..8].copy_from_slice(h);
    v[8..].copy_from_slice(&IV);
    v[12] ^= t as u32;
    v[13] ^= (t >> 32) as u32;
    if last {
        v[14] = !v[14];
    }
    for s in &SIGMA {
        let mut g = |a: usize, b: usize, c: usize, d: usize, x: u32, y: u32| {
            v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
            v[d] = (v[d] ^ v[a]).rotate_right(16);
            v[c] = v[c].wrapping_add(v[d]);
            v[b] = (v[b] ^ v[c]).rotate_right(12);
            v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
            v[d] = (v[d] ^ v[a]).rotate_right(8);
            v[c] = v[c].wrapping_add(v[d]);
            v[b] = (v[b] ^ v[c]).rotate_right(7);
        };
        g(0, 4, 8, 12, m[s[0]], m[s[1]]);
        g(1, 5, 9, 13, m[s[2]], m[s[3]]);
        g(2, 6, 10, 14, m[s[4]], m[s[5]]);
        g(3, 7, 11, 15, m[s[6]], m[s[7]]);
        g(0, 5, 10, 15, m[s[8]], m[s[9]]);
        g(1, 6, 11, 12, m[s[10]], m[s[11]]);
        g(2, 7, 8, 13, m[s[12]], m[s[13]]);
        g(3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for i in 0..8 {
        h[i] ^= v[i] ^ v[i + 8];
    }
    v.zeroize();
}

/// The HMAC states after the key's ipad and opad blocks.
struct Keyed {
    inner: [u32; 8],
    outer: [u32; 8],
}

impl Drop for Keyed {
    fn drop(&mut self) {
        self.inner.zeroize();
        self.outer.zeroize();
    }
}

impl Keyed {
    fn new(password: &[u8]) -> Self {
        use blake2::Digest;
        let mut key = [0u8; BLOCK];
        if password.len() > BLOCK {
            let mut digest = blake2::Blake2s256::digest(password);
            key[..digest.len()].copy_from_slice(&digest);
            digest.as_mut_slice().zeroize();
        } else {
            key[..password.len()].copy_from_slice(password);
        }
        let state = |byte: u8| {
            let mut m = [0u32; 16];
            for (w, k) in m.iter_mut().zip(key.chunks_exact(4)) {
                *w = u32::from_le_bytes([k[0], k[1], k[2], k[3]]) ^ u32::from_ne_bytes([byte; 4]);
            }
            // Unkeyed BLAKE2s-256: digest length 32, fanout and depth 1.
            let mut h = IV;
            h[0] ^= 0x0101_0020;
            compress(&mut h, &m, BLOCK as u64, false);
            m.zeroize();
            h
        };
        let keyed = Keyed {
            inner: state(0x36),
            outer: state(0x5c),
        };
        key.zeroize();
        keyed
    }
}

/// U1 = HMAC(P, S || INT(block + 1)) as eight little-endian words.
fn first_u(password: &[u8], salt: &[u8], block: usize) -> Result<[u32; 8]> {
    let number =
        u32::try_from(block + 1).map_err(|_| Error::Kdf("PBKDF2 output too long".into()))?;
    let mut mac = <hmac::SimpleHmac<blake2::Blake2s256> as KeyInit>::new_from_slice(password)
        .map_err(|_| Error::Kdf("HMAC key".into()))?;
    mac.update(salt);
    mac.update(&number.to_be_bytes());
    let mut u = mac.finalize_fixed();
    let mut words = [0u32; 8];
    for (w, b) in words.iter_mut().zip(u.chunks_exact(4)) {
        *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    u.as_mut_slice().zeroize();
    Ok(words)
}

/// Derives every job's block (at most 32 bytes each) of
/// PBKDF2-HMAC-BLAKE2s-256, up to [`lanes`]`(level)` at once, at `level`
/// or the best below it that this processor runs.
pub(crate) fn pbkdf2_blake2s_jobs(
    password: &[u8],
    iterations: u32,
    cancel: &AtomicBool,
    level: Level,
    jobs: &mut [Job<'_>],
) -> Result<()> {
    if iterations == 0 {
        return Err(Error::Kdf("PBKDF2 needs at least one iteration".into()));
    }
    let level = level_for(level);
    let keyed = Keyed::new(password);
    for group in jobs.chunks_mut(lanes(level)) {
        run_group(password, &keyed, iterations, cancel, level, group)?;
    }
    Ok(())
}

fn run_group(
    password: &[u8],
    keyed: &Keyed,
    iterations: u32,
    cancel: &AtomicBool,
    level: Level,
    group: &mut [Job<'_>],
) -> Result<()> {
    let mut u = [[0u32; 8]; 16];
    let result = (|| {
        start_lanes(group, &mut u, |job| first_u(password, job.salt, job.block))?;
        match level_for(level) {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `level_for` gave AVX-512 only where the processor has
            // it, and checked AVX-512VL with it.
            Level::Avx512 if group.len() <= 8 => unsafe {
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
                "no multi-lane BLAKE2s on this architecture".into(),
            )),
        }
    })();
    if result.is_ok() {
        hand_out(group, |lane, bytes: &mut [u8; 32]| {
            for (b, w) in bytes.chunks_exact_mut(4).zip(&u[lane]) {
                b.copy_from_slice(&w.to_le_bytes());
            }
        });
    }
    u.zeroize();
    result
}

/// The compression and the PBKDF2 loop over a module's vector type `V`.
macro_rules! chains_body {
    ($feature:literal) => {
        /// One BLAKE2s compression of the last block (`u`, 32 zero bytes)
        /// of a 96-byte message from `init` (the same in every lane).
        #[target_feature(enable = $feature)]
        #[inline]
        fn compress(init: &[V; 8], u: &[V; 8]) -> [V; 8] {
            let zero = splat(0);
            let m = |i: usize| if i < 8 { u[i] } else { zero };
            let mut v = [zero; 16];
            v[..8].copy_from_slice(init);
            for (v, iv) in v[8..].iter_mut().zip(IV) {
                *v = splat(iv);
            }
            v[12] = splat(IV[4] ^ 96);
            v[14] = splat(!IV[6]);
            for s in &SIGMA {
                macro_rules! g {
                    ($a:literal, $b:literal, $c:literal, $d:literal, $x:expr, $y:expr) => {
                        v[$a] = add(add(v[$a], v[$b]), m($x));
                        v[$d] = rotr16(xor(v[$d], v[$a]));
                        v[$c] = add(v[$c], v[$d]);
                        v[$b] = rotr12(xor(v[$b], v[$c]));
                        v[$a] = add(add(v[$a], v[$b]), m($y));
                        v[$d] = rotr8(xor(v[$d], v[$a]));
                        v[$c] = add(v[$c], v[$d]);
                        v[$b] = rotr7(xor(v[$b], v[$c]));
                    };
                }
                g!(0, 4, 8, 12, s[0], s[1]);
                g!(1, 5, 9, 13, s[2], s[3]);
                g!(2, 6, 10, 14, s[4], s[5]);
                g!(3, 7, 11, 15, s[6], s[7]);
                g!(0, 5, 10, 15, s[8], s[9]);
                g!(1, 6, 11, 12, s[10], s[11]);
                g!(2, 7, 8, 13, s[12], s[13]);
                g!(3, 4, 9, 14, s[14], s[15]);
            }
            let mut h = *init;
            for (i, h) in h.iter_mut().enumerate() {
                *h = xor(*h, xor(v[i], v[i + 8]));
            }
            h
        }

        /// Runs iterations 2..=`iterations` of every lane's chain: `u`
        /// holds each lane's U1 on entry and its output block on return.
        #[target_feature(enable = $feature)]
        pub(super) fn chains(
            inner: &[u32; 8],
            outer: &[u32; 8],
            u: &mut [[u32; 8]; 16],
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

/// The lane moves every module shares: word `j` of the first LANES chains.
macro_rules! gather_scatter {
    ($feature:literal, $load:ident, $store:ident) => {
        #[target_feature(enable = $feature)]
        #[inline]
        fn gather(u: &[[u32; 8]; 16], j: usize) -> V {
            let mut w = [0u32; LANES];
            for (lane, w) in w.iter_mut().enumerate() {
                *w = u[lane][j];
            }
            // SAFETY: `w` is LANES u32s, the vector's size; unaligned load.
            unsafe { $load(w.as_ptr().cast()) }
        }
        #[target_feature(enable = $feature)]
        #[inline]
        fn scatter(v: V, u: &mut [[u32; 8]; 16], j: usize) {
            let mut w = [0u32; LANES];
            // SAFETY: `w` is LANES u32s, the vector's size; unaligned store.
            unsafe { $store(w.as_mut_ptr().cast(), v) };
            for (lane, w) in w.iter().enumerate() {
                u[lane][j] = *w;
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::*;
    use std::arch::x86_64::*;
    type V = __m128i;
    const LANES: usize = 4;

    macro_rules! rotr_fn {
        ($name:ident, $n:literal) => {
            #[target_feature(enable = "sse2")]
            #[inline]
            fn $name(x: V) -> V {
                _mm_or_si128(_mm_srli_epi32::<$n>(x), _mm_slli_epi32::<{ 32 - $n }>(x))
            }
        };
    }
    rotr_fn!(rotr16, 16);
    rotr_fn!(rotr12, 12);
    rotr_fn!(rotr8, 8);
    rotr_fn!(rotr7, 7);
    #[target_feature(enable = "sse2")]
    #[inline]
    fn splat(x: u32) -> V {
        _mm_set1_epi32(x as i32)
    }
    #[target_feature(enable = "sse2")]
    #[inline]
    fn add(a: V, b: V) -> V {
        _mm_add_epi32(a, b)
    }
    #[target_feature(enable = "sse2")]
    #[inline]
    fn xor(a: V, b: V) -> V {
        _mm_xor_si128(a, b)
    }
    gather_scatter!("sse2", _mm_loadu_si128, _mm_storeu_si128);
    chains_body!("sse2");
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;
    use std::arch::x86_64::*;
    type V = __m256i;
    const LANES: usize = 8;

    macro_rules! rotr_fn {
        ($name:ident, $n:literal) => {
            #[target_feature(enable = "avx2")]
            #[inline]
            fn $name(x: V) -> V {
                _mm256_or_si256(
                    _mm256_srli_epi32::<$n>(x),
                    _mm256_slli_epi32::<{ 32 - $n }>(x),
                )
            }
        };
    }
    rotr_fn!(rotr12, 12);
    rotr_fn!(rotr7, 7);
    /// Rotations by whole bytes are one byte shuffle.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn rotr16(x: V) -> V {
        let order = _mm256_setr_epi8(
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11,
            8, 9, 14, 15, 12, 13,
        );
        _mm256_shuffle_epi8(x, order)
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn rotr8(x: V) -> V {
        let order = _mm256_setr_epi8(
            1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12, 1, 2, 3, 0, 5, 6, 7, 4, 9, 10,
            11, 8, 13, 14, 15, 12,
        );
        _mm256_shuffle_epi8(x, order)
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn splat(x: u32) -> V {
        _mm256_set1_epi32(x as i32)
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn add(a: V, b: V) -> V {
        _mm256_add_epi32(a, b)
    }
    #[target_feature(enable = "avx2")]
    #[inline]
    fn xor(a: V, b: V) -> V {
        _mm256_xor_si256(a, b)
    }
    gather_scatter!("avx2", _mm256_loadu_si256, _mm256_storeu_si256);
    chains_body!("avx2");
}

/// The AVX-512 lane operations (a rotation in one instruction) over
/// 512-bit vectors (16 lanes) or, with AVX-512VL, 256-bit ones (8 lanes),
/// which issue on more ports: the faster choice for up to eight chains.
macro_rules! avx512_module {
    ($name:ident, $feature:literal, $V:ident, $lanes:literal, $set1:ident, $add:ident,
     $xor:ident, $ror:ident, $load:ident, $store:ident) => {
        #[cfg(target_arch = "x86_64")]
        mod $name {
            use super::*;
            use std::arch::x86_64::*;
            type V = $V;
            const LANES: usize = $lanes;

            macro_rules! rotr_fn {
                ($f:ident, $n:literal) => {
                    #[target_feature(enable = $feature)]
                    #[inline]
                    fn $f(x: V) -> V {
                        $ror::<$n>(x)
                    }
                };
            }
            rotr_fn!(rotr16, 16);
            rotr_fn!(rotr12, 12);
            rotr_fn!(rotr8, 8);
            rotr_fn!(rotr7, 7);
            #[target_feature(enable = $feature)]
            #[inline]
            fn splat(x: u32) -> V {
                $set1(x as i32)
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
            gather_scatter!($feature, $load, $store);
            chains_body!($feature);
        }
    };
}

avx512_module!(
    avx512,
    "avx512f",
    __m512i,
    16,
    _mm512_set1_epi32,
    _mm512_add_epi32,
    _mm512_xor_si512,
    _mm512_ror_epi32,
    _mm512_loadu_si512,
    _mm512_storeu_si512
);
avx512_module!(
    avx512vl,
    "avx512f,avx512vl",
    __m256i,
    8,
    _mm256_set1_epi32,
    _mm256_add_epi32,
    _mm256_xor_si256,
    _mm256_ror_epi32,
    _mm256_loadu_si256,
    _mm256_storeu_si256
);

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn agree_with_the_blake2_crate_at_every_level() {
        // The `hmac` crate over the `blake2` crate through the generic
        // PBKDF2 is the reference: random passwords (empty, short, a block
        // long, longer), salts, iteration counts, output lengths, block
        // numbers and group sizes, from a fixed seed.
        let never = AtomicBool::new(false);
        let mut rng = rand::rngs::StdRng::seed_from_u64(0xb1a4_e2e5);
        let mut levels: Vec<Level> = Level::ALL.into_iter().map(level_for).collect();
        levels.dedup();
        for level in levels {
            for case in 0..60 {
                let pw_len = match case % 5 {
                    0 => 0,
                    1 => 64,
                    2 => 65,
                    3 => rng.random_range(66..300),
                    _ => rng.random_range(1..64),
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
                        (salt, rng.random_range(0..7), rng.random_range(1..=32))
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
                pbkdf2_blake2s_jobs(&password, iterations, &never, level, &mut jobs)
                    .expect("lanes");
                for ((salt, block, len), got) in specs.iter().zip(&outs) {
                    let mut want = vec![0u8; (block + 1) * 32];
                    super::super::pbkdf2_from::<hmac::SimpleHmac<blake2::Blake2s256>>(
                        &password, salt, iterations, &never, 0, &mut want,
                    )
                    .expect("reference");
                    assert_eq!(
                        hex::encode(got),
                        hex::encode(&want[block * 32..block * 32 + len]),
                        "{level:?} case {case}: {pw_len}-byte password, {} salt bytes, \
                         {iterations} iterations, block {block}, {count} jobs",
                        salt.len()
                    );
                }
            }
        }
    }

    #[test]
    fn a_cancel_stops_every_level() {
        let cancel = AtomicBool::new(true);
        for level in Level::ALL {
            let mut out = [0u8; 32];
            let mut jobs = [Job {
                salt: b"salt",
                block: 0,
                out: &mut out,
            }];
            let r = pbkdf2_blake2s_jobs(b"pw", 100_000, &cancel, level, &mut jobs);
            assert!(matches!(r, Err(Error::Cancelled)), "{level:?}: {r:?}");
        }
    }
}
