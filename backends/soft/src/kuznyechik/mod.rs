//! Kuznyechik (GOST R 34.12-2015, RFC 7801), VeraCrypt's "Kuznyechik": a
//! 128-bit block, a 256-bit key, nine rounds of X (key XOR), S (the byte
//! permutation pi) and L (a linear map over GF(2^8)), then a last key XOR.
//! Bytes are in the order the standard prints them: byte 0 of a block or
//! key is its leftmost (most significant) byte, a_15 in the standard.
//!
//! # Speed
//!
//! L is linear over GF(2^8), so L(S(x)) is the XOR over the 16 byte
//! positions j of L applied to S(x_j) alone at position j: 16 tables of 256
//! 16-byte entries (64 KiB) hold those, and one round is 16 lookups and
//! XORs. Decryption runs in L^-1's image: with y = L^-1(x), a round is
//! y' = L^-1(S^-1(y)) XOR L^-1(k), the same shape with the inverse tables
//! (another 64 KiB). The tables depend on no key; they are built once per
//! process. Bulk encryption runs `LANES` independent blocks through each
//! round together, so the lookups of one block overlap those of the others.
//!
//! Paths (chosen at key setup, capped by `TCD_SIMD`, see
//! `tcd_backend_kit::simd`): on x86-64 the table entries are XORed in xmm
//! registers straight from memory and the byte indices taken from general
//! registers (SSE2, the baseline); elsewhere the same on pairs of 64-bit
//! words. No AVX2 path: with one lookup per byte, wider registers add
//! shuffles and no fewer loads (see docs/PERFORMANCE.md).
//!
//! # Table lookups
//!
//! Like every table-driven implementation of this cipher (VeraCrypt's
//! included), the lookups are indexed by secret data. The tables themselves
//! hold no secret; the round keys are wiped when the cipher is dropped.

use std::sync::OnceLock;
use tcd_backend_kit::BlockCipher;
use tcd_backend_kit::simd::{self, Level};
use zeroize::Zeroize;

#[cfg(test)]
mod tests;
#[cfg(target_arch = "x86_64")]
mod x86;

/// pi, the S-box of the standard (section 4.1.1).
#[rustfmt::skip]
const PI: [u8; 256] = [
    0xFC, 0xEE, 0xDD, 0x11, 0xCF, 0x6E, 0x31, 0x16, 0xFB, 0xC4, 0xFA, 0xDA, 0x23, 0xC5, 0x04, 0x4D,
    0xE9, 0x77, 0xF0, 0xDB, 0x93, 0x2E, 0x99, 0xBA, 0x17, 0x36, 0xF1, 0xBB, 0x14, 0xCD, 0x5F, 0xC1,
    0xF9, 0x18, 0x65, 0x5A, 0xE2, 0x5C, 0xEF, 0x21, 0x81, 0x1C, 0x3C, 0x42, 0x8B, 0x01, 0x8E, 0x4F,
    0x05, 0x84, 0x02, 0xAE, 0xE3, 0x6A, 0x8F, 0xA0, 0x06, 0x0B, 0xED, 0x98, 0x7F, 0xD4, 0xD3, 0x1F,
    0xEB, 0x34, 0x2C, 0x51, 0xEA, 0xC8, 0x48, 0xAB, 0xF2, 0x2A, 0x68, 0xA2, 0xFD, 0x3A, 0xCE, 0xCC,
    0xB5, 0x70, 0x0E, 0x56, 0x08, 0x0C, 0x76, 0x12, 0xBF, 0x72, 0x13, 0x47, 0x9C, 0xB7, 0x5D, 0x87,
    0x15, 0xA1, 0x96, 0x29, 0x10, 0x7B, 0x9A, 0xC7, 0xF3, 0x91, 0x78, 0x6F, 0x9D, 0x9E, 0xB2, 0xB1,
    0x32, 0x75, 0x19, 0x3D, 0xFF, 0x35, 0x8A, 0x7E, 0x6D, 0x54, 0xC6, 0x80, 0xC3, 0xBD, 0x0D, 0x57,
    0xDF, 0xF5, 0x24, 0xA9, 0x3E, 0xA8, 0x43, 0xC9, 0xD7, 0x79, 0xD6, 0xF6, 0x7C, 0x22, 0xB9, 0x03,
    0xE0, 0x0F, 0xEC, 0xDE, 0x7A, 0x94, 0xB0, 0xBC, 0xDC, 0xE8, 0x28, 0x50, 0x4E, 0x33, 0x0A, 0x4A,
    0xA7, 0x97, 0x60, 0x73, 0x1E, 0x00, 0x62, 0x44, 0x1A, 0xB8, 0x38, 0x82, 0x64, 0x9F, 0x26, 0x41,
    0xAD, 0x45, 0x46, 0x92, 0x27, 0x5E, 0x55, 0x2F, 0x8C, 0xA3, 0xA5, 0x7D, 0x69, 0xD5, 0x95, 0x3B,
    0x07, 0x58, 0xB3, 0x40, 0x86, 0xAC, 0x1D, 0xF7, 0x30, 0x37, 0x6B, 0xE4, 0x88, 0xD9, 0xE7, 0x89,
    0xE1, 0x1B, 0x83, 0x49, 0x4C, 0x3F, 0xF8, 0xFE, 0x8D, 0x53, 0xAA, 0x90, 0xCA, 0xD8, 0x85, 0x61,
    0x20, 0x71, 0x67, 0xA4, 0x2D, 0x2B, 0x09, 0x5B, 0xCB, 0x9B, 0x25, 0xD0, 0xBE, 0xE5, 0x6C, 0x52,
    0x59, 0xA6, 0x74, 0xD2, 0xE6, 0xF4, 0xB4, 0xC0, 0xD1, 0x66, 0xAF, 0xC2, 0x39, 0x4B, 0x63, 0xB6,
];

