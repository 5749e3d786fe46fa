//! Twofish-256 (Schneier, Kelsey, Whiting, Wagner, Hall, Ferguson, 1998), in
//! the byte order of the Twofish reference code, TrueCrypt, VeraCrypt and the
//! `twofish` crate: key, plaintext and ciphertext words are little-endian.
//!
//! # Speed
//!
//! Key setup builds the "full keying" tables: for each byte position `j` of
//! the `g` function, a 256-entry table of 32-bit words holding the
//! key-dependent S-box `s_j` already multiplied by column `j` of the MDS
//! matrix, so `g(x)` is four lookups and three XORs. The 40 round subkeys are
//! precomputed too. Bulk encryption runs four independent blocks through
//! each round together so the lookups of one block overlap those of the
//! others (four divides the 32 blocks of a 512-byte XTS unit, so no unit
//! ends in blocks run one at a time).
//!
//! The rounds are bound by the number of instructions, most of them
//! extracting the bytes that index the tables. `g` therefore reads only the
//! two low bytes of a register (on x86, `movzx` of the low and high byte
//! registers), then of the register rotated by 16, and keeps the rotated
//! word instead of the original, rather than shifting and masking bytes 2
//! and 3 out of a copy: the words of the state are held rotated by 0 or 16
//! bits, tracked at compile time (see [`encrypt_n`]), and the round
//! function's output is rotated to match the word it updates. On an Intel
//! Xeon (Sapphire Rapids class) the two changes together measured about
//! 10 % faster on bare blocks and 16 % faster through XTS than three blocks
//! with shifted bytes; either alone gained at most 4 % on bare blocks.
//!
//! On x86-64 with AVX-512 (F, BW, VBMI) and GFNI, detected once at key
//! setup, whole runs of 32 blocks go through the `avx512` module instead: 16 blocks
//! per register, the S-boxes by byte permutes from registers, the MDS matrix
//! by GF(2) affine maps. About 2.4 times the portable speed of the time on
//! Zen 4, 1.8 times the present portable code on the Xeon. Elsewhere
//! the portable code runs, with no separate AVX2 path: on Zen 3 (AVX2, no
//! GFNI) an AVX2 version with the rounds in registers ran slower than it,
//! with its table lookups as 8-lane gathers (~290 against ~350 MB/s) and as
//! scalar loads from a stored register alike; and the portable code
//! compiled for AVX2 and BMI2 (`rorx`, VEX encoding) gained 5 % on the
//! former three-block rounds but nothing on the present ones (1 % slower
//! than the x86-64 baseline build, on the Xeon). `TCD_SIMD` below `avx512`
//! forces the portable code (see `tcd_backend_kit::simd`).
//!
//! # Table lookups
//!
//! Twofish's S-boxes are key-dependent 8-bit permutations; every practical
//! software implementation (TrueCrypt's and VeraCrypt's included, and the
//! Linux kernel's assembly) computes them with table lookups indexed by
//! secret data. The portable code here does too; the AVX-512 code permutes
//! bytes inside registers instead of loading from memory. Table lookups are
//! inherent to software Twofish, unlike the bitsliced AES and Serpent of this
//! backend. The tables are derived from the key and are wiped when the
//! cipher is dropped.

use tcd_backend_kit::BlockCipher;
use tcd_backend_kit::simd::{self, Level};
use zeroize::Zeroize;

#[cfg(target_arch = "x86_64")]
mod avx512;

