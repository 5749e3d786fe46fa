//! `org.tcd.Volume1.Dismount` called by hostile users on the system bus:
//! a user cannot dismount (or even find) another user's volume through its
//! object, an option the daemon does not know is refused by name, and the
//! owner and root dismount through the volume's own object.
//!
//! Runs the daemon of `tcd_tests::system::System` (private system bus,
//! polkitd, two users); the users' D-Bus client is python3 with jeepney.
//! Needs root, /dev/fuse, dbus-daemon, polkitd, setpriv, useradd,
//! mkfs.ext4, losetup, python3-jeepney.

use serde_json::Value;
use tcd_tests::system::{PYTHON, System, User};

/// Calls `Volume1.Dismount(options)` on an object path; prints the reply
/// or the error as JSON.
const DISMOUNT: &str = r#"
import json, sys
from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection
path, opts = sys.argv[1], json.loads(sys.argv[2])
body = ({k: (("b", v) if isinstance(v, bool) else ("s", v)) for k, v in opts.items()},)
with open_dbus_connection(bus="SYSTEM") as conn:
    addr = DBusAddress(path, bus_name="org.tcd.Tcd1", interface="org.tcd.Volume1")
    r = conn.send_and_get_reply(new_method_call(addr, "Dismount", "a{sv}", body), timeout=60)
    if r.header.message_type == MessageType.error:
        print(json.dumps({"error": r.header.fields.get(HeaderFields.error_name), "text": list(r.body)}))
    else:
        print(json.dumps({"reply": list(r.body)}))
"#;

fn dismount(sys: &System, who: Option<&User>, path: &str, options: &str) -> Value {
    let out = sys
        .command(who, PYTHON)
        .args(["-c", DISMOUNT, path, options])
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
