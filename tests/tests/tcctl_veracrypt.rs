//! VeraCrypt's text-mode spellings, run through the real `tcctl` against a
//! daemon of the test's own: one test per row of the table in
//! docs/VERACRYPT.md, each checking what the spelling does.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;
use tcd_tests::daemon::{Daemon, run_with_input};
use tcd_tests::system::{OPEN_FAST, System};
use tcd_tests::{build_dir, require_tool, s, tcrypt_images};

/// The real images' password, and their hidden volumes'.
const AAA: &str = "aaaaaaaaaaaa\n";
const BBB: &str = "bbbbbbbbbbbb\n";
const PW: &str = "correct horse\n";
const USAGE: i32 = 64;
const WRONG_PASSWORD: i32 = 2;
const INVALID_ARGUMENT: i32 = 7;

/// A new 24 MiB ext4 volume (PIM 1: a fast key derivation) and an empty
/// folder to mount it on.
fn volume(d: &Daemon, name: &str) -> (String, String) {
    require_tool("mkfs.ext4", "package e2fsprogs");
    let v = d.path(name);
    let mnt = d.path(&format!("{name}.mnt"));
    std::fs::create_dir(&mnt).expect("mkdir");
    d.ok(
        &[
            "create",
            s(&v),
            "--size",
            "24M",
            "--stdin",
            "--pim",
            "1",
            "--force",
            "--quick",
        ],
        PW,
    );
    (s(&v).to_owned(), s(&mnt).to_owned())
}

fn row(d: &Daemon) -> serde_json::Value {
    let list = d.list();
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    list[0].clone()
}

#[test]
fn text_mode_mounts_a_volume_named_alone() {
    let d = Daemon::start();
    let (v, mnt) = volume(&d, "a.hc");
    let out = d.ok(
        &["-t", "--non-interactive", "--stdin", "--pim", "1", &v, &mnt],
        PW,
    );
    assert!(out.starts_with(&format!("{v} mounted on {mnt} (")), "{out}");
    assert_eq!(row(&d)["mount_point"], mnt.as_str());
    d.ok(&["dismount", "--all"], "");
    let out = d.ok(
        &["--text", "--mount", &v, &mnt, "--stdin", "--pim", "1"],
        PW,
    );
    assert!(out.starts_with(&format!("{v} mounted on {mnt} (")), "{out}");
}

#[test]
fn non_interactive_without_stdin_fails_at_once() {
    let d = Daemon::start();
    let v = d.image("tc_5-sha512-xts-aes");
    let (code, msg) = d.fails(&["-t", "--non-interactive", &v], "");
    assert_eq!(code, 64, "{msg}");
    assert!(msg.contains("--non-interactive asks for none"), "{msg}");
}

#[test]
fn stdin_reads_the_password_from_standard_input() {
    let d = Daemon::start();
    let v = d.image("tc_5-sha512-xts-aes");
    d.ok(&["mount", "--stdin", "--filesystem", "none", &v], AAA);
    assert_eq!(row(&d)["format"], "TrueCrypt");
}

#[test]
fn tc_and_truecrypt_try_the_truecrypt_format_only() {
    let d = Daemon::start();
    let tc = d.image("tc_5-sha512-xts-aes");
    d.ok(
        &[
            "-t",
            "-tc",
            "--stdin",
            "--hash",
            "sha512",
            "--filesystem",
            "none",
            &tc,
        ],
        AAA,
    );
    assert_eq!(row(&d)["format"], "TrueCrypt");
    d.ok(&["dismount", "--all"], "");
    let vc = d.image("vc_1-sha512-xts-aes");
    for spelling in [&["-tc"][..], &["--truecrypt"], &["--format", "truecrypt"]] {
        let mut args = vec![
            "mount",
            "--stdin",
            "--hash",
            "sha512",
            "--filesystem",
            "none",
        ];
        args.extend_from_slice(spelling);
        args.push(&vc);
        let (code, msg) = d.fails(&args, AAA);
        assert_eq!(code, 2, "a VeraCrypt volume is not tried: {msg}");
    }
}

#[test]
fn volume_type_truecrypt_still_picks_the_format() {
    let d = Daemon::start();
    let vc = d.image("vc_1-sha512-xts-aes");
    let (code, _) = d.fails(
        &[
            "info",
            "--stdin",
            "--hash",
            "sha512",
            "--volume-type",
            "truecrypt",
            &vc,
        ],
        AAA,
    );
    assert_eq!(code, 2, "only the TrueCrypt format is tried");
    let out = d.ok(
        &[
            "info",
            "--stdin",
            "--hash",
            "sha512",
            "--volume-type",
            "veracrypt",
            &vc,
            "--json",
        ],
        AAA,
    );
    assert!(out.contains("\"VeraCrypt\""), "{out}");
}

/// A new outer volume of 24 MiB, fully written (no --quick) and FAT,
/// which fills from the start: a hidden volume needs that.
fn fat_outer(d: &Daemon, name: &str) -> String {
    let v = s(&d.path(name)).to_owned();
    d.ok(
        &[
            "create",
            &v,
            "--size",
            "24M",
            "--stdin",
            "--pim",
            "1",
            "--force",
            "--filesystem",
            "fat",
        ],
        PW,
    );
    v
}

#[test]
fn volume_type_hidden_makes_a_hidden_volume_in_the_outer_one() {
    let d = Daemon::start();
    let (v, mnt) = (fat_outer(&d, "outer.hc"), d.path("mnt"));
    std::fs::create_dir(&mnt).expect("mkdir");
    let mnt = s(&mnt).to_owned();
    let out = d.ok(
        &[
            "-t",
            "-c",
            &v,
            "--volume-type",
            "hidden",
            "--size",
            "8MiB",
            "--outer-pim",
            "1",
            "--pim",
            "1",
            "--force",
            "--stdin",
            "--filesystem",
            "ext4",
        ],
        "correct horse\nhidden words\n",
    );
    assert_eq!(out, format!("hidden volume created in {v}\n"));
    d.ok(
        &["mount", &v, &mnt, "--stdin", "--pim", "1"],
        "hidden words\n",
    );
    let r = row(&d);
    assert_eq!(r["hidden"], true, "{r}");
    assert_eq!(r["size"], 8 << 20, "{r}");
    let (code, msg) = d.fails(&["create", &v, "--volume-type", "hidden", "--stdin"], "");
    assert_eq!(code, USAGE, "{msg}");
    assert!(msg.contains("--volume-type hidden needs --size"), "{msg}");

    // The outer volume guarding its hidden one, whose PIM is VeraCrypt's
    // --protection-pim; without it the hidden header is not found.
    d.ok(&["dismount", "--all"], "");
    let outer = ["mount", &v, "--stdin", "--pim", "1", "--protect-hidden"];
    let none = ["--filesystem", "none"];
    let (code, msg) = d.fails(
        &[&outer[..], &none].concat(),
        "correct horse\nhidden words\n",
    );
    assert_eq!(code, 2, "{msg}");
    d.ok(
        &[&outer[..], &none, &["--protection-pim", "1"]].concat(),
        "correct horse\nhidden words\n",
    );
    assert_eq!(row(&d)["protects_hidden"], true);
}

