//! Which files the daemon trusts to decide what runs with its rights: a
//! backend library, every folder above it, and the policy file must be
//! owned by root (or by the daemon's own user, for development) and
//! writable by no one else. A leaf both the engine (before loading a
//! backend) and the policy (before reading its file) use.

use crate::error::{BackendProblem, Error, Result};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Owners trusted for backend files: root, and the daemon's own user (so a
/// developer's unprivileged daemon can load the build's output).
fn trusted_owner(uid: u32) -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    uid == 0 || uid == unsafe { libc::geteuid() }
}

/// Whether a backend file, a folder above it or the policy file is owned
/// by a trusted user and writable by no one else.
pub fn check_meta(meta: &std::fs::Metadata) -> std::result::Result<(), BackendProblem> {
    if !trusted_owner(meta.uid()) {
        return Err(BackendProblem::NotRootOwned(meta.uid()));
    }
    let mode = meta.mode();
    let sticky_dir = meta.is_dir() && mode & libc::S_ISVTX != 0;
    // A sticky folder (like /tmp) lets others add entries but not replace
    // ours; anything else writable by group or others is refused.
    if mode & 0o022 != 0 && !sticky_dir {
        return Err(BackendProblem::Writable(mode & 0o7777));
    }
    Ok(())
}

/// Checks a folder backends are loaded from, and every folder above it.
pub fn check_folder(dir: &Path) -> Result<()> {
    let canon = dir.canonicalize().map_err(|e| Error::BackendDir {
        path: dir.to_path_buf(),
        problem: BackendProblem::Open(e.to_string()),
    })?;
    for anc in canon.ancestors() {
        let meta = std::fs::metadata(anc).map_err(|e| Error::BackendDir {
            path: anc.to_path_buf(),
            problem: BackendProblem::Open(e.to_string()),
        })?;
        check_meta(&meta).map_err(|p| Error::BackendDir {
            path: anc.to_path_buf(),
            problem: p,
        })?;
    }
    Ok(())
}
