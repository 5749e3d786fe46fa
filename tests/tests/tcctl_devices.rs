//! `tcctl mount-devices` (TrueCrypt's Auto-Mount Devices, VeraCrypt's
//! `--auto-mount devices`): one password tried on every block device that
//! nothing uses; what opens is mounted, what does not is left alone, and a
//! device in use is never tried.
//!
//! Its own test file: it tries every loop device on the machine, so no
//! other test may hold volumes on loop devices meanwhile. Needs root,
//! /dev/fuse, losetup, mkfs.ext4.

use std::path::{Path, PathBuf};
use std::process::Command;
use tcd_tests::daemon::Daemon;
use tcd_tests::loop_device::LoopDevice;
use tcd_tests::{require_root_and_fuse, require_tool, s};

/// No other volume on this machine has it: only this test's volume
/// opens, whatever other devices are attached.
const PW: &str = "tcctl_devices: auto-mount devices\n";
const OPEN: [&str; 6] = [
    "--password-stdin",
    "--hash",
    "sha512",
    "--pim",
    "1",
    "--format",
];

/// Loop devices attached here, detached (and what is mounted from them
/// unmounted first) on drop.
struct Loops(Vec<LoopDevice>, Vec<PathBuf>);

impl Loops {
    fn attach(&mut self, file: &Path) -> PathBuf {
        let dev = LoopDevice::attach(file);
        let path = dev.as_path().to_path_buf();
        self.0.push(dev);
        path
    }
}

impl Drop for Loops {
    fn drop(&mut self) {
        for m in &self.1 {
            let _ = Command::new("umount").arg(m).status();
        }
        self.0.clear();
    }
}

/// A VeraCrypt volume of 8 MiB with `password`, made in a file.
fn volume(d: &Daemon, name: &str, password: &str) -> PathBuf {
    let v = d.path(name);
    let mut args = vec![
        "create",
        s(&v),
        "--size",
        "8M",
        "--encryption",
        "AES",
        "--force",
    ];
    args.extend(["--filesystem", "ext4"]);
    args.extend(OPEN);
    args.push("veracrypt");
    d.ok(&args, &format!("{password}\n"));
    v
}

/// A partition left of a loop device that is detached: `/dev/loopNp1`,
/// dropped when this goes; and the image the loop device had.
struct Stale(String, std::path::PathBuf);

impl Drop for Stale {
    fn drop(&mut self) {
        if let Some(disk) = self.0.strip_suffix("p1") {
            let _ = Command::new("partx").args(["-d", disk]).status();
            // A detach the kernel deferred while something held the
            // device is done now, so no loop device outlives the test.
            if attached(disk, &self.1) {
                let _ = Command::new("losetup").args(["-d", disk]).status();
            }
        }
    }
}

/// Whether loop device `dev` is still attached to `image` (and not to
/// another test's file since).
fn attached(dev: &str, image: &Path) -> bool {
    let name = dev.trim_start_matches("/dev/");
    std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
        .is_ok_and(|f| Path::new(f.trim_end().trim_end_matches(" (deleted)")) == image)
}

