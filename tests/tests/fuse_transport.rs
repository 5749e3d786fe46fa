//! How a mounted volume's requests reach the daemon: FUSE over io_uring
//! where the kernel is built with it (the default), or `/dev/fuse`
//! (`--fuse-transport classic`). Either way the same bytes land in the
//! container: one daemon writes through one transport, another reads the
//! files back through the other, and fsck finds the filesystem clean. The
//! queues live and die with the volume. Needs root, /dev/fuse, a kernel
//! with FUSE over io_uring, e2fsprogs.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tcd_tests::daemon::Daemon;
use tcd_tests::{require_tool, s};

const PASSWORD: &str = "correct horse battery staple x\n";
const SWITCH: &str = "/sys/module/fuse/parameters/enable_uring";

fn classic() -> Daemon {
    Daemon::start_with(&["--fuse-transport".as_ref(), "classic".as_ref()])
}

/// The daemon's io_uring instances (one per FUSE queue).
fn rings(d: &Daemon) -> usize {
    let fds = std::fs::read_dir(format!("/proc/{}/fd", d.pid())).expect("the daemon's fds");
    fds.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|l| l.to_string_lossy() == "anon_inode:[io_uring]")
        .count()
}

fn possible_cpus() -> usize {
    let list = std::fs::read_to_string("/sys/devices/system/cpu/possible").expect("cpu list");
    list.trim()
        .split(',')
        .map(|p| match p.split_once('-') {
            Some((a, b)) => b.parse::<usize>().expect("cpu") - a.parse::<usize>().expect("cpu") + 1,
            None => 1,
        })
        .sum()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A new ext4 volume of `size`.
fn create(d: &Daemon, volume: &Path, size: &str) {
    d.ok(
        &[
            "create",
            s(volume),
            "--size",
            size,
            "--filesystem",
            "ext4",
            "--pim",
            "1",
            "--password-stdin",
        ],
        PASSWORD,
    );
}

fn mount(d: &Daemon, volume: &Path, at: &Path) {
    std::fs::create_dir_all(at).expect("mount point");
    d.ok(
        &["mount", s(volume), s(at), "--pim", "1", "--password-stdin"],
        PASSWORD,
    );
}

/// Bytes that differ per file and offset, so a block landing in the wrong
/// place shows.
fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Four writers at once, each 4 KiB blocks in a scattered order with
/// direct I/O (many requests in flight), then one large sequential file.
fn write_files(dir: &Path) {
    std::thread::scope(|scope| {
        for n in 0..4u64 {
            scope.spawn(move || {
                let data = pattern(n, 4 << 20);
                let f = std::fs::OpenOptions::new()
                    .create(true)
                    .write(true)
                    .custom_flags(libc::O_DIRECT)
                    .open(dir.join(format!("random-{n}")))
                    .expect("file on the volume");
                let mut buf = AlignedBlock::new();
                for i in 0..1024usize {
                    let block = (i * 397) % 1024;
                    buf.0
                        .copy_from_slice(&data[block * 4096..(block + 1) * 4096]);
                    f.write_all_at(&buf.0, (block * 4096) as u64)
                        .expect("direct write");
                }
                f.sync_all().expect("fsync");
            });
        }
    });
    let mut big = File::create(dir.join("big")).expect("big file");
    big.write_all(&pattern(99, 24 << 20)).expect("write");
    big.sync_all().expect("fsync");
}

#[repr(C, align(4096))]
struct AlignedBlock([u8; 4096]);

impl AlignedBlock {
    fn new() -> Box<AlignedBlock> {
        Box::new(AlignedBlock([0; 4096]))
    }
}

fn read_back(dir: &Path) {
    let _ = std::fs::write("/proc/sys/vm/drop_caches", "3");
    for (name, seed, len) in (0..4u64)
        .map(|n| (format!("random-{n}"), n, 4usize << 20))
        .chain([("big".to_string(), 99, 24 << 20)])
    {
        let mut got = Vec::new();
        File::open(dir.join(&name))
            .and_then(|mut f| f.read_to_end(&mut got))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(got == pattern(seed, len), "{name} came back different");
    }
}

fn fsck_clean(d: &Daemon, volume: &Path) {
    let out = d.ok(
        &[
            "mount",
            s(volume),
            "--filesystem",
            "none",
            "--pim",
            "1",
            "--password-stdin",
        ],
        PASSWORD,
    );
    let device = out
        .split_whitespace()
        .find(|w| {
            w.trim_matches(|c| c == '(' || c == ')')
                .starts_with("/dev/loop")
        })
        .map(|w| w.trim_matches(|c| c == '(' || c == ')').to_owned())
        .unwrap_or_else(|| panic!("no device in {out:?}"));
    let fsck = Command::new(require_tool("fsck.ext4", "package e2fsprogs"))
        .args(["-fn", &device])
        .output()
        .expect("fsck");
    assert!(
        fsck.status.success(),
        "fsck: {}",
        String::from_utf8_lossy(&fsck.stdout)
    );
    d.ok(&["dismount", s(volume)], "");
}

fn log(d: &Daemon) -> String {
    std::fs::read_to_string(d.path("tcd.log")).unwrap_or_default()
}

#[test]
fn volumes_are_served_through_io_uring_and_read_back_through_dev_fuse() {
    assert!(
        Path::new(SWITCH).exists(),
        "{SWITCH} is missing: this test needs a kernel with FUSE over io_uring"
    );
    let mut d = Daemon::start();
    let volume = d.path("v.hc");
    create(&d, &volume, "96M");
    let mnt = d.path("mnt");
    mount(&d, &volume, &mnt);
    let queues = possible_cpus();
    assert!(
        log(&d).contains(&format!("served through io_uring ({queues} queues)")),
        "{}",
        log(&d)
    );
    assert_eq!(rings(&d), queues, "one ring per queue while mounted");
    write_files(&mnt);
    read_back(&mnt);
    d.ok(&["dismount", s(&mnt)], "");
    wait_until("the queues end with the volume", || rings(&d) == 0);
    d.stop();

    // The same container through /dev/fuse, in a daemon of its own.
    let c = classic();
    let mnt = c.path("mnt");
    mount(&c, &volume, &mnt);
    assert!(log(&c).contains("served through /dev/fuse"), "{}", log(&c));
    assert_eq!(rings(&c), 0, "no ring with the classic transport");
    read_back(&mnt);
    c.ok(&["dismount", s(&mnt)], "");
    fsck_clean(&c, &volume);
}

#[test]
fn what_the_classic_transport_wrote_reads_back_through_io_uring() {
    let c = classic();
    let volume = c.path("v.hc");
    create(&c, &volume, "96M");
    let mnt = c.path("mnt");
    mount(&c, &volume, &mnt);
    write_files(&mnt);
    c.ok(&["dismount", s(&mnt)], "");

    let d = Daemon::start();
    let mnt = d.path("mnt");
    mount(&d, &volume, &mnt);
    assert!(log(&d).contains("served through io_uring"), "{}", log(&d));
    read_back(&mnt);
    d.ok(&["dismount", s(&mnt)], "");
    fsck_clean(&d, &volume);
}

/// The connection cut under the daemon (`/sys/fs/fuse/connections/N/abort`)
/// ends the queues: their threads and rings go, the volume is failed and
/// the dismount says so.
#[test]
fn an_aborted_connection_ends_the_queues() {
    let d = Daemon::start();
    let volume = d.path("v.hc");
    create(&d, &volume, "32M");
    let mnt = d.path("mnt");
    mount(&d, &volume, &mnt);
    assert!(rings(&d) > 0, "mounted through io_uring");
    let id = d.list()[0]["object"]
        .as_str()
        .and_then(|o| o.rsplit('/').next())
        .expect("object path")
        .to_owned();
    let abort = connection(&d.path("run/fuse").join(id)).join("abort");
    std::fs::write(&abort, "1").expect("abort the connection");
    wait_until("the queues end with the connection", || rings(&d) == 0);
    let out = d.tcctl(&["dismount", s(&mnt)], "");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(11), "writes were lost: {said}");
    assert!(said.contains("writes to it were lost"), "{said}");
    let threads = std::fs::read_dir(format!("/proc/{}/task", d.pid()))
        .expect("threads")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|c| c.starts_with("tcd-fuse-q"))
        .count();
    assert_eq!(threads, 0, "no queue thread left");
}

fn connection(folder: &Path) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(folder)
        .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
        .dev();
    let connections = Path::new("/sys/fs/fuse/connections");
    if !connections.join("abort").exists()
        && !connections.join(libc::minor(dev).to_string()).exists()
    {
        let _ = Command::new(require_tool("mount", "package mount"))
            .args(["-t", "fusectl", "fusectl"])
            .arg(connections)
            .stderr(Stdio::null())
            .status();
    }
    let conn = connections.join(libc::minor(dev).to_string());
    assert!(conn.join("abort").exists(), "{} is missing", conn.display());
    conn
}
