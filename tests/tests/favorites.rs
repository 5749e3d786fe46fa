//! Favorites end to end through the real daemon and `tcctl`: the kernel
//! keyring keeping a password (and a wrong one falling back to asking),
//! system favorites mounted at start and when their partition appears
//! (kernel uevents), dismounted when it goes, and automatic dismounts on
//! logind's signals (from a stand-in logind on a private bus) and after
//! idle time.
//!
//! Needs root, /dev/fuse, losetup, partx, sfdisk, blkid, keyctl,
//! mkfs.ext4, dbus-daemon.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tcd_tests::daemon::{BusDaemon, Daemon};
use tcd_tests::loop_device::{LoopDevice, gpt_image};
use tcd_tests::s;
use tcd_tests::{build_dir, require_root_and_fuse, require_tool};

const PW: &str = "favorite words\n";

/// Polls `f` until it holds, for up to 20 s.
fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting: {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn mounted_hosts(d: &Daemon) -> Vec<String> {
    d.list()
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| r["volume"].as_str().expect("volume").to_owned())
        .collect()
}

/// An ext4 volume (of 24 MiB in a new file; a device's size), SHA-512
/// only (fast to open).
fn create(d: &Daemon, path: &Path, password: &str) {
    // A device's contents are overwritten: no question asked.
    let size: &[&str] = if path.starts_with("/dev") {
        &["--batch-mode"]
    } else {
        &["--size", "24M"]
    };
    d.ok(
        &[
            &["create", s(path)],
            size,
            &[
                "--hash",
                "sha512",
                "--encryption",
                "Serpent-AES",
                "--filesystem",
                "ext4",
                "--password-stdin",
            ],
        ]
        .concat(),
        password,
    );
}

/// The key description the kernel keyring holds for favorite `name`.
fn kernel_key(name: &str) -> Option<String> {
    let keyctl = require_tool("keyctl", "package keyutils");
    let out = Command::new(keyctl)
        .args(["show", "@s"])
        .output()
        .expect("keyctl show");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .find(|l| l.contains("tcd") && l.contains(&format!("favorite:{name}")))
        .map(str::to_owned)
}

/// A session keyring of this test's own, as pam_keyinit gives each login
/// (children started from this thread share it).
fn join_new_session_keyring() {
    const KEYCTL_JOIN_SESSION_KEYRING: libc::c_long = 1;
    // SAFETY: keyctl(2) with a null name: join a new anonymous keyring.
    let id = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_JOIN_SESSION_KEYRING,
            std::ptr::null::<libc::c_char>(),
        )
    };
    assert!(
        id > 0,
        "join a session keyring: {}",
        std::io::Error::last_os_error()
    );
}

/// `favorites add --remember` on a terminal: a wrong password is said and
/// asked again, as mount asks it; the right one is kept.
#[test]
fn a_password_to_remember_is_asked_again_after_a_wrong_one() {
    require_tool("keyctl", "package keyutils");
    join_new_session_keyring();
    let d = Daemon::start();
    let vol = d.path("again.hc");
    d.ok(
        &[
            "create",
            s(&vol),
            "--size",
            "4M",
            "--filesystem",
            "none",
            "--pim",
            "1",
            "--hash",
            "sha512",
            "--password-stdin",
            "--force",
        ],
        PW,
    );
    let name = format!("again-{}", std::process::id());
    let mut c = d.command();
    c.args(["favorites", "add", &name, s(&vol), "--remember"])
        .args(["--pim", "1", "--hash", "sha512"]);
    let mut t = tcd_tests::pty::Pty::spawn(c, None);
    let prompt = format!("Password for {name} (to remember): ");
    let wait = Duration::from_secs(30);
    t.expect(&prompt, wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("not the favorite's words");
    t.expect("wrong password", Duration::from_secs(120));
    t.expect_times(&prompt, 2, wait);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    let (code, text) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains(&format!("password of {name} kept")), "{text}");
    assert!(kernel_key(&name).is_some(), "keyctl shows the kept key");
    d.ok(&["favorites", "forget", &name], "");
}