/// The 4-bit permutations t0..t3 that define q0 (Twofish paper, section 4.3.5).
const Q0_T: [[u8; 16]; 4] = [
    [
        0x8, 0x1, 0x7, 0xD, 0x6, 0xF, 0x3, 0x2, 0x0, 0xB, 0x5, 0x9, 0xE, 0xC, 0xA, 0x4,
    ],
    [
        0xE, 0xC, 0xB, 0x8, 0x1, 0x2, 0x3, 0x5, 0xF, 0x4, 0xA, 0x6, 0x7, 0x0, 0x9, 0xD,
    ],
    [
        0xB, 0xA, 0x5, 0xE, 0x6, 0xD, 0x9, 0x0, 0xC, 0x8, 0xF, 0x3, 0x2, 0x4, 0x7, 0x1,
    ],
    [
        0xD, 0x7, 0xF, 0x4, 0x1, 0x2, 0x6, 0xE, 0x9, 0xB, 0x3, 0x0, 0x8, 0x5, 0xC, 0xA,
    ],
];
/// The 4-bit permutations t0..t3 that define q1 (same section).
const Q1_T: [[u8; 16]; 4] = [
    [
        0x2, 0x8, 0xB, 0xD, 0xF, 0x7, 0x6, 0xE, 0x3, 0x1, 0x9, 0x4, 0x0, 0xA, 0xC, 0x5,
    ],
    [
        0x1, 0xE, 0x2, 0xB, 0x4, 0xC, 0x3, 0x7, 0x6, 0xD, 0xA, 0x5, 0xF, 0x9, 0x0, 0x8,
    ],
    [
        0x4, 0xC, 0x7, 0x5, 0x1, 0x6, 0x9, 0xA, 0x0, 0xE, 0xD, 0x8, 0x2, 0xB, 0x3, 0xF,
    ],
    [
        0xB, 0x9, 0x5, 0x1, 0xC, 0x3, 0xD, 0xE, 0x6, 0x4, 0x7, 0xF, 0x2, 0x0, 0x8, 0xA,
    ],
];

/// Rotates a nibble right by one bit.
const fn ror4(x: u8) -> u8 {
    ((x >> 1) | (x << 3)) & 0xF
}

/// Builds the 8-bit permutation q from its four nibble permutations.
const fn make_q(t: &[[u8; 16]; 4]) -> [u8; 256] {
    let mut q = [0u8; 256];
    let mut x = 0;
    while x < 256 {
        let a0 = (x >> 4) as u8;
        let b0 = (x & 0xF) as u8;
        let a1 = a0 ^ b0;
        let b1 = (a0 ^ ror4(b0) ^ (a0 << 3)) & 0xF;
        let a2 = t[0][a1 as usize];
        let b2 = t[1][b1 as usize];
        let a3 = a2 ^ b2;
        let b3 = (a2 ^ ror4(b2) ^ (a2 << 3)) & 0xF;
        let a4 = t[2][a3 as usize];
        let b4 = t[3][b3 as usize];
        q[x] = (b4 << 4) | a4;
        x += 1;
    }
    q
}

/// q0 and q1, indexed by 0 and 1.
const Q: [[u8; 256]; 2] = [make_q(&Q0_T), make_q(&Q1_T)];

/// Which q each byte position of `h` passes through, before XORing with
/// L3, L2, L1, L0 and finally (for k = 4, a 256-bit key).
const Q_ORDER: [[usize; 5]; 4] = [
    [1, 1, 0, 0, 1],
    [0, 1, 1, 0, 0],
    [0, 0, 0, 1, 1],
    [1, 0, 1, 1, 0],
];

/// The MDS matrix, over GF(2^8) modulo x^8+x^6+x^5+x^3+1.
const MDS: [[u8; 4]; 4] = [
    [0x01, 0xEF, 0x5B, 0x5B],
    [0x5B, 0xEF, 0xEF, 0x01],
    [0xEF, 0x5B, 0x01, 0xEF],
    [0xEF, 0x01, 0xEF, 0x5B],
];
const MDS_POLY: u16 = 0x169;

/// The Reed-Solomon matrix of the key schedule, modulo x^8+x^6+x^3+x^2+1.
const RS: [[u8; 8]; 4] = [
    [0x01, 0xA4, 0x55, 0x87, 0x5A, 0x58, 0xDB, 0x9E],
    [0xA4, 0x56, 0x82, 0xF3, 0x1E, 0xC6, 0x68, 0xE5],
    [0x02, 0xA1, 0xFC, 0xC1, 0x47, 0xAE, 0x3D, 0x19],
    [0xA4, 0x55, 0x87, 0x5A, 0x58, 0xDB, 0x9E, 0x03],
];
const RS_POLY: u16 = 0x14D;

