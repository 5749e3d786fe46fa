//! PBKDF2-HMAC-RIPEMD-160 over several independent chains at once: one
//! SIMD lane per chain (4 with SSE2, 8 with AVX2, 16 with AVX-512, or 8 in
//! 256-bit AVX-512VL vectors for up to eight chains).
//!
//! As for BLAKE2s ([`super::blake2s_lanes`]), every lane starts each
//! compression from the same keyed inner or outer state, and the block
//! each iteration compresses is the previous 20-byte output and the fixed
//! padding of an 84-byte message: the same in every lane but for the
//! output words. The 160 steps are written out by [`rounds`] with their
//! rotations as constants, once for the scalar keyed states and every
//! vector width.

use super::sha512_lanes::{Job, Level, hand_out, level_for, start_lanes};
use crate::error::{Error, Result};
use hmac::digest::{FixedOutput, KeyInit, Update};
use std::sync::atomic::{AtomicBool, Ordering};
use zeroize::Zeroize;

use super::CANCEL_CHECK_EVERY;

const IV: [u32; 5] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];

/// RIPEMD-160's block: 64 bytes.
const BLOCK: usize = 64;

/// The padding of an iteration's message (a key block and a 20-byte
/// output): word 5 holds the 0x80 byte, word 14 the length in bits.
const PAD_FIRST: u32 = 0x80;
const PAD_BITS: u32 = 8 * (BLOCK as u32 + 20);

/// How many chains one call runs at once at `level`.
pub fn lanes(level: Level) -> usize {
    match level {
        Level::Avx512 => 16,
        Level::Avx2 => 8,
        Level::Sse2 => 4,
    }
}

/// Sixteen steps of one line: `$f` and `$k` for all of them, each step's
/// message word and rotation given. Where a module's `add`, `rotl`,
/// `splat` and `$x` (the message word) are in scope.
macro_rules! steps {
    ($x:ident, [$a:ident $b:ident $c:ident $d:ident $e:ident], $f:ident, $k:literal,
     $($r:literal $s:literal),+) => {
        $(
            let t = add(
                rotl::<$s, { 32 - $s }>(add(add($a, $f($b, $c, $d)), add($x($r), splat($k)))),
                $e,
            );
            $a = $e;
            $e = $d;
            $d = rotl::<10, 22>($c);
            $c = $b;
            $b = t;
        )+
    };
}

/// One RIPEMD-160 compression from the state `$init` of the block whose
/// word `i` is `$x(i)`: both lines, each round of the left line next to
/// the right's so that the two independent chains of steps interleave.
macro_rules! rounds {
    ($x:ident, $init:expr) => {{
        let h = $init;
        let [mut a, mut b, mut c, mut d, mut e] = h;
        let [mut a2, mut b2, mut c2, mut d2, mut e2] = h;
        steps!($x, [a b c d e], f1, 0x00000000,
            0 11, 1 14, 2 15, 3 12, 4 5, 5 8, 6 7, 7 9,
            8 11, 9 13, 10 14, 11 15, 12 6, 13 7, 14 9, 15 8);
        steps!($x, [a2 b2 c2 d2 e2], f5, 0x50a28be6,
            5 8, 14 9, 7 9, 0 11, 9 13, 2 15, 11 15, 4 5,
            13 7, 6 7, 15 8, 8 11, 1 14, 10 14, 3 12, 12 6);
        steps!($x, [a b c d e], f2, 0x5a827999,
            7 7, 4 6, 13 8, 1 13, 10 11, 6 9, 15 7, 3 15,
            12 7, 0 12, 9 15, 5 9, 2 11, 14 7, 11 13, 8 12);
        steps!($x, [a2 b2 c2 d2 e2], f4, 0x5c4dd124,
            6 9, 11 13, 3 15, 7 7, 0 12, 13 8, 5 9, 10 11,
            14 7, 15 7, 8 12, 12 7, 4 6, 9 15, 1 13, 2 11);
        steps!($x, [a b c d e], f3, 0x6ed9eba1,
            3 11, 10 13, 14 6, 4 7, 9 14, 15 9, 8 13, 1 15,
            2 14, 7 8, 0 13, 6 6, 13 5, 11 12, 5 7, 12 5);
        steps!($x, [a2 b2 c2 d2 e2], f3, 0x6d703ef3,
            15 9, 5 7, 1 15, 3 11, 7 8, 14 6, 6 6, 9 14,
            11 12, 8 13, 12 5, 2 14, 10 13, 0 13, 4 7, 13 5);
        steps!($x, [a b c d e], f4, 0x8f1bbcdc,
            1 11, 9 12, 11 14, 10 15, 0 14, 8 15, 12 9, 4 8,
            13 9, 3 14, 7 5, 15 6, 14 8, 5 6, 6 5, 2 12);
        steps!($x, [a2 b2 c2 d2 e2], f2, 0x7a6d76e9,
            8 15, 6 5, 4 8, 1 11, 3 14, 11 14, 15 6, 0 14,
            5 6, 12 9, 2 12, 13 9, 9 12, 7 5, 10 15, 14 8);
        steps!($x, [a b c d e], f5, 0xa953fd4e,
            4 9, 0 15, 5 5, 9 11, 7 6, 12 8, 2 13, 10 12,
            14 5, 1 12, 3 13, 8 14, 11 11, 6 8, 15 5, 13 6);
        steps!($x, [a2 b2 c2 d2 e2], f1, 0x00000000,
            12 8, 15 5, 10 12, 4 9, 1 12, 5 5, 8 14, 7 6,
            6 8, 2 13, 13 6, 14 5, 0 15, 3 13, 9 11, 11 11);
        [
            add(add(h[1], c), d2),
            add(add(h[2], d), e2),
            add(add(h[3], e), a2),
            add(add(h[4], a), b2),
            add(add(h[0], b), c2),
        ]
    }};
}

