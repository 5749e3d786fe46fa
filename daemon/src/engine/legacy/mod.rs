//! TrueCrypt 4's modes (header versions 1 and 2), built here from the
//! backends' raw block ciphers (ABI version 2): LRW, TrueCrypt's CBC with
//! its IV and whitening per sector, and the outer CBC of cascades. A
//! backend only ever encrypts independent blocks; the chaining, tweaks and
//! whitening are computed here, behind the same [`VolumeCipher`] the data
//! path uses for XTS.
//!
//! The master key (and the header key) of a legacy volume: bytes 0..16 the
//! LRW tweak key, or 0..32 the CBC IV and whitening seed; the ciphers' keys
//! from byte 32, in order of application, each as long as its cipher's
//! (see [`legacy_key_bytes`]), as cryptsetup's `tcrypt.c` lays them out.
//!
//! Sector numbers: LRW counts the data area's sectors from 0; CBC from 1
//! (the header was sector 0), whichever volume (outer or hidden) it is.
//!
//! [`VolumeCipher`]: super::VolumeCipher

pub mod cbc;
pub mod lrw;

use super::backend_set::BackendSet;
use super::chain::{Chain, LEGACY_KEYS_AT, Mode, legacy_key_bytes};
use super::context::BlockKey;
use crate::error::{Error, Result};
use zeroize::Zeroizing;

/// Bytes of a sector of a legacy volume.
pub const SECTOR: usize = 512;

/// A block cipher keyed for raw blocks: a backend's, or a reference in
/// tests.
pub trait RawBlocks: Send + Sync {
    /// 16 or 8.
    fn block_bytes(&self) -> usize;
    fn encrypt(&self, data: &mut [u8]) -> Result<()>;
    fn decrypt(&self, data: &mut [u8]) -> Result<()>;
}

impl RawBlocks for BlockKey {
    fn block_bytes(&self) -> usize {
        BlockKey::block_bytes(self)
    }
    fn encrypt(&self, data: &mut [u8]) -> Result<()> {
        BlockKey::encrypt(self, data)
    }
    fn decrypt(&self, data: &mut [u8]) -> Result<()> {
        BlockKey::decrypt(self, data)
    }
}

fn xor(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= s;
    }
}

/// The sector number of the first data sector in `mode`.
pub fn first_sector(mode: Mode) -> u64 {
    match mode {
        Mode::Cbc | Mode::OuterCbc => 1,
        Mode::Xts | Mode::Lrw => 0,
    }
}

/// A legacy chain keyed: its layers in order of application, and the
/// tweak key or the IV seed.
pub struct LegacyCipher<B = BlockKey> {
    mode: Mode,
    layers: Vec<B>,
    /// The master key's first 32 bytes: LRW's tweak key (the first 16),
    /// or CBC's IV and whitening seed.
    seed: Zeroizing<[u8; 32]>,
    tweak: lrw::TweakKey,
}

impl<B> std::fmt::Debug for LegacyCipher<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacyCipher")
            .field("mode", &self.mode)
            .field("layers", &self.layers.len())
            .finish_non_exhaustive()
    }
}

/// The cipher keys of `chain` in `master`: where each starts and its length.
pub fn layer_keys(chain: &Chain) -> Vec<std::ops::Range<usize>> {
    let mut at = LEGACY_KEYS_AT;
    chain
        .ciphers
        .iter()
        .map(|c| {
            let len = match chain.mode {
                Mode::Lrw => super::chain::CIPHER_KEY_BYTES,
                _ => legacy_key_bytes(c),
            };
            at += len;
            at - len..at
        })
        .collect()
}

/// Keys legacy `chain` from `master` (a master key or a header key) on
/// the backends of `set` that serve raw blocks.
pub fn key(
    set: &BackendSet,
    chain: &Chain,
    master: &[u8],
    forced: Option<&str>,
) -> Result<LegacyCipher> {
    let mut layers = Vec::with_capacity(chain.ciphers.len());
    for (cipher, range) in chain.ciphers.iter().zip(layer_keys(chain)) {
        let key = master.get(range).ok_or(Error::KeyLength {
            expected: chain.key_bytes(),
            got: master.len(),
        })?;
        let backend = set.pick_block(cipher, forced)?;
        layers.push(BlockKey::new(&backend, cipher, key)?);
    }
    LegacyCipher::new(chain.mode, layers, master)
}

