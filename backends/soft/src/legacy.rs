//! The 64-bit block ciphers of TrueCrypt before 5.0, as raw blocks for the
//! daemon's legacy CBC mode: Blowfish (TrueCrypt's little-endian variant,
//! which reads each 32-bit half of a block least significant byte first),
//! CAST5 (RFC 2144) and Triple DES (EDE, three keys). Read-mostly volumes
//! from 2004-2007: the RustCrypto crates, table-driven, one block at a time.

use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use tcd_backend_kit::BlockCipher;

/// A RustCrypto cipher with 8-byte blocks as a [`BlockCipher`].
pub struct Blocks8<C>(C);

impl<C> BlockCipher for Blocks8<C>
where
    C: BlockCipherEncrypt
        + BlockCipherDecrypt
        + cipher::BlockSizeUser<BlockSize = cipher::consts::U8>
        + Send
        + Sync,
{
    fn encrypt_blocks(&self, blocks: &mut [u8]) {
        for b in blocks.chunks_exact_mut(8) {
            if let Ok(block) = <&mut [u8; 8]>::try_from(b) {
                self.0.encrypt_block(block.into());
            }
        }
    }
    fn decrypt_blocks(&self, blocks: &mut [u8]) {
        for b in blocks.chunks_exact_mut(8) {
            if let Ok(block) = <&mut [u8; 8]>::try_from(b) {
                self.0.decrypt_block(block.into());
            }
        }
    }
    fn path(&self) -> Option<&'static core::ffi::CStr> {
        Some(c"portable")
    }
}

fn keyed<C>(key: &[u8]) -> Box<dyn BlockCipher>
where
    C: KeyInit
        + BlockCipherEncrypt
        + BlockCipherDecrypt
        + cipher::BlockSizeUser<BlockSize = cipher::consts::U8>
        + Send
        + Sync
        + 'static,
{
    Box::new(Blocks8(
        C::new_from_slice(key).expect("kit checked the key length"),
    ))
}

/// TrueCrypt's Blowfish: 448-bit key, little-endian halves.
pub fn new_blowfish(key: &[u8]) -> Box<dyn BlockCipher> {
    keyed::<blowfish::BlowfishLE>(key)
}

/// CAST5 with a 128-bit key.
pub fn new_cast5(key: &[u8]) -> Box<dyn BlockCipher> {
    keyed::<cast5::Cast5>(key)
}

/// Triple DES, EDE with three 64-bit keys (parity bits ignored).
pub fn new_triple_des(key: &[u8]) -> Box<dyn BlockCipher> {
    keyed::<des::TdesEde3>(key)
}
