//! The Serpent algorithm written once over "lanes": a type holding the same
//! 32-bit word of several blocks side by side (one lane per block). Every
//! round then runs on all those blocks at once with plain logic and shifts.
//!
//! The S-boxes are not table look-ups (which would leak through the cache):
//! they are gate circuits (`circuits.rs`, found by `gen_circuits.py` from
//! the tables below), or for the AVX-512 types three `vpternlogd` per
//! output bit derived from the tables by `const fn`s.

/// The 33 round keys K0..K32, each four 32-bit words.
pub(crate) type RoundKeys = [[u32; 4]; 33];

/// The eight S-boxes of the Serpent specification (S0..S7), as tables.
const SBOX: [[u8; 16]; 8] = [
    [3, 8, 15, 1, 10, 6, 5, 11, 14, 13, 4, 2, 7, 0, 9, 12],
    [15, 12, 2, 7, 9, 0, 5, 10, 1, 11, 14, 8, 6, 13, 3, 4],
    [8, 6, 7, 9, 3, 12, 10, 15, 13, 1, 14, 4, 0, 11, 5, 2],
    [0, 15, 11, 8, 12, 9, 6, 3, 13, 1, 2, 4, 10, 7, 5, 14],
    [1, 15, 8, 3, 12, 0, 11, 6, 2, 5, 4, 10, 9, 14, 7, 13],
    [15, 5, 2, 11, 4, 10, 9, 12, 0, 3, 14, 8, 13, 6, 7, 1],
    [7, 2, 12, 5, 8, 4, 6, 11, 14, 9, 1, 15, 13, 3, 10, 0],
    [1, 13, 15, 0, 14, 8, 2, 11, 7, 4, 12, 10, 9, 3, 5, 6],
];

/// S0..S7 then their inverses: box `8 + i` is S_i^-1.
const fn all_boxes() -> [[u8; 16]; 16] {
    let mut out = [[0u8; 16]; 16];
    let mut i = 0;
    while i < 8 {
        let mut x = 0;
        while x < 16 {
            out[i][x] = SBOX[i][x];
            out[8 + i][SBOX[i][x] as usize] = x as u8;
            x += 1;
        }
        i += 1;
    }
    out
}

pub(crate) const BOXES: [[u8; 16]; 16] = all_boxes();

/// Output bit `bit` of `sbox` restricted to inputs with x3 = `x3`, as an
/// 8-entry truth table over (x0, x1, x2): bit v of the result is the
/// output bit for the input nibble `v + 8 * x3`.
const fn truth3(sbox: &[u8; 16], bit: usize, x3: usize) -> u8 {
    let mut t = 0u8;
    let mut v = 0;
    while v < 8 {
        t |= ((sbox[v + 8 * x3] >> bit) & 1) << v;
        v += 1;
    }
    t
}

/// `vpternlogd` immediates per output bit of box `s`: `[f, g]` where `f` is
/// the output bit when x3 = 1 and `g` when x3 = 0, each a function of
/// (x2, x1, x0) given as the ternlog operands (a, b, c) = (x2, x1, x0), so
/// the immediate's bit `4*x2 + 2*x1 + x0` is the truth value.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) const fn tern_imms(s: usize) -> [[i32; 2]; 4] {
    let mut out = [[0i32; 2]; 4];
    let mut bit = 0;
    while bit < 4 {
        out[bit] = [
            truth3(&BOXES[s], bit, 1) as i32,
            truth3(&BOXES[s], bit, 0) as i32,
        ];
        bit += 1;
    }
    out
}

/// A vector of 32-bit lanes, one per block. Implementations exist for the
/// portable types here and for SIMD registers in the x86 module.
pub(crate) trait Lanes: Copy {
    fn splat(k: u32) -> Self;
    fn xor(self, o: Self) -> Self;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    /// `!self & o`.
    fn andnot(self, o: Self) -> Self;
    fn rotl<const N: i32>(self) -> Self;
    fn shl<const N: i32>(self) -> Self;

    #[inline(always)]
    fn xor3(a: Self, b: Self, c: Self) -> Self {
        a.xor(b).xor(c)
    }

