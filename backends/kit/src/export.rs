//! The C ABI side of a Rust backend: argument checks, panic containment and
//! the `tcd_backend_entry` symbol (through [`export_backend!`]).

use crate::block::BlockCipher;
use crate::xts::XtsCipher;
use core::panic::AssertUnwindSafe;
use std::panic::catch_unwind;
use tcd_proto::abi::{
    BlockCtx, STATUS_BAD_KEY, STATUS_INTERNAL, STATUS_INVALID_ARGUMENT, STATUS_OK,
    STATUS_UNKNOWN_CIPHER, Status, XtsCtx,
};

/// Makes a context from `2 * key_bytes` of key: primary, then tweak key.
pub type Factory = fn(key: &[u8]) -> Box<dyn XtsCipher>;

/// Makes a raw block-cipher context from `key_bytes` of key.
pub type BlockFactory = fn(key: &[u8]) -> Box<dyn BlockCipher>;

/// One cipher of a backend, as the export macro lists it: XTS, raw
/// blocks, or both.
pub struct CipherEntry {
    pub key_bytes: u32,
    pub block_bytes: u32,
    pub xts: Option<Factory>,
    pub block: Option<BlockFactory>,
}

/// What a context pointer handed across the ABI points to.
type Ctx = Box<dyn XtsCipher>;

/// `xts_new` for a backend whose ciphers are `table`.
///
/// # Safety
/// `key` must point to `key_len` readable bytes and `out` to a writable
/// pointer, or be null (which is refused).
pub unsafe fn xts_new(
    table: &[CipherEntry],
    cipher: u32,
    key: *const u8,
    key_len: usize,
    out: *mut *mut XtsCtx,
) -> Status {
    if key.is_null() || out.is_null() {
        return STATUS_INVALID_ARGUMENT;
    }
    let Some((entry, factory)) = table.get(cipher as usize).and_then(|e| Some((e, e.xts?))) else {
        return STATUS_UNKNOWN_CIPHER;
    };
    if key_len != 2 * entry.key_bytes as usize {
        return STATUS_BAD_KEY;
    }
    // SAFETY: the caller promises `key_len` readable bytes at `key`, non-null
    // as checked above; the slice does not outlive this call.
    let key = unsafe { core::slice::from_raw_parts(key, key_len) };
    match catch_unwind(AssertUnwindSafe(|| factory(key))) {
        Ok(ctx) => {
            let raw = Box::into_raw(Box::new(ctx)) as *mut XtsCtx;
            // SAFETY: `out` is non-null and writable per the contract.
            unsafe { out.write(raw) };
            STATUS_OK
        }
        Err(_) => STATUS_INTERNAL,
    }
}

/// Whether a cipher entry has a block factory (for the export macro).
pub const fn offers_block(factory: Option<BlockFactory>) -> bool {
    factory.is_some()
}

/// A raw block context: the cipher and its block size.
struct BlockKey {
    cipher: Box<dyn BlockCipher>,
    block_bytes: usize,
}

/// `block_new` for a backend whose ciphers are `table`.
///
/// # Safety
/// As [`xts_new`], with `key_len == key_bytes`.
pub unsafe fn block_new(
    table: &[CipherEntry],
    cipher: u32,
    key: *const u8,
    key_len: usize,
    out: *mut *mut BlockCtx,
) -> Status {
    if key.is_null() || out.is_null() {
        return STATUS_INVALID_ARGUMENT;
    }
    let Some((entry, factory)) = table.get(cipher as usize).and_then(|e| Some((e, e.block?)))
    else {
        return STATUS_UNKNOWN_CIPHER;
    };
    if key_len != entry.key_bytes as usize {
        return STATUS_BAD_KEY;
    }
    // SAFETY: the caller promises `key_len` readable bytes at `key`, non-null
    // as checked above; the slice does not outlive this call.
    let key = unsafe { core::slice::from_raw_parts(key, key_len) };
    match catch_unwind(AssertUnwindSafe(|| factory(key))) {
        Ok(cipher) => {
            let ctx = BlockKey {
                cipher,
                block_bytes: entry.block_bytes as usize,
            };
            let raw = Box::into_raw(Box::new(ctx)) as *mut BlockCtx;
            // SAFETY: `out` is non-null and writable per the contract.
            unsafe { out.write(raw) };
            STATUS_OK
        }
        Err(_) => STATUS_INTERNAL,
    }
}