/// Once protection refuses a write, the outer volume's filesystem refuses
/// every later one, whatever serves it (the kernel, or a driver process
/// such as fusefat, which reports no write error of its device): nothing
/// more is written and taken as done.
#[test]
fn writes_after_protection_refused_one_fail_at_once() {
    use std::io::Write;
    let d = Daemon::start();
    let (v, mnt) = (fat_outer(&d, "outer.hc"), d.path("mnt"));
    std::fs::create_dir(&mnt).expect("mkdir");
    d.ok(
        &[
            &["-t", "-c", &v, "--volume-type", "hidden", "--size", "8MiB"][..],
            &["--outer-pim", "1", "--pim", "1", "--force", "--stdin"],
            &["--filesystem", "none"],
        ]
        .concat(),
        "correct horse\nhidden words\n",
    );
    d.ok(
        &[
            &["mount", &v, s(&mnt), "--stdin", "--pim", "1"][..],
            &["--protect-hidden", "--protection-pim", "1"],
        ]
        .concat(),
        "correct horse\nhidden words\n",
    );
    // Filling the outer filesystem reaches the hidden volume's area.
    let chunk = vec![0x5au8; 1 << 20];
    let mut big = std::fs::File::create(mnt.join("big")).expect("create");
    // (A driver process may take the data into the page cache and write
    // it back up to 30 s later; the filesystem fills before that.)
    for _ in 0..40 {
        if big.write_all(&chunk).is_err() {
            break;
        }
    }
    let _ = big.sync_all();
    drop(big);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while row(&d)["read_only"] != true {
        assert!(
            std::time::Instant::now() < deadline,
            "protection never refused a write: {}",
            row(&d)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // From then on a new file is refused, by the time the sweep has run.
    let mut refused = None;
    for n in 0..100 {
        let made = std::fs::File::create(mnt.join(format!("after{n}")))
            .and_then(|mut f| f.write_all(b"lost?").and_then(|()| f.sync_all()));
        if let Err(e) = made {
            refused = Some(e);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let refused = refused.expect("writes after the refused one still succeed");
    assert!(
        matches!(refused.raw_os_error(), Some(libc::EROFS) | Some(libc::EIO)),
        "{refused}"
    );
    // Said once, as the failure (standard output has nothing to add).
    let out = d.tcctl(&["dismount", s(&mnt)], "");
    assert_eq!(out.status.code(), Some(11), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr)
            .matches("into the protected hidden volume")
            .count(),
        1,
        "{out:?}"
    );
}

#[test]
fn protection_keyfiles_protect_a_hidden_volume_opened_by_keyfiles() {
    let d = Daemon::start();
    let v = std::path::PathBuf::from(fat_outer(&d, "outer.hc"));
    let (key, other) = (d.path("hidden.key"), d.path("other.key"));
    d.ok(&["create-keyfile", s(&key)], "");
    d.ok(&["create-keyfile", s(&other)], "");
    d.ok(
        &[
            "-t",
            "-c",
            s(&v),
            "--volume-type",
            "hidden",
            "--size",
            "8MiB",
            "--outer-pim",
            "1",
            "--pim",
            "1",
            "--force",
            "-k",
            s(&key),
            "--stdin",
            "--filesystem",
            "none",
        ],
        "correct horse\nhidden words\n",
    );
    let outer = [
        "-t",
        s(&v),
        "--stdin",
        "--pim",
        "1",
        "--protect-hidden=yes",
        "--protection-pim",
        "1",
        "--filesystem",
        "none",
    ];
    // The hidden volume's keyfile, not another, finds its header.
    for (keyfiles, code) in [(s(&other), 2), (s(&key), 0)] {
        let out = d.tcctl(
            &[&outer[..], &["--protection-keyfiles", keyfiles]].concat(),
            "correct horse\nhidden words\n",
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{keyfiles}: {err}");
    }
    assert_eq!(row(&d)["protects_hidden"], true);
    assert_ne!(row(&d)["hidden"], true);
}

#[test]
fn random_source_wipe_cache_and_token_keyfiles_forms() {
    let d = Daemon::start();
    let v = d.path("r.hc");
    let key = d.path("k");
    d.ok(&["create-keyfile", s(&key)], "");
    // --random-source naming the kernel's source; -p "" with a keyfile.
    d.ok(
        &[
            "-t",
            "-c",
            s(&v),
            "--size=4M",
            "--random-source=/dev/urandom",
            "-p",
            "",
            "-k",
            s(&key),
            "--pim=1",
            "--filesystem=none",
        ],
        "",
    );
    d.ok(
        &[
            "-t",
            s(&v),
            "-k",
            s(&key),
            "--password=",
            "--pim=1",
            "--filesystem=none",
            "-m",
            "ro",
        ],
        "",
    );
    assert_eq!(row(&d)["read_only"], true);
    d.ok(&["-t", "-d"], "");
    // --wipe-cache and --list-token-keyfiles are `wipe-cache` and `token
    // list`, whatever those say.
    for (veracrypt, tcctl) in [
        (&["-t", "--wipe-cache"][..], &["wipe-cache"][..]),
        (&["-t", "--list-token-keyfiles"], &["token", "list"]),
        (&["-t", "--list-securitytoken-keyfiles"], &["token", "list"]),
    ] {
        let (a, b) = (d.tcctl(veracrypt, ""), d.tcctl(tcctl, ""));
        assert_eq!(
            (a.status.code(), a.stdout, a.stderr),
            (b.status.code(), b.stdout, b.stderr),
            "{veracrypt:?}"
        );
    }
}

#[test]
fn create_with_veracrypt_spellings_makes_that_volume() {
    let d = Daemon::start();
    require_tool("mkfs.fat", "package dosfstools");
    let v = d.path("new.hc");
    let out = d.ok(
        &[
            "-t",
            "-c",
            s(&v),
            "--volume-type=normal",
            "--size=20MiB",
            // As VeraCrypt shows a cascade: AES(Twofish) is AES-Twofish.
            "--encryption=AES(Twofish)",
            "--hash=sha-512",
            "--filesystem=FAT",
            "--pim=1",
            "--force",
            "--quick",
            "--stdin",
        ],
        PW,
    );
    assert_eq!(out, format!("{} created\n", s(&v)));
    assert_eq!(std::fs::metadata(&v).expect("made").len(), 20 << 20);
    let info: serde_json::Value =
        serde_json::from_str(&d.ok(&["--test", s(&v), "--stdin", "--pim", "1", "--json"], PW))
            .expect("json");
    assert_eq!(info["encryption"], "AES-Twofish", "{info}");
    assert_eq!(info["hash"], "SHA-512", "{info}");
}

/// VeraCrypt's `--force` with `--create` overwrites what is there without
/// asking, as cryptsetup's -q; without either and without a terminal,
/// nothing is overwritten.
#[test]
fn force_with_create_overwrites_without_asking() {
    let d = Daemon::start();
    let v = d.path("there.hc");
    std::fs::write(&v, vec![0x5au8; 1 << 20]).expect("an old file");
    let args = [
        "-t",
        "-c",
        s(&v),
        "--size=8M",
        "--filesystem=none",
        "--pim=1",
    ];
    // A password fit for PIM 1 (one that is not is refused first).
    let (code, msg) = d.fails(
        &[&args[..], &["--stdin"]].concat(),
        "twenty or more characters\n",
    );
    assert_eq!(code, 64, "{msg}");
    assert_eq!(
        msg,
        format!(
            // On VeraCrypt's line, its word for it.
            "tcctl: {} exists: confirmation needed and no terminal to ask on: give --force\n",
            s(&v)
        )
    );
    assert_eq!(std::fs::read(&v).expect("kept"), vec![0x5au8; 1 << 20]);
    let out = d.ok(&[&args[..], &["--force", "--stdin"]].concat(), PW);
    assert_eq!(out, format!("{} created\n", s(&v)));
    assert_eq!(std::fs::metadata(&v).expect("made").len(), 8 << 20);
    d.ok(&["--test", s(&v), "--stdin", "--pim", "1"], PW);
}

#[test]
fn mount_options_ro_mounts_read_only() {
    let d = Daemon::start();
    let (v, mnt) = volume(&d, "ro.hc");
    // -v (VeraCrypt's verbose) goes anywhere on the line.
    d.ok(
        &["-t", "-m", "ro", "--stdin", "-v", "--pim", "1", &v, &mnt],
        PW,
    );
    assert_eq!(row(&d)["read_only"], true);
    let e = std::fs::write(Path::new(&mnt).join("f"), b"x").expect_err("read-only");
    assert_eq!(e.raw_os_error(), Some(libc::EROFS), "{e}");
    d.ok(&["dismount", "--all"], "");
    d.ok(
        &[
            "mount",
            "--mount-options=readonly",
            "--stdin",
            "--pim",
            "1",
            &v,
            &mnt,
        ],
        PW,
    );
    assert_eq!(row(&d)["read_only"], true);
}

/// Overwrites 512 bytes of `v` at `offset` (from the end when negative).
fn damage(v: &str, offset: i64) {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(v)
        .expect("open");
    let at = if offset < 0 {
        SeekFrom::End(offset)
    } else {
        SeekFrom::Start(offset as u64)
    };
    f.seek(at).expect("seek");
    f.write_all(&[0x5a; 512]).expect("write");
}

#[test]
fn mount_options_headerbak_opens_by_the_backup_header_only() {
    let d = Daemon::start();
    let (v, _) = volume(&d, "bak.hc");
    let (w, _) = volume(&d, "prim.hc");
    // The backup header (128 KiB from the end) damaged: the primary opens,
    // headerbak does not.
    damage(&v, -131072);
    let headerbak = [
        "-t",
        "--stdin",
        "--pim",
        "1",
        "--filesystem",
        "none",
        "-m",
        "headerbak",
    ];
    fn with<'a>(head: &[&'a str], v: &'a str) -> Vec<&'a str> {
        let mut a = head.to_vec();
        a.push(v);
        a
    }
    let (code, msg) = d.fails(&with(&headerbak, &v), PW);
    assert_eq!(code, 2, "{msg}");
    d.ok(
        &["mount", "--stdin", "--pim", "1", "--filesystem", "none", &v],
        PW,
    );
    // The primary damaged: headerbak opens by the backup.
    damage(&w, 0);
    d.ok(&with(&headerbak, &w), PW);
    assert_eq!(d.list().as_array().map(Vec::len), Some(2));
    // `list --json` says which one its backup header opened, as `status`.
    let by_backup: Vec<String> = d
        .list()
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["used_backup_header"] == true)
        .map(|m| m["volume"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(by_backup, [w.as_str()], "{}", d.list());
    // `info` takes -m headerbak as mount does: the backup header only, with
    // no warning that the primary failed, since it was never tried.
    let info = ["info", "--stdin", "--pim", "1", "--json", "-m", "headerbak"];
    let (code, msg) = d.fails(&with(&info, &v), PW);
    assert_eq!(code, 2, "{msg}");
    let out = d.tcctl(&with(&info, &w), PW);
    assert!(out.status.success(), "{out:?}");
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(shown["used_backup_header"], true, "{shown}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let (code, msg) = d.fails(
        &with(&["info", "--stdin", "-m", "headerbak,system"], &w),
        PW,
    );
    assert_eq!(code, 64, "{msg}");
    assert!(
        msg.starts_with("tcctl: -m headerbak goes with neither system"),
        "{msg}"
    );
}

#[test]
fn mount_options_ts_leaves_the_timestamps_writes_set() {
    let d = Daemon::start();
    let (v, mnt) = volume(&d, "ts.hc");
    let st = Command::new("touch")
        .args(["-d", "2001-01-01", &v])
        .status()
        .expect("touch");
    assert!(st.success());
    let old = std::fs::metadata(&v).expect("stat").mtime();
    d.ok(
        &[
            "-t",
            "-m",
            "ts,nokernelcrypto",
            "--stdin",
            "--pim",
            "1",
            &v,
            &mnt,
        ],
        PW,
    );
    std::fs::write(Path::new(&mnt).join("f"), vec![7u8; 1 << 20]).expect("write");
    d.ok(&["-t", "-d", &mnt], "");
    let new = std::fs::metadata(&v).expect("stat").mtime();
    assert!(
        new > old,
        "the host's mtime is the last write's: {old} -> {new}"
    );
}

#[test]
fn mount_options_system_opens_a_system_drive_read_only() {
    let d = Daemon::start();
    let v = d.image("sys_vc_1_gpt_part-sha512-xts-aes");
    let args = [
        "-t",
        "-m",
        "system",
        "--filesystem",
        "none",
        "--hash",
        "sha512",
    ];
    let out = d.tcctl(&[&args[..], &["--stdin", &v]].concat(), AAA);
    assert!(out.status.success(), "{out:?}");
    // Read-only without being asked: said, as VeraCrypt's default.
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tcctl: a system drive is mounted read-only, as VeraCrypt mounts one (--read-write \
         writes to it)\n"
    );
    let r = row(&d);
    let device = r["device"].as_str().expect("device").to_owned();
    assert_eq!(tcd_tests::blkid_uuid(Path::new(&device)), "DEAD-BABE");
    assert_eq!(r["read_only"], true, "{r}");
    d.ok(&["-t", "-d", &device], "");
    // A volume in a file of its own, searched as a system drive with its
    // right password: the failure says where it looked, and nothing is
    // said of a mount that did not happen.
    let plain = d.image("vc_1-sha512-xts-aes");
    let (code, msg) = d.fails(&[&args[..], &["--stdin", &plain]].concat(), AAA);
    assert_eq!(code, 2, "{msg}");
    assert!(
        msg.contains(
            "only a system drive's header (in its first track) was searched: a volume in a \
             file or partition of its own opens without -m system)"
        ) && !msg.contains("mounted read-only"),
        "{msg}"
    );
    let (code, msg) = d.fails(
        &[
            "tcryptOpen",
            "--tcrypt-system",
            "--test-passphrase",
            "--hash",
            "sha512",
            &plain,
        ],
        AAA,
    );
    assert_eq!(code, 2, "{msg}");
    assert!(msg.contains("opens without --tcrypt-system)"), "{msg}");
}

#[test]
fn mount_options_unknown_words_list_the_valid_ones() {
    let out = Command::new(build_dir().join("tcctl"))
        .args(["-t", "-m", "ro,fast", "v.hc"])
        .output()
        .expect("tcctl");
    assert_eq!(out.status.code(), Some(USAGE));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value 'fast' for '--mount-options <OPTIONS>'")
            && err.contains(
                "[possible values: ro, readonly, headerbak, ts, timestamp, nokernelcrypto, system]"
            ),
        "{err}"
    );
    // An empty list is no options: the line goes on to the volume (here
    // one that is not there, exit 3, not a usage error).
    let out = Command::new(build_dir().join("tcctl"))
        .args([
            "-t",
            "-m",
            "",
            "/nonexistent/v.hc",
            "--socket",
            "/nonexistent/s",
        ])
        .output()
        .expect("tcctl");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(USAGE), "{err}");
}

#[test]
fn slot_mounts_on_a_numbered_mount_point_and_refuses_a_taken_one() {
    let d = Daemon::start();
    let (v, _) = volume(&d, "s1.hc");
    let (w, _) = volume(&d, "s2.hc");
    let out = d.ok(&["-t", "--slot", "41", "--stdin", "--pim", "1", &v], PW);
    let at = "/run/media/root/veracrypt41";
    assert!(out.starts_with(&format!("{v} mounted on {at} (")), "{out}");
    assert!(Path::new(at).join("lost+found").is_dir());
    // Refused before any password is read: nothing on standard input.
    let (code, msg) = d.fails(&["mount", "--slot=41", "--stdin", "--pim", "1", &w], "");
    assert_eq!(code, 7, "{msg}");
    assert_eq!(
        msg,
        format!("tcctl: slot 41 is taken: {v} is mounted on {at}; choose another --slot\n")
    );
    d.ok(&["-t", "-d", at], "");
    assert!(
        !Path::new(at).exists(),
        "the slot's folder goes with the volume"
    );
}

#[test]
fn create_keyfile_writes_64_random_bytes_for_the_user_only() {
    let dir = tempfile::tempdir().expect("tmp");
    let k = dir.path().join("key");
    let run = || {
        Command::new(build_dir().join("tcctl"))
            .args(["-t", "--create-keyfile", s(&k)])
            .output()
            .expect("tcctl")
    };
    let out = run();
    assert!(out.status.success(), "{out:?}");
    let m = std::fs::metadata(&k).expect("made");
    assert_eq!(m.len(), 64);
    assert_eq!(m.permissions().mode() & 0o777, 0o600);
    let first = std::fs::read(&k).expect("read");
    assert_ne!(first, vec![0u8; 64]);
    let out = run();
    assert_eq!(out.status.code(), Some(INVALID_ARGUMENT));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("tcctl: {} exists: a keyfile is never replaced\n", s(&k))
    );
    assert_eq!(std::fs::read(&k).expect("read"), first, "left as it was");
}

