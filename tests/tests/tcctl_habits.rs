//! What a VeraCrypt or cryptsetup user expects of `tcctl` beyond the
//! spellings: sizes as they write them, exit codes a script can trust,
//! keyfiles on standard output, favorites and policies that say what they
//! did, VeraCrypt's PIM rule and its questions on a terminal. Each test
//! runs the real `tcctl`, most against a daemon of the test's own.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::Duration;
use tcd_tests::daemon::{Daemon, run_with_input};
use tcd_tests::pty::Pty;
use tcd_tests::{build_dir, s};

const USAGE: i32 = 64;
const INVALID_ARGUMENT: i32 = 7;
/// Long enough for PIM 1 (VeraCrypt takes 20 characters or more there).
const PW: &str = "twenty or more characters\n";
/// A new volume that opens fast: PIM 1, SHA-512, no filesystem.
const FAST: [&str; 7] = [
    "--pim",
    "1",
    "--hash",
    "sha512",
    "--filesystem",
    "none",
    "--password-stdin",
];

/// Opens what `create` made, fast.
const OPEN: [&str; 5] = ["--pim", "1", "--hash", "sha512", "--password-stdin"];

fn create(d: &Daemon, name: &str, size: &str) -> String {
    create_with(d, name, &["--size", size])
}

/// `v` attached as its block device alone (with `more` options), fast;
/// its device.
fn attached(d: &Daemon, v: &str, more: &[&str]) -> String {
    d.ok(
        &[&["mount", v, "--filesystem", "none"][..], more, &OPEN].concat(),
        PW,
    );
    d.list()[0]["device"].as_str().expect("device").to_owned()
}

/// A new fast volume of 8 MiB with an ext4 filesystem, to mount.
fn create_ext4(d: &Daemon, name: &str) -> String {
    create_ext4_opened_by(d, name, PW)
}

/// [`create_ext4`] with the password `pw`.
fn create_ext4_opened_by(d: &Daemon, name: &str, pw: &str) -> String {
    let v = s(&d.path(name)).to_owned();
    d.ok(
        &[
            &["create", &v, "--size", "8M", "--filesystem", "ext4"][..],
            &OPEN,
        ]
        .concat(),
        pw,
    );
    v
}

/// A header backup of `vol`, opened by `pw`, beside it; its path.
fn backup_of(d: &Daemon, vol: &str, pw: &str) -> String {
    let file = format!("{vol}.backup");
    d.ok(&[&["backup-header", vol, &file][..], &OPEN].concat(), pw);
    file
}

/// A new fast volume of 4 MiB unless `more` gives its size, with `more`.
fn create_with(d: &Daemon, name: &str, more: &[&str]) -> String {
    let v = s(&d.path(name)).to_owned();
    let size: &[&str] = if more.contains(&"--size") {
        &[]
    } else {
        &["--size", "4M"]
    };
    d.ok(&[&["create", &v][..], size, more, &FAST].concat(), PW);
    v
}

#[test]
fn sizes_are_read_as_veracrypt_users_write_them_and_refused_saying_why() {
    let d = Daemon::start();
    let v = s(&d.path("v.hc")).to_owned();
    let refused = |size: &str, why: &str| {
        let (code, msg) = d.fails(&["create", &v, "--size", size, "--password-stdin"], PW);
        assert_eq!(code, USAGE, "{size}: {msg}");
        assert!(
            msg.starts_with(&format!(
                "error: invalid value '{size}' for '--size <SIZE>': {why}"
            )),
            "{size}: {msg}"
        );
    };
    refused(
        "10MB",
        "decimal units are not taken; write 10M for binary ones",
    );
    refused(
        "lots",
        "not a number (a size is a number of bytes, or of K, M, G",
    );
    refused("1.5", "not a whole number of bytes");
    refused(
        "1000",
        "a volume's size is a whole, nonzero number of 512-byte sectors, not 1000 bytes",
    );
    assert!(!d.path("v.hc").exists());
    // A fraction that makes whole sectors, and VeraCrypt's MiB.
    for (size, bytes) in [("1.5M", 3 << 19), ("2MiB", 2 << 20)] {
        let _ = std::fs::remove_file(&v);
        d.ok(
            &[&["create", &v, "--size", size, "--quick"][..], &FAST].concat(),
            PW,
        );
        assert_eq!(std::fs::metadata(&v).expect("made").len(), bytes, "{size}");
    }
    // 4096-byte sectors take whole ones.
    let (code, msg) = d.fails(
        &[
            &[
                "create",
                s(&d.path("w.hc")),
                "--size",
                "1026K",
                "--sector-size",
                "4096",
            ][..],
            &FAST,
        ]
        .concat(),
        PW,
    );
    assert_eq!(code, USAGE, "{msg}");
    assert_eq!(
        msg,
        "tcctl: 1050624 bytes is no whole number of 4096-byte sectors (--sector-size)\n"
    );
    // Made in a file, they are not what VeraCrypt makes there: said.
    let w = s(&d.path("w.hc")).to_owned();
    let out = d.tcctl(
        &[
            &["create", &w, "--size", "1M", "--sector-size", "4096"][..],
            &FAST,
        ]
        .concat(),
        PW,
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tcctl: note: VeraCrypt and TrueCrypt make file containers with 512-byte sectors only \
         and may not open one with 4096-byte sectors; --sector-size 512 (the default in a \
         file) keeps it portable\n"
    );
    let out = d.tcctl(
        &[
            &[
                "create",
                &w,
                "--size",
                "1M",
                "--sector-size",
                "512",
                "--force",
            ][..],
            &FAST,
        ]
        .concat(),
        PW,
    );
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
}

/// A tmpfs of `mib` MiB on a new folder, unmounted on drop.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn new(at: std::path::PathBuf, mib: u32) -> Tmpfs {
        std::fs::create_dir(&at).expect("mkdir");
        let st = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={mib}m"),
                "tmpfs",
                s(&at),
            ])
            .status()
            .expect("mount");
        assert!(st.success(), "mount a tmpfs");
        Tmpfs(at)
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn size_max_takes_the_free_space_of_the_folder() {
    tcd_tests::require_root();
    let d = Daemon::start();
    let fs = Tmpfs::new(d.path("small"), 40);
    let v = fs.0.join("max.hc");
    let out = d.tcctl(
        &[&["create", s(&v), "--size", "max", "--quick"][..], &FAST].concat(),
        PW,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // 40 MiB free, less 1 MiB for the filesystem's own records.
    assert_eq!(std::fs::metadata(&v).expect("made").len(), 39 << 20);
    assert!(
        err.starts_with("tcctl: --size max: 39M (40894464 bytes)\n"),
        "{err}"
    );
    // A hidden volume's size is its own to give.
    let (code, msg) = d.fails(
        &[
            "create",
            s(&v),
            "--volume-type",
            "hidden",
            "--size",
            "max",
            "--password-stdin",
        ],
        PW,
    );
    assert_eq!(code, USAGE, "{msg}");
    assert!(
        msg.contains("--size max is for a new container file"),
        "{msg}"
    );
}

#[test]
fn exit_codes_follow_the_table() {
    let d = Daemon::start();
    // Values the command line alone rules out: 64, whichever command.
    for args in [
        &["dismount", "--slot", "0"][..],
        &["status", "--slot", "65"],
        &["mount", "v.hc", "--slot", "0"],
        &["benchmark", "--size", "511"],
        &["benchmark", "--size", "2G"],
    ] {
        let (code, msg) = d.fails(args, "");
        assert_eq!(code, USAGE, "{args:?}: {msg}");
    }
    // TrueCrypt has no PIM: said before any file is made.
    let tc = d.path("tc.hc");
    let (code, msg) = d.fails(
        &[
            "create",
            s(&tc),
            "--size",
            "4M",
            "--truecrypt",
            "--pim",
            "1",
            "--password-stdin",
        ],
        PW,
    );
    assert_eq!(code, USAGE, "{msg}");
    assert_eq!(
        msg,
        "tcctl: a TrueCrypt volume has no PIM: drop --pim, or make a VeraCrypt volume\n"
    );
    assert!(!tc.exists());
    // As change-password's refusals of what a TrueCrypt header cannot
    // hold, before the password is read: the header was left as it is
    // (the password still opens it with its PIM).
    let vc = create(&d, "pim.hc", "4M");
    for (args, said) in [
        (
            &["--truecrypt", "--new-pim", "10"][..],
            "a TrueCrypt volume has no PIM: drop --new-pim, or give --to veracrypt",
        ),
        (
            &["--to", "truecrypt", "--new-hash", "blake2s"],
            "TrueCrypt's hashes are sha512, whirlpool and ripemd160, not blake2s",
        ),
    ] {
        let (code, msg) = d.fails(
            &[&["change-password", &vc, "--password-stdin"][..], args].concat(),
            PW,
        );
        assert_eq!((code, msg), (USAGE, format!("tcctl: {said}\n")), "{args:?}");
    }
    d.ok(&[&["info", &vc][..], &OPEN].concat(), PW);
    // An empty new password is a refused one, as a short one is.
    let (code, msg) = d.fails(
        &["create", s(&tc), "--size", "4M", "--password-stdin"],
        "\n",
    );
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    // A keyfile into a missing folder: not found; into a folder of
    // root's, as another user: not allowed.
    let (code, msg) = d.fails(&["create-keyfile", s(&d.path("no/such/k"))], "");
    assert_eq!(code, 3, "{msg}");
    let closed = d.path("roots");
    std::fs::create_dir(&closed).expect("mkdir");
    std::fs::set_permissions(d.path(""), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(build_dir().join("tcctl"))
        .args(["create-keyfile", s(&closed.join("k"))])
        .output()
        .expect("setpriv");
    let msg = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{msg}");
    assert!(msg.contains("Permission denied"), "{msg}");
}

#[test]
fn create_keyfile_dash_writes_one_to_standard_output_never_to_a_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = |args: &[&str]| {
        Command::new(build_dir().join("tcctl"))
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("tcctl")
    };
    let (a, b) = (run(&["create-keyfile", "-"]), run(&["create-keyfile", "-"]));
    assert!(a.status.success() && b.status.success());
    assert_eq!((a.stdout.len(), b.stdout.len()), (64, 64));
    assert_ne!(a.stdout, b.stdout, "random bytes");
    assert_eq!(
        run(&["create-keyfile", "-", "--size", "1K"]).stdout.len(),
        1024
    );
    let out = run(&["create-keyfile", "-", "--count", "2"]);
    assert_eq!(out.status.code(), Some(USAGE));
    assert!(out.stdout.is_empty());
    // On a terminal: refused, nothing written.
    let mut c = Command::new(build_dir().join("tcctl"));
    c.args(["create-keyfile", "-"]).current_dir(dir.path());
    let (code, text) = Pty::spawn(c, None).finish(Duration::from_secs(20));
    assert_eq!(code, USAGE, "{text}");
    assert!(
        text.contains("tcctl: a keyfile is binary: send standard output to a file or a pipe"),
        "{text}"
    );
    assert!(!dir.path().join("-").exists(), "no file named -");
}

#[test]
fn password_stdin_on_a_terminal_asks_and_never_shows_the_password() {
    let d = Daemon::start();
    let v = create(&d, "t.hc", "4M");
    let mut c = d.command();
    c.args([
        "info",
        &v,
        "--password-stdin",
        "--pim",
        "1",
        "--hash",
        "sha512",
    ]);
    let mut t = Pty::spawn(c, None);
    t.expect(&format!("Password for {v}: "), Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    let (code, text) = t.finish(Duration::from_secs(60));
    assert_eq!(code, 0, "{text}");
    assert!(
        !text.contains(PW.trim_end()),
        "the password was shown: {text}"
    );
    assert!(text.contains("VeraCrypt"), "{text}");
}

#[test]
fn favorites_add_keeps_a_name_unless_replaced_and_list_lines_up() {
    let d = Daemon::start();
    let v = create(&d, "a.hc", "4M");
    let deep = d.path("a/rather/long/path/of/folders/to/the/volume/file");
    std::fs::create_dir_all(&deep).expect("mkdir");
    let far = deep.join("far.hc");
    std::fs::copy(&v, &far).expect("copy");
    d.ok(&["favorites", "add", "work", &v, "--readonly"], "");
    // A name that is no favorite's is said to be none, as remove says it.
    let (code, msg) = d.fails(&["favorites", "forget", "nosuch"], "");
    assert_eq!(
        (code, msg.as_str()),
        (
            3,
            "tcctl: no favorite nosuch (and no password of that name in your keyring)\n"
        )
    );
    // A favorite's name is no volume's: its volume is named instead.
    for command in ["dismount", "status"] {
        let (code, msg) = d.fails(&[command, "work"], "");
        assert_eq!(
            (code, msg),
            (
                3,
                format!(
                    "tcctl: work is a favorite's name, not a volume's: its volume is {v} \
                     (`tcctl dismount {v}`, `tcctl status {v}`)\n"
                )
            ),
            "{command}"
        );
    }
    let (code, msg) = d.fails(&["favorites", "add", "work", s(&far)], "");
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert_eq!(
        msg,
        format!(
            "tcctl: a favorite named work exists ({v}): --replace replaces it and all its \
             settings\n"
        )
    );
    let favs: serde_json::Value =
        serde_json::from_str(&d.ok(&["favorites", "list", "--json"], "")).expect("json");
    assert_eq!(favs["favorites"][0]["readonly"], true, "kept: {favs}");
    let out = d.ok(&["favorites", "add", "work", s(&far), "--replace"], "");
    assert_eq!(out, format!("your favorite work: {} (replaced)\n", s(&far)));
    d.ok(
        &["favorites", "add", "a-much-longer-name", &v, "--auto-mount"],
        "",
    );
    let table = d.ok(&["favorites", "list"], "");
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    // Every column starts where its title does.
    for title in ["OWNER", "VOLUME", "MOUNT POINT"] {
        let at = lines[0].find(title).expect("title");
        for l in &lines[1..] {
            assert!(
                l.len() > at && l.as_bytes()[at - 1] == b' ' && l.as_bytes()[at] != b' ',
                "{title} at {at}:\n{table}"
            );
        }
    }
}

/// A favorite's mount point is checked before its password is asked, as
/// `mount` checks one: here no password could be asked at all.
#[test]
fn a_favorites_missing_or_full_mount_point_is_said_before_any_password() {
    let d = Daemon::start();
    let v = create(&d, "mp.hc", "4M");
    let (missing, full) = (d.path("nowhere"), d.path("full"));
    std::fs::create_dir(&full).expect("mkdir");
    std::fs::write(full.join("f"), b"x").expect("file");
    for (mp, at_add, said) in [
        (
            &missing,
            "does not exist: create the folder first",
            "does not exist: create the folder first",
        ),
        (
            &full,
            "is not empty: the favorite's mount is refused until it is empty",
            // Favorites have no --allow-non-empty: the way out is named.
            "is not empty: empty it, or add the favorite again with another --mount-point and \
             --replace",
        ),
    ] {
        // Added, and warned of at once: the folder may be made or
        // emptied before the mount.
        let args = [
            "favorites",
            "add",
            "mp",
            &v,
            "--mount-point",
            s(mp),
            "--replace",
        ];
        let added = d.tcctl(&args, "");
        assert!(added.status.success(), "{added:?}");
        assert_eq!(
            String::from_utf8_lossy(&added.stderr),
            format!("tcctl: warning: mount point {} {at_add}\n", s(mp))
        );
        let (code, msg) = d.fails(&["--non-interactive", "favorites", "mount", "mp"], "");
        assert_eq!(
            (code, msg),
            (
                INVALID_ARGUMENT,
                format!("tcctl: mp: mount point {} {said}\n", s(mp))
            )
        );
    }
    // A folder where the favorite's own volume is mounted now is no
    // cause for a warning; another volume's is.
    let own = create_ext4(&d, "own.hc");
    let at = d.path("at");
    std::fs::create_dir(&at).expect("mkdir");
    d.ok(&[&["mount", &own, s(&at)][..], &OPEN].concat(), PW);
    let add = |name: &str, volume: &str| {
        let added = d.tcctl(
            &["favorites", "add", name, volume, "--mount-point", s(&at)],
            "",
        );
        assert!(added.status.success(), "{added:?}");
        String::from_utf8_lossy(&added.stderr).into_owned()
    };
    assert_eq!(add("own", &own), "");
    assert_eq!(
        add("other", &v),
        format!(
            "tcctl: warning: mount point {} is where {own} is mounted: dismount it first, or \
             choose another\n",
            s(&at)
        )
    );
    d.ok(&["dismount", &own], "");
}

/// A volume `name` (4 MiB, PIM 1, SHA-512, no filesystem) that the
/// keyfile `key` opens alone, made with nobody to ask.
fn keyfile_only_volume(d: &Daemon, name: &str, key: &std::path::Path) -> String {
    let v = s(&d.path(name)).to_owned();
    d.ok(
        &[
            &[
                "--non-interactive",
                "create",
                &v,
                "--size",
                "4M",
                "-k",
                s(key),
            ][..],
            &["--pim", "1", "--hash", "sha512", "--filesystem", "none"],
        ]
        .concat(),
        "",
    );
    v
}

#[test]
fn favorites_mount_without_a_way_to_ask_opens_with_the_favorites_keyfiles() {
    let d = Daemon::start();
    let key = d.path("k");
    d.ok(&["create-keyfile", s(&key)], "");
    let v = keyfile_only_volume(&d, "kf.hc", &key);
    d.ok(
        &[
            "favorites",
            "add",
            "k",
            &v,
            "--pim",
            "1",
            "-k",
            s(&key),
            "--filesystem",
            "none",
        ],
        "",
    );
    d.ok(&["--non-interactive", "favorites", "mount", "k"], "");
    assert_eq!(d.list().as_array().map(Vec::len), Some(1));
    d.ok(&["dismount", "--all"], "");
    d.ok(&["favorites", "add", "p", &v, "--pim", "1"], "");
    let (code, msg) = d.fails(&["--non-interactive", "favorites", "mount", "p"], "");
    assert_eq!(code, USAGE, "{msg}");
    assert_eq!(
        msg,
        "tcctl: p: a password is needed, and --non-interactive asks for none: give it with \
         --password-stdin, or add the favorite again with --keyfile --replace to open it with \
         keyfiles alone\n"
    );
}

#[test]
fn a_keyfile_on_standard_input_without_a_terminal_names_the_ways_left() {
    let d = Daemon::start();
    let v = create(&d, "a.hc", "4M");
    let key = d.path("k");
    d.ok(&["create-keyfile", s(&key)], "");
    let mut c = d.command();
    c.args(["mount", &v, "--keyfile", "-"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(std::fs::File::open(&key).expect("key"));
    // SAFETY: setsid between fork and exec is async-signal-safe and
    // leaves the child without a controlling terminal.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut c, || {
            libc::setsid();
            Ok(())
        });
    }
    let out = c.output().expect("tcctl");
    let msg = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(USAGE), "{msg}");
    assert!(
        msg.ends_with(
            "standard input holds the keyfile (--keyfile -): run on a terminal, or give the \
             keyfile as a file and the password with --password-stdin\n"
        ),
        "{msg}"
    );
}

#[test]
fn policy_set_tells_of_changes_only_and_refuses_a_preference_it_keeps_out() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("policy.toml");
    let d = Daemon::start_with(&[OsStr::new("--policy"), file.as_os_str()]);
    let shown = d.ok(&["policy", "show"], "");
    assert!(
        shown.starts_with(&format!("# {} (absent: the built-in defaults)\n", s(&file))),
        "{shown}"
    );
    let mut monitor = d.command();
    monitor.arg("monitor").stdout(Stdio::piped());
    let mut monitor = monitor.spawn().expect("monitor");
    std::thread::sleep(Duration::from_millis(500));
    // The policy in force, set again: written, nobody told.
    d.ok(&["policy", "set", "--hardware-acceleration", "auto"], "");
    assert!(file.exists());
    let (code, msg) = d.fails(
        &[
            "policy",
            "set",
            "--hardware-acceleration",
            "disabled",
            "--prefer",
            "aesni",
        ],
        "",
    );
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert_eq!(
        msg,
        "tcctl: the policy prefers aesni, which it does not allow: hardware_acceleration = \
         \"disabled\" keeps out backends that use processor crypto instructions\n"
    );
    d.ok(
        &["policy", "set", "--hardware-acceleration", "disabled"],
        "",
    );
    std::thread::sleep(Duration::from_millis(500));
    let _ = monitor.kill();
    let out = monitor.wait_with_output().expect("monitor's output");
    let said = String::from_utf8_lossy(&out.stdout);
    let changes: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("policy changed"))
        .collect();
    assert_eq!(changes.len(), 1, "{said}");
    assert!(
        changes[0].ends_with(
            "policy changed: hardware acceleration disabled, backends allowed all, preferred -"
        ),
        "{said}"
    );
    // A preference the new setting keeps out goes, and is said to go;
    // `--prefer ""` clears one.
    d.ok(
        &[
            "policy",
            "set",
            "--hardware-acceleration",
            "auto",
            "--prefer",
            "aesni",
        ],
        "",
    );
    let out = d.tcctl(
        &["policy", "set", "--hardware-acceleration", "disabled"],
        "",
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tcctl: no longer preferred, as no longer allowed: aesni\n"
    );
    assert!(
        !std::fs::read_to_string(&file)
            .unwrap_or_default()
            .contains("prefer")
    );
    d.ok(&["policy", "set", "--prefer", "soft"], "");
    d.ok(&["policy", "set", "--prefer", ""], "");
    assert!(
        !std::fs::read_to_string(&file)
            .unwrap_or_default()
            .contains("prefer")
    );
}

#[test]
fn the_benchmark_has_an_argon2id_row() {
    let d = Daemon::start();
    let json: serde_json::Value =
        serde_json::from_str(&d.ok(&["benchmark", "--size", "4K", "--json"], "")).expect("json");
    let rows = json["prfs"].as_array().expect("prfs");
    let argon = rows
        .iter()
        .find(|r| r["prf"] == "Argon2id")
        .unwrap_or_else(|| panic!("an Argon2id row: {json}"));
    // VeraCrypt's default: 6 passes over 416 MiB.
    assert_eq!(argon["iterations"], 6, "{argon}");
    assert!(
        argon["trial_seconds"].as_f64().is_some_and(|t| t > 0.0),
        "{argon}"
    );
    let table = d.ok(&["benchmark", "--size", "4K"], "");
    assert!(
        table.contains("(Argon2id: its iterations are passes over 416 MiB of memory)"),
        "{table}"
    );
}

