//! A volume's cipher: the layers of its chain, run over large requests on
//! all cores and over small ones on the calling thread.

use super::chain::Chain;
use super::context::XtsKey;
use super::legacy::LegacyCipher;
use crate::error::{Error, Result};
use std::sync::Arc;

/// Requests up to this size stay on the calling thread: splitting them costs
/// more than it saves.
const SERIAL_MAX: usize = 128 * 1024;
/// Layers of a cascade are applied to pieces of this size in turn, so a
/// piece stays in cache between layers.
const LAYER_PIECE: usize = 32 * 1024;
/// A large request is shared out between threads in pieces of this size.
const PARALLEL_PIECE: usize = 64 * 1024;

/// How a chain's layers are keyed: XTS layers in a backend each, or a
/// legacy mode composed here from raw blocks.
#[derive(Debug)]
pub(crate) enum Layers {
    Xts(Vec<XtsKey>),
    Legacy(LegacyCipher),
}

/// The keyed layers of one chain, in order of application.
#[derive(Debug)]
pub struct VolumeCipher {
    chain: &'static Chain,
    layers: Layers,
    /// Helpers besides the calling thread.
    pool: Arc<rayon::ThreadPool>,
    /// Pieces a large request is split into: the helpers and the caller.
    threads: usize,
    unit_size: u32,
}

impl VolumeCipher {
    pub(crate) fn new(
        chain: &'static Chain,
        layers: Layers,
        pool: Arc<rayon::ThreadPool>,
        threads: usize,
        unit_size: u32,
    ) -> Result<VolumeCipher> {
        Ok(VolumeCipher {
            chain,
            layers,
            pool,
            threads,
            unit_size,
        })
    }

    pub fn chain(&self) -> &'static Chain {
        self.chain
    }

    pub fn unit_size(&self) -> u32 {
        self.unit_size
    }

    /// The backend serving each layer, in the order the encryption's name
    /// lists its ciphers (the reverse of their application: AES's first
    /// for AES-Twofish-Serpent), so that each reads beside its cipher.
    pub fn backends(&self) -> Vec<&str> {
        let mut applied: Vec<&str> = match &self.layers {
            Layers::Xts(l) => l.iter().map(|l| l.backend().info.name.as_str()).collect(),
            Layers::Legacy(c) => c
                .layers()
                .iter()
                .map(|l| l.backend().info.name.as_str())
                .collect(),
        };
        applied.reverse();
        applied
    }

    /// The code path of `cipher`'s layer, when its backend says.
    pub fn path_of(&self, cipher: &str) -> Option<String> {
        match &self.layers {
            Layers::Xts(l) => l
                .iter()
                .find(|l| l.cipher().eq_ignore_ascii_case(cipher))
                .and_then(|l| l.path()),
            Layers::Legacy(_) => None,
        }
    }

    /// Encrypts whole data units in place; `first_unit` numbers the first.
    pub fn encrypt(&self, data: &mut [u8], first_unit: u64) -> Result<()> {
        self.run(data, first_unit, true)
    }

    /// Decrypts whole data units in place.
    pub fn decrypt(&self, data: &mut [u8], first_unit: u64) -> Result<()> {
        self.run(data, first_unit, false)
    }

    fn run(&self, data: &mut [u8], first_unit: u64, encrypt: bool) -> Result<()> {
        let unit = self.unit_size as usize;
        if !data.len().is_multiple_of(unit) {
            return Err(Error::Alignment {
                len: data.len(),
                unit,
            });
        }
        let units = (data.len() / unit) as u64;
        if units > 0 && first_unit.checked_add(units - 1).is_none() {
            return Err(Error::UnitRange { first_unit, units });
        }
        if data.len() <= SERIAL_MAX || self.threads < 2 {
            return self.run_serial(data, first_unit, encrypt);
        }
        // Pieces are handed out one at a time to the caller and the helpers
        // alike: the caller starts at once, a helper joins when it wakes, and
        // whoever is faster takes more, so no core waits for another.
        let piece = (PARALLEL_PIECE / unit).max(1) * unit;
        let units_per_piece = (piece / unit) as u64;
        let pieces = std::sync::Mutex::new(data.chunks_mut(piece).enumerate());
        let failed = std::sync::Mutex::new(None);
        let work = || {
            loop {
                let next = pieces.lock().unwrap_or_else(|p| p.into_inner()).next();
                let Some((i, chunk)) = next else { break };
                let first = first_unit.wrapping_add(i as u64 * units_per_piece);
                if let Err(e) = self.run_serial(chunk, first, encrypt) {
                    *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    break;
                }
            }
        };
        self.pool.in_place_scope(|s| {
            for _ in 1..self.threads {
                s.spawn(|_| work());
            }
            work();
        });
        match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn run_serial(&self, data: &mut [u8], first_unit: u64, encrypt: bool) -> Result<()> {
        let layers = match &self.layers {
            Layers::Xts(l) => l,
            // Units are the legacy mode's sectors (see `legacy`).
            Layers::Legacy(c) => return c.crypt_sectors(data, first_unit, encrypt),
        };
        let unit = self.unit_size as usize;
        let step = LAYER_PIECE.max(unit) / unit * unit;
        let mut first = first_unit;
        for piece in data.chunks_mut(step) {
            if encrypt {
                for layer in layers {
                    layer.encrypt(piece, first, self.unit_size)?;
                }
            } else {
                for layer in layers.iter().rev() {
                    layer.decrypt(piece, first, self.unit_size)?;
                }
            }
            first = first.wrapping_add((piece.len() / unit) as u64);
        }
        Ok(())
    }
}