    /// Applies box `S` (0..8: S_S, 8..16: S_(S-8)^-1) bitsliced: bit j of
    /// `x[i]` is input bit i of the nibble in position j. By default the
    /// searched gate circuits of `circuits.rs`, whose outputs in
    /// `circuits::FLIP[S]` come out complemented: such types run with the
    /// round keys of [`fold_keys`]. Types that override this give the box
    /// exactly and run with the plain keys.
    #[inline(always)]
    fn sbox<const S: usize>(x: [Self; 4]) -> [Self; 4] {
        super::circuits::sbox::<Self, S>(x)
    }
}

#[inline(always)]
fn add_key<V: Lanes>(x: [V; 4], k: &[u32; 4]) -> [V; 4] {
    [
        x[0].xor(V::splat(k[0])),
        x[1].xor(V::splat(k[1])),
        x[2].xor(V::splat(k[2])),
        x[3].xor(V::splat(k[3])),
    ]
}

/// The linear transformation of the specification.
#[inline(always)]
fn lt<V: Lanes>(x: [V; 4]) -> [V; 4] {
    let [a, b, c, d] = x;
    let a = a.rotl::<13>();
    let c = c.rotl::<3>();
    let b = V::xor3(b, a, c).rotl::<1>();
    let d = V::xor3(d, c, a.shl::<3>()).rotl::<7>();
    let a = V::xor3(a, b, d).rotl::<5>();
    let c = V::xor3(c, d, b.shl::<7>()).rotl::<22>();
    [a, b, c, d]
}

/// The inverse of [`lt`].
#[inline(always)]
fn inv_lt<V: Lanes>(x: [V; 4]) -> [V; 4] {
    let [a, b, c, d] = x;
    let c = c.rotl::<10>();
    let a = a.rotl::<27>();
    let c = V::xor3(c, d, b.shl::<7>());
    let a = V::xor3(a, b, d);
    let d = d.rotl::<25>();
    let b = b.rotl::<31>();
    let d = V::xor3(d, c, a.shl::<3>());
    let b = V::xor3(b, a, c);
    let c = c.rotl::<29>();
    let a = a.rotl::<19>();
    [a, b, c, d]
}

/// Encrypts the blocks held in `x` (word i of every block in `x[i]`).
#[inline(always)]
pub(crate) fn encrypt<V: Lanes>(mut x: [V; 4], rk: &RoundKeys) -> [V; 4] {
    macro_rules! round {
        ($r:expr, $s:literal) => {
            x = lt(V::sbox::<$s>(add_key(x, &rk[$r])));
        };
    }
    for g in 0..3 {
        let r = 8 * g;
        round!(r, 0);
        round!(r + 1, 1);
        round!(r + 2, 2);
        round!(r + 3, 3);
        round!(r + 4, 4);
        round!(r + 5, 5);
        round!(r + 6, 6);
        round!(r + 7, 7);
    }
    round!(24, 0);
    round!(25, 1);
    round!(26, 2);
    round!(27, 3);
    round!(28, 4);
    round!(29, 5);
    round!(30, 6);
    add_key(V::sbox::<7>(add_key(x, &rk[31])), &rk[32])
}

/// Decrypts the blocks held in `x`.
#[inline(always)]
pub(crate) fn decrypt<V: Lanes>(x: [V; 4], rk: &RoundKeys) -> [V; 4] {
    let mut x = add_key(V::sbox::<15>(add_key(x, &rk[32])), &rk[31]);
    macro_rules! round {
        ($r:expr, $s:literal) => {
            x = add_key(V::sbox::<$s>(inv_lt(x)), &rk[$r]);
        };
    }
    round!(30, 14);
    round!(29, 13);
    round!(28, 12);
    round!(27, 11);
    round!(26, 10);
    round!(25, 9);
    round!(24, 8);
    for g in (0..3).rev() {
        let r = 8 * g;
        round!(r + 7, 15);
        round!(r + 6, 14);
        round!(r + 5, 13);
        round!(r + 4, 12);
        round!(r + 3, 11);
        round!(r + 2, 10);
        round!(r + 1, 9);
        round!(r, 8);
    }
    x
}

