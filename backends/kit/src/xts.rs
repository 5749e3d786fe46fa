//! XTS (IEEE 1619) over whole data units, as TrueCrypt and VeraCrypt use it.
//!
//! The tweak of unit `n` is the tweak key's encryption of `n` as a 128-bit
//! little-endian number; block `j` of the unit uses that tweak times
//! alpha^j in GF(2^128). Units are whole multiples of the block size, so there
//! is never ciphertext stealing.
//!
//! Unlike the `xts-mode` crate, which calls the cipher one block at a time,
//! this encrypts the unit numbers of many units in one call and each unit's
//! blocks in one call, so a bitsliced or SIMD cipher runs at full width.

use crate::block::BlockCipher;
use zeroize::Zeroize;

/// Bytes of data processed per tweak batch. Also bounds the stack buffers.
const CHUNK: usize = 4096;
/// Unit numbers encrypted per batch (one bitsliced AES batch).
const TWEAK_BATCH: usize = 32;

/// A keyed XTS transform over runs of data units, the unit of a backend.
pub trait XtsCipher: Send + Sync {
    /// Encrypts `data` in place: consecutive units of `unit_size` bytes, the
    /// first numbered `first_unit`. Callers (the ABI shims) have checked that
    /// `unit_size` is a nonzero multiple of 16, `data.len()` a multiple of
    /// `unit_size`, and that the unit numbers do not overflow.
    fn encrypt(&self, data: &mut [u8], first_unit: u64, unit_size: usize);
    /// The inverse of [`XtsCipher::encrypt`].
    fn decrypt(&self, data: &mut [u8], first_unit: u64, unit_size: usize);
    /// The code path chosen at key setup (the ABI's `xts_path`).
    fn path(&self) -> Option<&'static core::ffi::CStr> {
        None
    }
}

/// Multiplies a tweak by alpha (x) in GF(2^128), XTS's little-endian
/// convention: shift left by one, fold the carry back in as x^7+x^2+x+1.
#[inline(always)]
pub fn mul_alpha(t: u128) -> u128 {
    let carry = (t >> 127) as u8;
    (t << 1) ^ u128::from(0x87 & carry.wrapping_neg())
}

/// Fills `out` (a multiple of 16 bytes) with `t, t*a, t*a^2, ...` as
/// little-endian blocks and returns the tweak that would come next.
#[inline]
pub fn fill_tweaks(mut t: u128, out: &mut [u8]) -> u128 {
    for block in out.chunks_exact_mut(16) {
        block.copy_from_slice(&t.to_le_bytes());
        t = mul_alpha(t);
    }
    t
}

#[inline]
fn xor_in_place(dst: &mut [u8], src: &[u8]) {
    // u64 lanes: the compiler vectorises this loop.
    for (d, s) in dst.chunks_exact_mut(8).zip(src.chunks_exact(8)) {
        let v = u64::from_ne_bytes(d.try_into().unwrap_or([0; 8]))
            ^ u64::from_ne_bytes(s.try_into().unwrap_or([0; 8]));
        d.copy_from_slice(&v.to_ne_bytes());
    }
}

/// XTS over any [`BlockCipher`]: the data key and the tweak key.
pub struct Xts<C> {
    data: C,
    tweak: C,
}

impl<C: BlockCipher> Xts<C> {
    pub fn new(data: C, tweak: C) -> Self {
        Xts { data, tweak }
    }

    fn run(&self, data: &mut [u8], first_unit: u64, unit_size: usize, encrypt: bool) {
        debug_assert!(
            unit_size > 0 && unit_size.is_multiple_of(16) && data.len().is_multiple_of(unit_size)
        );
        let mut tweaks = [0u8; CHUNK];
        let mut initial = [0u8; TWEAK_BATCH * 16];
        let mut unit = first_unit;
        for group in data.chunks_mut(unit_size * TWEAK_BATCH) {
            let units = group.len() / unit_size;
            for (i, t) in initial[..units * 16].chunks_exact_mut(16).enumerate() {
                t.copy_from_slice(&u128::from(unit.wrapping_add(i as u64)).to_le_bytes());
            }
            self.tweak.encrypt_blocks(&mut initial[..units * 16]);
            for (u, unit_data) in group.chunks_exact_mut(unit_size).enumerate() {
                let mut t =
                    u128::from_le_bytes(initial[u * 16..u * 16 + 16].try_into().unwrap_or([0; 16]));
                for piece in unit_data.chunks_mut(CHUNK) {
                    let tw = &mut tweaks[..piece.len()];
                    t = fill_tweaks(t, tw);
                    xor_in_place(piece, tw);
                    if encrypt {
                        self.data.encrypt_blocks(piece);
                    } else {
                        self.data.decrypt_blocks(piece);
                    }
                    xor_in_place(piece, tw);
                }
            }
            unit = unit.wrapping_add(units as u64);
        }
        tweaks.zeroize();
        initial.zeroize();
    }
}

impl<C: BlockCipher> XtsCipher for Xts<C> {
    fn encrypt(&self, data: &mut [u8], first_unit: u64, unit_size: usize) {
        self.run(data, first_unit, unit_size, true);
    }
    fn decrypt(&self, data: &mut [u8], first_unit: u64, unit_size: usize) {
        self.run(data, first_unit, unit_size, false);
    }
    fn path(&self) -> Option<&'static core::ffi::CStr> {
        self.data.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::Aes256;
    use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
    use rand::{Rng, RngCore, SeedableRng};

    /// The `aes` crate as a BlockCipher, for testing the mode alone.
    struct RefAes(Aes256);
    impl BlockCipher for RefAes {
        fn encrypt_blocks(&self, blocks: &mut [u8]) {
            for b in blocks.chunks_exact_mut(16) {
                self.0.encrypt_block(b.try_into().unwrap());
            }
        }
        fn decrypt_blocks(&self, blocks: &mut [u8]) {
            for b in blocks.chunks_exact_mut(16) {
                self.0.decrypt_block(b.try_into().unwrap());
            }
        }
    }

    #[test]
    fn mul_alpha_folds_the_carry() {
        assert_eq!(mul_alpha(1), 2);
        assert_eq!(mul_alpha(1u128 << 127), 0x87);
        assert_eq!(mul_alpha((1u128 << 127) | 1), 0x87 ^ 2);
    }

    #[test]
    fn matches_xts_mode_crate_for_random_runs() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..64 {
            let mut key = [0u8; 64];
            rng.fill_bytes(&mut key);
            let unit_size = 16 * rng.random_range(1..=300usize);
            let units = rng.random_range(1..=40usize);
            let first: u64 = if rng.random_bool(0.2) {
                u64::MAX - 64
            } else {
                rng.random()
            };
            let mut data = vec![0u8; unit_size * units];
            rng.fill_bytes(&mut data);

            let ours = Xts::new(
                RefAes(Aes256::new_from_slice(&key[..32]).unwrap()),
                RefAes(Aes256::new_from_slice(&key[32..]).unwrap()),
            );
            let reference = xts_mode::Xts128::new(
                Aes256::new_from_slice(&key[..32]).unwrap(),
                Aes256::new_from_slice(&key[32..]).unwrap(),
            );
            let mut a = data.clone();
            ours.encrypt(&mut a, first, unit_size);
            let mut b = data.clone();
            reference.encrypt_area(&mut b, unit_size, first.into(), xts_mode::get_tweak_default);
            assert_eq!(a, b, "unit size {unit_size}, {units} units from {first}");
            ours.decrypt(&mut a, first, unit_size);
            assert_eq!(a, data);
        }
    }
}