#[test]
fn a_favorite_opens_with_its_kept_password_and_a_wrong_one_falls_back_to_asking() {
    require_tool("mkfs.ext4", "package e2fsprogs");
    require_tool("keyctl", "package keyutils");
    join_new_session_keyring();
    let d = Daemon::start();
    let vol = d.path("kept.hc");
    create(&d, &vol, PW);
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mount point");
    // A unique name: the session keyring outlives the test.
    let name = format!("kept-{}", std::process::id());
    // Adds the favorite (again: --replace), keeping `password` in the
    // keyring.
    let add_remembering = |password: &str| {
        d.ok(
            &[
                "favorites",
                "add",
                &name,
                s(&vol),
                "--mount-point",
                s(&mnt),
                "--replace",
                "--remember",
                "--password-stdin",
            ],
            password,
        )
    };
    let out = add_remembering(PW);
    assert!(out.contains("kernel keyring"), "{out}");
    let key = kernel_key(&name);
    assert!(key.is_some(), "keyctl shows the kept password's key");

    // No password typed: the keyring's opens it, and the favorite's own
    // mount point is used.
    let out = d.tcctl(&["favorites", "mount", &name, "--password-stdin"], "");
    assert!(
        out.status.success(),
        "mount with the kept password: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        Path::new(s(&mnt)).join("lost+found").is_dir(),
        "its filesystem is on the favorite's mount point"
    );
    let rows = d.list();
    assert_eq!(rows[0]["mount_point"], s(&mnt));
    assert_eq!(rows[0]["hash"], "SHA-512");
    // It kept the PRF and encryption it opened with.
    let favs: serde_json::Value =
        serde_json::from_str(&d.ok(&["favorites", "list", "--json"], "")).expect("json");
    assert_eq!(favs["favorites"][0]["hash"], "SHA-512");
    assert_eq!(favs["favorites"][0]["encryption"], "Serpent-AES");
    // Every key is there for a script: unset ones null, no keyfiles [].
    assert_eq!(favs["schema"], 1);
    assert_eq!(
        favs["favorites"][0]["password_file"],
        serde_json::Value::Null
    );
    assert_eq!(favs["favorites"][0]["keyfiles"], serde_json::json!([]));
    assert_eq!(favs["favorites"][0]["system"], false);
    // Named by the key `list --json` names it by, as by the file's.
    assert_eq!(favs["favorites"][0]["volume"], rows[0]["volume"]);
    assert_eq!(favs["favorites"][0]["volume"], favs["favorites"][0]["host"]);
    // No PIM is null, as `info --json` says it.
    assert_eq!(favs["favorites"][0]["pim"], serde_json::Value::Null);
    // Each key is one docs/OUTPUT.md names.
    let doc = std::fs::read_to_string(tcd_tests::repo_dir().join("docs/OUTPUT.md"))
        .expect("docs/OUTPUT.md");
    let keys_said = doc
        .split("A FAVORITE has every key")
        .nth(1)
        .and_then(|p| p.split("\n\n").next())
        .expect("OUTPUT.md's FAVORITE paragraph");
    for key in favs["favorites"][0].as_object().expect("an object").keys() {
        assert!(
            keys_said.contains(&format!("`{key}`")),
            "OUTPUT.md lacks {key}"
        );
    }
    d.ok(&["dismount", s(&mnt)], "");

    // A password that does not open the volume is never kept: said, with
    // a wrong password's exit code, and the one kept stays. The favorite's
    // hash is tried first, then every other: not said to be the only one.
    let (code, err) = d.fails(
        &[
            &["favorites", "add", &name, s(&vol), "--mount-point", s(&mnt)][..],
            &[
                "--replace",
                "--remember",
                "--password-stdin",
                "--hash",
                "sha512",
            ],
        ]
        .concat(),
        "not the password\n",
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with(&format!(
            "tcctl: the password to remember does not open {}: the favorite {name} is not \
             replaced (it stays as it was), nor the password kept: wrong password",
            s(&vol)
        )),
        "{err}"
    );
    assert!(
        err.ends_with(
            " s; giving the favorite --format and --pim (`tcctl favorites add --replace`) narrow \
             the search)\n"
        ),
        "{err}"
    );
    // A kept password the volume no longer takes (its password changed):
    // with no way to ask, a wrong password; else reported, then the user
    // is asked, and the right one replaces it (a kept password stays one
    // that opens the volume).
    let changed = "favorite words, changed\n";
    d.ok(
        &[
            "change-password",
            s(&vol),
            "--password-stdin",
            "--hash",
            "sha512",
        ],
        &format!("{PW}{changed}"),
    );
    let (code, err) = d.fails(&["favorites", "mount", &name, "--non-interactive"], "");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "the password in your keyring does not open it, and no other can be asked for: "
        ),
        "{err}"
    );
    assert!(
        err.ends_with(&format!(
            "(a mount on a terminal asks, and keeps the one that opens it; `tcctl favorites \
             forget {name}` removes the old one)\n"
        )),
        "{err}"
    );
    let out = d.tcctl(&["favorites", "mount", &name, "--password-stdin"], changed);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "falls back to asking: {err}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("password of {name} kept in your")),
        "{said}"
    );
    assert!(
        err.contains("the password in your keyring does not open it"),
        "{err}"
    );
    d.ok(&["dismount", s(&mnt)], "");
    let out = d.tcctl(&["favorites", "mount", &name, "--password-stdin"], "");
    assert!(
        out.status.success(),
        "the replaced password opens it: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    d.ok(&["dismount", s(&mnt)], "");
    d.ok(
        &[
            "change-password",
            s(&vol),
            "--password-stdin",
            "--hash",
            "sha512",
        ],
        &format!("{changed}{PW}"),
    );

    // Nothing kept for one favorite is tried on another: a second
    // favorite of the same volume has no password, and its mount asks
    // (and fails on the wrong one given).
    let other = format!("other-{}", std::process::id());
    d.ok(&["favorites", "add", &other, s(&vol)], "");
    let (code, err) = d.fails(
        &["favorites", "mount", &other, "--password-stdin"],
        "wrong\n",
    );
    assert_eq!(code, 2, "wrong password: {err}");
    assert!(
        err.ends_with(
            "; giving the favorite --hash, --format and --pim (`tcctl favorites add --replace`) \
             narrow the search)\n"
        ),
        "{err}"
    );

    // A favorite with a PIM: that PIM is the only one tried, and said.
    let with_pim = format!("pim-{}", std::process::id());
    d.ok(&["favorites", "add", &with_pim, s(&vol), "--pim", "7"], "");
    let (code, err) = d.fails(
        &["favorites", "mount", &with_pim, "--password-stdin"],
        "wrong\n",
    );
    assert_eq!(code, 2, "wrong password: {err}");
    assert!(
        err.ends_with(
            "; only the favorite's PIM 7 was tried; giving the favorite --hash and --format \
             (`tcctl favorites add --replace`) narrow the search)\n"
        ),
        "{err}"
    );
    d.ok(&["favorites", "remove", &with_pim], "");

    // A hash and encryption given with the favorite are shown by their
    // names before any mount, and tried first.
    let given = format!("given-{}", std::process::id());
    let add = [
        "favorites",
        "add",
        &given,
        s(&vol),
        "--mount-point",
        s(&mnt),
    ];
    d.ok(
        &[
            &add[..],
            &["--hash", "sha-512", "--encryption", "serpent-aes"],
        ]
        .concat(),
        "",
    );
    let favs: serde_json::Value =
        serde_json::from_str(&d.ok(&["favorites", "list", "--json"], "")).expect("json");
    let shown = favs["favorites"]
        .as_array()
        .and_then(|a| a.iter().find(|f| f["name"] == given.as_str()))
        .cloned()
        .unwrap_or_default();
    assert_eq!(shown["hash"], "SHA-512", "{favs}");
    assert_eq!(shown["encryption"], "Serpent-AES", "{favs}");
    d.ok(&["favorites", "mount", &given, "--password-stdin"], PW);
    d.ok(&["dismount", s(&mnt)], "");
    let (code, err) = d.fails(&[&add[..], &["--encryption", "rot13"]].concat(), "");
    assert_eq!(code, 64, "{err}");
    d.ok(&["favorites", "remove", &given], "");

    d.ok(&["favorites", "forget", &name], "");
    assert_eq!(kernel_key(&name), None, "forget removes the key");
    // Forgotten again: nothing kept, said, and no failure (a script may
    // forget before it removes).
    assert_eq!(
        d.ok(&["favorites", "forget", &name], ""),
        format!("no password of {name} was kept in your keyring\n")
    );
    d.ok(&["favorites", "remove", &name], "");
    d.ok(&["favorites", "remove", &other], "");
    let favs: serde_json::Value =
        serde_json::from_str(&d.ok(&["favorites", "list", "--json"], "")).expect("json");
    assert_eq!(favs, serde_json::json!({"schema": 1, "favorites": []}));
}