#[test]
fn auto_mount_favorites_mounts_every_favorite_in_its_slot() {
    let d = Daemon::start();
    let v = d.image("tc_5-sha512-xts-aes");
    let w = d.image("tc_5-sha512-xts-serpent-aes");
    d.ok(
        &[
            &["favorites", "add", "auto", &v, "--filesystem", "none"][..],
            &["--auto-mount", "--slot", "5"],
        ]
        .concat(),
        "",
    );
    d.ok(
        &[
            &["favorites", "add", "other", &w, "--filesystem", "none"][..],
            &["--slot", "3"],
        ]
        .concat(),
        "",
    );
    // VeraCrypt's --auto-mount favorites mounts each favorite, marked
    // auto-mount or not, in the slot it keeps.
    d.ok(&["-t", "--auto-mount", "favorites", "--stdin"], AAA);
    let list = d.list();
    let mut slots: Vec<(String, u64)> = list
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["volume"].as_str().unwrap_or_default().to_owned(),
                r["slot"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    slots.sort();
    assert_eq!(slots, [(v, 5), (w, 3)], "{list:?}");
}

/// What it does to devices is tested in `tcctl_devices` (it tries every
/// device, so it runs alone); here, that the spelling reaches it.
#[test]
fn auto_mount_devices_is_mount_devices() {
    let out = Command::new(build_dir().join("tcctl"))
        .args(["-t", "--auto-mount=devices", "--help"])
        .output()
        .expect("tcctl");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Usage: tcctl mount-devices [OPTIONS]"),
        "{out:?}"
    );
    let out = Command::new(build_dir().join("tcctl"))
        .args(["-t", "--auto-mount", "devices,favorites"])
        .output()
        .expect("tcctl");
    assert_eq!(out.status.code(), Some(USAGE));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .starts_with("tcctl: --auto-mount takes one of devices and favorites here"),
        "{out:?}"
    );
    // What the two are one by one, as the table says.
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "run `tcctl mount-devices` and `tcctl favorites mount --all` one after the other"
        ),
        "{out:?}"
    );
}

