//! `tcctl self-test` (TrueCrypt's Tools > Test Vectors) on a real daemon:
//! every algorithm of every loaded backend (the legacy block ciphers
//! too) and every PRF passes on this
//! machine; a backend that computes a cipher wrongly makes it fail with
//! exit 12, naming the algorithm.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use tcd::engine::chain::CHAINS;
use tcd_tests::daemon::Daemon;
use tcd_tests::{build_c_backend, build_dir};

const SELF_TEST_FAILED: i32 = 12;

/// The data rows of the table: (algorithm, backend, path, result).
fn rows(table: &str) -> Vec<[String; 4]> {
    let mut lines = table.lines();
    let header = lines.next().expect("a header line");
    let at = |title: &str| header.find(title).expect(title);
    let (b, p, r) = (at("BACKEND"), at("PATH"), at("RESULT"));
    lines
        .take_while(|l| !l.starts_with("All ") && !l.contains(" checks FAILED."))
        .map(|l| {
            [
                l[..b].trim().to_owned(),
                l[b..p].trim().to_owned(),
                l[p..r].trim().to_owned(),
                l[r..].trim().to_owned(),
            ]
        })
        .collect()
}

#[test]
fn every_algorithm_on_every_backend_and_path_passes() {
    let d = Daemon::start();
    let out = d.ok(&["self-test"], "");
    let rows = rows(&out);
    assert!(
        out.ends_with(&format!("All {} checks passed.\n", rows.len())),
        "{out}"
    );
    for r in &rows {
        assert_eq!(r[3], "passed", "{r:?}");
    }
    let has = |algorithm: &str, backend: &str, path: &str| {
        rows.iter()
            .any(|r| r[0] == algorithm && r[1] == backend && r[2].contains(path))
    };
    for chain in CHAINS {
        assert!(
            has(chain.name, "soft", ""),
            "{} on soft:\n{out}",
            chain.name
        );
    }
    assert!(has("AES", "aesni", "AES-NI"), "{out}");
    // Every SIMD level this processor runs: the software AES has one path
    // per level.
    assert!(has("AES", "soft", "SSE2"), "{out}");
    if std::arch::is_x86_feature_detected!("avx2") {
        assert!(has("AES", "soft", "AVX2"), "{out}");
    }
    for prf in [
        "SHA-512",
        "SHA-256",
        "Whirlpool",
        "RIPEMD-160",
        "Streebog",
        "BLAKE2s-256",
    ] {
        assert!(has(prf, "tcd", "digest"), "{prf}:\n{out}");
        assert!(
            has(&format!("PBKDF2-HMAC-{prf}"), "tcd", ""),
            "{prf}:\n{out}"
        );
    }
    // TrueCrypt before 5.0's ciphers, as the software backend's raw blocks.
    for cipher in ["Blowfish", "CAST5", "Triple DES"] {
        assert!(has(cipher, "soft", "raw blocks"), "{cipher}:\n{out}");
    }
    assert!(has("PBKDF2-HMAC-SHA-512", "tcd", "SSE2 lanes"), "{out}");
    // VeraCrypt's Argon2id, through each build of its memory fill.
    assert!(has("Argon2id", "tcd", "SSE2"), "{out}");
    if std::arch::is_x86_feature_detected!("avx2") {
        assert!(has("Argon2id", "tcd", "AVX2"), "{out}");
    }
    assert!(has("PBKDF2-HMAC-BLAKE2s-256", "tcd", "SSE2 lanes"), "{out}");
    assert!(has("PBKDF2-HMAC-RIPEMD-160", "tcd", "SSE2 lanes"), "{out}");

    let json: serde_json::Value =
        serde_json::from_str(&d.ok(&["self-test", "--json"], "")).expect("JSON");
    assert_eq!(json["passed"], true);
    let checks = json["checks"].as_array().expect("checks");
    assert_eq!(checks.len(), rows.len());
    assert!(
        checks
            .iter()
            .all(|c| c["passed"] == true && c["problem"].is_null())
    );
}

#[test]
fn a_backend_that_computes_serpent_wrongly_fails_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::copy(
        build_dir().join("libtcd_backend_soft.so"),
        dir.path().join("libtcd_backend_soft.so"),
    )
    .expect("copy the soft backend");
    build_c_backend(dir.path(), "libtcd_backend_ctest.so", &["AS_SERPENT"]);
    let d = Daemon::start_with(&[OsStr::new("--backend-dir"), dir.path().as_os_str()]);

    let out = d.tcctl(&["self-test"], "");
    assert_eq!(out.status.code(), Some(SELF_TEST_FAILED));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(
            "tcctl: self-test failed: Serpent on c-test (-): 4 units from 0xffffffffff: \
             ciphertext CRC-32 "
        ) && stderr.contains(", VeraCrypt's is 7edfecb3"),
        "{stderr}"
    );
    let rows = rows(&stdout);
    let serpent: Vec<_> = rows.iter().filter(|r| r[0] == "Serpent").collect();
    assert!(
        serpent
            .iter()
            .any(|r| r[1] == "c-test" && r[3].starts_with("FAILED: 4 units")),
        "{stdout}"
    );
    assert!(
        serpent.iter().any(|r| r[1] == "soft" && r[3] == "passed"),
        "{stdout}"
    );
    // Only what the broken backend served failed.
    assert!(
        rows.iter()
            .filter(|r| r[3] != "passed")
            .all(|r| r[1].contains("c-test")),
        "{stdout}"
    );
    assert!(stdout.contains(" checks FAILED."), "{stdout}");

    let json = d.tcctl(&["self-test", "--json"], "");
    assert_eq!(json.status.code(), Some(SELF_TEST_FAILED));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(v["passed"], false);
}
