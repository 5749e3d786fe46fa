//! `org.tcd.Volume1.Dismount` and `Mount` called by hostile users on the
//! system bus: a user cannot dismount, mount (or even find) another user's
//! volume through its object, an option the daemon does not know is
//! refused by name, the owner and root dismount through the volume's own
//! object, and only the owner mounts an attached volume's filesystem, on a
//! folder of their own.
//!
//! Runs the daemon of `tcd_tests::system::System` (private system bus,
//! polkitd, two users); the users' D-Bus client is python3 with jeepney.
//! Needs root, /dev/fuse, dbus-daemon, polkitd, setpriv, useradd,
//! mkfs.ext4, losetup, python3-jeepney.

use serde_json::Value;
use tcd_tests::system::{OPEN_FAST, PASSWORD, PYTHON, System, User};

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
    let vol = sys.create_volume(alice, "a.hc", "24M");
    let mut args = vec!["mount", tcd_tests::s(&vol), "--filesystem", "none"];
    args.extend(OPEN_FAST);
    sys.ok(Some(alice), &args, &format!("{PASSWORD}\n"));
    let object = object_of(&sys, alice);
    let mnt = alice.path("mnt");
    let at = |p: &std::path::Path| format!("{{\"mount_point\": \"{}\"}}", tcd_tests::s(p));
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
