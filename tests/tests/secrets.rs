//! Secrets stay inside the daemon: after a session of creating, mounting,
//! writing, changing a password, a wrong password, a header backup and the
//! password cache (cached, used, wiped), the
//! daemon's whole log at trace level and every message it sent on the bus
//! (replies, errors, signals), as `dbus-monitor` saw them, hold no
//! password. The daemon cannot be dumped and its memory is locked.
//! Needs root, /dev/fuse, dbus-daemon, dbus-monitor, dbus-send, mkfs.ext4.

use std::process::{Command, Stdio};
use std::time::Duration;
use tcd_tests::daemon::{PrivateBus, Stopped};
use tcd_tests::{build_dir, require_root_and_fuse, require_tool};

const FIRST: &str = "Kx7-first-secret-Qm2";
const SECOND: &str = "Vb4-second-secret-Lp9";
const WRONG: &str = "Hz1-wrong-secret-Tc6";

/// Blocks of `dbus-monitor` output (one per message) sent by `sender`.
fn sent_by<'a>(monitor: &'a str, sender: &str) -> Vec<&'a str> {
    let starts = ["method call ", "method return ", "signal ", "error "];
    let mut blocks = Vec::new();
    let mut start = None;
    let mut offset = 0;
    for line in monitor.split_inclusive('\n') {
        if starts.iter().any(|s| line.starts_with(s)) {
            if let Some(s) = start {
                blocks.push(&monitor[s..offset]);
            }
            start = Some(offset);
        }
        offset += line.len();
    }
    if let Some(s) = start {
        blocks.push(&monitor[s..]);
    }
    let tag = format!("sender={sender} ");
    blocks.into_iter().filter(|b| b.contains(&tag)).collect()
}

/// The password as `dbus-monitor` may print it: as text, or as hex bytes.
fn forms(password: &str) -> [String; 2] {
    let hex: Vec<String> = password.bytes().map(|b| format!("{b:02x}")).collect();
    [password.to_owned(), hex.join(" ")]
}

