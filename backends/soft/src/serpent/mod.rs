//! Serpent-256, bitsliced across blocks: word w of 8 or 16 blocks sits in
//! the lanes of one SIMD register, so every round's S-box (boolean
//! functions, no tables) and linear transformation run on all of them at
//! once. Constant time: no data- or key-dependent branches or addresses.
//!
//! Paths, chosen once at key setup by CPU detection (capped by `TCD_SIMD`,
//! see `tcd_backend_kit::simd`):
//! - AVX-512 (zmm, 16 blocks a register, S-boxes as `vpternlogd`),
//! - AVX-512VL on ymm (8 blocks, same instructions at 256 bits),
//! - AVX2 (8 blocks, S-boxes as and/or/xor/andnot circuits),
//! - SSE2 (4 blocks, the same code as AVX2 at 128 bits),
//! - portable Rust (8 lanes in an array), which runs everywhere.
//!
//! Byte order is the `serpent` crate's (NESSIE's, TrueCrypt's): the key and
//! each block are read as little-endian 32-bit words.

mod circuits;
mod lanes;
#[cfg(target_arch = "x86_64")]
mod x86;

use lanes::{PORTABLE_BYTES, RoundKeys};
use tcd_backend_kit::BlockCipher;
use tcd_backend_kit::simd::{self, Level};
use zeroize::Zeroize;

/// An implementation path. Hidden: for tests and benchmarks, which force
/// each path in turn.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SerpentPath {
    /// Plain Rust, any CPU.
    Portable,
    /// x86_64 SSE2 (every x86_64 CPU).
    Sse2,
    /// x86_64 AVX2.
    Avx2,
    /// x86_64 AVX-512F + VL on 256-bit registers.
    Avx512Ymm,
    /// x86_64 AVX-512F on 512-bit registers.
    Avx512Zmm,
}

impl SerpentPath {
    /// Every path, available or not.
    pub const ALL: [SerpentPath; 5] = [
        SerpentPath::Portable,
        SerpentPath::Sse2,
        SerpentPath::Avx2,
        SerpentPath::Avx512Ymm,
        SerpentPath::Avx512Zmm,
    ];

    /// Whether this CPU can run the path.
    pub fn is_available(self) -> bool {
        match self {
            SerpentPath::Portable => true,
            #[cfg(target_arch = "x86_64")]
            _ => simd::supported(self.level()),
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The SIMD level the path needs.
    pub fn level(self) -> Level {
        match self {
            SerpentPath::Portable | SerpentPath::Sse2 => Level::Sse2,
            SerpentPath::Avx2 => Level::Avx2,
            SerpentPath::Avx512Ymm | SerpentPath::Avx512Zmm => Level::Avx512,
        }
    }

    /// The path's name for people (the ABI's `xts_path`).
    pub fn name(self) -> &'static core::ffi::CStr {
        match self {
            SerpentPath::Portable => c"portable",
            SerpentPath::Sse2 => c"SSE2",
            SerpentPath::Avx2 => c"AVX2",
            SerpentPath::Avx512Ymm => c"AVX-512 (ymm)",
            SerpentPath::Avx512Zmm => c"AVX-512",
        }
    }

    /// The fastest path this CPU can run at or below the `TCD_SIMD` cap.
    pub fn best() -> SerpentPath {
        let cap = simd::cap();
        [
            SerpentPath::Avx512Zmm,
            SerpentPath::Avx512Ymm,
            SerpentPath::Avx2,
            SerpentPath::Sse2,
        ]
        .into_iter()
        .find(|p| p.level() <= cap && p.is_available())
        .unwrap_or(SerpentPath::Portable)
    }
}

/// Serpent with a 256-bit key, encrypting many blocks per call.
pub struct Serpent256 {
    /// The specification's keys, for the `vpternlogd` paths (exact boxes).
    rk: RoundKeys,
    /// Encryption's and decryption's keys for the gate-circuit paths, which
    /// absorb the complements the circuits leave (`lanes::fold_keys`).
    enc: RoundKeys,
    dec: RoundKeys,
    /// Checked available at construction.
    path: SerpentPath,
}

impl Serpent256 {
    pub fn new(key: &[u8; 32]) -> Self {
        Self::keyed(key, SerpentPath::best())
    }

