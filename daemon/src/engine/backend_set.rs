//! The backends an engine uses, as one immutable value: in order of
//! preference, with the backend chosen for each cipher worked out once.
//! A policy change builds a new set and swaps it in whole (as rustls swaps
//! a `CryptoProvider` by building a new config), so a reader never sees
//! half of one policy and half of another.

use super::loader::LoadedBackend;
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct BackendSet {
    /// In order of preference.
    backends: Vec<Arc<LoadedBackend>>,
    /// Each cipher (lower case) and the first available backend with it
    /// in XTS.
    chosen: BTreeMap<String, Arc<LoadedBackend>>,
    /// Each cipher and the first available backend with it as raw blocks
    /// (ABI version 2), for the legacy modes.
    chosen_blocks: BTreeMap<String, Arc<LoadedBackend>>,
}

impl BackendSet {
    /// The set of `backends`, preferred in the given order.
    pub fn new(backends: Vec<Arc<LoadedBackend>>) -> BackendSet {
        let mut chosen = BTreeMap::new();
        let mut chosen_blocks = BTreeMap::new();
        for b in backends.iter().filter(|b| b.info.available) {
            for c in &b.info.ciphers {
                let name = c.name.to_ascii_lowercase();
                if b.info.has_blocks {
                    chosen_blocks
                        .entry(name.clone())
                        .or_insert_with(|| Arc::clone(b));
                }
                if c.has_xts() {
                    chosen.entry(name).or_insert_with(|| Arc::clone(b));
                }
            }
        }
        BackendSet {
            backends,
            chosen,
            chosen_blocks,
        }
    }

    /// The backend that serves `cipher` as raw blocks: `forced` if given
    /// (and it has block functions), else the first available one in order
    /// of preference that does.
    pub fn pick_block(&self, cipher: &str, forced: Option<&str>) -> Result<Arc<LoadedBackend>> {
        let Some(name) = forced else {
            return self
                .chosen_blocks
                .get(&cipher.to_ascii_lowercase())
                .cloned()
                .ok_or_else(|| Error::UnsupportedCipher(format!("{cipher} (raw blocks)")));
        };
        let b = self.pick_any(cipher, name)?;
        if b.info.has_blocks {
            Ok(b)
        } else {
            Err(Error::NoSuchCipher {
                backend: name.to_owned(),
                cipher: format!("{cipher} (raw blocks)"),
            })
        }
    }

    /// The backends, in order of preference.
    pub fn backends(&self) -> &[Arc<LoadedBackend>] {
        &self.backends
    }

    /// The backend that serves `cipher`: `forced` if given, else the first
    /// available one in order of preference that has it.
    pub fn pick(&self, cipher: &str, forced: Option<&str>) -> Result<Arc<LoadedBackend>> {
        let Some(name) = forced else {
            return self
                .chosen
                .get(&cipher.to_ascii_lowercase())
                .cloned()
                .ok_or_else(|| Error::UnsupportedCipher(cipher.to_owned()));
        };
        let b = self.pick_any(cipher, name)?;
        if b.info
            .ciphers
            .iter()
            .any(|c| c.has_xts() && c.name.eq_ignore_ascii_case(cipher))
        {
            Ok(b)
        } else {
            Err(Error::NoSuchCipher {
                backend: name.to_owned(),
                cipher: cipher.to_owned(),
            })
        }
    }

    /// Backend `name`, available and listing `cipher`.
    fn pick_any(&self, cipher: &str, name: &str) -> Result<Arc<LoadedBackend>> {
        let no_such = || Error::NoSuchCipher {
            backend: name.to_owned(),
            cipher: cipher.to_owned(),
        };
        let b = self
            .backends
            .iter()
            .find(|b| b.info.name == name)
            .ok_or_else(no_such)?;
        if !b.info.available {
            return Err(Error::BackendUnavailable {
                backend: name.to_owned(),
            });
        }
        if b.info
            .ciphers
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case(cipher))
        {
            Ok(Arc::clone(b))
        } else {
            Err(no_such())
        }
    }
}
