//! A volume's cipher: the layers of its chain, run over large requests on
//! all cores and over small ones on the calling thread.

use super::chain::Chain;
use super::context::XtsKey;
use crate::error::{Error, Result};
use std::sync::Arc;

/// Requests up to this size stay on the calling thread: splitting them costs
/// more than it saves.
const SERIAL_MAX: usize = 128 * 1024;
/// Layers of a cascade are applied to pieces of this size in turn, so a
/// piece stays in cache between layers.
const LAYER_PIECE: usize = 32 * 1024;

/// The keyed layers of one chain, in order of application.
#[derive(Debug)]
pub struct VolumeCipher {
    chain: &'static Chain,
    layers: Vec<XtsKey>,
    /// Helpers besides the calling thread.
    pool: Arc<rayon::ThreadPool>,
    /// Pieces a large request is split into: the helpers and the caller.
    threads: usize,
    unit_size: u32,
}

impl VolumeCipher {
    pub(crate) fn new(
        chain: &'static Chain,
        layers: Vec<XtsKey>,
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

    /// The backend serving each layer, in order of application.
    pub fn backends(&self) -> Vec<&str> {
        self.layers
            .iter()
            .map(|l| l.backend().info.name.as_str())
            .collect()
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
        // One piece per thread, each a whole number of layer pieces so every
        // thread streams through cache-sized steps. The calling thread takes
        // the first piece itself: it works while the pool wakes up, instead
        // of sleeping until the pool is done.
        let threads = self.threads;
        let per_thread = data.len().div_ceil(threads);
        let piece = per_thread.div_ceil(LAYER_PIECE).max(1) * LAYER_PIECE;
        let units_per_piece = (piece / unit) as u64;
        let mut chunks = data.chunks_mut(piece);
        let Some(own) = chunks.next() else {
            return Ok(());
        };
        let failed = std::sync::Mutex::new(None);
        self.pool.in_place_scope(|s| {
            for (i, chunk) in chunks.enumerate() {
                let failed = &failed;
                s.spawn(move |_| {
                    let first = first_unit.wrapping_add((i as u64 + 1) * units_per_piece);
                    if let Err(e) = self.run_serial(chunk, first, encrypt) {
                        *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    }
                });
            }
            if let Err(e) = self.run_serial(own, first_unit, encrypt) {
                *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            }
        });
        match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn run_serial(&self, data: &mut [u8], first_unit: u64, encrypt: bool) -> Result<()> {
        let unit = self.unit_size as usize;
        let step = LAYER_PIECE.max(unit) / unit * unit;
        let mut first = first_unit;
        for piece in data.chunks_mut(step) {
            if encrypt {
                for layer in &self.layers {
                    layer.encrypt(piece, first, self.unit_size)?;
                }
            } else {
                for layer in self.layers.iter().rev() {
                    layer.decrypt(piece, first, self.unit_size)?;
                }
            }
            first = first.wrapping_add((piece.len() / unit) as u64);
        }
        Ok(())
    }
}