/// The plain `u32` form, for the keyed states: once per password.
mod scalar {
    #[inline]
    fn add(a: u32, b: u32) -> u32 {
        a.wrapping_add(b)
    }
    #[inline]
    fn splat(x: u32) -> u32 {
        x
    }
    #[inline]
    fn rotl<const L: i32, const R: i32>(x: u32) -> u32 {
        x.rotate_left(L as u32)
    }
    fn f1(x: u32, y: u32, z: u32) -> u32 {
        x ^ y ^ z
    }
    fn f2(x: u32, y: u32, z: u32) -> u32 {
        (x & y) | (!x & z)
    }
    fn f3(x: u32, y: u32, z: u32) -> u32 {
        (x | !y) ^ z
    }
    fn f4(x: u32, y: u32, z: u32) -> u32 {
        (x & z) | (y & !z)
    }
    fn f5(x: u32, y: u32, z: u32) -> u32 {
        x ^ (y | !z)
    }

    /// One compression of the 16-word block `m` into `h`.
    pub(super) fn compress(h: &mut [u32; 5], m: &[u32; 16]) {
        let x = |i: usize| m[i];
        *h = rounds!(x, *h);
    }
}

/// The HMAC states after the key's ipad and opad blocks.
struct Keyed {
    inner: [u32; 5],
    outer: [u32; 5],
}

impl Drop for Keyed {
    fn drop(&mut self) {
        self.inner.zeroize();
        self.outer.zeroize();
    }
}

