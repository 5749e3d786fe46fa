//! Serpent-256. STAND-IN: wraps the `serpent` crate until the fast
//! implementation lands.

use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use tcd_backend_kit::BlockCipher;

pub struct Serpent256(serpent::Serpent);

impl Serpent256 {
    pub fn new(key: &[u8; 32]) -> Self {
        Serpent256(serpent::Serpent::new_from_slice(key).expect("32-byte key"))
    }
}

impl BlockCipher for Serpent256 {
    fn encrypt_blocks(&self, blocks: &mut [u8]) {
        for b in blocks.chunks_exact_mut(16) {
            self.0.encrypt_block(b.try_into().expect("16 bytes"));
        }
    }
    fn decrypt_blocks(&self, blocks: &mut [u8]) {
        for b in blocks.chunks_exact_mut(16) {
            self.0.decrypt_block(b.try_into().expect("16 bytes"));
        }
    }
}