impl<B: RawBlocks> LegacyCipher<B> {
    /// `layers` keyed already; `master` for its first 32 bytes.
    pub fn new(mode: Mode, layers: Vec<B>, master: &[u8]) -> Result<LegacyCipher<B>> {
        let mut seed = Zeroizing::new([0u8; 32]);
        let head = master.get(..32).ok_or(Error::KeyLength {
            expected: 32,
            got: master.len(),
        })?;
        seed.copy_from_slice(head);
        let mut k2 = Zeroizing::new([0u8; 16]);
        k2.copy_from_slice(&seed[..16]);
        let ok = match mode {
            Mode::Lrw | Mode::OuterCbc => layers.iter().all(|l| l.block_bytes() == 16),
            Mode::Cbc => layers.iter().all(|l| matches!(l.block_bytes(), 8 | 16)),
            Mode::Xts => false,
        };
        if !ok || layers.is_empty() {
            return Err(Error::UnsupportedCipher(format!(
                "{} layers with these block sizes",
                mode.name()
            )));
        }
        Ok(LegacyCipher {
            mode,
            layers,
            tweak: lrw::TweakKey::new(&k2),
            seed,
        })
    }

    pub fn layers(&self) -> &[B] {
        &self.layers
    }

    /// Encrypts or decrypts whole sectors in place, the first numbered
    /// `first` (see [`first_sector`]).
    pub fn crypt_sectors(&self, data: &mut [u8], first: u64, encrypt: bool) -> Result<()> {
        if !data.len().is_multiple_of(SECTOR) {
            return Err(Error::Alignment {
                len: data.len(),
                unit: SECTOR,
            });
        }
        if self.mode == Mode::Lrw {
            let index = lrw::sector_index(first);
            return self.each_layer(encrypt, |l| self.tweak.crypt(l, data, index, encrypt));
        }
        for (k, sector) in data.chunks_exact_mut(SECTOR).enumerate() {
            let n = first.wrapping_add(k as u64);
            self.cbc_sector(sector, n, encrypt)?;
        }
        Ok(())
    }

    fn cbc_sector(&self, sector: &mut [u8], n: u64, encrypt: bool) -> Result<()> {
        let run = |layers: &[B], data: &mut [u8]| {
            let bs = layers.first().map_or(16, RawBlocks::block_bytes);
            let s = cbc::sector_iv(&self.seed, n, bs);
            if encrypt {
                cbc::encrypt(layers, data, &s.iv[..], &s.whitening)
            } else {
                cbc::decrypt(layers, data, &s.iv[..], &s.whitening)
            }
        };
        if self.mode == Mode::OuterCbc {
            return run(&self.layers, sector);
        }
        self.each_layer_slice(encrypt, |l| run(l, sector))
    }

    /// Decrypts the 448 encrypted bytes of a header in place.
    pub fn decrypt_header(&self, data: &mut [u8]) -> Result<()> {
        let mut whitening = [0u8; 8];
        whitening.copy_from_slice(&self.seed[8..16]);
        let result = match self.mode {
            Mode::Lrw => self.each_layer(false, |l| self.tweak.crypt(l, data, 1, false)),
            Mode::OuterCbc => cbc::decrypt(&self.layers, data, &self.seed[..16], &whitening),
            _ => self.each_layer_slice(false, |l| {
                let bs = l.first().map_or(16, RawBlocks::block_bytes);
                cbc::decrypt(l, data, &self.seed[..bs], &whitening)
            }),
        };
        zeroize::Zeroize::zeroize(&mut whitening);
        result
    }

    /// Runs `f` on each layer: in order of application to encrypt, in
    /// reverse to decrypt.
    fn each_layer(&self, encrypt: bool, mut f: impl FnMut(&B) -> Result<()>) -> Result<()> {
        self.each_layer_slice(encrypt, |l| l.first().map_or(Ok(()), &mut f))
    }

    fn each_layer_slice(&self, encrypt: bool, mut f: impl FnMut(&[B]) -> Result<()>) -> Result<()> {
        let n = self.layers.len();
        for k in 0..n {
            let i = if encrypt { k } else { n - 1 - k };
            f(&self.layers[i..=i])?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