/// Ctrl-D at the prompt after a wrong password gives up: the exit code
/// is the wrong password's, as cryptsetup's last try's is, not that of a
/// prompt cancelled before any try.
#[test]
fn ctrl_d_after_a_wrong_password_exits_as_a_wrong_password() {
    let d = Daemon::start();
    let v = create_with(&d, "g.hc", &[]);
    let mut c = d.command();
    c.args(["-t", "-k", "", "-m", "ro", "--filesystem", "none", &v]);
    c.args(["--pim", "1", "--hash", "sha512"]);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(20);
    t.expect(&format!("Enter password for {v}: "), wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("not the password at all");
    t.expect("tcctl: wrong password or keyfile, or not a volume", wait);
    t.expect_times(&format!("Enter password for {v}: "), 2, wait);
    gives_up_after_a_wrong_password(t, &v, wait);
    assert_eq!(d.list(), serde_json::json!([]));
}

#[test]
fn text_mode_alone_asks_for_the_volume_and_its_mount_point() {
    let d = Daemon::start();
    let v = create_ext4(&d, "a.hc");
    let mnt = s(&d.path("mnt")).to_owned();
    std::fs::create_dir(&mnt).expect("mkdir");
    let mut c = d.command();
    c.args(["-t", "--pim", "1"]);
    let mut t = Pty::spawn(c, None);
    t.expect("Enter volume path: ", Duration::from_secs(20));
    t.type_line(&v);
    t.expect("Enter mount directory [default]: ", Duration::from_secs(20));
    t.type_line(&mnt);
    t.expect(
        &format!("Enter password for {v}: "),
        Duration::from_secs(20),
    );
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("not the password at all");
    // Then, as VeraCrypt asks them: keyfiles (a path not there is asked
    // again, saying why) and whether to protect a hidden volume.
    t.expect("Enter keyfile [none]: ", Duration::from_secs(20));
    t.type_line("/nonexistent/keyfile");
    t.expect(
        &crlf("/nonexistent/keyfile: No such file or directory\nEnter keyfile [none]: "),
        Duration::from_secs(20),
    );
    t.type_line("");
    let protect = "Protect hidden volume (if any)? (y=Yes/n=No) [No]: ";
    t.expect(protect, Duration::from_secs(20));
    t.type_line("");
    // A wrong password is said, and everything asked again, as VeraCrypt's
    // text mode does.
    t.expect(
        "tcctl: wrong password or keyfile, or not a volume",
        Duration::from_secs(180),
    );
    t.expect_times(
        &format!("Enter password for {v}: "),
        2,
        Duration::from_secs(20),
    );
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    // The first round showed it twice (asked again after the missing file).
    t.expect_times("Enter keyfile [none]: ", 3, Duration::from_secs(20));
    t.type_line("");
    t.expect_times(protect, 2, Duration::from_secs(20));
    t.type_line("");
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    assert_eq!(d.list()[0]["volume"], v.as_str());
    assert_eq!(d.list()[0]["mount_point"], mnt.as_str());
    assert_eq!(d.list()[0]["protects_hidden"], false);
    d.ok(&["dismount", "--all"], "");
    // Asked after the mount's own checks: a mounted volume is refused
    // before any question.
    d.ok(
        &[
            "mount",
            &v,
            "--filesystem",
            "none",
            "--pim",
            "1",
            "--password-stdin",
        ],
        PW,
    );
    let mut c = d.command();
    c.args(["-t", "--pim", "1", "--filesystem", "none", &v]);
    let (code, text) = Pty::spawn(c, None).finish(Duration::from_secs(20));
    assert_eq!(code, 4, "{text}");
    assert!(
        !text.contains("Password") && !text.contains("keyfile"),
        "{text}"
    );
    d.ok(&["dismount", "--all"], "");
    // Without a terminal there is no one to ask: the usage error.
    let (code, msg) = d.fails(&["-t"], "");
    assert_eq!(code, USAGE, "{msg}");
    assert_eq!(
        msg,
        "tcctl: this VeraCrypt line lacks the volume (`tcctl -t -h` shows its usage)\n"
    );
}

#[test]
fn restore_header_asks_before_it_replaces_the_headers() {
    let d = Daemon::start();
    let v = create(&d, "a.hc", "4M");
    let before = std::fs::read(&v).expect("read");
    let (code, msg) = d.fails(
        &["restore-header", &v, "--embedded", "--password-stdin"],
        PW,
    );
    assert_eq!(code, USAGE, "{msg}");
    assert_eq!(
        msg,
        format!(
            "tcctl: restoring the header of {v}: confirmation needed and no terminal to ask on: \
             give --batch-mode (VeraCrypt's --force)\n"
        )
    );
    let mut c = d.command();
    c.args(["restore-header", &v, "--embedded", "--pim", "1"]);
    let mut t = Pty::spawn(c, None);
    t.expect(
        "Are you sure? (Type 'YES' in capital letters): ",
        Duration::from_secs(20),
    );
    t.type_line("yes");
    let (code, text) = t.finish(Duration::from_secs(20));
    assert_eq!(code, 10, "{text}");
    assert!(text.contains("not confirmed: nothing done"), "{text}");
    assert_eq!(std::fs::read(&v).expect("read"), before, "left as it was");
    let out = d.ok(
        &[
            "restore-header",
            &v,
            "--embedded",
            "-q",
            "--pim",
            "1",
            "--password-stdin",
        ],
        PW,
    );
    assert!(
        out.starts_with(&format!("{v}: header restored from its")),
        "{out}"
    );
}

#[test]
fn mount_names_the_volume_as_list_does() {
    let d = Daemon::start();
    let v = create(&d, "a.hc", "4M");
    let mut c = d.command();
    c.args(["mount", "a.hc"]).args(FAST).current_dir(d.path(""));
    let out = run_with_input(c, PW);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        said.starts_with(&format!("{v} attached as /dev/")),
        "{said}"
    );
    assert_eq!(d.list()[0]["volume"], v.as_str());
}

#[test]
fn mount_takes_the_mount_point_as_favorites_add_spells_it() {
    let d = Daemon::start();
    let v = create_ext4(&d, "a.hc");
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mount point");
    d.ok(
        &[&["mount", &v, "--mount-point", s(&mnt)][..], &OPEN].concat(),
        PW,
    );
    assert_eq!(d.list()[0]["mount_point"], s(&mnt));
    d.ok(&["dismount", &v], "");

    // Both spellings at once: which one is meant is not guessed.
    let out = d.tcctl(
        &[&["mount", &v, s(&mnt), "--mount-point", s(&mnt)][..], &OPEN].concat(),
        PW,
    );
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--mount-point"), "{err}");
    assert_eq!(d.list(), serde_json::json!([]));
}

/// A fully written outer volume of 16 MiB (a hidden volume needs that)
/// with no filesystem.
fn outer_volume(d: &Daemon, name: &str) -> String {
    let v = s(&d.path(name)).to_owned();
    d.ok(
        &[
            &["create", &v, "--size", "16M"][..],
            &["--pim", "1", "--filesystem", "none", "--password-stdin"],
        ]
        .concat(),
        PW,
    );
    v
}

/// What creating a second hidden volume in an outer volume says.
const SECOND_HIDDEN: &str = "tcctl: the end of the outer volume, where a hidden volume lies, \
     is in use: it holds a hidden volume already (an outer volume holds one, and a new one would \
     destroy it), or the outer filesystem's data reaches its last sector\n";

/// `umount MOUNTPOINT` typed outside tcd, as udisks users do: the volume
/// is attached from then on (udisks sees an outside unmount too), and its
/// filesystem mounts again by its device.
#[test]
fn a_filesystem_unmounted_outside_tcd_leaves_the_volume_attached() {
    let d = Daemon::start();
    let v = create_ext4(&d, "out.hc");
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    d.ok(&[&["mount", &v, s(&mnt)][..], &OPEN].concat(), PW);
    let st = Command::new("umount").arg(&mnt).status().expect("umount");
    assert!(st.success());
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let row = loop {
        let row = d.list()[0].clone();
        if row["mount_point"].is_null() {
            break row;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still listed mounted: {row}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(row["state"], "attached", "{row}");
    d.wait_for_log("unmounted outside tcd", "the log says so");
    let device = row["device"].as_str().expect("device").to_owned();
    d.ok(&["mount", "-b", &device, s(&mnt)], "");
    assert!(mnt.join("lost+found").is_dir(), "mounted again");
    d.ok(&["dismount", "--all"], "");

    // Mounted in a slot at its default mount point, VeraCrypt's
    // veracrypt<slot>: mounted again by its device, it goes back there,
    // as its slot is kept.
    d.ok(&[&["mount", &v, "--slot", "23"][..], &OPEN].concat(), PW);
    let at = "/run/media/root/veracrypt23";
    assert_eq!(d.list()[0]["mount_point"], at);
    let st = Command::new("umount").arg(at).status().expect("umount");
    assert!(st.success());
    while !d.list()[0]["mount_point"].is_null() {
        assert!(std::time::Instant::now() < deadline + Duration::from_secs(30));
        std::thread::sleep(Duration::from_millis(200));
    }
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    let out = d.ok(&["mount", "-b", &device], "");
    assert_eq!(out, format!("{v} mounted on {at} ({device})\n"));
    assert_eq!(d.list()[0]["slot"], 23);
    d.ok(&["dismount", "--all"], "");
    assert!(
        !std::path::Path::new(at).exists(),
        "its default mount point is removed"
    );
}

/// `create --hidden-size SIZE` in the outer volume `v` (password PW, PIM
/// 1) of a hidden volume with password `pw`, PIM 1, no filesystem.
fn create_hidden(d: &Daemon, v: &str, size: &str, pw: &str) -> std::process::Output {
    d.tcctl(
        &[
            &["create", v, "--hidden-size", size][..],
            &HIDDEN_FAST,
            &["--password-stdin"],
        ]
        .concat(),
        &format!("{PW}{pw}\n"),
    )
}

/// A hidden volume's options of [`create_hidden`] but its size and
/// passwords: PIM 1 for both volumes, no filesystem.
const HIDDEN_FAST: [&str; 6] = ["--outer-pim", "1", "--pim", "1", "--filesystem", "none"];

/// An outer volume (see [`outer_volume`]) holding a 4 MiB hidden volume
/// whose password is `pw`.
fn outer_with_hidden(d: &Daemon, name: &str, pw: &str) -> String {
    let v = outer_volume(d, name);
    let made = create_hidden(d, &v, "4M", pw);
    assert!(made.status.success(), "{made:?}");
    v
}

/// VeraCrypt's text mode asks a hidden volume's protection in its own
/// words, which expect scripts match.
#[test]
fn text_mode_protection_asks_in_veracrypts_words() {
    let d = Daemon::start();
    let hidden_pw = "the hidden one, twenty and more";
    let v = outer_with_hidden(&d, "p.hc", hidden_pw);
    let mut c = d.command();
    c.args(["-t", "--pim", "1", "--filesystem", "none", &v]);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(30);
    for (question, answer) in [
        (format!("Enter password for {v}: "), PW.trim_end()),
        ("Enter keyfile [none]: ".into(), ""),
        (
            "Protect hidden volume (if any)? (y=Yes/n=No) [No]: ".into(),
            "y",
        ),
        ("Enter password for hidden volume: ".into(), hidden_pw),
        ("Enter PIM for hidden volume: ".into(), "1"),
        ("Enter keyfile for hidden volume [none]: ".into(), ""),
    ] {
        t.answer(&question, answer, wait);
    }
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    assert_eq!(d.list()[0]["protects_hidden"], true, "{text}");
    d.ok(&["dismount", "--all"], "");
}

#[test]
fn a_second_hidden_volume_is_refused_saying_one_is_there() {
    let d = Daemon::start();
    let v = outer_volume(&d, "outer.hc");
    let first = create_hidden(&d, &v, "4M", "the first hidden one, long");
    assert!(first.status.success(), "{first:?}");
    let second = create_hidden(&d, &v, "4M", "the second hidden one, long");
    let msg = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(INVALID_ARGUMENT), "{msg}");
    assert_eq!(msg, SECOND_HIDDEN);
    // The first one still opens.
    d.ok(
        &["info", &v, "--pim", "1", "--password-stdin"],
        "the first hidden one, long\n",
    );
}

/// An expand of the outer volume moves its end past the hidden volume,
/// which the end check then cannot see; a new hidden volume whose
/// password opens the one there is refused, and that one still opens.
#[test]
fn a_hidden_volume_an_expand_moved_off_the_end_is_refused_by_its_password() {
    let d = Daemon::start();
    let pw = "the hidden one, twenty and more";
    let v = outer_with_hidden(&d, "moved.hc", pw);
    d.ok(
        &[
            &["expand", "-q", &v, "--add", "4M", "--filesystem-as-is"][..],
            &["--pim", "1", "--password-stdin"],
        ]
        .concat(),
        PW,
    );
    let second = create_hidden(&d, &v, "2M", pw);
    assert_eq!(
        (
            second.status.code(),
            String::from_utf8_lossy(&second.stderr).as_ref()
        ),
        (
            Some(INVALID_ARGUMENT),
            "tcctl: the outer volume holds a hidden volume already, which this password opens: \
             a new one would destroy it\n"
        )
    );
    let info = d.ok(
        &["info", &v, "--pim", "1", "--password-stdin"],
        &format!("{pw}\n"),
    );
    assert!(info.contains("4194304"), "the first one, whole: {info}");
}

#[test]
fn the_manual_page_describes_every_json_output_and_the_readme_how_to_make_it() {
    let page = tcd_tests::tcctl_manual_page();
    let plain = page
        .replace("\\fB", "")
        .replace("\\fR", "")
        .replace("\\-", "-");
    for said in [
        "self-test --json is {\"schema\": 1, \"passed\": ..., \"checks\": [...]}",
        "token list --json is {\"schema\": 1, \"keyfiles\": [...]}",
    ] {
        assert!(plain.contains(said), "OUTPUT lacks {said}");
    }
    // Every VeraCrypt spelling is a tagged paragraph's tag, in bold, with
    // its meaning as the paragraph: `--test` alone as well.
    assert!(
        page.contains(".TP\n\\fB\\-\\-test\\fR\nself\\-test: every cipher and hash"),
        "--test as a tag:\n{page}"
    );
    let readme = std::fs::read_to_string(tcd_tests::repo_dir().join("README.md")).expect("README");
    assert!(readme.contains("tcctl generate-dist target/dist"));
    assert!(readme.contains("tcd --generate-man target/dist"));
}

#[test]
fn slots_are_unique_and_dismount_slot_takes_the_veracrypt_mount_point() {
    let d = Daemon::start();
    let a = create(&d, "a.hc", "4M");
    let b = s(&d.path("b.hc")).to_owned();
    let fast = ["--pim", "1", "--hash", "sha512", "--password-stdin"];
    d.ok(
        &[
            &["create", &b, "--size", "8M", "--filesystem", "ext4"][..],
            &fast,
        ]
        .concat(),
        PW,
    );
    // One volume attached as a device only (the lowest free slot, 1),
    // one on VeraCrypt's slot 3; slot 1 is taken.
    d.ok(
        &[&["mount", &a, "--filesystem", "none"][..], &fast].concat(),
        PW,
    );
    let (code, msg) = d.fails(&[&["mount", &b, "--slot", "1"][..], &fast].concat(), PW);
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    d.ok(&[&["mount", &b, "--slot", "3"][..], &fast].concat(), PW);
    let lines = d.ok(&["-t", "-l"], "");
    let slots: Vec<&str> = lines
        .lines()
        .map(|l| l.split(':').next().unwrap_or(""))
        .collect();
    assert_eq!(slots.len(), 2, "{lines}");
    assert_ne!(slots[0], slots[1], "no two volumes share a slot: {lines}");
    assert!(
        lines.starts_with(&format!("1: {a} ")) && lines.contains(&format!("\n3: {b} ")),
        "{lines}"
    );
    assert!(lines.ends_with("/run/media/root/veracrypt3\n"), "{lines}");
    d.ok(&["-t", "-d", "--slot", "3"], "");
    let left = d.list();
    assert_eq!(left.as_array().map(Vec::len), Some(1), "{left}");
    assert_eq!(left[0]["volume"], a.as_str(), "slot 3 was b's: {left}");
    // On VeraCrypt's line without --slot or a folder: the lowest free
    // slot, 2, and its folder, as VeraCrypt mounts /media/veracrypt2.
    let said = d.ok(
        &[
            "-t",
            "--non-interactive",
            "--stdin",
            "--pim=1",
            "--hash=sha512",
            "-k",
            "",
            &b,
        ],
        PW,
    );
    assert!(said.contains(" on /run/media/root/veracrypt2 "), "{said}");
    let lines = d.ok(&["-t", "-l"], "");
    assert!(
        lines.contains(&format!("\n2: {b} ")) && lines.ends_with("/run/media/root/veracrypt2\n"),
        "{lines}"
    );
    d.ok(&["dismount", "--all"], "");
}

#[test]
fn favorites_mount_says_already_mounted_before_asking() {
    let d = Daemon::start();
    let v = create(&d, "a.hc", "4M");
    d.ok(
        &[
            "favorites",
            "add",
            "f",
            &v,
            "--pim",
            "1",
            "--filesystem",
            "none",
        ],
        "",
    );
    d.ok(&["favorites", "mount", "f", "--password-stdin"], PW);
    // Nothing on standard input: the refusal comes before any password.
    let (code, msg) = d.fails(&["favorites", "mount", "f", "--password-stdin"], "");
    assert_eq!(code, 4, "{msg}");
    assert_eq!(
        msg,
        format!("tcctl: f ({v}) is already mounted: `tcctl dismount {v}` first\n")
    );
}

#[test]
fn veracrypts_ext3_and_ext2_are_made_and_mounted() {
    let d = Daemon::start();
    for (given, made) in [("Ext3", "ext3"), ("ext2", "ext2")] {
        let v = s(&d.path(&format!("{made}.hc"))).to_owned();
        let mnt = d.path(&format!("{made}.mnt"));
        std::fs::create_dir(&mnt).expect("mkdir");
        let fast = ["--pim", "1", "--hash", "sha512", "--password-stdin"];
        d.ok(
            &[
                &["-t", "-c", &v, "--size", "8M", "--filesystem", given][..],
                &fast,
            ]
            .concat(),
            PW,
        );
        d.ok(&[&["mount", &v, s(&mnt)][..], &fast].concat(), PW);
        assert_eq!(d.list()[0]["filesystem"], made, "{given}");
        std::fs::write(mnt.join("f"), b"kept").expect("write");
        d.ok(&["dismount", "--all"], "");
    }
    // None named, on a line that asks nothing: VeraCrypt's default, FAT,
    // as Enter at the menu gives.
    let v = s(&d.path("default.hc")).to_owned();
    let fast = [
        "--pim",
        "1",
        "--hash",
        "sha512",
        "--stdin",
        "--non-interactive",
    ];
    d.ok(&[&["-t", "-c", &v, "--size", "8M"][..], &fast].concat(), PW);
    d.ok(
        &[&["mount", &v, "--filesystem", "auto"][..], &fast[..5]].concat(),
        PW,
    );
    assert_eq!(d.list()[0]["filesystem"], "vfat", "{}", d.list());
    d.ok(&["dismount", "--all"], "");
    // Its help says so before create's own (whose default is ext4).
    let help = d.ok(&["-t", "-c", "-h"], "");
    assert!(
        help.contains("Without --filesystem, a -t -c line makes FAT, as VeraCrypt does."),
        "{help}"
    );
}

#[test]
fn text_mode_create_asks_each_choice_left_out_as_veracrypt_does() {
    let d = Daemon::start();
    let v = s(&d.path("w.hc")).to_owned();
    let mut c = d.command();
    c.args(["-t", "-c", "--hash", "sha512"]);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(20);
    t.expect(
        &crlf("Volume type:\n 1) Normal\n 2) Hidden\nSelect [1]: "),
        wait,
    );
    t.type_line("");
    t.expect("Enter volume path: ", wait);
    t.type_line(&v);
    let size_question = "Enter volume size (sizeK/size[M]/sizeG/sizeT/max): ";
    t.expect(size_question, wait);
    // No size: said in the prompt's terms, and asked again.
    t.type_line("lots");
    let deadline = std::time::Instant::now() + wait;
    while t.text().matches(size_question).count() < 2 {
        assert!(std::time::Instant::now() < deadline, "{}", t.text());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        t.text().contains(
            "\"lots\" is not a size: here a bare number is in MiB, as VeraCrypt reads it"
        ),
        "{}",
        t.text()
    );
    t.type_line("4");
    t.expect(&crlf("Encryption algorithm:\n 1) AES\n 2) Serpent\n"), wait);
    t.type_line("99");
    t.expect(
        "Incorrect selection: type a number from 1 to 15. Select: ",
        wait,
    );
    t.type_line("2");
    // The hash, given on the command line, is not asked. The filesystems
    // as VeraCrypt numbers them, FAT its default; tcctl's own after.
    t.expect(
        &crlf(
            "Filesystem:\n 1) None\n 2) FAT\n 3) Linux Ext2\n 4) Linux Ext3\n 5) Linux Ext4\n \
             6) NTFS\n 7) exFAT\n 8) Btrfs\n 9) XFS\nSelect [2]: ",
        ),
        wait,
    );
    t.type_line("");
    // A mistyped repeat: said, and both asked again.
    for (round, repeat) in [(1, "not the same password at all"), (2, PW.trim_end())] {
        t.expect_times(
            &format!("Enter password for the new volume {v}: "),
            round,
            wait,
        );
        std::thread::sleep(Duration::from_millis(300));
        t.type_line(PW.trim_end());
        t.expect_times("Re-enter password: ", round, wait);
        std::thread::sleep(Duration::from_millis(300));
        t.type_line(repeat);
        if repeat != PW.trim_end() {
            t.expect("the passwords differ: type them again", wait);
        }
    }
    t.expect("Enter PIM for the new volume ", wait);
    t.type_line("1");
    // The keyfiles last, after the password and PIM, as VeraCrypt asks.
    t.expect("Enter keyfile path [none]: ", wait);
    t.type_line("");
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("Hash algorithm:"), "{text}");
    assert_eq!(std::fs::metadata(&v).expect("made").len(), 4 << 20);
    assert_eq!(filesystem_in(&d, &v, "sha512"), "vfat");
    let info = d.ok(
        &["info", &v, "--json", "--password-stdin", "--pim", "1"],
        PW,
    );
    let info: serde_json::Value = serde_json::from_str(&info).expect("json");
    assert_eq!(
        (&info["encryption"], &info["hash"], &info["pim"]),
        (&"Serpent".into(), &"SHA-512".into(), &1.into()),
        "{info}"
    );
    // Without a terminal nothing is asked: tcctl's defaults, or the
    // usage error for what has none.
    let (code, msg) = d.fails(&["-t", "-c", "--password-stdin"], PW);
    assert_eq!(code, USAGE, "{msg}");
    assert_eq!(
        msg,
        "tcctl: this VeraCrypt line lacks the volume (`tcctl -t -h` shows its usage)\n"
    );
}

/// The filesystem blkid finds in the fast volume `v` (PIM 1, `hash`),
/// "" for none.
fn filesystem_in(d: &Daemon, v: &str, hash: &str) -> String {
    let open = ["--pim", "1", "--hash", hash, "--password-stdin"];
    d.ok(
        &[&["mount", v, "--filesystem", "none"][..], &open].concat(),
        PW,
    );
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    let blkid = Command::new(tcd_tests::require_tool("blkid", "package util-linux"))
        .args(["-p", "-o", "value", "-s", "TYPE", &device])
        .output()
        .expect("blkid");
    d.ok(&["dismount", "--all"], "");
    String::from_utf8_lossy(&blkid.stdout).trim().to_owned()
}

/// A volume's device mounted by hand, as cryptsetup's users mount a
/// mapping: `status` and `umount` of that folder name the volume and the
/// way it comes off, instead of calling the mount no volume of tcd's.
#[test]
fn a_volumes_device_mounted_by_hand_is_named_with_the_way_off() {
    let d = Daemon::start();
    let v = create_ext4(&d, "hand.hc");
    let device = attached(&d, &v, &[]);
    let at = d.path("by-hand");
    std::fs::create_dir(&at).expect("mkdir");
    let mounted = std::process::Command::new("mount")
        .arg(&device)
        .arg(&at)
        .status()
        .expect("mount(8)");
    assert!(mounted.success(), "mount(8) {device}");
    for command in ["status", "umount"] {
        let (code, msg) = d.fails(&[command, s(&at)], "");
        assert_eq!(
            (code, msg),
            (
                3,
                format!(
                    "tcctl: {} holds {device}, the device of tcd's volume {v}, mounted outside \
                     tcd: umount(8) unmounts it, then `tcctl close {v}` detaches the volume\n",
                    s(&at)
                )
            ),
            "{command}"
        );
    }
    let unmounted = std::process::Command::new("umount")
        .arg(&at)
        .status()
        .expect("umount(8)");
    assert!(unmounted.success());
    d.ok(&["close", &v], "");
}

