//! Attacks on mounting and dismounting, each by an unprivileged user
//! against the real daemon on a private system bus with polkitd
//! (`tcd_tests::system::System`):
//! - a parent folder of the mount point renamed and replaced by a symlink
//!   to a folder of root's, or the mount point's name turned into a FIFO,
//!   before asking to dismount;
//! - one user's slow forced dismount while another user mounts;
//! - two dismounts of one's own volume racing another user's mount (ids
//!   reused);
//! - a volume mounted under another user's file name;
//! - mounts of two users racing for VeraCrypt slots, one asking for a
//!   slot twice at once;
//! - a filesystem outside the allow-list (squashfs) inside a volume;
//! - another user's readable container mounted read-only, its owner's
//!   later change of its times never rolled back at the dismount;
//! - another user's container renamed while mounted, mounted again by its
//!   new name: its old name and device are told to its owner only.
//!
//! Needs root, /dev/fuse, dbus-daemon, polkitd, setpriv, mkfs.ext4,
//! mksquashfs, python3 with jeepney.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use tcd_tests::is_mount_point;
use tcd_tests::process::wait_at_most;
use tcd_tests::require_tool;
use tcd_tests::s;
use tcd_tests::system::{OPEN_FAST, PASSWORD, PYTHON, System, User};

/// A tmpfs of root's mounted on `path` (made), unmounted on drop.
struct Decoy(PathBuf);
impl Decoy {
    fn at(path: PathBuf) -> Decoy {
        std::fs::create_dir_all(&path).expect("decoy folder");
        let st = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tcd-decoy"])
            .arg(&path)
            .status()
            .expect("mount tmpfs");
        assert!(st.success(), "mount the decoy");
        std::fs::write(path.join("root-data"), "root's").expect("decoy file");
        Decoy(path)
    }
}
impl Drop for Decoy {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn dismount_never_follows_a_path_the_user_changed() {
    let sys = System::start();
    let alice = &sys.users[0];
    let bob = &sys.users[1];
    // Root's folder with a mount whose last component the user can name.
    let decoy = Decoy::at(sys.dir.path().join("srv/decoy/target"));
    let vol = sys.create_volume(alice, "v.hc", "24M");
    let bob_vol = sys.create_volume(bob, "b.hc", "24M");

    // The symlink swap: mount on ~/x/target, then ~/x -> root's folder.
    sys.sh(
        alice,
        &format!("mkdir -p {0}/x/target", alice.home.display()),
    );
    sys.mount(alice, &vol, &alice.path("x/target"));
    sys.sh(
        alice,
        &format!(
            "cd {0} && mv x x2 && ln -s {1} x",
            alice.home.display(),
            sys.dir.path().join("srv/decoy").display()
        ),
    );
    let code = wait_at_most(
        &mut sys.spawn_tcctl(Some(alice), &["dismount", s(&vol)], ""),
        Duration::from_secs(60),
    );
    assert!(
        is_mount_point(&decoy.0),
        "root's mount at {} is still mounted (dismount: {code:?})",
        decoy.0.display(),
    );
    assert_eq!(
        std::fs::read_to_string(decoy.0.join("root-data"))
            .ok()
            .as_deref(),
        Some("root's")
    );
    assert_eq!(code, Some(0), "alice's own dismount works, promptly");
    assert!(
        !is_mount_point(&alice.path("x2/target")),
        "alice's volume itself was unmounted, where it now is"
    );
    assert_eq!(sys.list(Some(alice)).as_array().map(Vec::len), Some(0));

    // The FIFO: mount on ~/y/target, then ~/y/target becomes a FIFO (the
    // real folder moved away). The dismount must not block on it, nor
    // hold up bob.
    sys.sh(
        alice,
        &format!("mkdir -p {0}/y/target", alice.home.display()),
    );
    sys.mount(alice, &vol, &alice.path("y/target"));
    sys.sh(
        alice,
        &format!(
            "cd {0} && mv y y2 && mkdir y && mkfifo y/target",
            alice.home.display()
        ),
    );
    let mut dismount = sys.spawn_tcctl(Some(alice), &["dismount", s(&vol)], "");
    // Meanwhile bob mounts and dismounts his own.
    let started = Instant::now();
    sys.mount(bob, &bob_vol, &bob.path("mnt"));
    sys.ok(Some(bob), &["dismount", s(&bob_vol)], "");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "bob waited {:?}",
        started.elapsed()
    );
    assert_eq!(
        wait_at_most(&mut dismount, Duration::from_secs(30)),
        Some(0),
        "alice's dismount finished, without opening the FIFO"
    );
    assert!(!is_mount_point(&alice.path("y2/target")));
    assert!(is_mount_point(&decoy.0));
    // The daemon still serves everyone.
    assert_eq!(sys.list(None).as_array().map(Vec::len), Some(0));
}

