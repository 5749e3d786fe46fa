//! AES-256, bitsliced and constant-time, with no processor AES instruction.
//!
//! Blocks are processed 32 at a time as bit-planes (see [`bitslice`]); the
//! S-box is a boolean circuit over GF((2^4)^2) (see [`sbox`]). No memory
//! index and no branch depends on the key or the data, in the rounds or in
//! the key schedule, which runs the same circuit on 32-bit planes.
//!
//! The same generic code is compiled three times: for AVX-512F (one zmm
//! register per plane), for AVX2 (two ymm registers per plane) and for the
//! baseline target (four SSE2 registers per plane on x86_64, plain `u32`s
//! elsewhere). The path is chosen once, in [`Aes256::new`]: the fastest the
//! processor has at or below the `TCD_SIMD` cap.

mod bitslice;
mod lanes;
mod sbox;

#[cfg(test)]
mod tests;

use bitslice::{RoundKeys, lane, run};
#[cfg(not(target_arch = "x86_64"))]
use lanes::Portable as Baseline;
#[cfg(target_arch = "x86_64")]
use lanes::Xmm as Baseline;
use tcd_backend_kit::BlockCipher;
use tcd_backend_kit::simd::{self, Level};
use zeroize::Zeroize;

/// Which compiled copy of the cipher runs. Exposed only so tests and
/// benchmarks can force a path.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// SSE2 on x86_64, plain Rust elsewhere.
    Portable,
    Avx2,
    Avx512,
}

impl Path {
    /// Every path, fastest first.
    pub const ALL: [Path; 3] = [Path::Avx512, Path::Avx2, Path::Portable];

    /// Whether this processor can run the path.
    pub fn available(self) -> bool {
        match self {
            Path::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => std::is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => std::is_x86_feature_detected!("avx512f"),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The SIMD level the path needs.
    pub fn level(self) -> Level {
        match self {
            Path::Portable => Level::Sse2,
            Path::Avx2 => Level::Avx2,
            Path::Avx512 => Level::Avx512,
        }
    }

    /// The path's name for people (the ABI's `xts_path`).
    pub fn name(self) -> &'static core::ffi::CStr {
        match self {
            #[cfg(target_arch = "x86_64")]
            Path::Portable => c"SSE2",
            #[cfg(not(target_arch = "x86_64"))]
            Path::Portable => c"portable",
            Path::Avx2 => c"AVX2",
            Path::Avx512 => c"AVX-512",
        }
    }

    /// The fastest path this processor runs at or below the `TCD_SIMD` cap.
    pub fn best() -> Path {
        let cap = simd::cap();
        Path::ALL
            .into_iter()
            .find(|p| p.level() <= cap && p.available())
            .unwrap_or(Path::Portable)
    }
}

/// AES-256 with a 32-byte key.
pub struct Aes256 {
    rk: Box<RoundKeys>,
    path: Path,
}

impl Aes256 {
    pub fn new(key: &[u8; 32]) -> Aes256 {
        Self::build(key, Path::best())
    }

    /// The cipher on a given path, or `None` if this CPU cannot run it.
    #[doc(hidden)]
    pub fn with_path(key: &[u8; 32], path: Path) -> Option<Aes256> {
        path.available().then(|| Self::build(key, path))
    }

    /// The path chosen at construction.
    #[doc(hidden)]
    pub fn path(&self) -> Path {
        self.path
    }

    fn build(key: &[u8; 32], path: Path) -> Aes256 {
        let mut w = expand_key(key);
        let mut rk: Box<RoundKeys> = Box::new([[[0; 16]; 8]; 15]);
        for (r, planes) in rk.iter_mut().enumerate() {
            // The S-box constant, folded into every key after the first.
            let fold = if r == 0 { 0 } else { 0x63 };
            for (i, plane) in planes.iter_mut().enumerate() {
                for row in 0..4 {
                    for col in 0..4 {
                        let bit = ((w[4 * r + col][row] ^ fold) >> i) & 1;
                        plane[lane(row, col)] = 0u32.wrapping_sub(u32::from(bit));
                    }
                }
            }
        }
        w.zeroize();
        Aes256 { rk, path }
    }
}

impl Drop for Aes256 {
    fn drop(&mut self) {
        self.rk.zeroize();
    }
}

/// SubWord of the key schedule: the S-box circuit on 32-bit planes (only
/// four of whose bits are used), so it is constant-time like the rounds.
fn sub_word(word: [u8; 4]) -> [u8; 4] {
    let mut planes = [0u32; 8];
    for (i, p) in planes.iter_mut().enumerate() {
        for (t, b) in word.iter().enumerate() {
            *p |= u32::from((b >> i) & 1) << t;
        }
    }
    let out = sbox::sub_bytes(planes);
    let mut r = [0u8; 4];
    for (t, r) in r.iter_mut().enumerate() {
        for (i, p) in out.iter().enumerate() {
            *r |= (((p >> t) & 1) as u8) << i;
        }
        *r ^= 0x63;
    }
    planes.zeroize();
    r
}

/// FIPS-197 KeyExpansion for Nk = 8: the words w0..w59.
pub(crate) fn expand_key(key: &[u8; 32]) -> [[u8; 4]; 60] {
    let mut w = [[0u8; 4]; 60];
    let (words, _) = key.as_chunks::<4>();
    w[..8].copy_from_slice(words);
    let mut rcon = 1u8;
    for i in 8..60 {
        let mut temp = w[i - 1];
        // Branches on the public index only.
        if i % 8 == 0 {
            temp.rotate_left(1);
            temp = sub_word(temp);
            temp[0] ^= rcon;
            rcon <<= 1;
        } else if i % 8 == 4 {
            temp = sub_word(temp);
        }
        for b in 0..4 {
            w[i][b] = w[i - 8][b] ^ temp[b];
        }
        temp.zeroize();
    }
    w
}

fn run_portable<const ENCRYPT: bool>(rk: &RoundKeys, blocks: &mut [u8]) {
    run::<Baseline, ENCRYPT>(rk, blocks);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn run_avx2<const ENCRYPT: bool>(rk: &RoundKeys, blocks: &mut [u8]) {
    run::<lanes::Ymm, ENCRYPT>(rk, blocks);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn run_avx512<const ENCRYPT: bool>(rk: &RoundKeys, blocks: &mut [u8]) {
    run::<lanes::Zmm, ENCRYPT>(rk, blocks);
}

impl Aes256 {
    fn dispatch<const ENCRYPT: bool>(&self, blocks: &mut [u8]) {
        match self.path {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `path` is Avx512 only if `Path::available` detected
            // AVX-512F when the cipher was built.
            Path::Avx512 => unsafe { run_avx512::<ENCRYPT>(&self.rk, blocks) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `path` is Avx2 only if `Path::available` detected AVX2
            // when the cipher was built.
            Path::Avx2 => unsafe { run_avx2::<ENCRYPT>(&self.rk, blocks) },
            _ => run_portable::<ENCRYPT>(&self.rk, blocks),
        }
    }
}

impl BlockCipher for Aes256 {
    fn path(&self) -> Option<&'static core::ffi::CStr> {
        Some(self.path.name())
    }
    fn encrypt_blocks(&self, blocks: &mut [u8]) {
        self.dispatch::<true>(blocks);
    }
    fn decrypt_blocks(&self, blocks: &mut [u8]) {
        self.dispatch::<false>(blocks);
    }
}