/// pi^-1.
const PI_INV: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        t[PI[i] as usize] = i as u8;
        i += 1;
    }
    t
};

/// The coefficients of the linear function l (section 4.1.2), for the
/// block's bytes 0..15 in memory order (a_15 first).
const L_COEF: [u8; 16] = [
    148, 32, 133, 16, 194, 192, 1, 251, 1, 192, 194, 16, 133, 32, 148, 1,
];

/// Multiplication in GF(2^8) modulo x^8 + x^7 + x^6 + x + 1.
const fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut r = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            r ^= a;
        }
        let carry = a & 0x80 != 0;
        a <<= 1;
        if carry {
            a ^= 0xC3;
        }
        b >>= 1;
    }
    r
}

/// R: one step of the LFSR; L is R applied 16 times.
fn r_step(a: &mut [u8; 16]) {
    let l = a
        .iter()
        .zip(L_COEF)
        .fold(0, |acc, (&x, c)| acc ^ gf_mul(x, c));
    a.copy_within(0..15, 1);
    a[0] = l;
}

/// R^-1, the inverse step.
fn r_inv_step(a: &mut [u8; 16]) {
    let first = a[0];
    a.copy_within(1..16, 0);
    a[15] = first;
    let l = a
        .iter()
        .zip(L_COEF)
        .fold(0, |acc, (&x, c)| acc ^ gf_mul(x, c));
    a[15] = l;
}

/// L (bytewise reference form, for tables and the key schedule).
fn l_map(mut a: [u8; 16]) -> [u8; 16] {
    (0..16).for_each(|_| r_step(&mut a));
    a
}

/// L^-1.
fn l_inv_map(mut a: [u8; 16]) -> [u8; 16] {
    (0..16).for_each(|_| r_inv_step(&mut a));
    a
}

/// A 16-byte table entry, aligned for SSE loads.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct Entry([u8; 16]);

/// One direction's tables: `t[j][b]` is the linear map applied to the
/// S-boxed byte `b` at position `j` (every other byte zero).
#[repr(C, align(64))]
struct Tables {
    t: [[Entry; 256]; 16],
}

/// The key-independent tables of both directions, built once.
struct AllTables {
    /// L(pi(b) at j).
    enc: Tables,
    /// L^-1(pi^-1(b) at j).
    dec: Tables,
}

