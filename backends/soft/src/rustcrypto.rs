//! VeraCrypt's Kuznyechik through the RustCrypto crate, one block at a
//! time: rarely used, so no fast path of our own.

use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use tcd_backend_kit::BlockCipher;

/// A RustCrypto block cipher as a [`BlockCipher`].
pub struct Blockwise<C>(C);

impl<C> BlockCipher for Blockwise<C>
where
    C: BlockCipherEncrypt
        + BlockCipherDecrypt
        + cipher::BlockSizeUser<BlockSize = cipher::consts::U16>
        + Send
        + Sync,
{
    fn encrypt_blocks(&self, blocks: &mut [u8]) {
        for b in blocks.chunks_exact_mut(16) {
            if let Ok(block) = <&mut [u8; 16]>::try_from(b) {
                self.0.encrypt_block(block.into());
            }
        }
    }
    fn decrypt_blocks(&self, blocks: &mut [u8]) {
        for b in blocks.chunks_exact_mut(16) {
            if let Ok(block) = <&mut [u8; 16]>::try_from(b) {
                self.0.decrypt_block(block.into());
            }
        }
    }
    /// The crates' table-driven code, one block at a time, on every
    /// processor.
    fn path(&self) -> Option<&'static core::ffi::CStr> {
        Some(c"portable")
    }
}

/// Kuznyechik (GOST R 34.12-2015), 256-bit key.
pub struct Kuznyechik;
impl Kuznyechik {
    #[allow(clippy::new_ret_no_self)]
    pub fn new(key: &[u8; 32]) -> Blockwise<kuznyechik::Kuznyechik> {
        Blockwise(kuznyechik::Kuznyechik::new(key.into()))
    }
}