/// Multiplication in GF(2^8) modulo `poly` (key setup only).
const fn gf_mul(a: u8, b: u8, poly: u16) -> u8 {
    let mut a = a as u16;
    let mut b = b;
    let mut r = 0u16;
    while b != 0 {
        if b & 1 != 0 {
            r ^= a;
        }
        a <<= 1;
        if a & 0x100 != 0 {
            a ^= poly;
        }
        b >>= 1;
    }
    r as u8
}

/// Byte `j` of `h`'s S-box chain: `l` is (L0, L1, L2, L3) as bytes.
fn sbox(j: usize, x: u8, l: &[[u8; 4]; 4]) -> u8 {
    let o = &Q_ORDER[j];
    let mut y = Q[o[0]][usize::from(x)] ^ l[3][j];
    y = Q[o[1]][usize::from(y)] ^ l[2][j];
    y = Q[o[2]][usize::from(y)] ^ l[1][j];
    y = Q[o[3]][usize::from(y)] ^ l[0][j];
    Q[o[4]][usize::from(y)]
}

/// Column `j` of the MDS matrix times `y`, as a little-endian word.
fn mds_col(j: usize, y: u8) -> u32 {
    u32::from_le_bytes([
        gf_mul(MDS[0][j], y, MDS_POLY),
        gf_mul(MDS[1][j], y, MDS_POLY),
        gf_mul(MDS[2][j], y, MDS_POLY),
        gf_mul(MDS[3][j], y, MDS_POLY),
    ])
}

/// The function `h` of the key schedule on the word with all bytes `x`.
fn h(x: u8, l: &[[u8; 4]; 4]) -> u32 {
    (0..4).fold(0, |acc, j| acc ^ mds_col(j, sbox(j, x, l)))
}

/// The expanded key: `g` tables with the MDS folded in, and the subkeys.
struct Schedule {
    /// `s[j][x]` = MDS column j times s_j(x).
    s: [[u32; 256]; 4],
    /// K0..K39: input whitening, output whitening, 32 round subkeys.
    k: [u32; 40],
    /// `sb[j][x]` = s_j(x), the bare key-dependent S-boxes (for the
    /// byte-permute code, which applies the MDS matrix itself).
    sb: [[u8; 256]; 4],
}

/// Which code runs the blocks, chosen once at key setup. Hidden: for
/// tests and benchmarks, which force each path in turn.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    Portable,
    /// 16 blocks per register, S-boxes by byte permutes and the MDS matrix
    /// by GF(2) affine maps; `avx512f`, `avx512bw`, `avx512vbmi` and `gfni`
    /// were detected when this was chosen.
    Avx512,
}

impl Path {
    /// Every path, fastest first.
    pub const ALL: [Path; 2] = [Path::Avx512, Path::Portable];