#[test]
fn one_volume_held_in_teardown_does_not_hold_up_another_users_mount() {
    let sys = System::start();
    let alice = &sys.users[0];
    let bob = &sys.users[1];
    let vol = sys.create_volume(alice, "v.hc", "24M");
    let bob_vol = sys.create_volume(bob, "b.hc", "24M");
    sys.mount(alice, &vol, &alice.path("mnt"));
    // A process of alice's keeps her filesystem busy: her forced dismount
    // leaves the volume detaching until it lets go.
    let mut holder = sys
        .command(Some(alice), "sh")
        .args(["-c", "exec sleep 120"])
        .current_dir(alice.path("mnt"))
        .spawn()
        .expect("holder");
    let mut forced = sys.spawn_tcctl(Some(alice), &["dismount", "--force", s(&vol)], "");
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    sys.mount(bob, &bob_vol, &bob.path("mnt"));
    let bob_took = started.elapsed();
    // Bob's mount did not queue behind alice's teardown: it was done
    // while her volume was still held (and listed, as detaching).
    let alice_held = sys
        .list(Some(alice))
        .as_array()
        .is_some_and(|rows| rows.iter().any(|r| r["volume"] == s(&vol)));
    let code = wait_at_most(&mut forced, Duration::from_secs(60));
    let _ = holder.kill();
    let _ = holder.wait();
    assert!(
        alice_held,
        "bob's mount ({bob_took:?}) waited for alice's volume to be released"
    );
    assert_eq!(code, Some(0), "alice's forced dismount succeeds");
    // Let go, her volume goes from the list.
    let deadline = Instant::now() + Duration::from_secs(30);
    while sys
        .list(Some(alice))
        .as_array()
        .is_some_and(|rows| !rows.is_empty())
    {
        assert!(Instant::now() < deadline, "alice's volume never went");
        std::thread::sleep(Duration::from_millis(200));
    }
    sys.ok(Some(bob), &["dismount", s(&bob_vol)], "");
}

#[test]
fn racing_dismounts_of_ones_own_volume_never_reach_another_users() {
    let sys = System::start();
    let alice = &sys.users[0];
    let bob = &sys.users[1];
    let vol = sys.create_volume(alice, "v.hc", "24M");
    let bob_vol = sys.create_volume(bob, "b.hc", "24M");
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut rounds = 0;
    while rounds < 6 && Instant::now() < deadline {
        rounds += 1;
        let pw = format!("{PASSWORD}\n");
        let block_device = |vol: &Path| {
            let mut a = vec!["mount", s(vol), "--filesystem", "none"];
            a.extend(OPEN_FAST);
            a.into_iter().map(str::to_owned).collect::<Vec<_>>()
        };
        let args = block_device(&vol);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        sys.ok(Some(alice), &args, &pw);
        let rows = sys.list(Some(alice));
        let object = rows[0]["object"].as_str().expect("object").to_owned();
        // Bob's mount is searching while alice sends the same dismount
        // twice by object path, then once more after it.
        let bob_args = block_device(&bob_vol);
        let bob_args: Vec<&str> = bob_args.iter().map(String::as_str).collect();
        let mut bob_mount = sys.spawn_tcctl(Some(bob), &bob_args, &pw);
        let spawn_dismount = || sys.spawn_tcctl(Some(alice), &["dismount", &object], "");
        let mut first = spawn_dismount();
        let mut second = spawn_dismount();
        assert_eq!(
            wait_at_most(&mut bob_mount, Duration::from_secs(60)),
            Some(0),
            "bob's mount"
        );
        let mut third = spawn_dismount();
        for d in [&mut first, &mut second, &mut third] {
            wait_at_most(d, Duration::from_secs(60)).expect("dismount returns");
        }
        let bobs = sys.list(Some(bob));
        assert_eq!(
            bobs.as_array().map(Vec::len),
            Some(1),
            "round {rounds}: alice's dismounts removed bob's volume: {bobs}"
        );
        assert_ne!(
            bobs[0]["object"].as_str(),
            Some(object.as_str()),
            "an id is never given to a second volume"
        );
        assert_eq!(sys.list(Some(alice)).as_array().map(Vec::len), Some(0));
        sys.ok(Some(bob), &["dismount", s(&bob_vol)], "");
    }
}

