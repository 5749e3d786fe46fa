//! End to end through the real binaries: a `tcd` daemon on a peer-to-peer
//! D-Bus socket, driven by `tcctl`, mounting through real FUSE, loop
//! devices and filesystems. Needs root, /dev/fuse, losetup, blkid and
//! mkfs.ext4 (CI runs as root and installs them).

use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tcd_tests::daemon::{Daemon, PrivateBus, Stopped, send_signal};
use tcd_tests::pty::Pty;
use tcd_tests::{build_dir, require_root_and_fuse, require_tool, s, tcrypt_images};

fn blkid_uuid(device: &str) -> String {
    tcd_tests::blkid_uuid(Path::new(device))
}

fn mounted_under(dir: &Path) -> Vec<String> {
    std::fs::read_to_string("/proc/self/mounts")
        .unwrap_or_default()
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|m| Path::new(m).starts_with(dir))
        })
        .map(str::to_owned)
        .collect()
}

fn write_files(dir: &Path, count: usize, mib: usize) -> Vec<(PathBuf, Vec<u8>)> {
    let mut seed = 0x1234_5678_u64;
    (0..count)
        .map(|i| {
            let p = dir.join(format!("f{i}.bin"));
            let mut data = vec![0u8; mib << 20];
            for chunk in data.chunks_mut(8) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                chunk.copy_from_slice(&seed.to_le_bytes()[..chunk.len()]);
            }
            let mut f = std::fs::File::create(&p).expect("create");
            f.write_all(&data).expect("write");
            f.sync_all().expect("fsync");
            (p, Sha256::digest(&data).to_vec())
        })
        .collect()
}

#[test]
fn create_mount_write_dismount_and_mount_again() {
    require_tool("mkfs.ext4", "package e2fsprogs");
    let mut d = Daemon::start();
    let vol = d.path("data.vc");
    let vol_s = vol.to_str().expect("utf-8 path");
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let mnt_s = mnt.to_str().expect("utf-8 path");
    d.ok(
        &[
            "create",
            vol_s,
            "--size",
            "300M",
            "--password-stdin",
            "--pim",
            "1",
            "--force",
            "--encryption",
            "Serpent-Twofish-AES",
            "--filesystem",
            "ext4",
        ],
        "secret words\n",
    );
    d.ok(
        &["mount", vol_s, mnt_s, "--password-stdin", "--pim", "1"],
        "secret words\n",
    );
    let list = d.list();
    assert_eq!(list.as_array().map(Vec::len), Some(1));
    assert_eq!(list[0]["mount_point"], mnt_s);
    assert_eq!(list[0]["encryption"], "Serpent-Twofish-AES");
    assert_eq!(list[0]["filesystem"], "ext4");
    let files = write_files(&mnt, 8, 24);
    d.ok(&["dismount", mnt_s], "");
    assert!(mounted_under(&mnt).is_empty(), "nothing left mounted");
    assert_eq!(d.list().as_array().map(Vec::len), Some(0));

    d.ok(
        &[
            "mount",
            vol_s,
            mnt_s,
            "--password-stdin",
            "--pim",
            "1",
            "--readonly",
        ],
        "secret words\n",
    );
    for (p, sum) in &files {
        let data = std::fs::read(p).expect("read back");
        assert_eq!(&Sha256::digest(&data).to_vec(), sum, "{}", p.display());
    }
    let info: serde_json::Value = serde_json::from_str(&d.ok(
        &["info", vol_s, "--password-stdin", "--pim", "1", "--json"],
        "secret words\n",
    ))
    .expect("info --json");
    assert_eq!(info["encryption"], "Serpent-Twofish-AES");
    assert_eq!(info["format"], "VeraCrypt");
    d.ok(&["dismount", "--all"], "");
    assert!(mounted_under(&mnt).is_empty());
    assert!(d.stop().success(), "the daemon exits cleanly on SIGTERM");
}

/// `p`'s times set to a day long past (`touch -d`), and then shown as
/// [`times`] shows them.
fn backdated(p: &Path) -> String {
    let st = Command::new("touch")
        .args(["-d", "2001-02-03 04:05:06.123456789"])
        .arg(p)
        .status()
        .expect("touch");
    assert!(st.success());
    times(p)
}

/// The access and modification times of `p`, to the nanosecond, as `stat`
/// shows them.
fn times(p: &Path) -> String {
    let out = Command::new("stat")
        .args(["-c", "%x %y"])
        .arg(p)
        .output()
        .expect("stat");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn a_container_keeps_its_timestamps_unless_asked_not_to() {
    require_tool("mkfs.ext4", "package e2fsprogs");
    let d = Daemon::start();
    let vol = d.path("times.vc");
    let vol_s = vol.to_str().expect("utf-8 path");
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let mnt_s = mnt.to_str().expect("utf-8 path");
    let open = ["--password-stdin", "--pim", "1", "--hash", "sha512"];
    let mut create = vec!["create", "--force", vol_s, "--size", "24M", "--quick"];
    create.extend(open);
    d.ok(&create, "secret words\n");
    for (extra, kept) in [(None, true), (Some("--no-preserve-timestamps"), false)] {
        let before = backdated(&vol);
        assert!(
            before.starts_with("2001-02-03 04:05:06.123456789"),
            "{before}"
        );
        let mut mount = vec!["mount", vol_s, mnt_s];
        mount.extend(open);
        mount.extend(extra);
        d.ok(&mount, "secret words\n");
        std::fs::write(mnt.join("f"), vec![7u8; 1 << 20]).expect("write");
        d.ok(&["dismount", mnt_s], "");
        let after = times(&vol);
        assert_eq!(after == before, kept, "{extra:?}: {before} -> {after}");
    }
}

/// A header read, backed up, rewritten or restored leaves the container's
/// times as they were, as VeraCrypt keeps them: they do not tell when
/// its password changed or its header was looked at.
#[test]
fn header_commands_keep_the_containers_timestamps() {
    let d = Daemon::start();
    let vol = d.path("headers.hc");
    let vol_s = s(&vol);
    let backup = d.path("headers.bak");
    let backup_s = s(&backup);
    let open = ["--password-stdin", "--pim", "1", "--hash", "sha512"];
    let mut create = vec!["create", vol_s, "--size", "4M", "--filesystem", "none"];
    create.extend(open);
    d.ok(&create, "old secret words of twenty\n");
    let commands: [(&[&str], &str); 6] = [
        (&["info", vol_s], "old secret words of twenty\n"),
        (&["dump", vol_s], "old secret words of twenty\n"),
        (
            &["backup-header", vol_s, backup_s],
            "old secret words of twenty\n",
        ),
        (
            &["change-password", vol_s],
            "old secret words of twenty\nnew secret words of twenty\n",
        ),
        (
            &["restore-header", "-q", vol_s, backup_s],
            "old secret words of twenty\n",
        ),
        (
            &["restore-header", "-q", "--embedded", vol_s],
            "old secret words of twenty\n",
        ),
    ];
    for (command, input) in commands {
        let before = backdated(&vol);
        d.ok(&[command, &open[..]].concat(), input);
        assert_eq!(times(&vol), before, "{command:?}");
    }
}

/// The mount options of the filesystem mounted on `dir`.
fn mount_options(dir: &Path) -> String {
    let want = dir.to_str().expect("utf-8");
    std::fs::read_to_string("/proc/self/mounts")
        .expect("mounts")
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(1) == Some(&want)).then(|| f.get(3).copied().unwrap_or("").to_owned())
        })
        .unwrap_or_default()
}