/// A PIM typed at create's prompt that the password is too short for
/// (under 485 with fewer than 20 characters) is said and asked again, as
/// a short password is asked about; the volume is then made.
#[test]
fn a_pim_typed_at_creates_prompt_too_small_for_the_password_is_asked_again() {
    let d = Daemon::start();
    let v = s(&d.path("short.hc")).to_owned();
    let mut c = d.command();
    c.args([
        "create",
        &v,
        "--size",
        "4M",
        "--filesystem",
        "none",
        "--hash",
        "sha512",
    ]);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(30);
    let pim = format!("PIM for the new volume {v} (Enter for none): ");
    for (question, answer) in [
        (
            format!("Password for the new volume {v}: "),
            "fourteen chars",
        ),
        ("Repeat the password: ".to_owned(), "fourteen chars"),
        (pim.clone(), "1"),
    ] {
        t.answer(&question, answer, wait);
    }
    t.expect(
        "a PIM under 485 takes a password of 20 characters or more",
        wait,
    );
    t.expect_times(&pim, 2, wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("");
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    d.ok(
        &[
            "info",
            &v,
            "--pim",
            "0",
            "--hash",
            "sha512",
            "--password-stdin",
        ],
        "fourteen chars\n",
    );
}

/// `tcctl -t -c VOLUME --size 4M --pim 1 more` on a terminal, each
/// question answered in turn (the password twice, the keyfile question
/// with Enter, after `answers`); its exit code and what it showed.
fn text_create(d: &Daemon, v: &str, more: &[&str], answers: &[(&str, &str)]) -> (i32, String) {
    let mut c = d.command();
    c.args(["-t", "-c", v, "--volume-type", "normal", "--size", "4M"])
        .args(["--pim", "1"])
        .args(more);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(30);
    let password = format!("Enter password for the new volume {v}: ");
    let asked = [
        (password.as_str(), PW.trim_end()),
        ("Re-enter password: ", PW.trim_end()),
        ("Enter keyfile path [none]: ", ""),
    ];
    for (question, answer) in answers.iter().chain(&asked) {
        t.answer(question, answer, wait);
    }
    t.finish(Duration::from_secs(120))
}

#[test]
fn text_mode_create_numbers_filesystems_as_veracrypt_does() {
    tcd_tests::require_tool("mkfs.fat", "package dosfstools");
    let d = Daemon::start();
    // A VeraCrypt user's numbers (Btrfs and XFS need more room than a
    // fast test's volume).
    let made = [
        ("1", ""),
        ("2", "vfat"),
        ("3", "ext2"),
        ("4", "ext3"),
        ("5", "ext4"),
        ("6", "ntfs"),
        ("7", "exfat"),
    ];
    for (number, blkid) in made {
        let v = s(&d.path(&format!("fs{number}.hc"))).to_owned();
        let line = ["--encryption", "AES", "--hash", "sha512"];
        let (code, text) = text_create(&d, &v, &line, &[("Select [2]: ", number)]);
        assert_eq!(code, 0, "{number}: {text}");
        assert_eq!(filesystem_in(&d, &v, "sha512"), blkid, "{number}: {text}");
    }
    // The hash menu as VeraCrypt's, SHA-512 its default: 2 is SHA-256.
    let v = s(&d.path("h.hc")).to_owned();
    let menu = crlf(
        "Hash algorithm:\n 1) SHA-512\n 2) SHA-256\n 3) BLAKE2s-256\n 4) Whirlpool\n \
         5) Streebog\n 6) Argon2id\n 7) RIPEMD-160\nSelect [1]: ",
    );
    let line = ["--encryption", "AES", "--filesystem", "none"];
    let (code, text) = text_create(&d, &v, &line, &[(&menu, "2")]);
    assert_eq!(code, 0, "{text}");
    let info = d.ok(
        &["info", &v, "--json", "--pim", "1", "--password-stdin"],
        PW,
    );
    let info: serde_json::Value = serde_json::from_str(&info).expect("json");
    assert_eq!(info["hash"], "SHA-256", "{info}");
}

#[test]
fn text_mode_create_without_a_daemon_fails_before_asking_anything() {
    let mut c = Command::new(tcd_tests::build_dir().join("tcctl"));
    c.args(["--socket", "/nonexistent/x.sock", "-t", "-c"]);
    let t = Pty::spawn(c, None);
    let (code, text) = t.finish(Duration::from_secs(30));
    assert_eq!(code, 9, "{text}");
    assert!(
        text.contains("cannot reach the tcd daemon at /nonexistent/x.sock"),
        "{text}"
    );
    assert!(!text.contains("Volume type"), "{text}");
}

#[test]
fn text_mode_create_asks_keyfiles_after_the_password_and_pim() {
    let d = Daemon::start();
    let key = s(&d.path("k.key")).to_owned();
    d.ok(&["create-keyfile", &key], "");
    let v = s(&d.path("k.hc")).to_owned();
    let mut c = d.command();
    c.args(["-t", "-c", &v, "--volume-type", "normal", "--size", "4M"])
        .args(["--encryption", "AES"])
        .args(["--hash", "sha512", "--filesystem", "none"]);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(30);
    // The empty password, then a keyfile: taken, as VeraCrypt takes it.
    let questions = [
        (format!("Enter password for the new volume {v}: "), ""),
        ("Re-enter password: ".to_owned(), ""),
        (format!("Enter PIM for the new volume {v}: "), "1"),
        ("Enter keyfile path [none]: ".to_owned(), key.as_str()),
    ];
    for (question, answer) in &questions {
        t.answer(question, answer, wait);
    }
    t.expect_times("Enter keyfile path [none]: ", 2, wait);
    t.type_line("");
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    let at = |q: &str| text.find(q).unwrap_or_else(|| panic!("{q}: {text}"));
    assert!(
        at("Enter password for") < at("Re-enter password")
            && at("Re-enter password") < at("Enter PIM for"),
        "{text}"
    );
    assert!(at("Enter PIM for") < at("Enter keyfile path"), "{text}");
    // The keyfile alone (the empty password) opens it.
    let info = d.ok(
        &[
            "--non-interactive",
            "info",
            &v,
            "--json",
            "--keyfile",
            &key,
            "--pim",
            "1",
            "--hash",
            "sha512",
        ],
        "",
    );
    let info: serde_json::Value = serde_json::from_str(&info).expect("json");
    assert_eq!(info["encryption"], "AES", "{info}");
    // The empty password and no keyfile: refused after the keyfile
    // question, nothing made.
    let w = s(&d.path("none.hc")).to_owned();
    let mut c = d.command();
    c.args(["-t", "-c", &w, "--volume-type", "normal", "--size", "4M"])
        .args(["--encryption", "AES"])
        .args(["--hash", "sha512", "--filesystem", "none", "--pim", "1"]);
    let mut t = Pty::spawn(c, None);
    for question in [
        format!("Enter password for the new volume {w}: "),
        "Re-enter password: ".to_owned(),
        "Enter keyfile path [none]: ".to_owned(),
    ] {
        t.answer(&question, "", wait);
    }
    let (code, text) = t.finish(Duration::from_secs(60));
    assert_eq!(code, INVALID_ARGUMENT, "{text}");
    assert!(
        text.ends_with(&crlf(
            // Named as VeraCrypt's line names it.
            "tcctl: an empty password with no keyfile opens no volume: give a password, or \
             keyfiles with --keyfiles\n"
        )),
        "{text}"
    );
    assert!(!d.path("none.hc").exists());
}

#[test]
fn text_mode_header_commands_ask_for_the_file_they_lack() {
    let d = Daemon::start();
    let v = create(&d, "h.hc", "4M");
    let backup = s(&d.path("h.backup")).to_owned();
    let wait = Duration::from_secs(20);
    let mut c = d.command();
    c.args(["-t", "--backup-headers", &v, "--pim", "1"]);
    let mut t = Pty::spawn(c, None);
    // The password and keyfiles first; the file last, once the volume
    // opened, as VeraCrypt asks it; one that exists is asked again.
    t.answer(&format!("Enter password for {v}: "), PW.trim_end(), wait);
    t.answer("Enter keyfile [none]: ", "", wait);
    t.answer("Enter filename: ", &v, wait);
    t.expect(&format!("tcctl: {v} exists: "), wait);
    t.expect_times("Enter filename: ", 2, wait);
    t.type_line(&backup);
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    assert!(
        text.find("Enter password for") < text.find("Enter filename: "),
        "{text}"
    );
    assert!(
        text.contains(&format!("headers of {v} saved to {backup}")),
        "{text}"
    );
    assert_eq!(std::fs::metadata(&backup).expect("made").len(), 128 << 10);

    let mut c = d.command();
    c.args(["-t", "--restore-headers", &v, "--pim", "1", "-q"]);
    let mut t = Pty::spawn(c, None);
    t.expect(
        &crlf(
            "Restore the volume header from:\n 1) the backup header embedded in the volume\n \
             2) an external backup file\nSelect [1]: ",
        ),
        wait,
    );
    t.type_line("3");
    t.expect("Incorrect selection: type 1 or 2. Select: ", wait);
    t.type_line("2");
    t.expect("Enter the backup file's path: ", wait);
    t.type_line(&backup);
    // The backup's password, asked for by its name, as VeraCrypt asks.
    t.expect(
        &format!("Enter password for the header stored in {backup}: "),
        wait,
    );
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    t.expect("Enter keyfile [none]: ", wait);
    t.type_line("");
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("restored"), "{text}");

    // The keyfile to make, as VeraCrypt's text mode asks its path.
    let key = s(&d.path("asked.key")).to_owned();
    let mut c = d.command();
    c.args(["-t", "--create-keyfile"]);
    let mut t = Pty::spawn(c, None);
    t.expect("Enter the keyfile's path: ", wait);
    t.type_line(&key);
    let (code, text) = t.finish(Duration::from_secs(60));
    assert_eq!(code, 0, "{text}");
    assert_eq!(std::fs::metadata(&key).expect("made").len(), 64);
}

/// `-t --volume-properties` asks as a mount does: the keyfiles after the
/// password, and the password again after a wrong one.
#[test]
fn text_mode_volume_properties_asks_keyfiles_and_again() {
    let d = Daemon::start();
    let v = create(&d, "p.hc", "4M");
    let wait = Duration::from_secs(20);
    let mut c = d.command();
    c.args(["-t", "--volume-properties", &v, "--pim", "1"]);
    let mut t = Pty::spawn(c, None);
    t.expect(&format!("Enter password for {v}: "), wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("not the password at all");
    t.expect("Enter keyfile [none]: ", wait);
    t.type_line("");
    t.expect(
        "tcctl: wrong password or keyfile, or not a volume",
        Duration::from_secs(180),
    );
    t.expect_times(&format!("Enter password for {v}: "), 2, wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    t.expect_times("Enter keyfile [none]: ", 2, wait);
    t.type_line("");
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("AES"), "its properties are shown: {text}");
}

/// Text as a terminal shows it: each line end a carriage return and a
/// line feed.
fn crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

#[test]
fn restore_header_refuses_the_backup_of_another_volume() {
    let d = Daemon::start();
    let v = create(&d, "v.hc", "4M");
    let smaller = create(&d, "smaller.hc", "2M");
    let twin = create(&d, "twin.hc", "4M");
    let backup = |vol: &str| backup_of(&d, vol, PW);
    let before = std::fs::read(&v).expect("read");
    let restore = |file: &str| {
        d.fails(
            &[&["restore-header", &v, file, "-q"][..], &OPEN].concat(),
            PW,
        )
    };
    // No header backup at all: its size said as it is.
    for bytes in [204800, 1000] {
        let file = s(&d.path(&format!("{bytes}.bak"))).to_owned();
        std::fs::write(&file, vec![0u8; bytes]).expect("a file");
        let (code, msg) = restore(&file);
        assert_eq!(code, INVALID_ARGUMENT, "{msg}");
        assert!(
            msg.contains(&format!(
                "a header backup is 131072 bytes; this one is {bytes}"
            )),
            "{msg}"
        );
    }
    // Another size: another volume, whatever the password (a smaller
    // one may be this volume's before an expansion).
    let (code, msg) = restore(&backup(&smaller));
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert!(
        msg.contains(
            "the backup is of another volume, or saved before this volume was expanded: its \
             data area is"
        ) && msg.ends_with("nothing was written\n"),
        "{msg}"
    );
    // The same size and password, other keys: this volume's own header
    // says so, the primary one and, once that is damaged, the embedded one.
    let twin_backup = backup(&twin);
    let (code, msg) = restore(&twin_backup);
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert!(msg.contains("its keys differ from the backup's"), "{msg}");
    assert!(
        std::fs::read(&v).expect("read") == before,
        "nothing written"
    );
    // Nor when this volume's hash differs from the backup's (searched as
    // widely as the backup was).
    let other_hash = s(&d.path("sha256.hc")).to_owned();
    let any_hash = ["--pim", "1", "--password-stdin"];
    d.ok(
        &[
            &["create", &other_hash, "--size", "4M", "--hash", "sha256"][..],
            &["--filesystem", "none"],
            &any_hash,
        ]
        .concat(),
        PW,
    );
    let foreign = format!("{other_hash}.backup");
    d.ok(
        &[&["backup-header", &other_hash, &foreign][..], &any_hash].concat(),
        PW,
    );
    let (code, msg) = d.fails(
        &[&["restore-header", &v, &foreign, "-q"][..], &any_hash].concat(),
        PW,
    );
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert!(msg.contains("its keys differ from the backup's"), "{msg}");
    assert!(
        std::fs::read(&v).expect("read") == before,
        "nothing written"
    );
    let mut damaged = before.clone();
    damaged[..512].fill(0);
    std::fs::write(&v, &damaged).expect("damage");
    let (code, msg) = restore(&twin_backup);
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert!(
        std::fs::read(&v).expect("read") == damaged,
        "nothing written"
    );
    // Its own backup still restores it.
    std::fs::write(&v, &before).expect("undamage");
    let own = backup(&v);
    std::fs::write(&v, &damaged).expect("damage");
    d.ok(
        &[&["restore-header", &v, &own, "-q"][..], &OPEN].concat(),
        PW,
    );
    // The primary header and the data are as they were (the embedded
    // backup is now a copy of the primary).
    let after = std::fs::read(&v).expect("read");
    let data = 128 << 10..before.len() - (128 << 10);
    assert!(
        after[..512] == before[..512] && after[data.clone()] == before[data],
        "restored"
    );
    d.ok(&[&["info", &v][..], &OPEN].concat(), PW);
}

/// A backup of another volume of the same size, opened by that volume's
/// password: this volume's headers do not open with it, so no keys can be
/// compared, but the backup's keys read this volume's data as noise, and
/// it is refused. This volume's own backup, from before a password change
/// (its old password now opening no header of it), reads its filesystem
/// and restores.
#[test]
fn restore_header_refuses_a_same_size_backup_whose_keys_read_noise() {
    const THEIRS: &str = "another volume's password\n";
    let d = Daemon::start();
    let mine = create_ext4(&d, "mine.hc");
    let theirs = create_ext4_opened_by(&d, "theirs.hc", THEIRS);
    let restore = |file: &str, more: &[&str], pw: &str| {
        d.tcctl(
            &[&["restore-header", &mine, file, "-q"][..], more, &OPEN].concat(),
            pw,
        )
    };
    let foreign = backup_of(&d, &theirs, THEIRS);
    let before = std::fs::read(&mine).expect("read");
    let out = restore(&foreign, &[], THEIRS);
    assert_eq!(out.status.code(), Some(INVALID_ARGUMENT), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tcctl: the backup's keys read this volume's data as noise: the backup is of another \
         volume of the same size, or this volume holds no filesystem, only random data; nothing \
         was written (--skip-data-check restores it all the same)\n"
    );
    assert!(
        std::fs::read(&mine).expect("read") == before,
        "nothing written"
    );

    // Its own backup brings back the password it was made with.
    let own = backup_of(&d, &mine, PW);
    d.ok(
        &[&["change-password", &mine, "--new-pim", "1"][..], &OPEN].concat(),
        &format!("{PW}a new password for it\n"),
    );
    let out = restore(&own, &[], PW);
    assert!(out.status.success(), "{out:?}");
    d.ok(&[&["info", &mine][..], &OPEN].concat(), PW);

    // Asked for, the foreign backup is written all the same.
    let out = restore(&foreign, &["--skip-data-check"], THEIRS);
    assert!(out.status.success(), "{out:?}");
    d.ok(&[&["info", &mine][..], &OPEN].concat(), THEIRS);
    // Not an option of anything else.
    let (code, msg) = d.fails(
        &[
            &[
                "restore-header",
                &mine,
                "--embedded",
                "--skip-data-check",
                "-q",
            ][..],
            &OPEN,
        ]
        .concat(),
        THEIRS,
    );
    assert_eq!(code, USAGE, "{msg}");
}

#[test]
fn create_takes_vfat_as_mkfs_users_write_it() {
    tcd_tests::require_tool("mkfs.fat", "package dosfstools");
    let d = Daemon::start();
    let v = s(&d.path("f.hc")).to_owned();
    d.ok(
        &[
            &["create", &v, "--size", "4M", "--filesystem", "VFAT"][..],
            &OPEN,
        ]
        .concat(),
        PW,
    );
    let out = d.ok(
        &[&["mount", &v, "--filesystem", "none"][..], &OPEN].concat(),
        PW,
    );
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    let blkid = Command::new(tcd_tests::require_tool("blkid", "package util-linux"))
        .args(["-o", "value", "-s", "TYPE", &device])
        .output()
        .expect("blkid");
    assert_eq!(String::from_utf8_lossy(&blkid.stdout), "vfat\n", "{out}");
    d.ok(&["dismount", "--all"], "");
}

#[test]
fn dump_and_info_give_argon2id_its_costs_not_iterations() {
    let d = Daemon::start();
    let v = s(&d.path("a.hc")).to_owned();
    let open = ["--pim", "1", "--hash", "argon2id", "--password-stdin"];
    d.ok(
        &[
            &["create", &v, "--size", "1M", "--filesystem", "none"][..],
            &open,
        ]
        .concat(),
        PW,
    );
    let text = d.ok(&[&["dump", &v][..], &open].concat(), PW);
    // cryptsetup's title for a VeraCrypt header.
    assert!(
        text.starts_with(&format!("VERACRYPT header information for {v}\n")),
        "{text}"
    );
    assert!(text.contains("\nKDF:            Argon2id\n"), "{text}");
    assert!(
        !text.contains("PBKDF2") && !text.contains("Iterations"),
        "{text}"
    );
    // Its costs instead, by cryptsetup luksDump's names (PIM 1: 64 MiB,
    // 3 passes, one lane), and in info's lines and JSON.
    assert!(
        text.contains("\nTime cost:      3\nMemory:         65536\nThreads:        1\n"),
        "{text}"
    );
    let info = d.ok(&[&["info", &v][..], &open].concat(), PW);
    assert!(
        info.contains("\nArgon2 memory      64 MiB\nArgon2 passes      3\n")
            && !info.contains("Iterations"),
        "{info}"
    );
    // The header's minimum version is VeraCrypt 1.0b whatever the KDF: the
    // release that opens Argon2id is said beside it.
    assert!(
        info.contains(
            "\nMinimum version    VeraCrypt 1.0b, as the header says (Argon2id opens in \
             VeraCrypt 1.26.29 and later)\n"
        ),
        "{info}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&d.ok(&[&["info", &v, "--json"][..], &open].concat(), PW))
            .expect("info --json");
    assert_eq!(
        (
            &json["argon2_memory_kib"],
            &json["argon2_passes"],
            &json["iterations"]
        ),
        (&65536.into(), &3.into(), &serde_json::Value::Null)
    );
}

#[test]
fn a_short_new_password_typed_on_a_terminal_is_asked_about_as_veracrypt_asks() {
    let d = Daemon::start();
    let v = s(&d.path("s.hc")).to_owned();
    let question = "Are you sure you want to use a short password? (y=Yes/n=No) [No]: ";
    let prompt = format!("Password for the new volume {v}: ");
    let wait = Duration::from_secs(20);
    let create = |pim: &str| {
        let mut c = d.command();
        c.args(["create", &v, "--size", "1M", "--filesystem", "none"]);
        c.args(["--hash", "sha512", "--pim", pim]);
        Pty::spawn(c, None)
    };
    // Asked once typed twice, as VeraCrypt asks below 12 characters. No:
    // another password.
    let mut t = create("0");
    t.expect(&prompt, wait);
    t.type_line("abcdefghijk");
    t.expect("Repeat the password: ", wait);
    t.type_line("abcdefghijk");
    t.expect(question, wait);
    t.type_line("n");
    t.expect_times(&prompt, 2, wait);
    t.type_line(PW.trim_end());
    t.expect_times("Repeat the password: ", 2, wait);
    t.type_line(PW.trim_end());
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    assert_eq!(text.matches(question).count(), 1, "{text}");
    d.ok(&["info", &v, "--hash", "sha512", "--password-stdin"], PW);
    // Yes: taken, as --force takes it, the question its only warning.
    std::fs::remove_file(&v).expect("remove");
    let mut t = create("0");
    t.expect(&prompt, wait);
    t.type_line("abcde");
    t.expect("Repeat the password: ", wait);
    t.type_line("abcde");
    t.expect(question, wait);
    t.type_line("y");
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    assert!(
        !text.contains("tcctl: warning: a password shorter"),
        "{text}"
    );
    d.ok(
        &["info", &v, "--hash", "sha512", "--password-stdin"],
        "abcde\n",
    );
    // Read from standard input, no question: refused at once, as before.
    let (code, msg) = d.fails(
        &[
            "create",
            &d.path("t.hc").to_string_lossy(),
            "--size",
            "1M",
            "--password-stdin",
        ],
        "abcde\n",
    );
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert!(!d.path("t.hc").exists());
    // change-password: no leaves the password as it was.
    let mut c = d.command();
    c.args([
        "change-password",
        &v,
        "--hash",
        "sha512",
        "--pim",
        "0",
        "--new-pim",
        "0",
    ]);
    let mut t = Pty::spawn(c, None);
    t.expect(&format!("Current password for {v}: "), wait);
    t.type_line("abcde");
    t.expect("New password: ", Duration::from_secs(60));
    t.type_line("vwxyz");
    t.expect("Repeat the new password: ", wait);
    t.type_line("vwxyz");
    t.expect(question, wait);
    t.type_line("n");
    let (code, text) = t.finish(Duration::from_secs(60));
    assert_eq!(code, 10, "{text}");
    assert!(text.contains("the password is unchanged"), "{text}");
    d.ok(
        &["info", &v, "--hash", "sha512", "--password-stdin"],
        "abcde\n",
    );
    std::fs::remove_file(&v).expect("remove");
    // A PIM on the line that this password is too short for: refused
    // before the question.
    let mut t = create("1");
    t.expect(&prompt, wait);
    t.type_line("abcde");
    t.expect("Repeat the password: ", wait);
    t.type_line("abcde");
    let (code, text) = t.finish(Duration::from_secs(60));
    assert_eq!(code, INVALID_ARGUMENT, "{text}");
    assert!(!text.contains(question), "{text}");
    assert!(
        text.contains("a PIM under 485 takes a password of 20"),
        "{text}"
    );
}

#[test]
fn a_refused_password_change_gives_no_warning_first() {
    let d = Daemon::start();
    let v = s(&d.path("c.hc")).to_owned();
    d.ok(
        &[
            &["create", &v, "--size", "1M", "--encryption", "camellia"][..],
            &FAST,
        ]
        .concat(),
        PW,
    );
    let args = [
        "change-password",
        &v,
        "--to",
        "truecrypt",
        "--force",
        "--pim",
        "1",
        "--password-stdin",
    ];
    // A new password of 12 characters: warned of when taken, but this
    // change is refused, and only the refusal is said.
    let (code, msg) = d.fails(&args, &format!("{PW}twelve chars\n"));
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert_eq!(msg, "tcctl: TrueCrypt has no Camellia cipher\n");
    // The PIM the volume keeps (1) is held to VeraCrypt's rule too.
    let (code, msg) = d.fails(
        &["change-password", &v, "--pim", "1", "--password-stdin"],
        &format!("{PW}twelve chars, more\n"),
    );
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert!(
        msg.contains("a PIM under 485 takes a password of 20"),
        "{msg}"
    );
    let out = d.tcctl(
        &[
            "change-password",
            &v,
            "--force",
            "--pim",
            "1",
            "--password-stdin",
        ],
        &format!("{PW}twelve chars\n"),
    );
    assert!(out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.starts_with("tcctl: warning: a password shorter than 20"),
        "{said}"
    );
}

#[test]
fn a_hidden_volumes_outer_volume_is_named_when_it_does_not_open() {
    let d = Daemon::start();
    // No outer volume at all: said as every command says a missing file.
    let gone = s(&d.path("gone.hc")).to_owned();
    let (code, msg) = d.fails(
        &["create", &gone, "--hidden-size", "1M", "--password-stdin"],
        PW,
    );
    assert_eq!(
        (code, msg),
        (3, format!("tcctl: {gone}: no such file or device\n"))
    );
    let v = create(&d, "o.hc", "4M");
    let (code, msg) = d.fails(
        &[
            "create",
            &v,
            "--volume-type",
            "hidden",
            "--size",
            "1M",
            "--outer-pim",
            "1",
            "--outer-hash",
            "sha512",
            "--pim",
            "1",
            "--hash",
            "sha512",
            "--filesystem",
            "none",
            "--password-stdin",
        ],
        "not the outer password at all\nhidden words, twenty and more\n",
    );
    assert_eq!(code, 2, "{msg}");
    assert!(
        msg.starts_with(&format!("tcctl: the outer volume {v}: wrong password"))
            && msg.contains("--outer-pim and --outer-hash"),
        "{msg}"
    );
}

#[test]
fn a_text_mode_hidden_volumes_failed_outer_search_names_the_outer_options() {
    let d = Daemon::start();
    let v = create(&d, "t.hc", "4M");
    // VeraCrypt's spelling: --pim and --hash are the hidden volume's, so
    // the hint speaks of the outer volume's options only.
    let (code, msg) = d.fails(
        &[
            &["-t", "-c", &v, "--volume-type=hidden", "--size=1M"][..],
            &["--pim=5", "--hash=sha-512", "--outer-hash", "sha512"],
            &["--filesystem=none", "--non-interactive", "--stdin"],
        ]
        .concat(),
        "not the outer password at all\nhidden words, twenty and more\n",
    );
    assert_eq!(code, 2, "{msg}");
    let hint = "; an outer volume created with a PIM opens only with that PIM: --outer-pim gives \
                it; only sha512 was tried) (its PIM and hash are --outer-pim and --outer-hash; \
                --pim and --hash are the hidden volume's)\n";
    assert!(
        msg.starts_with(&format!("tcctl: the outer volume {v}: wrong password"))
            && msg.ends_with(hint),
        "{msg}"
    );
}

#[test]
fn watch_on_a_terminal_first_says_what_it_watches() {
    let d = Daemon::start();
    let mut c = d.command();
    c.arg("watch");
    let mut t = Pty::spawn(c, None);
    // Root watches everyone's volumes; the session's autostart, with no
    // terminal, gets no such line (its output is the journal's).
    t.expect(
        "Watching the tcd daemon for automatic dismounts and health changes of every \
         volume. Press Ctrl+C to exit.",
        Duration::from_secs(20),
    );
    let _ = t.child.kill();
    let _ = t.child.wait();
}

#[test]
fn cryptsetup_spellings_open_close_read_only_and_tcrypt_dump() {
    let d = Daemon::start();
    let v = create(&d, "c.hc", "4M");
    // cryptsetup's open and close, mount's -r and --read-only.
    for ro in ["-r", "--read-only"] {
        d.ok(
            &[&["open", &v, "--filesystem", "none", ro][..], &OPEN].concat(),
            PW,
        );
        let rows = d.list();
        assert_eq!(rows[0]["read_only"], true, "{ro}: {rows}");
        let out = d.ok(&["close", &v], "");
        assert_eq!(out, format!("{v} dismounted\n"));
        assert_eq!(d.list().as_array().map(Vec::len), Some(0));
    }
    // cryptsetup's tcryptDump is dump, and so is tcrypt-dump: each reads
    // a password piped in, as cryptsetup does.
    for spelling in ["tcryptDump", "tcrypt-dump"] {
        let dump = d.ok(&[spelling, &v, "--pim", "1", "--hash", "sha512"], PW);
        assert!(
            dump.starts_with(&format!("VERACRYPT header information for {v}\n")),
            "{spelling}: {dump}"
        );
    }
    // cryptsetup's --dump-volume-key, with its -q, shows the master key.
    let keyed = d.tcctl(
        &[&["tcryptDump", &v, "--dump-volume-key", "-q"][..], &OPEN].concat(),
        PW,
    );
    let shown = String::from_utf8_lossy(&keyed.stdout);
    assert!(keyed.status.success(), "{keyed:?}");
    assert_eq!(
        shown.lines().filter(|l| l.starts_with("MK dump:")).count(),
        1,
        "{shown}"
    );
    // cryptsetup's open, without --type too, reads a piped password and
    // takes -d as a keyfile.
    let key = s(&d.path("c.key")).to_owned();
    d.ok(&["create-keyfile", &key], "");
    let k = create_with(&d, "k.hc", &["--keyfile", &key]);
    d.ok(
        &[
            "open",
            &k,
            "-d",
            &key,
            "--veracrypt-pim",
            "1",
            "--filesystem",
            "none",
        ],
        PW,
    );
    d.ok(&["close", &k], "");
    // With --type tcrypt, the mapping name is taken and said to be of no
    // use (the volume is a loop device only), even where a folder of that
    // name is at hand: only a path with a slash is a mount point.
    std::fs::create_dir(d.path("tcvol")).unwrap();
    let mut c = d.command();
    c.current_dir(d.path("")).args([
        "open",
        "--type",
        "tcrypt",
        &k,
        "tcvol",
        "-d",
        &key,
        "--veracrypt-pim",
        "1",
    ]);
    let out = run_with_input(c, PW);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "tcctl: tcvol is taken as cryptsetup's mapping name, which tcd does not keep: the \
             volume is attached as a loop device only (`tcctl status {k}` names it)\n"
        )
    );
    let rows = d.list();
    assert_eq!(rows[0]["mount_point"], serde_json::Value::Null, "{rows}");
    // Closed or asked for by that name: said why not, and how.
    // So too where the folder tcvol is at hand, as open took it.
    for (command, here) in [
        ("close", false),
        ("status", false),
        ("close", true),
        ("status", true),
    ] {
        let mut c = d.command();
        c.args([command, "tcvol"]);
        if here {
            c.current_dir(d.path(""));
        }
        let out = run_with_input(c, "");
        let folder = std::fs::canonicalize(d.path("tcvol")).expect("canonicalize");
        let said = match here {
            true => format!(
                "tcctl: tcvol is not mounted: no volume is mounted on the folder {}; nor is it \
                 a mapping name, which tcd keeps none of: name the volume by its file, device \
                 or mount point, as `tcctl list` shows them\n",
                folder.display()
            ),
            false => "tcctl: tcvol is not mounted (tcd keeps no cryptsetup mapping names: name \
                      the volume by its file, device or mount point, as `tcctl list` shows \
                      them)\n"
                .into(),
        };
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).as_ref()
            ),
            (Some(3), said.as_str()),
            "{command}, in the folder that holds tcvol: {here}"
        );
    }
    // VeraCrypt's line has no mapping names: the folder alone is said
    // (exit 1, as VeraCrypt's -d of a volume not mounted).
    let mut c = d.command();
    c.current_dir(d.path("")).args(["-t", "-d", "tcvol"]);
    let out = run_with_input(c, "");
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).as_ref()
        ),
        (
            Some(1),
            format!(
                "tcctl: tcvol is not mounted: no volume is mounted on the folder {}\n",
                std::fs::canonicalize(d.path("tcvol"))
                    .expect("canonicalize")
                    .display()
            )
            .as_str()
        )
    );
    // A file name that names no file: said missing, no mapping named.
    let (code, msg) = d.fails(&["status", "nosuch.hc"], "");
    assert_eq!(
        (code, msg.as_str()),
        (
            3,
            "tcctl: nosuch.hc is not mounted (no file of that name exists either)\n"
        )
    );
    for command in ["close", "status"] {
        let (code, msg) = d.fails(&[command, "sub/nosuch.hc"], "");
        assert_eq!(code, 3, "{msg}");
        assert!(
            msg.ends_with(" (no file of that name exists either)\n"),
            "{command}: {msg}"
        );
        // cryptsetup's and VeraCrypt's device names: what tcd has instead.
        let (code, msg) = d.fails(&[command, "/dev/mapper/veracrypt2"], "");
        assert_eq!(code, 3, "{msg}");
        assert!(
            msg.ends_with(
                " (tcd makes no /dev/mapper devices: its volumes are loop devices, named with \
                 their files and mount points by `tcctl list`; VeraCrypt's veracrypt2 is \
                 `--slot 2` here)\n"
            ),
            "{command}: {msg}"
        );
    }
    assert!(
        rows[0]["device"]
            .as_str()
            .unwrap_or_default()
            .starts_with("/dev/loop")
    );
    d.ok(&["close", &k], "");
    // A failed open says nothing of the name.
    let (code, msg) = d.fails(
        &[
            "open",
            "--type",
            "tcrypt",
            &k,
            "tcvol",
            "--veracrypt-pim",
            "1",
        ],
        PW,
    );
    assert_eq!(code, 2, "{msg}");
    assert!(!msg.contains("mapping name"), "{msg}");
    // open --test-passphrase checks it and mounts nothing.
    let test = [
        "open",
        "--test-passphrase",
        "--type",
        "tcrypt",
        &k,
        "-d",
        &key,
    ];
    let said = d.ok(&[&test[..], &["--veracrypt-pim", "1"]].concat(), PW);
    assert_eq!(
        said, "",
        "cryptsetup prints nothing when the passphrase opens it"
    );
    let (code, msg) = d.fails(
        &[&test[..], &["--veracrypt-pim", "1"]].concat(),
        "wrong words\n",
    );
    assert_eq!(code, 2, "{msg}");
    assert_eq!(d.list().as_array().map(Vec::len), Some(0));
    // tcctl's own mount asks for --password-stdin as before.
    let (code, msg) = d.fails(&["mount", &k, "--filesystem", "none", "-k", &key], PW);
    assert_eq!(code, USAGE, "{msg}");
    // tcctl(1) lists every other name.
    let man = tcd_tests::tcctl_manual_page();
    for (command, names) in [
        ("mount", "open, tcryptOpen"),
        ("dismount", "unmount, umount, close"),
        ("dump", "tcrypt\\-dump, tcryptDump"),
    ] {
        assert!(
            man.contains(&format!(".TP\n\\fB{command}\\fR\n{names}\n")),
            "{command}: {man}"
        );
    }
}