#[test]
fn slots_are_each_users_own_when_mounts_race() {
    let sys = System::start();
    let alice = &sys.users[0];
    let bob = &sys.users[1];
    let alices: Vec<PathBuf> = (1..=3)
        .map(|i| sys.create_volume(alice, &format!("a{i}.hc"), "24M"))
        .collect();
    let bobs: Vec<PathBuf> = (1..=2)
        .map(|i| sys.create_volume(bob, &format!("b{i}.hc"), "24M"))
        .collect();
    let pw = format!("{PASSWORD}\n");
    let mount = |who: &User, vol: &Path, slot: Option<&str>| {
        let mut a = vec!["mount", s(vol), "--filesystem", "none"];
        if let Some(n) = slot {
            a.extend(["--slot", n]);
        }
        a.extend(OPEN_FAST);
        let out = sys.tcctl(Some(who), &a, &pw);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // All at once (two searches each, the policy's most at once): alice's
    // take the lowest free slots of hers; bob asks for his slot 1 twice,
    // which alice's slot 1 does not hold.
    let (alices_runs, mut bobs_runs) = std::thread::scope(|scope| {
        let a: Vec<_> = alices[..2]
            .iter()
            .map(|v| scope.spawn(|| mount(alice, v, None)))
            .collect();
        let b: Vec<_> = bobs
            .iter()
            .map(|v| scope.spawn(|| mount(bob, v, Some("1"))))
            .collect();
        let joined = |h: Vec<std::thread::ScopedJoinHandle<'_, _>>| -> Vec<(Option<i32>, String)> {
            h.into_iter().map(|h| h.join().expect("a mount")).collect()
        };
        (joined(a), joined(b))
    });
    for (code, err) in &alices_runs {
        assert_eq!(*code, Some(0), "alice's mount: {err}\n{}", sys.log());
    }
    bobs_runs.sort();
    assert_eq!(
        (bobs_runs[0].0, bobs_runs[1].0),
        (Some(0), Some(7)),
        "one of bob's two mounts asking for slot 1 gets it, the other is refused: {bobs_runs:?}"
    );
    assert!(bobs_runs[1].1.contains("slot 1 is taken"), "{bobs_runs:?}");
    // A third of alice's, after: the next free slot of hers.
    let (code, err) = mount(alice, &alices[2], None);
    assert_eq!(code, Some(0), "{err}");
    let slots = |who: &User| -> Vec<u64> {
        let mut v: Vec<u64> = sys
            .list(Some(who))
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| r["slot"].as_u64().expect("a slot"))
            .collect();
        v.sort();
        v
    };
    assert_eq!(slots(alice), [1, 2, 3]);
    assert_eq!(slots(bob), [1]);
    // Bob's slots say nothing of alice's volumes: slot 2 is no volume of
    // his, and slot 1 is his own.
    let out = sys.tcctl(Some(bob), &["dismount", "--slot", "2"], "");
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tcctl: no volume is mounted in slot 2\n"
    );
    let status = sys.ok(Some(bob), &["status", "--slot", "1"], "");
    assert!(
        bobs.iter()
            .any(|b| status.starts_with(&format!("{} is active", s(b)))),
        "{status}"
    );
    assert_eq!(slots(alice), [1, 2, 3], "bob's calls moved none of alice's");
    sys.ok(Some(bob), &["dismount", "--all"], "");
    sys.ok(Some(alice), &["dismount", "--all"], "");
}

/// Mounts `volume` as `who` through the D-Bus API directly (python3 with
/// jeepney), naming it `claimed`; the object path.
fn mount_claiming(sys: &System, who: &User, volume: &Path, claimed: &str) -> String {
    assert!(
        Path::new(PYTHON).is_file(),
        "{PYTHON} missing: install packages python3 and python3-jeepney"
    );
    let script = r#"
import os, sys
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import unwrap_msg
conn = open_dbus_connection(bus="SYSTEM", enable_fds=True)
addr = DBusAddress("/org/tcd/Tcd1", bus_name="org.tcd.Tcd1", interface="org.tcd.Manager1")
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CLOEXEC)
opts = {"hash": ("s", "sha512"), "pim": ("u", 1), "filesystem": ("s", "none")}
msg = new_method_call(addr, "Mount", "hsayaaya{sv}", (fd, sys.argv[2], sys.argv[3].encode(), [], opts))
print(unwrap_msg(conn.send_and_get_reply(msg))[0])
"#;
    let out = sys
        .command(Some(who), PYTHON)
        .args(["-c", script, s(volume), claimed, PASSWORD])
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "mount through jeepney: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        sys.log()
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `path`'s modification time, in seconds since the epoch.
fn mtime(path: &Path) -> i64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).expect("stat").mtime()
}

