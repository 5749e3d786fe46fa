//! Faults under a mounted volume, and that the user hears of each: the
//! FUSE connection aborted during writes, the host filesystem full, the
//! container made immutable, truncated or deleted while mounted. Each time
//! `tcctl list --json` shows the volume "failed" with a problem naming the
//! cause, and `tcctl dismount` dismounts it but exits 11 saying that
//! writes were lost. A truncated container is never written back to its
//! old size.
//!
//! The daemon is the real one on a private system bus
//! (`tcd_tests::system::System`). Needs root, /dev/fuse, dbus-daemon,
//! polkitd, setpriv, mkfs.ext4, chattr, losetup, dd, the fusectl
//! filesystem (mounted on /sys/fs/fuse/connections if it is not).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tcd_tests::require_tool;
use tcd_tests::s;
use tcd_tests::system::{OPEN_FAST, PASSWORD, System, User};

/// tcctl's exit code for a dismount after lost writes.
const WRITES_LOST: i32 = 11;

/// A new ext4 volume of root's at `path` (`--quick`: a sparse container).
fn create_as_root(sys: &System, path: &Path, size: &str, quick: bool) {
    let mut args = vec!["create", s(path), "--size", size, "--filesystem", "ext4"];
    if quick {
        args.push("--quick");
    }
    args.extend(OPEN_FAST);
    sys.ok(None, &args, &format!("{PASSWORD}\n"));
}

/// Mounts `volume` on `mount_point` (made) as root.
fn mount_as_root(sys: &System, volume: &Path, mount_point: &Path) {
    std::fs::create_dir_all(mount_point).expect("mount point");
    let mut args = vec!["mount", s(volume), s(mount_point)];
    args.extend(OPEN_FAST);
    sys.ok(None, &args, &format!("{PASSWORD}\n"));
}

/// Waits for `child` at most `limit`, killing its process group after.
fn wait_or_kill(child: &mut Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(st) = child.try_wait().expect("wait") {
            return st.code();
        }
        if Instant::now() >= deadline {
            // SAFETY: kill(2) with a process group this test started.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Writes `mib` MiB into `file` and flushes it to the volume, as root;
/// whether that worked (after a fault it should not).
fn write_and_sync(file: &Path, mib: u32) -> bool {
    let mut child = Command::new(require_tool("dd", "package coreutils"))
        .args([
            "if=/dev/urandom",
            &format!("of={}", file.display()),
            "bs=1M",
            &format!("count={mib}"),
            "conv=fsync",
            "status=none",
        ])
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("dd");
    wait_or_kill(&mut child, Duration::from_secs(120)) == Some(0)
}

/// Waits until `tcctl list --json` as `who` shows the volume of `host`
/// failed with a problem containing `cause`; its row.
fn wait_failed(sys: &System, who: Option<&User>, host: &Path, cause: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let list = sys.list(who);
        let row = list
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["volume"] == s(host)))
            .cloned()
            .unwrap_or_else(|| panic!("{} is not listed: {list}", host.display()));
        let named = row["problems"].as_array().is_some_and(|p| {
            p.iter()
                .any(|p| p.as_str().is_some_and(|p| p.contains(cause)))
        });
        if row["health"] == "failed" && named {
            return row;
        }
        assert!(
            Instant::now() < deadline,
            "the volume is not shown failed with a problem naming \"{cause}\": {row}\n{}",
            sys.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `tcctl dismount` as `who`: it dismounts, but exits 11 saying writes
/// were lost.
fn dismount_says_writes_were_lost(sys: &System, who: Option<&User>, host: &Path) {
    let out = sys.tcctl(who, &["dismount", s(host)], "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(WRITES_LOST),
        "dismount after lost writes: {stderr}\n{}",
        sys.log()
    );
    assert!(stderr.contains("writes to it were lost"), "{stderr}");
    assert!(
        sys.list(who).as_array().is_some_and(Vec::is_empty),
        "the volume is dismounted all the same"
    );
}

/// A filesystem mounted on a folder for the test's host files, taken
/// down on drop.
struct HostFs {
    at: PathBuf,
}

impl HostFs {
    /// A tmpfs of `size` (e.g. "40m").
    fn tmpfs(at: PathBuf, size: &str) -> HostFs {
        std::fs::create_dir_all(&at).expect("folder");
        let st = Command::new(require_tool("mount", "package mount"))
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size}"),
                "tcd-test-host",
            ])
            .arg(&at)
            .status()
            .expect("mount tmpfs");
        assert!(st.success(), "mount a tmpfs on {}", at.display());
        HostFs { at }
    }

    /// ext4 in an image file of `mib` MiB on a loop device (it keeps
    /// attributes such as immutable, which tmpfs does not).
    fn ext4(at: PathBuf, image: &Path, mib: u64) -> HostFs {
        tcd_tests::new_host(image, mib << 20);
        let st = Command::new(require_tool("mkfs.ext4", "package e2fsprogs"))
            .args(["-q", "-F"])
            .arg(image)
            .status()
            .expect("mkfs.ext4");
        assert!(st.success(), "mkfs.ext4 {}", image.display());
        std::fs::create_dir_all(&at).expect("folder");
        let st = Command::new(require_tool("mount", "package mount"))
            .args(["-o", "loop"])
            .arg(image)
            .arg(&at)
            .status()
            .expect("mount -o loop");
        assert!(
            st.success(),
            "mount {} on {}",
            image.display(),
            at.display()
        );
        HostFs { at }
    }
}

