//! Camellia-256 (Aoki, Ichikawa, Kanda, Matsui, Moriai, Nakajima, Tokita,
//! 2000; RFC 3713), in RFC 3713's byte order (big-endian words), which is
//! VeraCrypt's and the `camellia` crate's.
//!
//! Paths, chosen once at key setup by CPU detection (capped by `TCD_SIMD`,
//! see `tcd_backend_kit::simd`):
//! - AVX2 (`avx2` module): 32 blocks byte-sliced, one ymm register per byte
//!   position, every S-box as an affine map, an inversion in `GF(2^8)` and
//!   another affine map (`affine` module), all by in-register byte shuffles
//!   (`vpshufb`) of 16-entry tables, so no address depends on data or key.
//!   Runs of fewer than 32 blocks are padded to 32.
//! - Portable (the SSE2 level and every other processor): table-driven, one
//!   block at a time, each round's S-boxes and P function as eight lookups
//!   in 64-bit tables (indexed by secret data, like the `camellia` crate and
//!   most software Camellia).

mod affine;
#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(test)]
mod tests;

use tcd_backend_kit::BlockCipher;
use tcd_backend_kit::simd::{self, Level};
use zeroize::Zeroize;

/// SBOX1 of RFC 3713; SBOX2, SBOX3 and SBOX4 are rotations of it.
#[rustfmt::skip]
pub(crate) const SBOX1: [u8; 256] = [
    0x70, 0x82, 0x2c, 0xec, 0xb3, 0x27, 0xc0, 0xe5, 0xe4, 0x85, 0x57, 0x35, 0xea, 0x0c, 0xae, 0x41,
    0x23, 0xef, 0x6b, 0x93, 0x45, 0x19, 0xa5, 0x21, 0xed, 0x0e, 0x4f, 0x4e, 0x1d, 0x65, 0x92, 0xbd,
    0x86, 0xb8, 0xaf, 0x8f, 0x7c, 0xeb, 0x1f, 0xce, 0x3e, 0x30, 0xdc, 0x5f, 0x5e, 0xc5, 0x0b, 0x1a,
    0xa6, 0xe1, 0x39, 0xca, 0xd5, 0x47, 0x5d, 0x3d, 0xd9, 0x01, 0x5a, 0xd6, 0x51, 0x56, 0x6c, 0x4d,
    0x8b, 0x0d, 0x9a, 0x66, 0xfb, 0xcc, 0xb0, 0x2d, 0x74, 0x12, 0x2b, 0x20, 0xf0, 0xb1, 0x84, 0x99,
    0xdf, 0x4c, 0xcb, 0xc2, 0x34, 0x7e, 0x76, 0x05, 0x6d, 0xb7, 0xa9, 0x31, 0xd1, 0x17, 0x04, 0xd7,
    0x14, 0x58, 0x3a, 0x61, 0xde, 0x1b, 0x11, 0x1c, 0x32, 0x0f, 0x9c, 0x16, 0x53, 0x18, 0xf2, 0x22,
    0xfe, 0x44, 0xcf, 0xb2, 0xc3, 0xb5, 0x7a, 0x91, 0x24, 0x08, 0xe8, 0xa8, 0x60, 0xfc, 0x69, 0x50,
    0xaa, 0xd0, 0xa0, 0x7d, 0xa1, 0x89, 0x62, 0x97, 0x54, 0x5b, 0x1e, 0x95, 0xe0, 0xff, 0x64, 0xd2,
    0x10, 0xc4, 0x00, 0x48, 0xa3, 0xf7, 0x75, 0xdb, 0x8a, 0x03, 0xe6, 0xda, 0x09, 0x3f, 0xdd, 0x94,
    0x87, 0x5c, 0x83, 0x02, 0xcd, 0x4a, 0x90, 0x33, 0x73, 0x67, 0xf6, 0xf3, 0x9d, 0x7f, 0xbf, 0xe2,
    0x52, 0x9b, 0xd8, 0x26, 0xc8, 0x37, 0xc6, 0x3b, 0x81, 0x96, 0x6f, 0x4b, 0x13, 0xbe, 0x63, 0x2e,
    0xe9, 0x79, 0xa7, 0x8c, 0x9f, 0x6e, 0xbc, 0x8e, 0x29, 0xf5, 0xf9, 0xb6, 0x2f, 0xfd, 0xb4, 0x59,
    0x78, 0x98, 0x06, 0x6a, 0xe7, 0x46, 0x71, 0xba, 0xd4, 0x25, 0xab, 0x42, 0x88, 0xa2, 0x8d, 0xfa,
    0x72, 0x07, 0xb9, 0x55, 0xf8, 0xee, 0xac, 0x0a, 0x36, 0x49, 0x2a, 0x68, 0x3c, 0x38, 0xf1, 0xa4,
    0x40, 0x28, 0xd3, 0x7b, 0xbb, 0xc9, 0x43, 0xc1, 0x15, 0xe3, 0xad, 0xf4, 0x77, 0xc7, 0x80, 0x9e,
];

