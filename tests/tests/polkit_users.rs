//! Two unprivileged users against the daemon on a real system bus with a
//! real polkitd: each mounts a container of their own; neither can mount
//! the other's file, see or dismount the other's volume, change the
//! policy, or mount a raw block device; root can do all of that.
//!
//! The bus is a private dbus-daemon of type "system" with the shipped
//! policy (`dist/dbus/org.tcd.Tcd1.conf`) and polkit's; polkitd reads the
//! shipped actions (`dist/polkit/org.tcd.policy`, installed for the test).
//! A headless machine has no active login session, so a rules file stands
//! in for one: it grants the two test users what the actions give active
//! local users (`org.tcd.use-file`), nothing more.
//!
//! Needs root, /dev/fuse, dbus-daemon, polkitd, setpriv, useradd, losetup,
//! mkfs.ext4 (CI installs them).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use tcd_tests::daemon::{PrivateBus, Stopped};
use tcd_tests::{build_dir, repo_dir, require_root_and_fuse, require_tool};

const ACTIONS: &str = "/usr/share/polkit-1/actions/org.tcd.policy";
const RULES: &str = "/etc/polkit-1/rules.d/49-tcd-test-users.rules";
const USERS: [&str; 2] = ["tcdtest1", "tcdtest2"];
const POLKITD: &str = "/usr/lib/polkit-1/polkitd";

/// Files installed for the test, removed afterwards.
struct Installed(Vec<PathBuf>);
impl Drop for Installed {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Makes the test user `name` if missing; its (uid, gid).
fn user(name: &str) -> (u32, u32) {
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id").args([flag, name]).output().ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    if id("-u").is_none() {
        let st = Command::new(require_tool("useradd", "package passwd"))
            .args(["--no-create-home", "--shell", "/usr/sbin/nologin", name])
            .status()
            .expect("useradd");
        assert!(st.success(), "useradd {name}");
    }
    (id("-u").expect("uid"), id("-g").expect("gid"))
}

fn bus_config(dir: &Path) -> PathBuf {
    let conf = dir.join("bus.conf");
    let text = format!(
        r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={bus}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus"/>
  </policy>
  <policy user="root">
    <allow own="org.freedesktop.PolicyKit1"/>
  </policy>
  <include>/usr/share/dbus-1/system.d/org.freedesktop.PolicyKit1.conf</include>
  <include>{tcd}</include>
</busconfig>
"#,
        bus = dir.join("system_bus_socket").display(),
        tcd = repo_dir().join("dist/dbus/org.tcd.Tcd1.conf").display(),
    );
    std::fs::write(&conf, text).expect("bus config");
    conf
}

