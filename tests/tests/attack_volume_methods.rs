//! `org.tcd.Volume1.Dismount` and `Mount` called by hostile users on the
//! system bus: a user cannot dismount, mount (or even find) another user's
//! volume through its object, an option the daemon does not know is
//! refused by name, the owner and root dismount through the volume's own
//! object, and only the owner mounts an attached volume's filesystem, on a
//! folder of their own. `Volume1.Mount` refuses huge options and a FIFO
//! for a mount point by name; racing the owner's dismount, or called by a
//! client that vanishes, it leaves the volume in a state the listing and
//! the mount table agree on, and the daemon answering. `Volume1.Unmount`
//! is refused to others as `Mount` is, refuses an option it does not
//! know, leaves the volume attached, and answers a peer-to-peer caller.
//!
//! Runs the daemon of `tcd_tests::system::System` (private system bus,
//! polkitd, two users); the users' D-Bus client is python3 with jeepney.
//! Needs root, /dev/fuse, dbus-daemon, polkitd, setpriv, useradd,
//! mkfs.ext4, losetup, python3-jeepney.

use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use tcd_tests::system::{OPEN_FAST, PASSWORD, PYTHON, System, User};

/// How long a call that must not wait on anything may take: generous for
/// a loaded machine.
const PROMPT: Duration = Duration::from_secs(30);

/// Calls `Volume1.<method>(options)` on an object path; prints the reply
/// or the error as JSON.
const CALL: &str = r#"
import json, sys
from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection
method, path, opts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
body = ({k: (("b", v) if isinstance(v, bool) else ("s", v)) for k, v in opts.items()},)
with open_dbus_connection(bus="SYSTEM") as conn:
    addr = DBusAddress(path, bus_name="org.tcd.Tcd1", interface="org.tcd.Volume1")
    r = conn.send_and_get_reply(new_method_call(addr, method, "a{sv}", body), timeout=60)
    if r.header.message_type == MessageType.error:
        print(json.dumps({"error": r.header.fields.get(HeaderFields.error_name), "text": list(r.body)}))
    else:
        print(json.dumps({"reply": list(r.body)}))
"#;

fn dismount(sys: &System, who: Option<&User>, path: &str, options: &str) -> Value {
    call(sys, who, "Dismount", path, options)
}

fn call(sys: &System, who: Option<&User>, method: &str, path: &str, options: &str) -> Value {
    let out = sys
        .command(who, PYTHON)
        .args(["-c", CALL, method, path, options])
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "the client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON reply")
}

/// Sends `Volume1.<method>(options)` and leaves at once, before any
/// answer: the connection closes as the process ends.
const SEND_AND_LEAVE: &str = r#"
import json, sys
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection
method, path, opts = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
body = ({k: (("b", v) if isinstance(v, bool) else ("s", v)) for k, v in opts.items()},)
conn = open_dbus_connection(bus="SYSTEM")
addr = DBusAddress(path, bus_name="org.tcd.Tcd1", interface="org.tcd.Volume1")
conn.send(new_method_call(addr, method, "a{sv}", body))
conn.close()
"#;

/// [`CALL`] as `who`, started: a client to race, or to kill.
fn spawn_call(sys: &System, who: &User, method: &str, path: &str, options: &str) -> Child {
    sys.command(Some(who), PYTHON)
        .args(["-c", CALL, method, path, options])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3")
}

/// The JSON answer of a [`spawn_call`] client, which must end within
/// [`PROMPT`] after its own 60 s timeout.
fn answer_of(sys: &System, child: Child) -> Value {
    let out = within(child, PROMPT + Duration::from_secs(60))
        .unwrap_or_else(|| panic!("a client got no answer: {}", sys.log()));
    assert!(
        out.status.success(),
        "the client failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        sys.log()
    );
    serde_json::from_slice(&out.stdout).expect("JSON reply")
}

/// The child's output if it ends within `limit`; else it is killed and
/// None. (Its output is a line or two: no pipe fills meanwhile.)
fn within(mut child: Child, limit: Duration) -> Option<Output> {
    match tcd_tests::process::wait_at_most(&mut child, limit) {
        Some(_) => child.wait_with_output().ok(),
        None => None,
    }
}

