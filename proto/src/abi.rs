//! The cipher-backend C ABI, version 2.
//!
//! Version 2 adds raw block-cipher (ECB) entry points and ciphers with
//! 8-byte blocks, in the slots version 1 left reserved (zero), so a
//! version-1 backend still loads: it simply offers no block functions. The
//! daemon builds TrueCrypt's legacy modes (LRW, CBC) from these.
//!
//! A backend is a shared library exporting one symbol, [`ENTRY_SYMBOL`], a
//! function that takes nothing and returns a pointer to a static
//! [`BackendDesc`]. The first field of every version of the descriptor is
//! `abi_version`, so a loader can always read it and refuse a library built
//! for another version before touching anything else.
//!
//! The C header `include/tcd_backend.h` declares the same layout; keep both in
//! step (a test compiles a C backend against the header and loads it).
//!
//! Contract for a backend, in addition to the field documentation below:
//! - Every function may be called from any thread; `xts_encrypt` and
//!   `xts_decrypt` may run concurrently on the same context.
//! - No function unwinds or aborts on bad arguments: it returns a status.
//! - `xts_free` and `block_free` wipe the key schedule before releasing
//!   the context.
//! - `block_encrypt` and `block_decrypt` may run concurrently on one context.
//! - Nothing is called (other than `available`) when `available` says no.

use core::ffi::{c_char, c_void};

/// The version of this ABI. A loader accepts it and [`ABI_VERSION_1`].
pub const ABI_VERSION: u32 = 2;

/// The first version: XTS only. Its descriptor ends where
/// `block_free` starts ([`V1_DESC_BYTES`]); the loader reads nothing of a
/// version-1 descriptor past that, and offers none of its block functions.
pub const ABI_VERSION_1: u32 = 1;

/// `struct_size` of a version-1 descriptor (LP64).
pub const V1_DESC_BYTES: usize = 120;

/// The exported entry point, `const struct tcd_backend *tcd_backend_entry(void)`.
pub const ENTRY_SYMBOL: &str = "tcd_backend_entry";

/// `BackendDesc::flags`: the backend uses processor crypto instructions
/// (AES-NI, VAES, PCLMULQDQ, ...). The software-only policy keys on this.
pub const FLAG_CPU_CRYPTO: u32 = 1 << 0;

/// Function results.
pub type Status = i32;
pub const STATUS_OK: Status = 0;
/// A length, unit size, pointer or unit range the contract does not allow.
pub const STATUS_INVALID_ARGUMENT: Status = 1;
/// The cipher index is out of range.
pub const STATUS_UNKNOWN_CIPHER: Status = 2;
/// The key has the wrong length or is unusable.
pub const STATUS_BAD_KEY: Status = 3;
/// The backend cannot run on this processor.
pub const STATUS_UNAVAILABLE: Status = 4;
/// A bug inside the backend (in Rust backends: a caught panic).
pub const STATUS_INTERNAL: Status = 5;

/// One cipher a backend provides.
#[repr(C)]
#[derive(Debug)]
pub struct CipherDesc {
    /// NUL-terminated name as TrueCrypt writes it: `AES`, `Twofish`, `Serpent`, ...
    pub name: *const c_char,
    /// Bytes of one cipher key. An XTS context takes two: primary then tweak key.
    pub key_bytes: u32,
    /// Block size in bytes: 16, or (version 2) 8 for a cipher that only
    /// the block functions serve (Blowfish, CAST5, Triple DES): `xts_new`
    /// refuses it.
    pub block_bytes: u32,
}

/// An XTS context, opaque to the loader.
#[repr(C)]
pub struct XtsCtx {
    _private: [u8; 0],
}

/// A raw block-cipher context (version 2), opaque to the loader.
#[repr(C)]
pub struct BlockCtx {
    _private: [u8; 0],
}

/// `available()`: nonzero when this processor can run the backend.
pub type AvailableFn = unsafe extern "C" fn() -> u32;

/// `xts_new(cipher, key, key_len, out)`: make a context for cipher number
/// `cipher` (an index into `ciphers`) from `key_len == 2 * key_bytes` bytes,
/// the primary key followed by the tweak key. On success `*out` holds the
/// context; the caller's key buffer is not retained.
pub type XtsNewFn = unsafe extern "C" fn(
    cipher: u32,
    key: *const u8,
    key_len: usize,
    out: *mut *mut XtsCtx,
) -> Status;

/// `xts_encrypt(ctx, data, len, first_unit, unit_size)` and `xts_decrypt`:
/// transform `len` bytes in place, a run of consecutive data units of
/// `unit_size` bytes each, the first numbered `first_unit`. `unit_size` is a
/// nonzero multiple of the block size and `len` a multiple of `unit_size`;
/// the unit numbers must not pass `u64::MAX`. The tweak of unit `n` is the
/// tweak key's encryption of `n` as a 128-bit little-endian number
/// (IEEE 1619, as TrueCrypt and VeraCrypt use it).
pub type XtsCryptFn = unsafe extern "C" fn(
    ctx: *const XtsCtx,
    data: *mut u8,
    len: usize,
    first_unit: u64,
    unit_size: u32,
) -> Status;

