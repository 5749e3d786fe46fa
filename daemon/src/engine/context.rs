//! Keyed contexts inside a backend, owned on the Rust side: XTS, and
//! raw blocks for the legacy modes.

use super::loader::{CipherInfo, LoadedBackend, new_block_context, new_context};
use crate::error::{Error, Result};
use std::ptr::NonNull;
use std::sync::Arc;
use tcd_proto::abi::{BlockCtx, STATUS_OK, Status, XtsCtx};

/// The cipher of `backend` named `cipher` (in any case) among those
/// `offers` admits, and its index: once the backend is available and `key`
/// is `key_bytes` of that cipher long.
fn keyed_cipher<'a>(
    backend: &'a LoadedBackend,
    cipher: &str,
    key: &[u8],
    offers: impl Fn(&CipherInfo) -> bool,
    key_bytes: impl Fn(&CipherInfo) -> usize,
) -> Result<(usize, &'a CipherInfo)> {
    let info = &backend.info;
    if !info.available {
        return Err(Error::BackendUnavailable {
            backend: info.name.clone(),
        });
    }
    let (index, desc) = info
        .ciphers
        .iter()
        .enumerate()
        .find(|(_, c)| offers(c) && c.name.eq_ignore_ascii_case(cipher))
        .ok_or_else(|| Error::NoSuchCipher {
            backend: info.name.clone(),
            cipher: cipher.to_owned(),
        })?;
    let expected = key_bytes(desc);
    if key.len() != expected {
        return Err(Error::KeyLength {
            expected,
            got: key.len(),
        });
    }
    Ok((index, desc))
}

/// How a failed `call` of `backend` is told.
fn call_failed(backend: &LoadedBackend, call: &'static str) -> impl Fn(Status) -> Error {
    let name = backend.info.name.clone();
    move |status| Error::BackendCall {
        backend: name.clone(),
        call,
        status,
    }
}

/// One cipher keyed for XTS in one backend. Dropping it makes the backend
/// wipe and free the key schedule.
pub struct XtsKey {
    backend: Arc<LoadedBackend>,
    cipher: String,
    ctx: NonNull<XtsCtx>,
}

// SAFETY: the backend ABI requires contexts to be usable from any thread and
// concurrently (`xts_encrypt`/`xts_decrypt` take a const context); freeing
// happens once, in Drop, with exclusive access.
unsafe impl Send for XtsKey {}
// SAFETY: as above.
unsafe impl Sync for XtsKey {}

impl std::fmt::Debug for XtsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key: only where it lives.
        f.debug_struct("XtsKey")
            .field("backend", &self.backend.info.name)
            .field("cipher", &self.cipher)
            .finish_non_exhaustive()
    }
}

impl XtsKey {
    /// Keys cipher `cipher` of `backend` with `key` (primary then tweak key).
    pub fn new(backend: &Arc<LoadedBackend>, cipher: &str, key: &[u8]) -> Result<XtsKey> {
        let (index, desc) =
            keyed_cipher(backend, cipher, key, |c| c.has_xts(), |c| 2 * c.key_bytes)?;
        let failed = call_failed(backend, "xts_new");
        let ctx = new_context(backend, index, key).map_err(&failed)?;
        let ctx = NonNull::new(ctx).ok_or_else(|| failed(tcd_proto::abi::STATUS_INTERNAL))?;
        Ok(XtsKey {
            backend: Arc::clone(backend),
            cipher: desc.name.clone(),
            ctx,
        })
    }

    pub fn backend(&self) -> &Arc<LoadedBackend> {
        &self.backend
    }

    pub fn cipher(&self) -> &str {
        &self.cipher
    }

    /// The code path the backend chose for this key (`AVX2`, `SSE2`, ...),
    /// when it says.
    pub fn path(&self) -> Option<String> {
        super::loader::context_path(&self.backend, self.ctx.as_ptr())
    }

    /// Encrypts whole units in place, the first numbered `first_unit`.
    pub fn encrypt(&self, data: &mut [u8], first_unit: u64, unit_size: u32) -> Result<()> {
        self.crypt(data, first_unit, unit_size, true)
    }

    /// Decrypts whole units in place.
    pub fn decrypt(&self, data: &mut [u8], first_unit: u64, unit_size: u32) -> Result<()> {
        self.crypt(data, first_unit, unit_size, false)
    }