fn stale_partition(d: &Daemon) -> Stale {
    let gpt = d.path("gpt.img");
    tcd_tests::loop_device::gpt_image(&gpt, 8 << 20);
    let run = |program: &str, args: &[&str]| {
        let out = Command::new(require_tool(program, "package util-linux"))
            .args(args)
            .output()
            .expect(program);
        assert!(out.status.success(), "{program} {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let dev = run("losetup", &["-f", "--show", s(&gpt)]);
    // One an earlier run left there would refuse to be added again.
    let _ = Command::new("partx").args(["-d", &dev]).status();
    run("partx", &["-a", &dev]);
    // Detached; the kernel defers it while udev still probes the device:
    // asked again until it is gone.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    run("losetup", &["-d", &dev]);
    while attached(&dev, &gpt) {
        assert!(
            std::time::Instant::now() < deadline,
            "{dev} is still attached"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
        let _ = Command::new("losetup").args(["-d", &dev]).status();
    }
    let part = format!("{dev}p1");
    assert!(Path::new(&part).exists(), "the kernel keeps {part}");
    Stale(part, gpt)
}

/// A device the password opens but whose volume holds no filesystem to
/// mount: said as not mounted, and the command fails with that reason's
/// code, not the wrong password's.
#[test]
fn mount_devices_says_a_volume_it_opened_but_could_not_mount() {
    require_root_and_fuse();
    let mut loops = Loops(Vec::new(), Vec::new());
    let d = Daemon::start();
    let v = d.path("bare.hc");
    let password = "bare words, twenty and more";
    let mut args = vec!["create", s(&v), "--size", "8M", "--filesystem", "none"];
    args.extend(OPEN);
    args.push("veracrypt");
    d.ok(&args, &format!("{password}\n"));
    let dev = loops.attach(&v);
    let mut args = vec!["mount-devices"];
    args.extend(OPEN);
    args.push("veracrypt");
    let out = d.tcctl(&args, &format!("{password}\n"));
    let said = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{said}{err}");
    assert!(
        said.lines()
            .any(|l| l.starts_with(&format!("{}: not mounted (", s(&dev)))
                && l.contains("holds no filesystem")),
        "{said}"
    );
    assert!(
        err.contains("no device was mounted: what the password opens could not be mounted"),
        "{err}"
    );
    assert_eq!(d.list(), serde_json::json!([]));
}

#[test]
fn mount_devices_mounts_what_the_password_opens_and_tries_nothing_in_use() {
    require_root_and_fuse();
    // Dropped after the daemon, which holds the devices open.
    let mut loops = Loops(Vec::new(), Vec::new());
    let d = Daemon::start();
    let ours = loops.attach(&volume(&d, "ours.hc", PW.trim_end()));
    let theirs = loops.attach(&volume(&d, "theirs.hc", "another password"));
    // A mounted filesystem: in use, never tried (its device is not ours
    // to open for writing while mounted).
    let plain = d.path("plain.img");
    std::fs::write(&plain, vec![0u8; 8 << 20]).expect("image");
    let st = Command::new(require_tool("mkfs.ext4", "package e2fsprogs"))
        .args(["-q", "-F"])
        .arg(&plain)
        .status()
        .expect("mkfs");
    assert!(st.success());
    let plain_dev = loops.attach(&plain);
    let plain_mnt = d.path("plain-mnt");
    std::fs::create_dir(&plain_mnt).expect("mount point");
    let st = Command::new("mount")
        .arg(&plain_dev)
        .arg(&plain_mnt)
        .status()
        .expect("mount");
    assert!(st.success());
    loops.1.push(plain_mnt.clone());
    // A partition the kernel kept of a loop device since detached (partx
    // added it): reading it fails, and it is never tried. The daemon's own
    // device may take that loop device next.
    let stale = stale_partition(&d);

    let mut args = vec!["mount-devices"];
    args.extend(OPEN);
    args.push("veracrypt");
    let out = d.ok(&args, PW);
    // A line per device tried, then how many mounted.
    let lines: Vec<&str> = out.lines().collect();
    let (summary, tried) = lines.split_last().expect("a summary");
    assert!(
        tried
            .iter()
            .filter(|l| l.starts_with(&format!("{}: mounted on /", s(&ours))))
            .count()
            == 1,
        "{out}"
    );
    assert!(
        tried.contains(&format!("{}: not opened", s(&theirs)).as_str()),
        "{out}"
    );
    assert!(tried.iter().all(|l| l.starts_with("/dev/")), "{out}");
    assert!(!out.contains(&stale.0), "{} tried: {out}", stale.0);
    let devices = match tried.len() {
        1 => "1 device".to_owned(),
        n => format!("{n} devices"),
    };
    assert!(
        summary.starts_with(&format!("mounted 1 of the {devices} tried")),
        "{out}"
    );
    let rows = d.list();
    let hosts: Vec<&str> = rows
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["volume"].as_str())
        .collect();
    assert_eq!(hosts, vec![s(&ours)], "only the volume the password opens");
    let at = rows[0]["mount_point"].as_str().expect("mounted").to_owned();
    assert!(Path::new(&at).join("lost+found").is_dir(), "ext4 on {at}");

    // Again: the mounted one is in use now, and nothing else opens.
    let (code, err) = d.fails(&args, PW);
    assert_eq!(
        (code, err.as_str()),
        (2, "tcctl: the password opens none of the devices\n")
    );
    assert!(!hosts.contains(&s(&theirs)) && !hosts.contains(&s(&plain_dev)));

    // On a terminal, the search's progress names the device it is on.
    d.ok(&["dismount", "--all"], "");
    let password = d.path("password");
    std::fs::write(&password, PW).expect("password");
    let mut c = d.command();
    c.args(&args);
    let input = std::fs::File::open(&password).expect("password");
    let t = tcd_tests::pty::Pty::spawn(c, Some(std::process::Stdio::from(input)));
    let (code, shown) = t.finish(std::time::Duration::from_secs(120));
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains(&format!("{}: trying VeraCrypt SHA-512 on the ", s(&theirs))),
        "{shown}"
    );
    assert!(
        shown.contains(&format!("{}: mounted on /", s(&ours))),
        "{shown}"
    );
    // Which device it is on and how far through the list, on a line
    // written over in place.
    for dev in [&theirs, &ours] {
        let said = format!("\r\x1b[K{}: trying (device ", s(dev));
        let at = shown
            .find(&said)
            .unwrap_or_else(|| panic!("no {said:?} in {shown:?}"));
        let rest = &shown[at + said.len()..];
        let (k, rest) = rest.split_once(" of ").expect("K of N");
        let (n, _) = rest.split_once(')').expect("K of N)");
        let (k, n): (usize, usize) = (k.parse().expect("K"), n.parse().expect("N"));
        assert!((1..=n).contains(&k) && n >= 2, "{shown:?}");
    }

    // VeraCrypt's spelling, after a dismount.
    d.ok(&["dismount", "--all"], "");
    let out = d.ok(
        &[
            "-t",
            "--auto-mount=devices",
            "--stdin",
            "--hash",
            "sha512",
            "--pim",
            "1",
        ],
        PW,
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("{}: mounted on /", s(&ours)))),
        "{out}"
    );
    d.ok(&["dismount", "--all"], "");

    // Attached only, it is said so; and the decrypted device it is attached
    // as (plaintext a tcd daemon serves) is never tried itself.
    let mut attach = args.clone();
    attach.extend(["--filesystem", "none"]);
    let out = d.ok(&attach, PW);
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    assert!(
        out.lines()
            .any(|l| l == format!("{}: attached as {device}", s(&ours))),
        "{out}"
    );
    let again = d.tcctl(&attach, PW);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&again.stdout),
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(!said.contains(&device), "{device} tried: {said}");
    d.ok(&["dismount", "--all"], "");

    // Keyfiles alone, with no way to ask a password (as `mount` opens
    // with them), in tcctl's words and VeraCrypt's `-p ""`.
    let key = d.path("key");
    d.ok(&["create-keyfile", s(&key)], "");
    let kf = d.path("kf.hc");
    d.ok(
        &[
            &["--non-interactive", "create", s(&kf), "--size", "8M"][..],
            &["--keyfile", s(&key), "--pim", "1", "--filesystem", "none"],
        ]
        .concat(),
        "",
    );
    let kf_dev = loops.attach(&kf);
    let alone = ["--pim", "1", "--hash", "sha512", "--filesystem", "none"];
    for line in [
        &["--non-interactive", "mount-devices", "-k", s(&key)][..],
        &["-t", "--auto-mount", "devices", "-k", s(&key), "-p", ""],
    ] {
        let out = d.ok(&[line, &alone].concat(), "");
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("{}: attached as /dev/", s(&kf_dev)))),
            "{line:?}: {out}"
        );
        d.ok(&["dismount", "--all"], "");
    }
    // VeraCrypt's text mode on a terminal asks the keyfiles after the
    // password, as its mount does.
    let mut c = d.command();
    c.args(["-t", "--auto-mount", "devices"]).args(alone);
    let mut t = tcd_tests::pty::Pty::spawn(c, None);
    let wait = std::time::Duration::from_secs(30);
    t.expect("Password for every device: ", wait);
    std::thread::sleep(std::time::Duration::from_millis(300));
    t.type_line("");
    t.expect("Enter keyfile [none]: ", wait);
    t.type_line(s(&key));
    t.expect_times("Enter keyfile [none]: ", 2, wait);
    t.type_line("");
    let (code, shown) = t.finish(std::time::Duration::from_secs(120));
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains(&format!("{}: attached as /dev/", s(&kf_dev))),
        "{shown}"
    );
    d.ok(&["dismount", "--all"], "");
}

/// A user who may open none of the devices hears that nothing was tried,
/// not that the password opens none.
#[test]
fn a_user_who_may_open_no_device_is_told_nothing_was_tried() {
    let sys = tcd_tests::system::System::start();
    let mut loops = Loops(Vec::new(), Vec::new());
    let blank = sys.dir.path().join("blank.img");
    std::fs::write(&blank, vec![0u8; 8 << 20]).expect("image");
    loops.attach(&blank);
    let out = sys.tcctl(
        Some(&sys.users[0]),
        &["mount-devices", "--password-stdin"],
        PW,
    );
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned()
        ),
        (
            Some(6),
            "tcctl: no device was tried: you may open none of them (polkit's \
             org.tcd.use-device decides)\n"
                .to_owned()
        )
    );
    assert!(sys.list(None).as_array().is_some_and(Vec::is_empty));
}