#[test]
fn fat_exfat_and_ntfs_volumes_with_a_cascade_mount_write_and_check_clean() {
    // This kernel, like many without dm-crypt, has neither vfat nor exfat
    // (nor ntfs3): the daemon mounts them through FUSE drivers where the
    // kernel lacks them, and through the kernel where it has them.
    for (filesystem, blkid_type, driver, fsck, package) in [
        ("fat", "vfat", "fusefat", "fsck.vfat", "fusefat, dosfstools"),
        (
            "exfat",
            "exfat",
            "mount.exfat-fuse",
            "fsck.exfat",
            "exfat-fuse, exfatprogs",
        ),
        ("ntfs", "ntfs", "ntfs-3g", "ntfsfix", "ntfs-3g"),
    ] {
        require_tool(&format!("mkfs.{filesystem}"), package);
        require_tool(driver, package);
        let fsck = require_tool(fsck, package);
        let d = Daemon::start();
        let vol = d.path("data.vc");
        let vol_s = vol.to_str().expect("utf-8 path");
        let mnt = d.path("mnt");
        std::fs::create_dir(&mnt).expect("mkdir");
        let mnt_s = mnt.to_str().expect("utf-8 path");
        let pw = "fat words\n";
        let common = ["--password-stdin", "--pim", "1", "--hash", "sha512"];
        let args = |first: &[&'static str]| -> Vec<&'static str> { [first, &common[..]].concat() };
        d.ok(
            &[
                &args(&[
                    "create",
                    "--force",
                    "--size",
                    "200M",
                    "--encryption",
                    "AES-Twofish-Serpent",
                    "--filesystem",
                    filesystem,
                ])[..],
                &[vol_s],
            ]
            .concat(),
            pw,
        );
        d.ok(&[&args(&["mount"])[..], &[vol_s, mnt_s]].concat(), pw);
        let list = d.list();
        assert_eq!(list[0]["filesystem"], blkid_type);
        assert_eq!(list[0]["encryption"], "AES-Twofish-Serpent");
        let opts = mount_options(&mnt);
        for o in ["nosuid", "nodev"] {
            assert!(
                opts.split(',').any(|x| x == o),
                "{filesystem}: {o} in {opts}"
            );
        }
        let files = write_files(&mnt, 4, 24);
        for (p, _) in &files {
            let m = std::fs::metadata(p).expect("stat");
            use std::os::unix::fs::MetadataExt;
            assert_eq!(m.uid(), 0, "{filesystem}: files belong to the caller");
            assert_eq!(m.mode() & 0o077, 0, "{filesystem}: private to the caller");
        }
        d.ok(&["dismount", mnt_s], "");
        assert!(mounted_under(&mnt).is_empty(), "nothing left mounted");

        // The filesystem checks clean on the block device.
        d.ok(
            &[&args(&["mount", "--filesystem", "none"])[..], &[vol_s]].concat(),
            pw,
        );
        let device = d.list()[0]["device"].as_str().expect("device").to_owned();
        let out = Command::new(&fsck)
            .args(["-n", &device])
            .output()
            .expect("run fsck");
        assert!(
            out.status.success(),
            "{filesystem}: fsck: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        d.ok(&["dismount", &device], "");

        d.ok(
            &[&args(&["mount", "--readonly"])[..], &[vol_s, mnt_s]].concat(),
            pw,
        );
        for (p, sum) in &files {
            let data = std::fs::read(p).expect("read back");
            assert_eq!(&Sha256::digest(&data).to_vec(), sum, "{}", p.display());
        }
        assert!(
            std::fs::write(mnt.join("new"), b"x").is_err(),
            "{filesystem}: read-only"
        );
        d.ok(&["dismount", "--all"], "");
        assert!(mounted_under(&mnt).is_empty());
    }
}

/// Bytes the host file really holds (holes left out).
fn allocated(p: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(p).expect("stat").blocks() * 512
}

#[test]
fn discard_reaches_the_host_only_when_the_mount_allows_it() {
    let fstrim = require_tool("fstrim", "package util-linux");
    let fsck = require_tool("fsck.ext4", "package e2fsprogs");
    let blkdiscard = require_tool("blkdiscard", "package util-linux");
    let d = Daemon::start();
    let vol = d.path("trim.vc");
    let vol_s = vol.to_str().expect("utf-8 path");
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let mnt_s = mnt.to_str().expect("utf-8 path");
    let pw = "trim words\n";
    let base = ["--password-stdin", "--pim", "1", "--hash", "sha512"];
    let mount = |extra: &[&str]| {
        let mut a = vec!["mount", vol_s, mnt_s];
        a.extend_from_slice(&base);
        a.extend_from_slice(extra);
        d.ok(&a, pw);
    };
    let mut create = vec![
        "create",
        "--force",
        vol_s,
        "--size",
        "64M",
        "--filesystem",
        "ext4",
    ];
    create.extend_from_slice(&base);
    d.ok(&create, pw);
    let trim = || {
        Command::new(&fstrim)
            .arg(&mnt)
            .output()
            .expect("run fstrim")
    };
    let fill = || {
        let data = vec![0x5au8; 24 << 20];
        std::fs::write(mnt.join("big"), &data).expect("write");
        Command::new("sync").status().expect("sync");
        std::fs::remove_file(mnt.join("big")).expect("rm");
        Command::new("sync").status().expect("sync");
    };

    // Off by default, as on dm-crypt without allow_discards: the device
    // takes no discards, fstrim says so (rather than counting bytes as
    // trimmed), and the host keeps every block, so which blocks are free
    // stays hidden.
    mount(&[]);
    fill();
    let before = allocated(&vol);
    let out = trim();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("not supported"),
        "fstrim without --discard: {:?} {said}",
        out.status
    );
    assert_eq!(allocated(&vol), before, "nothing discarded");
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    let out = Command::new(&blkdiscard)
        .args(["--force", &device])
        .output()
        .expect("run blkdiscard");
    assert!(
        !out.status.success(),
        "blkdiscard without --discard: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    d.ok(&["dismount", mnt_s], "");

    // Allowed for this mount: the freed blocks become holes in the host.
    mount(&["--discard"]);
    fill();
    let before = allocated(&vol);
    let out = trim();
    assert!(
        out.status.success(),
        "fstrim: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = allocated(&vol);
    assert!(
        after + (20 << 20) < before,
        "the host lost at least 20 MiB of blocks: {before} -> {after}"
    );
    d.ok(&["dismount", mnt_s], "");

    // And the filesystem is whole.
    let mut a = vec!["mount", vol_s, "--filesystem", "none"];
    a.extend_from_slice(&base);
    d.ok(&a, pw);
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    let st = Command::new(&fsck)
        .args(["-n", "-f", &device])
        .output()
        .expect("fsck");
    assert!(
        st.status.success(),
        "fsck: {}",
        String::from_utf8_lossy(&st.stdout)
    );
    d.ok(&["dismount", &device], "");
}

#[test]
fn every_real_volume_attaches_and_shows_its_serial() {
    let d = Daemon::start();
    let mut names: Vec<String> = std::fs::read_dir(tcrypt_images())
        .expect("corpus")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("-xts-") && !n.starts_with("sys_"))
        .collect();
    names.sort();
    let kf1 = tcrypt_images().join("keyfile1");
    let kf2 = tcrypt_images().join("keyfile2");
    let mut checked = 0;
    for name in &names {
        let path = tcrypt_images().join(name);
        let (kind, rest) = name.split_once('-').expect("kind-prf");
        let hash = rest.split("-xts-").next().expect("prf");
        let pim = kind.strip_prefix("vcpim_1_").unwrap_or("0");
        let password = match kind {
            "vck_1_nopw" => "",
            "vck_1_pw72" => {
                "aaaaaaaaaaaabbbbbbbbbbbbccccccccccccddddddddddddeeeeeeeeeeeeffffffffffff"
            }
            _ if pim != "0" => "cccccccccccccccccccc",
            _ => "aaaaaaaaaaaa",
        };
        let mut passwords = vec![(password, "DEAD-BABE")];
        if name.ends_with("-hidden") {
            passwords.push(("bbbbbbbbbbbb", "CAFE-BABE"));
        }
        for (pw, serial) in passwords {
            let mut args = vec![
                "mount",
                path.to_str().expect("utf-8"),
                "--readonly",
                "--filesystem",
                "none",
                "--password-stdin",
                "--hash",
                hash,
                "--pim",
                pim,
            ];
            if kind.starts_with("tck") || kind.starts_with("vck") {
                args.extend([
                    "-k",
                    kf1.to_str().expect("utf-8"),
                    "-k",
                    kf2.to_str().expect("utf-8"),
                ]);
            }
            d.ok(&args, &format!("{pw}\n"));
            let list = d.list();
            let device = list[0]["device"].as_str().expect("device").to_owned();
            assert_eq!(blkid_uuid(&device), serial, "{name}");
            d.ok(&["dismount", &device], "");
            checked += 1;
        }
    }
    let hidden = names.iter().filter(|n| n.ends_with("-hidden")).count();
    assert!(names.len() >= 60, "corpus has {} XTS images", names.len());
    assert_eq!(checked, names.len() + hidden);
}

#[test]
fn bad_requests_get_clear_errors_and_distinct_exit_codes() {
    let d = Daemon::start();
    let image = d.path("v.tc");
    std::fs::copy(tcrypt_images().join("tc_5-sha512-xts-aes"), &image).expect("copy");
    let v = image.to_str().expect("utf-8");
    let tc = [
        "--hash",
        "sha512",
        "--volume-type",
        "truecrypt",
        "--filesystem",
        "none",
    ];
    let mount = |extra: &[&str], pw: &str| {
        let mut a = vec!["mount", v, "--password-stdin"];
        a.extend_from_slice(&tc);
        a.extend_from_slice(extra);
        d.tcctl(&a, pw)
    };

    let out = mount(&[], "wrong\n");
    assert_eq!(out.status.code(), Some(2), "wrong password");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("wrong password or keyfile, or not a volume")
    );

    let (code, msg) = d.fails(
        &["mount", "/nonexistent/volume.tc", "--password-stdin"],
        "x\n",
    );
    assert_eq!(code, 3, "missing file: {msg}");
    // A file smaller than any volume is said to be (a bad request:
    // nothing was searched), not a wrong password, and before any
    // password is read (standard input holds none); a missing keyfile is
    // "not found".
    let small = d.path("small.tc");
    for (len, command) in [(0, "mount"), (64, "info"), (4096, "mount")] {
        std::fs::write(&small, vec![7u8; len]).expect("small file");
        let (code, msg) = d.fails(&[command, s(&small), "--password-stdin"], "");
        assert_eq!(
            (code, msg),
            (
                7,
                format!(
                    "tcctl: {}: the volume is {len} bytes: smaller than any TrueCrypt or \
                     VeraCrypt volume (18944 bytes)\n",
                    s(&small)
                )
            )
        );
    }
    let (code, msg) = d.fails(
        &["info", v, "--password-stdin", "-k", "/nonexistent/key"],
        "x\n",
    );
    assert_eq!(
        (code, msg.as_str()),
        (3, "tcctl: keyfile /nonexistent/key: no such file\n")
    );

    let noise = d.path("noise");
    std::fs::write(&noise, vec![0x5au8; 1 << 20]).expect("write");
    let (code, _) = d.fails(
        &[
            "mount",
            noise.to_str().expect("utf-8"),
            "--password-stdin",
            "--hash",
            "sha512",
            "--volume-type",
            "truecrypt",
        ],
        "x\n",
    );
    assert_eq!(code, 2, "not a volume");

    let (code, msg) = d.fails(
        &[
            "mount",
            v,
            "/nonexistent/mnt",
            "--password-stdin",
            "--hash",
            "sha512",
            "--volume-type",
            "truecrypt",
        ],
        "aaaaaaaaaaaa\n",
    );
    assert_eq!(code, 7, "missing mount point: {msg}");
    let (code, msg) = d.fails(
        &[
            "mount",
            v,
            "/usr",
            "--password-stdin",
            "--hash",
            "sha512",
            "--volume-type",
            "truecrypt",
        ],
        "aaaaaaaaaaaa\n",
    );
    assert_eq!(code, 7, "system folder: {msg}");
    assert!(msg.contains("system folder"), "{msg}");

    assert!(mount(&[], "aaaaaaaaaaaa\n").status.success());
    let out = mount(&[], "aaaaaaaaaaaa\n");
    assert_eq!(out.status.code(), Some(4), "mounted twice");
    let (code, _) = d.fails(&["dismount", "/nothing/mounted/here"], "");
    assert_eq!(code, 3);

    assert_eq!(d.ok(&["dismount", "--all"], ""), "1 volume dismounted\n");
    assert_eq!(d.list().as_array().map(Vec::len), Some(0));
}

#[test]
fn protect_hidden_refuses_writes_into_the_hidden_volume() {
    let d = Daemon::start();
    let image = d.path("hidden.tc");
    std::fs::copy(tcrypt_images().join("tc_5-sha512-xts-aes-hidden"), &image).expect("copy");
    let v = image.to_str().expect("utf-8");
    // A wrong hidden password is told apart from a wrong outer one.
    let (code, err) = d.fails(
        &[
            "mount",
            v,
            "--password-stdin",
            "--hash",
            "sha512",
            "--filesystem",
            "none",
            "--protect-hidden",
        ],
        "aaaaaaaaaaaa\nnot the hidden one\n",
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with(
            "tcctl: the outer volume opened, but the password, keyfiles and PIM given to \
             protect a hidden volume open none inside it"
        ),
        "{err}"
    );
    d.ok(
        &[
            "mount",
            v,
            "--password-stdin",
            "--hash",
            "sha512",
            "--filesystem",
            "none",
            "--protect-hidden",
        ],
        "aaaaaaaaaaaa\nbbbbbbbbbbbb\n",
    );
    let list = d.list();
    assert_eq!(list[0]["protects_hidden"], true);
    let device = list[0]["device"].as_str().expect("device").to_owned();
    // Overwrite the whole outer volume, as a careless user might.
    let st = Command::new(require_tool("dd", "package coreutils"))
        .args([
            "if=/dev/zero",
            &format!("of={device}"),
            "bs=4096",
            "oflag=direct",
            "status=none",
        ])
        .stderr(Stdio::null())
        .status()
        .expect("dd");
    assert!(!st.success(), "writing over the hidden volume fails");
    // The volume turned read-only, and says so on D-Bus (the daemon
    // updates its view right after the refused write).
    let deadline = Instant::now() + Duration::from_secs(10);
    let row = loop {
        let list = d.list();
        if list[0]["read_only"] == true {
            break list[0].clone();
        }
        assert!(Instant::now() < deadline, "never read-only: {list}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let object = row["object"].as_str().expect("object path").to_owned();
    let out = Command::new(require_tool("dbus-send", "package dbus"))
        .arg(format!("--peer=unix:path={}", d.socket().display()))
        .args([
            "--print-reply=literal",
            &object,
            "org.freedesktop.DBus.Properties.Get",
            "string:org.tcd.Volume1",
            "string:ReadOnly",
        ])
        .output()
        .expect("dbus-send");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("boolean true"), "ReadOnly: {text}");
    // The refused writes are said: the health, and the dismount's exit.
    let row = d.list()[0].clone();
    assert_eq!(row["health"], "failed", "{row}");
    assert!(
        row["problems"]
            .to_string()
            .contains("1 write into the protected hidden volume was refused"),
        "{row}"
    );
    let (code, err) = d.fails(&["dismount", &device], "");
    assert_eq!(code, 11, "writes were lost: {err}");
    assert!(err.contains("protected hidden volume"), "{err}");
    d.ok(
        &[
            "mount",
            v,
            "--password-stdin",
            "--hash",
            "sha512",
            "--filesystem",
            "none",
            "--readonly",
        ],
        "bbbbbbbbbbbb\n",
    );
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    assert_eq!(
        blkid_uuid(&device),
        "CAFE-BABE",
        "the hidden volume survived"
    );
    d.ok(&["dismount", "--all"], "");
}

/// The loop device's read-only flag, as `losetup -l` shows it.
fn loop_read_only(device: &str) -> String {
    let out = Command::new(require_tool("losetup", "package mount"))
        .args(["-l", "-n", "-O", "RO", device])
        .output()
        .expect("losetup");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn readonly_holds_together_with_protect_hidden() {
    let d = Daemon::start();
    let image = d.path("hidden.tc");
    std::fs::copy(tcrypt_images().join("tc_5-sha512-xts-aes-hidden"), &image).expect("copy");
    let v = image.to_str().expect("utf-8");
    let protected = [
        "mount",
        v,
        "--password-stdin",
        "--hash",
        "sha512",
        "--protect-hidden",
        "--readonly",
    ];
    let passwords = "aaaaaaaaaaaa\nbbbbbbbbbbbb\n";

    // The block device alone: read-only from the start, for the kernel too.
    d.ok(
        &[&protected[..], &["--filesystem", "none"]].concat(),
        passwords,
    );
    let row = d.list()[0].clone();
    assert_eq!(row["read_only"], true, "{row}");
    assert_eq!(row["protects_hidden"], true, "{row}");
    let device = row["device"].as_str().expect("device").to_owned();
    assert_eq!(loop_read_only(&device), "1", "losetup -l shows RO");
    let st = Command::new(require_tool("dd", "package coreutils"))
        .args([
            "if=/dev/zero",
            &format!("of={device}"),
            "bs=4096",
            "count=1",
        ])
        .args(["oflag=direct", "status=none"])
        .stderr(Stdio::null())
        .status()
        .expect("dd");
    assert!(!st.success(), "a write to the read-only device fails");
    d.ok(&["dismount", &device], "");

    // With the filesystem: mounted read-only, and it reads.
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mount point");
    let m = mnt.to_str().expect("utf-8");
    d.ok(&[&protected[..], &[m]].concat(), passwords);
    assert!(
        mount_options(&mnt).split(',').any(|o| o == "ro"),
        "mounted read-only: {}",
        mount_options(&mnt)
    );
    std::fs::read_dir(&mnt).expect("the outer filesystem reads");
    let err = std::fs::write(mnt.join("new"), b"x").expect_err("a write is refused");
    assert_eq!(err.raw_os_error(), Some(libc::EROFS), "{err}");
    d.ok(&["dismount", m], "");
}

/// `blockdev --getro DEVICE`: "1" when the kernel refuses its writes.
fn blockdev_read_only(device: &str) -> String {
    let out = Command::new(require_tool("blockdev", "package util-linux"))
        .args(["--getro", device])
        .output()
        .expect("blockdev");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `dd` of one 4 KiB block of a pattern onto `device` at block 200,
/// O_DIRECT, as root: whether it succeeded.
fn dd_pattern_onto(device: &str) -> bool {
    let pattern = std::env::temp_dir().join(format!("tcd-pattern-{}", std::process::id()));
    std::fs::write(&pattern, vec![0xa5u8; 4096]).expect("pattern");
    let st = Command::new(require_tool("dd", "package coreutils"))
        .arg(format!("if={}", pattern.display()))
        .arg(format!("of={device}"))
        .args([
            "bs=4096",
            "seek=200",
            "count=1",
            "oflag=direct",
            "status=none",
        ])
        .stderr(Stdio::null())
        .status()
        .expect("dd");
    let _ = std::fs::remove_file(&pattern);
    st.success()
}

#[test]
fn a_read_only_mount_with_a_filesystem_refuses_writes_to_its_loop_device() {
    let d = Daemon::start();
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mount point");
    let m = mnt.to_str().expect("utf-8");
    let search = ["--pim", "1", "--hash", "sha512", "--password-stdin"];
    let password = "read-only words of twenty\n";
    for (fs, read_only) in [("ext4", "-r"), ("fat", "-m ro")] {
        let vol = d.path(&format!("ro-{fs}.hc"));
        let v = vol.to_str().expect("utf-8");
        d.ok(
            &[
                &["create", v, "--size", "8M", "--filesystem", fs, "--force"][..],
                &search,
            ]
            .concat(),
            password,
        );
        let before = sha256_of(&vol);
        let ro: Vec<&str> = read_only.split(' ').collect();
        d.ok(&[&["mount", v, m][..], &ro, &search].concat(), password);
        let row = d.list()[0].clone();
        assert_eq!(row["read_only"], true, "{row}");
        let device = row["device"].as_str().expect("device").to_owned();
        assert!(
            mount_options(&mnt).split(',').any(|o| o == "ro"),
            "{fs}: mounted read-only: {}",
            mount_options(&mnt)
        );
        // As cryptsetup --readonly and VeraCrypt's read-only loop device:
        // the kernel refuses the write at once, nothing is kept aside.
        assert_eq!(blockdev_read_only(&device), "1", "{fs}: blockdev --getro");
        assert_eq!(loop_read_only(&device), "1", "{fs}: losetup -l shows RO");
        assert!(
            !dd_pattern_onto(&device),
            "{fs}: a write to {device} of a read-only mount fails"
        );
        std::fs::read_dir(&mnt).expect("the filesystem still reads");
        let status = d.ok(&["status", v], "");
        assert!(status.contains("ok"), "{fs}: health stays ok: {status}");
        d.ok(&["dismount", m], "");
        assert_eq!(sha256_of(&vol), before, "{fs}: the container is unchanged");

        // The device the next mount gets is writable again.
        d.ok(&[&["mount", v, m][..], &search].concat(), password);
        let device = d.list()[0]["device"].as_str().expect("device").to_owned();
        assert_eq!(blockdev_read_only(&device), "0", "{fs}: writable mount");
        std::fs::write(mnt.join("new"), b"written").expect("a writable mount writes");
        d.ok(&["dismount", m], "");
    }
}

fn sha256_of(path: &Path) -> Vec<u8> {
    Sha256::digest(std::fs::read(path).expect("read the container")).to_vec()
}

#[test]
fn a_keyfile_from_standard_input_with_the_password_typed_on_the_terminal() {
    let d = Daemon::start();
    let key = d.path("key");
    std::fs::write(&key, b"the keyfile's bytes, which only stdin brings").expect("keyfile");
    let vol = d.path("keyed.hc");
    let v = vol.to_str().expect("utf-8");
    let k = key.to_str().expect("utf-8");
    let search = ["--pim", "1", "--hash", "sha512"];
    d.ok(
        &[
            &[
                "create",
                "--force",
                v,
                "--size",
                "4M",
                "--filesystem",
                "none",
                "--quick",
            ][..],
            &search,
            &["--keyfile", k, "--password-stdin"],
        ]
        .concat(),
        "typed words\n",
    );

    // Both want standard input: a usage error before anything is asked.
    let (code, err) = d.fails(
        &["mount", v, "--key-file", "-", "--password-stdin"],
        "typed words\n",
    );
    assert_eq!(
        (code, err.trim()),
        (
            64,
            "tcctl: standard input is already read for something \
        else: --password-stdin cannot read it too (--password-stdin and --keyfile - each take \
        all of it)"
        )
    );

    let on_terminal = |keyfile: &std::path::Path| {
        let mut c = d.command();
        c.args(["mount", v, "--key-file", "-"]);
        c.args(search).args(["--filesystem", "none"]);
        let input = std::fs::File::open(keyfile).expect("keyfile");
        let mut t = Pty::spawn(c, Some(Stdio::from(input)));
        t.expect(&format!("Password for {v}: "), Duration::from_secs(20));
        // The prompt is written before echo goes off: type as a person
        // would, a moment after it shows.
        std::thread::sleep(Duration::from_millis(300));
        t.type_line("typed words");
        t.finish(Duration::from_secs(120))
    };
    let wrong = d.path("other key");
    std::fs::write(&wrong, b"some other bytes").expect("keyfile");
    let (code, text) = on_terminal(&wrong);
    assert_eq!(code, 2, "a wrong keyfile on stdin: {text}");
    assert_eq!(d.list().as_array().map(Vec::len), Some(0));
    let (code, text) = on_terminal(&key);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(&format!("{v} attached as /dev/loop")),
        "{text}"
    );
    assert!(
        !text.contains("typed words"),
        "the password is not echoed: {text}"
    );
    d.ok(&["dismount", "--all"], "");
}

#[test]
fn a_volume_whose_headers_are_gone_opens_with_a_detached_header_file() {
    let d = Daemon::start();
    let image = d.path("headless.tc");
    std::fs::copy(tcrypt_images().join("tc_5-sha512-xts-aes-hidden"), &image).expect("copy");
    let v = image.to_str().expect("utf-8");
    // Both header slots, as a header backup file holds them.
    let file = d.path("headers.bin");
    let bytes = std::fs::read(&image).expect("read");
    std::fs::write(&file, &bytes[..131072]).expect("header file");
    let f = file.to_str().expect("utf-8");
    // Wipe every header the volume has: the primary slots and the backups.
    {
        use std::os::unix::fs::FileExt;
        let host = std::fs::OpenOptions::new()
            .write(true)
            .open(&image)
            .expect("open");
        let len = bytes.len() as u64;
        host.write_all_at(&vec![0u8; 131072], 0).expect("wipe");
        host.write_all_at(&vec![0u8; 131072], len - 131072)
            .expect("wipe");
    }
    let search = [
        "--hash",
        "sha512",
        "--filesystem",
        "none",
        "--password-stdin",
    ];
    let (code, _) = d.fails(&[&["mount", v][..], &search].concat(), "aaaaaaaaaaaa\n");
    assert_eq!(code, 2, "without the header file nothing opens");

    for (password, serial) in [("aaaaaaaaaaaa", "DEAD-BABE"), ("bbbbbbbbbbbb", "CAFE-BABE")] {
        d.ok(
            &[&["mount", v, "--header", f][..], &search].concat(),
            &format!("{password}\n"),
        );
        let device = d.list()[0]["device"].as_str().expect("device").to_owned();
        assert_eq!(blkid_uuid(&device), serial);
        d.ok(&["dismount", &device], "");
    }
    let info = d.ok(
        &["info", v, "--header", f, "--password-stdin", "--json"],
        "aaaaaaaaaaaa\n",
    );
    let info: serde_json::Value = serde_json::from_str(&info).expect("json");
    assert_eq!(info["hash"], "SHA-512", "{info}");

    // The host grown by 1 MiB, as an expand grows it: the saved header's
    // data area no longer ends where the host's backup headers begin, and
    // the header is refused rather than mapping data that may not be
    // this volume's. The hidden volume's header places it by itself.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&image)
        .and_then(|h| h.set_len(bytes.len() as u64 + (1 << 20)))
        .expect("grow");
    let (code, err) = d.fails(
        &[&["mount", v, "--header", f][..], &search].concat(),
        "aaaaaaaaaaaa\n",
    );
    assert_eq!(code, 7, "{err}");
    assert!(
        err.contains(&format!(
            "the header file's volume has a data area of {} bytes, where this {}-byte host has \
             room for {} bytes: a header of another volume, or one saved before the volume was \
             expanded",
            bytes.len() - 262144,
            bytes.len() + (1 << 20),
            bytes.len() + (1 << 20) - 262144,
        )),
        "{err}"
    );
    assert!(d.list().as_array().is_some_and(Vec::is_empty));
    // Reading it is how a saved header's settings are seen: info shows
    // the data area it describes.
    let info = d.ok(
        &["info", v, "--header", f, "--password-stdin", "--json"],
        "aaaaaaaaaaaa\n",
    );
    let info: serde_json::Value = serde_json::from_str(&info).expect("json");
    assert_eq!(info["size"], bytes.len() - 262144, "{info}");
    d.ok(
        &[&["mount", v, "--header", f][..], &search].concat(),
        "bbbbbbbbbbbb\n",
    );
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    assert_eq!(blkid_uuid(&device), "CAFE-BABE");
    d.ok(&["dismount", &device], "");

    // A file that cannot be a header file is refused before any search.
    let short = d.path("short.bin");
    std::fs::write(&short, [0u8; 100]).expect("short");
    let s = short.to_str().expect("utf-8");
    let (code, err) = d.fails(&["info", v, "--header", s, "--password-stdin"], "x\n");
    assert_eq!(code, 7, "{err}");
    assert!(
        err.contains("a header file holds 512 bytes to 128 KiB"),
        "{err}"
    );
}

#[test]
fn a_killed_daemon_is_cleaned_up_by_the_next_and_sigterm_dismounts() {
    let mut d = Daemon::start();
    let image = d.path("v.tc");
    std::fs::copy(tcrypt_images().join("tc_5-sha512-xts-aes"), &image).expect("copy");
    let v = image.to_str().expect("utf-8");
    let args = [
        "mount",
        v,
        "--password-stdin",
        "--hash",
        "sha512",
        "--filesystem",
        "none",
    ];
    d.ok(&args, "aaaaaaaaaaaa\n");
    // SIGKILL: nothing is cleaned up.
    d.kill();
    let run = d.path("run");
    assert!(
        !mounted_under(&run).is_empty(),
        "the killed daemon left its FUSE mount"
    );
    d.spawn();
    assert!(mounted_under(&run).is_empty(), "the next daemon cleaned up");
    // And a client that goes away mid-call does not take the daemon down.
    let mut slow = d
        .command()
        .args(["mount", v, "--password-stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("tcctl");
    slow.stdin
        .take()
        .expect("stdin")
        .write_all(b"not the password\n")
        .expect("write");
    std::thread::sleep(Duration::from_millis(500));
    slow.kill().expect("kill the client");
    slow.wait().expect("wait");
    // The daemon notices and stops the abandoned search.
    d.wait_for_log(
        "client went away: cancelling its request",
        "the search was not cancelled",
    );
    d.ok(&args, "aaaaaaaaaaaa\n");
    assert_eq!(d.list().as_array().map(Vec::len), Some(1));
    assert!(d.stop().success());
    assert!(
        mounted_under(&run).is_empty(),
        "SIGTERM dismounted everything"
    );
}

/// `dbus-send` on the daemon's peer-to-peer socket: what a desktop sees.
fn dbus_send(d: &Daemon, path: &str, method: &str) -> String {
    let out = Command::new(require_tool("dbus-send", "package dbus"))
        .arg(format!("--peer=unix:path={}", d.socket().display()))
        .args(["--print-reply=literal", path, method])
        .output()
        .expect("dbus-send");
    assert!(
        out.status.success(),
        "dbus-send {method}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The `<interface name="...">` block of an introspection document.
fn interface_block(xml: &str, name: &str) -> String {
    let start = xml
        .find(&format!("<interface name=\"{name}\">"))
        .unwrap_or_else(|| panic!("no interface {name} in {xml}"));
    let end = start + xml[start..].find("</interface>").expect("end of interface");
    xml[start..end].to_owned()
}

#[test]
fn the_shipped_introspection_and_object_manager_match_the_daemon() {
    let d = Daemon::start();
    let image = d.path("v.tc");
    std::fs::copy(tcrypt_images().join("tc_5-sha512-xts-aes"), &image).expect("copy");
    let v = image.to_str().expect("utf-8");
    let dist = tcd_tests::repo_dir().join("dist/dbus");
    let live = dbus_send(
        &d,
        "/org/tcd/Tcd1",
        "org.freedesktop.DBus.Introspectable.Introspect",
    );
    let shipped = std::fs::read_to_string(dist.join("org.tcd.Manager1.xml")).expect("shipped XML");
    assert_eq!(
        interface_block(&live, "org.tcd.Manager1"),
        interface_block(&shipped, "org.tcd.Manager1"),
        "dist/dbus/org.tcd.Manager1.xml is out of date"
    );
    let managed = dbus_send(
        &d,
        "/org/tcd/Tcd1",
        "org.freedesktop.DBus.ObjectManager.GetManagedObjects",
    );
    assert!(
        !managed.contains("org.tcd.Volume1"),
        "no volume yet: {managed}"
    );
    // Clients that left are forgotten: only the asking one remains.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = Command::new(require_tool("dbus-send", "package dbus"))
            .arg(format!("--peer=unix:path={}", d.socket().display()))
            .args([
                "--print-reply=literal",
                "/org/tcd/Tcd1",
                "org.freedesktop.DBus.Properties.Get",
                "string:org.tcd.Manager1",
                "string:Clients",
            ])
            .output()
            .expect("dbus-send");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if text.contains("uint32 1") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "departed clients are still held: {text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    d.ok(
        &[
            "mount",
            v,
            "--password-stdin",
            "--hash",
            "sha512",
            "--filesystem",
            "none",
        ],
        "aaaaaaaaaaaa\n",
    );
    let object = d.list()[0]["object"].as_str().expect("object").to_owned();
    let live = dbus_send(
        &d,
        &object,
        "org.freedesktop.DBus.Introspectable.Introspect",
    );
    let shipped = std::fs::read_to_string(dist.join("org.tcd.Volume1.xml")).expect("shipped XML");
    assert_eq!(
        interface_block(&live, "org.tcd.Volume1"),
        interface_block(&shipped, "org.tcd.Volume1"),
        "dist/dbus/org.tcd.Volume1.xml is out of date"
    );
    let managed = dbus_send(
        &d,
        "/org/tcd/Tcd1",
        "org.freedesktop.DBus.ObjectManager.GetManagedObjects",
    );
    assert!(
        managed.contains(&object) && managed.contains("org.tcd.Volume1"),
        "{managed}"
    );
    assert!(
        managed.contains("AES") && managed.contains("TrueCrypt"),
        "{managed}"
    );
    d.ok(&["dismount", &object], "");
    let managed = dbus_send(
        &d,
        "/org/tcd/Tcd1",
        "org.freedesktop.DBus.ObjectManager.GetManagedObjects",
    );
    assert!(
        !managed.contains(&object),
        "the object went with the volume: {managed}"
    );
}

#[test]
fn a_new_password_keeps_the_pim_unless_a_new_one_is_given() {
    let d = Daemon::start();
    let image = d.path("pim.hc");
    std::fs::copy(tcrypt_images().join("vcpim_1_1234-sha256-xts-aes"), &image).expect("copy");
    let v = image.to_str().expect("utf-8");
    let info = |pim: &str, pw: &str| {
        d.tcctl(
            &[
                "info",
                v,
                "--hash",
                "sha256",
                "--format",
                "veracrypt",
                "--pim",
                pim,
                "--password-stdin",
            ],
            &format!("{pw}\n"),
        )
        .status
        .code()
    };
    let change = |extra: &[&str], old: &str, new: &str| {
        let mut a = vec![
            "change-password",
            v,
            "--hash",
            "sha256",
            "--pim",
            "1234",
            "--password-stdin",
        ];
        a.extend(extra);
        d.ok(&a, &format!("{old}\n{new}\n"));
    };
    change(&[], "cccccccccccccccccccc", "another long password");
    assert_eq!(
        info("1234", "another long password"),
        Some(0),
        "the PIM stayed"
    );
    change(
        &["--new-pim", "0"],
        "another long password",
        "a third long password",
    );
    assert_eq!(
        info("0", "a third long password"),
        Some(0),
        "--new-pim 0: the default"
    );
}

#[test]
fn change_password_backup_and_restore_headers() {
    let d = Daemon::start();
    let image = d.path("v.tc");
    std::fs::copy(tcrypt_images().join("tc_5-sha512-xts-aes"), &image).expect("copy");
    let v = image.to_str().expect("utf-8");
    let tc = ["--hash", "sha512", "--volume-type", "truecrypt"];
    let with = |cmd: &[&'static str]| -> Vec<String> {
        cmd.iter().chain(tc.iter()).map(|s| s.to_string()).collect()
    };
    let run = |args: Vec<String>, stdin: &str| {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        d.tcctl(&a, stdin)
    };
    let mount_none = |pw: &str| {
        let mut a = with(&[
            "mount",
            "--password-stdin",
            "--filesystem",
            "none",
            "--readonly",
        ]);
        a.insert(1, v.to_owned());
        run(a, &format!("{pw}\n"))
    };

    let mut a = with(&["change-password", "--password-stdin"]);
    a.insert(1, v.to_owned());
    assert!(run(a, "aaaaaaaaaaaa\nnew password\n").status.success());
    assert_eq!(
        mount_none("aaaaaaaaaaaa").status.code(),
        Some(2),
        "old password refused"
    );
    assert!(mount_none("new password").status.success());
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    assert_eq!(blkid_uuid(&device), "DEAD-BABE");
    d.ok(&["dismount", "--all"], "");

    let backup = d.path("v.hdr");
    let mut a = with(&["backup-header", "--password-stdin"]);
    a.insert(1, v.to_owned());
    a.insert(2, backup.to_str().expect("utf-8").to_owned());
    assert!(run(a, "new password\n").status.success());
    assert_eq!(std::fs::metadata(&backup).expect("backup").len(), 131072);

    // Lose both headers; the backup file brings the volume back.
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&image)
        .expect("open");
    let len = f.metadata().expect("meta").len();
    use std::os::unix::fs::FileExt;
    f.write_all_at(&[0u8; 512], 0).expect("wipe");
    f.write_all_at(&[0u8; 512], len - 131072).expect("wipe");
    assert_eq!(mount_none("new password").status.code(), Some(2));
    let mut a = with(&["restore-header", "-q", "--password-stdin"]);
    a.insert(1, v.to_owned());
    a.insert(2, backup.to_str().expect("utf-8").to_owned());
    let out = run(a, "new password\n");
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "{v}: header restored from {} (the primary header in it)\n",
            backup.display()
        )
    );
    assert!(
        mount_none("new password").status.success(),
        "restored from the file"
    );
    d.ok(&["dismount", "--all"], "");

    // Lose the primary header only; the embedded backup restores it.
    f.write_all_at(&[0u8; 512], 0).expect("wipe");
    let mut a = with(&["restore-header", "--embedded", "-q", "--password-stdin"]);
    a.insert(1, v.to_owned());
    let out = run(a, "new password\n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut first = [0u8; 512];
    f.read_exact_at(&mut first, 0).expect("read");
    assert!(first.iter().any(|&b| b != 0), "the primary header is back");
    assert!(mount_none("new password").status.success());
    d.ok(&["dismount", "--all"], "");
}

fn fsck_clean(d: &Daemon, volume: &str, pim: &str) {
    d.ok(
        &[
            "mount",
            volume,
            "--password-stdin",
            "--pim",
            pim,
            "--filesystem",
            "none",
            "--readonly",
        ],
        "durable words\n",
    );
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    let st = Command::new(require_tool("fsck.ext4", "package e2fsprogs"))
        .args(["-n", "-f", &device])
        .stdout(Stdio::null())
        .status()
        .expect("fsck");
    assert!(st.success(), "fsck finds the filesystem clean");
    d.ok(&["dismount", &device], "");
}

#[test]
fn a_full_host_filesystem_is_an_error_and_fsynced_data_survives() {
    require_tool("mkfs.ext4", "package e2fsprogs");
    let d = Daemon::start();
    let small = d.path("small");
    std::fs::create_dir(&small).expect("mkdir");
    let st = Command::new(require_tool("mount", "package mount"))
        .args([
            "-t",
            "tmpfs",
            "-o",
            "size=40M",
            "tcd-test",
            small.to_str().expect("utf-8"),
        ])
        .status()
        .expect("mount tmpfs");
    assert!(st.success(), "mount a small tmpfs");
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg("-l").arg(&self.0).status();
        }
    }
    let _tmpfs = Unmount(small.clone());
    // A sparse (quick) 48 MiB container on a 40 MiB tmpfs.
    let vol = small.join("v.vc");
    let v = vol.to_str().expect("utf-8");
    d.ok(
        &[
            "create",
            v,
            "--size",
            "48M",
            "--quick",
            "--filesystem",
            "ext4",
            "--pim",
            "1",
            "--force",
            "--password-stdin",
        ],
        "durable words\n",
    );
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let m = mnt.to_str().expect("utf-8");
    d.ok(
        &["mount", v, m, "--pim", "1", "--password-stdin"],
        "durable words\n",
    );
    // Leave the host filesystem 12 MiB: a ballast file takes the rest.
    let out = Command::new(require_tool("df", "package coreutils"))
        .args(["-B1", "--output=avail"])
        .arg(&small)
        .output()
        .expect("df");
    let avail: u64 = String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .expect("df figure");
    let ballast = small.join("ballast");
    std::fs::write(&ballast, vec![1u8; (avail - (12 << 20)) as usize]).expect("ballast");
    let kept = write_files(&mnt, 1, 4);
    // Far more than the tmpfs can hold.
    let big: Vec<u8> = vec![0x33; 1 << 20];
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(mnt.join("too-big"))?;
        for _ in 0..30 {
            f.write_all(&big)?;
        }
        f.sync_all()
    })();
    assert!(result.is_err(), "writing past the host's space fails");
    // The dismount goes through, and says that writes were lost.
    let (code, msg) = d.fails(&["dismount", m, "--force"], "");
    assert_eq!(code, 11, "lost writes have their own exit code: {msg}");
    assert!(
        msg.contains("was dismounted") && msg.contains("No space left on device"),
        "the user hears that the host ran out of space: {msg}"
    );
    assert!(
        d.list().as_array().is_some_and(|v| v.is_empty()),
        "the volume is gone from the list"
    );
    // The user frees space on the host; the journal may need replaying.
    std::fs::remove_file(&ballast).expect("free the host");
    d.ok(
        &["mount", v, m, "--pim", "1", "--password-stdin"],
        "durable words\n",
    );
    for (p, sum) in &kept {
        let data = std::fs::read(p).expect("the fsynced file is there");
        assert_eq!(&Sha256::digest(&data).to_vec(), sum);
    }
    d.ok(&["dismount", "--all"], "");
}