/// `xts_free(ctx)`: wipe and release a context. Null is ignored.
pub type XtsFreeFn = unsafe extern "C" fn(ctx: *mut XtsCtx);

/// `xts_path(ctx)`: the code path the context runs, chosen at key setup, as
/// a short NUL-terminated static name for people (`VAES-512`, `AVX2`,
/// `SSE2`, `portable`, ...), or null when the backend does not say.
/// Optional: a backend built before it has the slot zero, and the loader
/// then reports no path.
pub type XtsPathFn = unsafe extern "C" fn(ctx: *const XtsCtx) -> *const c_char;

/// `block_new(cipher, key, key_len, out)` (version 2): a raw block-cipher
/// context for cipher number `cipher` from `key_len == key_bytes` bytes of
/// key. The caller's key buffer is not retained.
pub type BlockNewFn = unsafe extern "C" fn(
    cipher: u32,
    key: *const u8,
    key_len: usize,
    out: *mut *mut BlockCtx,
) -> Status;

/// `block_encrypt(ctx, data, len)` and `block_decrypt` (version 2):
/// encrypt (decrypt) `len` bytes in place as independent blocks (ECB);
/// `len` is a multiple of the cipher's block size.
pub type BlockCryptFn =
    unsafe extern "C" fn(ctx: *const BlockCtx, data: *mut u8, len: usize) -> Status;

/// `block_free(ctx)` (version 2): wipe and release a context. Null is ignored.
pub type BlockFreeFn = unsafe extern "C" fn(ctx: *mut BlockCtx);

/// What `tcd_backend_entry` returns; lives as long as the library is loaded.
#[repr(C)]
#[derive(Debug)]
pub struct BackendDesc {
    /// Always first, in every version: [`ABI_VERSION`].
    pub abi_version: u32,
    /// `sizeof(struct tcd_backend)` as the backend was built.
    pub struct_size: u32,
    /// Short name, NUL-terminated: `aesni`, `soft`, ...
    pub name: *const c_char,
    /// One line for people.
    pub description: *const c_char,
    /// The backend's own version.
    pub version: *const c_char,
    /// [`FLAG_CPU_CRYPTO`] and future flags.
    pub flags: u32,
    /// Entries in `ciphers`.
    pub cipher_count: u32,
    pub ciphers: *const CipherDesc,
    pub available: Option<AvailableFn>,
    pub xts_new: Option<XtsNewFn>,
    pub xts_encrypt: Option<XtsCryptFn>,
    pub xts_decrypt: Option<XtsCryptFn>,
    pub xts_free: Option<XtsFreeFn>,
    /// Optional (null: the path is not told); in the first reserved slot,
    /// so version 1 keeps its layout.
    pub xts_path: Option<XtsPathFn>,
    /// Version 2, optional as a group (all four or none): raw block
    /// ciphers. The first three sit where version 1 had reserved zeros.
    pub block_new: Option<BlockNewFn>,
    pub block_encrypt: Option<BlockCryptFn>,
    pub block_decrypt: Option<BlockCryptFn>,
    pub block_free: Option<BlockFreeFn>,
    /// Reserved for later versions; zero.
    pub reserved: [*const c_void; 4],
}

/// The type of the entry point.
pub type EntryFn = unsafe extern "C" fn() -> *const BackendDesc;

// SAFETY: a descriptor is immutable static data (pointers to static strings
// and functions) once the library is loaded; sharing it between threads reads
// only.
unsafe impl Sync for BackendDesc {}
// SAFETY: as above, the cipher table is immutable static data.
unsafe impl Sync for CipherDesc {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_layout_matches_the_c_header() {
        // The header states these sizes and offsets for LP64.
        assert_eq!(core::mem::size_of::<CipherDesc>(), 16);
        assert_eq!(core::mem::offset_of!(BackendDesc, abi_version), 0);
        assert_eq!(core::mem::offset_of!(BackendDesc, name), 8);
        assert_eq!(core::mem::offset_of!(BackendDesc, flags), 32);
        assert_eq!(core::mem::offset_of!(BackendDesc, ciphers), 40);
        assert_eq!(core::mem::offset_of!(BackendDesc, available), 48);
        assert_eq!(core::mem::offset_of!(BackendDesc, xts_free), 80);
        assert_eq!(core::mem::offset_of!(BackendDesc, xts_path), 88);
        assert_eq!(core::mem::offset_of!(BackendDesc, block_new), 96);
        assert_eq!(
            core::mem::offset_of!(BackendDesc, block_free),
            V1_DESC_BYTES
        );
        assert_eq!(core::mem::size_of::<BackendDesc>(), 160);
    }
}
