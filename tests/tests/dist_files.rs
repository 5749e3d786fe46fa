//! The shipped systemd units pass `systemd-analyze verify` (with the
//! daemon's path pointed at this build), and the example policy and the
//! tmpfiles entry are what the daemon and systemd expect.

use std::process::Command;
use tcd_tests::{build_dir, repo_dir, require_tool};

#[test]
fn the_systemd_units_verify() {
    let analyze = require_tool("systemd-analyze", "package systemd");
    let dir = tempfile::tempdir().expect("temp dir");
    for unit in ["tcd.service", "tcd-bus.service"] {
        let text =
            std::fs::read_to_string(repo_dir().join("dist/systemd").join(unit)).expect("unit file");
        assert!(
            text.contains("ExecStart=/usr/bin/tcd "),
            "{unit}: installed path"
        );
        for needed in [
            "ExecReload=/bin/kill -HUP $MAINPID",
            "Conflicts=",
            "LimitCORE=0",
            "NoNewPrivileges=yes",
            "CapabilityBoundingSet=",
        ] {
            assert!(text.contains(needed), "{unit}: {needed}");
        }
        let here = text.replace(
            "ExecStart=/usr/bin/tcd ",
            &format!("ExecStart={} ", build_dir().join("tcd").display()),
        );
        let path = dir.path().join(unit);
        std::fs::write(&path, here).expect("write unit");
        let out = Command::new(&analyze)
            .arg("verify")
            .arg(&path)
            .output()
            .expect("systemd-analyze");
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{unit}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_tmpfiles_entry_makes_the_runtime_folder_private() {
    let text =
        std::fs::read_to_string(repo_dir().join("dist/tmpfiles/tcd.conf")).expect("tmpfiles");
    let line = text
        .lines()
        .find(|l| l.starts_with("d /run/tcd "))
        .expect("an entry for /run/tcd");
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(&fields[2..5], ["0700", "root", "root"], "{line}");
}
