//! Bitsliced AES rounds over batches of 32 blocks.
//!
//! State layout: 8 bit-planes, each a [`Lanes`] value of 16 lanes × 32 bits.
//! Plane `i` lane `4·r + c` bit `k` is bit `i` of the byte at row `r`,
//! column `c` (byte `r + 4c` of the block) of block `k` of the batch (with
//! the blocks in a fixed shuffled order, undone on the way out). So SubBytes
//! is a boolean circuit over the planes, ShiftRows and the row rotations of
//! MixColumns are lane permutations, and xtime renames planes.
//!
//! Round keys are pre-broadcast planes (a lane is all ones where the key bit
//! is set), with the S-box constant 0x63 folded into rounds 1..=14.

use super::lanes::Lanes;
use super::sbox::{Bits, inv_sub_bytes, sub_bytes};

/// Bytes per batch: 32 blocks.
pub(crate) const BATCH_BYTES: usize = 512;
/// One round key as 8 planes of 16 lanes.
pub(crate) type KeyPlanes = [[u32; 16]; 8];
/// The 15 round keys of AES-256.
pub(crate) type RoundKeys = [KeyPlanes; 15];

type State<V> = [V; 8];

/// `[f(0), .., f(7)]` by plain indexing. Closures (`array::map`,
/// `from_fn`) are avoided in this module: when the compiler leaves one out
/// of line it loses the caller's target features.
macro_rules! planes {
    (|$i:ident| $e:expr) => {
        [
            {
                let $i = 0;
                $e
            },
            {
                let $i = 1;
                $e
            },
            {
                let $i = 2;
                $e
            },
            {
                let $i = 3;
                $e
            },
            {
                let $i = 4;
                $e
            },
            {
                let $i = 5;
                $e
            },
            {
                let $i = 6;
                $e
            },
            {
                let $i = 7;
                $e
            },
        ]
    };
}

pub(crate) use super::lanes::lane;

/// `m` in the lanes whose index has bit `d` clear, 0 elsewhere.
const fn lower_lanes(d: usize, m: u32) -> [u32; 16] {
    let mut out = [0u32; 16];
    let mut l = 0;
    while l < 16 {
        if l & d == 0 {
            out[l] = m;
        }
        l += 1;
    }
    out
}

const MASK16: [u32; 16] = lower_lanes(8, 0x0000_ffff);
const MASK8: [u32; 16] = lower_lanes(4, 0x00ff_00ff);

/// Exchanges bit-address bit `log2 S` with vector-index bit `log2 D`.
#[inline(always)]
fn swap_vectors<V: Lanes, const S: u32>(v: &mut State<V>, d: usize, mask: u32) {
    let m = V::splat(mask);
    for q in 0..8 {
        if q & d == 0 {
            let (x, y) = (v[q], v[q | d]);
            let t = x.shr::<S>().xor(y).and(m);
            v[q | d] = y.xor(t);
            v[q] = x.xor(t.shl::<S>());
        }
    }
}

/// Exchanges bit-address bit `log2 S` with lane-index bit `log2 D`.
#[inline(always)]
fn swap_lanes<V: Lanes, const S: u32, const D: usize>(x: V, mask: &[u32; 16]) -> V {
    let t = x.shr::<S>().xor(x.lane_xor::<D>()).and(V::from_array(mask));
    x.xor(t.shl::<S>()).xor(t.lane_xor::<D>())
}

/// 512 bytes (32 blocks) to planes. As loaded, vector q lane l bit b holds
/// bit b%8 of byte 4(l%4) + b/8 of block 4q + l/4. Three vector swaps move
/// the bit-in-byte index into the vector index, two lane swaps move the low
/// byte-index bits into the lane index; every step is an involution.
#[inline(always)]
fn pack<V: Lanes>(buf: &[u8; BATCH_BYTES]) -> State<V> {
    let (chunks, _) = buf.as_chunks::<64>();
    let mut v: State<V> = planes!(|q| V::load(&chunks[q]));
    swap_vectors::<V, 1>(&mut v, 1, 0x5555_5555);
    swap_vectors::<V, 2>(&mut v, 2, 0x3333_3333);
    swap_vectors::<V, 4>(&mut v, 4, 0x0f0f_0f0f);
    planes!(|i| swap_lanes::<V, 8, 4>(swap_lanes::<V, 16, 8>(v[i], &MASK16), &MASK8))
}