/// `block_encrypt` / `block_decrypt`.
///
/// # Safety
/// `ctx` must come from [`block_new`] and not be freed; `data` must point
/// to `len` bytes that nothing else touches during the call.
pub unsafe fn block_crypt(
    ctx: *const BlockCtx,
    data: *mut u8,
    len: usize,
    encrypt: bool,
) -> Status {
    if ctx.is_null() {
        return STATUS_INVALID_ARGUMENT;
    }
    // SAFETY: a non-null context from `block_new` points to a live
    // `BlockKey`; the cipher is `Sync`.
    let key: &BlockKey = unsafe { &*(ctx as *const BlockKey) };
    if !len.is_multiple_of(key.block_bytes) {
        return STATUS_INVALID_ARGUMENT;
    }
    if len == 0 {
        return STATUS_OK;
    }
    if data.is_null() {
        return STATUS_INVALID_ARGUMENT;
    }
    // SAFETY: the caller gives exclusive access to `len` bytes at `data`.
    let data = unsafe { core::slice::from_raw_parts_mut(data, len) };
    let run = AssertUnwindSafe(|| {
        if encrypt {
            key.cipher.encrypt_blocks(data);
        } else {
            key.cipher.decrypt_blocks(data);
        }
    });
    match catch_unwind(run) {
        Ok(()) => STATUS_OK,
        Err(_) => STATUS_INTERNAL,
    }
}

/// `block_free`.
///
/// # Safety
/// `ctx` must come from [`block_new`] and not be used again, or be null.
pub unsafe fn block_free(ctx: *mut BlockCtx) {
    if ctx.is_null() {
        return;
    }
    // SAFETY: the pointer came from `Box::into_raw` in `block_new` and is
    // released once; dropping the cipher wipes its key schedule.
    let boxed: Box<BlockKey> = unsafe { Box::from_raw(ctx as *mut BlockKey) };
    let _ = catch_unwind(AssertUnwindSafe(move || drop(boxed)));
}

/// `xts_encrypt` / `xts_decrypt`.
///
/// # Safety
/// `ctx` must come from [`xts_new`] and not be freed; `data` must point to
/// `len` bytes that nothing else touches during the call.
pub unsafe fn xts_crypt(
    ctx: *const XtsCtx,
    data: *mut u8,
    len: usize,
    first_unit: u64,
    unit_size: u32,
    encrypt: bool,
) -> Status {
    let unit = unit_size as usize;
    if ctx.is_null() || unit == 0 || !unit.is_multiple_of(16) || !len.is_multiple_of(unit) {
        return STATUS_INVALID_ARGUMENT;
    }
    if len == 0 {
        return STATUS_OK;
    }
    if data.is_null() {
        return STATUS_INVALID_ARGUMENT;
    }
    let units = (len / unit) as u64;
    if first_unit.checked_add(units - 1).is_none() {
        return STATUS_INVALID_ARGUMENT;
    }
    // SAFETY: a non-null context from `xts_new` points to a live `Ctx`; the
    // cipher is `Sync`, so shared use from several threads is allowed.
    let cipher: &Ctx = unsafe { &*(ctx as *const Ctx) };
    // SAFETY: the caller gives exclusive access to `len` bytes at `data`.
    let data = unsafe { core::slice::from_raw_parts_mut(data, len) };
    let run = AssertUnwindSafe(|| {
        if encrypt {
            cipher.encrypt(data, first_unit, unit);
        } else {
            cipher.decrypt(data, first_unit, unit);
        }
    });
    match catch_unwind(run) {
        Ok(()) => STATUS_OK,
        Err(_) => STATUS_INTERNAL,
    }
}

