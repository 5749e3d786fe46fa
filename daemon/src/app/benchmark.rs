//! TrueCrypt's benchmark on the engine mounted volumes use, one at a time.

use super::{App, Caller};
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use tcd_proto::contract::rows::{BenchReport, CipherBenchRow, KdfBenchRow};

/// The buffer when the caller names none: small enough to stay in the
/// cores' caches, so the figures are the ciphers' speed rather than the
/// memory's, passed over [`DEFAULT_PASSES`] times (100 MiB each way).
pub const DEFAULT_BUFFER: u64 = 1 << 20;
pub const DEFAULT_PASSES: u32 = 100;
/// The buffer is locked memory: up to 1 GiB for root, a quarter of that
/// for others.
const MAX_ROOT: u64 = 1 << 30;
const MAX_USER: u64 = 256 << 20;

impl App {
    /// Every encryption on each choice of allowed backends over a buffer
    /// of `buffer_bytes` once (0: [`DEFAULT_BUFFER`], [`DEFAULT_PASSES`]
    /// times) on all cores, and the
    /// header key derivation of each PRF. `progress(done, total)` counts
    /// steps.
    pub fn benchmark(
        &self,
        caller: &Caller,
        buffer_bytes: u64,
        cancel: &AtomicBool,
        progress: impl FnMut(u32, u32),
    ) -> Result<BenchReport> {
        let max = if caller.is_root() { MAX_ROOT } else { MAX_USER };
        let (size, passes) = if buffer_bytes == 0 {
            (DEFAULT_BUFFER, DEFAULT_PASSES)
        } else {
            (buffer_bytes, 1)
        };
        if size > max {
            return Err(Error::InvalidArgument(format!(
                "a benchmark buffer holds at most {} MiB ({} MiB for root), not {} MiB",
                MAX_USER >> 20,
                MAX_ROOT >> 20,
                size.div_ceil(1 << 20)
            )));
        }
        // One at a time: it takes every core.
        if self.benchmark_running.swap(true, Ordering::AcqRel) {
            return Err(Error::AtCapacity("a benchmark is already running".into()));
        }
        struct Done<'a>(&'a AtomicBool);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let _done = Done(&self.benchmark_running);
        let report = crate::benchmark::run(self.table.engine(), size, passes, cancel, progress)?;
        Ok(BenchReport {
            buffer_bytes: report.buffer_bytes,
            passes: report.passes,
            simd: report.ciphers.iter().map(|r| r.simd.clone()).collect(),
            threads: report.threads,
            cpu_has_aes: super::backends::cpu_has_aes(),
            ciphers: report
                .ciphers
                .into_iter()
                .map(|r| CipherBenchRow {
                    encryption: r.encryption.to_owned(),
                    backends: r.backends,
                    encrypt_mbs: r.encrypt_mbs,
                    decrypt_mbs: r.decrypt_mbs,
                    mean_mbs: r.mean_mbs,
                    hardware_aes: r.hardware_aes,
                })
                .collect(),
            kdfs: report
                .kdfs
                .into_iter()
                .map(|k| KdfBenchRow {
                    prf: k.prf.to_owned(),
                    iterations: k.iterations,
                    per_second: k.per_second,
                    trial_seconds: k.trial_seconds,
                })
                .collect(),
        })
    }
}
