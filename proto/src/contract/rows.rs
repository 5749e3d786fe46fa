//! The rows of the replies that are lists of structures: named fields in
//! Rust, the same D-Bus signatures as tuples.

use serde::{Deserialize, Serialize};
use zvariant::Type;

/// One backend file of `Backends` (`(sssssbbbbass)`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Type)]
pub struct BackendRow {
    /// Empty when the file could not be described (see `skipped`).
    pub name: String,
    pub description: String,
    pub version: String,
    pub file: String,
    pub sha256: String,
    /// It uses processor crypto instructions (AES-NI, VAES, ...).
    pub uses_cpu_crypto: bool,
    /// Its instructions exist on this processor.
    pub available: bool,
    pub allowed: bool,
    pub loaded: bool,
    pub ciphers: Vec<String>,
    /// Why it was skipped; empty if it was not.
    pub skipped: String,
}

impl super::policy::Candidate for BackendRow {
    fn name(&self) -> &str {
        &self.name
    }
    fn uses_cpu_crypto(&self) -> bool {
        self.uses_cpu_crypto
    }
}

/// One check of `SelfTest` (`(sssbs)`): an algorithm on one backend and
/// code path against its test vectors.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Type)]
pub struct SelfTestRow {
    pub algorithm: String,
    /// The backend of each layer, "+" between them ("tcd": the daemon's
    /// own hash code).
    pub backend: String,
    /// The code path (of each layer, "+" between them).
    pub path: String,
    pub passed: bool,
    /// What differed from the vectors; empty when it passed.
    pub problem: String,
}

/// One cipher of `Benchmark` (`(ssdddb)`), in MB/s.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Type)]
pub struct CipherBenchRow {
    pub encryption: String,
    /// The backend of each layer, "+" between them.
    pub backends: String,
    pub encrypt_mbs: f64,
    pub decrypt_mbs: f64,
    pub mean_mbs: f64,
    /// AES ran on processor instructions.
    pub hardware_aes: bool,
}

/// One PRF of `Benchmark` (`(sudd)`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Type)]
pub struct KdfBenchRow {
    pub prf: String,
    /// Iterations at the default PIM.
    pub iterations: u32,
    /// Iterations per second on one core.
    pub per_second: f64,
    /// Seconds per header trial at the default PIM.
    pub trial_seconds: f64,
}

/// The reply of `Benchmark` (`(uba(ssdddb)a(sudd)tuas)` as seven out
/// arguments).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Type)]
pub struct BenchReport {
    pub threads: u32,
    pub cpu_has_aes: bool,
    pub ciphers: Vec<CipherBenchRow>,
    pub kdfs: Vec<KdfBenchRow>,
    /// The buffer each cipher ran over, in bytes.
    pub buffer_bytes: u64,
    /// Passes over it in each direction.
    pub passes: u32,
    /// The code path of each cipher row (same order), each cipher's
    /// "+"-joined in the order of the algorithm's name, `-` where its
    /// backend does not say.
    pub simd: Vec<String>,
}

/// The reply of `Policy` (six out arguments).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Type)]
pub struct PolicyReply {
    /// The policy as TOML.
    pub text: String,
    /// Its file.
    pub file: String,
    /// "auto" or "disabled".
    pub hardware_acceleration: String,
    /// Every backend found is allowed.
    pub all_allowed: bool,
    /// The allowed names (when not every one).
    pub allowed: Vec<String>,
    /// The order of preference.
    pub prefer: Vec<String>,
}

impl PolicyReply {
    /// The policy's `token_library`, read from its text.
    pub fn token_library(&self) -> Option<String> {
        super::policy::Policy::parse(&self.text).ok()?.token_library
    }

    /// The policy's `[limits]`, read from its text (the defaults for
    /// those it leaves out); `None` when the text does not parse.
    pub fn limits(&self) -> Option<super::policy::Limits> {
        super::policy::Policy::parse(&self.text)
            .ok()
            .map(|p| p.limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_the_signatures_of_the_first_interface() {
        assert_eq!(BackendRow::SIGNATURE.to_string(), "(sssssbbbbass)");
        assert_eq!(CipherBenchRow::SIGNATURE.to_string(), "(ssdddb)");
        assert_eq!(KdfBenchRow::SIGNATURE.to_string(), "(sudd)");
        assert_eq!(SelfTestRow::SIGNATURE.to_string(), "(sssbs)");
        assert_eq!(PolicyReply::SIGNATURE.to_string(), "(sssbasas)");
        assert_eq!(
            BenchReport::SIGNATURE.to_string(),
            "(uba(ssdddb)a(sudd)tuas)"
        );
    }
}