/// The complements circuit box `s` leaves on its outputs, as words.
pub(crate) fn flip_words(s: usize) -> [u32; 4] {
    let f = super::circuits::FLIP[s];
    [0, 1, 2, 3].map(|k| 0u32.wrapping_sub(u32::from(f >> k & 1)))
}

/// Round keys for the circuit boxes, which complement the outputs of
/// `FLIP` (so that they run no NOT): (encryption, decryption). A box's
/// complements pass through the linear transformation, linear over GF(2)
/// (its shifts too), before encryption adds the next key, which absorbs
/// `lt` of them; decryption adds the key right after its box.
pub(crate) fn fold_keys(rk: &RoundKeys, enc: &mut RoundKeys, dec: &mut RoundKeys) {
    *enc = *rk;
    *dec = *rk;
    for r in 0..32 {
        let f = flip_words(r % 8);
        let into_next = if r < 31 { lt(f) } else { f };
        let g = flip_words(8 + r % 8);
        for w in 0..4 {
            enc[r + 1][w] ^= into_next[w];
            dec[r][w] ^= g[w];
        }
    }
}

/// Box `s` chosen at run time, for the key schedule (one word at a time),
/// exact (the circuit's complements undone).
fn sbox_u32(s: usize, x: [u32; 4]) -> [u32; 4] {
    let f = flip_words(s & 7);
    let y = match s & 7 {
        0 => u32::sbox::<0>(x),
        1 => u32::sbox::<1>(x),
        2 => u32::sbox::<2>(x),
        3 => u32::sbox::<3>(x),
        4 => u32::sbox::<4>(x),
        5 => u32::sbox::<5>(x),
        6 => u32::sbox::<6>(x),
        _ => u32::sbox::<7>(x),
    };
    [y[0] ^ f[0], y[1] ^ f[1], y[2] ^ f[2], y[3] ^ f[3]]
}

/// The key schedule of the specification for a 256-bit key (no padding).
/// `prekey` is scratch that the caller wipes.
pub(crate) fn key_schedule(key: &[u8; 32], prekey: &mut [u32; 140], rk: &mut RoundKeys) {
    const PHI: u32 = 0x9e37_79b9;
    let (words, _) = key.as_chunks::<4>();
    for (w, b) in prekey.iter_mut().zip(words) {
        *w = u32::from_le_bytes(*b);
    }
    for i in 8..140 {
        prekey[i] =
            (prekey[i - 8] ^ prekey[i - 5] ^ prekey[i - 3] ^ prekey[i - 1] ^ PHI ^ (i as u32 - 8))
                .rotate_left(11);
    }
    for (k, out) in rk.iter_mut().enumerate() {
        let w = 8 + 4 * k;
        let input = [prekey[w], prekey[w + 1], prekey[w + 2], prekey[w + 3]];
        *out = sbox_u32(35 - k, input);
    }
}