#[test]
fn volume_properties_and_test_read_the_header_without_mounting() {
    let d = Daemon::start();
    let v = d.image("tc_5-sha512-xts-aes");
    let info = d.ok(&["info", &v, "--stdin", "--hash", "sha512"], AAA);
    assert!(info.contains("AES"), "{info}");
    for command in ["--volume-properties", "--test"] {
        assert_eq!(
            d.ok(&["-t", command, &v, "--stdin", "--hash", "sha512"], AAA),
            info,
            "{command}"
        );
    }
    let (code, _) = d.fails(
        &["-t", "--test", &v, "--stdin", "--hash", "sha512"],
        "wrong\n",
    );
    assert_eq!(code, 2, "a wrong password");
    assert_eq!(
        d.list().as_array().map(Vec::len),
        Some(0),
        "nothing mounted"
    );
    // With no volume, VeraCrypt's own meaning: the algorithm self-tests.
    assert_eq!(
        d.ok(&["-t", "--test", "--non-interactive"], ""),
        d.ok(&["self-test"], "")
    );
    // A mounted volume's properties come without a password, as `status`
    // shows them; no input is read (none is given).
    d.ok(
        &[
            "mount",
            &v,
            "--filesystem",
            "none",
            "--stdin",
            "--hash",
            "sha512",
        ],
        AAA,
    );
    let status = d.ok(&["status", &v], "");
    assert!(status.contains("tc_5-sha512-xts-aes"), "{status}");
    assert_eq!(
        d.ok(&["-t", "--volume-properties", &v, "--non-interactive"], ""),
        status
    );
    // Named by its device too, as `status` names it.
    let device = d.list()[0]["device"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert_eq!(
        d.ok(
            &["-t", "--volume-properties", &device, "--non-interactive"],
            ""
        ),
        status
    );
    // And by its slot, in both of VeraCrypt's spellings.
    let slot = d.list()[0]["slot"].as_u64().unwrap_or_default();
    assert!(slot > 0, "{:?}", d.list());
    for by_slot in [
        vec!["--slot".to_owned(), slot.to_string()],
        vec![format!("--slot={slot}")],
    ] {
        let args = [
            &["-t", "--volume-properties"][..],
            &by_slot.iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat();
        assert_eq!(d.ok(&args, ""), status, "{args:?}");
    }
    let (code, msg) = d.fails(&["-t", "--volume-properties", "--slot=64"], "");
    assert_eq!(
        (code, msg.as_str()),
        (3, "tcctl: no volume is mounted in slot 64\n")
    );
    // No volume named: every mounted one's, as VeraCrypt shows them.
    assert_eq!(d.ok(&["-t", "--volume-properties"], ""), status);
    d.ok(&["dismount", &v], "");
    let (code, msg) = d.fails(&["-t", "--volume-properties"], "");
    assert_eq!((code, msg.as_str()), (1, "tcctl: No volumes mounted.\n"));
    // A volume named and not mounted: exit 1, as VeraCrypt's -d and -l.
    let (code, msg) = d.fails(&["-t", "-d", &v], "");
    assert_eq!(code, 1, "{msg}");
}

#[test]
fn explore_opens_the_mount_point_with_xdg_open() {
    let d = Daemon::start();
    let (v, mnt) = volume(&d, "x.hc");
    let bin = d.path("bin");
    std::fs::create_dir(&bin).expect("mkdir");
    let said = d.path("opened");
    let tool = bin.join("xdg-open");
    std::fs::write(&tool, format!("#!/bin/sh\necho \"$@\" > {}\n", s(&said))).expect("write");
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!("{}:{}", s(&bin), std::env::var("PATH").unwrap_or_default());
    let mut c = d.command();
    c.env("PATH", path);
    c.args(["-t", "--explore", "--stdin", "--pim", "1", &v, &mnt]);
    let out = run_with_input(c, PW);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(&said).expect("xdg-open ran"),
        format!("{mnt}\n")
    );
}

#[test]
fn keyfiles_take_a_comma_separated_list() {
    let d = Daemon::start();
    let v = d.image("tck_5-sha512-xts-aes");
    let k1 = s(&tcrypt_images().join("keyfile1")).to_owned();
    let k2 = s(&tcrypt_images().join("keyfile2")).to_owned();
    let both = format!("{k1},{k2}");
    d.ok(
        &[
            "-t",
            "-k",
            &both,
            "--stdin",
            "--hash",
            "sha512",
            "--filesystem",
            "none",
            &v,
        ],
        AAA,
    );
    d.ok(&["dismount", "--all"], "");
    d.ok(
        &[
            "mount",
            &format!("--keyfiles={both}"),
            "--stdin",
            "--hash",
            "sha512",
            "--filesystem",
            "none",
            &v,
        ],
        AAA,
    );
    d.ok(&["dismount", "--all"], "");
    let (code, _) = d.fails(
        &[
            "-t",
            "-k",
            "",
            "--stdin",
            "--hash",
            "sha512",
            "--filesystem",
            "none",
            &v,
        ],
        AAA,
    );
    assert_eq!(code, 2, "-k \"\": no keyfiles");
}

#[test]
fn non_interactive_keyfiles_open_a_volume_without_a_password() {
    let d = Daemon::start();
    let v = d.image("vck_1_nopw-sha512-xts-aes");
    let k1 = s(&tcrypt_images().join("keyfile1")).to_owned();
    let k2 = s(&tcrypt_images().join("keyfile2")).to_owned();
    let keyfiles = format!("{k1},{k2}");
    let fixed = ["--hash", "sha512", "--filesystem", "none"];
    // No terminal, no standard input: the keyfiles alone, as VeraCrypt's
    // --non-interactive opens them.
    let mut args = vec!["-t", "--non-interactive", "-k", &keyfiles];
    args.extend(fixed);
    args.push(&v);
    d.ok(&args, "");
    assert_eq!(row(&d)["volume"], v.as_str());
    d.ok(&["dismount", "--all"], "");
    // With the keyfiles, an empty standard input is the empty password,
    // as cryptsetup reads it (`--key-file` and nothing piped in).
    let mut args = vec!["mount", "--password-stdin", "-k", &k1, "-k", &k2];
    args.extend(fixed);
    args.push(&v);
    d.ok(&args, "");
    assert_eq!(row(&d)["volume"], v.as_str());
    d.ok(&["dismount", "--all"], "");
    // Without keyfiles, an empty standard input gives no password at all
    // (a usage error); an empty line is an empty password, which opens
    // nothing without a keyfile (a wrong password, as `-p ""`). Both are
    // refused before any search.
    let mut args = vec!["mount", "--stdin"];
    args.extend(fixed);
    args.push(&v);
    let (code, msg) = d.fails(&args, "");
    assert_eq!(
        (code, msg.as_str()),
        (
            64,
            "tcctl: --password-stdin: standard input holds no password (it is empty)\n"
        )
    );
    // On VeraCrypt's line, its name for it.
    let mut text = vec!["-t", "--non-interactive", "--stdin"];
    text.extend(fixed);
    text.push(&v);
    let (code, msg) = d.fails(&text, "");
    assert_eq!(
        (code, msg.as_str()),
        (
            64,
            "tcctl: --stdin: standard input holds no password (it is empty)\n"
        )
    );
    // On cryptsetup's, which reads standard input when it is no
    // terminal, no option was typed to name.
    let (code, msg) = d.fails(&["tcryptOpen", &v, "tcvol"], "");
    assert_eq!(
        (code, msg.as_str()),
        (
            64,
            "tcctl: standard input holds no passphrase (it is empty; a passphrase piped in is \
             read as cryptsetup reads it)\n"
        )
    );
    let (code, msg) = d.fails(&args, "\n");
    assert_eq!(
        (code, msg),
        (
            WRONG_PASSWORD,
            format!("tcctl: {v}: an empty password with no keyfile opens no volume\n")
        )
    );
    // Without the keyfiles, --non-interactive says how to give them.
    let (code, msg) = d.fails(&["-t", "--non-interactive", &v], "");
    assert_eq!(code, 64, "{msg}");
    assert!(msg.contains("give them with --keyfile"), "{msg}");
    assert_eq!(
        d.list().as_array().map(Vec::len),
        Some(0),
        "nothing mounted"
    );

    // A new volume of keyfiles alone is made the same way, and opens so.
    let made = d.path("keyfiles-only.hc");
    d.ok(
        &[
            "--non-interactive",
            "create",
            "-k",
            &k1,
            "--pim",
            "1",
            "--force",
            "--size",
            "1M",
            "--filesystem",
            "none",
            s(&made),
        ],
        "",
    );
    d.ok(
        &[
            "-t",
            "--non-interactive",
            "-k",
            &k1,
            "--pim",
            "1",
            "--filesystem",
            "none",
            s(&made),
        ],
        "",
    );
    assert_eq!(row(&d)["volume"], s(&made));
    d.ok(&["dismount", "--all"], "");
    // Without keyfiles an empty password makes no volume, even forced;
    // and standard input that runs out before the second password says so.
    let none = d.path("none.hc");
    let (code, msg) = d.fails(
        &[
            "create",
            "--password-stdin",
            "--force",
            "--size",
            "1M",
            s(&none),
        ],
        "\n",
    );
    assert_eq!(code, 7, "{msg}");
    assert!(
        msg.contains("an empty password with no keyfile opens no volume"),
        "{msg}"
    );
    assert!(!none.exists());
    let hidden = d.image("tc_5-sha512-xts-aes-hidden");
    let (code, msg) = d.fails(
        &[
            "mount",
            "--password-stdin",
            "--protect-hidden",
            "--hash",
            "sha512",
            "--filesystem",
            "none",
            &hidden,
        ],
        AAA,
    );
    assert_eq!(code, 64, "{msg}");
    assert!(
        msg.contains("standard input ended before the password asked for"),
        "{msg}"
    );
}

#[test]
fn protect_hidden_yes_and_no() {
    let d = Daemon::start();
    let v = d.image("tc_5-sha512-xts-aes-hidden");
    let base = ["-t", "--stdin", "--hash", "sha512", "--filesystem", "none"];
    let mut yes = base.to_vec();
    yes.extend(["--protect-hidden=yes", &v]);
    d.ok(&yes, &format!("{AAA}{BBB}"));
    assert_eq!(row(&d)["protects_hidden"], true);
    d.ok(&["-t", "-d"], "");
    let mut no = base.to_vec();
    no.extend(["--protect-hidden", "no", &v]);
    d.ok(&no, AAA);
    assert_eq!(row(&d)["protects_hidden"], false);
}

#[test]
fn a_password_on_the_command_line_is_refused() {
    for args in [
        &["-t", "-p", "secret", "v.hc"][..],
        &["-t", "--password=secret", "v.hc"],
    ] {
        let out = Command::new(build_dir().join("tcctl"))
            .args(args)
            .output()
            .expect("tcctl");
        assert_eq!(out.status.code(), Some(USAGE));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("tcctl takes no password on the command line"),
            "{err}"
        );
        assert!(!err.contains("secret"), "{err}");
    }
    // A PIN has its own way in: a terminal, or $TCD_TOKEN_PIN (--stdin
    // carries only the password).
    let out = Command::new(build_dir().join("tcctl"))
        .args(["-t", "--token-pin", "1234", "v.hc"])
        .output()
        .expect("tcctl");
    assert_eq!(out.status.code(), Some(USAGE));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tcctl: --token-pin: tcctl takes no PIN on the command line (every user can read it in \
         the process list): a terminal asks for it, or set $TCD_TOKEN_PIN\n"
    );
}