fn build(dir: &mut Tables, sbox: &[u8; 256], linear: fn([u8; 16]) -> [u8; 16]) {
    for (j, row) in dir.t.iter_mut().enumerate() {
        // The map is GF(2^8)-linear: its column j times each S-box output.
        let mut unit = [0u8; 16];
        unit[j] = 1;
        let col = linear(unit);
        for (b, e) in row.iter_mut().enumerate() {
            e.0 = col.map(|c| gf_mul(c, sbox[b]));
        }
    }
}

fn tables() -> &'static AllTables {
    static TABLES: OnceLock<Box<AllTables>> = OnceLock::new();
    TABLES.get_or_init(|| {
        let empty = || Tables {
            t: [[Entry::default(); 256]; 16],
        };
        let mut all = Box::new(AllTables {
            enc: empty(),
            dec: empty(),
        });
        build(&mut all.enc, &PI, l_map);
        build(&mut all.dec, &PI_INV, l_inv_map);
        all
    })
}

fn xor16(a: [u8; 16], b: &[u8; 16]) -> [u8; 16] {
    core::array::from_fn(|i| a[i] ^ b[i])
}

/// The ten round keys K1..K10 (section 4.3).
fn expand(key: &[u8; 32]) -> [[u8; 16]; 10] {
    let mut k = [[0u8; 16]; 10];
    let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
    a.copy_from_slice(&key[..16]);
    b.copy_from_slice(&key[16..]);
    k[0] = a;
    k[1] = b;
    for i in 0..32u8 {
        let mut c = [0u8; 16];
        c[15] = i + 1;
        let c = l_map(c);
        let f = l_map(xor16(a, &c).map(|x| PI[usize::from(x)]));
        let next = xor16(f, &b);
        b = a;
        a = next;
        if i % 8 == 7 {
            let n = usize::from(i / 8);
            k[2 + 2 * n] = a;
            k[3 + 2 * n] = b;
        }
    }
    a.zeroize();
    b.zeroize();
    k
}

/// Which code runs the blocks, chosen once at key setup. Hidden: for tests
/// and benchmarks, which force each path in turn.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Pairs of 64-bit words (every processor).
    Portable,
    /// xmm XORs straight from the tables (x86-64's baseline).
    Sse2,
}

impl Path {
    /// Every path, fastest first.
    pub const ALL: [Path; 2] = [Path::Sse2, Path::Portable];

    /// Whether this processor can run the path.
    pub fn available(self) -> bool {
        match self {
            Path::Portable => true,
            Path::Sse2 => cfg!(target_arch = "x86_64"),
        }
    }

    /// The SIMD level the path needs.
    pub fn level(self) -> Level {
        Level::Sse2
    }