/// The S-box of kind `s` (0 for SBOX1 ... 3 for SBOX4) at `x`.
pub(crate) const fn sbox(s: usize, x: u8) -> u8 {
    match s {
        0 => SBOX1[x as usize],
        1 => SBOX1[x as usize].rotate_left(1),
        2 => SBOX1[x as usize].rotate_left(7),
        _ => SBOX1[x.rotate_left(1) as usize],
    }
}

/// The S-box kind applied to byte `i` (most significant first) of the F
/// function's input.
pub(crate) const SBOX_OF_BYTE: [usize; 8] = [0, 1, 2, 3, 1, 2, 3, 0];

/// The P function: output byte `j` is the XOR of the input bytes `i` whose
/// bit `i` is set in `P_ROWS[j]` (bytes most significant first).
pub(crate) const P_ROWS: [u8; 8] = [
    0b1110_1101, // y1 = z1 ^ z3 ^ z4 ^ z6 ^ z7 ^ z8
    0b1101_1011, // y2 = z1 ^ z2 ^ z4 ^ z5 ^ z7 ^ z8
    0b1011_0111, // y3 = z1 ^ z2 ^ z3 ^ z5 ^ z6 ^ z8
    0b0111_1110, // y4 = z2 ^ z3 ^ z4 ^ z5 ^ z6 ^ z7
    0b1110_0011, // y5 = z1 ^ z2 ^ z6 ^ z7 ^ z8
    0b1101_0110, // y6 = z2 ^ z3 ^ z5 ^ z7 ^ z8
    0b1011_1100, // y7 = z3 ^ z4 ^ z5 ^ z6 ^ z8
    0b0111_1001, // y8 = z1 ^ z4 ^ z5 ^ z6 ^ z7
];

/// `SP[i][x]`: the F function's output when input byte `i` gives `x` and
/// every other byte gives 0 after its S-box (P is linear).
static SP: [[u64; 256]; 8] = sp_tables();

const fn sp_tables() -> [[u64; 256]; 8] {
    let mut t = [[0u64; 256]; 8];
    let mut i = 0;
    while i < 8 {
        let mut x = 0;
        while x < 256 {
            let s = sbox(SBOX_OF_BYTE[i], x as u8) as u64;
            let mut j = 0;
            while j < 8 {
                if P_ROWS[j] >> i & 1 == 1 {
                    t[i][x] |= s << (56 - 8 * j);
                }
                j += 1;
            }
            x += 1;
        }
        i += 1;
    }
    t
}

/// The F function on an input already XORed with its subkey.
#[inline(always)]
fn f(x: u64) -> u64 {
    let b = x.to_be_bytes();
    let mut y = 0;
    for i in 0..8 {
        y ^= SP[i][usize::from(b[i])];
    }
    y
}

fn fl(x: u64, k: u64) -> u64 {
    let (mut x1, mut x2) = ((x >> 32) as u32, x as u32);
    let (k1, k2) = ((k >> 32) as u32, k as u32);
    x2 ^= (x1 & k1).rotate_left(1);
    x1 ^= x2 | k2;
    u64::from(x1) << 32 | u64::from(x2)
}

fn fl_inv(y: u64, k: u64) -> u64 {
    let (mut y1, mut y2) = ((y >> 32) as u32, y as u32);
    let (k1, k2) = ((k >> 32) as u32, k as u32);
    y1 ^= y2 | k2;
    y2 ^= (y1 & k1).rotate_left(1);
    u64::from(y1) << 32 | u64::from(y2)
}