#[test]
fn system_favorites_mount_at_start_and_when_their_partition_appears() {
    require_root_and_fuse();
    require_tool("mkfs.ext4", "package e2fsprogs");
    let blkid = require_tool("blkid", "package util-linux");
    let dir = tempfile::tempdir().expect("temp dir");
    let p = |n: &str| dir.path().join(n);

    // A disk image with one GPT partition; a volume in the partition, and
    // one in a container file.
    let image = p("disk.img");
    gpt_image(&image, 48 << 20);
    let (disk, part) = LoopDevice::attach_with_partitions(&image);
    let partuuid = String::from_utf8(
        Command::new(&blkid)
            .args(["-p", "-o", "value", "-s", "PART_ENTRY_UUID", &part])
            .output()
            .expect("blkid")
            .stdout,
    )
    .expect("utf-8")
    .trim()
    .to_owned();
    assert!(!partuuid.is_empty(), "the partition has a PARTUUID");
    let stable = format!("/dev/disk/by-partuuid/{partuuid}");
    let container = p("boot.tc");
    {
        let d = Daemon::start();
        create(&d, Path::new(&part), PW);
        create(&d, &container, PW);
        // tcctl names a device by its stable name, not /dev/loopNp1.
        d.ok(&["favorites", "add", "usb", &part], "");
        let favs: serde_json::Value =
            serde_json::from_str(&d.ok(&["favorites", "list", "--json"], "")).expect("json");
        assert_eq!(favs["favorites"][0]["host"], stable.as_str());
        let (code, err) = d.fails(&["favorites", "add", "raw", disk.path()], "");
        assert_eq!(code, 7, "a whole loop device has no stable name: {err}");
    }
    drop(disk);

    // The administrator's list: root's, with a root-only password file.
    let password_file = p("password");
    std::fs::write(&password_file, PW).expect("password file");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&password_file, std::fs::Permissions::from_mode(0o600))
        .expect("chmod");
    for m in ["mnt-boot", "mnt-usb"] {
        std::fs::create_dir(p(m)).expect("mount point");
    }
    let system = p("favorites.toml");
    std::fs::write(
        &system,
        format!(
            "[[favorite]]\nname = \"boot\"\nhost = \"{}\"\nmount_point = \"{}\"\nauto_mount = true\npassword_file = \"{}\"\n\n\
             [[favorite]]\nname = \"usb\"\nhost = \"{stable}\"\nmount_point = \"{}\"\nauto_mount = true\npassword_file = \"{}\"\n",
            s(&container),
            s(&p("mnt-boot")),
            s(&password_file),
            s(&p("mnt-usb")),
            s(&password_file),
        ),
    )
    .expect("system favorites");
    std::fs::set_permissions(&system, std::fs::Permissions::from_mode(0o644)).expect("chmod");

    let d = Daemon::start_with(&["--system-favorites".as_ref(), system.as_os_str()]);
    // At start: the container is there and mounts; the disk is not.
    wait_until("the container favorite mounts at start", || {
        mounted_hosts(&d) == vec![s(&container).to_owned()]
    });
    assert!(p("mnt-boot").join("lost+found").is_dir());

    // The disk appears: the partition's "add" uevent mounts it.
    let (disk, part) = LoopDevice::attach_with_partitions(&image);
    wait_until("the partition favorite mounts when it appears", || {
        mounted_hosts(&d).contains(&stable)
    });
    assert!(p("mnt-usb").join("lost+found").is_dir());
    std::fs::write(p("mnt-usb").join("note"), "on the stick").expect("write");

    // The partition goes away. A busy loop device sends no event of its
    // own when detached, so the kernel's "remove" is raised through sysfs
    // as udevadm trigger does; the daemon dismounts and lets go.
    let name = Path::new(&part)
        .file_name()
        .and_then(|n| n.to_str())
        .expect("name")
        .to_owned();
    std::fs::write(format!("/sys/class/block/{name}/uevent"), "remove").expect("raise remove");
    wait_until("the partition favorite is dismounted when it goes", || {
        !mounted_hosts(&d).contains(&stable)
    });
    assert!(!p("mnt-usb").join("lost+found").exists(), "unmounted");
    assert!(
        mounted_hosts(&d).contains(&s(&container).to_owned()),
        "the other stays"
    );
    let log = std::fs::read_to_string(d.path("tcd.log")).expect("log");
    assert!(
        log.contains("device removed") || log.contains("went away"),
        "{log}"
    );
    drop(disk);

    // What was written reached the disk: it mounts again when it comes back.
    let _disk = LoopDevice::attach_with_partitions(&image);
    wait_until("it mounts again", || mounted_hosts(&d).contains(&stable));
    assert_eq!(
        std::fs::read_to_string(p("mnt-usb").join("note")).expect("note"),
        "on the stick"
    );
    d.ok(&["dismount", "--all"], "");

    // Root mounts a system favorite by hand with its password file, as
    // the daemon's own mounts do: nothing is asked.
    let said = d.ok(&["favorites", "mount", "boot", "--non-interactive"], "");
    let device = d
        .list()
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["volume"] == s(&container)))
        .map(|r| r["device"].as_str().unwrap_or_default().to_owned())
        .expect("the favorite's volume listed");
    // As `mount` says it, with the favorite's name first.
    assert_eq!(
        said,
        format!(
            "boot ({}) mounted on {} ({device})\n",
            s(&container),
            s(&p("mnt-boot"))
        )
    );
    assert!(p("mnt-boot").join("lost+found").is_dir());
    d.ok(&["dismount", "--all"], "");
}

