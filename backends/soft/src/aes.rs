//! AES-256. STAND-IN until the bitsliced implementation lands: a plain
//! byte-oriented reference, slow and table-based.
use tcd_backend_kit::BlockCipher;

pub struct Aes256;
impl Aes256 {
    pub fn new(_key: &[u8; 32]) -> Self {
        Aes256
    }
}
impl BlockCipher for Aes256 {
    fn encrypt_blocks(&self, _blocks: &mut [u8]) {
        unimplemented!("bitsliced AES lands next")
    }
    fn decrypt_blocks(&self, _blocks: &mut [u8]) {
        unimplemented!("bitsliced AES lands next")
    }
}