#[test]
fn dismount_unmount_and_list_forms() {
    let d = Daemon::start();
    let v = d.image("tc_5-sha512-xts-aes");
    let w = d.image("tc_5-sha512-xts-serpent-aes");
    let mount = |x: &str| d.ok(&["mount", "--stdin", "--filesystem", "none", x], AAA);
    mount(&v);
    mount(&w);
    // VeraCrypt's lines, which scripts read: SLOT: VOLUME DEVICE MOUNT
    // POINT ("-" for none); the slot is the row's place off veracryptN.
    let devices: Vec<String> = d
        .list()
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["device"].as_str().expect("device").to_owned())
        .collect();
    let lines = format!("1: {v} {} -\n2: {w} {} -\n", devices[0], devices[1]);
    assert_eq!(d.ok(&["-t", "-l"], ""), lines);
    assert_eq!(d.ok(&["-t", "--list"], ""), lines);
    assert_eq!(d.ok(&["-t", "-l", "-v"], ""), lines);
    // `-l VOLUME`: that volume's line alone, as veracrypt prints it.
    assert_eq!(
        d.ok(&["-t", "-l", &v], ""),
        format!("1: {v} {} -\n", devices[0])
    );
    // Not mounted: veracrypt's exit status 1, as for none at all.
    let (code, msg) = d.fails(&["-t", "-l", "/nonexistent/x.hc"], "");
    assert_eq!(
        (code, msg.as_str()),
        (1, "tcctl: /nonexistent/x.hc is not mounted\n")
    );
    let (code, msg) = d.fails(&["-t", "-l", "--slot", "5"], "");
    assert_eq!(
        (code, msg.as_str()),
        (1, "tcctl: no volume is mounted in slot 5\n")
    );
    // --json: list's, or one volume's status.
    let all: serde_json::Value =
        serde_json::from_str(&d.ok(&["-t", "-l", "--json"], "")).expect("json");
    assert_eq!(all["volumes"].as_array().map(Vec::len), Some(2), "{all}");
    let one: serde_json::Value =
        serde_json::from_str(&d.ok(&["-t", "-l", "--json", &v], "")).expect("json");
    assert_eq!(one["volume"], v.as_str(), "{one}");
    let (code, _) = d.fails(&["-t", "-l", "--json", "--slot", "5"], "");
    assert_eq!(code, 1, "-l --json --slot 5");
    // No slot 0 or 99: refused as every other --slot refuses them.
    for slot in ["0", "99"] {
        let (code, msg) = d.fails(&["-t", "-l", "--slot", slot], "");
        assert_eq!(code, 64, "{msg}");
        assert!(msg.contains("1..=64"), "{msg}");
    }
    // A path with a space comes in single quotes, a quote in it doubled,
    // as VeraCrypt writes it, so a script splitting on spaces still can.
    let spaced = s(&d.path("Bob's vol.hc")).to_owned();
    std::fs::copy(&v, &spaced).expect("copy the image");
    mount(&spaced);
    let third = d.list().as_array().expect("rows")[2]["device"]
        .as_str()
        .expect("device")
        .to_owned();
    let quoted = format!("'{}'", spaced.replace('\'', "''"));
    assert_eq!(
        d.ok(&["-t", "-l"], ""),
        format!("{lines}3: {quoted} {third} -\n")
    );
    // VeraCrypt's --slot names a volume to -l and -d too.
    assert_eq!(
        d.ok(&["-t", "-l", "--slot", "3"], ""),
        format!("3: {quoted} {third} -\n")
    );
    // Said by the volume and the slot that named it.
    assert_eq!(
        d.ok(&["-t", "-d", "--slot=3"], ""),
        format!("{spaced} dismounted (slot 3)\n")
    );
    assert_eq!(d.list().as_array().map(Vec::len), Some(2));
    // Not mounted: exit 1, as VeraCrypt's -d and -l exit.
    let (code, msg) = d.fails(&["-t", "-d", "--slot", "3"], "");
    assert_eq!(
        (code, msg.as_str()),
        (1, "tcctl: no volume is mounted in slot 3\n")
    );
    // `--dismount=VOLUME` (and `-d=`): that volume only, never all.
    d.ok(&["-t", &format!("--dismount={v}")], "");
    assert_eq!(row(&d)["volume"], w.as_str());
    mount(&v);
    d.ok(&["-t", &format!("-d={v}")], "");
    assert_eq!(row(&d)["volume"], w.as_str());
    mount(&v);
    d.ok(&["-t", "-u", &v], "");
    assert_eq!(row(&d)["volume"], w.as_str());
    d.ok(&["--text", "-d"], "");
    assert_eq!(d.list().as_array().map(Vec::len), Some(0));
    mount(&v);
    d.ok(&["unmount", &v], "");
    // umount(8)'s spelling too.
    mount(&v);
    d.ok(&["umount", &v], "");
    mount(&v);
    d.ok(&["--dismount", &v], "");
    assert_eq!(d.list().as_array().map(Vec::len), Some(0));
    // Nothing mounted: veracrypt's error and exit status 1; with --json
    // the empty list is printed all the same.
    let (code, msg) = d.fails(&["-t", "-l"], "");
    assert_eq!((code, msg.as_str()), (1, "tcctl: No volumes mounted.\n"));
    let out = d.tcctl(&["-t", "-l", "--json"], "");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "{\"schema\":1,\"volumes\":[]}\n"
    );
    // tcctl's own list keeps its exit status 0.
    d.ok(&["list", "--json"], "");
}

#[test]
fn change_and_header_backup_forms() {
    let d = Daemon::start();
    let (v, _) = volume(&d, "c.hc");
    d.ok(
        &[
            "-t",
            "-C",
            &v,
            "--stdin",
            "--pim",
            "1",
            "--force",
            "--new-pim",
            "1",
        ],
        "correct horse\nnew words\n",
    );
    d.ok(&["info", &v, "--stdin", "--pim", "1"], "new words\n");
    let b = d.path("c.hdr");
    d.ok(
        &["-t", "--backup-headers", &v, s(&b), "--stdin", "--pim", "1"],
        "new words\n",
    );
    assert_eq!(std::fs::metadata(&b).expect("backup").len(), 131072);
    // Never over a file, the backup just made included: a refused request,
    // refused before any password is read (standard input holds none).
    let kept = std::fs::read(&b).expect("backup");
    let out = d.tcctl(
        &["-t", "--backup-headers", &v, s(&b), "--stdin", "--pim", "1"],
        "",
    );
    assert_eq!(out.status.code(), Some(INVALID_ARGUMENT), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "tcctl: {} exists: a header backup never replaces a file; name a new one\n",
            s(&b)
        )
    );
    assert_eq!(std::fs::read(&b).expect("backup"), kept, "left as it was");
    damage(&v, 0);
    d.ok(
        &[
            "-t",
            "--restore-headers",
            &v,
            s(&b),
            "--force",
            "--stdin",
            "--pim",
            "1",
        ],
        "new words\n",
    );
    d.ok(&["info", &v, "--stdin", "--pim", "1"], "new words\n");
}

#[test]
fn new_hash_and_new_pim_with_change_rewrite_the_header_with_them() {
    let d = Daemon::start();
    let (v, _) = volume(&d, "n.hc");
    d.ok(
        &[
            "-t",
            "-C",
            &v,
            "--stdin",
            "--pim",
            "1",
            "--force",
            "--new-hash",
            "SHA-256",
            "--new-pim=2",
        ],
        "correct horse\nnew words\n",
    );
    // Only the new hash and PIM open it now.
    let (code, _) = d.fails(
        &["info", &v, "--stdin", "--pim", "1", "--hash", "sha256"],
        "new words\n",
    );
    assert_eq!(code, 2, "the old PIM no longer opens it");
    let info: serde_json::Value = serde_json::from_str(&d.ok(
        &[
            "info", &v, "--stdin", "--pim", "2", "--hash", "sha256", "--json",
        ],
        "new words\n",
    ))
    .expect("json");
    assert_eq!(
        (&info["hash"], &info["pim"]),
        (&serde_json::json!("SHA-256"), &serde_json::json!(2))
    );
}