#[test]
fn fsck_is_clean_after_the_daemon_is_killed_during_writes() {
    require_tool("mkfs.ext4", "package e2fsprogs");
    let mut d = Daemon::start();
    let vol = d.path("v.vc");
    let v = vol.to_str().expect("utf-8");
    d.ok(
        &[
            "create",
            v,
            "--size",
            "128M",
            "--filesystem",
            "ext4",
            "--pim",
            "1",
            "--force",
            "--password-stdin",
        ],
        "durable words\n",
    );
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let m = mnt.to_str().expect("utf-8");
    d.ok(
        &["mount", v, m, "--pim", "1", "--password-stdin"],
        "durable words\n",
    );
    let mut writer = Command::new(require_tool("dd", "package coreutils"))
        .args([
            "if=/dev/urandom",
            &format!("of={m}/big"),
            "bs=1M",
            "count=100",
            "oflag=direct",
        ])
        .stderr(Stdio::null())
        .spawn()
        .expect("dd");
    std::thread::sleep(Duration::from_millis(300));
    d.kill();
    let _ = writer.wait();
    // The next daemon cleans up. The journal needs replaying: a read-only
    // mount replays it into memory, never onto the container.
    d.spawn();
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
        "durable words\n",
    );
    assert!(mnt.join("lost+found").is_dir(), "the filesystem is mounted");
    d.wait_for_log(
        "the filesystem's journal was replayed into memory",
        "a killed daemon leaves the journal to replay",
    );
    d.ok(&["dismount", m], "");
    // Read-write, the journal replays.
    d.ok(
        &["mount", v, m, "--pim", "1", "--password-stdin"],
        "durable words\n",
    );
    d.ok(&["dismount", m], "");
    fsck_clean(&d, v, "1");
}