/// `cmd` (a tcctl) with `stdin`, which must succeed within [`PROMPT`].
fn promptly(sys: &System, mut cmd: Command, stdin: &str, what: &str) -> String {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tcctl");
    if let Some(mut input) = child.stdin.take() {
        let _ = std::io::Write::write_all(&mut input, stdin.as_bytes());
    }
    let out = within(child, PROMPT)
        .unwrap_or_else(|| panic!("{what}: no answer within {PROMPT:?}: {}", sys.log()));
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        sys.log()
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A new volume of `who`'s attached as a block device only: its object.
fn attached_by(sys: &System, who: &User) -> String {
    let vol = sys.create_volume(who, "a.hc", "24M");
    attach(sys, who, &vol);
    object_of(sys, who)
}

/// Attaches `vol` as `who`, as a block device only (`--filesystem none`).
fn attach(sys: &System, who: &User, vol: &Path) {
    let mut args = vec!["mount", tcd_tests::s(vol), "--filesystem", "none"];
    args.extend(OPEN_FAST);
    sys.ok(Some(who), &args, &format!("{PASSWORD}\n"));
}

/// Options naming `p` as the mount point.
fn at(p: &Path) -> String {
    format!("{{\"mount_point\": \"{}\"}}", tcd_tests::s(p))
}

/// What `who`'s listing and the mount table say, once they agree: no
/// volume, and nothing on `mnt`; or one volume, its filesystem on `mnt`
/// exactly when the listing says so. A call still under way may make them
/// differ for a moment; they must agree within [`PROMPT`]. The volume, if
/// any.
fn consistent(sys: &System, who: &User, mnt: &Path, what: &str) -> Option<Value> {
    let deadline = Instant::now() + PROMPT;
    loop {
        match listed_state(sys, who, mnt) {
            Ok(v) => return v,
            Err(e) if Instant::now() >= deadline => panic!("{what}: {e}\n{}", sys.log()),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

fn listed_state(sys: &System, who: &User, mnt: &Path) -> Result<Option<Value>, String> {
    let listed = sys.list(Some(who));
    let rows = listed.as_array().expect("volumes");
    let on_mnt = tcd_tests::is_mount_point(mnt);
    match rows.as_slice() {
        [] if on_mnt => Err(format!("no volume, yet {mnt:?} is mounted")),
        [] => Ok(None),
        [v] => {
            let listed_at = v["mount_point"].as_str().filter(|p| !p.is_empty());
            if listed_at.is_some() != on_mnt || listed_at.is_some_and(|p| p != tcd_tests::s(mnt)) {
                return Err(format!("listed {v}, yet {mnt:?} mounted: {on_mnt}"));
            }
            Ok(Some(v.clone()))
        }
        _ => Err(format!("one volume was attached, listed: {listed}")),
    }
}

/// Dismounts every volume of `who` (a call still running on it may keep
/// it busy for a moment); then none is listed and `mnt` is free.
fn dismount_all_of(sys: &System, who: &User, mnt: &Path, what: &str) {
    let deadline = Instant::now() + PROMPT;
    loop {
        let out = sys.tcctl(Some(who), &["dismount", "--all"], "");
        if out.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: dismount --all: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            sys.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(consistent(sys, who, mnt, what), None, "{what}: dismounted");
}

/// The daemon's log shows no panic.
fn no_panic(sys: &System) {
    let log = sys.log();
    assert!(!log.contains("panicked"), "the daemon panicked: {log}");
}

fn object_of(sys: &System, who: &User) -> String {
    let list = sys.list(Some(who));
    list[0]["object"].as_str().expect("object path").to_owned()
}

#[test]
fn a_volume_object_dismounts_only_for_its_owner_and_root() {
    tcd_tests::require_tool("python3", "package python3-jeepney");
    let sys = System::start();
    let (alice, bob) = (&sys.users[0], &sys.users[1]);
    let alice_vol = sys.create_volume(alice, "a.hc", "24M");
    let bob_vol = sys.create_volume(bob, "b.hc", "24M");
    sys.mount(alice, &alice_vol, &alice.path("mnt"));
    sys.mount(bob, &bob_vol, &bob.path("mnt"));
    let alices = object_of(&sys, alice);
    let bobs = object_of(&sys, bob);
    assert_ne!(alices, bobs);

    // Bob at Alice's object: as if it did not exist, and it stays mounted.
    let r = dismount(&sys, Some(bob), &alices, "{\"force\": true}");
    assert_eq!(
        r["error"], "org.freedesktop.DBus.Error.UnknownObject",
        "{r}"
    );
    assert_eq!(sys.list(Some(alice)).as_array().map(Vec::len), Some(1));

    // An option the daemon does not know: refused, naming it, nothing done.
    let r = dismount(&sys, Some(bob), &bobs, "{\"forse\": true}");
    assert_eq!(r["error"], "org.tcd.Error.InvalidArgument", "{r}");
    assert!(r["text"].to_string().contains("forse"), "{r}");
    let r = dismount(&sys, Some(bob), &bobs, "{\"force\": \"yes\"}");
    assert_eq!(r["error"], "org.tcd.Error.InvalidArgument", "{r}");
    assert!(r["text"].to_string().contains("force"), "{r}");
    assert_eq!(sys.list(Some(bob)).as_array().map(Vec::len), Some(1));

    // The owner dismounts through the object; the volume is gone.
    let r = dismount(&sys, Some(alice), &alices, "{}");
    assert_eq!(r["reply"], serde_json::json!([[]]), "{r}");
    assert_eq!(sys.list(Some(alice)).as_array().map(Vec::len), Some(0));
    let mounted = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    assert!(
        !mounted.contains(alice.path("mnt").to_str().expect("utf-8")),
        "Alice's filesystem is unmounted"
    );
    // Root may dismount Bob's.
    let r = dismount(&sys, None, &bobs, "{}");
    assert_eq!(r["reply"], serde_json::json!([[]]), "{r}");
    assert_eq!(sys.list(Some(bob)).as_array().map(Vec::len), Some(0));
}

#[test]
fn an_attached_volumes_filesystem_mounts_only_for_its_owner_on_a_folder_of_theirs() {
    tcd_tests::require_tool("python3", "package python3-jeepney");
    let sys = System::start();
    let (alice, bob) = (&sys.users[0], &sys.users[1]);
    let object = attached_by(&sys, alice);
    let mnt = alice.path("mnt");
    let mount_point = || sys.list(Some(alice))[0]["mount_point"].clone();
    let refused = |r: &Value, name: &str, words: &str| {
        assert_eq!(r["error"], name, "{r}");
        assert!(r["text"].to_string().contains(words), "{r}");
        assert_eq!(mount_point(), Value::Null, "nothing mounted after {r}");
    };

    // Bob at Alice's object: as if it did not exist.
    let r = call(&sys, Some(bob), "Mount", &object, &at(&bob.path("mnt")));
    refused(&r, "org.freedesktop.DBus.Error.UnknownObject", "");
    // Root sees it, but the files inside are Alice's to mount.
    let r = call(&sys, None, "Mount", &object, "{}");
    refused(
        &r,
        "org.tcd.Error.PermissionDenied",
        "only the user who attached",
    );
    // Alice: not on a folder that is not hers, nor through a link to one.
    let roots = sys.dir.path().join("roots-folder");
    std::fs::create_dir(&roots).expect("folder");
    let r = call(&sys, Some(alice), "Mount", &object, &at(&roots));
    refused(
        &r,
        "org.tcd.Error.MountPoint",
        "is not the caller's own folder",
    );
    let link = alice.path("link");
    std::os::unix::fs::symlink(&roots, &link).expect("symlink");
    let r = call(&sys, Some(alice), "Mount", &object, &at(&link));
    assert!(r["error"].is_string(), "{r}");
    assert_eq!(mount_point(), Value::Null, "nothing mounted through a link");
    // Nor with files given to root, nor with an option it does not know.
    let opts = format!(
        "{{\"mount_point\": \"{}\", \"fs_options\": \"uid=0\"}}",
        tcd_tests::s(&mnt)
    );
    let r = call(&sys, Some(alice), "Mount", &object, &opts);
    refused(&r, "org.tcd.Error.PermissionDenied", "uid=");
    let r = call(
        &sys,
        Some(alice),
        "Mount",
        &object,
        "{\"mount_pint\": \"/\"}",
    );
    refused(&r, "org.tcd.Error.InvalidArgument", "mount_pint");

    // Her own folder: mounted there, and said so.
    let r = call(&sys, Some(alice), "Mount", &object, &at(&mnt));
    assert_eq!(r["reply"], serde_json::json!([tcd_tests::s(&mnt)]), "{r}");
    assert!(tcd_tests::is_mount_point(&mnt));
    assert_eq!(mount_point(), tcd_tests::s(&mnt));
    // Twice: already mounted.
    let r = call(&sys, Some(alice), "Mount", &object, "{}");
    assert_eq!(r["error"], "org.tcd.Error.AlreadyMounted", "{r}");
    let r = dismount(&sys, Some(alice), &object, "{}");
    assert_eq!(r["reply"], serde_json::json!([[]]), "{r}");
    assert!(!tcd_tests::is_mount_point(&mnt));
}

#[test]
fn an_attached_volumes_filesystem_unmounts_only_for_its_owner() {
    tcd_tests::require_tool("python3", "package python3-jeepney");
    let sys = System::start();
    let (alice, bob) = (&sys.users[0], &sys.users[1]);
    let object = attached_by(&sys, alice);
    let attached = sys.list(Some(alice))[0].clone();
    let mnt = alice.path("mnt");
    let r = call(&sys, Some(alice), "Mount", &object, &at(&mnt));
    assert_eq!(r["reply"], serde_json::json!([tcd_tests::s(&mnt)]), "{r}");
    let still_mounted = |r: &Value, name: &str, words: &str| {
        assert_eq!(r["error"], name, "{r}");
        assert!(r["text"].to_string().contains(words), "{r}");
        assert!(tcd_tests::is_mount_point(&mnt), "still mounted after {r}");
        assert_eq!(
            sys.list(Some(alice))[0]["mount_point"],
            tcd_tests::s(&mnt),
            "listed mounted after {r}"
        );
    };

    // Bob at Alice's object: as if it did not exist, as for `Mount`.
    for options in ["{}", "{\"force\": true}"] {
        let r = call(&sys, Some(bob), "Unmount", &object, options);
        still_mounted(&r, "org.freedesktop.DBus.Error.UnknownObject", "");
    }
    // Root sees it, but the files inside are Alice's, as for `Mount`.
    let r = call(&sys, None, "Unmount", &object, "{\"force\": true}");
    still_mounted(
        &r,
        "org.tcd.Error.PermissionDenied",
        "only the user who attached",
    );
    // Options it does not know, or of the wrong type: refused by name.
    let r = call(&sys, Some(alice), "Unmount", &object, "{\"forse\": true}");
    still_mounted(&r, "org.tcd.Error.InvalidArgument", "forse");
    let r = call(
        &sys,
        Some(alice),
        "Unmount",
        &object,
        "{\"force\": \"yes\"}",
    );
    still_mounted(&r, "org.tcd.Error.InvalidArgument", "force");

    // Alice: unmounted, and the volume listed as she attached it.
    let r = call(&sys, Some(alice), "Unmount", &object, "{}");
    assert_eq!(r["reply"], serde_json::json!([]), "{r}");
    assert!(!tcd_tests::is_mount_point(&mnt), "unmounted");
    assert_eq!(consistent(&sys, alice, &mnt, "unmounted"), Some(attached));
    // Nothing mounted: said so by name.
    let r = call(&sys, Some(alice), "Unmount", &object, "{}");
    assert_eq!(r["error"], "org.tcd.Error.NotFound", "{r}");
    assert!(r["text"].to_string().contains("is not mounted"), "{r}");
    // Mounted again, and dismounted through the same object.
    let r = call(&sys, Some(alice), "Mount", &object, &at(&mnt));
    assert_eq!(r["reply"], serde_json::json!([tcd_tests::s(&mnt)]), "{r}");
    dismount_all_of(&sys, alice, &mnt, "after the unmounts");
    no_panic(&sys);
}

/// `Volume1.Unmount` on a connection of the socket's own (`tcd
/// --socket`, no bus): answered, its change announced only after.
#[test]
fn an_unmount_over_the_socket_is_answered() {
    let d = tcd_tests::daemon::Daemon::start();
    let (mnt, object) = tcd_tests::system::mounted_ext4(&d);
    let stream = std::os::unix::net::UnixStream::connect(d.socket()).expect("connect");
    let conn = zbus::blocking::connection::Builder::async_io_unix_stream(stream)
        .p2p()
        .build()
        .expect("p2p connection");
    let (tx, rx) = std::sync::mpsc::channel();
    // On a thread of its own: a call never answered fails the test
    // instead of hanging it.
    std::thread::spawn(move || {
        let options: std::collections::HashMap<&str, zbus::zvariant::Value> =
            std::collections::HashMap::new();
        let reply = conn.call_method(
            None::<&str>,
            object.as_str(),
            Some("org.tcd.Volume1"),
            "Unmount",
            &options,
        );
        let _ = tx.send(reply.map(|_| ()));
    });
    let log = || std::fs::read_to_string(d.path("tcd.log")).unwrap_or_default();
    rx.recv_timeout(PROMPT)
        .unwrap_or_else(|_| panic!("no answer within {PROMPT:?}: {}", log()))
        .unwrap_or_else(|e| panic!("the unmount failed: {e}\n{}", log()));
    assert!(!tcd_tests::is_mount_point(&mnt), "unmounted");
    let listed = d.list();
    assert_eq!(listed[0]["mount_point"], Value::Null, "{listed}");
    assert_eq!(listed[0]["state"], "attached", "{listed}");
    let device = listed[0]["device"].as_str().expect("device").to_owned();
    d.ok(&["dismount", &device], "");
    assert_eq!(d.list(), serde_json::json!([]));
}

#[test]
fn huge_options_and_a_fifo_for_a_mount_point_are_refused_by_name() {
    tcd_tests::require_tool("python3", "package python3-jeepney");
    let sys = System::start();
    let alice = &sys.users[0];
    let vol = sys.create_volume(alice, "a.hc", "24M");
    attach(&sys, alice, &vol);
    let object = object_of(&sys, alice);
    let mnt = alice.path("mnt");
    let mount_point = || sys.list(Some(alice))[0]["mount_point"].clone();

    // 64 KiB: far past any path, well within what a client may send.
    let huge = format!("/{}", "x".repeat(64 << 10));
    for option in ["mount_point", "fs_options"] {
        let r = call(
            &sys,
            Some(alice),
            "Mount",
            &object,
            &format!("{{\"{option}\": \"{huge}\"}}"),
        );
        assert_eq!(r["error"], "org.tcd.Error.InvalidArgument", "{option}: {r}");
        let text = r["text"].to_string();
        assert!(
            text.contains(&format!("option {option} of {} bytes", huge.len()))
                && text.contains("at most 4096"),
            "{option}: {r}"
        );
        assert_eq!(mount_point(), Value::Null, "nothing mounted after {r}");
    }

    // A FIFO of her own: refused at once (never opened, which would wait
    // for a writer), saying what it is not.
    let fifo = alice.path("fifo");
    sys.sh(alice, &format!("mkfifo {}", tcd_tests::s(&fifo)));
    let started = Instant::now();
    let r = call(&sys, Some(alice), "Mount", &object, &at(&fifo));
    assert!(started.elapsed() < PROMPT, "{:?}", started.elapsed());
    assert_eq!(r["error"], "org.tcd.Error.MountPoint", "{r}");
    assert!(r["text"].to_string().contains("is not a folder"), "{r}");
    assert_eq!(mount_point(), Value::Null, "nothing mounted after {r}");

    // The daemon is up and the volume unharmed: its filesystem mounts.
    let r = call(&sys, Some(alice), "Mount", &object, &at(&mnt));
    assert_eq!(r["reply"], serde_json::json!([tcd_tests::s(&mnt)]), "{r}");
    assert!(tcd_tests::is_mount_point(&mnt));
    dismount_all_of(&sys, alice, &mnt, "after the refusals");
    no_panic(&sys);
}

#[test]
fn the_owners_mount_racing_her_dismount_ends_consistent() {
    tcd_tests::require_tool("python3", "package python3-jeepney");
    let sys = System::start();
    let alice = &sys.users[0];
    let vol = sys.create_volume(alice, "a.hc", "24M");
    let mnt = alice.path("mnt");
    for round in 0..4 {
        let what = format!("round {round}");
        attach(&sys, alice, &vol);
        let object = object_of(&sys, alice);
        // Started together; which reaches the daemon first varies.
        let mount = spawn_call(&sys, alice, "Mount", &object, &at(&mnt));
        let dismount = spawn_call(&sys, alice, "Dismount", &object, "{}");
        let (m, d) = (answer_of(&sys, mount), answer_of(&sys, dismount));
        eprintln!("{what}: Mount {m}, Dismount {d}");
        // Each is answered: done, or refused by name (the object gone,
        // the volume busy with the other call, or no longer there).
        for r in [&m, &d] {
            let named = r["error"].as_str().is_some_and(|e| {
                e.starts_with("org.tcd.Error.") || e == "org.freedesktop.DBus.Error.UnknownObject"
            });
            assert!(r["reply"].is_array() || named, "{what}: {r}");
        }
        match consistent(&sys, alice, &mnt, &what) {
            // The dismount came first or after the mount: gone.
            None => assert!(d["reply"].is_array(), "{what}: gone, yet {d}"),
            // The dismount was refused while the mount ran: the volume
            // is there, mounted if that call said so.
            Some(v) => {
                assert!(d["error"].is_string(), "{what}: still listed {v}: {d}");
                assert_eq!(
                    m["reply"].is_array(),
                    !v["mount_point"].is_null(),
                    "{what}: {m} {v}"
                );
            }
        }
        dismount_all_of(&sys, alice, &mnt, &what);
    }
    no_panic(&sys);
}

#[test]
fn a_client_that_vanishes_during_its_mount_leaves_the_daemon_answering() {
    tcd_tests::require_tool("python3", "package python3-jeepney");
    let sys = System::start();
    let (alice, bob) = (&sys.users[0], &sys.users[1]);
    let vol = sys.create_volume(alice, "a.hc", "24M");
    let bobs = sys.create_volume(bob, "b.hc", "24M");
    let (mnt, bob_mnt) = (alice.path("mnt"), bob.path("mnt"));
    for (round, how) in ["leaves", "is killed"].iter().enumerate() {
        let what = format!("a client that {how}");
        attach(&sys, alice, &vol);
        let object = object_of(&sys, alice);
        if round == 0 {
            // Sends the call and closes its connection without a word.
            let st = sys
                .command(Some(alice), PYTHON)
                .args(["-c", SEND_AND_LEAVE, "Mount", &object, &at(&mnt)])
                .status()
                .expect("python3");
            assert!(st.success(), "{what}: the client failed");
        } else {
            // SIGKILL once the call is on its way (or while it connects).
            let mut child = spawn_call(&sys, alice, "Mount", &object, &at(&mnt));
            std::thread::sleep(Duration::from_millis(300));
            let _ = child.kill();
            let _ = child.wait();
        }
        // Another user is served at once: he lists, mounts and dismounts.
        let mut args = vec!["mount", tcd_tests::s(&bobs), tcd_tests::s(&bob_mnt)];
        args.extend(OPEN_FAST);
        promptly(
            &sys,
            {
                let mut c = sys.tcctl_command(Some(bob));
                c.args(&args);
                c
            },
            &format!("{PASSWORD}\n"),
            &format!("Bob's mount after {what}"),
        );
        let listed = promptly(
            &sys,
            {
                let mut c = sys.tcctl_command(Some(bob));
                c.args(["list", "--json"]);
                c
            },
            "",
            &format!("Bob's list after {what}"),
        );
        assert!(listed.contains(tcd_tests::s(&bobs)), "{what}: {listed}");
        dismount_all_of(&sys, bob, &bob_mnt, &what);
        // Alice's volume is as the listing says, and dismounts.
        let left = consistent(&sys, alice, &mnt, &what);
        eprintln!("after {what}: {left:?}");
        dismount_all_of(&sys, alice, &mnt, &what);
    }
    no_panic(&sys);
}