#[test]
fn the_table_has_a_test_per_row_and_the_manual_page_its_spellings() {
    let doc = std::fs::read_to_string(tcd_tests::repo_dir().join("docs/VERACRYPT.md"))
        .expect("docs/VERACRYPT.md");
    let me = include_str!("tcctl_veracrypt.rs");
    // Each spelling is a paragraph's tag, in bold, its hyphens escaped.
    let tags = man_tags("VERACRYPT SPELLINGS");
    // `tcctl -t -h` lists the same spellings, each on a line of its own, as
    // `veracrypt -t -h` lists its options.
    let help = Command::new(build_dir().join("tcctl"))
        .args(["-t", "-h"])
        .output()
        .expect("tcctl -t -h");
    assert!(help.status.success(), "{help:?}");
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    assert!(
        help.starts_with("tcctl -t: VeraCrypt's text-mode command line"),
        "{help}"
    );
    // A command's help on a -t line points to those spellings first.
    let create = Command::new(build_dir().join("tcctl"))
        .args(["-t", "-c", "-h"])
        .output()
        .expect("tcctl -t -c -h");
    let create = String::from_utf8_lossy(&create.stdout).into_owned();
    assert!(
        create.starts_with("On a -t line, VeraCrypt's spellings are read too")
            && create.contains("`tcctl -t -h` lists each")
            && create.contains("Usage: tcctl create"),
        "{create}"
    );
    // The VeraCrypt table; cryptsetup's follows, checked apart.
    let (doc, _) = doc
        .split_once("## cryptsetup spellings")
        .expect("a cryptsetup section");
    let rows: Vec<&str> = doc.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), 42, "the table's rows");
    for r in rows {
        let cells: Vec<&str> = r.trim_matches('|').split(" | ").map(str::trim).collect();
        for test in cells.last().expect("a test").split(", ") {
            let test = test.trim_matches('`');
            assert!(
                [me, include_str!("tcctl_habits.rs")]
                    .iter()
                    .any(|t| t.contains(&format!("fn {test}()"))),
                "row {r}: no test {test}"
            );
        }
        let spelling = cells[0]
            .split('`')
            .nth(1)
            .expect("a spelling")
            .replace("\\|", "|");
        assert!(
            tags.iter().any(|t| t.contains(&spelling)),
            "tcctl.1 lacks {spelling} as a tag: {tags:?}"
        );
        assert!(
            help.lines()
                .any(|l| l.starts_with("  ") && !l.starts_with("   ") && l.contains(&spelling)),
            "tcctl -t -h lacks {spelling}: {help}"
        );
    }
}

