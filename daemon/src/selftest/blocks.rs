//! The raw block ciphers that backends of ABI version 2 offer, which
//! TrueCrypt before 5.0's modes are built from: Blowfish (TrueCrypt's
//! little-endian reading), CAST5 and Triple DES against their published
//! answers, one block each and a run of blocks decrypted back, through
//! the same `BlockKey` a legacy volume's cipher uses.

use super::{Check, lines, unhex};
use crate::engine::{BlockKey, Engine};

const VECTORS: &str = include_str!("../../../backends/soft/testdata/legacy_blocks.txt");

/// One check per cipher and backend that offers it as raw blocks.
pub fn run(engine: &Engine) -> Vec<Check> {
    let mut checks: Vec<Check> = Vec::new();
    for backend in engine.backends() {
        let info = &backend.info;
        if !info.available || !info.has_blocks {
            continue;
        }
        for line in lines(VECTORS) {
            let name = line
                .split_whitespace()
                .next()
                .unwrap_or("")
                .replace('_', " ");
            if !info
                .ciphers
                .iter()
                .any(|c| c.name.eq_ignore_ascii_case(&name))
            {
                continue;
            }
            let outcome = vector(&backend, &name, line);
            match checks
                .iter_mut()
                .find(|c| c.algorithm == name && c.backend == info.name)
            {
                Some(c) => c.problem = c.problem.take().or(outcome.err()),
                None => checks.push(Check {
                    algorithm: name,
                    backend: info.name.clone(),
                    path: "raw blocks".into(),
                    problem: outcome.err(),
                }),
            }
        }
    }
    checks
}

/// `cipher key plaintext ciphertext`: encrypted to the answer, and three
/// copies of it decrypted back.
fn vector(
    backend: &std::sync::Arc<crate::engine::LoadedBackend>,
    name: &str,
    line: &str,
) -> Result<(), String> {
    let f: Vec<&str> = line.split_whitespace().collect();
    let [_, key, plain, answer] = f[..] else {
        return Err(format!("a malformed vector: {line}"));
    };
    let (key, plain, answer) = (unhex(key)?, unhex(plain)?, unhex(answer)?);
    let k = BlockKey::new(backend, name, &key).map_err(|e| e.to_string())?;
    let mut data = plain.clone();
    k.encrypt(&mut data).map_err(|e| e.to_string())?;
    if data != answer {
        return Err(format!("a block under key {} encrypts wrongly", hex(&key)));
    }
    let mut run = [data.clone(), data.clone(), data].concat();
    k.decrypt(&mut run).map_err(|e| e.to_string())?;
    if run != plain.repeat(3) {
        return Err(format!("blocks under key {} decrypt wrongly", hex(&key)));
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