/// The subkeys in the order one direction uses them: whitening `kw`
/// (two before, two after), round keys `k`, FL/FL⁻¹ keys `ke`.
#[derive(Clone, Zeroize)]
pub(crate) struct Schedule {
    pub(crate) kw: [u64; 4],
    pub(crate) k: [u64; 24],
    pub(crate) ke: [u64; 6],
}

impl Schedule {
    /// RFC 3713's key schedule for a 256-bit key: the encryption order.
    fn encryption(key: &[u8; 32]) -> Schedule {
        const SIGMA: [u64; 6] = [
            0xa09e_667f_3bcc_908b,
            0xb67a_e858_4caa_73b2,
            0xc6ef_372f_e94f_82be,
            0x54ff_53a5_f1d3_6f1c,
            0x10e5_27fa_de68_2d1d,
            0xb056_88c2_b3e6_c1fd,
        ];
        let mut kl = u128::from_be_bytes(key[..16].try_into().unwrap_or([0; 16]));
        let mut kr = u128::from_be_bytes(key[16..].try_into().unwrap_or([0; 16]));
        let (mut d1, mut d2) = split(kl ^ kr);
        d2 ^= f(d1 ^ SIGMA[0]);
        d1 ^= f(d2 ^ SIGMA[1]);
        d1 ^= (kl >> 64) as u64;
        d2 ^= kl as u64;
        d2 ^= f(d1 ^ SIGMA[2]);
        d1 ^= f(d2 ^ SIGMA[3]);
        let mut ka = u128::from(d1) << 64 | u128::from(d2);
        (d1, d2) = split(ka ^ kr);
        d2 ^= f(d1 ^ SIGMA[4]);
        d1 ^= f(d2 ^ SIGMA[5]);
        let mut kb = u128::from(d1) << 64 | u128::from(d2);
        (d1, d2) = (0, 0);
        let r = |x: u128, n: u32| split(x.rotate_left(n));
        let pairs = [
            r(kl, 0),   // kw1, kw2
            r(kb, 0),   // k1, k2
            r(kr, 15),  // k3, k4
            r(ka, 15),  // k5, k6
            r(kr, 30),  // ke1, ke2
            r(kb, 30),  // k7, k8
            r(kl, 45),  // k9, k10
            r(ka, 45),  // k11, k12
            r(kl, 60),  // ke3, ke4
            r(kr, 60),  // k13, k14
            r(kb, 60),  // k15, k16
            r(kl, 77),  // k17, k18
            r(ka, 77),  // ke5, ke6
            r(kr, 94),  // k19, k20
            r(ka, 94),  // k21, k22
            r(kl, 111), // k23, k24
            r(kb, 111), // kw3, kw4
        ];
        let mut s = Schedule {
            kw: [0; 4],
            k: [0; 24],
            ke: [0; 6],
        };
        let (mut k, mut ke) = (0, 0);
        for (n, &(hi, lo)) in pairs.iter().enumerate() {
            match n {
                0 => (s.kw[0], s.kw[1]) = (hi, lo),
                16 => (s.kw[2], s.kw[3]) = (hi, lo),
                4 | 8 | 12 => {
                    (s.ke[ke], s.ke[ke + 1]) = (hi, lo);
                    ke += 2;
                }
                _ => {
                    (s.k[k], s.k[k + 1]) = (hi, lo);
                    k += 2;
                }
            }
        }
        let mut pairs = pairs;
        pairs.zeroize();
        kl.zeroize();
        kr.zeroize();
        ka.zeroize();
        kb.zeroize();
        let _ = (d1, d2);
        s
    }

    /// The same subkeys in the order decryption uses them.
    fn reversed(&self) -> Schedule {
        let mut s = self.clone();
        s.kw = [self.kw[2], self.kw[3], self.kw[0], self.kw[1]];
        s.k.reverse();
        s.ke.reverse();
        s
    }

