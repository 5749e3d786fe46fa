//! Attacks on favorites and the smaller gaps around them, by unprivileged
//! users against `tcd --system` on a private system bus with polkitd
//! (`tcd_tests::system::System`): favorites grown until the daemon's reply
//! no longer fits a bus message, a user's mount rewriting root's system
//! favorites, where root's secrets are shown, a system favorite's keyfile
//! swapped for a link or a pipe, the group of a user's new filesystem,
//! and a hidden volume inside an outer volume with a PIM (refused with the
//! outer volume's password, or in an outer ext4 filesystem).
//!
//! Needs root, /dev/fuse, dbus-daemon, polkitd, setpriv, mkfs.ext4,
//! losetup, partx, sfdisk, blkid, and /usr/bin/python3 with jeepney
//! (package python3-jeepney) to see the D-Bus error names tcctl does not
//! print.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use tcd_tests::daemon::run_with_input;
use tcd_tests::loop_device::{LoopDevice, gpt_image};
use tcd_tests::require_tool;
use tcd_tests::s;
use tcd_tests::system::{PASSWORD, System, User};

const PYTHON: &str = "/usr/bin/python3";

/// A D-Bus call by `who` through jeepney, which reports the error's name:
/// `AddFavorite` with `favorite` (JSON), or `ListFavorites` with `None`.
/// "ok BYTES" (the reply's size) or "NAME: MESSAGE".
fn call(sys: &System, who: &User, favorite: Option<&serde_json::Value>) -> String {
    assert!(
        Path::new(PYTHON).is_file(),
        "this test needs {PYTHON} (package python3); dist/test.sh installs it"
    );
    const SCRIPT: &str = r#"
import json, sys
from jeepney import DBusAddress, new_method_call, MessageType, HeaderFields
from jeepney.io.blocking import open_dbus_connection
conn = open_dbus_connection(bus="SYSTEM")
addr = DBusAddress("/org/tcd/Tcd1", bus_name="org.tcd.Tcd1", interface="org.tcd.Manager1")
if sys.argv[1] == "add":
    d = {}
    for k, v in json.load(sys.stdin).items():
        if isinstance(v, bool):
            d[k] = ("b", v)
        elif isinstance(v, int):
            d[k] = ("u", v)
        elif isinstance(v, list):
            d[k] = ("as", v)
        else:
            d[k] = ("s", v)
    msg = new_method_call(addr, "AddFavorite", "a{sv}b", (d, False))
else:
    msg = new_method_call(addr, "ListFavorites")
reply = conn.send_and_get_reply(msg, timeout=60)
if reply.header.message_type == MessageType.error:
    print(reply.header.fields[HeaderFields.error_name] + ": " + str(reply.body[0] if reply.body else ""))
else:
    print("ok", len(reply.serialise()))
"#;
    let mut c = sys.command(Some(who), PYTHON);
    // Only the bus address: no PYTHONPATH of the test's environment.
    c.env_clear()
        .env("DBUS_SYSTEM_BUS_ADDRESS", &sys.address)
        .args([
            "-c",
            SCRIPT,
            if favorite.is_some() { "add" } else { "list" },
        ]);
    let input = favorite.map(|f| f.to_string()).unwrap_or_default();
    let out = run_with_input(c, &input);
    assert!(
        out.status.success(),
        "python3 with jeepney (package python3-jeepney) failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The daemon still owns its name and answers: `tcctl list` works.
fn still_serving(sys: &System, who: &User) {
    let out = sys.tcctl(Some(who), &["list", "--json"], "");
    assert!(
        out.status.success(),
        "the daemon no longer answers on the bus: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        sys.log()
    );
}

/// A path of about `len` bytes under `/srv`, in components a filesystem
/// could hold.
fn long_path(tag: &str, len: usize) -> String {
    let mut p = format!("/srv/{tag}");
    while p.len() + 201 < len {
        p.push('/');
        p.push_str(&"x".repeat(200));
    }
    p
}

#[test]
fn favorites_grown_by_a_user_are_refused_by_name_before_the_reply_grows_large() {
    let sys = System::start();
    let user = &sys.users[0];
    let host = user.path("v.hc");
    std::fs::write(&host, b"").expect("host");
    std::os::unix::fs::chown(&host, Some(user.uid), Some(user.gid)).expect("chown");
    let file = sys
        .dir
        .path()
        .join(format!("state/favorites/{}.toml", user.uid));

    // Each favorite as large as one may be (long mount point and keyfile
    // paths); the user adds them until the daemon refuses.
    let mut refused = None;
    for i in 0..256 {
        let f = serde_json::json!({
            "name": format!("f{i}"),
            "host": s(&host),
            "mount_point": long_path("m", 4000),
            "keyfiles": (0..4).map(|k| long_path(&format!("k{k}"), 3900)).collect::<Vec<_>>(),
        });
        let r = call(&sys, user, Some(&f));
        if !r.starts_with("ok ") {
            refused = Some((i, r));
            break;
        }
    }
    let (added, error) = refused.expect("the daemon took 256 favorites of 20 KiB each");
    assert!(
        error.starts_with("org.tcd.Error.TooLarge: "),
        "refused by the named error: {error}"
    );
    let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    assert!(
        size < 1 << 20,
        "refused after {added} favorites, with a file of {size} bytes"
    );
    // One favorite with a long keyfile list is refused by itself.
    let many = serde_json::json!({
        "name": "many",
        "host": s(&host),
        "keyfiles": (0..200).map(|k| format!("/srv/keys/{k}")).collect::<Vec<_>>(),
    });
    let r = call(&sys, user, Some(&many));
    assert!(r.starts_with("org.tcd.Error.TooLarge: "), "{r}");
    // So is one whose hidden volume's keyfile list is long, or one of
    // its paths longer than a path may be.
    let hidden = serde_json::json!({
        "name": "many-hidden",
        "host": s(&host),
        "protect_hidden": true,
        "protect_hidden_keyfiles": (0..200).map(|k| format!("/srv/keys/{k}")).collect::<Vec<_>>(),
    });
    let r = call(&sys, user, Some(&hidden));
    assert!(r.starts_with("org.tcd.Error.TooLarge: "), "{r}");
    let hidden = serde_json::json!({
        "name": "long-hidden",
        "host": s(&host),
        "protect_hidden": true,
        "protect_hidden_keyfiles": ["/srv/".to_owned() + &"k".repeat(1 << 20)],
    });
    let r = call(&sys, user, Some(&hidden));
    assert!(
        r.starts_with("org.tcd.Error.TooLarge: ")
            || r.starts_with("org.tcd.Error.InvalidArgument: "),
        "{r}"
    );
    // Listing still answers, with a reply far below the bus's limits.
    let r = call(&sys, user, None);
    let bytes: usize = r
        .strip_prefix("ok ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("ListFavorites: {r}"));
    assert!(bytes < 1 << 20, "a ListFavorites reply of {bytes} bytes");
    still_serving(&sys, user);

    // A favorites file already past the bound (written by an older
    // daemon): no reply of its size, a named error instead.
    let other = &sys.users[1];
    let mut text = String::new();
    let keyfiles = vec![format!("\"{}\"", long_path("k", 1000)); 20].join(", ");
    for i in 0..200 {
        text += &format!(
            "[[favorite]]\nname = \"old{i}\"\nhost = \"{}\"\nkeyfiles = [{keyfiles}]\n",
            s(&other.path("v.hc"))
        );
    }
    assert!(text.len() > 2 << 20);
    let old = sys
        .dir
        .path()
        .join(format!("state/favorites/{}.toml", other.uid));
    std::fs::create_dir_all(old.parent().expect("folder")).expect("mkdir");
    std::fs::write(&old, &text).expect("old favorites");
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let r = call(&sys, other, None);
    match r.strip_prefix("ok ").and_then(|n| n.parse::<usize>().ok()) {
        Some(bytes) => assert!(bytes < 1 << 20, "a ListFavorites reply of {bytes} bytes"),
        None => assert!(r.starts_with("org.tcd.Error.TooLarge: "), "{r}"),
    }
    let out = sys.tcctl(Some(other), &["favorites", "list", "--json"], "");
    assert!(out.stdout.len() < 1 << 20);
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("256 KiB"), "a clear error: {err}");
    }
    still_serving(&sys, other);
    still_serving(&sys, user);
}

#[test]
fn a_users_mount_of_a_system_favorite_leaves_roots_file_alone() {
    let sys = System::start();
    let user = &sys.users[0];
    let vol = sys.create_volume(user, "v.hc", "24M");
    sys.ok(
        None,
        &[
            "favorites",
            "add",
            "shared",
            s(&vol),
            "--system-favorite",
            "--pim",
            "1",
            "--mount-point",
            s(&user.path("mnt")),
        ],
        "",
    );
    let system_file = sys.dir.path().join("system-favorites.toml");
    let before = std::fs::read_to_string(&system_file).expect("system favorites");
    let meta = std::fs::metadata(&system_file).expect("meta");

    sys.ok(
        Some(user),
        &[
            "favorites",
            "mount",
            "shared",
            "--system-favorite",
            "--password-stdin",
        ],
        &format!("{PASSWORD}\n"),
    );
    assert!(user.path("mnt/lost+found").is_dir(), "mounted");
    sys.ok(Some(user), &["dismount", s(&user.path("mnt"))], "");

    assert_eq!(
        std::fs::read_to_string(&system_file).expect("system favorites"),
        before,
        "a user's mount rewrote root's system favorites"
    );
    let after = std::fs::metadata(&system_file).expect("meta");
    assert_eq!((after.ino(), after.mtime()), (meta.ino(), meta.mtime()));
    // What the daemon learned is kept, in its state folder.
    let rows: serde_json::Value =
        serde_json::from_str(&sys.ok(Some(user), &["favorites", "list", "--json"], ""))
            .expect("json");
    let shared = rows["favorites"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|f| f["name"] == "shared")
        .expect("the system favorite");
    assert_eq!(shared["hash"], "SHA-512", "{rows}");
}

#[test]
fn only_administrators_see_where_a_system_favorites_secrets_are() {
    let sys = System::start();
    let secret = |name: &str| {
        let p = sys.dir.path().join(name);
        std::fs::write(&p, b"root's secret").expect("secret file");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        s(&p).to_owned()
    };
    let (keyfile, password_file) = (secret("boot.key"), secret("boot.password"));
    let (keyfile, password_file) = (keyfile.as_str(), password_file.as_str());
    let host = sys.dir.path().join("boot.hc");
    std::fs::write(&host, b"").expect("host");
    // Files the automatic mount could not read are refused when added.
    let missing = sys.dir.path().join("nowhere.password");
    let out = sys.tcctl(
        None,
        &[
            "favorites",
            "add",
            "boot",
            s(&host),
            "--system-favorite",
            "--password-file",
            s(&missing),
        ],
        "",
    );
    // Said plainly, as a file not found (exit 3), not as an I/O error.
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).as_ref()
        ),
        (
            Some(3),
            format!("tcctl: the password file {} does not exist\n", s(&missing)).as_str()
        )
    );
    sys.ok(
        None,
        &[
            "favorites",
            "add",
            "boot",
            s(&host),
            "--system-favorite",
            "--keyfile",
            keyfile,
            "--password-file",
            password_file,
        ],
        "",
    );
    // Root's own list has no "boot": pointed to the system's.
    let out = sys.tcctl(None, &["favorites", "remove", "boot"], "");
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tcctl: no favorite boot of yours (the system's of that name goes with \
         --system-favorite)\n"
    );
    // A hidden volume's keyfiles are root's secrets as much.
    let hidden_keyfile = secret("vault.key");
    let hidden_keyfile = hidden_keyfile.as_str();
    sys.ok(
        None,
        &[
            "favorites",
            "add",
            "vault",
            s(&host),
            "--system-favorite",
            "--protect-hidden",
            "--protect-hidden-keyfile",
            hidden_keyfile,
        ],
        "",
    );
    let secrets = [keyfile, password_file, hidden_keyfile];
    let seen = |who: Option<&User>| -> String {
        let rows: serde_json::Value =
            serde_json::from_str(&sys.ok(who, &["favorites", "list", "--json"], "")).expect("json");
        let listed: Vec<&serde_json::Value> = rows["favorites"]
            .as_array()
            .expect("rows")
            .iter()
            .filter(|f| f["name"] == "boot" || f["name"] == "vault")
            .collect();
        assert_eq!(listed.len(), 2, "both system favorites are listed: {rows}");
        serde_json::json!(listed).to_string()
    };
    for user in &sys.users {
        let shown = seen(Some(user));
        assert!(
            secrets.iter().all(|p| !shown.contains(p)),
            "{} sees root's secret paths: {shown}",
            user.name
        );
        // The raw reply too, not only what tcctl prints.
        let out = sys
            .command(Some(user), require_tool("dbus-send", "package dbus"))
            .args([
                "--system",
                "--print-reply",
                "--dest=org.tcd.Tcd1",
                "/org/tcd/Tcd1",
                "org.tcd.Manager1.ListFavorites",
            ])
            .output()
            .expect("dbus-send");
        let raw = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{raw}");
        assert!(
            raw.contains("boot") && secrets.iter().all(|p| !raw.contains(p)),
            "{raw}"
        );
    }
    let root = seen(None);
    assert!(
        secrets.iter().all(|p| root.contains(p)),
        "root sees them: {root}"
    );
    // Removed, named as it was added: the system's.
    let removed = sys.ok(
        None,
        &["favorites", "remove", "boot", "--system-favorite"],
        "",
    );
    assert_eq!(removed, "system favorite boot removed\n");
}