/// Waits until `name` has an owner on the bus at `address`.
fn wait_for_name(address: &str, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = Command::new("dbus-send")
            .args([
                &format!("--bus={address}"),
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner",
                &format!("string:{name}"),
            ])
            .output()
            .expect("dbus-send");
        if String::from_utf8_lossy(&out.stdout).contains("boolean true") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name} did not appear on the bus"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn two_users_each_use_their_own_volumes_and_only_root_crosses_over() {
    require_root_and_fuse();
    require_tool("mkfs.ext4", "package e2fsprogs");
    let setpriv = require_tool("setpriv", "package util-linux");
    assert!(
        Path::new(POLKITD).is_file(),
        "{POLKITD} missing: install package polkitd"
    );
    let dir = tempfile::Builder::new()
        .prefix("tcd-polkit-")
        .tempdir()
        .expect("temp dir");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");

    // polkit's view: the shipped actions, and the stand-in for an active
    // session.
    std::fs::copy(repo_dir().join("dist/polkit/org.tcd.policy"), ACTIONS).expect("install actions");
    std::fs::create_dir_all("/etc/polkit-1/rules.d").expect("rules folder");
    std::fs::write(
        RULES,
        format!(
            "polkit.addRule(function(action, subject) {{\n  if (action.id == \"org.tcd.use-file\" && [{}].indexOf(subject.user) >= 0) {{\n    return polkit.Result.YES;\n  }}\n}});\n",
            USERS.map(|u| format!("\"{u}\"")).join(", ")
        ),
    )
    .expect("rules");
    let _installed = Installed(vec![ACTIONS.into(), RULES.into()]);

    let conf = bus_config(dir.path());
    let address = format!(
        "unix:path={}",
        dir.path().join("system_bus_socket").display()
    );
    let _bus = PrivateBus::from_config(&conf, &address);
    let _polkit = Stopped(
        Command::new(POLKITD)
            .arg("--no-debug")
            .env("DBUS_SYSTEM_BUS_ADDRESS", &address)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("polkitd"),
    );
    wait_for_name(&address, "org.freedesktop.PolicyKit1");
    let log = dir.path().join("tcd.log");
    let _tcd = Stopped(
        Command::new(build_dir().join("tcd"))
            .args(["--system", "--runtime-dir"])
            .arg(dir.path().join("run"))
            .arg("--policy")
            .arg(dir.path().join("policy.toml"))
            .arg("--state-dir")
            .arg(dir.path().join("state"))
            .arg("--system-favorites")
            .arg(dir.path().join("system-favorites.toml"))
            .env("DBUS_SYSTEM_BUS_ADDRESS", &address)
            .stderr(std::fs::File::create(&log).expect("log"))
            .spawn()
            .expect("tcd --system"),
    );
    wait_for_name(&address, "org.tcd.Tcd1");

    // tcctl as `who` (None: root).
    let tcctl = |who: Option<(u32, u32)>, args: &[&str], stdin: &str| -> Output {
        let mut cmd = match who {
            Some((uid, gid)) => {
                let mut c = Command::new(&setpriv);
                c.arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={gid}"))
                    .arg("--clear-groups")
                    .arg(build_dir().join("tcctl"));
                c
            }
            None => Command::new(build_dir().join("tcctl")),
        };
        let mut child = cmd
            .arg("--system")
            .args(args)
            .env("DBUS_SYSTEM_BUS_ADDRESS", &address)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tcctl");
        let _ = child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes());
        child.wait_with_output().expect("tcctl output")
    };
    let ok = |who: Option<(u32, u32)>, args: &[&str], stdin: &str| -> String {
        let out = tcctl(who, args, stdin);
        assert!(
            out.status.success(),
            "tcctl {args:?} as {who:?}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let denied = |who: Option<(u32, u32)>, args: &[&str], stdin: &str, what: &str| {
        let out = tcctl(who, args, stdin);
        assert_eq!(
            out.status.code(),
            Some(6),
            "{what}: permission denied expected: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let list = |who: Option<(u32, u32)>| -> serde_json::Value {
        serde_json::from_str(&ok(who, &["list", "--json"], "")).expect("list --json")
    };

    // Each user: a private folder with a container and a mount point.
    let ids: Vec<(u32, u32)> = USERS.iter().map(|u| user(u)).collect();
    let homes: Vec<PathBuf> = USERS
        .iter()
        .zip(&ids)
        .map(|(u, (uid, gid))| {
            let home = dir.path().join(u);
            std::fs::create_dir(&home).expect("home");
            std::fs::create_dir(home.join("mnt")).expect("mount point");
            for p in [home.clone(), home.join("mnt")] {
                std::os::unix::fs::chown(&p, Some(*uid), Some(*gid)).expect("chown");
            }
            std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).expect("chmod");
            home
        })
        .collect();
    let pw = "user words\n";
    let s = |p: &Path| p.to_str().expect("utf-8").to_owned();
    for (who, home) in ids.iter().zip(&homes) {
        let vol = s(&home.join("v.vc"));
        let mnt = s(&home.join("mnt"));
        let who = Some(*who);
        ok(
            who,
            &[
                "create",
                &vol,
                "--size",
                "24M",
                "--filesystem",
                "ext4",
                "--pim",
                "1",
                "--hash",
                "sha512",
                "--password-stdin",
            ],
            pw,
        );
        ok(
            who,
            &[
                "mount",
                &vol,
                &mnt,
                "--pim",
                "1",
                "--hash",
                "sha512",
                "--password-stdin",
            ],
            pw,
        );
        // The user writes into their own volume (its root is theirs).
        let out = Command::new(&setpriv)
            .arg(format!("--reuid={}", who.map_or(0, |w| w.0)))
            .arg(format!("--regid={}", who.map_or(0, |w| w.1)))
            .arg("--clear-groups")
            .args(["sh", "-c", &format!("echo mine > {mnt}/note")])
            .status()
            .expect("write as the user");
        assert!(out.success(), "the owner writes into the mounted volume");
        let rows = list(who);
        assert_eq!(
            rows.as_array().map(Vec::len),
            Some(1),
            "sees only their own: {rows}"
        );
        assert_eq!(rows[0]["volume"], vol.as_str());
    }
    let (one, two) = (Some(ids[0]), Some(ids[1]));

    // The plumbing is root's: neither user reads the decrypted volume
    // through its FUSE file or its loop device, only through the mount.
    let rows = list(None);
    for r in rows.as_array().expect("rows") {
        let device = r["device"].as_str().expect("device");
        let fuse_files: Vec<PathBuf> = std::fs::read_dir(dir.path().join("run/fuse"))
            .expect("FUSE folders")
            .flatten()
            .map(|e| e.path().join("volume"))
            .collect();
        assert!(!fuse_files.is_empty());
        for who in [one, two] {
            let (uid, gid) = who.expect("user");
            for path in fuse_files.iter().map(|p| s(p)).chain([device.to_owned()]) {
                let st = Command::new(&setpriv)
                    .arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={gid}"))
                    .arg("--clear-groups")
                    .args(["head", "-c", "1", &path])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .expect("head");
                assert!(!st.success(), "uid {uid} read {path}");
            }
        }
    }
    let vol1 = s(&homes[0].join("v.vc"));
    let mnt1 = s(&homes[0].join("mnt"));

    // The second user against the first user's things.
    let out = tcctl(
        two,
        &["mount", &vol1, "--filesystem", "none", "--password-stdin"],
        pw,
    );
    assert_eq!(
        out.status.code(),
        Some(6),
        "cannot open the other's file: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    denied(two, &["dismount", &mnt1], "", "dismount the other's volume");
    denied(
        two,
        &["policy", "set", "--hardware-acceleration", "disabled"],
        "",
        "change the policy",
    );
    // A block device the user may open is still not theirs to mount.
    let raw = dir.path().join("raw.img");
    std::fs::File::create(&raw)
        .and_then(|f| f.set_len(8 << 20))
        .expect("raw image");
    let out = Command::new(require_tool("losetup", "package mount"))
        .args(["--find", "--show"])
        .arg(&raw)
        .output()
        .expect("losetup");
    let device = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(device.starts_with("/dev/loop"), "a loop device: {device}");
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = Command::new("losetup").args(["-d", &self.0]).status();
        }
    }
    let _detach = Detach(device.clone());
    std::os::unix::fs::chown(&device, Some(ids[1].0), Some(ids[1].1)).expect("chown device");
    denied(
        two,
        &["mount", &device, "--filesystem", "none", "--password-stdin"],
        pw,
        "mount a raw block device",
    );

    // Root sees and manages everything.
    assert_eq!(list(None).as_array().map(Vec::len), Some(2));
    ok(
        None,
        &["policy", "set", "--hardware-acceleration", "disabled"],
        "",
    );
    ok(
        None,
        &["policy", "set", "--hardware-acceleration", "auto"],
        "",
    );
    ok(None, &["dismount", &mnt1], "");
    assert_eq!(list(one).as_array().map(Vec::len), Some(0));
    // Without a mount point, a user gets one of their own under
    // /run/media/<user>, removed again at dismount.
    ok(
        one,
        &[
            "mount",
            &vol1,
            "--pim",
            "1",
            "--hash",
            "sha512",
            "--password-stdin",
        ],
        pw,
    );
    let made = list(one)[0]["mount_point"]
        .as_str()
        .expect("mount point")
        .to_owned();
    assert!(
        made.starts_with(&format!("/run/media/{}/tcd", USERS[0])),
        "{made}"
    );
    let note = std::fs::read_to_string(Path::new(&made).join("note")).expect("note");
    assert_eq!(note.trim(), "mine");
    ok(one, &["dismount", &made], "");
    assert!(!Path::new(&made).exists(), "the made mount point is gone");
    // The second user dismounts their own.
    ok(two, &["dismount", &s(&homes[1].join("mnt"))], "");
    assert_eq!(list(None).as_array().map(Vec::len), Some(0));

    // Favorites: each user's own list, the system's for all to see and
    // only root to change.
    let favorites = |who: Option<(u32, u32)>| -> Vec<(String, bool, String)> {
        let v: serde_json::Value =
            serde_json::from_str(&ok(who, &["favorites", "list", "--json"], "")).expect("json");
        v.as_array()
            .expect("rows")
            .iter()
            .map(|f| {
                (
                    f["name"].as_str().expect("name").to_owned(),
                    f["system"].as_bool().expect("system"),
                    f["host"].as_str().expect("host").to_owned(),
                )
            })
            .collect()
    };
    for (who, home) in ids.iter().zip(&homes) {
        let who = Some(*who);
        let vol = s(&home.join("v.vc"));
        ok(
            who,
            &[
                "favorites",
                "add",
                "mine",
                &vol,
                "--mount-point",
                &s(&home.join("mnt")),
                "--pim",
                "1",
            ],
            "",
        );
        assert_eq!(
            favorites(who),
            vec![("mine".to_owned(), false, vol.clone())]
        );
    }
    let vol2 = s(&homes[1].join("v.vc"));
    denied(
        two,
        &["favorites", "add", "shared", &vol2, "--system-favorite"],
        "",
        "add a system favorite",
    );
    ok(
        None,
        &["favorites", "add", "shared", &vol1, "--system-favorite"],
        "",
    );
    for (who, home) in ids.iter().zip(&homes) {
        let mut seen = favorites(Some(*who));
        seen.sort();
        assert_eq!(
            seen,
            vec![
                ("mine".to_owned(), false, s(&home.join("v.vc"))),
                ("shared".to_owned(), true, vol1.clone()),
            ],
            "own favorite and the system's, never the other user's"
        );
    }
    // A favorite mounts with its own settings, and remembers how it opened.
    ok(one, &["favorites", "mount", "mine", "--password-stdin"], pw);
    assert_eq!(list(one)[0]["mount_point"], mnt1.as_str());
    let rows: serde_json::Value =
        serde_json::from_str(&ok(one, &["favorites", "list", "--json"], "")).expect("json");
    let mine = rows
        .as_array()
        .expect("rows")
        .iter()
        .find(|f| f["name"] == "mine")
        .expect("mine");
    assert_eq!(mine["hash"], "SHA-512");
    ok(one, &["dismount", &mnt1], "");
    denied(
        two,
        &["favorites", "remove", "shared", "--system-favorite"],
        "",
        "remove a system favorite",
    );
    ok(two, &["favorites", "remove", "mine"], "");
    assert_eq!(
        favorites(two),
        vec![("shared".to_owned(), true, vol1.clone())]
    );
    assert_eq!(favorites(one).len(), 2, "the other user's favorite stays");
}