    /// The cipher on a forced path; `None` if this CPU cannot run it.
    #[doc(hidden)]
    pub fn with_path(key: &[u8; 32], path: SerpentPath) -> Option<Self> {
        path.is_available().then(|| Self::keyed(key, path))
    }

    /// The path in use.
    #[doc(hidden)]
    pub fn path(&self) -> SerpentPath {
        self.path
    }

    fn keyed(key: &[u8; 32], path: SerpentPath) -> Self {
        let mut prekey = [0u32; 140];
        let mut rk = [[0u32; 4]; 33];
        lanes::key_schedule(key, &mut prekey, &mut rk);
        prekey.zeroize();
        let mut s = Serpent256 {
            rk,
            enc: [[0; 4]; 33],
            dec: [[0; 4]; 33],
            path,
        };
        rk.zeroize();
        lanes::fold_keys(&s.rk, &mut s.enc, &mut s.dec);
        s
    }

    fn run(&self, blocks: &mut [u8], encrypt: bool) {
        let folded = if encrypt { &self.enc } else { &self.dec };
        match self.path {
            #[cfg(target_arch = "x86_64")]
            SerpentPath::Avx512Zmm => {
                let f = if encrypt {
                    x86::zmm_encrypt
                } else {
                    x86::zmm_decrypt
                };
                // SAFETY: `path` is Avx512Zmm only if `is_available` saw
                // AVX2 and AVX-512F, the features `f` is compiled for.
                batched::<{ x86::ZMM_BYTES }>(blocks, |b| unsafe { f(&self.rk, b) });
            }
            #[cfg(target_arch = "x86_64")]
            SerpentPath::Avx512Ymm => {
                let f = if encrypt {
                    x86::ymm512_encrypt
                } else {
                    x86::ymm512_decrypt
                };
                // SAFETY: `path` is Avx512Ymm only if `is_available` saw
                // AVX2, AVX-512F and AVX-512VL, the features of `f`.
                batched::<{ x86::YMM_BYTES }>(blocks, |b| unsafe { f(&self.rk, b) });
            }
            #[cfg(target_arch = "x86_64")]
            SerpentPath::Avx2 => {
                let f = if encrypt {
                    x86::avx2_encrypt
                } else {
                    x86::avx2_decrypt
                };
                // SAFETY: `path` is Avx2 only if `is_available` saw AVX2,
                // the feature `f` is compiled for.
                batched::<{ x86::YMM_BYTES }>(blocks, |b| unsafe { f(folded, b) });
            }
            #[cfg(target_arch = "x86_64")]
            SerpentPath::Sse2 => {
                let f = if encrypt {
                    x86::sse2_encrypt
                } else {
                    x86::sse2_decrypt
                };
                // SAFETY: `f` needs SSE2, which every x86_64 CPU has (and
                // `is_available` confirmed it anyway).
                batched::<{ x86::XMM_BYTES }>(blocks, |b| unsafe { f(folded, b) });
            }
            _ => {
                let f = if encrypt {
                    lanes::portable_encrypt
                } else {
                    lanes::portable_decrypt
                };
                batched::<PORTABLE_BYTES>(blocks, |b| f(folded, b));
            }
        }
    }
}

/// Runs `f` over the whole batches of `blocks`, then over a zero-padded
/// copy of the tail (whole blocks short of a batch). A partial block at the
/// very end, which callers never pass, is left alone.
#[inline(always)]
fn batched<const N: usize>(blocks: &mut [u8], f: impl Fn(&mut [[u8; N]])) {
    let (full, tail) = blocks.as_chunks_mut::<N>();
    f(full);
    let tail_len = tail.len() - tail.len() % 16;
    if tail_len > 0 {
        let mut scratch = [[0u8; N]];
        scratch[0][..tail_len].copy_from_slice(&tail[..tail_len]);
        f(&mut scratch);
        tail[..tail_len].copy_from_slice(&scratch[0][..tail_len]);
        scratch[0].zeroize();
    }
}

impl BlockCipher for Serpent256 {
    fn path(&self) -> Option<&'static core::ffi::CStr> {
        Some(self.path.name())
    }
    fn encrypt_blocks(&self, blocks: &mut [u8]) {
        self.run(blocks, true);
    }
    fn decrypt_blocks(&self, blocks: &mut [u8]) {
        self.run(blocks, false);
    }
}

