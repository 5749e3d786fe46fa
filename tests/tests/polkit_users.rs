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
//! The daemon, bus and polkitd are `tcd_tests::system::System`. Needs root,
//! /dev/fuse, dbus-daemon, polkitd, setpriv, useradd, losetup,
//! mkfs.ext4 (CI installs them).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use tcd_tests::loop_device::LoopDevice;
use tcd_tests::system::{PASSWORD, System, User};

#[test]
fn two_users_each_use_their_own_volumes_and_only_root_crosses_over() {
    let sys = System::start();
    let denied = |who: Option<&User>, args: &[&str], stdin: &str, what: &str| {
        let out = sys.tcctl(who, args, stdin);
        assert_eq!(
            out.status.code(),
            Some(6),
            "{what}: permission denied expected: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ok = |who: Option<&User>, args: &[&str], stdin: &str| sys.ok(who, args, stdin);
    let list = |who: Option<&User>| sys.list(who);
    let s = |p: &Path| p.to_str().expect("utf-8").to_owned();
    let pw = &format!("{PASSWORD}\n");

    // Each user: a container in a private folder, mounted on a folder of
    // their own.
    for u in &sys.users {
        let vol = sys.create_volume(u, "v.vc", "24M");
        let mnt = u.path("mnt");
        sys.mount(u, &vol, &mnt);
        // The user writes into their own volume (its root is theirs).
        let out = sys
            .command(Some(u), "sh")
            .args(["-c", &format!("echo mine > {}/note", mnt.display())])
            .status()
            .expect("write as the user");
        assert!(out.success(), "the owner writes into the mounted volume");
        let rows = list(Some(u));
        assert_eq!(
            rows.as_array().map(Vec::len),
            Some(1),
            "sees only their own: {rows}"
        );
        assert_eq!(rows[0]["volume"], s(&vol).as_str());
    }
    let dir = &sys.dir;
    let (one, two) = (Some(&sys.users[0]), Some(&sys.users[1]));
    let homes: Vec<PathBuf> = sys.users.iter().map(|u| u.home.clone()).collect();

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
            let uid = who.expect("user").uid;
            for path in fuse_files.iter().map(|p| s(p)).chain([device.to_owned()]) {
                let st = sys
                    .command(who, "head")
                    .args(["-c", "1", &path])
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
    let out = sys.tcctl(
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
    // The other's volume is not there for them (not found, as a path
    // nothing is mounted on), so it cannot be dismounted either.
    let out = sys.tcctl(two, &["dismount", &mnt1], "");
    assert_eq!(
        out.status.code(),
        Some(3),
        "dismount the other's volume: {}",
        String::from_utf8_lossy(&out.stderr)
    );
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
    let disk = LoopDevice::attach(&raw);
    disk.give_to(sys.users[1].uid, sys.users[1].gid);
    let device = disk.path();
    denied(
        two,
        &["mount", device, "--filesystem", "none", "--password-stdin"],
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
        made.starts_with(&format!("/run/media/{}/tcd", sys.users[0].name)),
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
    let favorites = |who: Option<&User>| -> Vec<(String, bool, String)> {
        let v: serde_json::Value =
            serde_json::from_str(&ok(who, &["favorites", "list", "--json"], "")).expect("json");
        v["favorites"]
            .as_array()
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
    for (who, home) in sys.users.iter().zip(&homes) {
        let who = Some(who);
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
    for (who, home) in sys.users.iter().zip(&homes) {
        let mut seen = favorites(Some(who));
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
    let mine = rows["favorites"]
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

#[test]
fn default_mount_points_take_the_lowest_free_number_and_the_log_has_no_bus_warning() {
    let sys = System::start();
    let u = &sys.users[1];
    let media = format!("/run/media/{}", u.name);
    let _ = std::fs::remove_dir(format!("{media}/tcd1"));
    let _ = std::fs::remove_dir(format!("{media}/tcd2"));
    let a = sys.create_volume(u, "a.vc", "24M");
    let b = sys.create_volume(u, "b.vc", "24M");
    let mount = |vol: &Path| {
        let mut args = vec!["mount", vol.to_str().expect("utf-8")];
        args.extend(tcd_tests::system::OPEN_FAST);
        sys.ok(Some(u), &args, &format!("{PASSWORD}\n"));
        let rows = sys.list(Some(u));
        let row = rows
            .as_array()
            .expect("rows")
            .iter()
            .find(|r| r["volume"] == vol.to_str().expect("utf-8"))
            .expect("mounted")
            .clone();
        row["mount_point"].as_str().expect("mount point").to_owned()
    };
    let first = mount(&a);
    assert_eq!(first, format!("{media}/tcd1"));
    sys.ok(Some(u), &["dismount", &first], "");
    assert!(!Path::new(&first).exists(), "the made folder goes");
    assert_eq!(mount(&a), first, "the freed number is taken again");
    let second = mount(&b);
    assert_eq!(second, format!("{media}/tcd2"));
    for at in [&first, &second] {
        sys.ok(Some(u), &["dismount", at], "");
    }
    let log = sys.log();
    assert!(
        !log.contains("before setting up the object server"),
        "{log}"
    );
}