/// The inverse of [`pack`].
#[inline(always)]
fn unpack<V: Lanes>(s: State<V>, buf: &mut [u8; BATCH_BYTES]) {
    let mut v = planes!(|i| swap_lanes::<V, 16, 8>(swap_lanes::<V, 8, 4>(s[i], &MASK8), &MASK16));
    swap_vectors::<V, 4>(&mut v, 4, 0x0f0f_0f0f);
    swap_vectors::<V, 2>(&mut v, 2, 0x3333_3333);
    swap_vectors::<V, 1>(&mut v, 1, 0x5555_5555);
    let (chunks, _) = buf.as_chunks_mut::<64>();
    for (c, x) in chunks.iter_mut().zip(v) {
        x.store(c);
    }
}

#[inline(always)]
fn add_key<V: Lanes>(s: State<V>, k: &KeyPlanes) -> State<V> {
    planes!(|i| s[i].xor(V::from_array(&k[i])))
}

/// Multiplication by x modulo x^8+x^4+x^3+x+1, on planes.
#[inline(always)]
fn xtime<V: Bits>(t: &State<V>) -> State<V> {
    [
        t[7],
        t[0].xor(t[7]),
        t[1],
        t[2].xor(t[7]),
        t[3].xor(t[7]),
        t[4],
        t[5],
        t[6],
    ]
}

/// ShiftRows, MixColumns and AddRoundKey. With a = ShiftRows(s), row r of
/// MixColumns is 2·(a_r + a_{r+1}) + a_{r+1} + (a_{r+2} + a_{r+3}).
#[inline(always)]
fn shift_mix_key<V: Lanes>(s: State<V>, k: &KeyPlanes) -> State<V> {
    let a = planes!(|i| s[i].sr());
    let b = planes!(|i| s[i].sr_rot1());
    let t: State<V> = planes!(|i| a[i].xor(b[i]));
    let x = xtime(&t);
    planes!(|i| x[i].xor(b[i]).xor(t[i].rot2()).xor(V::from_array(&k[i])))
}

/// InvMixColumns then InvShiftRows. InvMixColumns is MixColumns after
/// a_r += 4·(a_r + a_{r+2}), since 0b·x³+0d·x²+09·x+0e equals
/// (03·x³+01·x²+01·x+02)·(04·x²+05) modulo x⁴+1.
#[inline(always)]
fn inv_mix_shift<V: Lanes>(s: State<V>) -> State<V> {
    let w: State<V> = planes!(|i| s[i].xor(s[i].rot2()));
    let w4 = xtime(&xtime(&w));
    let a: State<V> = planes!(|i| s[i].xor(w4[i]));
    let b = planes!(|i| a[i].rot1());
    let t: State<V> = planes!(|i| a[i].xor(b[i]));
    let x = xtime(&t);
    planes!(|i| x[i].xor(b[i]).xor(t[i].rot2()).isr())
}

#[inline(always)]
pub(crate) fn encrypt_batch<V: Lanes>(rk: &RoundKeys, buf: &mut [u8; BATCH_BYTES]) {
    let mut s = add_key(pack::<V>(buf), &rk[0]);
    for k in &rk[1..14] {
        s = shift_mix_key(sub_bytes(s), k);
    }
    let s = sub_bytes(s);
    let s = planes!(|i| s[i].sr().xor(V::from_array(&rk[14][i])));
    unpack(s, buf);
}

#[inline(always)]
pub(crate) fn decrypt_batch<V: Lanes>(rk: &RoundKeys, buf: &mut [u8; BATCH_BYTES]) {
    let s = add_key(pack::<V>(buf), &rk[14]);
    let mut s = inv_sub_bytes(planes!(|i| s[i].isr()));
    for k in rk[1..14].iter().rev() {
        s = inv_sub_bytes(inv_mix_shift(add_key(s, k)));
    }
    unpack(add_key(s, &rk[0]), buf);
}

/// Runs `ENCRYPT` or decryption over whole batches, then over a tail padded
/// into a scratch batch (wiped afterwards).
#[inline(always)]
pub(crate) fn run<V: Lanes, const ENCRYPT: bool>(rk: &RoundKeys, blocks: &mut [u8]) {
    let (full, tail) = blocks.as_chunks_mut::<BATCH_BYTES>();
    for b in full {
        if ENCRYPT {
            encrypt_batch::<V>(rk, b);
        } else {
            decrypt_batch::<V>(rk, b);
        }
    }
    if !tail.is_empty() {
        let mut scratch = [0u8; BATCH_BYTES];
        scratch[..tail.len()].copy_from_slice(tail);
        if ENCRYPT {
            encrypt_batch::<V>(rk, &mut scratch);
        } else {
            decrypt_batch::<V>(rk, &mut scratch);
        }
        tail.copy_from_slice(&scratch[..tail.len()]);
        zeroize::Zeroize::zeroize(&mut scratch);
    }
}