impl Lanes for u32 {
    #[inline(always)]
    fn splat(k: u32) -> Self {
        k
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        self ^ o
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        self & o
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn andnot(self, o: Self) -> Self {
        !self & o
    }
    #[inline(always)]
    fn rotl<const N: i32>(self) -> Self {
        self.rotate_left(N as u32)
    }
    #[inline(always)]
    fn shl<const N: i32>(self) -> Self {
        self << N
    }
}

/// Blocks per batch on the portable path.
pub(crate) const PORTABLE_BLOCKS: usize = 2;

/// Portable lanes: plain Rust over an array of words, two blocks side by
/// side (two independent chains, and few enough words to stay in the
/// registers of any 64-bit CPU; compilers keep this scalar).
#[derive(Clone, Copy)]
pub(crate) struct Portable([u32; PORTABLE_BLOCKS]);

impl Portable {
    #[inline(always)]
    fn map(self, f: impl Fn(u32) -> u32) -> Self {
        let mut o = self.0;
        for a in &mut o {
            *a = f(*a);
        }
        Portable(o)
    }
    #[inline(always)]
    fn zip(self, b: Self, f: impl Fn(u32, u32) -> u32) -> Self {
        let mut o = self.0;
        for (a, b) in o.iter_mut().zip(b.0) {
            *a = f(*a, b);
        }
        Portable(o)
    }
}

impl Lanes for Portable {
    #[inline(always)]
    fn splat(k: u32) -> Self {
        Portable([k; PORTABLE_BLOCKS])
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        self.zip(o, |a, b| a ^ b)
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        self.zip(o, |a, b| a & b)
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        self.zip(o, |a, b| a | b)
    }
    #[inline(always)]
    fn andnot(self, o: Self) -> Self {
        self.zip(o, |a, b| !a & b)
    }
    #[inline(always)]
    fn rotl<const N: i32>(self) -> Self {
        self.map(|a| a.rotate_left(N as u32))
    }
    #[inline(always)]
    fn shl<const N: i32>(self) -> Self {
        self.map(|a| a << N)
    }
}

/// Bytes per portable batch.
pub(crate) const PORTABLE_BYTES: usize = 16 * PORTABLE_BLOCKS;

#[inline(always)]
fn portable_load(bytes: &[u8; PORTABLE_BYTES]) -> [Portable; 4] {
    let mut x = [Portable([0; PORTABLE_BLOCKS]); 4];
    let (words, _) = bytes.as_chunks::<4>();
    for (j, w) in words.iter().enumerate() {
        x[j % 4].0[j / 4] = u32::from_le_bytes(*w);
    }
    x
}

#[inline(always)]
fn portable_store(bytes: &mut [u8; PORTABLE_BYTES], x: [Portable; 4]) {
    let (words, _) = bytes.as_chunks_mut::<4>();
    for (j, w) in words.iter_mut().enumerate() {
        *w = x[j % 4].0[j / 4].to_le_bytes();
    }
}

pub(crate) fn portable_encrypt(rk: &RoundKeys, batches: &mut [[u8; PORTABLE_BYTES]]) {
    for b in batches {
        let x = encrypt(portable_load(b), rk);
        portable_store(b, x);
    }
}

pub(crate) fn portable_decrypt(rk: &RoundKeys, batches: &mut [[u8; PORTABLE_BYTES]]) {
    for b in batches {
        let x = decrypt(portable_load(b), rk);
        portable_store(b, x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The S-box circuits, their complements undone, agree with the tables
    /// of the specification on every input, for both portable lane types.
    #[test]
    fn serpent_sbox_functions_match_tables() {
        fn check<const S: usize>() {
            // Bit position j of the lanes carries input nibble j.
            let mut x = [0u32; 4];
            for v in 0..16u32 {
                for (i, xi) in x.iter_mut().enumerate() {
                    *xi |= ((v >> i) & 1) << v;
                }
            }
            let f = flip_words(S);
            let y = u32::sbox::<S>(x);
            let y = [0, 1, 2, 3].map(|i| y[i] ^ f[i]);
            let p = Portable::sbox::<S>(x.map(Portable::splat));
            let p = [0, 1, 2, 3].map(|i| p[i].xor(Portable::splat(f[i])));
            for (v, &expected) in BOXES[S].iter().enumerate() {
                let out: u8 = (0..4).map(|i| (((y[i] >> v) & 1) as u8) << i).sum();
                assert_eq!(out, expected, "box {S} input {v}");
                for (yi, pi) in y.iter().zip(p) {
                    assert!(pi.0.iter().all(|l| l == yi));
                }
            }
        }
        check::<0>();
        check::<1>();
        check::<2>();
        check::<3>();
        check::<4>();
        check::<5>();
        check::<6>();
        check::<7>();
        check::<8>();
        check::<9>();
        check::<10>();
        check::<11>();
        check::<12>();
        check::<13>();
        check::<14>();
        check::<15>();
    }

    #[test]
    fn serpent_inverse_boxes_invert() {
        for s in 0..8 {
            for v in 0..16 {
                assert_eq!(BOXES[8 + s][BOXES[s][v] as usize] as usize, v);
            }
        }
    }
}
