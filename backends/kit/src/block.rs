//! The block-cipher shape the XTS layer drives.

/// A block cipher keyed once, encrypting runs of blocks.
///
/// `blocks.len()` is always a multiple of the block size (16 for the XTS
/// ciphers, 8 for the legacy ones); implementations process as many
/// blocks at once as suits them and handle any tail themselves. Encryption
/// and decryption take `&self` so one key schedule serves many threads.
pub trait BlockCipher: Send + Sync {
    fn encrypt_blocks(&self, blocks: &mut [u8]);
    fn decrypt_blocks(&self, blocks: &mut [u8]);
    /// The code path chosen at key setup, for people (`AVX2`, `SSE2`,
    /// ...); `None` when the cipher does not say.
    fn path(&self) -> Option<&'static core::ffi::CStr> {
        None
    }
}
