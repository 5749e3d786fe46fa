//! Started by systemd with standard error connected to the journal
//! (`$JOURNAL_STREAM`), the daemon logs to journald; otherwise to standard
//! error (every other test reads that). On a machine without journald (CI)
//! the test listens on the journal's own socket; where journald runs, it
//! asks `journalctl`. Needs root and /dev/fuse.

use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tcd_tests::daemon::{Stopped, send_signal};
use tcd_tests::{build_dir, require_root_and_fuse, require_tool};

const JOURNAL: &str = "/run/systemd/journal/socket";

/// The fields of one entry in journald's native protocol: `KEY=value\n`,
/// or `KEY\n`, a little-endian u64 length, the value and `\n`.
fn fields(mut b: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let Some(nl) = b.iter().position(|c| *c == b'\n') else {
            break;
        };
        let line = &b[..nl];
        if let Some(eq) = line.iter().position(|c| *c == b'=') {
            out.push((
                String::from_utf8_lossy(&line[..eq]).into_owned(),
                String::from_utf8_lossy(&line[eq + 1..]).into_owned(),
            ));
            b = &b[nl + 1..];
        } else {
            let key = String::from_utf8_lossy(line).into_owned();
            let rest = &b[nl + 1..];
            let Some(len) = rest.get(..8).map(|l| {
                let mut a = [0u8; 8];
                a.copy_from_slice(l);
                u64::from_le_bytes(a) as usize
            }) else {
                break;
            };
            let Some(value) = rest.get(8..8 + len) else {
                break;
            };
            out.push((key, String::from_utf8_lossy(value).into_owned()));
            b = rest.get(8 + len + 1..).unwrap_or(&[]);
        }
    }
    out
}

#[test]
fn under_systemd_the_daemon_logs_to_the_journal() {
    require_root_and_fuse();
    let dir = tempfile::tempdir().expect("temp dir");
    // Our own journal, unless a real one runs.
    let made_folder = !Path::new("/run/systemd/journal").exists();
    let ours = if Path::new(JOURNAL).exists() {
        None
    } else {
        std::fs::create_dir_all("/run/systemd/journal").expect("journal folder");
        let sock = UnixDatagram::bind(JOURNAL).expect("bind the journal socket");
        sock.set_read_timeout(Some(Duration::from_millis(200)))
            .expect("timeout");
        Some(sock)
    };
    struct Remove(bool, bool);
    impl Drop for Remove {
        fn drop(&mut self) {
            if self.0 {
                let _ = std::fs::remove_file(JOURNAL);
            }
            if self.1 {
                let _ = std::fs::remove_dir("/run/systemd/journal");
                let _ = std::fs::remove_dir("/run/systemd");
            }
        }
    }
    let _remove = Remove(ours.is_some(), made_folder);

    // Standard error goes to a file that $JOURNAL_STREAM names, as systemd
    // does with its journal stream.
    let stderr_path = dir.path().join("stderr");
    let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
    let meta = stderr.metadata().expect("stat");
    let socket = dir.path().join("tcd.sock");
    let daemon = Stopped(
        Command::new(build_dir().join("tcd"))
            .arg("--socket")
            .arg(&socket)
            .arg("--runtime-dir")
            .arg(dir.path().join("run"))
            .arg("--policy")
            .arg(dir.path().join("policy.toml"))
            .env("JOURNAL_STREAM", format!("{}:{}", meta.dev(), meta.ino()))
            .env("TCD_LOG", "info")
            .stderr(stderr)
            .stdout(Stdio::null())
            .spawn()
            .expect("tcd"),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "tcd did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let marker = format!("F_SOCKET={}", socket.display());
    let found = match &ours {
        Some(sock) => {
            let mut buf = vec![0u8; 1 << 16];
            let mut seen = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if let Ok(n) = sock.recv(&mut buf) {
                    seen.push(fields(&buf[..n]));
                }
                let listening = seen
                    .iter()
                    .find(|e| e.iter().any(|(k, v)| k == "MESSAGE" && v == "listening"));
                if let Some(e) = listening {
                    break e
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join("\n");
                }
                assert!(Instant::now() < deadline, "no journal entry: {seen:?}");
            }
        }
        None => {
            let journalctl = require_tool("journalctl", "package systemd");
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                let out = Command::new(&journalctl)
                    .args(["-t", "tcd", "-o", "verbose", "--since", "-1min"])
                    .output()
                    .expect("journalctl");
                let text = String::from_utf8_lossy(&out.stdout).into_owned();
                if text.contains(&socket.display().to_string()) {
                    break text;
                }
                assert!(Instant::now() < deadline, "not in the journal");
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    };
    assert!(found.contains("SYSLOG_IDENTIFIER=tcd"), "{found}");
    assert!(
        found.contains(&marker) || found.contains(&socket.display().to_string()),
        "{found}"
    );
    let mut daemon = daemon;
    send_signal(daemon.0.id(), 15);
    assert!(daemon.0.wait().expect("wait").success());
    let on_stderr = std::fs::read_to_string(&stderr_path).expect("stderr");
    assert!(
        on_stderr.is_empty(),
        "nothing on standard error: {on_stderr}"
    );
}