/// cryptsetup takes its options before the action as well as after it,
/// short ones grouped (-rq) or with their values attached (-T1); so does
/// tcctl on cryptsetup's actions, and close takes -v and --debug as
/// cryptsetup's close does; umount's -a (-av) dismounts every volume.
#[test]
fn cryptsetup_options_before_the_action_and_close_v_are_taken() {
    let d = Daemon::start();
    let v = create(&d, "before.hc", "4M");
    let out = d.ok(
        &[
            "--test-passphrase",
            "--veracrypt-pim",
            "1",
            "tcryptOpen",
            &v,
            "--hash",
            "sha512",
        ],
        PW,
    );
    assert_eq!(out, "", "cryptsetup's --test-passphrase says nothing");
    assert_eq!(d.list().as_array().map(Vec::len), Some(0), "only checked");
    let (code, _) = d.fails(
        &[
            "--test-passphrase",
            "tcryptOpen",
            &v,
            "--veracrypt-pim",
            "1",
        ],
        "not the password\n",
    );
    assert_eq!(code, 2);
    d.ok(
        &[
            "-rq",
            "-Mtcrypt",
            "--veracrypt-pim",
            "1",
            "-T1",
            "open",
            &v,
            "--hash",
            "sha512",
            "--filesystem",
            "none",
        ],
        PW,
    );
    assert_eq!(d.list()[0]["read_only"], true);
    for close in [&["-v", "close", &v][..], &["close", "--debug", &v]] {
        let out = d.ok(close, "");
        assert_eq!(out, format!("{v} dismounted\n"), "{close:?}");
        d.ok(
            &[&["open", &v, "--filesystem", "none"][..], &OPEN].concat(),
            PW,
        );
    }
    let out = d.ok(&["umount", "-av"], "");
    assert!(out.contains("dismounted"), "{out}");
    assert_eq!(d.list().as_array().map(Vec::len), Some(0));
}

