//! The AES-NI backend: AES-256 in XTS with the processor's AES instructions,
//! 512-bit VAES where the CPU has it. `available()` says no on a processor
//! without AES-NI, and then nothing else is ever called.

pub mod xts;

use tcd_backend_kit::XtsCipher;

/// XTS-AES-256 from 64 bytes of key (primary, then tweak key).
pub fn new_aes_xts(key: &[u8]) -> Box<dyn XtsCipher> {
    let key: &[u8; 64] = key.try_into().expect("kit checked the key length");
    Box::new(xts::AesXts::new(key))
}

tcd_backend_kit::export_backend! {
    name: c"aesni",
    description: c"AES-256-XTS with the processor's AES instructions (AES-NI, VAES where present)",
    version: c"0.1.0",
    flags: tcd_backend_kit::abi::FLAG_CPU_CRYPTO,
    available: xts::cpu_supported,
    ciphers: [
        // XTS fused with AES only: the legacy modes' raw AES blocks come
        // from a backend with block functions.
        (c"AES", 32, 16, Some(new_aes_xts), None),
    ],
}
