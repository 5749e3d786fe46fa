//! AES-256 key schedules with AES-NI: `aeskeygenassist` for the encryption
//! round keys, `aesimc` for the decryption keys of the equivalent inverse
//! cipher (FIPS-197 section 5.3.5).

use core::arch::x86_64::{
    __m128i, _mm_aesimc_si128, _mm_aeskeygenassist_si128, _mm_loadu_si128, _mm_shuffle_epi32,
    _mm_slli_si128, _mm_storeu_si128, _mm_xor_si128,
};
use zeroize::Zeroize;

/// AES-256 has 14 rounds: 15 round keys.
pub(crate) const ROUND_KEYS: usize = 15;

/// One AES-256 key schedule in both directions. Wiped on drop.
pub(crate) struct Schedule {
    /// Encryption round keys, `enc[0]` whitening, `enc[14]` the last round.
    pub(crate) enc: [__m128i; ROUND_KEYS],
    /// Decryption round keys for `aesdec`: `dec[0] = enc[14]`,
    /// `dec[i] = InvMixColumns(enc[14 - i])`, `dec[14] = enc[0]`.
    pub(crate) dec: [__m128i; ROUND_KEYS],
}

impl Drop for Schedule {
    fn drop(&mut self) {
        self.enc.zeroize();
        self.dec.zeroize();
    }
}

/// Reads 16 bytes as a vector.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn load128(bytes: &[u8; 16]) -> __m128i {
    // SAFETY: `bytes` is 16 readable bytes; `loadu` has no alignment needs.
    unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
}

/// Writes a vector as 16 bytes.
#[inline]
#[target_feature(enable = "sse2")]
pub(crate) fn store128(bytes: &mut [u8; 16], v: __m128i) {
    // SAFETY: `bytes` is 16 writable bytes; `storeu` has no alignment needs.
    unsafe { _mm_storeu_si128(bytes.as_mut_ptr().cast(), v) }
}

/// `w ^ (w << 32) ^ (w << 64) ^ (w << 96)`: the running XOR of the four
/// words of a round key, the linear part of the AES key expansion.
#[inline]
#[target_feature(enable = "sse2")]
fn prefix_xor(mut w: __m128i) -> __m128i {
    w = _mm_xor_si128(w, _mm_slli_si128::<4>(w));
    _mm_xor_si128(w, _mm_slli_si128::<8>(w))
}

/// The next even round key: `prev2` two keys back, `prev1` the last one.
#[inline]
#[target_feature(enable = "aes,sse2")]
fn even_key<const RCON: i32>(prev2: __m128i, prev1: __m128i) -> __m128i {
    // Word 3 of the assist is RotWord(SubWord(w7)) ^ rcon; spread it.
    let t = _mm_shuffle_epi32::<0xff>(_mm_aeskeygenassist_si128::<RCON>(prev1));
    _mm_xor_si128(prefix_xor(prev2), t)
}

/// The next odd round key: AES-256 applies SubWord without rotation here.
#[inline]
#[target_feature(enable = "aes,sse2")]
fn odd_key(prev2: __m128i, prev1: __m128i) -> __m128i {
    // Word 2 of the assist is SubWord(w3) with no rcon; spread it.
    let t = _mm_shuffle_epi32::<0xaa>(_mm_aeskeygenassist_si128::<0>(prev1));
    _mm_xor_si128(prefix_xor(prev2), t)
}

impl Schedule {
    /// Expands a 256-bit key.
    #[target_feature(enable = "aes,sse2")]
    pub(crate) fn new(key: &[u8; 32]) -> Schedule {
        let (lo, hi) = key.split_at(16);
        let mut half = [0u8; 16];
        half.copy_from_slice(lo);
        let k0 = load128(&half);
        half.copy_from_slice(hi);
        let k1 = load128(&half);
        half.zeroize();

        let mut enc = [k0; ROUND_KEYS];
        enc[1] = k1;
        enc[2] = even_key::<0x01>(enc[0], enc[1]);
        enc[3] = odd_key(enc[1], enc[2]);
        enc[4] = even_key::<0x02>(enc[2], enc[3]);
        enc[5] = odd_key(enc[3], enc[4]);
        enc[6] = even_key::<0x04>(enc[4], enc[5]);
        enc[7] = odd_key(enc[5], enc[6]);
        enc[8] = even_key::<0x08>(enc[6], enc[7]);
        enc[9] = odd_key(enc[7], enc[8]);
        enc[10] = even_key::<0x10>(enc[8], enc[9]);
        enc[11] = odd_key(enc[9], enc[10]);
        enc[12] = even_key::<0x20>(enc[10], enc[11]);
        enc[13] = odd_key(enc[11], enc[12]);
        enc[14] = even_key::<0x40>(enc[12], enc[13]);

        let mut dec = [k0; ROUND_KEYS];
        dec[0] = enc[14];
        for i in 1..ROUND_KEYS - 1 {
            dec[i] = _mm_aesimc_si128(enc[ROUND_KEYS - 1 - i]);
        }
        dec[ROUND_KEYS - 1] = enc[0];
        Schedule { enc, dec }
    }

    /// Encrypts one block (for the known-answer tests).
    #[cfg(test)]
    #[target_feature(enable = "aes,sse2")]
    pub(crate) fn encrypt_block(&self, block: &mut [u8; 16]) {
        use core::arch::x86_64::{_mm_aesenc_si128, _mm_aesenclast_si128};
        let mut x = _mm_xor_si128(load128(block), self.enc[0]);
        for k in &self.enc[1..ROUND_KEYS - 1] {
            x = _mm_aesenc_si128(x, *k);
        }
        x = _mm_aesenclast_si128(x, self.enc[ROUND_KEYS - 1]);
        store128(block, x);
    }

    /// Decrypts one block with the equivalent inverse cipher.
    #[cfg(test)]
    #[target_feature(enable = "aes,sse2")]
    pub(crate) fn decrypt_block(&self, block: &mut [u8; 16]) {
        use core::arch::x86_64::{_mm_aesdec_si128, _mm_aesdeclast_si128};
        let mut x = _mm_xor_si128(load128(block), self.dec[0]);
        for k in &self.dec[1..ROUND_KEYS - 1] {
            x = _mm_aesdec_si128(x, *k);
        }
        x = _mm_aesdeclast_si128(x, self.dec[ROUND_KEYS - 1]);
        store128(block, x);
    }
}