#[test]
fn fs_options_set_owners_and_modes_from_an_allow_list() {
    require_tool("mkfs.fat", "package dosfstools");
    let sys = System::start();
    // Root gives a FAT volume's files to anyone, with the modes asked for.
    let v = sys.dir.path().join("fat.hc");
    let mnt = sys.dir.path().join("fat.mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let fast = ["--stdin", "--pim", "1", "--hash", "sha512"];
    let mut create = vec![
        "create",
        s(&v),
        "--size",
        "24M",
        "--quick",
        "--filesystem",
        "fat",
        "--force",
    ];
    create.extend(fast);
    sys.ok(None, &create, PW);
    let mut mount = vec!["-t", "--fs-options", "uid=1234,gid=2345,umask=027,noatime"];
    mount.extend(fast);
    mount.extend([s(&v), s(&mnt)]);
    sys.ok(None, &mount, PW);
    let m = std::fs::metadata(&mnt).expect("stat");
    assert_eq!((m.uid(), m.gid(), m.mode() & 0o777), (1234, 2345, 0o750));
    sys.ok(None, &["dismount", s(&mnt)], "");
    // A word off the list is refused by tcctl, before the password, as a
    // usage error (the daemon refuses it too, with InvalidArgument).
    for (options, says) in [
        ("uid=1234,suid", "fs options: \"suid\" is not allowed"),
        ("umask=999", "fs options: \"umask=999\" is not allowed"),
    ] {
        let mut a = vec!["mount", "--fs-options", options];
        a.extend(fast);
        a.extend([s(&v), s(&mnt)]);
        let out = sys.tcctl(None, &a, PW);
        assert_eq!(out.status.code(), Some(64), "{options}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{out:?}"
        );
    }
    // A user may not give files to someone else; their own ids pass (and
    // on ext4, which keeps its own owners, are refused as such).
    let user = &sys.users[0];
    let vol = sys.create_volume(user, "u.hc", "24M");
    let umnt = user.path("mnt");
    let mut a = vec!["mount", s(&vol), s(&umnt), "--fs-options"];
    a.extend(OPEN_FAST);
    for (options, code, says) in [
        (
            "uid=0".to_owned(),
            6,
            "may only name your own user and group",
        ),
        (
            format!("gid={}", user.gid + 1),
            6,
            "may only name your own user and group",
        ),
        (
            format!("uid={},gid={}", user.uid, user.gid),
            7,
            "apply to FAT, exFAT and NTFS, not ext4",
        ),
    ] {
        let mut args = a.clone();
        args.insert(4, options.as_str());
        let out = sys.tcctl(Some(user), &args, "user words, twenty and more\n");
        assert_eq!(out.status.code(), Some(code), "{options}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{out:?}"
        );
    }
    assert_eq!(sys.list(Some(user)).as_array().map(Vec::len), Some(0));
}

#[test]
fn options_tcctl_does_not_take_are_refused_saying_why() {
    let d = Daemon::start();
    let (v, _) = volume(&d, "n.hc");
    for (option, why) in [
        ("--display-password", "tcctl never shows a password"),
        ("--save-preferences", "tcctl keeps no preferences"),
        (
            "--background-task",
            "the tcd daemon is the background service",
        ),
        (
            "--no-size-check",
            "tcctl always checks that a new volume fits",
        ),
        (
            "--import-token-keyfiles",
            "tcctl token import FILE stores a keyfile",
        ),
        (
            "--delete-token-keyfiles",
            "tcctl token delete token://slot/N/file/NAME",
        ),
        ("--load-preferences", "tcctl keeps no preferences"),
        ("--use-dummy-sudo-password", "tcctl never runs sudo"),
        (
            "--export-token-keyfile",
            "tcctl reads a keyfile on a token where it lies",
        ),
        (
            "--list-emvtoken-keyfiles",
            "tcctl reads keyfiles on PKCS #11 security tokens only",
        ),
    ] {
        let (code, msg) = d.fails(&["-t", option, "--test", &v, "--stdin"], PW);
        assert_eq!(code, USAGE, "{option}: {msg}");
        assert!(msg.starts_with(&format!("tcctl: {option}: {why}")), "{msg}");
    }
    // VeraCrypt 1.26's mount point and password-length switches change
    // nothing here.
    d.ok(
        &[
            "-t",
            "--allow-insecure-mount",
            "--use-legacy-password-maximum-length",
            "--test",
            &v,
            "--stdin",
            "--pim",
            "1",
        ],
        PW,
    );
    // The hidden volume's PRF is passed over (every one is tried), a
    // name that is none refused.
    let (code, msg) = d.fails(
        &["-t", "--protection-hash=md5", "--test", &v, "--stdin"],
        PW,
    );
    assert_eq!(code, USAGE, "{msg}");
    assert!(msg.contains("unknown hash \"md5\""), "{msg}");
    d.ok(
        &[
            "-t",
            "--protection-hash=sha512",
            "--test",
            &v,
            "--stdin",
            "--pim",
            "1",
        ],
        PW,
    );
    let (code, msg) = d.fails(&["-t", "--test", &v, "--protection-hash", "--stdin"], PW);
    assert_eq!(
        (code, msg.as_str()),
        (USAGE, "tcctl: --protection-hash needs a hash name\n")
    );
    // --force on a mount is VeraCrypt's habit; nothing here waits for it.
    d.ok(
        &[
            "-t",
            "--force",
            "--stdin",
            "--pim",
            "1",
            "--filesystem",
            "none",
            &v,
        ],
        PW,
    );
    d.ok(&["dismount", "--all"], "");
    // `-p ""` on a volume with a password and no keyfile: the empty
    // password opens nothing, said at once as a wrong password (with
    // --non-interactive too, and given twice), never "a password is needed".
    for extra in [&[][..], &["--non-interactive"], &["-p", ""]] {
        let mut line = vec!["-t", "-p", "", "--test", &v, "--pim", "1"];
        line.extend_from_slice(extra);
        let (code, msg) = d.fails(&line, "");
        assert_eq!(code, WRONG_PASSWORD, "{line:?}: {msg}");
        assert_eq!(
            msg,
            "tcctl: -p \"\": the empty password opens no volume without a keyfile: give the \
             password with --stdin, or the keyfiles with -k\n",
            "{line:?}"
        );
    }
    let (code, msg) = d.fails(&["-t", "-p", "", "--stdin", "--test", &v], PW);
    assert_eq!(code, USAGE, "{msg}");
    assert!(msg.contains("contradict each other"), "{msg}");
}

/// The `-t -l` line of each volume, by its slot.
fn slot_lines(d: &Daemon) -> Vec<String> {
    d.ok(&["-t", "-l"], "").lines().map(str::to_owned).collect()
}

#[test]
fn slots_are_kept_until_dismounted_and_go_with_a_mount_folder() {
    let d = Daemon::start();
    let (v1, m1) = volume(&d, "v1.hc");
    let (v2, m2) = volume(&d, "v2.hc");
    let (v3, m3) = volume(&d, "v3.hc");
    let mount = |args: &[&str]| d.ok(&[&["-t", "--stdin", "--pim=1"][..], args].concat(), PW);
    mount(&[&v1, &m1]);
    // VeraCrypt's --slot with a mount folder: that folder, that slot.
    let out = mount(&["--slot=3", &v2, &m2]);
    assert!(out.starts_with(&format!("{v2} mounted on {m2} (")), "{out}");
    // Without --slot: the lowest free one.
    mount(&[&v3, &m3]);
    let rows = d.list();
    let slot_of = |v: &str| {
        rows.as_array()
            .and_then(|r| r.iter().find(|r| r["volume"] == v))
            .map(|r| r["slot"].clone())
    };
    assert_eq!(
        [slot_of(&v1), slot_of(&v2), slot_of(&v3)],
        [Some(1.into()), Some(3.into()), Some(2.into())],
        "{rows}"
    );
    let dev = |v: &str| {
        rows.as_array()
            .and_then(|r| r.iter().find(|r| r["volume"] == v))
            .and_then(|r| r["device"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    // In the order of the slots, as VeraCrypt lists them.
    assert_eq!(
        slot_lines(&d),
        [
            format!("1: {v1} {} {m1}", dev(&v1)),
            format!("2: {v3} {} {m3}", dev(&v3)),
            format!("3: {v2} {} {m2}", dev(&v2)),
        ]
    );
    // Another's dismount moves nobody: slot 3 is still v2's.
    d.ok(&["-t", "-d", "--slot=1"], "");
    assert_eq!(
        slot_lines(&d),
        [
            format!("2: {v3} {} {m3}", dev(&v3)),
            format!("3: {v2} {} {m2}", dev(&v2)),
        ]
    );
    let status = d.ok(&["status", "--slot", "3"], "");
    assert!(status.starts_with(&format!("{v2} is active")), "{status}");
    assert!(status.contains("\n  slot:            3\n"), "{status}");
    // A slot held is refused, by tcctl and by the daemon.
    let (code, msg) = d.fails(&["-t", "--stdin", "--pim=1", "--slot=2", &v1, &m1], "");
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert_eq!(
        msg,
        format!("tcctl: slot 2 is taken: {v3} is mounted on {m3}; choose another --slot\n")
    );
    d.ok(&["-t", "-d", "--slot=3"], "");
    assert_eq!(row(&d)["volume"], v3.as_str());
    assert_eq!(row(&d)["slot"], 2);
    d.ok(&["dismount", "--all"], "");
}

#[test]
fn a_volume_detaching_leaves_its_folder_and_slot_and_is_not_mounted_again() {
    let d = Daemon::start();
    let (v1, m1) = volume(&d, "v1.hc");
    let (v2, _) = volume(&d, "v2.hc");
    let m2 = s(&d.path("m2")).to_owned();
    std::fs::create_dir(&m2).expect("mkdir");
    d.ok(&["-t", "--stdin", "--pim=1", &v1, &m2], PW);
    // A process that keeps the filesystem busy.
    let mut holder = Command::new("sleep")
        .arg("120")
        .current_dir(&m2)
        .spawn()
        .expect("sleep");
    let pid = holder.id();
    let out = d.ok(&["dismount", "-f", &v1], "");
    assert!(out.contains(&format!("PID {pid} (sleep)")), "{out}");
    let r = row(&d);
    assert_eq!(
        (
            r["state"].clone(),
            r["mount_point"].clone(),
            r["slot"].clone()
        ),
        (
            "detaching".into(),
            serde_json::Value::Null,
            serde_json::Value::Null
        ),
        "{r}"
    );
    let status = d.ok(&["status", &v1], "");
    assert!(status.contains("\n  mount point:     -\n"), "{status}");
    // Not mounted: no VeraCrypt line.
    let (code, msg) = d.fails(&["-t", "-l"], "");
    assert_eq!((code, msg.as_str()), (1, "tcctl: No volumes mounted.\n"));
    // The same volume is refused, saying who holds it.
    let (code, msg) = d.fails(&["-t", "--stdin", "--pim=1", &v1, &m1], PW);
    assert_eq!(code, 5, "{msg}");
    assert_eq!(
        msg,
        format!(
            "tcctl: {v1} is still detaching (dismounted by force): in use by PID {pid} (sleep); \
             mount it again once they let go\n"
        )
    );
    // Its folder is free for another volume, which takes slot 1.
    d.ok(&["-t", "--stdin", "--pim=1", &v2, &m2], PW);
    let lines = slot_lines(&d);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with(&format!("1: {v2} ")), "{lines:?}");
    assert!(lines[0].ends_with(&format!(" {m2}")), "{lines:?}");
    let _ = holder.kill();
    let _ = holder.wait();
    d.ok(&["dismount", &v2], "");
}

#[test]
fn a_pim_on_a_truecrypt_volume_is_said_to_rule_truecrypt_out() {
    let d = Daemon::start();
    let v = d.image("tc_5-sha512-xts-aes");
    // The right password, with a PIM: no TrueCrypt volume has one.
    let (code, msg) = d.fails(
        &[
            "info",
            &v,
            "--pim",
            "1",
            "--hash",
            "sha512",
            "--password-stdin",
        ],
        AAA,
    );
    assert_eq!(code, WRONG_PASSWORD, "{msg}");
    assert!(
        msg.ends_with(
            "; with --pim only VeraCrypt volumes are searched: a TrueCrypt volume has no PIM)\n"
        ),
        "{msg}"
    );
    // cryptsetup's spelling of it, said as typed; --format is no hint.
    let (code, msg) = d.fails(
        &["tcryptDump", &v, "--veracrypt-pim", "1", "--hash", "sha512"],
        AAA,
    );
    assert_eq!(code, WRONG_PASSWORD, "{msg}");
    assert!(
        msg.ends_with(
            "; only sha512 and PIM 1 were tried; with --veracrypt-pim only VeraCrypt volumes are searched: \
             a TrueCrypt volume has no PIM)\n"
        ),
        "{msg}"
    );
    d.ok(&["info", &v, "--hash", "sha512", "--password-stdin"], AAA);
}

/// The tags of section `title` of tcctl(1), in bold, hyphens unescaped.
fn man_tags(title: &str) -> Vec<String> {
    let man = tcd_tests::tcctl_manual_page();
    let lines: Vec<&str> = man
        .lines()
        .skip_while(|l| *l != format!(".SH \"{title}\""))
        .skip(1)
        .take_while(|l| !l.starts_with(".SH "))
        .collect();
    assert!(!lines.is_empty(), "tcctl.1 has no section {title}");
    lines
        .windows(2)
        .filter(|w| w[0] == ".TP")
        .map(|w| {
            w[1].strip_prefix("\\fB")
                .and_then(|t| t.strip_suffix("\\fR"))
                .unwrap_or_else(|| panic!("a tag in bold: {}", w[1]))
                .replace("\\-", "-")
        })
        .collect()
}

#[test]
fn the_cryptsetup_table_has_a_test_per_row_and_the_manual_page_its_spellings() {
    let doc = std::fs::read_to_string(tcd_tests::repo_dir().join("docs/VERACRYPT.md"))
        .expect("docs/VERACRYPT.md");
    let (_, doc) = doc
        .split_once("## cryptsetup spellings")
        .expect("a cryptsetup section");
    // Up to the next section.
    let doc = doc.split("\n## ").next().unwrap_or_default();
    let tests = [
        include_str!("tcctl_veracrypt.rs"),
        include_str!("tcctl_habits.rs"),
    ];
    let tags = man_tags("CRYPTSETUP SPELLINGS");
    let rows: Vec<&str> = doc.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), 21, "the table's rows");
    assert_eq!(tags.len(), rows.len(), "{tags:?}");
    for r in rows {
        let cells: Vec<&str> = r.trim_matches('|').split(" | ").map(str::trim).collect();
        for test in cells.last().expect("a test").split(", ") {
            let test = test.trim_matches('`');
            assert!(
                tests.iter().any(|t| t.contains(&format!("fn {test}()"))),
                "row {r}: no test {test}"
            );
        }
        let spelling = cells[0].split('`').nth(1).expect("a spelling");
        assert!(
            tags.iter().any(|t| t.contains(spelling)),
            "tcctl.1 lacks {spelling} as a tag: {tags:?}"
        );
    }
}

#[test]
fn cryptsetup_tcrypt_open_type_and_pim_spellings() {
    let d = Daemon::start();
    let (v, _) = volume(&d, "c.hc");
    let open = ["--stdin", "--filesystem", "none"];
    // tcryptOpen is mount; --type tcrypt and --veracrypt change nothing;
    // --veracrypt-pim is --pim.
    for (pim, kind) in [
        (&["--veracrypt-pim", "1"][..], "--type"),
        (&["--veracrypt-pim=1"], "-M"),
    ] {
        let args = [
            &["tcryptOpen", kind, "tcrypt", "--veracrypt"][..],
            pim,
            &open,
            &[&v],
        ]
        .concat();
        let out = d.ok(&args, PW);
        assert!(
            out.starts_with(&format!("{v} attached as /dev/loop")),
            "{out}"
        );
        assert_eq!(row(&d)["volume"], v.as_str());
        assert_eq!(d.ok(&["close", &v], ""), format!("{v} dismounted\n"));
    }
    // Another type is refused, before any password.
    let (code, msg) = d.fails(
        &[&["open", "--type", "luks2"][..], &open, &[&v]].concat(),
        "",
    );
    assert_eq!(code, USAGE, "{msg}");
    assert!(
        msg.contains(
            "tcctl opens TrueCrypt and VeraCrypt volumes only: --type takes tcrypt \
             (cryptsetup's name for them)"
        ),
        "{msg}"
    );
    // --veracrypt-query-pim with --stdin: the PIM is the line after the
    // password, as cryptsetup reads it.
    let query = [&["open", "--veracrypt-query-pim"][..], &open, &[&v]].concat();
    let out = d.ok(&query, &format!("{PW}1\n"));
    assert!(
        out.starts_with(&format!("{v} attached as /dev/loop")),
        "{out}"
    );
    d.ok(&["close", &v], "");
    // Standard input without the PIM's line: the PIM is said missing, as
    // the PIM.
    let (code, msg) = d.fails(&query, PW);
    assert_eq!(
        (code, msg.as_str()),
        (
            64,
            "tcctl: --veracrypt-query-pim: standard input ended before the PIM, read as the line \
             after the password (an empty line for none)\n"
        )
    );
    // A wrong password after it: the PIM read is said to rule TrueCrypt
    // out, and not asked for as --pim.
    let (code, msg) = d.fails(
        &[
            "info",
            "--veracrypt-query-pim",
            "--stdin",
            "--hash",
            "sha512",
            &v,
        ],
        "not the password, but as long\n1\n",
    );
    assert_eq!(code, WRONG_PASSWORD, "{msg}");
    assert!(
        msg.ends_with(
            " s; only sha512 and PIM 1 were tried; with the PIM read after the password only VeraCrypt \
             volumes are searched: a TrueCrypt volume has no PIM)\n"
        ) && !msg.contains("--format"),
        "{msg}"
    );
    // Without that line, no PIM: said, and nothing searched.
    let (code, msg) = d.fails(&query, PW);
    assert_eq!(code, USAGE, "{msg}");
    assert!(msg.contains("standard input ended before"), "{msg}");
    // Neither standard input nor a terminal: nowhere to ask.
    let (code, msg) = d.fails(
        &[
            "--non-interactive",
            "info",
            "--veracrypt-query-pim",
            "--keyfile",
            &v,
            &v,
        ],
        "",
    );
    assert_eq!(code, USAGE, "{msg}");
    assert!(
        msg.starts_with("tcctl: --veracrypt-query-pim: no terminal to ask for the PIM on"),
        "{msg}"
    );
    // A new volume's PIM is --pim's, or asked on a terminal.
    let new = d.path("new.hc");
    let (code, msg) = d.fails(
        &["create", s(&new), "--size", "4M", "--veracrypt-query-pim"],
        PW,
    );
    assert_eq!(code, USAGE, "{msg}");
    assert_eq!(
        msg,
        "tcctl: --veracrypt-query-pim goes with the commands that open a volume: create takes \
         the new volume's --pim, or asks for it on a terminal\n"
    );
    assert!(!new.exists());
}

#[test]
fn cryptsetup_disable_veracrypt_and_tcrypt_hidden() {
    let d = Daemon::start();
    let base = [
        "open",
        "--stdin",
        "--hash",
        "sha512",
        "--filesystem",
        "none",
    ];
    // --disable-veracrypt: a VeraCrypt volume is not tried.
    let vc = d.image("vc_1-sha512-xts-aes");
    let (code, msg) = d.fails(&[&base[..], &["--disable-veracrypt", &vc]].concat(), AAA);
    assert_eq!(code, WRONG_PASSWORD, "{msg}");
    // The format and hash are given and TrueCrypt has no PIM: nothing is
    // left to narrow the search with.
    assert!(!msg.contains("narrow"), "{msg}");
    let tc = d.image("tc_5-sha512-xts-aes-hidden");
    d.ok(&[&base[..], &["--disable-veracrypt", &tc]].concat(), AAA);
    assert_eq!(row(&d)["format"], "TrueCrypt");
    assert_ne!(row(&d)["hidden"], true);
    d.ok(&["close", &tc], "");
    // --tcrypt-hidden: the hidden volume, by its own password; the outer
    // volume's password opens nothing then, as with cryptsetup, and the
    // refusal says what was searched.
    let (code, msg) = d.fails(&[&base[..], &["--tcrypt-hidden", &tc]].concat(), AAA);
    assert_eq!(code, WRONG_PASSWORD, "{msg}");
    assert!(
        msg.contains("only a hidden volume's headers were searched"),
        "{msg}"
    );
    assert_eq!(
        d.list().as_array().map(Vec::len),
        Some(0),
        "nothing opened: {msg}"
    );
    d.ok(&[&base[..], &["--tcrypt-hidden", &tc]].concat(), BBB);
    assert_eq!(row(&d)["hidden"], true);
    d.ok(&["close", &tc], "");
    // tcryptDump --tcrypt-hidden dumps the hidden volume's header, and
    // the outer password finds none.
    let dump = [
        "tcryptDump",
        "--tcrypt-hidden",
        "--hash",
        "sha512",
        "--stdin",
    ];
    let out = d.tcctl(&[&dump[..], &[&tc]].concat(), BBB);
    assert!(out.status.success(), "{out:?}");
    let (code, msg) = d.fails(&[&dump[..], &[&tc]].concat(), AAA);
    assert_eq!(code, WRONG_PASSWORD, "{msg}");
}

#[test]
fn cryptsetup_tcrypt_system_and_tcrypt_backup() {
    let d = Daemon::start();
    let sys = d.image("sys_vc_1_gpt_part-sha512-xts-aes");
    let none = ["--filesystem", "none"];
    let out = d.tcctl(
        &[
            &["open", "--tcrypt-system", "--hash", "sha512", "--stdin"][..],
            &none,
            &[&sys],
        ]
        .concat(),
        AAA,
    );
    assert!(out.status.success(), "{out:?}");
    // Read/write, as cryptsetup maps it, and warned of (tcctl's own mount
    // opens a system drive read-only unless --read-write).
    let r = row(&d);
    assert_eq!(r["read_only"], false, "{r}");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("warning: attaching a system drive read-write"),
        "{out:?}"
    );
    let device = r["device"].as_str().expect("device").to_owned();
    assert_eq!(tcd_tests::blkid_uuid(Path::new(&device)), "DEAD-BABE");
    d.ok(&["close", &sys], "");
    // With -r, read-only.
    d.ok(
        &[
            &[
                "open",
                "--tcrypt-system",
                "-r",
                "--hash",
                "sha512",
                "--stdin",
            ][..],
            &none,
            &[&sys],
        ]
        .concat(),
        AAA,
    );
    assert_eq!(row(&d)["read_only"], true, "{}", row(&d));
    d.ok(&["close", &sys], "");
    // --tcrypt-backup: the backup header only. Its primary header
    // damaged, a volume opens by it; its backup damaged, it does not.
    let (v, _) = volume(&d, "bak.hc");
    let (w, _) = volume(&d, "prim.hc");
    damage(&v, -131072);
    damage(&w, 0);
    let backup = ["--tcrypt-backup", "--stdin", "--pim", "1"];
    let (code, msg) = d.fails(&[&["open"][..], &backup, &none, &[&v]].concat(), PW);
    assert_eq!(code, WRONG_PASSWORD, "{msg}");
    d.ok(&[&["open"][..], &backup, &none, &[&w]].concat(), PW);
    assert_eq!(row(&d)["volume"], w.as_str());
    // status says so, as dump does.
    let status = d.ok(&["status", &w], "");
    assert!(
        status
            .lines()
            .any(|l| l.starts_with("  backup header:") && l.trim_end().ends_with(" Yes")),
        "{status}"
    );
    let out = d.tcctl(&[&["tcryptDump"][..], &backup, &[&w]].concat(), PW);
    assert!(out.status.success(), "{out:?}");
    let (code, msg) = d.fails(&[&["info"][..], &backup, &[&v]].concat(), PW);
    assert_eq!(code, WRONG_PASSWORD, "{msg}");
}