impl Drop for Serpent256 {
    fn drop(&mut self) {
        self.rk.zeroize();
        self.enc.zeroize();
        self.dec.zeroize();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
    use rand::{Rng, RngCore, SeedableRng};

    const NESSIE: &str = include_str!("testdata/nessie_serpent256.txt");

    fn paths() -> Vec<SerpentPath> {
        let p: Vec<_> = SerpentPath::ALL
            .into_iter()
            .filter(|p| p.is_available())
            .collect();
        eprintln!("serpent paths tested: {p:?}");
        p
    }

    fn unhex<const N: usize>(s: &str) -> [u8; N] {
        let v = hex::decode(s).expect("test vector hex");
        v.try_into().expect("test vector length")
    }

    #[test]
    fn serpent_nessie_known_answers_every_path() {
        let vectors: Vec<([u8; 32], [u8; 16], [u8; 16])> = NESSIE
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (unhex(f[0]), unhex(f[1]), unhex(f[2]))
            })
            .collect();
        assert_eq!(vectors.len(), 642);
        for path in paths() {
            for (key, pt, ct) in &vectors {
                let c = Serpent256::with_path(key, path).expect("available");
                let mut b = *pt;
                c.encrypt_blocks(&mut b);
                assert_eq!(&b, ct, "{path:?} key {}", hex::encode(key));
                c.decrypt_blocks(&mut b);
                assert_eq!(&b, pt, "{path:?} key {}", hex::encode(key));
                // The same block in every position of a full batch.
                let mut many = pt.repeat(37);
                c.encrypt_blocks(&mut many);
                assert!(many.chunks(16).all(|x| x == ct), "{path:?}");
            }
        }
    }

    #[test]
    fn serpent_differential_against_serpent_crate() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x5e4e_5eed);
        let paths = paths();
        for n in 1..=300usize {
            let mut key = [0u8; 32];
            rng.fill_bytes(&mut key);
            let mut data = vec![0u8; 16 * n];
            rng.fill_bytes(&mut data);
            let reference = serpent::Serpent::new_from_slice(&key).expect("32-byte key");
            let mut expected = data.clone();
            for b in expected.chunks_exact_mut(16) {
                reference.encrypt_block(b.try_into().expect("16 bytes"));
            }
            for &path in &paths {
                let c = Serpent256::with_path(&key, path).expect("available");
                let mut got = data.clone();
                c.encrypt_blocks(&mut got);
                assert_eq!(got, expected, "encrypt {path:?} n={n}");
                // Decrypt against the reference too, from random data.
                let mut dec = data.clone();
                c.decrypt_blocks(&mut dec);
                let mut rdec = data.clone();
                for b in rdec.chunks_exact_mut(16) {
                    reference.decrypt_block(b.try_into().expect("16 bytes"));
                }
                assert_eq!(dec, rdec, "decrypt {path:?} n={n}");
            }
        }
    }

    #[test]
    fn serpent_round_trip_random_lengths() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..100 {
            let mut key = [0u8; 32];
            rng.fill_bytes(&mut key);
            let n = rng.random_range(1..=600usize);
            let mut data = vec![0u8; 16 * n];
            rng.fill_bytes(&mut data);
            let c = Serpent256::new(&key);
            let mut x = data.clone();
            c.encrypt_blocks(&mut x);
            assert_ne!(x, data);
            c.decrypt_blocks(&mut x);
            assert_eq!(x, data, "{:?} n={n}", c.path());
        }
    }

    #[test]
    fn serpent_default_path_is_best_available() {
        let c = Serpent256::new(&[0; 32]);
        assert_eq!(c.path(), SerpentPath::best());
        assert!(c.path().is_available());
        assert!(Serpent256::with_path(&[0; 32], SerpentPath::Portable).is_some());
    }
}
