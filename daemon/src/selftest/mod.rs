//! TrueCrypt's Tools > Test Vectors: every encryption algorithm on each
//! backend that serves it, at each SIMD level this processor runs
//! (`ciphers`), the legacy block ciphers of TrueCrypt before 5.0
//! (`blocks`), and every hash and header-key PRF on each code path the
//! key search takes (`prfs`), against published vectors. Only the code
//! the data and the key search run is tested; the vectors are data files
//! in `vectors/`.

mod blocks;
pub mod ciphers;
mod prfs;

use crate::engine::Engine;
use serde::{Deserialize, Serialize};

/// One algorithm on one backend and code path, and how it did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// "AES-Twofish", "PBKDF2-HMAC-SHA-512", "SHA-512".
    pub algorithm: String,
    /// The backend of each layer, "+"-joined; "tcd" for the daemon's own
    /// hash code.
    pub backend: String,
    /// The code path (of each layer, "+"-joined).
    pub path: String,
    /// What differed from the vector; `None` when every vector matched.
    pub problem: Option<String>,
}

/// Runs every check: the ciphers of `engine`'s backends in a child of the
/// daemon per SIMD level (see [`ciphers::run`]), then the PRFs here.
pub fn run(engine: &Engine) -> Vec<Check> {
    let mut checks = ciphers::run(engine);
    checks.extend(blocks::run(engine));
    checks.extend(prfs::run());
    checks
}

/// Hex text of a vector file; a malformed vector is a problem of the check
/// that reads it, never a panic.
fn unhex(text: &str) -> Result<Vec<u8>, String> {
    if text == "-" {
        return Ok(Vec::new());
    }
    let text: String = text.split_whitespace().collect();
    if !text.len().is_multiple_of(2) {
        return Err(format!("odd-length hex in a vector: {text}"));
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&text[i..i + 2], 16)
                .map_err(|_| format!("bad hex in a vector: {text}"))
        })
        .collect()
}

/// The lines of a vector file that are not comments or blank.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}