#[test]
fn create_refuses_a_device_mounted_or_a_file_attached_outside_tcd() {
    let d = Daemon::start();
    let img = d.path("plain.img");
    std::fs::write(&img, vec![0u8; 16 << 20]).expect("image");
    let mkfs = require_tool("mkfs.ext4", "package e2fsprogs");
    let made = Command::new(mkfs)
        .args(["-q", "-F", "-U", "0a1b2c3d-0000-4000-8000-000000000001"])
        .arg(&img)
        .status()
        .expect("mkfs.ext4");
    assert!(made.success());
    let dev = tcd_tests::loop_device::LoopDevice::attach(&img);
    let mnt = d.path("plain");
    std::fs::create_dir(&mnt).expect("mount point");
    let mounted = Command::new("mount")
        .arg(dev.path())
        .arg(&mnt)
        .status()
        .expect("mount");
    assert!(mounted.success());
    std::fs::write(mnt.join("keep"), b"the user's own data").expect("write");
    let create = |path: &str| {
        let out = d.tcctl(
            &[
                "create",
                "-q",
                "--force",
                "--password-stdin",
                "--pim",
                "1",
                "--filesystem",
                "none",
                path,
            ],
            "a long enough password\n",
        );
        let msg = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code().unwrap_or(-1), msg)
    };
    let uuid = "0a1b2c3d-0000-4000-8000-000000000001";
    // A device with a filesystem mounted from it, as mkfs refuses it.
    let (code, msg) = create(dev.path());
    assert_eq!(code, 5, "{msg}");
    assert!(
        msg.contains(&format!("{} (mounted on {})", dev.path(), s(&mnt))),
        "{msg}"
    );
    assert_eq!(
        std::fs::read(mnt.join("keep")).expect("the file"),
        b"the user's own data"
    );
    assert_eq!(blkid_uuid(dev.path()), uuid, "the filesystem is whole");
    let unmounted = Command::new("umount").arg(&mnt).status().expect("umount");
    assert!(unmounted.success());
    // The file a loop device reads: its volume would be made under the
    // device's feet.
    let (code, msg) = create(s(&img));
    assert_eq!(code, 5, "{msg}");
    assert!(
        msg.contains(&format!("(the backing file of {})", dev.path())),
        "{msg}"
    );
    assert_eq!(blkid_uuid(s(&img)), uuid, "the filesystem is whole");
    // Let go, both are the user's to overwrite.
    drop(dev);
    let (code, msg) = create(s(&img));
    assert_eq!(code, 0, "{msg}");
    // The new volume opened by tcd through a loop device over the file:
    // the file and the device name that volume, and where it is served.
    let dev = tcd_tests::loop_device::LoopDevice::attach(&img);
    d.ok(
        &[
            "mount",
            dev.path(),
            "--filesystem",
            "none",
            "--pim",
            "1",
            "--password-stdin",
        ],
        "a long enough password\n",
    );
    let served = d.list()[0]["device"].as_str().expect("device").to_owned();
    let (code, msg) = create(s(&img));
    assert_eq!(code, 4, "{msg}");
    assert!(
        msg.contains(&format!(
            "{} is the file behind {dev}, which is already mounted as {served}: `tcctl \
             dismount {dev}` first",
            s(&img),
            dev = dev.path()
        )),
        "{msg}"
    );
    let (code, msg) = create(dev.path());
    assert_eq!(code, 4, "{msg}");
    assert!(
        msg.contains(&format!("is already mounted as {served}")),
        "{msg}"
    );
    d.ok(&["dismount", dev.path()], "");
}

