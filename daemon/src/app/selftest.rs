//! TrueCrypt's Tools > Test Vectors on the engine mounted volumes use.

use super::App;
use crate::error::{Error, Result};
use std::sync::atomic::Ordering;
use tcd_proto::contract::rows::SelfTestRow;

impl App {
    /// Every cipher of every loaded backend at each SIMD level, and every
    /// hash and PRF on each path of the key search, against their test
    /// vectors. One at a time with the benchmark: both take every core.
    pub fn self_test(&self) -> Result<Vec<SelfTestRow>> {
        if self.benchmark_running.swap(true, Ordering::AcqRel) {
            return Err(Error::AtCapacity(
                "a benchmark or self-test is already running".into(),
            ));
        }
        let checks = crate::selftest::run(self.table.engine());
        self.benchmark_running.store(false, Ordering::Release);
        Ok(checks
            .into_iter()
            .map(|c| SelfTestRow {
                algorithm: c.algorithm,
                backend: c.backend,
                path: c.path,
                passed: c.problem.is_none(),
                problem: c.problem.unwrap_or_default(),
            })
            .collect())
    }
}