impl Drop for HostFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.at).status();
    }
}

/// The FUSE connection serving the volume `id` of `sys`'s daemon: its
/// folder in `/sys/fs/fuse/connections` (fusectl mounted if it is not).
fn fuse_connection(sys: &System, id: &str) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let folder = sys.dir.path().join("run/fuse").join(id);
    let dev = std::fs::metadata(&folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .dev();
    let connections = Path::new("/sys/fs/fuse/connections");
    let conn = connections.join(libc::minor(dev).to_string());
    if !conn.exists() {
        // Another test may mount it at the same moment: only the result
        // matters.
        let _ = Command::new(require_tool("mount", "package mount"))
            .args(["-t", "fusectl", "fusectl"])
            .arg(connections)
            .stderr(Stdio::null())
            .status();
    }
    assert!(
        conn.join("abort").exists(),
        "{} is missing: this test needs the fusectl filesystem",
        conn.display()
    );
    conn
}

#[test]
fn an_aborted_fuse_connection_fails_the_volume_and_its_dismount_says_writes_were_lost() {
    let sys = System::start();
    let vol = sys.dir.path().join("abort.hc");
    let mnt = sys.dir.path().join("abort-mnt");
    create_as_root(&sys, &vol, "24M", false);
    mount_as_root(&sys, &vol, &mnt);
    let list = sys.list(None);
    assert_eq!(list[0]["health"], "ok", "{list}");
    let id = list[0]["object"]
        .as_str()
        .and_then(|o| o.rsplit('/').next())
        .expect("object path")
        .to_owned();
    let abort = fuse_connection(&sys, &id).join("abort");

    // Writes that go on until one fails.
    let file = mnt.join("stream");
    let mut writer = Command::new("sh")
        .args([
            "-c",
            &format!(
                "while dd if=/dev/zero of={} bs=1M count=4 conv=fsync status=none; do :; done; exit 1",
                file.display()
            ),
        ])
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("writer");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::fs::metadata(&file).map_or(0, |m| m.len()) == 0 {
        assert!(Instant::now() < deadline, "the writer never wrote");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::write(&abort, "1").expect("abort the FUSE connection");
    let ended = wait_or_kill(&mut writer, Duration::from_secs(60));
    assert_eq!(ended, Some(1), "writes after the abort fail (and end)");

    wait_failed(&sys, None, &vol, "FUSE connection");
    dismount_says_writes_were_lost(&sys, None, &vol);
}

#[test]
fn a_full_host_fails_the_volume_and_its_dismount_says_writes_were_lost() {
    let sys = System::start();
    // A sparse container on a small tmpfs: its holes need room to fill.
    let host = HostFs::tmpfs(sys.dir.path().join("small"), "40m");
    let vol = host.at.join("full.hc");
    let mnt = sys.dir.path().join("full-mnt");
    create_as_root(&sys, &vol, "32M", true);
    mount_as_root(&sys, &vol, &mnt);
    // Fill the host to the last byte.
    let _ = Command::new(require_tool("dd", "package coreutils"))
        .args(["if=/dev/zero", "bs=1M", "status=none"])
        .arg(format!("of={}", host.at.join("filler").display()))
        .stderr(Stdio::null())
        .status()
        .expect("dd");
    assert!(
        !write_and_sync(&mnt.join("data"), 16),
        "writing 16 MiB into the volume on a full host fails"
    );
    wait_failed(&sys, None, &vol, "No space left on device");
    dismount_says_writes_were_lost(&sys, None, &vol);
}

#[test]
fn an_immutable_container_fails_the_volume_and_its_dismount_says_writes_were_lost() {
    let chattr = require_tool("chattr", "package e2fsprogs");
    let sys = System::start();
    let host = HostFs::ext4(
        sys.dir.path().join("ext4-host"),
        &sys.dir.path().join("ext4-host.img"),
        64,
    );
    let vol = host.at.join("immutable.hc");
    let mnt = sys.dir.path().join("immutable-mnt");
    create_as_root(&sys, &vol, "24M", false);
    mount_as_root(&sys, &vol, &mnt);
    let st = Command::new(&chattr)
        .arg("+i")
        .arg(&vol)
        .status()
        .expect("chattr");
    assert!(st.success(), "chattr +i");
    let written = write_and_sync(&mnt.join("data"), 4);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert!(!written, "writing into an immutable container fails");
        wait_failed(&sys, None, &vol, "Operation not permitted");
        dismount_says_writes_were_lost(&sys, None, &vol);
    }));
    // The host filesystem comes down only without the flag.
    let _ = Command::new(&chattr).arg("-i").arg(&vol).status();
    let _ = sys.tcctl(None, &["dismount", "--all", "--force"], "");
    if let Err(e) = result {
        std::panic::resume_unwind(e);
    }
}

