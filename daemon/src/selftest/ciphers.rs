//! The encryption algorithms' checks: VeraCrypt's own data-unit vectors
//! for every algorithm and cascade, and IEEE 1619's XTS-AES-256 vectors,
//! through `Engine::volume_cipher` as a mounted volume uses it.
//!
//! A backend reads `TCD_SIMD` at key setup, so each level runs in a child
//! of the daemon (`tcd --self-test-ciphers FILE...`, with only `TCD_SIMD`
//! in its environment) that loads the same backend files in the same order
//! and prints its checks as JSON.

use super::{Check, lines, unhex};
use crate::benchmark;
use crate::engine::chain::{CHAINS, CIPHER_KEY_BYTES, Chain};
use crate::engine::{Engine, VolumeCipher, loader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;
use tcd_backend_kit::simd::{self, Level};

const UNITS: &str = include_str!("vectors/xts_units.txt");
const IEEE1619: &str =
    include_str!("../../../backends/aesni/src/xts/testdata/ieee1619_xts_aes256.txt");

/// The daemon's flag that runs [`child_main`].
pub const CHILD_FLAG: &str = "self-test-ciphers";

/// How long one level's child may take: far more than its few kilobytes
/// of encryption need.
const CHILD_TIMEOUT: Duration = Duration::from_secs(60);

/// VeraCrypt's data-unit test: the keys, the first unit of case 0, and the
/// CRC-32 of each case's ciphertext for each algorithm.
struct Units {
    key1: Vec<u8>,
    key2: Vec<u8>,
    first_unit: u64,
    crcs: Vec<(String, Vec<u32>)>,
}

fn units() -> Result<Units, String> {
    let mut u = Units {
        key1: Vec::new(),
        key2: Vec::new(),
        first_unit: 0,
        crcs: Vec::new(),
    };
    for line in lines(UNITS) {
        if let Some((name, value)) = line.split_once(" = ") {
            match name {
                "key1" => u.key1 = unhex(value)?,
                "key2" => u.key2 = unhex(value)?,
                "first_unit" => {
                    u.first_unit = u64::from_str_radix(value, 16)
                        .map_err(|_| format!("bad first_unit {value}"))?
                }
                _ => return Err(format!("unknown field {name} in the unit vectors")),
            }
            continue;
        }
        let mut words = line.split_whitespace();
        let name = words.next().unwrap_or_default().to_owned();
        let crcs = words
            .map(|w| u32::from_str_radix(w, 16).map_err(|_| format!("bad CRC {w}")))
            .collect::<Result<Vec<u32>, String>>()?;
        u.crcs.push((name, crcs));
    }
    Ok(u)
}

/// One IEEE 1619 vector: a 512-byte data unit.
struct Ieee {
    name: String,
    key: Vec<u8>,
    unit: u64,
    pt: Vec<u8>,
    ct: Vec<u8>,
}

fn ieee_vectors() -> Result<Vec<Ieee>, String> {
    let mut out = Vec::new();
    for block in IEEE1619.split("\n\n") {
        let field = |k: &str| {
            block
                .lines()
                .find_map(|l| l.strip_prefix(k)?.trim_start().strip_prefix('='))
                .map(str::trim)
                .ok_or_else(|| format!("an IEEE 1619 vector without {k}"))
        };
        let Ok(name) = field("vector") else {
            continue;
        };
        out.push(Ieee {
            name: name.to_owned(),
            key: [unhex(field("key1")?)?, unhex(field("key2")?)?].concat(),
            unit: u64::from_str_radix(field("unit")?, 16).map_err(|_| "bad unit".to_owned())?,
            pt: unhex(field("pt")?)?,
            ct: unhex(field("ct")?)?,
        });
    }
    Ok(out)
}

/// Checks every algorithm on each choice of backends that `engine` offers
/// (the rows of the benchmark), at this process's SIMD level.
pub fn check_engine(engine: &Engine) -> Vec<Check> {
    benchmark::plan(engine)
        .into_iter()
        .map(|(chain, forced)| {
            let backend =
                benchmark::label(engine, chain, forced.as_deref()).unwrap_or_else(|_| "-".into());
            let (path, result) = check_chain(engine, chain, forced.as_deref());
            Check {
                algorithm: chain.name.to_owned(),
                backend,
                path,
                problem: result.err(),
            }
        })
        .collect()
}

/// The code path of `chain` on the backends chosen, and the outcome of
/// its vectors.
fn check_chain(
    engine: &Engine,
    chain: &'static Chain,
    forced: Option<&str>,
) -> (String, Result<(), String>) {
    let units = match units() {
        Ok(u) => u,
        Err(e) => return ("-".into(), Err(e)),
    };
    let n = chain.ciphers.len() * CIPHER_KEY_BYTES;
    let (Some(k1), Some(k2)) = (units.key1.get(..n), units.key2.get(..n)) else {
        return (
            "-".into(),
            Err("the unit vectors' keys are too short".into()),
        );
    };
    let cipher = match engine.volume_cipher(chain, &[k1, k2].concat(), forced) {
        Ok(c) => c,
        Err(e) => return ("-".into(), Err(e.to_string())),
    };
    let path = benchmark::paths(chain, &cipher);
    let result = unit_cases(&cipher, &units, chain.name).and_then(|()| {
        if chain.name == "AES" {
            ieee1619(engine, forced)
        } else {
            Ok(())
        }
    });
    (path, result)
}

/// VeraCrypt's four cases: four units of IEEE vector 14's plaintext from
/// a unit that moves back one each case.
fn unit_cases(cipher: &VolumeCipher, units: &Units, name: &str) -> Result<(), String> {
    let crcs = units
        .crcs
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, c)| c)
        .ok_or_else(|| format!("no VeraCrypt vector for {name}"))?;
    let pt = ieee_vectors()?
        .pop()
        .map(|v| v.pt.repeat(4))
        .ok_or("no IEEE 1619 vector")?;
    for (case, want) in crcs.iter().enumerate() {
        let first = units.first_unit - case as u64;
        let mut buf = pt.clone();
        cipher.encrypt(&mut buf, first).map_err(|e| e.to_string())?;
        let got = crc32fast::hash(&buf);
        if got != *want {
            return Err(format!(
                "4 units from {first:#x}: ciphertext CRC-32 {got:08x}, VeraCrypt's is {want:08x}"
            ));
        }
        cipher.decrypt(&mut buf, first).map_err(|e| e.to_string())?;
        if buf != pt {
            return Err(format!(
                "4 units from {first:#x}: decrypting does not give the plaintext back"
            ));
        }
    }
    Ok(())
}