    /// The path's name for people (the ABI's `xts_path`).
    pub fn name(self) -> &'static core::ffi::CStr {
        match self {
            Path::Portable => c"portable",
            Path::Sse2 => c"SSE2",
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

/// The round keys of both directions.
struct Keys {
    /// K1..K10.
    enc: [[u8; 16]; 10],
    /// Decryption, in the order used: L^-1(K10), L^-1(K9)..L^-1(K2), K1.
    dec: [[u8; 16]; 10],
}

/// Kuznyechik with its 256-bit key.
pub struct Kuznyechik {
    keys: Box<Keys>,
    tables: &'static AllTables,
    path: Path,
}

impl Drop for Kuznyechik {
    fn drop(&mut self) {
        self.keys.enc.zeroize();
        self.keys.dec.zeroize();
    }
}

impl Kuznyechik {
    /// The cipher, on the fastest code this processor runs.
    pub fn new(key: &[u8; 32]) -> Kuznyechik {
        Self::keyed(key, Path::best())
    }

    /// The cipher on a forced path; `None` if this CPU cannot run it.
    #[doc(hidden)]
    pub fn with_path(key: &[u8; 32], path: Path) -> Option<Kuznyechik> {
        path.available().then(|| Self::keyed(key, path))
    }

    /// The path in use.
    #[doc(hidden)]
    pub fn path(&self) -> Path {
        self.path
    }

    fn keyed(key: &[u8; 32], path: Path) -> Kuznyechik {
        let mut keys = Box::new(Keys {
            enc: expand(key),
            dec: [[0; 16]; 10],
        });
        for i in 0..9 {
            keys.dec[i] = l_inv_map(keys.enc[9 - i]);
        }
        keys.dec[9] = keys.enc[0];
        Kuznyechik {
            keys,
            tables: tables(),
            path,
        }
    }
}

/// Blocks run through the rounds together.
pub(crate) const LANES: usize = 4;

/// A block as two little-endian 64-bit words (byte 0 lowest), the
/// portable code's register form.
type Words = [u64; 2];

fn load(b: &[u8; 16]) -> Words {
    let (lo, hi) = b.split_at(8);
    [
        u64::from_le_bytes(lo.try_into().unwrap_or_default()),
        u64::from_le_bytes(hi.try_into().unwrap_or_default()),
    ]
}

fn store(b: &mut [u8; 16], w: Words) {
    b[..8].copy_from_slice(&w[0].to_le_bytes());
    b[8..].copy_from_slice(&w[1].to_le_bytes());
}

/// One table round on words: the XOR of `t[j][byte j]`.
#[inline(always)]
fn round_words(t: &Tables, x: Words) -> Words {
    let mut r = [0u64; 2];
    for j in 0..16 {
        let byte = (x[j / 8] >> (8 * (j % 8))) as u8;
        let e = load(&t.t[j][usize::from(byte)].0);
        r[0] ^= e[0];
        r[1] ^= e[1];
    }
    r
}

/// Encrypts `N` blocks on the portable code, their rounds interleaved.
fn encrypt_words<const N: usize>(c: &Kuznyechik, blocks: &mut [[u8; 16]; N]) {
    let (t, k) = (&c.tables.enc, &c.keys.enc);
    let mut x: [Words; N] = core::array::from_fn(|i| load(&blocks[i]));
    for rk in &k[..9] {
        let rk = load(rk);
        for x in &mut x {
            *x = round_words(t, [x[0] ^ rk[0], x[1] ^ rk[1]]);
        }
    }
    let last = load(&k[9]);
    for (b, x) in blocks.iter_mut().zip(x) {
        store(b, [x[0] ^ last[0], x[1] ^ last[1]]);
    }
}

/// pi (or pi^-1) on every byte of a block in word form.
fn sub_words(s: &[u8; 256], x: Words) -> Words {
    x.map(|w| u64::from_le_bytes(w.to_le_bytes().map(|b| s[usize::from(b)])))
}

/// Decrypts `N` blocks on the portable code, their rounds interleaved.
fn decrypt_words<const N: usize>(c: &Kuznyechik, blocks: &mut [[u8; 16]; N]) {
    let (t, k) = (&c.tables.dec, &c.keys.dec);
    // y = L^-1(c XOR K10) = L^-1(pi^-1(pi(c))) XOR L^-1(K10).
    let mut y: [Words; N] = core::array::from_fn(|i| sub_words(&PI, load(&blocks[i])));
    for rk in &k[..9] {
        let rk = load(rk);
        for y in &mut y {
            let r = round_words(t, *y);
            *y = [r[0] ^ rk[0], r[1] ^ rk[1]];
        }
    }
    let first = load(&k[9]);
    for (b, y) in blocks.iter_mut().zip(y) {
        let x = sub_words(&PI_INV, y);
        store(b, [x[0] ^ first[0], x[1] ^ first[1]]);
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

impl BlockCipher for Kuznyechik {
    fn path(&self) -> Option<&'static core::ffi::CStr> {
        Some(self.path.name())
    }

    fn encrypt_blocks(&self, blocks: &mut [u8]) {
        match self.path {
            #[cfg(target_arch = "x86_64")]
            Path::Sse2 => x86::encrypt(self, blocks),
            _ => for_groups(
                blocks,
                |g| encrypt_words(self, g),
                |b| encrypt_words(self, b),
            ),
        }
    }

    fn decrypt_blocks(&self, blocks: &mut [u8]) {
        match self.path {
            #[cfg(target_arch = "x86_64")]
            Path::Sse2 => x86::decrypt(self, blocks),
            _ => for_groups(
                blocks,
                |g| decrypt_words(self, g),
                |b| decrypt_words(self, b),
            ),
        }
    }
}
