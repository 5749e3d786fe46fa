//! Bounds on what callers send, checked before any work: a caller cannot
//! make the daemon carry a huge string, read a pipe, or take a directory
//! for a volume.

use crate::error::{Error, Result};
use std::fs::File;
use tcd_proto::contract::{Secret, SecretList};

/// Longest string argument or option the daemon takes (a path or a name);
/// longer ones are refused rather than carried around.
pub const MAX_STRING: usize = 4096;
/// Keyfiles per call, and bytes of each (TrueCrypt reads the first MiB).
pub const MAX_KEYFILES: usize = 256;
pub const MAX_KEYFILE_BYTES: usize = 1 << 20;
/// A password, as a string option is bounded.
pub const MAX_PASSWORD_BYTES: usize = MAX_STRING;

fn bad(what: String) -> Error {
    Error::InvalidArgument(what)
}

/// Refuses a string longer than [`MAX_STRING`].
pub fn bounded(what: &str, s: &str) -> Result<()> {
    if s.len() > MAX_STRING {
        return Err(bad(format!(
            "{what} of {} bytes (at most {MAX_STRING})",
            s.len()
        )));
    }
    Ok(())
}

/// Refuses more keyfiles, or larger ones, than a client sends.
pub fn bounded_keyfiles(what: &str, k: &SecretList) -> Result<()> {
    if k.0.len() > MAX_KEYFILES || k.0.iter().any(|f| f.0.len() > MAX_KEYFILE_BYTES) {
        return Err(bad(format!(
            "{what}: at most {MAX_KEYFILES} keyfiles of at most 1 MiB each"
        )));
    }
    Ok(())
}

/// Refuses a password option longer than any password.
pub fn bounded_secret(what: &str, s: &Secret) -> Result<()> {
    if s.0.len() > MAX_PASSWORD_BYTES {
        return Err(bad(format!(
            "{what} of {} bytes (at most {MAX_PASSWORD_BYTES})",
            s.0.len()
        )));
    }
    Ok(())
}

/// A detached header file: one header at least, both slots at most.
pub const DETACHED_HEADER_BYTES: std::ops::RangeInclusive<usize> = 512..=131072;

/// Every string of a set of search options, bounded.
pub fn bounded_search(s: &tcd_proto::contract::SearchOptions) -> Result<()> {
    if let Some(h) = &s.detached_header
        && !DETACHED_HEADER_BYTES.contains(&h.0.len())
    {
        return Err(bad(format!(
            "option detached_header: a header file holds 512 bytes to 128 KiB, not {} bytes",
            h.0.len()
        )));
    }
    for (what, v) in [
        ("option hash", &s.hash),
        ("option encryption", &s.encryption),
        ("option backend", &s.backend),
    ] {
        if let Some(v) = v {
            bounded(what, v)?;
        }
    }
    Ok(())
}

/// The caller's descriptor of a container: a regular file or a block
/// device, nothing else (a directory, pipe or socket is refused by name).
pub fn host_file(fd: std::os::fd::OwnedFd) -> Result<File> {
    use std::os::unix::fs::FileTypeExt;
    let file = File::from(fd);
    let kind = file
        .metadata()
        .map_err(|e| bad(format!("the descriptor cannot be inspected: {e}")))?
        .file_type();
    let what = if kind.is_file() || kind.is_block_device() {
        return Ok(file);
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a pipe"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else {
        "not a file"
    };
    Err(bad(format!(
        "the descriptor is {what}, not a container file or block device"
    )))
}

/// A second descriptor of the same open file.
pub fn dup(f: &File) -> Result<File> {
    f.try_clone().map_err(|e| Error::Io {
        what: "cannot use the volume's descriptor".into(),
        source: e,
    })
}

/// A call that writes the volume writes it through the descriptor the
/// caller handed: one opened read-only (a file they may read but not
/// write) is refused before any search, `doing` naming the write.
pub fn refuse_read_only(host: &File, doing: &str) -> Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: F_GETFL reads the flags of a descriptor this File owns and
    // keeps open for the duration of the call; it touches no memory.
    let flags = unsafe { libc::fcntl(host.as_raw_fd(), libc::F_GETFL) };
    if flags < 0 || flags & libc::O_ACCMODE == libc::O_RDONLY {
        return Err(Error::PermissionDenied(format!(
            "the volume was handed read-only: {doing} needs the right to write it"
        )));
    }
    Ok(())
}