/// `xts_path`: the context's code path, or null.
///
/// # Safety
/// `ctx` must come from [`xts_new`] and not be freed, or be null.
pub unsafe fn xts_path(ctx: *const XtsCtx) -> *const core::ffi::c_char {
    if ctx.is_null() {
        return core::ptr::null();
    }
    // SAFETY: a non-null context from `xts_new` points to a live `Ctx`.
    let cipher: &Ctx = unsafe { &*(ctx as *const Ctx) };
    match catch_unwind(AssertUnwindSafe(|| cipher.path())) {
        Ok(Some(name)) => name.as_ptr(),
        _ => core::ptr::null(),
    }
}

/// `xts_free`.
///
/// # Safety
/// `ctx` must come from [`xts_new`] and not be used again, or be null.
pub unsafe fn xts_free(ctx: *mut XtsCtx) {
    if ctx.is_null() {
        return;
    }
    // SAFETY: the pointer came from `Box::into_raw` in `xts_new` and is
    // released once; dropping the cipher wipes its key schedule.
    let boxed: Box<Ctx> = unsafe { Box::from_raw(ctx as *mut Ctx) };
    let _ = catch_unwind(AssertUnwindSafe(move || drop(boxed)));
}

/// Exports a backend: the `tcd_backend_entry` symbol, its descriptor and the
/// ABI shims. Use once, in the backend's `cdylib` crate:
///
/// ```ignore
/// tcd_backend_kit::export_backend! {
///     name: c"soft",
///     description: c"Portable software ciphers",
///     version: c"0.1.0",
///     flags: 0,
///     available: my_available,
///     ciphers: [
///         // name, key bytes, block bytes, XTS factory, block factory
///         (c"AES", 32, 16, Some(make_aes_xts), Some(make_aes)),
///         (c"Blowfish", 56, 8, None, Some(make_blowfish)),
///     ],
/// }
/// ```
#[macro_export]
macro_rules! export_backend {
    (
        name: $name:expr,
        description: $desc:expr,
        version: $ver:expr,
        flags: $flags:expr,
        available: $avail:path,
        ciphers: [ $( ($cname:expr, $key_bytes:expr, $block_bytes:expr, $xts:expr, $block:expr) ),* $(,)? ] $(,)?
    ) => {
        const _: () = {
            use $crate::abi as __abi;
            use $crate::export as __ex;

            static CIPHER_DESCS: &[__abi::CipherDesc] = &[
                $( __abi::CipherDesc { name: ($cname as &::core::ffi::CStr).as_ptr(), key_bytes: $key_bytes, block_bytes: $block_bytes }, )*
            ];
            static CIPHER_TABLE: &[__ex::CipherEntry] = &[
                $( __ex::CipherEntry { key_bytes: $key_bytes, block_bytes: $block_bytes, xts: $xts, block: $block }, )*
            ];
            // The block functions are offered when some cipher has them.
            const HAS_BLOCKS: bool = false $( || __ex::offers_block($block) )*;

            unsafe extern "C" fn __available() -> u32 {
                match ::std::panic::catch_unwind(|| $avail()) {
                    Ok(true) => 1,
                    _ => 0,
                }
            }
            unsafe extern "C" fn __xts_new(
                cipher: u32, key: *const u8, key_len: usize, out: *mut *mut __abi::XtsCtx,
            ) -> __abi::Status {
                // SAFETY: forwarded ABI contract, see `export::xts_new`.
                unsafe { __ex::xts_new(CIPHER_TABLE, cipher, key, key_len, out) }
            }
            unsafe extern "C" fn __xts_encrypt(
                ctx: *const __abi::XtsCtx, data: *mut u8, len: usize, first: u64, unit: u32,
            ) -> __abi::Status {
                // SAFETY: forwarded ABI contract, see `export::xts_crypt`.
                unsafe { __ex::xts_crypt(ctx, data, len, first, unit, true) }
            }
            unsafe extern "C" fn __xts_decrypt(
                ctx: *const __abi::XtsCtx, data: *mut u8, len: usize, first: u64, unit: u32,
            ) -> __abi::Status {
                // SAFETY: forwarded ABI contract, see `export::xts_crypt`.
                unsafe { __ex::xts_crypt(ctx, data, len, first, unit, false) }
            }
            unsafe extern "C" fn __xts_path(ctx: *const __abi::XtsCtx) -> *const ::core::ffi::c_char {
                // SAFETY: forwarded ABI contract, see `export::xts_path`.
                unsafe { __ex::xts_path(ctx) }
            }
            unsafe extern "C" fn __xts_free(ctx: *mut __abi::XtsCtx) {
                // SAFETY: forwarded ABI contract, see `export::xts_free`.
                unsafe { __ex::xts_free(ctx) }
            }
            unsafe extern "C" fn __block_new(
                cipher: u32, key: *const u8, key_len: usize, out: *mut *mut __abi::BlockCtx,
            ) -> __abi::Status {
                // SAFETY: forwarded ABI contract, see `export::block_new`.
                unsafe { __ex::block_new(CIPHER_TABLE, cipher, key, key_len, out) }
            }
            unsafe extern "C" fn __block_encrypt(
                ctx: *const __abi::BlockCtx, data: *mut u8, len: usize,
            ) -> __abi::Status {
                // SAFETY: forwarded ABI contract, see `export::block_crypt`.
                unsafe { __ex::block_crypt(ctx, data, len, true) }
            }
            unsafe extern "C" fn __block_decrypt(
                ctx: *const __abi::BlockCtx, data: *mut u8, len: usize,
            ) -> __abi::Status {
                // SAFETY: forwarded ABI contract, see `export::block_crypt`.
                unsafe { __ex::block_crypt(ctx, data, len, false) }
            }
            unsafe extern "C" fn __block_free(ctx: *mut __abi::BlockCtx) {
                // SAFETY: forwarded ABI contract, see `export::block_free`.
                unsafe { __ex::block_free(ctx) }
            }

            static DESC: __abi::BackendDesc = __abi::BackendDesc {
                abi_version: __abi::ABI_VERSION,
                struct_size: ::core::mem::size_of::<__abi::BackendDesc>() as u32,
                name: ($name as &::core::ffi::CStr).as_ptr(),
                description: ($desc as &::core::ffi::CStr).as_ptr(),
                version: ($ver as &::core::ffi::CStr).as_ptr(),
                flags: $flags,
                cipher_count: CIPHER_DESCS.len() as u32,
                ciphers: CIPHER_DESCS.as_ptr(),
                available: Some(__available),
                xts_new: Some(__xts_new),
                xts_encrypt: Some(__xts_encrypt),
                xts_decrypt: Some(__xts_decrypt),
                xts_free: Some(__xts_free),
                xts_path: Some(__xts_path),
                block_new: if HAS_BLOCKS { Some(__block_new) } else { None },
                block_encrypt: if HAS_BLOCKS { Some(__block_encrypt) } else { None },
                block_decrypt: if HAS_BLOCKS { Some(__block_decrypt) } else { None },
                block_free: if HAS_BLOCKS { Some(__block_free) } else { None },
                reserved: [::core::ptr::null(); 4],
            };

            // SAFETY: the one exported symbol of a backend; its name is the
            // ABI's entry point and no other crate in a backend defines it.
            #[unsafe(no_mangle)]
            pub extern "C" fn tcd_backend_entry() -> *const __abi::BackendDesc {
                &DESC
            }
        };
    };
}