#[test]
fn a_truncated_container_is_not_written_back_and_the_volume_fails() {
    let sys = System::start();
    let vol = sys.dir.path().join("truncated.hc");
    let mnt = sys.dir.path().join("truncated-mnt");
    create_as_root(&sys, &vol, "24M", false);
    mount_as_root(&sys, &vol, &mnt);
    // Cut to its first 256 KiB: the headers and a little data.
    let cut = 256 << 10;
    tcd_tests::open_rw(&vol).set_len(cut).expect("truncate");
    assert!(
        !write_and_sync(&mnt.join("data"), 4),
        "writes past the container's end fail"
    );
    wait_failed(&sys, None, &vol, "truncated");
    dismount_says_writes_were_lost(&sys, None, &vol);
    assert_eq!(
        std::fs::metadata(&vol).expect("container").len(),
        cut,
        "the container never grows back"
    );
}

#[test]
fn a_deleted_container_fails_its_owners_volume_at_once_and_the_watcher_says_so() {
    let sys = System::start();
    let alice = &sys.users[0];
    let vol = sys.create_volume(alice, "deleted.hc", "24M");
    let mnt = alice.path("mnt");
    sys.mount(alice, &vol, &mnt);
    // The user's session watcher, as its autostart entry runs it.
    let mut watch = tcd_tests::daemon::Stopped(
        sys.tcctl_command(Some(alice))
            .arg("watch")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("tcctl watch"),
    );
    // Time for its match rule to reach the bus and its first call.
    std::thread::sleep(Duration::from_secs(1));
    std::fs::remove_file(&vol).expect("delete the container");
    // Listing looks at the host: no write is needed to notice.
    let row = sys.list(Some(alice))[0].clone();
    assert_eq!(row["health"], "failed", "{row}");
    assert!(
        row["problems"].to_string().contains("deleted"),
        "a problem names the deletion: {row}"
    );
    assert!(
        !write_and_sync(&mnt.join("data"), 4),
        "writes to a deleted container fail"
    );
    let stdout = watch.0.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the watcher reports the failure");
    assert!(
        line.contains("failed") && line.contains("deleted.hc") && line.contains("deleted"),
        "{line}"
    );
    dismount_says_writes_were_lost(&sys, Some(alice), &vol);
}