#[test]
fn cryptsetup_open_asks_a_typed_password_as_often_as_tries_says() {
    let d = Daemon::start();
    let v = create(&d, "t.hc", "4M");
    let fast = ["--veracrypt-pim", "1", "--hash", "sha512"];
    let prompt = format!("Enter passphrase for {v}: ");
    let wrong = "tcctl: wrong password or keyfile, or not a volume";
    // Three times, as cryptsetup asks; -T and --tries say how often.
    for (tries, times) in [(&[][..], 3), (&["-T", "2"][..], 2), (&["--tries=1"][..], 1)] {
        let mut c = d.command();
        c.args([&["open", "--type", "tcrypt", &v, "tcvol"][..], tries, &fast].concat());
        let mut t = Pty::spawn(c, None);
        for n in 1..=times {
            t.expect_times(&prompt, n, Duration::from_secs(20));
            std::thread::sleep(Duration::from_millis(300));
            t.type_line("not the password at all");
        }
        let (code, text) = t.finish(Duration::from_secs(60));
        assert_eq!(code, 2, "{tries:?}: {text}");
        assert_eq!(text.matches(&prompt).count(), times, "{tries:?}: {text}");
        assert_eq!(text.matches(wrong).count(), times, "{tries:?}: {text}");
        assert_eq!(d.list().as_array().map(Vec::len), Some(0));
    }
    // No PIM is asked without --veracrypt-query-pim, as cryptsetup asks
    // only for the passphrase.
    let mut c = d.command();
    c.args([
        "tcryptOpen",
        "--test-passphrase",
        &v,
        "-T",
        "1",
        "--hash",
        "sha512",
    ]);
    let mut t = Pty::spawn(c, None);
    t.expect(&prompt, Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("not the password at all");
    let (code, text) = t.finish(Duration::from_secs(180));
    assert_eq!(code, 2, "{text}");
    assert!(!text.contains("PIM for"), "{text}");
    // A wrong password, then the right one: opened.
    let mut c = d.command();
    c.args([&["open", "--type", "tcrypt", &v, "tcvol"][..], &fast].concat());
    let mut t = Pty::spawn(c, None);
    t.expect(&prompt, Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("not the password at all");
    t.expect_times(&prompt, 2, Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    let (code, text) = t.finish(Duration::from_secs(60));
    assert_eq!(code, 0, "{text}");
    assert_eq!(d.list().as_array().map(Vec::len), Some(1));
    d.ok(&["close", &v], "");
    // open --test-passphrase asks as often.
    let mut c = d.command();
    c.args([&["open", "--test-passphrase", &v, "-T", "2"][..], &fast].concat());
    let mut t = Pty::spawn(c, None);
    for n in 1..=2 {
        t.expect_times(&prompt, n, Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(300));
        t.type_line("not the password at all");
    }
    let (code, text) = t.finish(Duration::from_secs(60));
    assert_eq!(code, 2, "{text}");
    assert_eq!(text.matches(&prompt).count(), 2, "{text}");
    // A password piped in is read once, as cryptsetup reads it.
    let (code, msg) = d.fails(
        &[
            &["open", "--type", "tcrypt", &v, "tcvol", "-T", "3"][..],
            &fast,
        ]
        .concat(),
        "not the password at all\nnor this\n",
    );
    assert_eq!(code, 2, "{msg}");
    assert_eq!(msg.matches(wrong).count(), 1, "{msg}");
}

#[test]
fn cryptsetup_open_takes_allow_discards_verbose_debug_and_batch_mode() {
    let d = Daemon::start();
    let v = create(&d, "d.hc", "4M");
    let line = [
        "open",
        "--type",
        "tcrypt",
        &v,
        "tcvol",
        "--allow-discards",
        "-v",
        "--verbose",
        "--debug",
        "-q",
        "--batch-mode",
        "--veracrypt-pim",
        "1",
    ];
    let out = d.tcctl(&line, PW);
    assert!(out.status.success(), "{out:?}");
    let rows = d.list();
    assert_eq!(rows[0]["discard"], true, "{rows}");
    // cryptsetup status's flags line says so.
    let status = d.ok(&["status", &v], "");
    assert!(status.contains("discards"), "{status}");
    d.ok(&["close", &v], "");
    // -q on tcryptDump is still its own: the master key without asking.
    let keyed = d.tcctl(
        &[
            &["tcryptDump", &v, "--dump-volume-key", "--batch-mode"][..],
            &OPEN,
        ]
        .concat(),
        PW,
    );
    assert!(keyed.status.success(), "{keyed:?}");
    // Not a cryptsetup line: tcctl's own mount knows no -v.
    let (code, msg) = d.fails(&[&["mount", &v, "-v"][..], &OPEN].concat(), PW);
    assert_eq!(code, USAGE, "{msg}");
}

/// Another volume's header backup of the same size opens with its own
/// password, and its key turns this volume's data to noise: the mount's
/// refusal names the header file as a cause.
#[test]
fn another_volumes_header_file_of_the_same_size_is_named_as_a_cause() {
    let d = Daemon::start();
    let (a, b) = (create_ext4(&d, "a.hc"), create_ext4(&d, "b.hc"));
    let header = s(&d.path("b.hdr")).to_owned();
    d.ok(&[&["backup-header", &b, &header][..], &OPEN].concat(), PW);
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let (code, msg) = d.fails(
        &[&["mount", &a, s(&mnt), "--header", &header][..], &OPEN].concat(),
        PW,
    );
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert!(
        msg.contains("holds no filesystem")
            && msg.ends_with(&format!(
                "; or the header file given is another volume's, whose key turns this one's \
                 data to noise: is it the header of {a}?\n"
            )),
        "{msg}"
    );
    assert_eq!(d.list(), serde_json::json!([]));
}

#[test]
fn udisks_loop_commands_and_object_paths_say_what_does_their_work() {
    let d = Daemon::start();
    let file = s(&d.path("c.hc")).to_owned();
    let (code, msg) = d.fails(&["loop-setup", "-f", &file], "");
    assert_eq!(
        (code, msg.as_str()),
        (
            USAGE,
            "tcctl: loop-setup: udisksctl's loop device is not needed: tcd opens a container \
             file itself (`tcctl unlock -b FILE` attaches the volume as its block device, \
             `tcctl mount FILE` mounts it)\n"
        )
    );
    let (code, msg) = d.fails(&["loop-delete", "-b", "/dev/loop7"], "");
    assert_eq!(code, USAGE, "{msg}");
    assert!(msg.contains("`tcctl lock -b DEVICE`"), "{msg}");
    assert!(!msg.contains("similar"), "{msg}");
    // An object path, short or whole, is named as udisksctl's, not taken
    // for a password.
    for args in [
        vec!["unmount", "-p", "block_devices/loop4"],
        vec![
            "lock",
            "--object-path",
            "/org/freedesktop/UDisks2/block_devices/loop4",
        ],
        vec!["mount", "--object-path=block_devices/loop4"],
    ] {
        let (code, msg) = d.fails(&args, "");
        assert_eq!(code, USAGE, "{args:?}: {msg}");
        assert!(
            msg.contains(
                "udisksctl's object path is not taken here: name the device with -b DEVICE"
            ),
            "{args:?}: {msg}"
        );
    }
    // tcctl's own spelling of standard input, off VeraCrypt's line.
    let (code, msg) = d.fails(&["mount", &file, "-p", "secret"], "");
    assert_eq!(code, USAGE, "{msg}");
    assert!(
        msg.ends_with("give it on standard input with --password-stdin\n"),
        "{msg}"
    );
}

#[test]
fn udisks_spellings_unlock_lock_and_block_device() {
    let d = Daemon::start();
    let v = s(&d.path("u.hc")).to_owned();
    d.ok(
        &[
            "create",
            &v,
            "--size",
            "4M",
            "--pim",
            "1",
            "--hash",
            "sha512",
            "--filesystem",
            "ext4",
            "--password-stdin",
        ],
        PW,
    );
    // Said as udisksctl says it.
    let out = d.ok(&[&["unlock", "-b", &v][..], &OPEN].concat(), PW);
    let device = d.list()[0]["device"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(device.starts_with("/dev/loop"), "{device}");
    assert_eq!(out, format!("Unlocked {v} as {device}.\n"));
    let status = d.ok(&["status", "-b", &device], "");
    assert!(status.starts_with(&format!("{v} is active")), "{status}");
    // Unlocked again, by its device or by its file: already so, one code.
    let again = d.fails(&["unlock", "-b", &device], "");
    assert_eq!(
        again,
        (
            4,
            format!(
                "tcctl: {device} is the device of {v}, attached already: `tcctl mount -b \
                 {device}` mounts the filesystem it holds, if any\n"
            )
        )
    );
    let (code, msg) = d.fails(&[&["unlock", "-b", &v][..], &OPEN].concat(), PW);
    assert_eq!(code, 4, "{msg}");
    // A mounted volume's device holds no header: said, with what to run.
    let (code, msg) = d.fails(
        &["info", "--block-device", &device, "--non-interactive"],
        "",
    );
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert_eq!(
        msg,
        format!(
            "tcctl: {device} is the device of the volume {v} (attached): it holds no header; \
             `tcctl status {device}` shows the volume without a password, `tcctl info {v}` \
             reads its header\n"
        )
    );
    // Every other command that reads or writes a header, or makes a
    // volume, refuses it too before asking anything, naming the volume.
    let backup = s(&d.path("u.backup")).to_owned();
    for args in [
        vec!["dump", &device],
        vec!["tcryptDump", &device],
        vec!["change-password", &device],
        vec!["backup-header", &device, &backup],
        vec!["restore-header", &device, "--embedded"],
        vec!["expand", &device, "--add", "1M"],
    ] {
        let (code, msg) = d.fails(&args, "");
        assert_eq!(
            (code, msg),
            (
                INVALID_ARGUMENT,
                format!(
                    "tcctl: {device} is the device of the volume {v} (attached): it holds its \
                     decrypted data, no header; name the volume itself ({v})\n"
                )
            ),
            "{args:?}"
        );
    }
    let (code, msg) = d.fails(&["create", &device, "--password-stdin"], "");
    assert_eq!(
        (code, msg),
        (
            5,
            format!(
                "tcctl: {device} is in use: it is the device of the volume {v} (attached); \
                 `tcctl dismount {v}` frees it\n"
            )
        )
    );
    let (code, msg) = d.fails(&["info", &v, "--non-interactive"], "");
    assert_eq!(code, USAGE, "{msg}");
    assert!(
        msg.ends_with(&format!(
            " (it is mounted: `tcctl status {v}` shows it without a password)\n"
        )),
        "{msg}"
    );
    // The container again: attached, and its device is the way on.
    let (code, msg) = d.fails(&["mount", &v, "--non-interactive"], "");
    assert_eq!(
        (code, msg),
        (
            4,
            format!(
                "tcctl: {v} is already attached as {device}: `tcctl mount -b {device}` mounts \
                 the filesystem it holds, if any\n"
            )
        )
    );
    // Read-only asked of a read/write attachment: refused, saying how.
    let (code, msg) = d.fails(&["mount", "-b", &device, "-r"], "");
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert!(msg.contains("attached read/write"), "{msg}");
    // udisksctl's next step, mount -b on that device: its filesystem is
    // mounted, no password asked.
    let mnt = d.path("u-mnt");
    std::fs::create_dir(&mnt).expect("mount point");
    let out = d.ok(&["mount", "-b", &device, s(&mnt)], "");
    assert_eq!(out, format!("{v} mounted on {} ({device})\n", s(&mnt)));
    let row = d.list()[0].clone();
    assert_eq!(row["mount_point"], s(&mnt), "{row}");
    assert_eq!(row["filesystem"], "ext4", "{row}");
    std::fs::write(mnt.join("kept"), b"written through the mount").expect("write");
    let status = d.ok(&["status", &device], "");
    assert!(
        status.starts_with(&format!("{v} is active and mounted")),
        "{status}"
    );
    // Its mount point holds files, not a header: said, naming the volume.
    let (code, msg) = d.fails(&["info", s(&mnt), "--non-interactive"], "");
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert!(
        msg.starts_with(&format!(
            "tcctl: {} is the mount point of the volume {v}: it holds no header",
            s(&mnt)
        )),
        "{msg}"
    );
    // Once more: it is mounted, and where is said.
    let (code, msg) = d.fails(&["mount", "-b", &device], "");
    assert_eq!(
        (code, msg),
        (
            4,
            format!(
                "tcctl: {device} is the device of {v}, mounted on {} already\n",
                s(&mnt)
            )
        )
    );
    // Locked while its filesystem is mounted: refused, as udisks refuses
    // to lock a device in use, saying what to run; nothing changes.
    let (code, msg) = d.fails(&["lock", &format!("--block-device={device}")], "");
    assert_eq!(
        (code, msg),
        (
            5,
            format!(
                "tcctl: Error locking {v}: its filesystem is mounted on {}; `tcctl unmount -b \
                 {device}` unmounts it first (`tcctl dismount {v}` does both)\n",
                s(&mnt)
            )
        )
    );
    assert!(tcd_tests::is_mount_point(&mnt), "still mounted");
    d.ok(&["unmount", "-b", &device], "");
    let out = d.ok(&["lock", &format!("--block-device={device}")], "");
    assert_eq!(out, format!("Locked {v}.\n"));
    assert!(!tcd_tests::is_mount_point(&mnt), "unmounted");
    assert_eq!(d.list(), serde_json::json!([]));
    // What was written is in the volume.
    d.ok(&[&["mount", &v, s(&mnt)][..], &OPEN].concat(), PW);
    assert_eq!(
        std::fs::read(mnt.join("kept")).expect("the file"),
        b"written through the mount"
    );
    d.ok(&["dismount", &v], "");
    // The manual page lists each udisksctl row of docs/VERACRYPT.md.
    let doc = std::fs::read_to_string(tcd_tests::repo_dir().join("docs/VERACRYPT.md"))
        .expect("docs/VERACRYPT.md");
    let (_, doc) = doc
        .split_once("## udisksctl spellings")
        .expect("a udisksctl section");
    let man = tcd_tests::tcctl_manual_page();
    let (_, man) = man
        .split_once(".SH \"UDISKSCTL SPELLINGS\"")
        .expect("a man section");
    let rows: Vec<&str> = doc.lines().filter(|l| l.starts_with("| `")).collect();
    assert_eq!(rows.len(), 9, "{doc}");
    for r in rows {
        let spelling = r.split('`').nth(1).expect("a spelling");
        assert!(
            man.contains(&format!("\\fB{}", spelling.replace('-', "\\-"))),
            "{spelling}: {man}"
        );
    }
}

/// udisksctl's `unmount -b DEVICE` between `mount -b` and `lock -b`: the
/// filesystem goes, the volume stays attached exactly as `unlock` left
/// it; a busy filesystem is refused naming its holder, unless --force.
#[test]
fn udisks_unmount_leaves_the_volume_attached() {
    let d = Daemon::start();
    let v = s(&d.path("w.hc")).to_owned();
    let create = ["create", &v, "--size", "4M", "--filesystem", "ext4"];
    d.ok(&[&create[..], &OPEN].concat(), PW);
    d.ok(&[&["unlock", "-b", &v][..], &OPEN].concat(), PW);
    let attached = d.list()[0].clone();
    let device = attached["device"].as_str().unwrap_or_default().to_owned();
    assert!(device.starts_with("/dev/loop"), "{attached}");
    let mnt = d.path("w-mnt");
    std::fs::create_dir(&mnt).expect("mount point");
    d.ok(&["mount", "-b", &device, s(&mnt)], "");
    std::fs::write(mnt.join("kept"), b"written before the unmount").expect("write");

    let out = d.ok(&["unmount", "-b", &device], "");
    assert_eq!(
        out,
        format!("{v} unmounted ({}); still attached as {device}\n", s(&mnt))
    );
    assert!(!tcd_tests::is_mount_point(&mnt), "the filesystem is off");
    // Listed as unlock left it: its device, no mount point, its slot.
    assert_eq!(d.list()[0], attached);
    let status = d.ok(&["status", &device], "");
    assert!(
        status.starts_with(&format!("{v} is active (the block device only).")),
        "{status}"
    );
    assert!(d.ok(&["list"], "").contains(&device));
    // Nothing left to unmount: said, as a volume not mounted is.
    let (code, msg) = d.fails(&["umount", "--block-device", &device], "");
    assert_eq!(code, 3, "{msg}");
    assert!(
        msg.contains(&format!("the filesystem of {v} is not mounted")),
        "{msg}"
    );

    // Mounted again: what was written is there.
    d.ok(&["mount", "-b", &device, s(&mnt)], "");
    assert_eq!(
        std::fs::read(mnt.join("kept")).expect("the file"),
        b"written before the unmount"
    );
    // A process working in it: refused, naming it; nothing changes.
    let mut holder = working_in(&mnt);
    let pid = holder.0.id();
    let (code, msg) = d.fails(&["unmount", "-b", &device], "");
    assert_eq!(code, 5, "{msg}");
    assert!(msg.contains(&format!("PID {pid} (sleep)")), "{msg}");
    assert!(tcd_tests::is_mount_point(&mnt), "still mounted");
    assert_eq!(d.list()[0]["mount_point"], s(&mnt));
    // --force: off its mount point at once, the volume still attached.
    let out = d.ok(&["unmount", "-b", &device, "--force"], "");
    assert!(
        out.ends_with(&format!("still attached as {device}\n")),
        "{out}"
    );
    assert!(!tcd_tests::is_mount_point(&mnt), "unmounted lazily");
    assert_eq!(d.list()[0], attached);
    let _ = holder.0.kill();
    let _ = holder.0.wait();

    d.ok(&["mount", "-b", &device, s(&mnt)], "");
    assert!(mnt.join("kept").exists());
    d.ok(&["unmount", "-b", &device], "");
    // udisksctl's last step, by the container it unlocked.
    let out = d.ok(&["lock", "-b", &v], "");
    assert_eq!(out, format!("Locked {v}.\n"));
    assert_eq!(d.list(), serde_json::json!([]));

    // tcctl's own unmount, without -b: the whole volume goes.
    d.ok(&[&["mount", &v, s(&mnt)][..], &OPEN].concat(), PW);
    let out = d.ok(&["unmount", &v], "");
    assert_eq!(out, format!("{v} dismounted\n"));
    assert!(!tcd_tests::is_mount_point(&mnt));
    assert_eq!(d.list(), serde_json::json!([]));

    // umount(8)'s lazy -l, on a filesystem in use: off its mount point at
    // once, as --force takes it; the volume goes when its user lets go.
    d.ok(&[&["mount", &v, s(&mnt)][..], &OPEN].concat(), PW);
    let mut holder = working_in(&mnt);
    let (code, _) = d.fails(&["umount", s(&mnt)], "");
    assert_eq!(code, 5);
    let out = d.ok(&["umount", "-l", s(&mnt)], "");
    assert!(out.contains("still in use by"), "{out}");
    assert!(!tcd_tests::is_mount_point(&mnt), "unmounted lazily");
    let _ = holder.0.kill();
    let _ = holder.0.wait();
}

/// A favorite's wrong password typed on the terminal is said and asked
/// again, as `mount` asks it.
#[test]
fn favorites_mount_asks_again_after_a_wrong_password() {
    let d = Daemon::start();
    let v = create(&d, "fa.hc", "4M");
    let args = [
        "favorites",
        "add",
        "fa",
        &v,
        "--pim",
        "1",
        "--hash",
        "sha512",
    ];
    d.ok(&[&args[..], &["--filesystem", "none"]].concat(), "");
    let mut c = d.command();
    c.args(["favorites", "mount", "fa"]);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(20);
    t.expect("Password for fa: ", wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("not the password at all");
    t.expect(
        "tcctl: fa: wrong password or keyfile, or not a volume",
        Duration::from_secs(120),
    );
    t.expect_times("Password for fa: ", 2, wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains(&format!("fa ({v}) attached as ")), "{text}");
    assert_eq!(d.list()[0]["volume"], v.as_str());
}

/// `favorites mount --all` on a terminal, as VeraCrypt mounts favorites:
/// the password typed for the first favorite is tried on the next ones,
/// and only one it does not open asks its own.
#[test]
fn favorites_mount_all_tries_a_typed_password_on_each_favorite() {
    let d = Daemon::start();
    let other = "another password of twenty and more";
    let add = |name: &str, password: &str| {
        let v = s(&d.path(&format!("{name}.hc"))).to_owned();
        d.ok(
            &[&["create", &v, "--size", "4M"][..], &FAST].concat(),
            &format!("{password}\n"),
        );
        // FAST less --password-stdin: the favorite opens as fast.
        d.ok(
            &[&["favorites", "add", name, &v][..], &FAST[..6]].concat(),
            "",
        );
    };
    add("fa", PW.trim_end());
    add("fb", PW.trim_end());
    add("fc", other);
    let mut c = d.command();
    c.args(["favorites", "mount", "--all"]);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(120);
    t.expect("Password for fa: ", wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    t.expect(
        "tcctl: fc: the password that opened fa does not open it",
        wait,
    );
    t.expect("Password for fc: ", wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(other);
    let (code, text) = t.finish(wait);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("Password for fb"), "fb was asked: {text}");
    for name in ["fa", "fb", "fc"] {
        assert!(text.contains(&format!("{name} (")), "{name}: {text}");
    }
    assert_eq!(d.list().as_array().map(Vec::len), Some(3));
}

/// backup-header, change-password and expand ask a wrong password typed
/// on the terminal again, as mount does.
#[test]
fn header_commands_ask_again_after_a_wrong_password() {
    let d = Daemon::start();
    let v = create(&d, "hw.hc", "4M");
    let wait = Duration::from_secs(20);
    let backup = s(&d.path("hw.backup")).to_owned();
    let wrong_then_right = |args: &[&str], prompt: &str, then: &[&str]| {
        let mut c = d.command();
        c.args(args);
        let mut t = Pty::spawn(c, None);
        t.answer(prompt, "not the password at all", wait);
        t.expect(
            "tcctl: wrong password or keyfile, or not a volume",
            Duration::from_secs(120),
        );
        t.expect_times(prompt, 2, wait);
        std::thread::sleep(Duration::from_millis(300));
        t.type_line(PW.trim_end());
        for line in then {
            std::thread::sleep(Duration::from_millis(700));
            t.type_line(line);
        }
        let (code, text) = t.finish(Duration::from_secs(120));
        assert_eq!(code, 0, "{args:?}: {text}");
        text
    };
    let fast = ["--pim", "1", "--hash", "sha512"];
    let text = wrong_then_right(
        &[&["backup-header", &v, &backup][..], &fast].concat(),
        &format!("Password for {v}: "),
        &[],
    );
    assert!(text.contains("saved to"), "{text}");
    assert_eq!(std::fs::metadata(&backup).expect("made").len(), 128 << 10);
    let new = "other words, twenty or more";
    let text = wrong_then_right(
        &[&["change-password", &v][..], &fast, &["--new-pim", "1"]].concat(),
        &format!("Current password for {v}: "),
        &[new, new],
    );
    assert!(text.contains("changed"), "{text}");
    // The PIM it had, given again: said to stay.
    assert!(text.contains(&format!("{v}: its PIM stays 1")), "{text}");
    // The backup, restored: read again from its start at the second try.
    let text = wrong_then_right(
        &[&["restore-header", &v, &backup, "-q"][..], &fast].concat(),
        &format!("Password for the header stored in {backup}: "),
        &[],
    );
    assert!(
        text.contains(
            "; the backup opens with the password, PIM and keyfiles the volume had when it was \
             backed up"
        ),
        "{text}"
    );
    assert!(text.contains("header restored from"), "{text}");
    d.ok(
        &[
            "info",
            &v,
            "--pim",
            "1",
            "--hash",
            "sha512",
            "--password-stdin",
        ],
        PW,
    );
    d.ok(
        &[
            "change-password",
            &v,
            "--pim",
            "1",
            "--hash",
            "sha512",
            "--password-stdin",
        ],
        &format!("{PW}{new}\n"),
    );
    d.ok(
        &[
            "info",
            &v,
            "--pim",
            "1",
            "--hash",
            "sha512",
            "--password-stdin",
        ],
        &format!("{new}\n"),
    );
}

/// `-t -c` over an existing file asks before anything else, as soon as
/// its path is known, and once.
#[test]
fn text_mode_create_over_a_file_asks_first() {
    let d = Daemon::start();
    let w = s(&d.path("there.hc")).to_owned();
    std::fs::write(&w, vec![7u8; 1 << 20]).expect("a file");
    let wait = Duration::from_secs(20);
    let question = format!(
        "WARNING: this overwrites everything in {w} irrevocably. Are you sure? (Type 'YES' in \
         capital letters): "
    );
    let line = |c: &mut Command| {
        c.args([
            "-t",
            "-c",
            &w,
            "--volume-type",
            "normal",
            "--size",
            "4M",
            "--pim",
            "1",
        ]);
    };
    let mut c = d.command();
    line(&mut c);
    let mut t = Pty::spawn(c, None);
    t.expect(&question, wait);
    assert!(!t.text().contains("Encryption algorithm"), "{}", t.text());
    t.type_line("no");
    let (code, text) = t.finish(wait);
    assert_eq!(code, 10, "{text}");
    assert!(text.contains("not confirmed: nothing done"), "{text}");
    assert_eq!(std::fs::read(&w).expect("read"), vec![7u8; 1 << 20]);

    let mut c = d.command();
    line(&mut c);
    c.args([
        "--encryption",
        "AES",
        "--hash",
        "sha512",
        "--filesystem",
        "none",
    ]);
    let mut t = Pty::spawn(c, None);
    t.expect(&question, wait);
    t.type_line("YES");
    for (prompt, answer) in [
        (
            format!("Enter password for the new volume {w}: "),
            PW.trim_end(),
        ),
        ("Re-enter password: ".to_owned(), PW.trim_end()),
        ("Enter keyfile path [none]: ".to_owned(), ""),
    ] {
        t.answer(&prompt, answer, wait);
    }
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    assert_eq!(text.matches("Are you sure?").count(), 1, "{text}");
    assert_eq!(std::fs::metadata(&w).expect("stat").len(), 4 << 20);
}

/// create over a container a loop device is attached to is busy, as a
/// restore or an expansion finds it (a new file in its place would leave
/// the loop device on the old one, deleted); a missing folder is named.
/// Both before any password is read.
#[test]
fn create_refuses_a_loop_devices_file_and_a_missing_folder_first() {
    use std::os::unix::fs::MetadataExt;
    let d = Daemon::start();
    let v = create(&d, "looped.hc", "4M");
    let before = std::fs::metadata(&v).expect("stat").ino();
    let dev = tcd_tests::loop_device::LoopDevice::attach(std::path::Path::new(&v));
    let (code, msg) = d.fails(
        &[&["create", &v, "--size", "4M", "-q"][..], &OPEN].concat(),
        "",
    );
    assert_eq!(code, 5, "{msg}");
    assert_eq!(
        msg,
        format!(
            "tcctl: {v} is busy (the backing file of {0}): detach it first (losetup -d {0})\n",
            dev.path()
        )
    );
    assert_eq!(std::fs::metadata(&v).expect("stat").ino(), before);
    drop(dev);
    let missing = d.path("no-folder/x.hc");
    let (code, msg) = d.fails(
        &[&["create", s(&missing), "--size", "4M"][..], &OPEN].concat(),
        "",
    );
    assert_eq!(code, 3, "{msg}");
    assert_eq!(
        msg,
        format!(
            "tcctl: {}: no such folder, to make {} in\n",
            s(&d.path("no-folder")),
            s(&missing)
        )
    );
    // A folder or a character device is no place for a volume: refused
    // at once, not offered to be overwritten, nothing asked.
    let folder = d.path("a-folder");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("kept"), b"mine").unwrap();
    for (target, what) in [
        (s(&folder), "a folder"),
        ("/dev/null", "a character device"),
    ] {
        for more in [&[][..], &["-q"]] {
            let (code, msg) = d.fails(
                &[&["create", target, "--size", "4M"][..], more].concat(),
                "",
            );
            assert_eq!(
                (code, msg),
                (
                    7,
                    format!(
                        "tcctl: {target}: is {what}; a volume is a container file or a block \
                         device\n"
                    )
                ),
                "{more:?}"
            );
        }
    }
    assert_eq!(std::fs::read(folder.join("kept")).unwrap(), b"mine");
}

/// A keyfile folder stands for the files in it but hidden ones, as in
/// VeraCrypt, which warns of those it skips: so does tcctl.
#[test]
fn hidden_files_in_a_keyfile_folder_are_skipped_and_said() {
    let d = Daemon::start();
    let folder = d.path("keys");
    std::fs::create_dir(&folder).unwrap();
    d.ok(&["create-keyfile", s(&folder.join("kf1"))], "");
    std::fs::write(folder.join(".hidden"), b"not a keyfile").unwrap();
    let v = s(&d.path("kd.hc")).to_owned();
    let out = d.tcctl(
        &[
            &["create", &v, "--size", "4M", "--keyfile", s(&folder)][..],
            &FAST,
        ]
        .concat(),
        PW,
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "tcctl: warning: hidden files in a keyfile folder are never keyfiles, as in \
             VeraCrypt: skipped {}\n",
            s(&folder.join(".hidden"))
        )
    );
    // The visible one alone opens it.
    d.ok(
        &[
            &["info", &v, "--keyfile", s(&folder.join("kf1"))][..],
            &OPEN,
        ]
        .concat(),
        PW,
    );
}

/// A whole drive encrypted as a system drive, searched as a volume: its
/// header is in the first track, which --system-encryption reads; said
/// after the wrong password, not before (with it, not said).
#[test]
fn a_drive_searched_as_a_volume_is_told_of_system_encryption() {
    let d = Daemon::start();
    let drive = d.image("sys_vc_1_mbr_full-sha256-xts-aes");
    let (code, msg) = d.fails(
        &["info", &drive, "--hash", "sha256", "--password-stdin"],
        "not the password\n",
    );
    assert_eq!(code, 2, "{msg}");
    assert!(
        msg.contains(&format!(
            "; {drive} begins with a partition table: a drive encrypted as a system drive opens \
             with --system-encryption (cryptsetup's --tcrypt-system); "
        )),
        "{msg}"
    );
    let (code, msg) = d.fails(
        &[
            "info",
            &drive,
            "--hash",
            "sha256",
            "--system-encryption",
            "--password-stdin",
        ],
        "not the password\n",
    );
    assert_eq!(code, 2, "{msg}");
    assert!(!msg.contains("partition table"), "{msg}");
}

/// A plain filesystem opens with no password: after a wrong one, said
/// so (a signature is never reason to refuse before the password: a
/// volume's random salt could be taken for one).
#[test]
fn an_unencrypted_filesystem_is_named_after_the_wrong_password() {
    tcd_tests::require_tool("mkfs.ext4", "package e2fsprogs");
    let d = Daemon::start();
    let plain = d.path("plain.img");
    std::fs::File::create(&plain)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let st = Command::new("mkfs.ext4")
        .args(["-q"])
        .arg(&plain)
        .status()
        .unwrap();
    assert!(st.success());
    let bak = s(&d.path("plain.bak")).to_owned();
    // Each command that searches for a header says it.
    for (command, input) in [
        (&["mount", s(&plain)][..], PW.to_owned()),
        (&["info", s(&plain)], PW.to_owned()),
        (&["tcryptDump", s(&plain)], PW.to_owned()),
        (&["backup-header", s(&plain), &bak], PW.to_owned()),
        (&["change-password", s(&plain)], format!("{PW}{PW}")),
        (&["expand", "-q", s(&plain), "--size", "16M"], PW.to_owned()),
    ] {
        let (code, msg) = d.fails(&[command, &OPEN].concat(), &input);
        assert_eq!(code, 2, "{command:?}: {msg}");
        assert!(
            msg.ends_with(&format!(
                "; {} holds an unencrypted ext4 (or ext2/ext3) filesystem, no TrueCrypt or \
                 VeraCrypt volume: mount(8) or udisksctl mounts it as it is)\n",
                s(&plain)
            )),
            "{command:?}: {msg}"
        );
    }
}

/// A volume attached, its loop device then detached by hand (root's
/// `losetup -d`); the volume and that device.
fn detached_by_hand(d: &Daemon) -> (String, String) {
    let v = s(&d.path("byhand.hc")).to_owned();
    if !std::path::Path::new(&v).exists() {
        create(d, "byhand.hc", "4M");
    }
    let device = attached(d, &v, &[]);
    let st = Command::new("losetup")
        .args(["-d", &device])
        .status()
        .expect("losetup");
    assert!(st.success());
    (v, device)
}

/// A volume's loop device detached by hand and attached at once to
/// another file: the dismount goes through and leaves that device to the
/// file it now serves.
#[test]
fn a_dismount_leaves_a_device_detached_by_hand_and_given_to_another_file() {
    let d = Daemon::start();
    let other = d.path("other.img");
    std::fs::write(&other, vec![0u8; 1 << 20]).expect("a file");
    // Its device given since to another file: that file's, and left to
    // it. (Another test may take the freed device first: tried again.)
    let (v, device) = (0..10)
        .find_map(|_| {
            let (v, device) = detached_by_hand(&d);
            let st = Command::new("losetup")
                .args([&device, s(&other)])
                .status()
                .expect("losetup");
            if st.success() {
                return Some((v, device));
            }
            d.ok(&["dismount", &v], "");
            None
        })
        .expect("a device detached by hand given to the other file");
    let backing = || {
        let name = device.trim_start_matches("/dev/");
        std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).unwrap_or_default()
    };
    assert_eq!(backing().trim_end(), s(&other));
    let out = d.tcctl(&["dismount", &v], "");
    let after = backing();
    let _ = Command::new("losetup").args(["-d", &device]).status();
    assert_eq!(
        after.trim_end(),
        s(&other),
        "{device} was detached: {out:?}"
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{v} dismounted\n")
    );
    assert_eq!(d.list(), serde_json::json!([]));
}

/// A volume's loop device detached by hand (root's `losetup -d`, which
/// the kernel carries out once the daemon lets go): the dismount still
/// goes through, its loop device detached already.
#[test]
fn a_dismount_after_losetup_d_by_hand_goes_through() {
    let d = Daemon::start();
    let (v, _) = detached_by_hand(&d);
    let out = d.ok(&["dismount", &v], "");
    assert_eq!(out, format!("{v} dismounted\n"));
    assert_eq!(d.list(), serde_json::json!([]));
}

/// `tcctl umount .` typed in the mount point: tcctl itself does not hold
/// the filesystem (it leaves for `/`), so with no other user it goes.
#[test]
fn a_dismount_typed_inside_the_mount_point_is_not_held_by_tcctl() {
    let d = Daemon::start();
    let v = create_ext4(&d, "in.hc");
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    d.ok(&[&["mount", &v, s(&mnt)][..], &OPEN].concat(), PW);
    let mut c = d.command();
    c.args(["umount", "."]).current_dir(&mnt);
    let out = c.output().expect("tcctl");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{v} dismounted ({})\n", s(&mnt))
    );
    assert!(!tcd_tests::is_mount_point(&mnt));
    assert_eq!(d.list(), serde_json::json!([]));
}

/// A process working in `dir` (its current folder), until killed.
fn working_in(dir: &std::path::Path) -> tcd_tests::daemon::Stopped {
    tcd_tests::daemon::Stopped(
        Command::new("sleep")
            .arg("300")
            .current_dir(dir)
            .spawn()
            .expect("a process working in the folder"),
    )
}

#[test]
fn a_volume_opened_through_a_loop_device_is_named_by_its_file_too() {
    let d = Daemon::start();
    let v = create(&d, "b.hc", "4M");
    // The user's own loop device over the container; tcd opens that.
    let dev = tcd_tests::loop_device::LoopDevice::attach(std::path::Path::new(&v));
    d.ok(
        &[&["open", dev.path(), "--filesystem", "none"][..], &OPEN].concat(),
        PW,
    );
    // The file behind it names the volume, as its device does.
    let status = d.ok(&["status", &v], "");
    assert!(
        status.starts_with(&format!("{} is active", dev.path())),
        "{status}"
    );
    let (code, msg) = d.fails(&[&["mount", &v][..], &OPEN].concat(), PW);
    assert_eq!(code, 4, "{msg}");
    assert!(
        msg.contains(&format!(
            "{v} is the file behind {}, which is already attached as ",
            dev.path()
        )),
        "{msg}"
    );
    let out = d.ok(&["dismount", &v], "");
    assert!(
        out.starts_with(&format!("{} dismounted", dev.path())),
        "{out}"
    );
    assert_eq!(d.list().as_array().map(Vec::len), Some(0));
    // Another file is not that volume.
    d.ok(
        &[&["open", dev.path(), "--filesystem", "none"][..], &OPEN].concat(),
        PW,
    );
    let other = create(&d, "o.hc", "4M");
    let (code, msg) = d.fails(&["status", &other], "");
    assert_eq!(code, 3, "{msg}");
    d.ok(&["dismount", "--all"], "");
}

/// A container a loop device is attached to outside tcd (losetup) mounts,
/// as VeraCrypt and cryptsetup mount it, with a warning first; that loop
/// device, given to mount, is said to be the mounted volume's, not to be
/// mounted itself.
#[test]
fn a_container_attached_outside_tcd_is_warned_of_and_its_loop_device_named() {
    let d = Daemon::start();
    let v = create(&d, "o.hc", "4M");
    let losetup = tcd_tests::require_tool("losetup", "package mount");
    let out = Command::new(&losetup)
        .args(["-f", "--show", &v])
        .output()
        .expect("losetup");
    assert!(out.status.success(), "{out:?}");
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let mount = |what: &str| {
        d.tcctl(
            &[&["mount", what, "--filesystem", "none"][..], &OPEN].concat(),
            PW,
        )
    };
    let first = mount(&v);
    let again = mount(&dev);
    let listed = d.list();
    d.ok(&["dismount", "--all"], "");
    let _ = Command::new(&losetup).args(["-d", &dev]).status();
    assert!(first.status.success(), "{first:?}");
    assert_eq!(
        String::from_utf8_lossy(&first.stderr),
        format!(
            "tcctl: warning: {v} is also attached as {dev} outside tcd: what is written through \
             {dev} and through this volume would overwrite each other (losetup -d {dev} detaches \
             it)\n"
        )
    );
    let ours = listed[0]["device"].as_str().expect("device");
    assert_ne!(ours, dev);
    assert_eq!(again.status.code(), Some(4), "{again:?}");
    assert_eq!(
        String::from_utf8_lossy(&again.stderr),
        format!(
            "tcctl: {dev} is a loop device over {v}, which is already attached as {ours}: \
             `tcctl mount -b {ours}` mounts the filesystem it holds, if any\n"
        )
    );
}

#[test]
fn a_loop_device_over_a_mounted_volumes_file_is_that_volume() {
    let d = Daemon::start();
    let v = create(&d, "l.hc", "4M");
    d.ok(
        &[&["mount", &v, "--filesystem", "none"][..], &OPEN].concat(),
        PW,
    );
    let before = std::fs::read(&v).expect("the volume");
    let losetup = tcd_tests::require_tool("losetup", "package mount");
    let out = Command::new(&losetup)
        .args(["-f", "--show", &v])
        .output()
        .expect("losetup");
    assert!(out.status.success(), "{out:?}");
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    // The loop device names the volume, as its file does.
    let status = d.tcctl(&["status", &dev], "");
    let said = String::from_utf8_lossy(&status.stdout).into_owned();
    // Neither made anew nor mounted a second time through the loop device.
    let (code, msg) = d.fails(
        &[
            &["create", &dev, "--force", "--filesystem", "none"][..],
            &["--pim", "1", "--hash", "sha512", "--password-stdin"],
        ]
        .concat(),
        PW,
    );
    let (code2, msg2) = d.fails(
        &[&["mount", &dev, "--filesystem", "none"][..], &OPEN].concat(),
        PW,
    );
    let _ = Command::new(&losetup).args(["-d", &dev]).status();
    assert!(status.status.success(), "{status:?}");
    assert!(said.starts_with(&format!("{v} is active")), "{said}");
    assert_eq!(code, 4, "{msg}");
    assert!(
        msg.contains("already mounted") || msg.contains("is mounted"),
        "{msg}"
    );
    assert_eq!(code2, 4, "{msg2}");
    assert!(
        std::fs::read(&v).expect("the volume") == before,
        "the volume was written"
    );
    d.ok(&["dismount", "--all"], "");
    // A volume on a device fills it: --size is refused, saying so.
    let plain = d.path("plain.img");
    std::fs::write(&plain, vec![0u8; 4 << 20]).expect("a file");
    let out = Command::new(&losetup)
        .args(["-f", "--show"])
        .arg(&plain)
        .output()
        .expect("losetup");
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let (code, msg) = d.fails(
        &[&["create", &dev, "--size", "2M", "--force"][..], &FAST].concat(),
        PW,
    );
    // Without --force, the question names it a device.
    let (code2, msg2) = d.fails(&[&["create", &dev][..], &FAST].concat(), PW);
    let _ = Command::new(&losetup).args(["-d", &dev]).status();
    assert_eq!(
        (code2, msg2),
        (
            USAGE,
            format!(
                "tcctl: {dev} is a device: confirmation needed and no terminal to ask on: give \
                 --batch-mode (VeraCrypt's --force)\n"
            )
        )
    );
    assert_eq!(code, USAGE, "{msg}");
    assert_eq!(
        msg,
        format!(
            "tcctl: {dev} is a device: a volume on a device fills it, so --size goes with \
             container files only (leave it out)\n"
        )
    );
}

#[test]
fn text_mode_change_password_asks_the_keyfiles_and_keeps_them_by_default() {
    let d = Daemon::start();
    let v = s(&d.path("k.hc")).to_owned();
    let key = s(&d.path("key")).to_owned();
    d.ok(&["create-keyfile", &key], "");
    d.ok(
        &[
            &["create", &v, "--size", "4M", "--keyfile", &key][..],
            &FAST,
        ]
        .concat(),
        PW,
    );
    let mut c = d.command();
    c.args(["-t", "-C", &v, "--pim", "1", "--hash", "sha512"]);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(30);
    let new = "another password, twenty and more";
    t.expect("Enter password: ", wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    t.expect("Enter current keyfile [none]: ", wait);
    t.type_line(&key);
    t.expect_times("Enter current keyfile [none]: ", 2, wait);
    t.type_line("");
    t.expect("Enter new password: ", wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(new);
    t.expect("Re-enter password: ", wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(new);
    // VeraCrypt's next question: the new PIM (the same one here).
    t.expect("Enter new PIM: ", wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("1");
    t.expect("Keep current keyfiles? (y=Yes/n=No) [Yes]: ", wait);
    t.type_line("");
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    // The new password opens it with the keyfile it kept, not without.
    let open = ["--pim", "1", "--hash", "sha512", "--password-stdin"];
    d.ok(
        &[&["info", &v, "--keyfile", &key][..], &open].concat(),
        &format!("{new}\n"),
    );
    let (code, _) = d.fails(&[&["info", &v][..], &open].concat(), &format!("{new}\n"));
    assert_eq!(code, 2);
}

/// A hidden volume of 1 MiB created in `v` with the passwords on `stdin`
/// is refused with `said`, and the container is left as it was.
fn hidden_create_refused(d: &Daemon, v: &str, stdin: &str, said: &str) {
    let before = std::fs::read(v).expect("read");
    let (code, msg) = d.fails(
        &[
            &["create", v, "--hidden-size", "1M", "--outer-pim", "1"][..],
            &["--outer-hash", "sha512", "--pim", "1", "--hash", "sha512"],
            &["--filesystem", "none", "--password-stdin"],
        ]
        .concat(),
        stdin,
    );
    assert_eq!((code, msg.as_str()), (INVALID_ARGUMENT, said));
    assert!(std::fs::read(v).expect("read") == before, "nothing written");
}

/// The outer volume's password for the hidden volume would open the outer
/// one: refused, the container unchanged.
#[test]
fn a_hidden_volume_with_the_outer_volumes_password_is_refused() {
    let d = Daemon::start();
    let v = create(&d, "o.hc", "4M");
    hidden_create_refused(
        &d,
        &v,
        &format!("{PW}{PW}"),
        "tcctl: the hidden volume's password (with its keyfiles) must differ from the outer \
         volume's: the same one would open the outer volume\n",
    );
}

/// An ext4 outer volume puts new files anywhere in it: a hidden volume at
/// its end would take its next writes. Refused, the container unchanged.
#[test]
fn a_hidden_volume_in_an_ext4_outer_volume_is_refused() {
    let d = Daemon::start();
    let v = create_ext4(&d, "e.hc");
    hidden_create_refused(
        &d,
        &v,
        &format!("{PW}another password, long enough\n"),
        "tcctl: the outer volume holds an ext2/3/4 filesystem, which puts new files anywhere \
         in it: its next writes would land in a hidden volume at its end (a hidden volume goes \
         into a FAT, exFAT or NTFS outer volume, which fill from the start)\n",
    );
}

#[test]
fn a_hidden_volume_too_large_is_refused_before_its_password_is_asked() {
    let d = Daemon::start();
    let v = create(&d, "o.hc", "4M");
    // Only the outer volume's password is given: the hidden volume's size
    // is judged before its password would be read.
    let (code, msg) = d.fails(
        &[
            &["create", &v, "--hidden-size", "4M", "--outer-pim", "1"][..],
            &[
                "--outer-hash",
                "sha512",
                "--pim",
                "1",
                "--filesystem",
                "none",
            ],
            &["--password-stdin"],
        ]
        .concat(),
        PW,
    );
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    // 4 MiB less the headers' 256 KiB, less the outer volume's first
    // 64 KiB and last 4 KiB.
    assert_eq!(
        msg,
        "tcctl: a hidden volume of 4194304 bytes does not fit: the outer volume has room for at \
         most 3862528 bytes (less what its files take)\n"
    );
    // On a terminal: said right after the outer volume's password, with no
    // question for the hidden volume's.
    let mut c = d.command();
    c.args(["create", &v, "--hidden-size", "4M"])
        .args(HIDDEN_FAST);
    let mut t = Pty::spawn(c, None);
    t.expect(
        &format!("Outer volume password of {v}: "),
        Duration::from_secs(20),
    );
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    let (code, text) = t.finish(Duration::from_secs(60));
    assert_eq!(code, INVALID_ARGUMENT, "{text}");
    assert!(
        text.ends_with(&crlf(
            "tcctl: a hidden volume of 4194304 bytes does not fit: the outer volume has room \
             for at most 3862528 bytes (less what its files take)\n"
        )),
        "{text}"
    );
    assert!(
        !text.contains("Password for the new hidden volume"),
        "{text}"
    );
}

/// The hint after a wrong password when the PIM was typed at the prompt
/// and --hash given: what narrowed the search, and that a PIM rules
/// TrueCrypt out.
/// (A PIM rules out TrueCrypt's format: no --format hint with it.)
const TYPED_PIM_HINT: &str = "; only sha512 and PIM 1 were tried; with the PIM typed at the prompt only \
                              VeraCrypt volumes are searched: a TrueCrypt volume has no PIM)";

#[test]
fn a_wrong_password_after_a_pim_typed_at_the_prompt_says_that_pim() {
    let d = Daemon::start();
    let v = create(&d, "p.hc", "4M");
    let mut c = d.command();
    c.args(["info", &v, "--hash", "sha512"]);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(30);
    t.expect(&format!("Password for {v}: "), wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("not the password, but as long");
    t.expect(&format!("PIM for {v} (Enter for none): "), wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("1");
    // Said, and asked again (3 times in all, as cryptsetup asks); Ctrl-D
    // gives up, with the wrong password's exit code.
    t.expect(
        &crlf(&format!("{TYPED_PIM_HINT}\n")),
        Duration::from_secs(120),
    );
    t.expect_times(&format!("Password for {v}: "), 2, wait);
    let text = gives_up_after_a_wrong_password(t, &v, Duration::from_secs(120));
    assert!(!text.contains("--pim"), "{text}");
    // Given on the line, an encryption narrows it as the hash does.
    let (code, msg) = d.fails(
        &[
            &["info", &v, "--pim", "1", "--hash", "sha512"][..],
            &["--encryption", "serpent", "--password-stdin"],
        ]
        .concat(),
        "not the password, but as long\n",
    );
    assert_eq!(code, 2, "{msg}");
    assert!(
        msg.ends_with(
            "; only sha512, serpent and PIM 1 were tried; with --pim only VeraCrypt volumes are \
             searched: a TrueCrypt volume has no PIM)\n"
        ),
        "{msg}"
    );
}

/// The right password without the PIM the volume was created with opens
/// nothing: the failure names a missing PIM as a cause (VeraCrypt's
/// "incorrect Volume PIM number"), in the words of the command line.
#[test]
fn a_right_password_without_the_volumes_pim_names_the_missing_pim() {
    let d = Daemon::start();
    let v = create(&d, "pim.hc", "4M");
    let (code, msg) = d.fails(&["info", &v, "--hash", "sha512", "--password-stdin"], PW);
    assert_eq!(code, 2, "{msg}");
    assert!(
        msg.contains(
            "; a volume created with a PIM opens only with that PIM: --pim gives it; giving \
             --format narrows the search; only sha512 was tried)\n"
        ),
        "{msg}"
    );
    // cryptsetup's line: its own options for a PIM.
    let (code, msg) = d.fails(
        &["tcryptOpen", "--test-passphrase", &v, "--hash", "sha512"],
        PW,
    );
    assert_eq!(code, 2, "{msg}");
    assert!(
        msg.contains(
            "a volume created with a PIM opens only with that PIM: --veracrypt-pim gives it, \
             --veracrypt-query-pim asks for it"
        ) && !msg.contains("--pim "),
        "{msg}"
    );
    // With the PIM, it opens.
    d.ok(&[&["info", &v][..], &OPEN].concat(), PW);
}

/// What a password change did is said, as VeraCrypt says "Password
/// and/or keyfile(s) changed": the keyfiles now needed, the new PRF.
#[test]
fn change_password_says_which_credentials_changed() {
    let d = Daemon::start();
    let v = create(&d, "cp.hc", "4M");
    let key = s(&d.path("new.key")).to_owned();
    d.ok(&["create-keyfile", &key], "");
    let change = [
        &[
            "change-password",
            &v,
            "--new-keyfile",
            &key,
            "--new-hash",
            "blake2s",
        ][..],
        &OPEN,
    ]
    .concat();
    let out = d.ok(&change, &format!("{PW}{PW}"));
    assert_eq!(
        out,
        format!(
            "{v}: keyfiles changed, password unchanged\n\
             {v}: it now opens only with its password and 1 keyfile\n\
             {v}: its header key is now derived with BLAKE2s-256\n"
        )
    );
    let opens = ["--keyfile", &key, "--pim", "1", "--password-stdin"];
    let info = d.ok(&[&["info", &v][..], &opens].concat(), PW);
    assert!(info.contains("BLAKE2s"), "{info}");
    // An empty new password: the keyfile alone opens it, and is said to.
    let alone = [&["change-password", &v, "--new-keyfile", &key][..], &opens].concat();
    let out = d.ok(&alone, &format!("{PW}\n"));
    assert_eq!(
        out,
        format!(
            "{v}: password changed\n\
             {v}: it now opens with 1 keyfile and no password\n"
        )
    );
    let info = d.ok(&[&["info", &v][..], &opens].concat(), "\n");
    assert!(info.contains("BLAKE2s"), "{info}");
}

#[test]
fn text_mode_change_password_asks_again_after_a_wrong_current_password() {
    let d = Daemon::start();
    let v = create(&d, "w.hc", "4M");
    let mut c = d.command();
    c.args(["-t", "-C", &v, "--hash", "sha512", "-k", ""]);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(30);
    let current = "Enter password: ";
    let pim = "Enter current PIM: ";
    t.answer(current, "not the password, but as long", wait);
    t.answer(pim, "1", wait);
    // Said, and asked again, as a -t mount does.
    t.expect(
        "tcctl: wrong password or keyfile, or not a volume (searched for ",
        Duration::from_secs(120),
    );
    t.expect(TYPED_PIM_HINT, wait);
    t.expect_times(current, 2, wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    t.expect_times(pim, 2, wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("1");
    let new = "another password, twenty and more";
    t.expect("Enter new password: ", Duration::from_secs(120));
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(new);
    t.expect("Re-enter password: ", wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(new);
    t.expect("Enter new PIM: ", wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("2");
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    assert!(
        text.ends_with(&crlf(&format!(
            "{v}: password changed\n{v}: its PIM is now 2\n"
        ))),
        "{text}"
    );
    // The PIM typed is the volume's now.
    let opens = ["--pim", "2", "--hash", "sha512", "--password-stdin"];
    let info = d.ok(&[&["info", &v][..], &opens].concat(), &format!("{new}\n"));
    assert!(info.contains("PIM                2\n"), "{info}");
}

#[test]
fn favorites_list_names_each_setting_a_favorite_has() {
    let d = Daemon::start();
    let v = create(&d, "f.hc", "4M");
    let mnt = s(&d.path("f.mnt")).to_owned();
    let key = s(&d.path("key")).to_owned();
    d.ok(&["create-keyfile", &key], "");
    d.ok(
        &[
            &["favorites", "add", "every", &v, "--mount-point", &mnt][..],
            &["--filesystem", "none", "--hash", "sha512", "--readonly"],
            &["--dismount-on-logout", "--pim", "1", "--keyfile", &key],
            &["--keyfile", &key, "--protect-hidden", "--discard"],
            &[
                "--force-dismount",
                "--backend",
                "soft",
                "--format",
                "veracrypt",
            ],
            &["--dismount-idle", "60", "--slot", "7"],
        ]
        .concat(),
        "",
    );
    d.ok(&["favorites", "add", "plain", &v], "");
    let table = d.ok(&["favorites", "list"], "");
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(lines[1].starts_with("every "), "{table}");
    assert!(lines[1].contains(&format!(" {mnt} ")), "{table}");
    assert!(
        lines[1].ends_with(&format!(
            " {mnt}  slot 7, block device only, SHA-512 tried first, read-only, dismount at logout, \
                 PIM 1, 2 keyfiles, protects hidden volume, discards, forced automatic \
                 dismounts, backend soft, VeraCrypt format only, dismount after 60 s idle"
        )),
        "{table}"
    );
    // A plain one has nothing to say.
    assert!(lines[2].starts_with("plain "), "{table}");
    assert!(lines[2].trim_end().ends_with(" -"), "{table}");
    // A hash and an encryption given are tried first, as one learned is.
    d.ok(
        &[
            "favorites",
            "add",
            "pair",
            &v,
            "--hash",
            "sha256",
            "--encryption",
            "Serpent-Twofish-AES",
        ],
        "",
    );
    let table = d.ok(&["favorites", "list"], "");
    assert!(
        table.lines().any(|l| l.starts_with("pair ")
            && l.trim_end()
                .ends_with("  Serpent-Twofish-AES/SHA-256 tried first")),
        "{table}"
    );
    d.ok(&["favorites", "remove", "pair"], "");
    // mount's -r is favorites add's too.
    d.ok(&["favorites", "add", "short", &v, "-r"], "");
    let table = d.ok(&["favorites", "list"], "");
    let short = table
        .lines()
        .find(|l| l.starts_with("short "))
        .unwrap_or_default();
    assert!(short.ends_with(" read-only"), "{table}");
}

#[test]
fn a_new_container_is_its_owners_only_and_dismount_follows_links_as_mount_does() {
    let d = Daemon::start();
    let v = create(&d, "a.hc", "4M");
    let mode = std::fs::metadata(&v)
        .expect("container")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "a new container is readable by its owner only");

    // A link to the container, mounted and dismounted by the link.
    let link = d.path("link.hc");
    std::os::unix::fs::symlink(&v, &link).expect("symlink");
    d.ok(&[&["mount", s(&link)][..], &FAST].concat(), PW);
    let said = d.ok(&["dismount", s(&link)], "");
    // A link to the container is the container: no name in brackets.
    assert_eq!(said, format!("{v} dismounted\n"));
    assert!(d.list().as_array().is_some_and(Vec::is_empty));

    // A link to its device.
    let said = d.ok(&[&["mount", v.as_str()][..], &FAST].concat(), PW);
    let device = said
        .split_whitespace()
        .find(|w| w.starts_with("/dev/"))
        .unwrap_or_else(|| panic!("no device in {said:?}"))
        .to_owned();
    let dev_link = d.path("dev-link");
    std::os::unix::fs::symlink(&device, &dev_link).expect("symlink");
    let said = d.ok(&["close", s(&dev_link)], "");
    assert!(said.starts_with(&format!("{v} dismounted")), "{said}");
    assert!(d.list().as_array().is_some_and(Vec::is_empty));
}

#[test]
fn a_hard_link_to_a_mounted_container_names_it_for_status_and_dismount() {
    let d = Daemon::start();
    let v = create(&d, "h.hc", "4M");
    let link = d.path("hard.hc");
    std::fs::hard_link(&v, &link).expect("hard link");
    let l = s(&link);
    d.ok(&[&["mount", v.as_str()][..], &FAST].concat(), PW);
    // Mounting it again by the link is refused: the same file (attached
    // only, the way on is said).
    let (code, err) = d.fails(&[&["mount", l][..], &FAST].concat(), PW);
    assert!(err.contains("is already attached as"), "{code}: {err}");

    // The link names the mounted volume, as mount found it.
    let status = d.ok(&["status", l], "");
    assert!(status.contains(&v), "status by the hard link: {status}");
    let said = d.ok(&["dismount", l], "");
    // Named by the container, as a link to it is the container.
    assert_eq!(
        said,
        format!("{v} dismounted\n"),
        "dismount by the hard link"
    );
    assert!(d.list().as_array().is_some_and(Vec::is_empty));
    // Not mounted any more: said so by the link too.
    let (code, err) = d.fails(&["status", l], "");
    assert_eq!(code, 3, "{err}");
}

#[test]
fn a_protected_hidden_volume_is_searched_over_every_hash_and_its_failure_names_its_options() {
    let d = Daemon::start();
    let v = create(&d, "p.hc", "4M");
    // The hidden volume's hash is not the outer one's.
    d.ok(
        &[
            "create",
            &v,
            "--hidden-size",
            "1M",
            "--outer-pim",
            "1",
            "--outer-hash",
            "sha512",
            "--pim",
            "2",
            "--hash",
            "sha256",
            "--filesystem",
            "none",
            "--password-stdin",
        ],
        &format!("{PW}hidden words, twenty and more\n"),
    );
    let mount = [
        &["mount", &v, "--protect-hidden", "--protect-hidden-pim", "2"][..],
        &["--filesystem", "none", "--non-interactive"],
        &OPEN,
    ]
    .concat();
    // --hash sha512 is the outer volume's: the hidden one still opens.
    let said = d.ok(&mount, &format!("{PW}hidden words, twenty and more\n"));
    assert!(said.contains("attached as /dev/loop"), "{said}");
    d.ok(&["dismount", &v], "");
    let (code, msg) = d.fails(&mount, &format!("{PW}not the hidden words at all\n"));
    assert_eq!(code, 2, "{msg}");
    assert!(
        msg.starts_with(
            "tcctl: the outer volume opened, but the password, keyfiles and PIM given to \
             protect a hidden volume open none inside it (searched for "
        ) && msg.ends_with(
            "; its PIM and keyfiles are --protect-hidden-pim and --protect-hidden-keyfile; \
             its header is searched over every hash and encryption)\n"
        ),
        "{msg}"
    );
    // No PIM given for it: a missing one is named as a cause.
    let without_pim: Vec<&str> = mount
        .iter()
        .copied()
        .filter(|a| !["--protect-hidden-pim", "2"].contains(a))
        .collect();
    let (code, msg) = d.fails(
        &without_pim,
        &format!("{PW}hidden words, twenty and more\n"),
    );
    assert_eq!(code, 2, "{msg}");
    assert!(
        msg.ends_with(
            "; a hidden volume created with a PIM opens only with that PIM: \
             --protect-hidden-pim gives it; its keyfiles are --protect-hidden-keyfile, and its \
             header is searched over every hash and encryption)\n"
        ),
        "{msg}"
    );
}

#[test]
fn a_volume_on_a_read_only_file_system_mounts_read_only_as_veracrypt_does() {
    let d = Daemon::start();
    let fs = Tmpfs::new(d.path("ro-fs"), 16);
    let v = create(&d, "ro-fs/r.hc", "4M");
    let st = Command::new("mount")
        .args(["-o", "remount,ro", s(&fs.0)])
        .status()
        .expect("mount");
    assert!(st.success(), "remount read-only");
    let out = d.tcctl(
        &[&["mount", &v, "--filesystem", "none"][..], &OPEN].concat(),
        PW,
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("tcctl: note: {v} is on a read-only file system: it is mounted read-only\n")
    );
    assert_eq!(d.list()[0]["read_only"], true, "{}", d.list());
    d.ok(&["dismount", &v], "");
    // What must write it says why it cannot, naming no option that would.
    let (code, msg) = d.fails(&[&["change-password", &v][..], &OPEN].concat(), PW);
    assert_eq!(
        (code, msg),
        (
            6,
            format!("tcctl: {v}: is on a read-only file system, where nothing can change it\n")
        )
    );
}

#[test]
fn a_favorite_that_protects_a_hidden_volume_takes_the_volumes_password_first() {
    let d = Daemon::start();
    let v = create(&d, "fh.hc", "4M");
    let key = s(&d.path("hidden.key")).to_owned();
    d.ok(&["create-keyfile", &key], "");
    // The hidden volume has a PIM and a keyfile of its own.
    d.ok(
        &[
            &["create", &v, "--hidden-size", "1M", "--outer-pim", "1"][..],
            &["--outer-hash", "sha512", "--pim", "2", "--hash", "sha256"],
            &[
                "--keyfile",
                &key,
                "--filesystem",
                "none",
                "--password-stdin",
            ],
        ]
        .concat(),
        &format!("{PW}hidden words, twenty and more\n"),
    );
    let add = [
        &["favorites", "add", "fh", &v, "--protect-hidden"][..],
        &["--pim", "1", "--filesystem", "none"],
    ]
    .concat();
    d.ok(&add, "");
    // The volume's password, then the hidden volume's, as mount takes
    // them; without the hidden volume's own PIM and keyfile it is not
    // found, and the user is told where they go.
    let mount = ["favorites", "mount", "fh", "--password-stdin"];
    let both = format!("{PW}hidden words, twenty and more\n");
    let (code, msg) = d.fails(&mount, &both);
    assert_eq!(code, 2, "{msg}");
    assert!(
        msg.ends_with(
            "; its PIM and keyfiles are the favorite's --protect-hidden-pim (else its --pim) \
             and --protect-hidden-keyfile; its header is searched over every hash and \
             encryption)\n"
        ),
        "{msg}"
    );
    let own = [
        "--protect-hidden-pim",
        "2",
        "--protect-hidden-keyfile",
        &key,
        "--replace",
    ];
    d.ok(&[&add[..], &own].concat(), "");
    let listed = d.ok(&["favorites", "list"], "");
    assert!(
        listed.contains("protects hidden volume, hidden volume PIM 2, hidden volume 1 keyfile"),
        "{listed}"
    );
    d.ok(&mount, &both);
    assert_eq!(d.list()[0]["protects_hidden"], true, "{}", d.list());
    d.ok(&["dismount", "--all"], "");
    let (code, msg) = d.fails(&mount, &format!("{PW}not the hidden words at all\n"));
    assert_eq!(code, 2, "{msg}");
    // One line only, as VeraCrypt's favorites take: the hidden volume's
    // password is missing, and said so by the favorite's name.
    let (code, msg) = d.fails(&["favorites", "mount", "--all", "--password-stdin"], PW);
    assert_eq!(
        (code, msg.as_str()),
        (
            USAGE,
            "tcctl: fh: not mounted: it protects a hidden volume, whose password is the line \
             after the volume's password on standard input, which has no more lines (the \
             favorite keeps its --protect-hidden)\n"
        )
    );
}

#[test]
fn text_mode_hidden_create_asks_the_outer_keyfiles_and_asks_again_after_a_wrong_password() {
    let d = Daemon::start();
    let key = s(&d.path("outer.key")).to_owned();
    d.ok(&["create-keyfile", &key], "");
    let v = create_with(&d, "oh.hc", &["--keyfile", &key]);
    let mut c = d.command();
    c.args(["-t", "-c", &v, "--volume-type=hidden", "--size=1M"])
        .args(["--encryption=AES", "--hash=sha512", "--filesystem=none"])
        .args(["--pim=1", "--outer-pim", "1"]);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(60);
    let outer = format!("Outer volume password of {v}: ");
    let keyfile = "Enter keyfile for the outer volume [none]: ";
    let mut round = |n: usize, password: &str| {
        t.expect_times(&outer, n, wait);
        std::thread::sleep(Duration::from_millis(300));
        t.type_line(password);
        t.expect_times(keyfile, 2 * n - 1, wait);
        t.type_line(&key);
        t.expect_times(keyfile, 2 * n, wait);
        t.type_line("");
    };
    round(1, "not the outer password, as long");
    round(2, PW.trim_end());
    let hidden = "hidden words, twenty and more";
    t.expect("Enter password for the new hidden volume in ", wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(hidden);
    t.expect("Re-enter password: ", wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(hidden);
    // The hidden volume's keyfiles last, named as its own.
    t.expect("Enter keyfile path for the hidden volume [none]: ", wait);
    t.type_line("");
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("Enter keyfile path [none]"), "{text}");
    assert!(
        text.contains(&format!("tcctl: the outer volume {v}: wrong password")),
        "the wrong outer password is said: {text}"
    );
    assert!(
        text.ends_with(&crlf(&format!("hidden volume created in {v}\n"))),
        "{text}"
    );
    d.ok(&[&["info", &v][..], &OPEN].concat(), &format!("{hidden}\n"));
}

#[test]
fn text_mode_hidden_create_refuses_a_second_hidden_volume_before_its_password() {
    let d = Daemon::start();
    // With a hidden volume in it.
    let v = outer_volume(&d, "two.hc");
    d.ok(
        &[
            &["create", &v, "--hidden-size", "4M", "--outer-pim", "1"][..],
            &["--pim", "1", "--filesystem", "none", "--password-stdin"],
        ]
        .concat(),
        &format!("{PW}the first hidden one, long\n"),
    );
    let mut c = d.command();
    c.args(["-t", "-c", &v, "--volume-type=hidden", "--size=1M"])
        .args(["--encryption=AES", "--hash=sha512", "--filesystem=none"])
        .args(["--pim=1", "--outer-pim", "1"]);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(60);
    t.expect(&format!("Outer volume password of {v}: "), wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    t.expect("Enter keyfile for the outer volume [none]: ", wait);
    t.type_line("");
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, INVALID_ARGUMENT, "{text}");
    assert!(text.ends_with(&crlf(SECOND_HIDDEN)), "{text}");
    assert!(
        !text.contains("Password for the new hidden volume"),
        "{text}"
    );
    // The first one still opens.
    d.ok(
        &["info", &v, "--pim", "1", "--password-stdin"],
        "the first hidden one, long\n",
    );
}

#[test]
fn usage_errors_say_what_the_user_left_out_or_mistyped() {
    let d = Daemon::start();
    let v = create(&d, "u.hc", "4M");
    // An option VeraCrypt's text mode does not know: said as such, not as
    // one of tcctl mount's.
    for line in [&["-t", "--bogus"][..], &["-t", "-c", &v, "--bogus=3"]] {
        let (code, msg) = d.fails(line, "");
        assert_eq!(code, USAGE, "{msg}");
        let bogus = line
            .last()
            .and_then(|w| w.split('=').next())
            .unwrap_or_default();
        assert_eq!(
            msg,
            format!(
                "tcctl: {bogus}: no such option of VeraCrypt's text mode here (`tcctl -t -h` \
                 lists the ones taken)\n"
            )
        );
    }
    // mount(8)'s -o: what tcctl takes instead.
    let (code, msg) = d.fails(&["mount", &v, "-o", "ro"], "");
    assert_eq!(
        (code, msg.as_str()),
        (
            USAGE,
            "tcctl: -o: mount(8)'s options are not taken here: -r (--readonly) mounts \
             read-only, --fs-options OPTIONS passes the filesystem's own, and -m takes \
             VeraCrypt's (ro, headerbak, ts, system)\n"
        )
    );
    // Two daemons named at once: refused, neither picked in silence
    // (d.fails names the daemon's socket).
    for bus in ["--system", "--session"] {
        let (code, msg) = d.fails(&[bus, "list"], "");
        assert_eq!(code, USAGE, "{msg}");
        assert!(
            msg.starts_with(&format!(
                "error: the argument '--socket <SOCKET>' cannot be used with '{bus}'"
            )),
            "{msg}"
        );
    }
    // A word too many is no unknown option.
    let kf = s(&d.path("kf3")).to_owned();
    let (code, msg) = d.fails(&["-t", "--create-keyfile", &kf, "kf4"], "");
    assert_eq!(code, USAGE, "{msg}");
    assert_eq!(
        msg,
        "tcctl: kf4: one argument more than VeraCrypt's text mode takes here (`tcctl -t -h` \
         shows its usage)\n"
    );
    // One left out, with no terminal to ask it on: said in VeraCrypt's
    // terms, not as tcctl's usage.
    for (line, lacks) in [
        (&["-t", "--backup-headers", &v][..], "the backup file"),
        (
            &["-t", &v, "--protection-pim=1", "--non-interactive"],
            "--protect-hidden, which its other options need",
        ),
    ] {
        let (code, msg) = d.fails(line, "");
        assert_eq!(code, USAGE, "{msg}");
        assert_eq!(
            msg,
            format!("tcctl: this VeraCrypt line lacks {lacks} (`tcctl -t -h` shows its usage)\n")
        );
    }
    // tcctl's own lines keep clap's words, naming the subcommand's usage.
    let (code, msg) = d.fails(&["mount", "--bogus"], "");
    assert_eq!(code, USAGE, "{msg}");
    assert!(msg.contains("Usage: tcctl mount"), "{msg}");
    // A restore without its backup: the file, or --embedded.
    for line in [
        &["restore-header", &v][..],
        &["--non-interactive", "-t", "--restore-headers", &v],
    ] {
        let (code, msg) = d.fails(line, "");
        assert_eq!(code, USAGE, "{line:?}: {msg}");
        assert!(
            msg.starts_with(
                "tcctl: restore-header needs the header backup file to restore from, or \
                 --embedded"
            ),
            "{line:?}: {msg}"
        );
    }
}

#[test]
fn bash_completes_mounted_volumes_and_favorites_by_name() {
    let d = Daemon::start();
    let v = create(&d, "m.hc", "4M");
    d.ok(
        &[&["mount", &v, "--filesystem", "none"][..], &OPEN].concat(),
        PW,
    );
    d.ok(&["favorites", "add", "work", &v], "");
    let dir = tempfile::tempdir().expect("tempdir");
    let made = Command::new(build_dir().join("tcctl"))
        .args(["generate-dist", s(dir.path())])
        .status()
        .expect("tcctl");
    assert!(made.success());
    let socket = d.socket().to_string_lossy().into_owned();
    // What Tab offers after `words`, the daemon named as a user names it.
    let complete = |words: &[&str]| {
        let mut all = vec!["tcctl", "--socket", &socket];
        all.extend(words);
        let script = format!(
            "source {}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE=\"${{COMP_WORDS[*]}}\"; \
             COMP_POINT=${{#COMP_LINE}}; _tcctl_text tcctl \"${{COMP_WORDS[-1]}}\" \
             \"${{COMP_WORDS[-2]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            dir.path().join("tcctl.bash").display(),
            all.iter()
                .map(|w| format!("'{w}'"))
                .collect::<Vec<_>>()
                .join(" "),
            all.len() - 1
        );
        let path = format!(
            "{}:{}",
            build_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = Command::new("bash")
            .args(["-c", &script])
            .env("PATH", path)
            .output()
            .expect("bash");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for words in [
        &["dismount", ""][..],
        &["close", ""],
        &["status", ""],
        &["-t", "-d", ""],
        &["-t", "--volume-properties", ""],
    ] {
        assert_eq!(complete(words), format!("{v}\n"), "{words:?}");
    }
    assert_eq!(
        complete(&["-t", "--auto-mount", ""]),
        "devices\nfavorites\n"
    );
    for words in [
        &["favorites", "mount", ""][..],
        &["favorites", "remove", "w"],
        &["favorites", "forget", ""],
    ] {
        assert_eq!(complete(words), "work\n", "{words:?}");
    }
    // Options stay clap's.
    assert!(
        complete(&["dismount", "--"])
            .lines()
            .any(|l| l == "--force")
    );
    // Nothing mounted: nothing offered but files.
    d.ok(&["dismount", "--all"], "");
    assert_eq!(complete(&["dismount", ""]), "\n");
}

#[test]
fn udisks_options_key_file_no_user_interaction_and_mount_options() {
    let d = Daemon::start();
    let v = create_ext4(&d, "k.hc");
    let dev = tcd_tests::loop_device::LoopDevice::attach(std::path::Path::new(&v));
    let passphrase = d.path("passphrase");
    std::fs::write(&passphrase, PW).expect("a passphrase file");
    // unlock's --key-file holds the passphrase; nothing is asked.
    let unlock = |file: &std::path::Path| {
        d.tcctl(
            &[
                "unlock",
                "-b",
                dev.path(),
                "--key-file",
                s(file),
                "--no-user-interaction",
                "--pim",
                "1",
                "--hash",
                "sha512",
            ],
            "",
        )
    };
    let out = unlock(&passphrase);
    assert!(out.status.success(), "{out:?}");
    let device = d.list()[0]["device"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(device.starts_with("/dev/loop"), "{device}");
    // mount -b's -o: the filesystem's options.
    let mnt = d.path("k-mnt");
    std::fs::create_dir(&mnt).expect("mount point");
    d.ok(&["mount", "-b", &device, s(&mnt), "-o", "noatime"], "");
    let mounted = std::fs::read_to_string("/proc/self/mounts").expect("mounts");
    let line = mounted
        .lines()
        .find(|l| l.split(' ').nth(1) == Some(s(&mnt)))
        .unwrap_or_default()
        .to_owned();
    assert!(line.contains("noatime"), "{line}");
    d.ok(&["unmount", "-b", &device], "");
    d.ok(&["lock", "-b", dev.path()], "");
    // Another passphrase in the file: the wrong password's exit code.
    let wrong = d.path("wrong");
    std::fs::write(&wrong, "not the passphrase at all\n").expect("a file");
    let out = unlock(&wrong);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // No such file: said before anything is searched.
    let out = unlock(&d.path("none"));
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("none"),
        "{out:?}"
    );
    assert_eq!(d.list().as_array().map(Vec::len), Some(0));
    // A pipe, as `--key-file <(pass show vol)` gives it: read as udisksctl
    // reads it.
    let script = format!(
        "exec {} --socket {} unlock -b {} --key-file <(printf '%s' '{}') \
         --no-user-interaction --pim 1 --hash sha512",
        tcd_tests::build_dir().join("tcctl").display(),
        d.socket().display(),
        dev.path(),
        PW.trim_end()
    );
    let out = Command::new("bash")
        .args(["-c", &script])
        .output()
        .expect("bash");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(d.list().as_array().map(Vec::len), Some(1));
    d.ok(&["lock", "-b", dev.path()], "");
    // udisksctl's words for the ways a password is given, on its line.
    let (code, msg) = d.fails(
        &[
            "unlock",
            "-b",
            dev.path(),
            "--pim",
            "1",
            "--no-user-interaction",
        ],
        "",
    );
    assert_eq!(code, USAGE, "{msg}");
    assert!(
        msg.contains(
            "a password is needed, and --no-user-interaction asks for none: give it with \
             --key-file FILE (its first line) or --password-stdin"
        ),
        "{msg}"
    );
    // With --password-stdin given and nothing on it, that option alone is
    // named.
    let (code, msg) = d.fails(
        &["unlock", "-b", dev.path(), "--password-stdin", "--pim", "1"],
        "",
    );
    assert_eq!(code, USAGE, "{msg}");
    assert!(
        msg.contains("--password-stdin") && !msg.contains("--key-file"),
        "{msg}"
    );
    let missing = s(&d.path("no-passphrase")).to_owned();
    let (code, msg) = d.fails(&["unlock", "-b", dev.path(), "--key-file", &missing], "");
    assert_eq!(
        (code, msg),
        (
            3,
            format!(
                "tcctl: --key-file (the passphrase file): {missing}: No such file or directory\n"
            )
        )
    );
}

#[test]
fn a_keyfile_only_volume_changes_its_keyfiles_with_nobody_to_ask() {
    let d = Daemon::start();
    let (key, new, newer) = (d.path("k"), d.path("k2"), d.path("k3"));
    for k in [&key, &new, &newer] {
        d.ok(&["create-keyfile", s(k)], "");
    }
    let v = keyfile_only_volume(&d, "kf.hc", &key);
    let fast = ["--pim", "1", "--hash", "sha512"];
    // As mount opens it: the keyfiles given alone, no password asked.
    let said = d.ok(
        &[
            &["--non-interactive", "change-password", &v, "-k", s(&key)][..],
            &["--new-keyfile", s(&new)],
            &fast,
        ]
        .concat(),
        "",
    );
    assert_eq!(
        said,
        format!(
            "{v}: keyfiles changed, password unchanged\n{v}: it now opens with 1 keyfile and no \
             password\n"
        )
    );
    let mounts = |k: &std::path::Path| {
        d.tcctl(
            &[
                &["--non-interactive", "mount", &v, "-k", s(k)][..],
                &fast,
                &["--filesystem", "none"],
            ]
            .concat(),
            "",
        )
        .status
        .success()
    };
    assert!(!mounts(&key), "the old keyfile still opens it");
    assert!(mounts(&new), "the new keyfile does not open it");
    d.ok(&["dismount", &v], "");
    // VeraCrypt's spelling of the same.
    d.ok(
        &[
            "-t",
            "-C",
            &v,
            "--non-interactive",
            "-k",
            s(&new),
            &format!("--new-keyfiles={}", s(&newer)),
            "--pim=1",
            "--new-pim=1",
            "--hash=sha512",
        ],
        "",
    );
    assert!(
        mounts(&newer),
        "the keyfile given by -t -C does not open it"
    );
    d.ok(&["dismount", &v], "");
    // A new password is still needed where no new keyfile opens it.
    let (code, msg) = d.fails(
        &[
            &["--non-interactive", "change-password", &v, "-k", s(&newer)][..],
            &fast,
        ]
        .concat(),
        "",
    );
    assert_eq!(
        (code, msg.as_str()),
        (
            USAGE,
            "tcctl: a new password is needed, and --non-interactive asks for none: give the \
             current and new passwords on --password-stdin, a line each, or give --new-keyfile \
             for the volume to open with keyfiles alone (without it, the new header takes no \
             keyfile)\n"
        )
    );
    // In VeraCrypt's words on its line.
    let (code, msg) = d.fails(
        &[
            "-t",
            "-C",
            &v,
            "--non-interactive",
            "-k",
            s(&newer),
            "--pim=1",
            "--new-pim=1",
            "--hash=sha512",
        ],
        "",
    );
    assert_eq!(code, USAGE, "{msg}");
    assert!(
        msg.contains(" on --stdin, a line each, or give --new-keyfiles for the volume"),
        "{msg}"
    );
    assert!(mounts(&newer), "a refused change changed the volume");
    d.ok(&["dismount", &v], "");
    // An empty keyfile on standard input is said as an empty file is.
    let (code, msg) = d.fails(
        &[
            &["--non-interactive", "info", &v, "-k", "-", "-k", s(&newer)][..],
            &fast,
        ]
        .concat(),
        "",
    );
    assert_eq!(
        (code, msg.as_str()),
        (
            INVALID_ARGUMENT,
            "tcctl: keyfile - (standard input): nothing was piped in (a keyfile holds at least \
             one byte)\n"
        )
    );
}

#[test]
fn header_commands_say_what_they_need_and_where_they_searched() {
    let d = Daemon::start();
    // backup-header needs its file: the usage line says so.
    let out = d.tcctl(&["backup-header", "--help"], "");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("Usage: tcctl backup-header [OPTIONS] <VOLUME> <BACKUP>\n")
            && help.lines().any(|l| l.trim_start().starts_with("<BACKUP>"))
            && help.contains("The backup file to make")
            && !help.contains("[BACKUP]")
            && help
                .starts_with("Save both header slots (128 KiB) to a new file (asks the password)"),
        "{help}"
    );
    let v = create(&d, "e.hc", "4M");
    let (code, msg) = d.fails(&["backup-header", &v], "");
    assert_eq!(code, USAGE, "{msg}");
    assert!(
        msg.contains("<BACKUP>") && !msg.contains("[BACKUP]"),
        "{msg}"
    );
    // A wrong password for the embedded backup says only it was searched.
    let (code, msg) = d.fails(
        &[
            &["restore-header", &v, "--embedded", "--batch-mode"][..],
            &OPEN,
        ]
        .concat(),
        "not the password of this volume\n",
    );
    assert_eq!(code, 2, "{msg}");
    assert!(
        msg.contains(
            "; only the backup headers inside the volume were searched, not its primary ones \
             (`tcctl dump` says whether those open)"
        ),
        "{msg}"
    );
    d.ok(&[&["info", &v][..], &OPEN].concat(), PW);
    // A TrueCrypt volume's failed protection names no PIM.
    let tc = s(&d.path("tc.hc")).to_owned();
    d.ok(
        &[
            "create",
            &tc,
            "--size",
            "4M",
            "--truecrypt",
            "--hash",
            "sha512",
            "--filesystem",
            "none",
            "--password-stdin",
        ],
        PW,
    );
    let (code, msg) = d.fails(
        &[
            "mount",
            &tc,
            "--truecrypt",
            "--hash",
            "sha512",
            "--protect-hidden",
            "--filesystem",
            "none",
            "--password-stdin",
        ],
        &format!("{PW}no hidden volume has this password\n"),
    );
    assert_eq!(code, 2, "{msg}");
    assert!(
        msg.ends_with(
            "; its keyfiles are --protect-hidden-keyfile; its header is searched over every \
             hash and encryption TrueCrypt has)\n"
        ) && !msg.contains("PIM"),
        "{msg}"
    );
    assert_eq!(d.list().as_array().map(Vec::len), Some(0), "{}", d.list());
    // -t said twice is still VeraCrypt's text mode, which lists nothing
    // as VeraCrypt does.
    for twice in [["-t", "--text", "-l"], ["-t", "-t", "-l"]] {
        let (code, msg) = d.fails(&twice, "");
        assert_eq!((code, msg.as_str()), (1, "tcctl: No volumes mounted.\n"));
    }
}

/// A yes-or-no question answers neither way to what is neither: asked
/// again, as VeraCrypt asks it. Ctrl-D at any question after a wrong
/// password ends with that password's exit code, and says so.
#[test]
fn text_mode_asks_an_unclear_answer_again_and_ctrl_d_after_a_wrong_password_says_why() {
    let d = Daemon::start();
    let v = create(&d, "y.hc", "4M");
    let mut c = d.command();
    c.args([
        "-t",
        "--pim",
        "1",
        "--hash",
        "sha512",
        "--filesystem",
        "none",
    ]);
    c.arg(&v);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(30);
    let protect = "Protect hidden volume (if any)? (y=Yes/n=No) [No]: ";
    for (question, answer) in [
        (
            format!("Enter password for {v}: "),
            "not the password, though as long",
        ),
        ("Enter keyfile [none]: ".into(), ""),
        (protect.into(), "maybe"),
        (format!("tcctl: type y or n (Enter: No)\r\n{protect}"), "n"),
        (format!("Enter password for {v}: "), PW.trim_end()),
    ] {
        t.answer(&question, answer, wait);
    }
    t.expect("Enter keyfile [none]: ", wait);
    gives_up_after_a_wrong_password(t, &v, Duration::from_secs(60));
    assert_eq!(d.list(), serde_json::json!([]));
}

/// Ctrl-D typed at `t`'s question after a wrong password for `v`: the
/// wrong password's exit code, and why. What the terminal showed.
fn gives_up_after_a_wrong_password(mut t: Pty, v: &str, limit: Duration) -> String {
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("\u{4}");
    let (code, text) = t.finish(limit);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.ends_with(&crlf(&format!(
            "tcctl: {v}: input ended before the volume opened: the last password tried was \
             wrong\n"
        ))),
        "{text}"
    );
    text
}

/// What a udisksctl, VeraCrypt or cryptsetup user names by habit is
/// answered in its terms: a keyfile given as unlock's passphrase file, a
/// mount point given to expand, an attached device with no filesystem
/// given to mount -b.
#[test]
fn habits_named_by_what_they_meant() {
    let d = Daemon::start();
    let key = d.path("key");
    d.ok(&["create-keyfile", s(&key)], "");
    // Random bytes, whose first line is text by chance once in a few
    // hundred keyfiles (a newline first): this one's starts with a byte
    // no UTF-8 text does.
    let mut bytes = std::fs::read(&key).expect("keyfile");
    bytes[0] = 0xff;
    std::fs::write(&key, &bytes).expect("keyfile");
    let v = create(&d, "u.hc", "4M");
    let (code, msg) = d.fails(
        &[
            &[
                "--non-interactive",
                "unlock",
                "-b",
                &v,
                "--key-file",
                s(&key),
            ][..],
            &["--pim", "1", "--hash", "sha512"],
        ]
        .concat(),
        "",
    );
    assert_eq!(
        (code, msg),
        (
            INVALID_ARGUMENT,
            format!(
                "tcctl: --key-file {0}: its first line is no passphrase (not text): on unlock, \
                 --key-file is udisksctl's passphrase file; a TrueCrypt or VeraCrypt keyfile is \
                 given with -k {0}\n",
                s(&key)
            )
        )
    );
    // Attached with no filesystem: mount -b says the device is there.
    d.ok(&[&["unlock", "-b", &v][..], &OPEN].concat(), PW);
    let device = d.list()[0]["device"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let (code, msg) = d.fails(&["mount", "-b", &device], "");
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert!(
        msg.ends_with(&format!(
            ": its block device {device} is there to use as it is (`tcctl dismount {device}` \
             detaches it)\n"
        )) && !msg.contains("\"none\""),
        "{msg}"
    );
    d.ok(&["dismount", &v], "");
    // A mounted volume's mount point given to expand: the volume named.
    let e = create_ext4(&d, "e.hc");
    let mnt = d.path("e-mnt");
    std::fs::create_dir(&mnt).expect("mount point");
    d.ok(&[&["mount", &e, s(&mnt)][..], &OPEN].concat(), PW);
    for args in [
        vec!["expand", s(&mnt), "--add", "1M"],
        vec!["backup-header", s(&mnt), "b"],
    ] {
        let (code, msg) = d.fails(&args, "");
        assert_eq!(
            (code, msg),
            (
                INVALID_ARGUMENT,
                format!(
                    "tcctl: {} is the mount point of the volume {e}: name the volume itself \
                     ({e})\n",
                    s(&mnt)
                )
            ),
            "{args:?}"
        );
    }
    // umount's -a is dismount's and close's too.
    assert_eq!(d.ok(&["dismount", "-a"], ""), "1 volume dismounted\n");
}

/// `chattr +i` on a path, undone when dropped (a temporary folder holding
/// an immutable file could not be removed).
struct Immutable(std::path::PathBuf);

impl Immutable {
    fn set(path: &std::path::Path) -> Immutable {
        let st = Command::new("chattr")
            .arg("+i")
            .arg(path)
            .status()
            .expect("chattr (e2fsprogs) is needed");
        assert!(st.success(), "chattr +i {}", path.display());
        Immutable(path.to_path_buf())
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        let _ = Command::new("chattr").arg("-i").arg(&self.0).status();
    }
}

/// A container the user may read but not write mounts read-only, said,
/// as VeraCrypt mounts it; a file too small for any volume is said so by
/// name, before any filesystem's least.
#[test]
fn an_unwritable_container_mounts_read_only_and_a_tiny_file_is_said_too_small() {
    let d = Daemon::start();
    let v = create(&d, "i.hc", "4M");
    let _frozen = Immutable::set(std::path::Path::new(&v));
    let out = d.tcctl(
        &[&["mount", &v, "--filesystem", "none"][..], &OPEN].concat(),
        PW,
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "tcctl: note: {v} cannot be written (permission denied): it is mounted read-only\n"
        )
    );
    assert_eq!(d.list()[0]["read_only"], true, "{}", d.list());
    d.ok(&["dismount", &v], "");
    // Read-write asked in so many words is not given up on.
    let (code, msg) = d.fails(
        &[
            &["mount", &v, "--filesystem", "none", "--read-write"][..],
            &OPEN,
        ]
        .concat(),
        PW,
    );
    assert_eq!(
        (code, msg),
        (
            6,
            format!(
                "tcctl: {v} cannot be written (permission denied): --read-write cannot be had \
                 (without it, the volume mounts read-only)\n"
            )
        )
    );
    assert_eq!(d.list(), serde_json::json!([]));
    // What must write it still says it cannot.
    let (code, msg) = d.fails(&[&["change-password", &v][..], &OPEN].concat(), PW);
    assert_eq!(
        (code, msg),
        (
            6,
            format!(
                "tcctl: {v}: permission denied (an immutable or append-only file: lsattr(1) \
                 shows its flags, chattr(1) lifts them)\n"
            )
        )
    );
    // A file of 100 KiB made into a volume at its own size.
    let tiny = d.path("tiny");
    std::fs::write(&tiny, vec![0u8; 100 << 10]).expect("a small file");
    for fs in ["ext4", "fat", "none"] {
        let (code, msg) = d.fails(
            &[
                "create",
                s(&tiny),
                "--filesystem",
                fs,
                "--pim",
                "1",
                "--password-stdin",
                "-q",
            ],
            PW,
        );
        assert_eq!(
            (code, msg),
            (
                INVALID_ARGUMENT,
                format!(
                    "tcctl: {}: the file holds 102400 bytes, and a volume takes at least 288 KiB \
                     (its headers and 32 KiB of data): give --size to make it larger\n",
                    s(&tiny)
                )
            ),
            "{fs}"
        );
    }
    assert_eq!(std::fs::read(&tiny).expect("read").len(), 100 << 10);
}

/// udisksctl's lock of a device someone holds, forced: not said locked
/// while its key is still there; a call the daemon never answers, because
/// it went away, is said as a daemon not reached (9), not as a failure.
#[test]
fn a_forced_lock_of_a_held_device_is_not_said_locked_and_a_vanished_daemon_is_unreachable() {
    let mut d = Daemon::start();
    let v = create(&d, "l.hc", "4M");
    d.ok(&[&["unlock", "-b", &v][..], &OPEN].concat(), PW);
    let device = d.list()[0]["device"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let held = std::fs::File::open(&device).expect("hold the device");
    let said = d.ok(&["lock", "-b", &device, "--force"], "");
    assert!(
        said.starts_with(&format!(
            "{v} is detaching, not locked yet: {device} is still in use"
        )) && said.ends_with(", and the volume and its key go when it is let go\n"),
        "{said}"
    );
    assert_eq!(d.list()[0]["state"], "detaching", "{}", d.list());
    drop(held);
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while d.list().as_array().is_some_and(|a| !a.is_empty()) {
        assert!(std::time::Instant::now() < deadline, "{}", d.list());
        std::thread::sleep(Duration::from_millis(200));
    }
    // A full search (no PIM, hash or format) under way when the daemon
    // is killed.
    let mut c = d.command();
    c.args(["info", &v, "--password-stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().expect("tcctl");
    std::io::Write::write_all(
        child.stdin.as_mut().expect("stdin"),
        b"not the password, but as long as one\n",
    )
    .expect("the password");
    std::thread::sleep(Duration::from_secs(3));
    d.kill();
    let out = child.wait_with_output().expect("tcctl ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(9), "{err}");
    assert!(
        err.lines().last().is_some_and(|l| l
            .starts_with("tcctl: the daemon went away before it answered (")
            && l.ends_with("): `tcctl list` shows what it holds once it runs again")),
        "{err}"
    );
}

/// The session's watcher hears the daemon's stop dismount the user's
/// volumes, waits for the daemon, and watches it again once it is back.
#[test]
fn watch_reports_the_stops_dismounts_and_outlives_a_restart() {
    let mut d = Daemon::start();
    let v = create(&d, "w.hc", "4M");
    d.ok(
        &[&["mount", &v, "--filesystem", "none"][..], &OPEN].concat(),
        PW,
    );
    let mut c = d.command();
    c.arg("watch")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut watch = c.spawn().expect("tcctl watch");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    for (pipe, tag) in [
        (
            Box::new(watch.stdout.take().expect("stdout")) as Box<dyn std::io::Read + Send>,
            "out",
        ),
        (Box::new(watch.stderr.take().expect("stderr")), "err"),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in std::io::BufRead::lines(std::io::BufReader::new(pipe)).map_while(Result::ok)
            {
                let _ = tx.send(format!("{tag}: {line}"));
            }
        });
    }
    let next = |what: &str| {
        rx.recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("watch said nothing of {what}"))
    };
    // Subscribed before the stop: give it a moment to connect.
    std::thread::sleep(Duration::from_secs(2));
    assert!(d.stop().success());
    let mut said = vec![next("the stop's dismount"), next("the daemon's going")];
    said.sort();
    assert_eq!(
        said,
        [
            "err: tcctl: the daemon went away: watching again once it is back".to_owned(),
            format!("out: Dismounted {v} (daemon stopping)"),
        ]
    );
    d.spawn();
    assert_eq!(
        next("the daemon's return"),
        "err: tcctl: the daemon is back"
    );
    assert_eq!(watch.try_wait().expect("watch"), None, "watch ended");
    let _ = watch.kill();
    let _ = watch.wait();
}

/// A new password of 70 bytes taken, with the warning that VeraCrypt
/// before 1.26 cannot open the volume.
fn warned_of_seventy_bytes(out: &std::process::Output) {
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "tcctl: warning: a password of 70 bytes opens the volume in VeraCrypt 1.26 and later \
             only: earlier versions take 64 bytes at most\n"
        ),
        "{out:?}"
    );
}

/// A password past the format's limit is refused before any file is
/// made; one only VeraCrypt 1.26 and later open is warned of.
#[test]
fn a_long_password_is_judged_before_the_file_is_made() {
    let d = Daemon::start();
    let v = s(&d.path("long.hc")).to_owned();
    let make = |pw: &str| {
        d.tcctl(
            &[
                &["create", &v, "--size", "4M", "--filesystem", "none"][..],
                &OPEN,
            ]
            .concat(),
            &format!("{pw}\n"),
        )
    };
    let out = make(&"a".repeat(129));
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned()
        ),
        (
            Some(INVALID_ARGUMENT),
            "tcctl: password of 129 bytes is longer than the 128 bytes VeraCrypt allows\n".into()
        )
    );
    assert!(!std::path::Path::new(&v).exists(), "a file was made");
    warned_of_seventy_bytes(&make(&"a".repeat(70)));
    d.ok(
        &[&["info", &v][..], &OPEN].concat(),
        &format!("{}\n", "a".repeat(70)),
    );
    // Over an existing file, a password from standard input is refused
    // before the overwrite question, and the file is left as it was.
    let before = std::fs::read(&v).expect("read");
    let out = make(&"b".repeat(129));
    assert_eq!(out.status.code(), Some(INVALID_ARGUMENT), "{out:?}");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("YES"),
        "{out:?}"
    );
    assert!(std::fs::read(&v).expect("read") == before, "overwritten");
}

/// A new password at `change-password` is judged as at `create`: past the
/// new header's limit refused with the volume unchanged, one only
/// VeraCrypt 1.26 and later open warned of.
#[test]
fn change_password_judges_the_new_passwords_length() {
    let d = Daemon::start();
    let v = create(&d, "c.hc", "4M");
    let change = |new: &str, more: &[&str]| {
        d.tcctl(
            &[&["change-password", &v][..], &OPEN, more].concat(),
            &format!("{}{new}\n", PW),
        )
    };
    warned_of_seventy_bytes(&change(&"a".repeat(70), &["--new-pim", "1"]));
    let seventy = format!("{}\n", "a".repeat(70));
    let refused = |new: &str, more: &[&str]| {
        let out = d.tcctl(
            &[&["change-password", &v][..], &OPEN, more].concat(),
            &format!("{seventy}{new}\n"),
        );
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    assert_eq!(
        refused(&"b".repeat(129), &[]),
        (
            Some(INVALID_ARGUMENT),
            "tcctl: password of 129 bytes is longer than the 128 bytes VeraCrypt allows\n".into()
        )
    );
    let (code, err) = refused(&"b".repeat(65), &["--to", "truecrypt", "-q"]);
    assert_eq!(code, Some(INVALID_ARGUMENT), "{err}");
    assert!(
        err.ends_with("tcctl: password of 65 bytes is longer than the 64 bytes TrueCrypt allows\n"),
        "{err}"
    );
    // Still the 70-byte password's VeraCrypt volume.
    let info = d.ok(&[&["info", &v, "--json"][..], &OPEN].concat(), &seventy);
    assert!(info.contains("\"VeraCrypt\""), "{info}");
}

/// On a terminal, a new password past the limit is said at once and
/// another asked for, before the repeat, as a short one is.
#[test]
fn a_typed_password_past_the_limit_is_asked_again() {
    let d = Daemon::start();
    let v = s(&d.path("typed.hc")).to_owned();
    let mut c = d.command();
    c.args(["create", &v, "--size", "4M", "--filesystem", "none"]);
    c.args(["--pim", "1", "--hash", "sha512"]);
    let mut t = Pty::spawn(c, None);
    let wait = Duration::from_secs(20);
    t.expect(&format!("Password for the new volume {v}: "), wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(&"a".repeat(129));
    t.expect(
        "tcctl: password of 129 bytes is longer than the 128 bytes VeraCrypt allows: type another",
        wait,
    );
    t.expect_times(&format!("Password for the new volume {v}: "), 2, wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    t.answer("Repeat", PW.trim_end(), wait);
    let (code, text) = t.finish(Duration::from_secs(60));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains(&format!("{v} created")), "{text}");
    // change-password asks again too, with no second search of the
    // current password.
    let mut c = d.command();
    c.args(["change-password", &v, "--pim", "1", "--hash", "sha512"]);
    let mut t = Pty::spawn(c, None);
    t.expect(&format!("Current password for {v}: "), wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    t.answer("New password: ", &"b".repeat(129), wait);
    t.expect(
        "tcctl: password of 129 bytes is longer than the 128 bytes VeraCrypt allows: type another",
        wait,
    );
    t.expect_times("New password: ", 2, wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("another password of twenty");
    t.answer(
        "Repeat the new password: ",
        "another password of twenty",
        wait,
    );
    let (code, text) = t.finish(Duration::from_secs(60));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains(&format!("{v}: password changed")), "{text}");
    d.ok(
        &[&["info", &v][..], &OPEN].concat(),
        "another password of twenty\n",
    );
}

/// A header backup given as the volume opens (its header is the
/// volume's) but holds no data: said so, with the way to read it, for
/// `info`, `tcryptDump` and `mount` alike.
#[test]
fn a_header_backup_given_as_the_volume_names_header() {
    let d = Daemon::start();
    let v = create(&d, "b.hc", "4M");
    let backup = s(&d.path("b.hdr")).to_owned();
    d.ok(&[&["backup-header", &v, &backup][..], &OPEN].concat(), PW);
    let said = format!(
        "tcctl: the header's data area (3932160 bytes at 131072) does not fit the 131072-byte \
         host: a host of this size is a header backup, which opens only as the header of its \
         volume: name its volume, and give {backup} with --header (as cryptsetup takes it)\n"
    );
    for args in [
        &["info", &backup][..],
        &["tcryptDump", &backup],
        &["mount", &backup, "--filesystem", "none"],
    ] {
        assert_eq!(
            d.fails(&[args, &OPEN].concat(), PW),
            (INVALID_ARGUMENT, said.clone()),
            "{args:?}"
        );
    }
    let info = d.ok(
        &[&["info", &v, "--header", &backup][..], &OPEN].concat(),
        PW,
    );
    assert!(info.contains("VeraCrypt"), "{info}");
    assert_eq!(d.list(), serde_json::json!([]));
}

/// A folder given as cryptsetup's `-d` (whose --key-file takes one file)
/// is taken as VeraCrypt takes one, and said, with how many files; the
/// same folder on VeraCrypt's line, its own rule, is not remarked on.
#[test]
fn a_keyfile_folder_on_a_cryptsetup_line_is_said() {
    let d = Daemon::start();
    let folder = d.path("keys");
    std::fs::create_dir(&folder).expect("mkdir");
    for name in ["one", "two"] {
        d.ok(&["create-keyfile", s(&folder.join(name))], "");
    }
    let v = create_with(&d, "k.hc", &["--keyfile", s(&folder)]);
    let out = d.tcctl(
        &[
            "tcryptOpen",
            "--test-passphrase",
            "-d",
            s(&folder),
            &v,
            "--veracrypt-pim",
            "1",
            "--hash",
            "sha512",
        ],
        PW,
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "tcctl: note: {} is a folder: the keyfiles are the files in it (2 files), as \
             VeraCrypt takes a folder (cryptsetup's --key-file takes one file)\n",
            s(&folder)
        )
    );
    let out = d.tcctl(
        &[
            "-t",
            "--test",
            "--non-interactive",
            "--stdin",
            "--pim=1",
            "--hash=sha512",
            "-k",
            s(&folder),
            &v,
        ],
        PW,
    );
    assert!(out.status.success(), "{out:?}");
    assert!(out.stderr.is_empty(), "{out:?}");
    // A favorite's keyfiles are listed as named: a folder as a folder.
    let one = s(&d.path("one")).to_owned();
    d.ok(&["create-keyfile", &one], "");
    d.ok(&["favorites", "add", "kf", &v, "-k", s(&folder)], "");
    d.ok(
        &["favorites", "add", "both", &v, "-k", &one, "-k", s(&folder)],
        "",
    );
    let listed = d.ok(&["favorites", "list"], "");
    let row = |name: &str| {
        listed
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(row("kf ").ends_with("  1 keyfile folder"), "{listed}");
    assert!(
        row("both ").ends_with("  1 keyfile and 1 keyfile folder"),
        "{listed}"
    );
}

/// `mount -b DEVICE --read-write` of a device attached read-only is
/// refused with the way to have it read-write, as the opposite is: the
/// mode was chosen at the attach, and is not dropped without a word.
#[test]
fn read_write_asked_of_a_read_only_attachment_is_refused_saying_how() {
    let d = Daemon::start();
    let v = create_ext4(&d, "ro.hc");
    let device = attached(&d, &v, &["--readonly"]);
    assert!(device.starts_with("/dev/loop"), "{device}");
    let (code, msg) = d.fails(&["mount", "-b", &device, "--read-write"], "");
    assert_eq!(
        (code, msg),
        (
            INVALID_ARGUMENT,
            format!(
                "tcctl: {device} is the device of {v}, attached read-only: `tcctl dismount {v}` \
                 and `tcctl mount --read-write {v}` mount it read-write\n"
            )
        )
    );
    let row = d.list()[0].clone();
    assert_eq!(
        (row["read_only"].clone(), row["mount_point"].clone()),
        (serde_json::json!(true), serde_json::Value::Null),
        "{row}"
    );
    d.ok(&["dismount", &v], "");
}

/// Names that are not what they seem are said for what they are: a word
/// not in UTF-8 (refused by every command alike, before anything is
/// made), a file's name with a trailing `/`, a symbolic link that leads
/// back to itself, a folder given for a backup's new file, a folder given
/// as the daemon's socket, an empty passphrase file.
#[test]
fn odd_names_are_said_for_what_they_are() {
    use std::os::unix::ffi::OsStrExt;
    let d = Daemon::start();
    let latin1 = d.path("").join(std::ffi::OsStr::from_bytes(b"caf\xe9.hc"));
    for args in [
        vec![std::ffi::OsStr::new("create"), latin1.as_os_str()],
        vec![std::ffi::OsStr::new("status"), latin1.as_os_str()],
    ] {
        let out = d.command().args(&args).output().expect("tcctl");
        assert_eq!(out.status.code(), Some(USAGE), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(
                "\\xE9.hc\" is not valid UTF-8: tcd names volumes, devices, mount points and \
                 keyfiles in UTF-8"
            ),
            "{out:?}"
        );
    }
    assert!(!latin1.exists(), "a file was made");
    // `v.hc/` names a folder: refused, not read as v.hc.
    let v = create(&d, "v.hc", "4M");
    let slashed = format!("{v}/");
    let said = format!(
        "tcctl: {slashed}: not a folder (a name ending in / names a folder; a file is named \
         without it)\n"
    );
    let (code, msg) = d.fails(&[&["mount", &slashed][..], &OPEN].concat(), PW);
    assert_eq!((code, msg), (INVALID_ARGUMENT, said));
    let new = format!("{}/", s(&d.path("new.hc")));
    let (code, msg) = d.fails(&[&["create", &new, "--size", "4M"][..], &FAST].concat(), PW);
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert!(!d.path("new.hc").exists(), "new.hc was made");
    // A link that leads back to itself.
    let loopy = d.path("loopy");
    std::os::unix::fs::symlink(&loopy, &loopy).expect("symlink");
    let (code, msg) = d.fails(&[&["info", s(&loopy)][..], &OPEN].concat(), PW);
    assert_eq!(
        (code, msg),
        (
            INVALID_ARGUMENT,
            format!(
                "tcctl: {}: too many levels of symbolic links (a link that leads back to \
                 itself)\n",
                s(&loopy)
            )
        )
    );
    let (code, msg) = d.fails(&["status", s(&loopy)], "");
    assert_eq!(code, 3, "{msg}");
    assert!(
        msg.contains("is a symbolic link that leads to no file"),
        "{msg}"
    );
    // A folder given for the backup's new file, with its slash or not.
    let folder = d.path("backups");
    std::fs::create_dir(&folder).expect("mkdir");
    for given in [s(&folder).to_owned(), format!("{}/", s(&folder))] {
        let (code, msg) = d.fails(&[&["backup-header", &v, &given][..], &OPEN].concat(), PW);
        assert_eq!(code, INVALID_ARGUMENT, "{msg}");
        assert!(
            msg.contains("is a folder: a header backup is written to a new file"),
            "{msg}"
        );
    }
    let (code, msg) = d.fails(&["create-keyfile", &format!("{}/", s(&folder))], "");
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert!(msg.ends_with("is a folder: name a file\n"), "{msg}");
    // A folder as the daemon's socket.
    let out = Command::new(build_dir().join("tcctl"))
        .args(["--socket", s(&folder), "list"])
        .output()
        .expect("tcctl");
    assert_eq!(out.status.code(), Some(9), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).ends_with("it is a folder, not the daemon's socket\n"),
        "{out:?}"
    );
    // udisksctl's --key-file, empty: the file is named, not standard input.
    let empty = d.path("empty");
    std::fs::write(&empty, b"").expect("write");
    let (code, msg) = d.fails(&["unlock", "-b", &v, "--key-file", s(&empty)], "");
    assert_eq!(code, USAGE, "{msg}");
    assert!(
        msg.contains(&format!(
            "--key-file {}: the passphrase file is empty",
            s(&empty)
        )),
        "{msg}"
    );
}

/// A new password outside ASCII is taken and warned of, as VeraCrypt
/// warns: another system or keyboard may not type the same bytes.
#[test]
fn a_new_password_outside_ascii_is_warned_of() {
    let d = Daemon::start();
    let v = s(&d.path("u.hc")).to_owned();
    let out = d.tcctl(
        &[&["create", &v, "--size", "4M"][..], &FAST].concat(),
        "pässwörd of twenty and more\n",
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "tcctl: warning: the password has characters outside ASCII: another system or \
             keyboard layout"
        ),
        "{out:?}"
    );
    d.ok(
        &[&["info", &v][..], &OPEN].concat(),
        "pässwörd of twenty and more\n",
    );
    // Back to ASCII: no warning.
    let out = d.tcctl(
        &[&["change-password", &v][..], &OPEN].concat(),
        &format!("pässwörd of twenty and more\n{PW}"),
    );
    assert!(out.status.success(), "{out:?}");
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("outside ASCII"),
        "{out:?}"
    );
}

/// A container renamed while mounted: mounting it by its new name is
/// "already mounted", said with the name and device it is mounted as, by
/// which it is dismounted.
#[test]
fn a_container_renamed_while_mounted_is_said_mounted_as_its_old_name() {
    let d = Daemon::start();
    let v = create(&d, "before.hc", "4M");
    let device = attached(&d, &v, &[]);
    let after = s(&d.path("after.hc")).to_owned();
    std::fs::rename(&v, &after).expect("rename");
    let (code, msg) = d.fails(
        &[&["mount", &after, "--filesystem", "none"][..], &OPEN].concat(),
        PW,
    );
    assert_eq!(
        (code, msg),
        (
            4,
            format!("tcctl: {after} (as {v}, {device}) is already mounted\n")
        )
    );
    d.ok(&["dismount", &device], "");
    assert_eq!(d.list(), serde_json::json!([]));
}

/// Ctrl-C and Ctrl-D at a question are answers, as at a password
/// prompt: said, with the prompt's exit codes (130, 10), and nothing
/// done; what is typed is shown and Backspace edits it.
#[test]
fn ctrl_c_at_a_question_is_said_as_at_a_password_prompt() {
    let d = Daemon::start();
    let v = create(&d, "q.hc", "4M");
    let before = std::fs::read(&v).expect("read");
    let wait = Duration::from_secs(20);
    for (key, said, exit) in [("\u{3}", "interrupted", 130), ("\u{4}", "end of input", 10)] {
        let mut c = d.command();
        c.args(["create", &v, "--size", "4M", "--pim", "1"]);
        let mut t = Pty::spawn(c, None);
        t.expect("(Type 'YES' in capital letters): ", wait);
        t.type_line(key);
        let (code, text) = t.finish(wait);
        assert_eq!(code, exit, "{said}: {text}");
        assert!(
            text.contains(&format!("tcctl: no answer given ({said})")),
            "{text}"
        );
    }
    // Typed, shown, and edited: "YEX", Backspace, "S" is YES.
    let mut c = d.command();
    c.args(["create", &v, "--size", "4M", "--filesystem", "none"]);
    c.args(["--pim", "1", "--hash", "sha512"]);
    let mut t = Pty::spawn(c, None);
    t.expect("(Type 'YES' in capital letters): ", wait);
    t.type_line("YEX\u{7f}S");
    t.expect("YES", wait);
    t.expect(&format!("Password for the new volume {v}: "), wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("\u{3}");
    let (code, text) = t.finish(wait);
    assert_eq!(code, 130, "{text}");
    assert!(std::fs::read(&v).expect("read") == before, "changed");
}

/// A mount made for a test, taken down on drop.
struct Mounted(std::path::PathBuf);

impl Mounted {
    fn new(args: &[&str], at: &std::path::Path) -> Mounted {
        std::fs::create_dir_all(at).expect("mkdir");
        let st = Command::new("mount")
            .args(args)
            .arg(at)
            .status()
            .expect("mount");
        assert!(st.success(), "mount {args:?}");
        Mounted(at.to_path_buf())
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Where nothing can be written, `create` says so as the other commands
/// do (exit 6); a header backup with no room is said before the password,
/// naming the file.
#[test]
fn a_read_only_or_full_filesystem_is_said_by_every_command_alike() {
    let d = Daemon::start();
    let ro = d.path("ro");
    let _ro = Mounted::new(&["-t", "tmpfs", "-o", "ro,size=64m", "tmpfs"], &ro);
    let n = s(&ro.join("n.hc")).to_owned();
    let (code, msg) = d.fails(&[&["create", &n, "--size", "4M"][..], &FAST].concat(), PW);
    assert_eq!(
        (code, msg),
        (
            6,
            format!("tcctl: {n}: is on a read-only file system, where nothing can change it\n")
        )
    );
    // Full and read-only: read-only is what is said.
    let ro_small = d.path("ro-small");
    let _ro_small = Mounted::new(&["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs"], &ro_small);
    let m = s(&ro_small.join("m.hc")).to_owned();
    let (code, msg) = d.fails(&[&["create", &m, "--size", "8M"][..], &FAST].concat(), PW);
    assert_eq!(code, 6, "{msg}");
    assert!(msg.contains("is on a read-only file system"), "{msg}");
    let v = create(&d, "b.hc", "4M");
    let tiny = d.path("tiny");
    let _tiny = Mounted::new(&["-t", "tmpfs", "-o", "size=64k", "tmpfs"], &tiny);
    let b = s(&tiny.join("b.hdr")).to_owned();
    let (code, msg) = d.fails(&[&["backup-header", &v, &b][..], &OPEN].concat(), "");
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert!(
        msg.starts_with(&format!(
            "tcctl: {b}: not enough free space for the header backup: 131072 bytes are needed"
        )),
        "{msg}"
    );
    assert!(!tiny.join("b.hdr").exists(), "a file was left");
}