/// Sets `path`'s access and modification times to `secs` since the epoch.
fn set_times(path: &Path, secs: u64) {
    let at = std::time::UNIX_EPOCH + Duration::from_secs(secs);
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_times(std::fs::FileTimes::new().set_accessed(at).set_modified(at)))
        .expect("set times");
}

/// A new container of `owner`'s named `name`, in a folder every user may
/// read, the file readable by all (written by its owner only).
fn readable_by_all(sys: &System, owner: &User, name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let made = sys.create_volume(owner, "v.hc", "24M");
    let vol = sys.dir.path().join(name);
    std::fs::copy(&made, &vol).expect("copy");
    std::os::unix::fs::chown(&vol, Some(owner.uid), Some(owner.gid)).expect("chown");
    std::fs::set_permissions(&vol, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    vol
}

/// The times a mount puts back at its dismount (so the container does
/// not tell when it was used) are put back only on a file the mounting
/// user owns: the daemon, which may set any file's times, never rolls
/// back those of a file another user may only read, whose owner may
/// change it meanwhile.
#[test]
fn a_readers_dismount_never_rolls_back_the_owners_file_times() {
    let sys = System::start();
    let alice = &sys.users[0];
    let bob = &sys.users[1];
    let vol = readable_by_all(&sys, alice, "alice.hc");
    const BEFORE: u64 = 1_000_000_000;
    const CHANGED: u64 = 1_300_000_000;
    let mount_read_only = |who: &User| {
        let mnt = who.path("mnt");
        let mut args = vec!["mount", s(&vol), s(&mnt), "--read-only"];
        args.extend(OPEN_FAST);
        sys.ok(Some(who), &args, &format!("{PASSWORD}\n"));
    };
    // Alice's own mount: her file's times are put back as they were.
    set_times(&vol, BEFORE);
    mount_read_only(alice);
    set_times(&vol, CHANGED);
    sys.ok(Some(alice), &["dismount", s(&vol)], "");
    assert_eq!(mtime(&vol), BEFORE as i64, "the owner's times put back");
    // Bob's mount of her file: her change while it is mounted stays.
    mount_read_only(bob);
    set_times(&vol, CHANGED);
    sys.ok(Some(bob), &["dismount", s(&vol)], "");
    assert_eq!(
        mtime(&vol),
        CHANGED as i64,
        "alice's change is not rolled back"
    );
}

#[test]
fn a_volume_is_known_by_its_own_file_not_the_name_its_user_claims() {
    let sys = System::start();
    let alice = &sys.users[0];
    let bob = &sys.users[1];
    let vol = sys.create_volume(alice, "v.hc", "24M");
    let bob_vol = sys.create_volume(bob, "b.hc", "24M");
    // Alice mounts her own file, claiming it is bob's.
    mount_claiming(&sys, alice, &vol, s(&bob_vol));
    let rows = sys.list(Some(alice));
    assert_eq!(rows[0]["volume"], s(&vol), "shown by its real file");
    let all = sys.list(None);
    assert!(
        all.as_array()
            .expect("rows")
            .iter()
            .all(|r| r["volume"] != s(&bob_vol)),
        "nobody is shown bob's file: {all}"
    );
    // Bob mounts and dismounts his volume by its file name: his own.
    sys.mount(bob, &bob_vol, &bob.path("mnt"));
    sys.ok(Some(bob), &["dismount", s(&bob_vol)], "");
    assert_eq!(sys.list(Some(bob)).as_array().map(Vec::len), Some(0));
    assert_eq!(
        sys.list(Some(alice)).as_array().map(Vec::len),
        Some(1),
        "alice's volume is untouched"
    );
    sys.ok(Some(alice), &["dismount", s(&vol)], "");
}

#[test]
fn only_allowed_filesystems_are_mounted_from_a_users_volume() {
    let sys = System::start();
    let alice = &sys.users[0];
    let mksquashfs = require_tool("mksquashfs", "package squashfs-tools");
    let vol = alice.path("squash.hc");
    let mut create = vec!["create", s(&vol), "--size", "24M", "--filesystem", "none"];
    create.extend(OPEN_FAST);
    sys.ok(Some(alice), &create, &format!("{PASSWORD}\n"));
    // The user knows the key, so the volume holds whatever image they
    // write; root writes one here for them.
    let src = sys.dir.path().join("squash-src");
    std::fs::create_dir(&src).expect("source");
    std::fs::write(src.join("file"), "inside").expect("file");
    let image = sys.dir.path().join("image.sqfs");
    let st = Command::new(&mksquashfs)
        .arg(&src)
        .arg(&image)
        .args(["-quiet", "-noappend"])
        .status()
        .expect("mksquashfs");
    assert!(st.success());
    let pw = format!("{PASSWORD}\n");
    let mut args = vec!["mount", s(&vol), "--filesystem", "none"];
    args.extend(OPEN_FAST);
    sys.ok(None, &args, &pw);
    let device = sys.list(None)[0]["device"]
        .as_str()
        .expect("device")
        .to_owned();
    let st = Command::new("dd")
        .arg(format!("if={}", image.display()))
        .arg(format!("of={device}"))
        .args(["bs=64k", "conv=fsync", "status=none"])
        .status()
        .expect("dd");
    assert!(st.success());
    sys.ok(None, &["dismount", s(&vol)], "");

    let mnt = alice.path("mnt");
    let mut on_mnt = vec!["mount", s(&vol), s(&mnt)];
    on_mnt.extend(OPEN_FAST);
    let out = sys.tcctl(Some(alice), &on_mnt, &pw);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "refused as bad input: {err}");
    assert!(
        err.contains("squashfs") && err.contains("not among the filesystems"),
        "the error names the filesystem and the rule: {err}"
    );
    assert!(!is_mount_point(&mnt), "nothing mounted");
    assert_eq!(sys.list(Some(alice)).as_array().map(Vec::len), Some(0));
    // The block device alone is still the user's to have.
    sys.ok(Some(alice), &args, &pw);
    sys.ok(Some(alice), &["dismount", s(&vol)], "");

    // An administrator may allow more; a later change by flags keeps it.
    sys.ok(
        None,
        &["policy", "set", "--file", "-"],
        "filesystems = [\"squashfs\"]\n",
    );
    let shown = sys.ok(
        None,
        &["policy", "set", "--hardware-acceleration", "auto"],
        "",
    );
    assert!(shown.contains("filesystems = [\"squashfs\"]"), "{shown}");
    on_mnt.push("--readonly");
    sys.ok(Some(alice), &on_mnt, &pw);
    assert_eq!(
        std::fs::read_to_string(mnt.join("file")).ok().as_deref(),
        Some("inside")
    );
    sys.ok(Some(alice), &["dismount", s(&vol)], "");
}

