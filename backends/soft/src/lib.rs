//! The software-only backend: AES, Twofish and Serpent in XTS, in portable
//! Rust with no processor crypto instruction (no AES-NI, VAES or PCLMULQDQ)
//! anywhere in the library. This is the backend an administrator enforces
//! when only auditable software may touch keys.
//!
//! SIMD (SSE2/AVX2/AVX-512 logic and shuffles) is used where the CPU has it;
//! it computes the same portable algorithm wider.

pub mod aes;
pub mod rustcrypto;
pub mod serpent;
pub mod twofish;

use tcd_backend_kit::{BlockCipher, Xts, XtsCipher};

fn xts_of<C: BlockCipher + 'static>(key: &[u8], new: fn(&[u8; 32]) -> C) -> Box<dyn XtsCipher> {
    let (k1, k2) = key.split_at(32);
    let k1: &[u8; 32] = k1.try_into().expect("kit checked the key length");
    let k2: &[u8; 32] = k2.try_into().expect("kit checked the key length");
    Box::new(Xts::new(new(k1), new(k2)))
}

/// XTS-AES-256 from 64 bytes of key.
pub fn new_aes_xts(key: &[u8]) -> Box<dyn XtsCipher> {
    xts_of(key, aes::Aes256::new)
}
/// XTS-Twofish-256 from 64 bytes of key.
pub fn new_twofish_xts(key: &[u8]) -> Box<dyn XtsCipher> {
    xts_of(key, twofish::Twofish256::new)
}
/// XTS-Serpent-256 from 64 bytes of key.
pub fn new_serpent_xts(key: &[u8]) -> Box<dyn XtsCipher> {
    xts_of(key, serpent::Serpent256::new)
}

/// XTS-Camellia-256 from 64 bytes of key.
pub fn new_camellia_xts(key: &[u8]) -> Box<dyn XtsCipher> {
    xts_of(key, rustcrypto::Camellia256::new)
}
/// XTS-Kuznyechik from 64 bytes of key.
pub fn new_kuznyechik_xts(key: &[u8]) -> Box<dyn XtsCipher> {
    xts_of(key, rustcrypto::Kuznyechik::new)
}

fn available() -> bool {
    // Portable code: every processor can run it.
    true
}

tcd_backend_kit::export_backend! {
    name: c"soft",
    description: c"Portable software ciphers (constant-time bitsliced AES, Twofish, Serpent, Camellia, Kuznyechik); no processor crypto instructions",
    version: c"0.1.0",
    flags: 0,
    available: available,
    ciphers: [
        (c"AES", 32, new_aes_xts),
        (c"Twofish", 32, new_twofish_xts),
        (c"Serpent", 32, new_serpent_xts),
        (c"Camellia", 32, new_camellia_xts),
        (c"Kuznyechik", 32, new_kuznyechik_xts),
    ],
}