#[test]
fn no_password_reaches_the_log_or_the_bus_and_the_daemon_cannot_be_dumped() {
    require_root_and_fuse();
    require_tool("mkfs.ext4", "package e2fsprogs");
    let monitor_tool = require_tool("dbus-monitor", "package dbus");
    let dir = tempfile::tempdir().expect("temp dir");
    let bus = PrivateBus::session();
    let address = bus.address.clone();

    let capture = dir.path().join("bus.txt");
    let monitor = Stopped(
        Command::new(monitor_tool)
            .args(["--address", &address])
            .stdout(std::fs::File::create(&capture).expect("capture"))
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-monitor"),
    );
    let log = dir.path().join("tcd.log");
    let daemon = Stopped(
        Command::new(build_dir().join("tcd"))
            .args(["--session", "--runtime-dir"])
            .arg(dir.path().join("run"))
            .arg("--policy")
            .arg(dir.path().join("policy.toml"))
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .env("TCD_LOG", "trace")
            .stderr(std::fs::File::create(&log).expect("log"))
            .spawn()
            .expect("tcd --session"),
    );
    let tcctl = |args: &[&str], stdin: &str| bus.tcctl(args, stdin);
    let ok = |args: &[&str], stdin: &str| {
        let out = tcctl(args, stdin);
        assert!(
            out.status.success(),
            "tcctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    bus.wait_for_tcd();

    // The session.
    let vol = dir.path().join("s.vc");
    let v = vol.to_str().expect("utf-8");
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let m = mnt.to_str().expect("utf-8");
    let first = format!("{FIRST}\n");
    let second = format!("{SECOND}\n");
    let pim = ["--pim", "1", "--password-stdin"];
    let with = |a: &[&'static str], extra: &[&str]| -> Vec<String> {
        a.iter()
            .chain(extra)
            .chain(&pim)
            .map(|s| s.to_string())
            .collect()
    };
    let run = |args: Vec<String>, stdin: &str| {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(&a, stdin)
    };
    run(
        with(
            &["create", "--size", "32M", "--filesystem", "ext4", "--force"],
            &[v],
        ),
        &first,
    );
    run(with(&["mount"], &[v, m]), &first);
    std::fs::write(mnt.join("note"), b"hello").expect("write");
    ok(&["dismount", m], "");
    let wrong = tcctl(
        &["mount", v, m, "--pim", "1", "--password-stdin"],
        &format!("{WRONG}\n"),
    );
    assert_eq!(wrong.status.code(), Some(2), "wrong password");
    let out = tcctl(
        &[
            "change-password",
            v,
            "--pim",
            "1",
            "--force",
            "--new-pim",
            "1",
            "--password-stdin",
        ],
        &format!("{FIRST}\n{SECOND}\n"),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let backup = dir.path().join("s.hdr");
    run(
        with(&["backup-header"], &[v, backup.to_str().expect("utf-8")]),
        &second,
    );
    run(with(&["info", "--json"], &[v]), &second);
    // TrueCrypt's password cache: asked for at one mount, used by the
    // next without a password, gone after a wipe.
    run(with(&["mount", "--cache"], &[v, m]), &second);
    ok(&["dismount", m], "");
    ok(&["mount", v, m, "--cached"], "");
    assert_eq!(std::fs::read(mnt.join("note")).expect("read"), b"hello");
    ok(&["dismount", m], "");
    let wiped = ok(&["wipe-cache"], "");
    assert_eq!(
        String::from_utf8_lossy(&wiped.stdout),
        "1 cached password wiped\n"
    );
    let wiped = ok(&["wipe-cache"], "");
    assert_eq!(
        String::from_utf8_lossy(&wiped.stdout),
        "0 cached passwords wiped\n"
    );
    let again = tcctl(&["mount", v, m, "--cached"], "");
    assert_eq!(again.status.code(), Some(2), "nothing cached any more");
    // As TrueCrypt: the cache first, then the password given.
    let fallback = run(with(&["mount", "--cached"], &[v, m]), &second);
    let said = String::from_utf8_lossy(&fallback.stderr);
    assert!(
        said.contains(&format!(
            "no password cached for you opens {v}: asking for its password"
        )) && !said.contains("mount it without --cached"),
        "{fallback:?}"
    );
    ok(&["dismount", m], "");
    run(with(&["mount"], &[v, m]), &second);

    // The running daemon: no core dumps, memory locked.
    let pid = daemon.0.id();
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits");
    let core = limits
        .lines()
        .find(|l| l.starts_with("Max core file size"))
        .expect("core limit");
    assert!(
        core.split_whitespace().filter(|w| *w == "0").count() >= 2,
        "core size 0: {core}"
    );
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    let locked: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmLck:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .expect("VmLck");
    assert!(locked > 0, "memory locked: VmLck {locked} kB");
    ok(&["dismount", "--all"], "");

    // Everything the daemon said, and everything it logged.
    drop(daemon);
    std::thread::sleep(Duration::from_millis(300));
    drop(monitor);
    let log_text = std::fs::read_to_string(&log).expect("log");
    assert!(
        log_text.contains("TRACE"),
        "the log is at trace level: {} bytes",
        log_text.len()
    );
    let bus_text = std::fs::read_to_string(&capture).expect("capture");
    let owner = daemon_name(&bus_text);
    let from_daemon = sent_by(&bus_text, &owner);
    assert!(
        from_daemon.iter().any(|b| b.starts_with("method return ")),
        "the capture holds the daemon's replies"
    );
    for secret in [FIRST, SECOND, WRONG] {
        for form in forms(secret) {
            assert!(!log_text.contains(&form), "{secret} in the daemon's log");
            for b in &from_daemon {
                assert!(
                    !b.contains(&form),
                    "{secret} in a message from the daemon: {b}"
                );
            }
        }
    }
    // The capture is able to show a password: the client's own calls
    // carry it (to the daemon, as they must).
    assert!(
        forms(FIRST).iter().any(|f| bus_text.contains(f)),
        "dbus-monitor shows call arguments"
    );
}

/// The unique name that took org.tcd.Tcd1, from the bus's
/// NameOwnerChanged signal (name, old owner, new owner) in the capture.
fn daemon_name(capture: &str) -> String {
    sent_by(capture, "org.freedesktop.DBus")
        .into_iter()
        .filter(|b| b.contains("member=NameOwnerChanged"))
        .find_map(|b| {
            let strings: Vec<&str> = b
                .lines()
                .filter_map(|l| l.trim().strip_prefix("string \""))
                .map(|s| s.trim_end_matches('"'))
                .collect();
            (strings.first() == Some(&"org.tcd.Tcd1") && strings.len() == 3)
                .then(|| strings[2].to_owned())
        })
        .expect("the daemon took its name")
}
