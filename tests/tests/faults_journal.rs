//! A read-only mount after an unclean stop: the daemon is SIGKILLed while
//! a writer appends fsync'ed records; the next daemon mounts the volume
//! read-only and every acknowledged record is there (the journal or log
//! replayed into memory), while the container's bytes stay as they were.
//! For ext4 and XFS. Needs root, /dev/fuse, losetup, blkid, python3, and
//! each filesystem's mkfs and checker (e2fsprogs, xfsprogs).

use sha2::{Digest, Sha256};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tcd_tests::daemon::Daemon;
use tcd_tests::require_tool;

const PASSWORD: &str = "durable words\n";

/// Appends numbered records to `records`, each fsync'ed, and every tenth
/// also as a file of its own (file and folder fsync'ed); prints each
/// number once it is durable. Stops at the first error (the daemon gone).
const WRITER: &str = r#"
import os, sys
folder = sys.argv[1]
log = os.open(os.path.join(folder, "records"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
n = 0
try:
    while True:
        os.write(log, b"record %08d %s\n" % (n, b"x" * 200))
        os.fsync(log)
        if n % 10 == 0:
            fd = os.open(os.path.join(folder, "f%08d" % n), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, b"file %08d\n" % n)
            os.fsync(fd)
            os.close(fd)
            os.fsync(dir_fd)
        print(n, flush=True)
        n += 1
except OSError:
    sys.exit(0)
"#;

fn sha256(path: &Path) -> Vec<u8> {
    Sha256::digest(std::fs::read(path).expect("read the container")).to_vec()
}

/// The record numbers in `records`, in order.
fn records(folder: &Path) -> Vec<u64> {
    std::fs::read_to_string(folder.join("records"))
        .expect("the records file is there")
        .lines()
        .filter_map(|l| l.strip_prefix("record ")?.get(..8)?.parse().ok())
        .collect()
}

/// Every record up to `last` acknowledged is in `folder`: each line of
/// the records file, each tenth record's own file.
fn assert_all_acknowledged(folder: &Path, last: u64, view: &str) {
    let got = records(folder);
    let missing: Vec<u64> = (0..=last).filter(|n| !got.contains(n)).collect();
    assert!(
        missing.is_empty(),
        "{view}: {} of {} acknowledged records missing (first {:?}); the file shows {} records",
        missing.len(),
        last + 1,
        missing.first(),
        got.len()
    );
    for n in (0..=last).step_by(10) {
        let p = folder.join(format!("f{n:08}"));
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| {
            panic!("{view}: acknowledged file {} is missing: {e}", p.display())
        });
        assert_eq!(text, format!("file {n:08}\n"), "{view}");
    }
}

/// The checker of `fs`, in its read-only mode.
fn checker(fs: &str) -> (std::path::PathBuf, &'static [&'static str]) {
    match fs {
        "ext4" => (
            require_tool("fsck.ext4", "package e2fsprogs"),
            &["-n", "-f"],
        ),
        "xfs" => (require_tool("xfs_repair", "package xfsprogs"), &["-n"]),
        _ => unreachable!("no checker for {fs}"),
    }
}

fn fsck_clean(d: &Daemon, volume: &str, fs: &str) {
    d.ok(
        &[
            "mount",
            volume,
            "--password-stdin",
            "--pim",
            "1",
            "--filesystem",
            "none",
            "--readonly",
        ],
        PASSWORD,
    );
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    let (tool, args) = checker(fs);
    let out = Command::new(tool)
        .args(args)
        .arg(&device)
        .output()
        .expect("fsck");
    assert!(
        out.status.success(),
        "{fs}: the checker finds the filesystem clean: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    d.ok(&["dismount", &device], "");
}

#[test]
fn a_read_only_ext4_mount_after_a_killed_daemon_shows_every_fsynced_record() {
    require_tool("mkfs.ext4", "package e2fsprogs");
    killed_during_writes_then_read_only("ext4", "64M");
}

#[test]
fn a_read_only_xfs_mount_after_a_killed_daemon_shows_every_fsynced_record() {
    require_tool("mkfs.xfs", "package xfsprogs");
    // mkfs.xfs makes nothing under 300 MB.
    killed_during_writes_then_read_only("xfs", "320M");
}

fn killed_during_writes_then_read_only(fs: &str, size: &str) {
    checker(fs);
    let python = require_tool("python3", "package python3");
    let mut d = Daemon::start();
    let vol = d.path("v.vc");
    let v = vol.to_str().expect("utf-8");
    d.ok(
        &[
            "create",
            v,
            "--size",
            size,
            "--filesystem",
            fs,
            "--pim",
            "1",
            "--force",
            "--password-stdin",
        ],
        PASSWORD,
    );
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let m = mnt.to_str().expect("utf-8");
    d.ok(&["mount", v, m, "--pim", "1", "--password-stdin"], PASSWORD);

    let mut writer = Command::new(&python)
        .args(["-c", WRITER, m])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3");
    let acknowledged = Arc::new(Mutex::new(None::<u64>));
    let reader = {
        let out = writer.stdout.take().expect("stdout");
        let acknowledged = Arc::clone(&acknowledged);
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if let Ok(n) = line.trim().parse::<u64>() {
                    *acknowledged.lock().unwrap() = Some(n);
                }
            }
        })
    };
    // Long enough for many commits, shorter than ext4's checkpointing:
    // the last records live in the journal only.
    let deadline = Instant::now() + Duration::from_secs(20);
    while acknowledged.lock().unwrap().is_none_or(|n| n < 200) {
        assert!(Instant::now() < deadline, "the writer made no progress");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    d.kill();
    // The writer sees its next fsync fail and stops.
    let deadline = Instant::now() + Duration::from_secs(30);
    while writer.try_wait().expect("wait").is_none() {
        if Instant::now() > deadline {
            let _ = writer.kill();
            panic!("the writer did not stop after the daemon was killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reader.join().expect("reader");
    let last = acknowledged.lock().unwrap().expect("records acknowledged");

    // The next daemon cleans up after the killed one; the volume is
    // mounted read-only.
    d.spawn();
    let before = sha256(&vol);
    d.ok(
        &[
            "mount",
            v,
            m,
            "--pim",
            "1",
            "--password-stdin",
            "--readonly",
        ],
        PASSWORD,
    );
    assert_eq!(d.list()[0]["read_only"], true);
    assert_eq!(d.list()[0]["filesystem"], fs);
    assert_all_acknowledged(&mnt, last, &format!("{fs}, read-only mount"));
    // Read-only to its users.
    assert!(
        std::fs::write(mnt.join("new"), b"no").is_err(),
        "the read-only mount refused a write"
    );
    d.wait_for_log(
        "the filesystem's journal was replayed into memory",
        "the daemon says the read-only view is a replayed one",
    );
    d.ok(&["dismount", m], "");
    assert_eq!(
        sha256(&vol),
        before,
        "the read-only mount left the container's bytes as they were"
    );

    // Read-write, the journal replays onto the volume; the same records,
    // and a clean filesystem.
    d.ok(&["mount", v, m, "--pim", "1", "--password-stdin"], PASSWORD);
    assert_all_acknowledged(&mnt, last, &format!("{fs}, read-write mount"));
    d.ok(&["dismount", m], "");
    fsck_clean(&d, v, fs);
}
