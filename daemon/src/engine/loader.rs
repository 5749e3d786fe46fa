//! Loading a backend library: trust checks, then the C ABI handshake.
//!
//! Loading a library runs its code with the daemon's rights (root), so a
//! backend is loaded only from a file owned by root (or by the daemon's own
//! user, for development) that no one else can write, in folders no one else
//! can write. The file is opened once with `O_NOFOLLOW`, checked through that
//! descriptor, and `dlopen`ed through `/proc/self/fd`, so it cannot be swapped
//! between check and load.

use crate::error::{BackendProblem, Error, Result};
use crate::trust::{check_folder, check_meta};
use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW, Symbol};
use std::collections::BTreeMap;
use std::ffi::CStr;
use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use tcd_proto::abi::{self, BackendDesc, BlockCtx, CipherDesc, Status, XtsCtx};

/// A cipher as a backend describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CipherInfo {
    pub name: String,
    pub key_bytes: usize,
    /// 16, or 8 for a cipher only the block functions serve.
    pub block_bytes: usize,
}

impl CipherInfo {
    /// Whether `xts_new` serves it (every 16-byte-block cipher).
    pub fn has_xts(&self) -> bool {
        self.block_bytes == 16
    }
}

/// What a backend says about itself.
#[derive(Debug, Clone)]
pub struct BackendInfo {
    pub name: String,
    pub description: String,
    pub version: String,
    pub uses_cpu_crypto: bool,
    pub available: bool,
    pub ciphers: Vec<CipherInfo>,
    pub path: PathBuf,
    /// The ABI version it was built for (1 or 2).
    pub abi_version: u32,
    /// It offers raw block ciphers (version 2's block functions).
    pub has_blocks: bool,
}

/// The functions of a validated descriptor.
#[derive(Clone, Copy)]
pub(crate) struct Functions {
    pub new: abi::XtsNewFn,
    pub encrypt: abi::XtsCryptFn,
    pub decrypt: abi::XtsCryptFn,
    pub free: abi::XtsFreeFn,
    /// Optional in version 1.
    pub path: Option<abi::XtsPathFn>,
    /// Version 2's raw block ciphers, when offered.
    pub block: Option<BlockFunctions>,
}

/// The block functions of a version-2 descriptor.
#[derive(Clone, Copy)]
pub(crate) struct BlockFunctions {
    pub new: abi::BlockNewFn,
    pub encrypt: abi::BlockCryptFn,
    pub decrypt: abi::BlockCryptFn,
    pub free: abi::BlockFreeFn,
}

/// A loaded backend library. Contexts made from it keep it loaded.
pub struct LoadedBackend {
    pub info: BackendInfo,
    pub(crate) fns: Functions,
    // Dropped after everything above: unloading while a function pointer is
    // in use would crash.
    _lib: Library,
    // Held so that N in the `/proc/self/fd/N` name the library was loaded
    // under (see `fd_path`) is not reused while it lives.
    _file: File,
}

impl std::fmt::Debug for LoadedBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedBackend")
            .field("info", &self.info)
            .finish()
    }
}

fn problem(path: &Path, problem: BackendProblem) -> Error {
    Error::Backend {
        path: path.to_path_buf(),
        problem,
    }
}

/// Reads a NUL-terminated UTF-8 string of at most `max` bytes.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string that stays alive while
/// the library is loaded.
unsafe fn read_str(
    p: *const core::ffi::c_char,
    what: &str,
    max: usize,
) -> std::result::Result<String, BackendProblem> {
    if p.is_null() {
        return Err(BackendProblem::Malformed(format!("{what} is null")));
    }
    // SAFETY: non-null, NUL-terminated per the ABI contract (caller's promise).
    let s = unsafe { CStr::from_ptr(p) };
    let s = s
        .to_str()
        .map_err(|_| BackendProblem::Malformed(format!("{what} is not UTF-8")))?;
    if s.is_empty() || s.len() > max || s.chars().any(char::is_control) {
        return Err(BackendProblem::Malformed(format!(
            "{what} is empty, too long or has control characters"
        )));
    }
    Ok(s.to_owned())
}

/// A name for the library behind descriptor `fd` that the dynamic linker has
/// never seen. It matches libraries by name before anything else, and a
/// library it keeps resident after `dlclose` (thread-local destructors do
/// that) would otherwise be handed back for a different file that later got
/// the same descriptor number. Each reuse of a number adds one `./`, which
/// the kernel resolves to the same file.
fn fd_path(fd: std::os::fd::RawFd) -> PathBuf {
    static USES: std::sync::Mutex<BTreeMap<std::os::fd::RawFd, usize>> =
        std::sync::Mutex::new(BTreeMap::new());
    let mut uses = USES.lock().unwrap_or_else(|e| e.into_inner());
    let n = uses.entry(fd).or_insert(0);
    let path = format!("/proc/self/fd/{}{fd}", "./".repeat(*n));
    *n += 1;
    PathBuf::from(path)
}

