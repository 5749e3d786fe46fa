//! LRW (Liskov, Rivest, Wagner; the IEEE P1619 draft before XTS) over
//! 16-byte blocks, as TrueCrypt 4.2 to 4.3a used it: block `i` (a 128-bit
//! big-endian index) is `E(P ^ T) ^ T` with `T = K2 * i` in GF(2^128),
//! polynomial x^128 + x^7 + x^2 + x + 1, bits in big-endian order (Linux's
//! `gf128mul_bbe`). Sector `s` of 512 bytes holds indices `32s + 1` to
//! `32s + 32` (dm-crypt's `lrw-benbi`); the header is sector 0.

use super::RawBlocks;
use crate::error::Result;
use zeroize::{Zeroize, Zeroizing};

/// Bytes of tweaks made and applied at once.
const CHUNK: usize = 4096;

/// Multiplies by x: shift towards the high end, fold the carry back in.
fn mul_x(v: u128) -> u128 {
    (v << 1) ^ if v >> 127 == 1 { 0x87 } else { 0 }
}

/// `a * b` in GF(2^128), bit `i` of each number the coefficient of x^i.
fn gf_mul(a: u128, b: u128) -> u128 {
    let mut product = 0;
    let mut a = a;
    for i in 0..128 {
        if (b >> i) & 1 == 1 {
            product ^= a;
        }
        a = mul_x(a);
    }
    product
}

/// The tweak key K2 and, for stepping from one index to the next, its
/// products with 1, 11, 111, ... (binary): going from `i` to `i + 1` flips
/// the trailing ones of `i` and the zero above them (as Linux's lrw.c).
pub struct TweakKey {
    k2: u128,
    steps: Box<[u128; 128]>,
}

impl Drop for TweakKey {
    fn drop(&mut self) {
        self.k2.zeroize();
        self.steps.zeroize();
    }
}

impl TweakKey {
    pub fn new(key: &[u8; 16]) -> TweakKey {
        let k2 = u128::from_be_bytes(*key);
        let mut steps = Box::new([0u128; 128]);
        let mut ones = 0u128;
        for (i, step) in steps.iter_mut().enumerate() {
            ones |= 1 << i;
            *step = gf_mul(k2, ones);
        }
        TweakKey { k2, steps }
    }

    /// Encrypts (or decrypts) `data`, whole 16-byte blocks, the first at
    /// index `first`, with `cipher` as the block cipher.
    pub fn crypt<B: RawBlocks + ?Sized>(
        &self,
        cipher: &B,
        data: &mut [u8],
        first: u128,
        encrypt: bool,
    ) -> Result<()> {
        let mut t = gf_mul(self.k2, first);
        let mut index = first;
        let mut tweaks = Zeroizing::new([0u8; CHUNK]);
        for piece in data.chunks_mut(CHUNK) {
            let tw = &mut tweaks[..piece.len()];
            for block in tw.chunks_exact_mut(16) {
                block.copy_from_slice(&t.to_be_bytes());
                t ^= self.steps[(index.trailing_ones() as usize).min(127)];
                index = index.wrapping_add(1);
            }
            super::xor(piece, tw);
            if encrypt {
                cipher.encrypt(piece)?;
            } else {
                cipher.decrypt(piece)?;
            }
            super::xor(piece, tw);
        }
        t.zeroize();
        Ok(())
    }
}

/// The first block index of sector `sector`.
pub fn sector_index(sector: u64) -> u128 {
    (u128::from(sector) << 5) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stepping_matches_multiplying() {
        let key = TweakKey::new(&[0x5a; 16]);
        for i in [
            0u128,
            1,
            2,
            3,
            7,
            31,
            255,
            u128::from(u64::MAX),
            u128::MAX - 1,
        ] {
            let step = key.steps[(i.trailing_ones() as usize).min(127)];
            assert_eq!(
                gf_mul(key.k2, i) ^ step,
                gf_mul(key.k2, i.wrapping_add(1)),
                "{i}"
            );
        }
    }

    #[test]
    fn sectors_number_their_blocks_from_one() {
        assert_eq!(sector_index(0), 1);
        assert_eq!(sector_index(1), 33);
    }
}
