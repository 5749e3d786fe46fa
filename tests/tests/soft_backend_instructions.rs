//! The software-only backend contains no processor crypto instruction, and
//! the AES-NI backend does: disassemble both built libraries with objdump.
//!
//! An administrator who enforces software-only relies on this: no AES-NI,
//! VAES, PCLMULQDQ/VPCLMULQDQ or SHA instruction anywhere in the soft
//! backend's shared object, whatever the CPU would allow at run time.
//!
//! GFNI's `gf2p8affineqb` and `gf2p8mulb` are general GF(2^8) linear
//! algebra (the soft Twofish uses them for its MDS matrix), not a cipher in
//! silicon, so they are allowed; `gf2p8affineinvqb` computes the AES S-box
//! inversion in one step and is forbidden with the AES instructions.

use std::collections::BTreeMap;
use std::process::Command;
use tcd_tests::{backend_lib, require_tool};

/// Mnemonic prefixes of processor crypto instructions. objdump prints
/// PCLMULQDQ under aliases such as `pclmullqlqdq` and `vpclmulhqhqdq`.
const CRYPTO: &[&str] = &[
    "aesenc",
    "aesenclast",
    "aesdec",
    "aesdeclast",
    "aesimc",
    "aeskeygenassist",
    "vaesenc",
    "vaesenclast",
    "vaesdec",
    "vaesdeclast",
    "vaesimc",
    "vaeskeygenassist",
    "pclmul",
    "vpclmul",
    "gf2p8affineinv",
    "vgf2p8affineinv",
    "sha1",
    "sha256",
];

fn crypto_mnemonics(lib: &str) -> BTreeMap<String, usize> {
    let objdump = require_tool("objdump", "package binutils");
    let path = backend_lib(lib);
    let out = Command::new(objdump)
        .arg("-d")
        .arg("--no-show-raw-insn")
        .arg(&path)
        .output()
        .expect("run objdump");
    assert!(out.status.success(), "objdump failed on {}", path.display());
    let text = String::from_utf8_lossy(&out.stdout);
    let mut found = BTreeMap::new();
    let mut instructions = 0usize;
    for line in text.lines() {
        // "  1234:\tmnemonic operands"
        let Some((_, insn)) = line.split_once(":\t") else {
            continue;
        };
        let Some(mnemonic) = insn.split_whitespace().next() else {
            continue;
        };
        instructions += 1;
        if CRYPTO.iter().any(|c| mnemonic.starts_with(c)) {
            *found.entry(mnemonic.to_owned()).or_insert(0) += 1;
        }
    }
    assert!(
        instructions > 1000,
        "{}: only {instructions} instructions disassembled",
        path.display()
    );
    found
}

#[test]
fn soft_backend_has_no_crypto_instructions() {
    let found = crypto_mnemonics("soft");
    assert!(
        found.is_empty(),
        "the soft backend contains processor crypto instructions: {found:?}"
    );
}

#[test]
fn aesni_backend_uses_the_aes_instructions() {
    let found = crypto_mnemonics("aesni");
    for needed in [
        "aesenc",
        "aesenclast",
        "aesdec",
        "aesdeclast",
        "aeskeygenassist",
        "aesimc",
    ] {
        assert!(
            found.contains_key(needed),
            "aesni backend lacks {needed}: {found:?}"
        );
    }
    assert!(
        found.contains_key("vaesenc"),
        "aesni backend lacks VAES: {found:?}"
    );
}
