//! The AES S-box and its inverse as boolean circuits over bit-planes.
//!
//! A value of type `B: Bits` holds one bit of many independent bytes, so one
//! call transforms all of them at once, with no table and no branch.
//!
//! Inversion in GF(2^8) is done in the tower field GF((2^4)^2): GF(16) is
//! GF(2)[z]/(z^4+z+1) in polynomial basis and GF(256) is GF(16)[Y]/(Y^2+Y+λ)
//! with λ = z^3+z (0xa, trace 1). An element a1·Y + a0 times its conjugate
//! a1·Y + (a0+a1) is Δ = λ·a1² + a1·a0 + a0², which lies in GF(16), so
//! (a1·Y + a0)⁻¹ = a1·Δ⁻¹·Y + (a0+a1)·Δ⁻¹ (and 0 maps to 0).
//!
//! The isomorphism sends z to ζ = 0xe1 and Y to β = 0x42 of the AES field
//! (roots of z^4+z+1 and of Y^2+Y+λ(ζ) there). The 8×8 matrices below (the
//! change of basis, merged with the S-box's affine map where it applies) and
//! the GF(16) inverse's algebraic normal form were computed by
//! `gen_tower.py` beside this file, which also checks the construction
//! against the S-box definition. The affine constant 0x63 is not applied
//! here: the cipher folds it into the round keys.

/// Bitwise operations on a bit-plane (any width).
pub(crate) trait Bits: Copy {
    fn xor(self, other: Self) -> Self;
    fn and(self, other: Self) -> Self;
}

impl Bits for u32 {
    #[inline(always)]
    fn xor(self, other: Self) -> Self {
        self ^ other
    }
    #[inline(always)]
    fn and(self, other: Self) -> Self {
        self & other
    }
}

type Nib<B> = [B; 4];

/// Product in GF(16) = GF(2)[z]/(z^4+z+1): schoolbook, then z^4 = z+1,
/// z^5 = z^2+z, z^6 = z^3+z^2.
#[inline(always)]
fn gf16_mul<B: Bits>(a: Nib<B>, b: Nib<B>) -> Nib<B> {
    let p0 = a[0].and(b[0]);
    let p1 = a[0].and(b[1]).xor(a[1].and(b[0]));
    let p2 = a[0].and(b[2]).xor(a[1].and(b[1])).xor(a[2].and(b[0]));
    let p3 = a[0]
        .and(b[3])
        .xor(a[1].and(b[2]))
        .xor(a[2].and(b[1]))
        .xor(a[3].and(b[0]));
    let p4 = a[1].and(b[3]).xor(a[2].and(b[2])).xor(a[3].and(b[1]));
    let p5 = a[2].and(b[3]).xor(a[3].and(b[2]));
    let p6 = a[3].and(b[3]);
    [
        p0.xor(p4),
        p1.xor(p4).xor(p5),
        p2.xor(p5).xor(p6),
        p3.xor(p6),
    ]
}

/// Inverse in GF(16) (0 -> 0), each output bit as its algebraic normal form
/// in the input bits x0..x3.
#[inline(always)]
fn gf16_inv<B: Bits>(x: Nib<B>) -> Nib<B> {
    let [x0, x1, x2, x3] = x;
    let x01 = x0.and(x1);
    let x02 = x0.and(x2);
    let x12 = x1.and(x2);
    let x03 = x0.and(x3);
    let x13 = x1.and(x3);
    let x23 = x2.and(x3);
    let x012 = x01.and(x2);
    let x123 = x12.and(x3);
    let x013 = x01.and(x3);
    let x023 = x02.and(x3);
    let s123 = x1.xor(x2).xor(x3);
    [
        // x0 + x1 + x2 + x3 + x0x2 + x1x2 + x0x1x2 + x1x2x3
        x0.xor(s123).xor(x02).xor(x12).xor(x012).xor(x123),
        // x0x1 + x0x2 + x1x2 + x3 + x1x3 + x0x1x3
        x01.xor(x02).xor(x12).xor(x3).xor(x13).xor(x013),
        // x0x1 + x2 + x0x2 + x3 + x0x3 + x0x2x3
        x01.xor(x2).xor(x02).xor(x3).xor(x03).xor(x023),
        // x1 + x2 + x3 + x0x3 + x1x3 + x2x3 + x1x2x3
        s123.xor(x03).xor(x13).xor(x23).xor(x123),
    ]
}