/// IEEE 1619-2007 Annex B vectors 10 to 14 (XTS-AES-256).
fn ieee1619(engine: &Engine, forced: Option<&str>) -> Result<(), String> {
    let aes = Chain::by_name("AES").ok_or("no AES")?;
    for v in ieee_vectors()? {
        let cipher = engine
            .volume_cipher(aes, &v.key, forced)
            .map_err(|e| e.to_string())?;
        let mut data = v.pt.clone();
        cipher
            .encrypt(&mut data, v.unit)
            .map_err(|e| e.to_string())?;
        if data != v.ct {
            return Err(format!("IEEE 1619 vector {}: wrong ciphertext", v.name));
        }
        cipher
            .decrypt(&mut data, v.unit)
            .map_err(|e| e.to_string())?;
        if data != v.pt {
            return Err(format!("IEEE 1619 vector {}: wrong plaintext", v.name));
        }
    }
    Ok(())
}

/// The checks of `engine`'s available backends at each SIMD level, each
/// (algorithm, backends, path) once: a level the processor lacks runs the
/// best path below it, which an earlier level already ran.
pub fn run(engine: &Engine) -> Vec<Check> {
    let files: Vec<PathBuf> = engine
        .backends()
        .iter()
        .filter(|b| b.info.available)
        .map(|b| b.info.path.clone())
        .collect();
    let mut checks: Vec<Check> = Vec::new();
    for level in Level::ALL {
        let found = in_child(&files, level).unwrap_or_else(|problem| {
            vec![Check {
                algorithm: "every cipher".into(),
                backend: "-".into(),
                path: format!("{}={}", simd::ENV, level.name()),
                problem: Some(problem),
            }]
        });
        for c in found {
            let seen = checks.iter().any(|k| {
                (&k.algorithm, &k.backend, &k.path) == (&c.algorithm, &c.backend, &c.path)
            });
            if !seen {
                checks.push(c);
            }
        }
    }
    // Each algorithm's rows together, in the order of `CHAINS`.
    checks.sort_by_key(|c| CHAINS.iter().position(|x| x.name == c.algorithm));
    checks
}

fn in_child(files: &[PathBuf], level: Level) -> Result<Vec<Check>, String> {
    let child = Command::new("/proc/self/exe")
        .arg(format!("--{CHILD_FLAG}"))
        .args(files)
        .env_clear()
        .env(simd::ENV, level.name())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run the self-test child: {e}"))?;
    let output = wait_within(child, CHILD_TIMEOUT).map_err(|e| match e {
        None => format!(
            "the self-test child took over {} s",
            CHILD_TIMEOUT.as_secs()
        ),
        Some(e) => format!("the self-test child failed: {e}"),
    })?;
    serde_json::from_slice(&output.stdout).map_err(|_| {
        let why = String::from_utf8_lossy(&output.stderr);
        format!(
            "the self-test child gave no report ({}): {}",
            output.status,
            why.trim()
        )
    })
}

use crate::engine::catalog::wait_within;

/// The child's work: load `files` in order, check every algorithm at the
/// `TCD_SIMD` level of its environment, print the checks as JSON. Returns
/// the exit code.
pub fn child_main(files: &[PathBuf]) -> u8 {
    let mut backends = Vec::new();
    for file in files {
        match loader::load(file) {
            Ok(b) => backends.push(b),
            Err(e) => {
                eprintln!("{e}");
                return 1;
            }
        }
    }
    let engine = match Engine::new(backends, 1) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    match serde_json::to_string(&check_engine(&engine)) {
        Ok(line) => {
            println!("{line}");
            0
        }
        Err(_) => 2,
    }
}