/// A stand-in for logind: owns org.freedesktop.login1 on a private bus
/// and sends its signals.
fn emit(
    conn: &zbus::blocking::Connection,
    member: &str,
    body: &(impl serde::Serialize + zbus::zvariant::DynamicType),
) {
    conn.emit_signal(
        None::<&str>,
        "/org/freedesktop/login1",
        "org.freedesktop.login1.Manager",
        member,
        body,
    )
    .expect("emit");
}

#[test]
fn volumes_dismount_on_logind_signals_only_from_logind() {
    require_root_and_fuse();
    require_tool("mkfs.ext4", "package e2fsprogs");
    let dir = tempfile::tempdir().expect("temp dir");
    let p = |n: &str| dir.path().join(n);
    {
        let d = Daemon::start();
        for v in ["sleep.hc", "logout.hc", "stays.hc"] {
            create(&d, &p(v), PW);
        }
    }
    // The daemon on a bus of the test's, as if it were the system bus.
    let d = BusDaemon::start();
    let tcctl = |args: &[&str], stdin: &str| d.ok(args, stdin);
    let hosts = || -> Vec<String> {
        let v: serde_json::Value =
            serde_json::from_str(&tcctl(&["list", "--json"], "")).expect("json");
        let mut h: Vec<String> = v["volumes"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| r["volume"].as_str().expect("volume").to_owned())
            .collect();
        h.sort();
        h
    };
    tcctl(
        &[
            "favorites",
            "add",
            "sleep",
            s(&p("sleep.hc")),
            "--dismount-before-sleep",
        ],
        "",
    );
    tcctl(
        &[
            "favorites",
            "add",
            "logout",
            s(&p("logout.hc")),
            "--dismount-on-logout",
        ],
        "",
    );
    tcctl(&["favorites", "add", "stays", s(&p("stays.hc"))], "");
    // One line of standard input serves every favorite, as VeraCrypt's
    // --auto-mount favorites --stdin takes one password.
    tcctl(&["favorites", "mount", "--all", "--password-stdin"], PW);
    let all: Vec<String> = ["logout.hc", "sleep.hc", "stays.hc"]
        .iter()
        .map(|v| s(&p(v)).to_owned())
        .collect();
    assert_eq!(hosts(), all);

    // Someone who is not logind sends its signals: nothing happens.
    let logind = zbus::blocking::connection::Builder::address(d.bus.address.as_str())
        .expect("address")
        .name("org.freedesktop.login1")
        .expect("name")
        .build()
        .expect("stand-in logind");
    let impostor = zbus::blocking::connection::Builder::address(d.bus.address.as_str())
        .expect("address")
        .build()
        .expect("impostor");
    emit(&impostor, "PrepareForSleep", &(true,));
    emit(
        &impostor,
        "UserRemoved",
        &(
            0u32,
            zbus::zvariant::ObjectPath::from_static_str_unchecked(
                "/org/freedesktop/login1/user/_0",
            ),
        ),
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        hosts(),
        all,
        "signals from anyone but logind's owner are ignored"
    );

    // The session's watcher on the bus, as its autostart entry runs it.
    let mut watch = tcd_tests::daemon::Stopped(
        d.command()
            .arg("watch")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("tcctl watch"),
    );
    // Time for its match rule to reach the bus.
    std::thread::sleep(Duration::from_secs(1));

    // logind: the machine is about to sleep.
    emit(&logind, "PrepareForSleep", &(true,));
    wait_until("dismounted before sleep", || !hosts().contains(&all[1]));
    assert_eq!(hosts(), vec![all[0].clone(), all[2].clone()]);
    emit(&logind, "PrepareForSleep", &(false,));
    // root's last session ends.
    emit(
        &logind,
        "UserRemoved",
        &(
            0u32,
            zbus::zvariant::ObjectPath::from_static_str_unchecked(
                "/org/freedesktop/login1/user/_0",
            ),
        ),
    );
    wait_until("dismounted at logout", || !hosts().contains(&all[0]));
    assert_eq!(
        hosts(),
        vec![all[2].clone()],
        "the favorite without either stays"
    );
    let mut lines = std::io::BufReader::new(watch.0.stdout.take().expect("stdout"));
    for (vol, reason) in [(&all[1], "sleep"), (&all[0], "logout")] {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut lines, &mut line).expect("watch output");
        assert_eq!(line.trim(), format!("Dismounted {vol} ({reason})"));
    }
    tcctl(&["dismount", "--all"], "");
}

