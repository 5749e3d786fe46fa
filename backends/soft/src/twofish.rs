//! Twofish-256. STAND-IN: wraps the `twofish` crate until the fast
//! implementation lands.

use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use tcd_backend_kit::BlockCipher;

pub struct Twofish256(twofish::Twofish);

impl Twofish256 {
    pub fn new(key: &[u8; 32]) -> Self {
        Twofish256(twofish::Twofish::new_from_slice(key).expect("32-byte key"))
    }
}

impl BlockCipher for Twofish256 {
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