/// A container renamed while it is mounted: its owner, mounting it again by
/// the new name, is told the name and device it is mounted as; another user
/// who may read the file is told only that it is mounted, never the name
/// its owner gave it or the device (both are the owner's, as `list` keeps
/// them).
#[test]
fn another_users_renamed_container_is_said_mounted_without_its_old_name() {
    let sys = System::start();
    let alice = &sys.users[0];
    let bob = &sys.users[1];
    let vol = readable_by_all(&sys, alice, "alice-private-name.hc");
    let attach = |who: &User, v: &Path| {
        let mut args = vec!["mount", s(v), "--filesystem", "none", "--read-only"];
        args.extend(OPEN_FAST);
        sys.tcctl(Some(who), &args, &format!("{PASSWORD}\n"))
    };
    let out = attach(alice, &vol);
    assert!(out.status.success(), "{out:?}");
    let device = sys.list(Some(alice))[0]["device"]
        .as_str()
        .expect("device")
        .to_owned();
    let renamed = sys.dir.path().join("renamed.hc");
    std::fs::rename(&vol, &renamed).expect("rename");

    let out = attach(bob, &renamed);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("already mounted"), "{err}");
    assert!(err.contains(s(&renamed)), "{err}");
    assert!(!err.contains("alice-private-name"), "{err}");
    assert!(!err.contains(&device), "{err}");
    assert_eq!(sys.list(Some(bob)), serde_json::json!([]));

    // Alice learns where her volume is.
    let out = attach(alice, &renamed);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("alice-private-name.hc"), "{err}");
    assert!(err.contains(&device), "{err}");
    sys.ok(Some(alice), &["dismount", &device], "");
}