#[test]
fn text_mode_list_help_shows_its_volume_and_slot_forms() {
    for args in [
        &["-t", "-l", "-h"][..],
        &["-t", "--list", "--help"],
        &["list", "-h"],
    ] {
        let out = Command::new(build_dir().join("tcctl"))
            .args(args)
            .output()
            .expect("tcctl");
        assert!(out.status.success(), "{args:?}: {out:?}");
        let help = String::from_utf8_lossy(&out.stdout);
        // On a -t line, after the note on VeraCrypt's spellings.
        let own = help
            .split_once("Below, the help of the tcctl command this line becomes.\n\n")
            .filter(|_| args[0] == "-t")
            .map_or(help.as_ref(), |(_, own)| own);
        assert!(own.starts_with("List mounted volumes"), "{help}");
        for form in [
            "\n  tcctl -t -l                 VeraCrypt's lines, SLOT: VOLUME DEVICE MOUNT POINT, \
             one a volume\n                              (exit 1 when none is mounted)\n",
            "\n  tcctl -t -l VOLUME          that volume's line alone (exit 1 when it is not \
             mounted)\n",
            "\n  tcctl -t -l --slot N        the line of the volume in slot N (exit 1 when there \
             is none)\n",
            "\n  tcctl -t -l --json          list --json (a volume named: status --json); exit 1 \
             as above\n",
        ] {
            assert!(help.contains(form), "{args:?} lacks {form:?}: {help}");
        }
    }
}
