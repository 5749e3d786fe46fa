//! STAND-IN until the AES-NI implementation lands.
use tcd_backend_kit::XtsCipher;

pub fn cpu_supported() -> bool {
    std::arch::is_x86_feature_detected!("aes")
}

pub struct AesXts;
impl AesXts {
    pub fn new(_key: &[u8; 64]) -> Self {
        AesXts
    }
}
impl XtsCipher for AesXts {
    fn encrypt(&self, _data: &mut [u8], _first_unit: u64, _unit_size: usize) {
        unimplemented!()
    }
    fn decrypt(&self, _data: &mut [u8], _first_unit: u64, _unit_size: usize) {
        unimplemented!()
    }
}