#[test]
fn an_idle_volume_is_dismounted_and_the_session_watcher_reports_it() {
    require_tool("mkfs.ext4", "package e2fsprogs");
    let d = Daemon::start();
    let vol = d.path("idle.hc");
    create(&d, &vol, PW);
    let manual = d.path("manual.hc");
    create(&d, &manual, PW);
    d.ok(
        &[
            "favorites",
            "add",
            "idle",
            s(&vol),
            "--dismount-idle",
            "3",
            "--auto-mount",
        ],
        "",
    );
    d.ok(&["favorites", "add", "manual", s(&manual)], "");
    // The session's watcher, as its autostart entry runs it.
    let mut watch = tcd_tests::daemon::Stopped(
        Command::new(build_dir().join("tcctl"))
            .arg("--socket")
            .arg(d.socket())
            .arg("watch")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("tcctl watch"),
    );
    // The session's autostart: only the favorite marked auto-mount.
    d.ok(&["favorites", "mount", "--auto", "--password-stdin"], PW);
    // In use, it stays: reads every second for 5 s.
    for _ in 0..5 {
        std::thread::sleep(Duration::from_secs(1));
        let st = Command::new("dd")
            .args([
                &format!("if={}", d.list()[0]["device"].as_str().expect("device")),
                "of=/dev/null",
                "bs=4096",
                "count=1",
                "iflag=direct",
            ])
            .stderr(Stdio::null())
            .status()
            .expect("dd");
        assert!(st.success());
    }
    assert_eq!(
        mounted_hosts(&d),
        vec![s(&vol).to_owned()],
        "a volume in use stays mounted"
    );
    wait_until("dismounted after 3 s idle", || mounted_hosts(&d).is_empty());
    // The watcher said so.
    let stdout = watch.0.stdout.take().expect("stdout");
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line)
        .expect("watch output");
    assert!(
        line.contains("Dismounted") && line.contains("idle.hc") && line.contains("idle"),
        "{line}"
    );
}

