//! The application: every operation of the daemon (mount, dismount,
//! create, header maintenance, policy, favorites, benchmark) in terms of
//! callers, files and the contract's types. It knows nothing of D-Bus: the
//! service decodes a call, asks polkit, calls here, and encodes the answer;
//! the daemon's own automatic work (system favorites, automatic dismounts)
//! calls here too.
//!
//! Operations that search for a key or touch a device block; the service
//! runs them off its executor.

pub mod backends;
pub mod benchmark;
pub mod create;
pub mod expand;
pub mod favorites;
pub mod headers;
pub mod input;
pub mod mount;
pub mod selftest;
pub mod volumes;

use crate::backends::Backends;
use crate::cache::PasswordCache;
use crate::favorites::Favorites;
use crate::mounts::MountTable;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

/// Who asks: a user (the service identified them), or the daemon itself
/// acting for a favorite's owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    pub uid: u32,
    pub gid: u32,
}

impl Caller {
    /// The daemon's own work, as root.
    pub const DAEMON: Caller = Caller { uid: 0, gid: 0 };

    /// Root, to whom the policy's bounds on users do not apply.
    pub fn is_root(&self) -> bool {
        self.uid == 0
    }
}

/// The daemon's state: mounted volumes, backends and policy, favorites,
/// the password cache.
pub struct App {
    pub table: MountTable,
    pub backends: Backends,
    pub favorites: Favorites,
    /// Passwords users asked to have cached (off unless asked).
    pub cache: PasswordCache,
    /// Where the daemon keeps its runtime folders (FUSE mounts).
    pub runtime: PathBuf,
    /// System favorites the daemon is mounting now (one attempt each).
    mounting: Mutex<Vec<String>>,
    /// A benchmark is running (one at a time: it takes every core).
    benchmark_running: AtomicBool,
}

impl App {
    pub fn new(table: MountTable, backends: Backends, favorites: Favorites, runtime: &Path) -> App {
        App {
            table,
            backends,
            favorites,
            cache: PasswordCache::default(),
            runtime: runtime.to_path_buf(),
            mounting: Mutex::new(Vec::new()),
            benchmark_running: AtomicBool::new(false),
        }
    }
}
