//! The software-only backend: AES, Twofish and Serpent in XTS and as raw
//! blocks (for the daemon's legacy TrueCrypt modes), Camellia and
//! Kuznyechik in XTS, all our own code, in portable
//! Rust with no processor crypto instruction (no AES-NI, VAES or PCLMULQDQ)
//! anywhere in the library. This is the backend an administrator enforces
//! when only auditable software may touch keys.
//!
//! SIMD (SSE2/AVX2/AVX-512 logic and shuffles) is used where the CPU has it;
//! it computes the same portable algorithm wider.
//!
//! TrueCrypt before 5.0 also used Blowfish (its little-endian variant),
//! CAST5 and Triple DES: raw 8-byte blocks only, through the RustCrypto
//! crates (`legacy.rs`).

pub mod aes;
pub mod camellia;
pub mod kuznyechik;
pub mod legacy;
#[cfg(test)]
mod reference_tests;
pub mod serpent;
pub mod twofish;

use tcd_backend_kit::{BlockCipher, Xts, XtsCipher};

fn key32(key: &[u8]) -> &[u8; 32] {
    key.try_into().expect("kit checked the key length")
}

/// Raw AES-256 blocks from 32 bytes of key.
pub fn new_aes_block(key: &[u8]) -> Box<dyn BlockCipher> {
    Box::new(aes::Aes256::new(key32(key)))
}
/// Raw Twofish-256 blocks.
pub fn new_twofish_block(key: &[u8]) -> Box<dyn BlockCipher> {
    Box::new(twofish::Twofish256::new(key32(key)))
}
/// Raw Serpent-256 blocks.
pub fn new_serpent_block(key: &[u8]) -> Box<dyn BlockCipher> {
    Box::new(serpent::Serpent256::new(key32(key)))
}

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
    xts_of(key, camellia::Camellia256::new)
}
/// XTS-Kuznyechik from 64 bytes of key.
pub fn new_kuznyechik_xts(key: &[u8]) -> Box<dyn XtsCipher> {
    xts_of(key, kuznyechik::Kuznyechik::new)
}

fn available() -> bool {
    // Portable code: every processor can run it.
    true
}

tcd_backend_kit::export_backend! {
    name: c"soft",
    description: c"Portable software ciphers (constant-time bitsliced AES, Twofish, Serpent, Camellia, Kuznyechik; legacy Blowfish, CAST5, Triple DES); no processor crypto instructions",
    version: c"0.1.0",
    flags: 0,
    available: available,
    ciphers: [
        (c"AES", 32, 16, Some(new_aes_xts), Some(new_aes_block)),
        (c"Twofish", 32, 16, Some(new_twofish_xts), Some(new_twofish_block)),
        (c"Serpent", 32, 16, Some(new_serpent_xts), Some(new_serpent_block)),
        (c"Camellia", 32, 16, Some(new_camellia_xts), None),
        (c"Kuznyechik", 32, 16, Some(new_kuznyechik_xts), None),
        (c"Blowfish", 56, 8, None, Some(legacy::new_blowfish)),
        (c"CAST5", 16, 8, None, Some(legacy::new_cast5)),
        (c"Triple DES", 24, 8, None, Some(legacy::new_triple_des)),
    ],
}