/// Loads and validates the backend at `path`.
pub fn load(path: &Path) -> Result<LoadedBackend> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        check_folder(dir)?;
    }
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| problem(path, BackendProblem::Open(e.to_string())))?;
    let meta = file
        .metadata()
        .map_err(|e| problem(path, BackendProblem::Open(e.to_string())))?;
    if !meta.is_file() {
        return Err(problem(path, BackendProblem::NotAFile));
    }
    check_meta(&meta).map_err(|p| problem(path, p))?;
    super::elf::check(&file).map_err(|p| problem(path, p))?;

    let via_fd = fd_path(std::os::fd::AsRawFd::as_raw_fd(&file));
    // SAFETY: loading a shared library runs its initialisers; the file passed
    // the ownership and permission checks above through this very descriptor,
    // which is the trust decision the ABI contract rests on.
    let lib = unsafe { Library::open(Some(&via_fd), RTLD_NOW | RTLD_LOCAL) }
        .map_err(|e| problem(path, BackendProblem::NotALibrary(e.to_string())))?;

    // SAFETY: the symbol's type is the ABI's entry point type; a library that
    // exports the name with another type breaks the ABI contract it claims.
    let entry: Symbol<abi::EntryFn> = unsafe { lib.get(abi::ENTRY_SYMBOL.as_bytes()) }
        .map_err(|_| problem(path, BackendProblem::NoEntry))?;
    // SAFETY: calling the entry point as the ABI defines it.
    let desc_ptr = unsafe { entry() };
    if desc_ptr.is_null() || !desc_ptr.is_aligned() {
        return Err(problem(path, BackendProblem::NullDescriptor));
    }
    // SAFETY: every ABI version starts with the u32 version field, so this
    // read is valid whatever version the library was built for.
    let found = unsafe { (desc_ptr as *const u32).read() };
    let desc = read_descriptor(desc_ptr, found).map_err(|p| problem(path, p))?;
    let desc = &desc;
    let info_and_fns = validate(desc, path).map_err(|p| problem(path, p))?;
    let (mut info, fns, available) = info_and_fns;
    // SAFETY: `available` is the ABI's capability probe, callable always.
    info.available = unsafe { available() } != 0;
    Ok(LoadedBackend {
        info,
        fns,
        _lib: lib,
        _file: file,
    })
}

/// Copies the descriptor of ABI version `version` out of the library:
/// as much of it as that version has, the rest zero (so a version-1
/// descriptor, which ends before `block_free`, offers no block functions).
fn read_descriptor(
    desc_ptr: *const BackendDesc,
    version: u32,
) -> std::result::Result<BackendDesc, BackendProblem> {
    let known = match version {
        abi::ABI_VERSION => std::mem::size_of::<BackendDesc>(),
        // Version 1's reserved slots (zero) are where the block functions
        // now are: they are not read at all.
        abi::ABI_VERSION_1 => std::mem::offset_of!(BackendDesc, block_new),
        found => {
            return Err(BackendProblem::AbiVersion {
                found,
                expected: abi::ABI_VERSION,
            });
        }
    };
    let needed = match version {
        abi::ABI_VERSION_1 => abi::V1_DESC_BYTES,
        _ => known,
    };
    // SAFETY: every version has `struct_size` second, after the version.
    let size = unsafe { (desc_ptr as *const u32).add(1).read() } as usize;
    if size < needed {
        return Err(BackendProblem::Malformed(format!(
            "descriptor of {size} bytes"
        )));
    }
    // SAFETY: all-zero bytes are a valid descriptor (null pointers, `None`
    // functions, zero numbers).
    let mut desc: BackendDesc = unsafe { std::mem::zeroed() };
    // SAFETY: the library's descriptor is static data of at least `size >=
    // known` bytes (its version's layout), alive while the library is; the
    // copy covers only those bytes of the local value.
    unsafe {
        std::ptr::copy_nonoverlapping(
            desc_ptr as *const u8,
            (&mut desc as *mut BackendDesc) as *mut u8,
            known,
        )
    };
    Ok(desc)
}