fn mkfifo(path: &Path) {
    let st = Command::new(require_tool("mkfifo", "package coreutils"))
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(st.success(), "mkfifo {}", path.display());
}

#[test]
fn a_system_favorites_keyfile_that_is_a_link_or_a_pipe_is_refused_promptly() {
    let sys = System::start();
    let user = &sys.users[0];
    let keys = sys.dir.path().join("keys");
    std::fs::create_dir(&keys).expect("keys");
    std::fs::set_permissions(&keys, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    // Root's own secret, and a link to it; a pipe that no one writes.
    let secret = keys.join("root-secret");
    std::fs::write(&secret, b"root's key").expect("secret");
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let link = keys.join("link");
    std::os::unix::fs::symlink(&secret, &link).expect("symlink");
    let fifo = keys.join("fifo");
    mkfifo(&fifo);

    // A device the daemon mounts when it appears, named by its PARTUUID.
    let image = sys.dir.path().join("disk.img");
    gpt_image(&image, 16 << 20);
    let (_disk, part) = LoopDevice::attach_with_partitions(&image);
    let add = |name: &str, keyfile: &Path| {
        sys.tcctl(
            None,
            &[
                "favorites",
                "add",
                name,
                &part,
                "--system-favorite",
                "--auto-mount",
                "--keyfile",
                s(keyfile),
            ],
            "",
        )
    };
    // Added, they are refused at once, as the automatic mount refuses them.
    for (name, keyfile, why) in [
        ("via-pipe", &fifo, "is a pipe"),
        ("via-link", &link, "symbolic link"),
    ] {
        let out = add(name, keyfile);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && said.contains(s(keyfile)) && said.contains(why),
            "{said}"
        );
    }
    // Root's own files when added, swapped for the pipe and the link later.
    for keyfile in [&fifo, &link] {
        std::fs::remove_file(keyfile).expect("rm");
        std::fs::write(keyfile, b"root's key").expect("key");
        std::fs::set_permissions(keyfile, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
    for (name, keyfile) in [("via-pipe", &fifo), ("via-link", &link)] {
        let out = add(name, keyfile);
        assert!(out.status.success(), "{out:?}");
    }
    std::fs::remove_file(&fifo).expect("rm");
    mkfifo(&fifo);
    std::fs::remove_file(&link).expect("rm");
    std::os::unix::fs::symlink(&secret, &link).expect("symlink");
    // The partition appears again ("add" uevent): the daemon reads both
    // favorites' keyfiles as root.
    let dev = Path::new(&part)
        .file_name()
        .and_then(|n| n.to_str())
        .expect("name")
        .to_owned();
    std::fs::write(format!("/sys/class/block/{dev}/uevent"), "add").expect("raise add");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let log = sys.log();
        let pipe = log
            .lines()
            .any(|l| l.contains("via-pipe") && l.contains(s(&fifo)) && l.contains("is a pipe"));
        let symlink = log
            .lines()
            .any(|l| l.contains("via-link") && l.contains(s(&link)) && l.contains("symbolic link"));
        if pipe && symlink {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no named refusal of the pipe and the link within 30 s:\n{log}"
        );
        // Meanwhile the daemon answers others.
        still_serving(&sys, user);
        std::thread::sleep(Duration::from_millis(200));
    }
    let volumes = sys.list(None);
    assert_eq!(volumes, serde_json::json!([]), "nothing mounted");
    still_serving(&sys, user);
}

/// `tcctl` as `who` with a supplementary group listed, as a login
/// session may have them (`setpriv --groups`).
fn tcctl_with_group(sys: &System, who: &User, group: u32, args: &[&str], stdin: &str) -> Output {
    let mut c = Command::new(require_tool("setpriv", "package util-linux"));
    c.arg(format!("--reuid={}", who.uid))
        .arg(format!("--regid={}", who.gid))
        .arg(format!("--groups={group}"))
        .arg(tcd_tests::build_dir().join("tcctl"))
        .arg("--system")
        .args(args)
        .env("DBUS_SYSTEM_BUS_ADDRESS", &sys.address);
    run_with_input(c, stdin)
}

#[test]
fn a_users_new_filesystem_gets_their_primary_group_not_a_supplementary_one() {
    let sys = System::start();
    let user = &sys.users[0];
    // A shared group the user is also in (listed first by the bus).
    let group = if user.gid == 100 { 101 } else { 100 };
    let vol = user.path("g.hc");
    let out = tcctl_with_group(
        &sys,
        user,
        group,
        &[
            "create",
            s(&vol),
            "--size",
            "24M",
            "--filesystem",
            "ext4",
            "--pim",
            "1",
            "--force",
            "--password-stdin",
            "--quick",
        ],
        &format!("{PASSWORD}\n"),
    );
    assert!(
        out.status.success(),
        "create: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        sys.log()
    );
    let mnt = user.path("mnt");
    let out = tcctl_with_group(
        &sys,
        user,
        group,
        &[
            "mount",
            s(&vol),
            s(&mnt),
            "--pim",
            "1",
            "--hash",
            "sha512",
            "--password-stdin",
        ],
        &format!("{PASSWORD}\n"),
    );
    assert!(
        out.status.success(),
        "mount: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let root = std::fs::metadata(&mnt).expect("the filesystem's root");
    sys.ok(Some(user), &["dismount", s(&mnt)], "");
    assert_eq!(
        (root.uid(), root.gid()),
        (user.uid, user.gid),
        "the new filesystem's root belongs to the user and their primary group (not group {group})"
    );
}

#[test]
fn a_hidden_volume_is_made_inside_an_outer_volume_with_a_pim() {
    let sys = System::start();
    let user = &sys.users[1];
    let vol = user.path("outer.hc");
    // The outer volume with PIM 5, filled and FAT (a hidden volume needs
    // that).
    sys.ok(
        Some(user),
        &[
            "create",
            s(&vol),
            "--size",
            "24M",
            "--pim",
            "5",
            "--force",
            "--hash",
            "sha512",
            "--filesystem",
            "fat",
            "--password-stdin",
        ],
        "outer words\n",
    );
    let hidden = |vol: &Path, passwords: &str| {
        sys.tcctl(
            Some(user),
            &[
                "create",
                s(vol),
                "--hidden-size",
                "8M",
                "--outer-pim",
                "5",
                "--pim",
                "3",
                "--force",
                "--hash",
                "sha512",
                "--filesystem",
                "ext4",
                "--password-stdin",
            ],
            passwords,
        )
    };
    // The daemon refuses what would give the hidden volume away or lose
    // it: the outer volume's own password, and an outer filesystem that
    // writes anywhere. Nothing is written either time.
    let refused = |vol: &Path, passwords: &str, why: &str| {
        let before = std::fs::read(vol).expect("read");
        let out = hidden(vol, passwords);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(7), "{err}");
        assert!(err.contains(why), "{err}");
        assert!(
            std::fs::read(vol).expect("read") == before,
            "nothing written"
        );
    };
    refused(
        &vol,
        "outer words\nouter words\n",
        "must differ from the outer",
    );
    let ext4 = user.path("ext4.hc");
    sys.ok(
        Some(user),
        &[
            "create",
            s(&ext4),
            "--size",
            "24M",
            "--pim",
            "5",
            "--hash",
            "sha512",
            "--filesystem",
            "ext4",
            "--password-stdin",
            "--force",
        ],
        "outer words\n",
    );
    refused(
        &ext4,
        "outer words\nhidden words\n",
        "puts new files anywhere",
    );
    let out = hidden(&vol, "outer words\nhidden words\n");
    assert!(out.status.success(), "{out:?}");
    let mnt = user.path("mnt");
    sys.ok(
        Some(user),
        &[
            "mount",
            s(&vol),
            s(&mnt),
            "--pim",
            "3",
            "--hash",
            "sha512",
            "--password-stdin",
        ],
        "hidden words\n",
    );
    let rows = sys.list(Some(user));
    assert_eq!(rows[0]["hidden"], true, "{rows}");
    assert!(mnt.join("lost+found").is_dir());
    sys.ok(Some(user), &["dismount", s(&mnt)], "");
    // The outer one still opens with its own PIM.
    let info = sys.ok(
        Some(user),
        &[
            "info",
            s(&vol),
            "--pim",
            "5",
            "--hash",
            "sha512",
            "--password-stdin",
        ],
        "outer words\n",
    );
    assert!(!info.is_empty());
}

#[test]
fn a_bad_descriptor_is_refused_before_polkit_is_asked() {
    let sys = System::start();
    let user = &sys.users[0];
    // A block device the user may open, but polkit does not let them use
    // (the test users have org.tcd.use-file only), and a folder given as
    // the header backup: it is refused for what it is (tcctl opens no
    // folder as a file) before any authorization is asked for.
    let image = sys.dir.path().join("user-disk.img");
    std::fs::File::create(&image)
        .and_then(|f| f.set_len(4 << 20))
        .expect("image");
    let disk = LoopDevice::attach(&image);
    disk.give_to(user.uid, user.gid);
    let out = sys.tcctl(
        Some(user),
        &[
            "restore-header",
            disk.path(),
            s(&user.path("mnt")),
            "-q",
            "--password-stdin",
        ],
        &format!("{PASSWORD}\n"),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(7),
        "a folder as the backup is a bad request, whoever asks: {err}"
    );
    assert!(err.contains("is a folder, not a regular file"), "{err}");
    // The device itself is still refused by polkit with a good backup.
    let backup = user.path("backup.hdr");
    std::fs::write(&backup, vec![0u8; 128 << 10]).expect("backup");
    std::os::unix::fs::chown(&backup, Some(user.uid), Some(user.gid)).expect("chown");
    let out = sys.tcctl(
        Some(user),
        &[
            "restore-header",
            disk.path(),
            s(&backup),
            "-q",
            "--password-stdin",
        ],
        &format!("{PASSWORD}\n"),
    );
    assert_eq!(
        out.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_system_favorites_password_file_others_may_read_by_now_is_not_used() {
    let sys = System::start();
    let alice = &sys.users[0];
    let vol = sys.create_volume(alice, "sys.hc", "8M");
    let mnt = sys.dir.path().join("sysmnt");
    std::fs::create_dir(&mnt).expect("mount point");
    let password_file = sys.dir.path().join("sys.password");
    std::fs::write(&password_file, format!("{PASSWORD}\n")).expect("password file");
    std::fs::set_permissions(&password_file, std::fs::Permissions::from_mode(0o600))
        .expect("chmod");
    sys.ok(
        None,
        &[
            "favorites",
            "add",
            "sysa",
            s(&vol),
            "--mount-point",
            s(&mnt),
            "--system-favorite",
            "--hash",
            "sha512",
            "--pim",
            "1",
            "--password-file",
            s(&password_file),
        ],
        "",
    );
    let mount = || {
        sys.tcctl(
            None,
            &["favorites", "mount", "--system-favorite", "sysa"],
            "",
        )
    };
    // Readable by others since it was added, or given to another user:
    // no secret of root's any more, so not used (and, with no terminal to
    // ask on, nothing is mounted).
    let nobody = 65534;
    for (mode, owner) in [(0o644, 0), (0o600, nobody)] {
        std::fs::set_permissions(&password_file, std::fs::Permissions::from_mode(mode))
            .expect("chmod");
        std::os::unix::fs::chown(&password_file, Some(owner), None).expect("chown");
        let out = mount();
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "mode {mode:o} uid {owner}: {said}");
        assert!(
            said.contains(&format!(
                "cannot read its password file {} (must be root's and readable by no one else)",
                s(&password_file)
            )),
            "mode {mode:o} uid {owner}: {said}"
        );
        assert_eq!(sys.list(None).as_array().map(Vec::len), Some(0));
    }
    // Root's and private again: it opens the volume.
    std::os::unix::fs::chown(&password_file, Some(0), None).expect("chown");
    let out = mount();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(sys.list(None).as_array().map(Vec::len), Some(1));
}