    /// One block through the cipher in this schedule's direction.
    fn crypt_block(&self, block: &mut [u8; 16]) {
        let (mut d1, mut d2) = split(u128::from_be_bytes(*block));
        d1 ^= self.kw[0];
        d2 ^= self.kw[1];
        for g in 0..4 {
            for r in 0..3 {
                d2 ^= f(d1 ^ self.k[6 * g + 2 * r]);
                d1 ^= f(d2 ^ self.k[6 * g + 2 * r + 1]);
            }
            if g < 3 {
                d1 = fl(d1, self.ke[2 * g]);
                d2 = fl_inv(d2, self.ke[2 * g + 1]);
            }
        }
        d2 ^= self.kw[2];
        d1 ^= self.kw[3];
        *block = (u128::from(d2) << 64 | u128::from(d1)).to_be_bytes();
    }

    fn crypt_portable(&self, blocks: &mut [u8]) {
        for b in blocks.as_chunks_mut::<16>().0 {
            self.crypt_block(b);
        }
    }
}

fn split(x: u128) -> (u64, u64) {
    ((x >> 64) as u64, x as u64)
}

/// An implementation path. Hidden: for tests and benchmarks, which force
/// each path in turn.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CamelliaPath {
    /// Table-driven Rust, one block at a time, any CPU.
    Portable,
    /// x86_64 AVX2, 32 blocks byte-sliced.
    Avx2,
}

impl CamelliaPath {
    /// Every path, available or not.
    pub const ALL: [CamelliaPath; 2] = [CamelliaPath::Portable, CamelliaPath::Avx2];

    /// Whether this CPU can run the path.
    pub fn is_available(self) -> bool {
        self == CamelliaPath::Portable || simd::supported(self.level())
    }

    /// The SIMD level the path needs.
    pub fn level(self) -> Level {
        match self {
            CamelliaPath::Portable => Level::Sse2,
            CamelliaPath::Avx2 => Level::Avx2,
        }
    }

    /// The path's name for people (the ABI's `xts_path`).
    pub fn name(self) -> &'static core::ffi::CStr {
        match self {
            CamelliaPath::Portable => c"portable",
            CamelliaPath::Avx2 => c"AVX2",
        }
    }

    /// The fastest path this CPU can run at or below the `TCD_SIMD` cap.
    pub fn best() -> CamelliaPath {
        let cap = simd::cap();
        if cfg!(target_arch = "x86_64")
            && CamelliaPath::Avx2.level() <= cap
            && CamelliaPath::Avx2.is_available()
        {
            CamelliaPath::Avx2
        } else {
            CamelliaPath::Portable
        }
    }
}

/// Camellia with a 256-bit key, encrypting many blocks per call. The
/// subkeys are wiped when it is dropped.
pub struct Camellia256 {
    enc: Schedule,
    dec: Schedule,
    /// Checked available at construction.
    path: CamelliaPath,
}

impl Camellia256 {
    pub fn new(key: &[u8; 32]) -> Self {
        Self::keyed(key, CamelliaPath::best())
    }

    /// The cipher on a forced path; `None` if this CPU cannot run it.
    #[doc(hidden)]
    pub fn with_path(key: &[u8; 32], path: CamelliaPath) -> Option<Self> {
        path.is_available().then(|| Self::keyed(key, path))
    }

    /// The path in use.
    #[doc(hidden)]
    pub fn path(&self) -> CamelliaPath {
        self.path
    }

    fn keyed(key: &[u8; 32], path: CamelliaPath) -> Self {
        let enc = Schedule::encryption(key);
        let dec = enc.reversed();
        Camellia256 { enc, dec, path }
    }

    fn run(&self, blocks: &mut [u8], encrypt: bool) {
        let s = if encrypt { &self.enc } else { &self.dec };
        match self.path {
            #[cfg(target_arch = "x86_64")]
            CamelliaPath::Avx2 => {
                // SAFETY: `path` is Avx2 only if `is_available` saw AVX2 on
                // this CPU at construction.
                unsafe { avx2::crypt(s, blocks) }
            }
            _ => s.crypt_portable(blocks),
        }
    }
}

impl Drop for Camellia256 {
    fn drop(&mut self) {
        self.enc.zeroize();
        self.dec.zeroize();
    }
}

impl BlockCipher for Camellia256 {
    fn encrypt_blocks(&self, blocks: &mut [u8]) {
        self.run(blocks, true);
    }
    fn decrypt_blocks(&self, blocks: &mut [u8]) {
        self.run(blocks, false);
    }
    fn path(&self) -> Option<&'static core::ffi::CStr> {
        Some(self.path.name())
    }
}
