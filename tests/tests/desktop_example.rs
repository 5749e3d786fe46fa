//! The README's desktop integration, `dist/examples/tcd-desktop.py`, run
//! as a user would run it against the real daemon on a private bus given
//! as the system bus: it mounts an ext4 volume (the container opened by
//! the script, the password from stdin), names the daemon's error for a
//! wrong password, dismounts; its watcher lists the volumes present and
//! prints each one that appears, goes, or is dismounted when idle.
//!
//! Needs root, /dev/fuse, losetup, mkfs.ext4, dbus-daemon, Debian's
//! /usr/bin/python3 with python3-jeepney.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};
use tcd_tests::daemon::{BusDaemon, Daemon, Stopped};
use tcd_tests::s;
use tcd_tests::{PYTHON, require_python_with_jeepney};
use tcd_tests::{repo_dir, require_root_and_fuse, require_tool};

const PW: &str = "desktop words\n";

fn script() -> PathBuf {
    repo_dir().join("dist/examples/tcd-desktop.py")
}

/// An ext4 volume of 24 MiB, SHA-512 only (fast to open).
fn create(d: &Daemon, path: &Path) {
    d.ok(
        &[
            "create",
            s(path),
            "--size",
            "24M",
            "--hash",
            "sha512",
            "--filesystem",
            "ext4",
            "--password-stdin",
        ],
        PW,
    );
}

/// Runs a program with `stdin` as its input, on the test's "system" bus.
fn run(program: &Path, args: &[&str], stdin: &str, bus: &str) -> Output {
    let mut child = Command::new(program)
        .args(args)
        .env("DBUS_SYSTEM_BUS_ADDRESS", bus)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run {}: {e}", program.display()));
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    child.wait_with_output().expect("output")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The watcher's lines, read from its output in a thread.
struct Watcher {
    _child: Stopped,
    lines: Receiver<String>,
    seen: Vec<String>,
    stderr: PathBuf,
}

impl Watcher {
    /// Waits up to 20 s for a line that `wanted` accepts; returns it.
    fn expect(&mut self, what: &str, wanted: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if wanted(&line) {
                        return line;
                    }
                }
                Err(e) => panic!(
                    "the watcher did not print {what} ({}); it printed {:?}, stderr: {}",
                    if e == RecvTimeoutError::Timeout {
                        "timed out"
                    } else {
                        "it exited"
                    },
                    self.seen,
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                ),
            }
        }
    }
}

#[test]
fn the_desktop_example_mounts_dismounts_and_watches_over_the_system_bus() {
    require_root_and_fuse();
    require_tool("mkfs.ext4", "package e2fsprogs");
    require_python_with_jeepney();
    let dir = tempfile::tempdir().expect("temp dir");
    let p = |n: &str| dir.path().join(n);
    let (early, desk, idle) = (p("early.hc"), p("desk.hc"), p("idle.hc"));
    {
        let d = Daemon::start();
        for v in [&early, &desk, &idle] {
            create(&d, v);
        }
    }

    // The daemon on a bus of the test's, as if it were the system bus.
    let d = BusDaemon::start();
    let bus = &d.bus;
    let tcctl = |args: &[&str], stdin: &str| d.ok(args, stdin);
    let python = Path::new(PYTHON);
    let example = script();
    let desktop = |args: &[&str], stdin: &str| -> Output {
        run(
            python,
            &[&[s(&example)], args].concat(),
            stdin,
            &bus.address,
        )
    };

    // A volume mounted before the watcher starts: it is listed as present.
    tcctl(
        &["mount", s(&early), "--hash", "sha512", "--password-stdin"],
        PW,
    );
    let stderr = p("watch.err");
    let mut child = Command::new(python)
        .arg(&example)
        .arg("watch")
        .env("DBUS_SYSTEM_BUS_ADDRESS", &bus.address)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&stderr).expect("watch.err"))
        .spawn()
        .expect("start the watcher");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut watcher = Watcher {
        _child: Stopped(child),
        lines,
        seen: Vec::new(),
        stderr,
    };
    let present = watcher.expect("the volume present", |l| l.starts_with("present "));
    let early_mp = present
        .split(" on ")
        .nth(1)
        .expect("present ... on MOUNT POINT")
        .to_owned();
    assert!(
        present.starts_with("present /org/tcd/Tcd1/volumes/")
            && present.contains(&format!(" {} on ", s(&early))),
        "{present}"
    );
    assert!(
        Path::new(&early_mp).join("lost+found").is_dir(),
        "{present}"
    );

    // Mount through the example: the password on stdin.
    let out = desktop(&["mount", s(&desk), "--hash", "sha512"], PW);
    assert!(
        out.status.success(),
        "mount through the example: {}\n{}",
        text(&out.stderr),
        d.log()
    );
    let said = text(&out.stdout);
    let mut said_lines = said.lines();
    let object = said_lines.next().expect("the object path").to_owned();
    assert!(object.starts_with("/org/tcd/Tcd1/volumes/"), "{said}");
    let mount_point = said_lines
        .next()
        .and_then(|l| l.strip_prefix("mounted on "))
        .unwrap_or_else(|| panic!("no mount point in {said:?}"))
        .to_owned();
    assert!(
        Path::new(&mount_point).join("lost+found").is_dir(),
        "the ext4 filesystem is at {mount_point}"
    );
    assert!(
        tcctl(&["list"], "").contains(&mount_point),
        "tcctl lists {mount_point}"
    );
    let added = format!("added {object} {} on {mount_point}", s(&desk));
    watcher.expect(&added, |l| l == added);

    // A wrong password: exit 1, the daemon's error named.
    let out = desktop(&["mount", s(&idle), "--hash", "sha512"], "not it\n");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("org.tcd.Error.WrongPassword"),
        "{}",
        text(&out.stderr)
    );

    // Dismount through the example, by the container's name.
    let out = desktop(&["dismount", s(&desk)], "");
    assert!(out.status.success(), "dismount: {}", text(&out.stderr));
    assert!(
        !Path::new(&mount_point).join("lost+found").exists(),
        "{mount_point} unmounted"
    );
    assert!(!tcctl(&["list"], "").contains(s(&desk)), "dismounted");
    let removed = format!("removed {object}");
    watcher.expect(&removed, |l| l == removed);

    // A favorite dismounted after 2 s idle: the watcher reports it.
    tcctl(
        &["favorites", "add", "idle", s(&idle), "--dismount-idle", "2"],
        "",
    );
    tcctl(&["favorites", "mount", "idle", "--password-stdin"], PW);
    watcher.expect("the idle volume added", |l| {
        l.starts_with("added ") && l.contains(&format!(" {} on ", s(&idle)))
    });
    let auto = format!("auto-dismounted {} (idle)", s(&idle));
    watcher.expect(&auto, |l| l == auto);
    assert!(
        !tcctl(&["list"], "").contains(s(&idle)),
        "dismounted when idle"
    );
    assert!(
        tcctl(&["list"], "").contains(s(&early)),
        "the volume mounted without an idle time stays"
    );
    tcctl(&["dismount", "--all"], "");
}