impl Keyed {
    fn new(password: &[u8]) -> Self {
        use ripemd::Digest;
        let mut key = [0u8; BLOCK];
        if password.len() > BLOCK {
            let mut digest = ripemd::Ripemd160::digest(password);
            key[..digest.len()].copy_from_slice(&digest);
            digest.as_mut_slice().zeroize();
        } else {
            key[..password.len()].copy_from_slice(password);
        }
        let state = |byte: u8| {
            let mut m = [0u32; 16];
            for (w, k) in m.iter_mut().zip(key.chunks_exact(4)) {
                *w = u32::from_le_bytes([k[0] ^ byte, k[1] ^ byte, k[2] ^ byte, k[3] ^ byte]);
            }
            let mut h = IV;
            scalar::compress(&mut h, &m);
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

/// U1 = HMAC(P, S || INT(block + 1)) as five little-endian words (and
/// three unused zero words: the lanes framework's eight).
fn first_u(password: &[u8], salt: &[u8], block: usize) -> Result<[u32; 8]> {
    let number =
        u32::try_from(block + 1).map_err(|_| Error::Kdf("PBKDF2 output too long".into()))?;
    let mut mac = <hmac::Hmac<ripemd::Ripemd160> as KeyInit>::new_from_slice(password)
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

/// Derives every job's block (at most 20 bytes each) of
/// PBKDF2-HMAC-RIPEMD-160, up to [`lanes`]`(level)` at once, at `level`
/// or the best below it that this processor runs.
pub(crate) fn pbkdf2_ripemd160_jobs(
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
                "no multi-lane RIPEMD-160 on this architecture".into(),
            )),
        }
    })();
    if result.is_ok() {
        hand_out(group, |lane, bytes: &mut [u8; 20]| {
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
        /// One RIPEMD-160 compression of the last block (`u`, then the
        /// fixed padding) of an 84-byte message from `init` (the same in
        /// every lane).
        #[target_feature(enable = $feature)]
        #[inline]
        fn compress(init: &[V; 5], u: &[V; 5]) -> [V; 5] {
            let (zero, first, bits) = (splat(0), splat(PAD_FIRST), splat(PAD_BITS));
            let x = |i: usize| match i {
                0..5 => u[i],
                5 => first,
                14 => bits,
                _ => zero,
            };
            rounds!(x, *init)
        }

        /// Runs iterations 2..=`iterations` of every lane's chain: `u`
        /// holds each lane's U1 on entry and its output block on return.
        #[target_feature(enable = $feature)]
        pub(super) fn chains(
            inner: &[u32; 5],
            outer: &[u32; 5],
            u: &mut [[u32; 8]; 16],
            iterations: u32,
            cancel: &AtomicBool,
        ) -> Result<()> {
            let inner = inner.map(|w| splat(w));
            let outer = outer.map(|w| splat(w));
            let mut cur = [splat(0); 5];
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

/// The SSE2 and AVX2 lane operations: no rotate or three-input logic
/// instructions, so rotations are two shifts and an or, and the step
/// functions take the forms with the fewest operations.
macro_rules! shift_module {
    ($name:ident, $feature:literal, $V:ident, $lanes:literal, $set1:ident, $add:ident,
     $xor:ident, $and:ident, $or:ident, $slli:ident, $srli:ident,
     $load:ident, $store:ident) => {
        #[cfg(target_arch = "x86_64")]
        mod $name {
            use super::*;
            use std::arch::x86_64::*;
            type V = $V;
            const LANES: usize = $lanes;

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
            /// `x` rotated left by L (R = 32 - L).
            #[target_feature(enable = $feature)]
            #[inline]
            fn rotl<const L: i32, const R: i32>(x: V) -> V {
                $or($slli::<L>(x), $srli::<R>(x))
            }
            #[target_feature(enable = $feature)]
            #[inline]
            fn f1(x: V, y: V, z: V) -> V {
                xor(xor(x, y), z)
            }
            /// (x & y) | (!x & z) as ((y ^ z) & x) ^ z.
            #[target_feature(enable = $feature)]
            #[inline]
            fn f2(x: V, y: V, z: V) -> V {
                xor($and(xor(y, z), x), z)
            }
            /// (x | !y) ^ z, with !y as y ^ all ones.
            #[target_feature(enable = $feature)]
            #[inline]
            fn f3(x: V, y: V, z: V) -> V {
                xor($or(x, xor(y, splat(u32::MAX))), z)
            }
            /// (x & z) | (y & !z) as ((x ^ y) & z) ^ y.
            #[target_feature(enable = $feature)]
            #[inline]
            fn f4(x: V, y: V, z: V) -> V {
                xor($and(xor(x, y), z), y)
            }
            /// x ^ (y | !z), with !z as z ^ all ones.
            #[target_feature(enable = $feature)]
            #[inline]
            fn f5(x: V, y: V, z: V) -> V {
                xor(x, $or(y, xor(z, splat(u32::MAX))))
            }
            gather_scatter!($feature, $load, $store);
            chains_body!($feature);
        }
    };
}

shift_module!(
    sse2,
    "sse2",
    __m128i,
    4,
    _mm_set1_epi32,
    _mm_add_epi32,
    _mm_xor_si128,
    _mm_and_si128,
    _mm_or_si128,
    _mm_slli_epi32,
    _mm_srli_epi32,
    _mm_loadu_si128,
    _mm_storeu_si128
);
shift_module!(
    avx2,
    "avx2",
    __m256i,
    8,
    _mm256_set1_epi32,
    _mm256_add_epi32,
    _mm256_xor_si256,
    _mm256_and_si256,
    _mm256_or_si256,
    _mm256_slli_epi32,
    _mm256_srli_epi32,
    _mm256_loadu_si256,
    _mm256_storeu_si256
);

/// The AVX-512 lane operations (a rotation, and each step function, in one
/// instruction) over 512-bit vectors (16 lanes) or, with AVX-512VL,
/// 256-bit ones (8 lanes), which issue on more ports: the faster choice
/// for up to eight chains.
macro_rules! avx512_module {
    ($name:ident, $feature:literal, $V:ident, $lanes:literal, $set1:ident, $add:ident,
     $xor:ident, $rol:ident, $tern:ident, $load:ident, $store:ident) => {
        #[cfg(target_arch = "x86_64")]
        mod $name {
            use super::*;
            use std::arch::x86_64::*;
            type V = $V;
            const LANES: usize = $lanes;

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
            /// `x` rotated left by L (R, 32 - L, is for the shift forms).
            #[target_feature(enable = $feature)]
            #[inline]
            fn rotl<const L: i32, const R: i32>(x: V) -> V {
                $rol::<L>(x)
            }
            // The step functions as truth tables over x = 0xf0, y = 0xcc,
            // z = 0xaa.
            #[target_feature(enable = $feature)]
            #[inline]
            fn f1(x: V, y: V, z: V) -> V {
                $tern::<0x96>(x, y, z)
            }
            #[target_feature(enable = $feature)]
            #[inline]
            fn f2(x: V, y: V, z: V) -> V {
                $tern::<0xca>(x, y, z)
            }
            #[target_feature(enable = $feature)]
            #[inline]
            fn f3(x: V, y: V, z: V) -> V {
                $tern::<0x59>(x, y, z)
            }
            #[target_feature(enable = $feature)]
            #[inline]
            fn f4(x: V, y: V, z: V) -> V {
                $tern::<0xe4>(x, y, z)
            }
            #[target_feature(enable = $feature)]
            #[inline]
            fn f5(x: V, y: V, z: V) -> V {
                $tern::<0x2d>(x, y, z)
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
    _mm512_rol_epi32,
    _mm512_ternarylogic_epi32,
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
    _mm256_rol_epi32,
    _mm256_ternarylogic_epi32,
    _mm256_loadu_si256,
    _mm256_storeu_si256
);

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn the_compression_gives_the_published_digests() {
        // RIPEMD-160("") and ("abc"), one padded block each, through the
        // keyed states' scalar compression.
        for (msg, want) in [
            (&b""[..], "9c1185a5c5e9fc54612808977ee8f548b2258d31"),
            (b"abc", "8eb208f7e05d987a9b044a8e98c6b087f15a0bfc"),
        ] {
            let mut block = [0u8; BLOCK];
            block[..msg.len()].copy_from_slice(msg);
            block[msg.len()] = 0x80;
            block[56..64].copy_from_slice(&(8 * msg.len() as u64).to_le_bytes());
            let mut m = [0u32; 16];
            for (w, b) in m.iter_mut().zip(block.chunks_exact(4)) {
                *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
            let mut h = IV;
            scalar::compress(&mut h, &m);
            let got: Vec<u8> = h.iter().flat_map(|w| w.to_le_bytes()).collect();
            assert_eq!(hex::encode(got), want);
        }
    }

    #[test]
    fn agree_with_the_ripemd_crate_at_every_level() {
        // The `pbkdf2` crate over `ripemd` 0.1 (its own digest stack) is
        // the reference: random passwords (empty, short, a block
        // long, longer), salts, iteration counts, output lengths, block
        // numbers and group sizes, from a fixed seed.
        let never = AtomicBool::new(false);
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed_0160);
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
                        (salt, rng.random_range(0..11), rng.random_range(1..=20))
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
                pbkdf2_ripemd160_jobs(&password, iterations, &never, level, &mut jobs)
                    .expect("lanes");
                for ((salt, block, len), got) in specs.iter().zip(&outs) {
                    let mut want = vec![0u8; (block + 1) * 20];
                    pbkdf2::pbkdf2_hmac::<ripemd_ref::Ripemd160>(
                        &password, salt, iterations, &mut want,
                    );
                    assert_eq!(
                        hex::encode(got),
                        hex::encode(&want[block * 20..block * 20 + len]),
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
            let mut out = [0u8; 20];
            let mut jobs = [Job {
                salt: b"salt",
                block: 0,
                out: &mut out,
            }];
            let r = pbkdf2_ripemd160_jobs(b"pw", 100_000, &cancel, level, &mut jobs);
            assert!(matches!(r, Err(Error::Cancelled)), "{level:?}: {r:?}");
        }
    }
}