fn validate(
    desc: &BackendDesc,
    path: &Path,
) -> std::result::Result<(BackendInfo, Functions, abi::AvailableFn), BackendProblem> {
    // SAFETY: string pointers of a version-1 descriptor, static in the
    // library while it is loaded; null is handled by `read_str`.
    let name = unsafe { read_str(desc.name, "name", 64) }?;
    // SAFETY: as for the name.
    let description = unsafe { read_str(desc.description, "description", 512) }?;
    // SAFETY: as for the name.
    let version = unsafe { read_str(desc.version, "version", 64) }?;
    if desc.flags & !abi::FLAG_CPU_CRYPTO != 0 {
        return Err(BackendProblem::Malformed(format!(
            "unknown flags {:#x}",
            desc.flags
        )));
    }
    let blocks = block_functions(desc)?;
    let count = desc.cipher_count as usize;
    if count == 0 || count > 64 || desc.ciphers.is_null() || !desc.ciphers.is_aligned() {
        return Err(BackendProblem::Malformed(format!(
            "cipher table of {count} entries"
        )));
    }
    // SAFETY: non-null, aligned, `count` entries per the ABI.
    let table: &[CipherDesc] = unsafe { std::slice::from_raw_parts(desc.ciphers, count) };
    let mut ciphers = Vec::with_capacity(count);
    for c in table {
        // SAFETY: as for the names above.
        let cname = unsafe { read_str(c.name, "cipher name", 64) }?;
        // 8-byte blocks only where the block functions can serve them.
        let block_ok = c.block_bytes == 16 || (c.block_bytes == 8 && blocks.is_some());
        if !(16..=64).contains(&c.key_bytes) || !block_ok {
            return Err(BackendProblem::Malformed(format!(
                "cipher {cname}: key {} bytes, block {} bytes",
                c.key_bytes, c.block_bytes
            )));
        }
        ciphers.push(CipherInfo {
            name: cname,
            key_bytes: c.key_bytes as usize,
            block_bytes: c.block_bytes as usize,
        });
    }
    let missing = |f: &str| BackendProblem::Malformed(format!("function {f} missing"));
    let available = desc.available.ok_or_else(|| missing("available"))?;
    let fns = Functions {
        new: desc.xts_new.ok_or_else(|| missing("xts_new"))?,
        encrypt: desc.xts_encrypt.ok_or_else(|| missing("xts_encrypt"))?,
        decrypt: desc.xts_decrypt.ok_or_else(|| missing("xts_decrypt"))?,
        free: desc.xts_free.ok_or_else(|| missing("xts_free"))?,
        path: desc.xts_path,
        block: blocks,
    };
    let info = BackendInfo {
        name,
        description,
        version,
        uses_cpu_crypto: desc.flags & abi::FLAG_CPU_CRYPTO != 0,
        available: false,
        ciphers,
        path: path.to_path_buf(),
        abi_version: desc.abi_version,
        has_blocks: blocks.is_some(),
    };
    Ok((info, fns, available))
}

/// Version 2's block functions: all four, or none.
fn block_functions(
    desc: &BackendDesc,
) -> std::result::Result<Option<BlockFunctions>, BackendProblem> {
    match (
        desc.block_new,
        desc.block_encrypt,
        desc.block_decrypt,
        desc.block_free,
    ) {
        (Some(new), Some(encrypt), Some(decrypt), Some(free)) => Ok(Some(BlockFunctions {
            new,
            encrypt,
            decrypt,
            free,
        })),
        (None, None, None, None) => Ok(None),
        _ => Err(BackendProblem::Malformed(
            "block functions: some of block_new, block_encrypt, block_decrypt, block_free \
             missing"
                .into(),
        )),
    }
}

/// Calls a backend's `block_new`.
pub(crate) fn new_block_context(
    b: &LoadedBackend,
    index: usize,
    key: &[u8],
) -> std::result::Result<*mut BlockCtx, Status> {
    let f = b.fns.block.ok_or(abi::STATUS_UNKNOWN_CIPHER)?;
    let mut out: *mut BlockCtx = std::ptr::null_mut();
    // SAFETY: `index` is within the validated table, `key` is a live slice,
    // `out` a local; the backend is available (checked by the caller).
    let st = unsafe { (f.new)(index as u32, key.as_ptr(), key.len(), &mut out) };
    if st != abi::STATUS_OK {
        return Err(st);
    }
    if out.is_null() {
        return Err(abi::STATUS_INTERNAL);
    }
    Ok(out)
}

/// Calls a backend's `xts_path`: the code path of `ctx`, if it says.
pub(crate) fn context_path(b: &LoadedBackend, ctx: *const XtsCtx) -> Option<String> {
    let f = b.fns.path?;
    // SAFETY: a live context of this backend (the caller's promise); the
    // result is null or a static string of the loaded library.
    let name = unsafe { f(ctx) };
    // SAFETY: as above; `read_str` bounds and checks it.
    unsafe { read_str(name, "path", 32) }.ok()
}

/// Calls a backend's `xts_new`.
pub(crate) fn new_context(
    b: &LoadedBackend,
    index: usize,
    key: &[u8],
) -> std::result::Result<*mut XtsCtx, Status> {
    let mut out: *mut XtsCtx = std::ptr::null_mut();
    // SAFETY: `index` is within the validated table, `key` is a live slice,
    // `out` a local; the backend is available (checked by the caller).
    let st = unsafe { (b.fns.new)(index as u32, key.as_ptr(), key.len(), &mut out) };
    if st != abi::STATUS_OK {
        return Err(st);
    }
    if out.is_null() {
        return Err(abi::STATUS_INTERNAL);
    }
    Ok(out)
}
