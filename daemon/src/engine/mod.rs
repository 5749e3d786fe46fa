//! The cipher engine: backends loaded from shared libraries, chosen per
//! cipher by preference, combined into cascades, and run across cores.
//!
//! Like rustls' `CryptoProvider`, an [`Engine`] is a value built at start-up
//! from the backends the policy allows; nothing here is global.

pub(crate) mod backend_set;
pub mod catalog;
pub mod chain;
pub(crate) mod context;
mod elf;
pub mod legacy;
pub mod loader;
pub(crate) mod trials;
pub(crate) mod volume_cipher;

pub use backend_set::BackendSet;
pub use chain::Chain;
pub use context::{BlockKey, XtsKey};
pub use loader::{BackendInfo, CipherInfo, LoadedBackend};
pub use volume_cipher::VolumeCipher;

use crate::error::{Error, Result};
use std::path::Path;
use std::sync::{Arc, RwLock};
use zeroize::Zeroizing;

/// Loads every `libtcd_backend_*.so` in `dir`, in name order. Broken ones are
/// returned as errors beside the good ones, so the caller can log and go on.
/// (The daemon goes through [`catalog::Catalog`] instead, which loads only
/// what its policy allows.)
pub fn load_dir(dir: &Path) -> Result<(Vec<LoadedBackend>, Vec<Error>)> {
    let paths = catalog::backend_files(dir)?;
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for p in paths {
        match loader::load(&p) {
            Ok(b) => good.push(b),
            Err(e) => bad.push(e),
        }
    }
    Ok((good, bad))
}

/// The set of backends a daemon uses (a value swapped whole on a policy
/// change), and apart from it the thread pool that runs large requests and
/// the permits header-search trials run under.
pub struct Engine {
    /// Replaced as a whole when the policy changes; readers take a
    /// snapshot (the lock is held only to clone the `Arc`), and volumes
    /// keyed before keep their own references until re-keyed or dismounted.
    backends: RwLock<Arc<BackendSet>>,
    /// Threads a parallel job uses (one per core unless told).
    threads: usize,
    /// One thread fewer, for splitting a caller's request: the caller takes
    /// a piece itself, so every core works and none is left spinning idle.
    helpers: Arc<rayon::ThreadPool>,
    /// One permit per core for header-search trials, shared fairly among
    /// callers.
    trials: trials::Trials,
}

impl Engine {
    /// An engine over `backends`, preferred in the given order, with
    /// `threads` worker threads (0: one per core).
    pub fn new(backends: Vec<LoadedBackend>, threads: usize) -> Result<Engine> {
        Self::with_shared(backends.into_iter().map(Arc::new).collect(), threads)
    }

    /// As [`Engine::new`] over backends that may already be in use elsewhere.
    pub fn with_shared(backends: Vec<Arc<LoadedBackend>>, threads: usize) -> Result<Engine> {
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let helpers = rayon::ThreadPoolBuilder::new()
            .num_threads(threads.saturating_sub(1).max(1))
            .thread_name(|i| format!("tcd-crypt-{i}"))
            .build()
            .map_err(|e| Error::ThreadPool(e.to_string()))?;
        Ok(Engine {
            backends: RwLock::new(Arc::new(BackendSet::new(backends))),
            trials: trials::Trials::new(threads),
            threads,
            helpers: Arc::new(helpers),
        })
    }

    /// Orders backends the default way: those using processor crypto
    /// instructions first (they are faster where available), then by name.
    pub fn default_order(mut backends: Vec<LoadedBackend>) -> Vec<LoadedBackend> {
        backends.sort_by(|a, b| {
            b.info
                .uses_cpu_crypto
                .cmp(&a.info.uses_cpu_crypto)
                .then_with(|| a.info.name.cmp(&b.info.name))
        });
        backends
    }

    /// The backend set in use now: a snapshot that a policy change does
    /// not alter.
    pub fn backend_set(&self) -> Arc<BackendSet> {
        Arc::clone(&self.backends.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The backends in use, in order of preference.
    pub fn backends(&self) -> Vec<Arc<LoadedBackend>> {
        self.backend_set().backends().to_vec()
    }

    /// Replaces the backends new keys are made with, as one new set. Keys
    /// made before keep their backends loaded until they are dropped.
    pub fn set_backends(&self, backends: Vec<Arc<LoadedBackend>>) {
        let set = Arc::new(BackendSet::new(backends));
        *self.backends.write().unwrap_or_else(|p| p.into_inner()) = set;
    }

    /// The permits header-search trials run under.
    pub fn trials(&self) -> &trials::Trials {
        &self.trials
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The backend that serves `cipher`: `forced` if given, else the first
    /// available one in order of preference that has it.
    pub fn pick(&self, cipher: &str, forced: Option<&str>) -> Result<Arc<LoadedBackend>> {
        self.backend_set().pick(cipher, forced)
    }

    /// Keys `chain` from `master` (its primary keys, then its secondary keys)
    /// for 512-byte units, as TrueCrypt and VeraCrypt volumes use.
    pub fn volume_cipher(
        &self,
        chain: &'static Chain,
        master: &[u8],
        forced: Option<&str>,
    ) -> Result<VolumeCipher> {
        self.volume_cipher_units(chain, master, forced, 512)
    }

    /// As [`Engine::volume_cipher`] with another data-unit size.
    pub fn volume_cipher_units(
        &self,
        chain: &'static Chain,
        master: &[u8],
        forced: Option<&str>,
        unit_size: u32,
    ) -> Result<VolumeCipher> {
        if master.len() < chain.key_bytes() {
            return Err(Error::KeyLength {
                expected: chain.key_bytes(),
                got: master.len(),
            });
        }
        // One snapshot for every layer: a policy change meanwhile cannot
        // key a cascade from two sets.
        let set = self.backend_set();
        let threads = self.threads;
        if chain.mode.is_legacy() {
            let layers = volume_cipher::Layers::Legacy(legacy::key(&set, chain, master, forced)?);
            return VolumeCipher::new(chain, layers, Arc::clone(&self.helpers), threads, 512);
        }
        let mut layers = Vec::with_capacity(chain.ciphers.len());
        let mut key = Zeroizing::new([0u8; 2 * chain::CIPHER_KEY_BYTES]);
        for (i, cipher) in chain.ciphers.iter().enumerate() {
            chain.layer_key(master, i, &mut key[..]);
            let backend = set.pick(cipher, forced)?;
            layers.push(XtsKey::new(&backend, cipher, &key[..])?);
        }
        let layers = volume_cipher::Layers::Xts(layers);
        VolumeCipher::new(chain, layers, Arc::clone(&self.helpers), threads, unit_size)
    }
}