    fn crypt(&self, data: &mut [u8], first_unit: u64, unit_size: u32, encrypt: bool) -> Result<()> {
        let (f, call) = if encrypt {
            (self.backend.fns.encrypt, "xts_encrypt")
        } else {
            (self.backend.fns.decrypt, "xts_decrypt")
        };
        // SAFETY: a live context of this backend; `data` is an exclusive
        // slice of `len` bytes; the backend validates the unit arithmetic.
        let status = unsafe {
            f(
                self.ctx.as_ptr(),
                data.as_mut_ptr(),
                data.len(),
                first_unit,
                unit_size,
            )
        };
        if status == STATUS_OK {
            Ok(())
        } else {
            Err(Error::BackendCall {
                backend: self.backend.info.name.clone(),
                call,
                status,
            })
        }
    }
}

impl Drop for XtsKey {
    fn drop(&mut self) {
        // SAFETY: the context came from this backend's `xts_new` and is freed
        // exactly once; the Arc keeps the library loaded until after.
        unsafe { (self.backend.fns.free)(self.ctx.as_ptr()) };
    }
}

/// One cipher keyed as raw blocks (ECB) in one backend (ABI version 2):
/// what the legacy modes are built from. Dropping it makes the backend
/// wipe and free the key schedule.
pub struct BlockKey {
    backend: Arc<LoadedBackend>,
    cipher: String,
    block_bytes: usize,
    ctx: NonNull<BlockCtx>,
}

// SAFETY: the ABI lets `block_encrypt`/`block_decrypt` run on one context
// from any thread at once; freeing happens once, in Drop.
unsafe impl Send for BlockKey {}
// SAFETY: as above.
unsafe impl Sync for BlockKey {}

impl std::fmt::Debug for BlockKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockKey")
            .field("backend", &self.backend.info.name)
            .field("cipher", &self.cipher)
            .finish_non_exhaustive()
    }
}

impl BlockKey {
    /// Keys cipher `cipher` of `backend` with `key` (`key_bytes` long).
    pub fn new(backend: &Arc<LoadedBackend>, cipher: &str, key: &[u8]) -> Result<BlockKey> {
        let has_blocks = backend.info.has_blocks;
        let (index, desc) = keyed_cipher(backend, cipher, key, |_| has_blocks, |c| c.key_bytes)?;
        let failed = call_failed(backend, "block_new");
        let ctx = new_block_context(backend, index, key).map_err(&failed)?;
        let ctx = NonNull::new(ctx).ok_or_else(|| failed(tcd_proto::abi::STATUS_INTERNAL))?;
        Ok(BlockKey {
            backend: Arc::clone(backend),
            cipher: desc.name.clone(),
            block_bytes: desc.block_bytes,
            ctx,
        })
    }

    pub fn backend(&self) -> &Arc<LoadedBackend> {
        &self.backend
    }

    pub fn cipher(&self) -> &str {
        &self.cipher
    }

    /// 16 or 8.
    pub fn block_bytes(&self) -> usize {
        self.block_bytes
    }

    /// Encrypts whole blocks in place, each on its own (ECB).
    pub fn encrypt(&self, data: &mut [u8]) -> Result<()> {
        self.crypt(data, true)
    }

    /// Decrypts whole blocks in place.
    pub fn decrypt(&self, data: &mut [u8]) -> Result<()> {
        self.crypt(data, false)
    }

    fn crypt(&self, data: &mut [u8], encrypt: bool) -> Result<()> {
        let call = if encrypt {
            "block_encrypt"
        } else {
            "block_decrypt"
        };
        let status = match self.backend.fns.block {
            // SAFETY: a live context of this backend; `data` is an
            // exclusive slice of `len` bytes; the backend checks the length.
            Some(f) => unsafe {
                let crypt = if encrypt { f.encrypt } else { f.decrypt };
                crypt(self.ctx.as_ptr(), data.as_mut_ptr(), data.len())
            },
            None => tcd_proto::abi::STATUS_INTERNAL,
        };
        if status == STATUS_OK {
            Ok(())
        } else {
            Err(Error::BackendCall {
                backend: self.backend.info.name.clone(),
                call,
                status,
            })
        }
    }
}

impl Drop for BlockKey {
    fn drop(&mut self) {
        if let Some(f) = self.backend.fns.block {
            // SAFETY: the context came from this backend's `block_new` and
            // is freed exactly once; the Arc keeps the library loaded.
            unsafe { (f.free)(self.ctx.as_ptr()) };
        }
    }
}