#[test]
fn favorites_add_in_veracrypts_order_or_of_nothing_is_refused_by_name() {
    let d = Daemon::start();
    let folder = d.path("mnt");
    std::fs::create_dir(&folder).expect("mkdir");
    let vol = d.path("v.hc");
    std::fs::write(&vol, [0u8; 4096]).expect("a file");
    // VeraCrypt's habit, volume then mount point: the folder would be
    // taken for the volume.
    let (code, err) = d.fails(&["favorites", "add", s(&vol), s(&folder)], "");
    assert_eq!(
        (code, err),
        (
            7,
            format!(
                "tcctl: {} is a folder, not a volume: favorites add NAME VOLUME (the mount \
                 point is --mount-point)\n",
                s(&folder)
            )
        )
    );
    let gone = d.path("gone.hc");
    let (code, err) = d.fails(&["favorites", "add", "gone", s(&gone)], "");
    assert_eq!(
        (code, err),
        (3, format!("tcctl: {}: no such file or device\n", s(&gone)))
    );
    let listed: serde_json::Value =
        serde_json::from_str(&d.ok(&["favorites", "list", "--json"], "")).expect("JSON");
    assert_eq!(listed["favorites"], serde_json::json!([]));
}

#[test]
fn the_state_folder_the_daemon_makes_is_roots_alone() {
    use std::os::unix::fs::PermissionsExt;
    let d = Daemon::start();
    let state = d.dir.path().join("state");
    assert!(!state.exists(), "the daemon makes it when it first writes");
    let vol = d.path("listed.hc");
    std::fs::write(&vol, b"").expect("file");
    d.ok(&["favorites", "add", "listed", s(&vol)], "");
    for dir in [state.clone(), state.join("favorites")] {
        let mode = std::fs::metadata(&dir).expect("made").permissions().mode();
        assert_eq!(mode & 0o7777, 0o700, "{}", dir.display());
    }
}