/// Inverse in the tower field; `t[0..4]` is a0, `t[4..8]` is a1.
#[inline(always)]
fn tower_inv<B: Bits>(x: [B; 8]) -> [B; 8] {
    let a0 = [x[0], x[1], x[2], x[3]];
    let a1 = [x[4], x[5], x[6], x[7]];
    // λ·a1² + a0², a linear map of the 8 input bits.
    let lsq = [
        x[0].xor(x[2]).xor(x[6]).xor(x[7]),
        x[2].xor(x[4]).xor(x[5]),
        x[1].xor(x[3]).xor(x[5]).xor(x[6]),
        x[3].xor(x[4]).xor(x[5]).xor(x[6]),
    ];
    let m = gf16_mul(a0, a1);
    let d = [
        lsq[0].xor(m[0]),
        lsq[1].xor(m[1]),
        lsq[2].xor(m[2]),
        lsq[3].xor(m[3]),
    ];
    let di = gf16_inv(d);
    let s = [
        a0[0].xor(a1[0]),
        a0[1].xor(a1[1]),
        a0[2].xor(a1[2]),
        a0[3].xor(a1[3]),
    ];
    let lo = gf16_mul(s, di);
    let hi = gf16_mul(a1, di);
    [lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]]
}

/// The S-box without its constant: `sub_bytes(x) ^ 0x63 == SBOX[x]`.
/// Plane `i` holds bit `i` (weight 2^i) of every byte.
#[inline(always)]
pub(crate) fn sub_bytes<B: Bits>(x: [B; 8]) -> [B; 8] {
    // AES polynomial basis -> tower basis.
    let t = [
        x[0].xor(x[5]),
        x[2].xor(x[3]).xor(x[5]),
        x[1].xor(x[6]).xor(x[7]),
        x[1].xor(x[3]).xor(x[6]).xor(x[7]),
        x[2].xor(x[3]).xor(x[4]).xor(x[6]).xor(x[7]),
        x[2].xor(x[3]).xor(x[5]).xor(x[7]),
        x[1].xor(x[4]).xor(x[5]).xor(x[6]),
        x[5].xor(x[7]),
    ];
    let x = tower_inv(t);
    // Tower basis -> AES basis, composed with the affine map's linear part.
    [
        x[0].xor(x[4]).xor(x[5]).xor(x[7]),
        x[0].xor(x[2]),
        x[0].xor(x[1]).xor(x[3]),
        x[0].xor(x[4]).xor(x[6]),
        x[0].xor(x[1]).xor(x[2]).xor(x[4]).xor(x[5]).xor(x[7]),
        x[1].xor(x[2]).xor(x[4]).xor(x[5]).xor(x[7]),
        x[4].xor(x[7]),
        x[1].xor(x[2]).xor(x[3]).xor(x[4]),
    ]
}

/// The inverse S-box of a byte already XORed with 0x63:
/// `inv_sub_bytes(y ^ 0x63) == INV_SBOX[y]`.
#[inline(always)]
pub(crate) fn inv_sub_bytes<B: Bits>(x: [B; 8]) -> [B; 8] {
    // Inverse affine (linear part) then AES basis -> tower basis.
    let t = [
        x[4].xor(x[5]),
        x[0].xor(x[1]).xor(x[5]),
        x[1].xor(x[4]).xor(x[5]),
        x[0].xor(x[1]).xor(x[2]).xor(x[4]),
        x[1].xor(x[2]).xor(x[7]),
        x[0].xor(x[4]).xor(x[5]).xor(x[6]),
        x[1].xor(x[2]).xor(x[3]).xor(x[4]).xor(x[5]).xor(x[7]),
        x[1].xor(x[2]).xor(x[6]).xor(x[7]),
    ];
    let x = tower_inv(t);
    // Tower basis -> AES basis.
    [
        x[0].xor(x[1]).xor(x[5]).xor(x[7]),
        x[4].xor(x[5]).xor(x[6]),
        x[2].xor(x[3]).xor(x[5]).xor(x[7]),
        x[2].xor(x[3]),
        x[2].xor(x[6]).xor(x[7]),
        x[1].xor(x[5]).xor(x[7]),
        x[1].xor(x[2]).xor(x[4]).xor(x[6]),
        x[1].xor(x[5]),
    ]
}