#[test]
fn a_refused_create_leaves_the_file_it_was_to_replace_as_it_was() {
    use std::os::unix::fs::PermissionsExt;
    let d = Daemon::start();
    let dir = d.path("keep");
    std::fs::create_dir(&dir).expect("folder");
    let old = dir.join("keep.hc");
    std::fs::write(&old, b"the user's own data").expect("write");
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    // With `more` options (keyfiles) before the volume.
    let create_with = |path: &Path, size: &str, password: &str, more: &[&str]| {
        let args = [
            "create",
            "-q",
            "--password-stdin",
            "--pim",
            "1",
            "--force",
            "--filesystem",
            "none",
            "--size",
            size,
        ];
        d.tcctl(
            &[&args[..], more, &[s(path)]].concat(),
            &format!("{password}\n"),
        )
    };
    let create = |path: &Path, size: &str, password: &str| create_with(path, size, password, &[]);
    let kept = || std::fs::read(&old).expect("the old file");
    let files = || std::fs::read_dir(&dir).expect("folder").count();

    // Refused by the daemon (more keyfiles than it takes, from a folder):
    // the file it was to replace is as it was, and nothing is left beside
    // it.
    let many = d.path("many");
    std::fs::create_dir(&many).expect("a keyfile folder");
    for i in 0..257 {
        std::fs::write(many.join(format!("k{i}")), [i as u8]).expect("a keyfile");
    }
    let out = create_with(
        &old,
        "1M",
        "a long enough password",
        &["--keyfile", s(&many)],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{err}");
    assert!(err.contains("at most 256 keyfiles"), "{err}");
    assert!(
        err.ends_with(&format!("; {} is left as it was\n", s(&old))),
        "{err}"
    );
    assert_eq!(kept(), b"the user's own data");
    assert_eq!(files(), 1);
    // More than the filesystem has free: refused before anything is
    // made, and a new name leaves no file.
    let out = create(&old, "99999T", "a long enough password");
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not enough free space"), "{out:?}");
    // The way out that needs no room: the volume in the file itself.
    assert!(
        err.ends_with(&format!(
            "free (a new file is made beside {} until it replaces it; without --size the \
             volume is made in that file, at its size)\n",
            s(&old)
        )),
        "{err}"
    );
    assert_eq!(kept(), b"the user's own data");
    let new = dir.join("new.hc");
    let out = create(&new, "99999T", "a long enough password");
    assert_eq!(out.status.code(), Some(7), "{out:?}");
    assert!(!new.exists(), "no empty file is left");
    assert_eq!(files(), 1);

    // Made: the volume takes the old file's place, with its permissions.
    let out = create(&old, "1M", "a long enough password");
    assert!(out.status.success(), "{out:?}");
    let meta = std::fs::metadata(&old).expect("the volume");
    assert_eq!(meta.len(), 1 << 20);
    assert_eq!(meta.permissions().mode() & 0o777, 0o640);
    assert_eq!(files(), 1);
    d.ok(
        &["info", "--password-stdin", "--pim", "1", s(&old)],
        "a long enough password\n",
    );
    // Nor does expand grow it past the free space.
    let (code, msg) = d.fails(
        &[
            "expand",
            "-q",
            "--add",
            "99999T",
            "--password-stdin",
            "--pim",
            "1",
            s(&old),
        ],
        "a long enough password\n",
    );
    assert_eq!(code, 7, "{msg}");
    assert!(msg.contains("not enough free space"), "{msg}");
    assert_eq!(std::fs::metadata(&old).expect("the volume").len(), 1 << 20);
}

#[test]
fn ctrl_c_during_create_removes_the_unfinished_file_and_says_so() {
    let d = Daemon::start();
    // Interrupted while the daemon fills a large volume.
    let vol = d.path("big.hc");
    let v = vol.to_str().expect("utf-8");
    let mut client = d
        .command()
        .args([
            "create",
            v,
            "--size",
            "3G",
            "--pim",
            "1",
            "--force",
            "--password-stdin",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tcctl");
    let mut input = client.stdin.take().expect("stdin");
    input
        .write_all(b"interrupted at a fill of 3G\n")
        .expect("write");
    drop(input);
    // The daemon is at work once the password is read and the call made.
    std::thread::sleep(Duration::from_millis(800));
    assert!(vol.exists(), "the container file was made");
    send_signal(client.id(), libc::SIGINT);
    let out = client.wait_with_output().expect("wait");
    assert_eq!(out.status.code(), Some(130));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!("tcctl: interrupted: removed the unfinished {v}")
    );
    assert!(!vol.exists(), "no half-made volume is left");
    d.wait_for_log(
        "client went away: cancelling its request",
        "the fill was not cancelled",
    );

    // Ctrl-C typed at the password prompt: interrupted, as anywhere else
    // (130); Ctrl-D ends the input (cancelled, 10); no file was made yet.
    let vol = d.path("prompt.hc");
    let v = vol.to_str().expect("utf-8");
    for (key, said, exit) in [("\u{3}", "interrupted", 130), ("\u{4}", "end of input", 10)] {
        let mut c = d.command();
        c.args(["create", v, "--size", "4M"]);
        let mut t = Pty::spawn(c, None);
        t.expect(
            &format!("Password for the new volume {v}: "),
            Duration::from_secs(20),
        );
        std::thread::sleep(Duration::from_millis(300));
        t.type_line(key);
        let (code, text) = t.finish(Duration::from_secs(20));
        assert_eq!(code, exit, "{said}: {text}");
        assert!(
            text.contains(&format!("tcctl: no password given ({said})")),
            "{text}"
        );
        assert!(!vol.exists());
    }
}

#[test]
fn a_client_killed_mid_create_leaves_no_volume_behind() {
    let d = Daemon::start();
    let vol = d.path("big.vc");
    let v = vol.to_str().expect("utf-8");
    let mut client = d
        .command()
        .args([
            "create",
            v,
            "--size",
            "3G",
            "--pim",
            "1",
            "--force",
            "--password-stdin",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("tcctl");
    client
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"half made\n")
        .expect("write");
    std::thread::sleep(Duration::from_millis(400));
    client.kill().expect("kill the client");
    client.wait().expect("wait");
    d.wait_for_log(
        "client went away: cancelling its request",
        "the fill was not cancelled",
    );
    // The headers come last: the half-filled file is no volume.
    let (code, _) = d.fails(
        &[
            "mount",
            v,
            "--pim",
            "1",
            "--password-stdin",
            "--filesystem",
            "none",
        ],
        "half made\n",
    );
    assert_eq!(code, 2);
    assert_eq!(
        d.list().as_array().map(Vec::len),
        Some(0),
        "nothing mounted"
    );
}

#[test]
fn the_daemon_serves_on_a_real_session_bus_too() {
    require_root_and_fuse();
    let dir = tempfile::tempdir().expect("temp dir");
    let bus = PrivateBus::session();
    let address = bus.address.clone();
    let mut daemon = Stopped(
        Command::new(build_dir().join("tcd"))
            .args(["--session", "--runtime-dir"])
            .arg(dir.path().join("run"))
            .arg("--backend-dir")
            .arg(build_dir())
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .env("TCD_LOG", "warn")
            .spawn()
            .expect("tcd --session"),
    );
    let tcctl = |args: &[&str], stdin: &str| bus.tcctl(args, stdin);
    bus.wait_for_tcd();
    let image = tcrypt_images().join("tc_5-sha512-xts-aes");
    let out = tcctl(
        &[
            "mount",
            image.to_str().expect("utf-8"),
            "--readonly",
            "--filesystem",
            "none",
            "--password-stdin",
            "--hash",
            "sha512",
        ],
        "aaaaaaaaaaaa\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let list: serde_json::Value =
        serde_json::from_slice(&tcctl(&["list", "--json"], "").stdout).expect("json");
    let device = list["volumes"][0]["device"]
        .as_str()
        .expect("device")
        .to_owned();
    assert_eq!(blkid_uuid(&device), "DEAD-BABE");
    assert!(tcctl(&["dismount", "--all"], "").status.success());
    send_signal(daemon.0.id(), 15);
    assert!(daemon.0.wait().expect("wait").success());

    // With no socket or bus named, tcctl looks for the daemon on the
    // system bus first (here the same private bus, named as the system
    // bus), then on the default socket.
    let mut daemon = Stopped(
        Command::new(build_dir().join("tcd"))
            .args(["--system", "--runtime-dir"])
            .arg(dir.path().join("run"))
            .arg("--backend-dir")
            .arg(build_dir())
            .env("DBUS_SYSTEM_BUS_ADDRESS", &address)
            .env("TCD_LOG", "warn")
            .spawn()
            .expect("tcd --system"),
    );
    let plain_list = || {
        Command::new(build_dir().join("tcctl"))
            .args(["list", "--json"])
            .env_remove("TCD_SOCKET")
            .env("DBUS_SYSTEM_BUS_ADDRESS", &address)
            .output()
            .expect("tcctl")
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = plain_list();
        if out.status.success() {
            let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
            assert_eq!(doc, serde_json::json!({"schema": 1, "volumes": []}));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "tcctl did not find tcd on the system bus: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    send_signal(daemon.0.id(), 15);
    assert!(daemon.0.wait().expect("wait").success());
}

#[test]
fn dismount_all_dismounts_what_it_can_and_names_the_busy_one_with_force() {
    let d = Daemon::start();
    let open = ["--password-stdin", "--hash", "sha512", "--pim", "1"];
    let mut mounts = Vec::new();
    for name in ["held", "free"] {
        let (vol, mnt) = (d.path(&format!("{name}.hc")), d.path(name));
        std::fs::create_dir(&mnt).expect("mount point");
        let v = vol.to_str().expect("utf-8");
        let mut args = vec!["create", "--force", v, "--size", "8M"];
        args.extend(open);
        d.ok(&args, "busy words\n");
        let mut args = vec!["mount", v, mnt.to_str().expect("utf-8")];
        args.extend(open);
        d.ok(&args, "busy words\n");
        mounts.push((vol, mnt));
    }
    // A file open on the first: it is busy, and this process is named as
    // what holds it (as --force names it); the second still goes.
    let held = std::fs::File::create(mounts[0].1.join("open file")).expect("a file");
    // (Named among others at times: a process another test thread has
    // just started holds a copy of the file's descriptor until its exec
    // closes it.)
    let holder = format!("PID {} (", std::process::id());
    let (code, err) = d.fails(&["dismount", s(&mounts[0].1)], "");
    assert_eq!(code, 5, "{err}");
    assert!(
        err.contains("is busy: in use by ")
            && err.contains(&holder)
            && err.ends_with("); --force takes it off its mount point now, and it is detached when the last user lets go\n"),
        "{err}"
    );
    let (code, err) = d.fails(&["dismount", "--all"], "");
    assert_eq!(code, 5, "{err}");
    assert!(
        err.contains("is busy: in use by ")
            && err.contains(&holder)
            && err
                .contains("); 1 other volume dismounted; --force takes each volume in use off its mount point now"),
        "{err}"
    );
    let left: Vec<String> = d
        .list()
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["volume"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(left, vec![mounts[0].0.to_str().expect("utf-8").to_owned()]);
    // Again, with only the busy one left: no word of other volumes.
    let (code, err) = d.fails(&["dismount", "--all"], "");
    assert_eq!(code, 5, "{err}");
    assert!(
        err.contains(&holder) && !err.contains("other volume"),
        "{err}"
    );
    drop(held);
    d.ok(&["dismount", "--all"], "");
    assert_eq!(d.list().as_array().map(Vec::len), Some(0));
}

#[test]
fn create_in_an_existing_file_asks_before_overwriting_it() {
    let d = Daemon::start();
    let vol = d.path("old.img");
    let v = vol.to_str().expect("utf-8");
    std::fs::write(&vol, vec![0x5au8; 4 << 20]).expect("an existing file");
    let args = ["create", v, "--filesystem", "none", "--quick"];
    let ask = |extra: &[&str], answer: &str| {
        let mut c = d.command();
        c.args(args).args(extra);
        let mut t = Pty::spawn(c, None);
        t.expect(
            &format!(
                "WARNING: this overwrites everything in {v} irrevocably. Are you sure? \
                 (Type 'YES' in capital letters): "
            ),
            Duration::from_secs(20),
        );
        std::thread::sleep(Duration::from_millis(300));
        t.type_line(answer);
        t
    };
    // Anything but YES: nothing is asked further, nothing written; the
    // same when --size would replace the file with a new one.
    for extra in [&[][..], &["--size", "8M"][..]] {
        let (code, text) = ask(extra, "yes").finish(Duration::from_secs(20));
        assert_eq!(code, 10, "{text}");
        assert!(text.contains("not confirmed: nothing done"), "{text}");
        let kept = std::fs::read(&vol).expect("file");
        assert!(
            kept.len() == 4 << 20 && kept.iter().all(|&b| b == 0x5a),
            "untouched"
        );
    }
    let mut t = ask(&[], "YES");
    t.expect(
        &format!("Password for the new volume {v}: "),
        Duration::from_secs(20),
    );
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("twenty-one characters");
    t.expect("Repeat the password: ", Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("twenty-one characters");
    t.expect("(Enter for none): ", Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("");
    let (code, text) = t.finish(Duration::from_secs(60));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains(&format!("{v} created")), "{text}");
}

#[test]
fn creates_progress_bar_starts_with_the_fill_and_ends_full() {
    let d = Daemon::start();
    let vol = d.path("bar.hc");
    let v = vol.to_str().expect("utf-8");
    let mut c = d.command();
    c.args([
        "create",
        v,
        "--size",
        "32M",
        "--filesystem",
        "none",
        "--pim",
        "1",
        "--force",
    ]);
    let mut t = Pty::spawn(c, None);
    for prompt in [
        format!("Password for the new volume {v}: "),
        "Repeat the password: ".to_owned(),
    ] {
        t.expect(&prompt, Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(300));
        t.type_line("twenty-one characters");
    }
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    // No bar of nothing while the key is derived; the data area, 32 MiB
    // less the headers' 256 KiB, drawn whole at the end with a rate.
    assert!(!text.contains("0 B/0 B"), "{text}");
    let end = text
        .lines()
        .rfind(|l| l.contains("31.75 MiB/31.75 MiB "))
        .unwrap_or_default()
        .to_owned();
    assert!(end.trim_end().ends_with("/s"), "{text}");
    assert!(text.contains(&format!("{v} created")), "{text}");
}

/// A FAT volume served by fusefat (this kernel has no vfat) is mounted with
/// a notice that fsync does not reach the volume, as fusefat never passes
/// it on; an ext4 volume (the kernel's own driver) gets none.
#[test]
fn a_fat_volume_under_fusefat_is_mounted_with_a_notice_that_fsync_does_not_reach_it() {
    require_tool("fusefat", "package fusefat");
    let d = Daemon::start();
    let open = ["--password-stdin", "--hash", "sha512", "--pim", "1"];
    for (fs, notice) in [("fat", true), ("ext4", false)] {
        let vol = d.path(&format!("{fs}.hc"));
        let mnt = d.path(&format!("{fs}-mnt"));
        std::fs::create_dir(&mnt).expect("mount point");
        let mut args = vec![
            "create",
            "--force",
            s(&vol),
            "--size",
            "16M",
            "--quick",
            "--filesystem",
            fs,
        ];
        args.extend(open);
        d.ok(&args, "fat words\n");
        let mut args = vec!["mount", s(&vol), s(&mnt)];
        args.extend(open);
        let out = d.tcctl(&args, "fat words\n");
        assert!(out.status.success(), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let said = "note: fusefat serves this FAT volume (the kernel has no vfat): fsync does \
                    not reach the volume; what is written gets there when the kernel writes \
                    back its cache, and at the latest at dismount (/usr/share/doc/tcd/docs/RELIABILITY.md)\n";
        assert_eq!(err.ends_with(said), notice, "{fs}: {err}");
        d.ok(&["dismount", s(&mnt)], "");
        // Read-only, nothing is written to lose: no notice.
        let mut args = vec!["mount", s(&vol), s(&mnt), "--readonly"];
        args.extend(open);
        let out = d.tcctl(&args, "fat words\n");
        assert!(out.status.success(), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("fsync does not reach"), "{fs}: {err}");
        d.ok(&["dismount", s(&mnt)], "");
    }
}
