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
    /// Each cipher (lower case) and the first available backend with it.
    chosen: BTreeMap<String, Arc<LoadedBackend>>,
}

impl BackendSet {
    /// The set of `backends`, preferred in the given order.
    pub fn new(backends: Vec<Arc<LoadedBackend>>) -> BackendSet {
        let mut chosen = BTreeMap::new();
        for b in backends.iter().filter(|b| b.info.available) {
            for c in &b.info.ciphers {
                chosen
                    .entry(c.name.to_ascii_lowercase())
                    .or_insert_with(|| Arc::clone(b));
            }
        }
        BackendSet { backends, chosen }
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