    /// Whether this processor can run the path.
    pub fn available(self) -> bool {
        match self {
            Path::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => {
                std::arch::is_x86_feature_detected!("avx512f")
                    && std::arch::is_x86_feature_detected!("avx512bw")
                    && std::arch::is_x86_feature_detected!("avx512vbmi")
                    && std::arch::is_x86_feature_detected!("gfni")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }

    /// The SIMD level the path needs.
    pub fn level(self) -> Level {
        match self {
            Path::Portable => Level::Sse2,
            Path::Avx512 => Level::Avx512,
        }
    }

    /// The path's name for people (the ABI's `xts_path`).
    pub fn name(self) -> &'static core::ffi::CStr {
        match self {
            Path::Portable => c"portable",
            Path::Avx512 => c"AVX-512 GFNI",
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

/// Twofish with a 256-bit key.
pub struct Twofish256 {
    ks: Box<Schedule>,
    path: Path,
}

impl Drop for Twofish256 {
    fn drop(&mut self) {
        self.ks.s.zeroize();
        self.ks.k.zeroize();
        self.ks.sb.zeroize();
    }
}

impl Twofish256 {
    /// The cipher, on the fastest code this processor runs.
    pub fn new(key: &[u8; 32]) -> Twofish256 {
        Self::keyed(key, Path::best())
    }

    /// The cipher on a forced path; `None` if this CPU cannot run it.
    #[doc(hidden)]
    pub fn with_path(key: &[u8; 32], path: Path) -> Option<Twofish256> {
        path.available().then(|| Self::keyed(key, path))
    }

    /// The path in use.
    #[doc(hidden)]
    pub fn path(&self) -> Path {
        self.path
    }

    /// The cipher on the portable code only, whatever the processor (for
    /// tests and speed comparisons).
    pub fn new_portable(key: &[u8; 32]) -> Twofish256 {
        Self::keyed(key, Path::Portable)
    }

    fn keyed(key: &[u8; 32], path: Path) -> Twofish256 {
        // Built in place on the heap so no copy of the tables is left on the
        // stack.
        let mut ks = Box::new(Schedule {
            s: [[0; 256]; 4],
            k: [0; 40],
            sb: [[0; 256]; 4],
        });

        // Me = (M0, M2, M4, M6), Mo = (M1, M3, M5, M7), as byte arrays.
        let mut me = [[0u8; 4]; 4];
        let mut mo = [[0u8; 4]; 4];
        for i in 0..4 {
            me[i].copy_from_slice(&key[8 * i..8 * i + 4]);
            mo[i].copy_from_slice(&key[8 * i + 4..8 * i + 8]);
        }
        for i in 0..20u8 {
            let a = h(2 * i, &me);
            let b = h(2 * i + 1, &mo).rotate_left(8);
            ks.k[2 * usize::from(i)] = a.wrapping_add(b);
            ks.k[2 * usize::from(i) + 1] = a.wrapping_add(b.wrapping_mul(2)).rotate_left(9);
        }

        // S_i = RS . (m_8i .. m_8i+7); g uses L = (S3, S2, S1, S0).
        let mut l = [[0u8; 4]; 4];
        for i in 0..4 {
            for (r, row) in RS.iter().enumerate() {
                l[3 - i][r] = row
                    .iter()
                    .zip(&key[8 * i..8 * i + 8])
                    .fold(0, |acc, (&c, &m)| acc ^ gf_mul(c, m, RS_POLY));
            }
        }
        for j in 0..4 {
            for x in 0..=255u8 {
                let y = sbox(j, x, &l);
                ks.sb[j][usize::from(x)] = y;
                ks.s[j][usize::from(x)] = mds_col(j, y);
            }
        }
        me.zeroize();
        mo.zeroize();
        l.zeroize();
        Twofish256 { ks, path }
    }
}

/// Blocks run through the rounds together by the portable code: enough
/// independent work to hide the latency of a round's lookups, and a divisor
/// of the 32 blocks of a 512-byte XTS unit, so no unit leaves a tail.
const LANES: usize = 4;

#[inline(always)]
fn words(b: &[u8; 16]) -> [u32; 4] {
    core::array::from_fn(|i| {
        u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
    })
}

#[inline(always)]
fn store(b: &mut [u8; 16], w: [u32; 4]) {
    for (i, w) in w.iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
}

/// `g(v)` from `x`, which holds `v` rotated left by `8 * off` bits, and `x`
/// rotated left by 16 more.
///
/// Only the low two bytes of a register are read (`movzx` of the low and
/// high byte registers on x86), first of `x`, then of its rotation: the
/// table each byte indexes follows from `off`. The rotated word is the one
/// kept, so the rotation that exposes bytes 2 and 3 is not thrown away.
#[inline(always)]
fn g_rot(s: &[[u32; 256]; 4], x: u32, off: usize) -> (u32, u32) {
    let y = x.rotate_left(16);
    let v = s[(4 - off) % 4][usize::from(x as u8)]
        ^ s[(5 - off) % 4][usize::from((x >> 8) as u8)]
        ^ s[(6 - off) % 4][usize::from(y as u8)]
        ^ s[(7 - off) % 4][usize::from((y >> 8) as u8)];
    (v, y)
}

/// The four words of a half round, each for `N` blocks: the two inputs of
/// `g` (held rotated left by `r` bits) and the two words it updates (held
/// rotated left by `u` bits).
type Half<'a, const N: usize> = [&'a mut [u32; N]; 4];

/// An encryption half round: `p = (p ^ F0) >>> 1`, `q = (q <<< 1) ^ F1`.
#[inline(always)]
fn enc_half<const N: usize>(s: &[[u32; 256]; 4], k: [u32; 2], w: Half<N>, r: u32, u: u32) {
    let [x, y, p, q] = w;
    for i in 0..N {
        let (t0, nx) = g_rot(s, x[i], (r / 8) as usize);
        // g1 is g of y <<< 8, which the register holds rotated 8 bits less.
        let (t1, ny) = g_rot(s, y[i], (r / 8 + 3) as usize % 4);
        x[i] = nx;
        y[i] = ny;
        let f0 = t0.wrapping_add(t1).wrapping_add(k[0]);
        let f1 = t0.wrapping_add(t1 << 1).wrapping_add(k[1]);
        p[i] = (p[i] ^ f0.rotate_left(u)).rotate_right(1);
        q[i] = q[i].rotate_left(1) ^ f1.rotate_left(u);
    }
}

/// A decryption half round: `p = (p <<< 1) ^ F0`, `q = (q ^ F1) >>> 1`.
#[inline(always)]
fn dec_half<const N: usize>(s: &[[u32; 256]; 4], k: [u32; 2], w: Half<N>, r: u32, u: u32) {
    let [x, y, p, q] = w;
    for i in 0..N {
        let (t0, nx) = g_rot(s, x[i], (r / 8) as usize);
        // g1 is g of y <<< 8, which the register holds rotated 8 bits less.
        let (t1, ny) = g_rot(s, y[i], (r / 8 + 3) as usize % 4);
        x[i] = nx;
        y[i] = ny;
        let f0 = t0.wrapping_add(t1).wrapping_add(k[0]);
        let f1 = t0.wrapping_add(t1 << 1).wrapping_add(k[1]);
        p[i] = p[i].rotate_left(1) ^ f0.rotate_left(u);
        q[i] = (q[i] ^ f1.rotate_left(u)).rotate_right(1);
    }
}

/// Encrypts `N` blocks, their rounds interleaved.
///
/// Each `g` leaves its inputs rotated by 16 bits (see [`g_rot`]); the
/// rotations are tracked rather than undone. Over four half rounds every
/// word is rotated by 16 twice, so each pass of the loop starts and ends
/// with the words as they are, and within it the rotation of every word is
/// a constant: `F` is rotated to match the word it updates.
#[inline(always)]
fn encrypt_n<const N: usize>(ks: &Schedule, blocks: &mut [[u8; 16]; N]) {
    let (s, k) = (&ks.s, &ks.k);
    let mut a = [0u32; N];
    let mut b = [0u32; N];
    let mut c = [0u32; N];
    let mut d = [0u32; N];
    for i in 0..N {
        let w = words(&blocks[i]);
        a[i] = w[0] ^ k[0];
        b[i] = w[1] ^ k[1];
        c[i] = w[2] ^ k[2];
        d[i] = w[3] ^ k[3];
    }
    for q in 0..4 {
        let rk = &k[8 + 8 * q..16 + 8 * q];
        enc_half(s, [rk[0], rk[1]], [&mut a, &mut b, &mut c, &mut d], 0, 0);
        enc_half(s, [rk[2], rk[3]], [&mut c, &mut d, &mut a, &mut b], 0, 16);
        enc_half(s, [rk[4], rk[5]], [&mut a, &mut b, &mut c, &mut d], 16, 16);
        enc_half(s, [rk[6], rk[7]], [&mut c, &mut d, &mut a, &mut b], 16, 0);
    }
    for i in 0..N {
        store(
            &mut blocks[i],
            [c[i] ^ k[4], d[i] ^ k[5], a[i] ^ k[6], b[i] ^ k[7]],
        );
    }
}

/// Decrypts `N` blocks, their rounds interleaved (rotations tracked as in
/// [`encrypt_n`]).
#[inline(always)]
fn decrypt_n<const N: usize>(ks: &Schedule, blocks: &mut [[u8; 16]; N]) {
    let (s, k) = (&ks.s, &ks.k);
    let mut a = [0u32; N];
    let mut b = [0u32; N];
    let mut c = [0u32; N];
    let mut d = [0u32; N];
    for i in 0..N {
        let w = words(&blocks[i]);
        c[i] = w[0] ^ k[4];
        d[i] = w[1] ^ k[5];
        a[i] = w[2] ^ k[6];
        b[i] = w[3] ^ k[7];
    }
    for q in (0..4).rev() {
        let rk = &k[8 + 8 * q..16 + 8 * q];
        dec_half(s, [rk[6], rk[7]], [&mut c, &mut d, &mut a, &mut b], 0, 0);
        dec_half(s, [rk[4], rk[5]], [&mut a, &mut b, &mut c, &mut d], 0, 16);
        dec_half(s, [rk[2], rk[3]], [&mut c, &mut d, &mut a, &mut b], 16, 16);
        dec_half(s, [rk[0], rk[1]], [&mut a, &mut b, &mut c, &mut d], 16, 0);
    }
    for i in 0..N {
        store(
            &mut blocks[i],
            [a[i] ^ k[0], b[i] ^ k[1], c[i] ^ k[2], d[i] ^ k[3]],
        );
    }
}

/// Runs `f` over groups of `LANES` blocks and `tail` over the rest.
#[inline(always)]
fn for_groups(
    blocks: &mut [u8],
    mut f: impl FnMut(&mut [[u8; 16]; LANES]),
    mut tail: impl FnMut(&mut [[u8; 16]; 1]),
) {
    // The trait promises a multiple of 16 bytes; a stray tail is left as is.
    let (blocks, _) = blocks.as_chunks_mut::<16>();
    let mut groups = blocks.chunks_exact_mut(LANES);
    for g in &mut groups {
        if let Ok(g) = <&mut [[u8; 16]; LANES]>::try_from(g) {
            f(g);
        }
    }
    for b in groups.into_remainder() {
        tail(core::array::from_mut(b));
    }
}

impl BlockCipher for Twofish256 {
    fn path(&self) -> Option<&'static core::ffi::CStr> {
        Some(self.path.name())
    }
    fn encrypt_blocks(&self, blocks: &mut [u8]) {
        let ks = &*self.ks;
        let blocks = match self.path {
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => {
                // SAFETY: Path::Avx512 is only chosen after
                // is_x86_feature_detected! confirmed avx512f, avx512bw,
                // avx512vbmi and gfni.
                let done = unsafe { avx512::encrypt(ks, blocks) };
                &mut blocks[done..]
            }
            _ => blocks,
        };
        for_groups(blocks, |g| encrypt_n(ks, g), |b| encrypt_n(ks, b));
    }

    fn decrypt_blocks(&self, blocks: &mut [u8]) {
        let ks = &*self.ks;
        let blocks = match self.path {
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => {
                // SAFETY: as in encrypt_blocks.
                let done = unsafe { avx512::decrypt(ks, blocks) };
                &mut blocks[done..]
            }
            _ => blocks,
        };
        for_groups(blocks, |g| decrypt_n(ks, g), |b| decrypt_n(ks, b));
    }
}

#[cfg(test)]
mod tests;
