//! TrueCrypt 4's CBC: each 512-byte sector is CBC-encrypted from an IV made
//! of the sector number, and the ciphertext is then XORed with 8 bytes of
//! "whitening" made of the sector number and CRC-32s (dm-crypt's `tcw` IV
//! generator; TrueCrypt's `InitSectorIVAndWhitening`). The composite of a
//! cascade ("outer CBC") is one CBC whose block function is every layer in
//! turn. The header is decrypted with the key's first bytes as IV and
//! bytes 8..16 as whitening.

use super::RawBlocks;
use crate::error::{Error, Result};
use zeroize::Zeroizing;

/// The IV and whitening of one sector.
pub struct SectorIv {
    pub iv: Zeroizing<[u8; 16]>,
    pub whitening: Zeroizing<[u8; 8]>,
}

/// The IV (of `block` bytes, 16 or 8) and whitening of sector `sector`
/// from the 32-byte seed at the start of the master key: the IV is the
/// seed XOR the sector number (little-endian, repeated); the whitening
/// comes from the 16 seed bytes after the IV (for 8-byte blocks from byte
/// 8), XORed with the sector number, as the CRC-32s of its four 32-bit
/// words, the first XOR the fourth and the second XOR the third.
pub fn sector_iv(seed: &[u8; 32], sector: u64, block: usize) -> SectorIv {
    let n = sector.to_le_bytes();
    let mut iv = Zeroizing::new([0u8; 16]);
    for (i, b) in iv.iter_mut().take(block).enumerate() {
        *b = seed[i] ^ n[i % 8];
    }
    let from = if block == 16 { 16 } else { 8 };
    let mut w = Zeroizing::new([0u8; 16]);
    for (i, b) in w.iter_mut().enumerate() {
        *b = seed[from + i] ^ n[i % 8];
    }
    let crc = |k: usize| crc32fast::hash(&w[4 * k..4 * k + 4]);
    let mut whitening = Zeroizing::new([0u8; 8]);
    whitening[..4].copy_from_slice(&(crc(0) ^ crc(3)).to_le_bytes());
    whitening[4..].copy_from_slice(&(crc(1) ^ crc(2)).to_le_bytes());
    SectorIv { iv, whitening }
}

/// The most one call takes: a sector.
const MAX: usize = 512;

fn whiten(data: &mut [u8], whitening: &[u8; 8]) {
    for (i, b) in data.iter_mut().enumerate() {
        *b ^= whitening[i % 8];
    }
}

fn block_size<B: RawBlocks>(layers: &[B], data: &[u8]) -> Result<usize> {
    let bs = layers.first().map_or(16, RawBlocks::block_bytes);
    if data.len() > MAX
        || !data.len().is_multiple_of(bs)
        || layers.iter().any(|l| l.block_bytes() != bs)
    {
        return Err(Error::Alignment {
            len: data.len(),
            unit: bs,
        });
    }
    Ok(bs)
}

/// Decrypts `data` (at most a sector): whitening off, every layer's
/// decryption (last applied first), then the CBC chaining.
pub fn decrypt<B: RawBlocks>(
    layers: &[B],
    data: &mut [u8],
    iv: &[u8],
    whitening: &[u8; 8],
) -> Result<()> {
    let bs = block_size(layers, data)?;
    whiten(data, whitening);
    let mut cipher_text = Zeroizing::new([0u8; MAX]);
    cipher_text[..data.len()].copy_from_slice(data);
    for layer in layers.iter().rev() {
        layer.decrypt(data)?;
    }
    for (i, block) in data.chunks_exact_mut(bs).enumerate() {
        let prev = if i == 0 {
            &iv[..bs]
        } else {
            &cipher_text[(i - 1) * bs..i * bs]
        };
        super::xor(block, prev);
    }
    Ok(())
}

/// Encrypts `data` (at most a sector): the CBC chaining block by block
/// through every layer, then the whitening.
pub fn encrypt<B: RawBlocks>(
    layers: &[B],
    data: &mut [u8],
    iv: &[u8],
    whitening: &[u8; 8],
) -> Result<()> {
    let bs = block_size(layers, data)?;
    let mut prev = Zeroizing::new([0u8; 16]);
    prev[..bs].copy_from_slice(&iv[..bs]);
    for block in data.chunks_exact_mut(bs) {
        super::xor(block, &prev[..bs]);
        for layer in layers {
            layer.encrypt(block)?;
        }
        prev[..bs].copy_from_slice(block);
    }
    whiten(data, whitening);
    Ok(())
}
