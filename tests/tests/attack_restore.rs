//! Header restores as an unprivileged user tries them, on the real daemon
//! on a private system bus with polkitd: a backup of another volume of the
//! same size, whose keys read this volume's data as noise, is refused
//! unless its owner asks (`skip_data_check`); asking does not reach another
//! user's container, nor any call but a restore from a backup file.

use std::path::Path;
use tcd_tests::system::{OPEN_FAST, PASSWORD, PYTHON, System, User};
use tcd_tests::{require_tool, s};

const THEIRS: &str = "a second volume's words, long enough";

/// `argv[1]` (`RestoreHeaders` or `HeaderInfo`) of the container
/// `argv[2]` (opened read-only, or read-write with `argv[3]` "rw"), from
/// the backup file `argv[4]` for a restore, with THEIRS and
/// `skip_data_check`; the reply or the error as JSON.
const CALL: &str = r#"
import json, os, sys
from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.fds import FileDescriptor
method, path, mode, backup, password = sys.argv[1:6]
host = FileDescriptor(os.open(path, os.O_RDWR if mode == "rw" else os.O_RDONLY))
opts = {"pim": ("u", 1), "hash": ("s", "sha512"), "skip_data_check": ("b", True)}
if method == "RestoreHeaders":
    body = (host, FileDescriptor(os.open(backup, os.O_RDONLY)), password.encode(), [], opts)
    signature = "hhayaaya{sv}"
else:
    body = (host, password.encode(), [], opts)
    signature = "hayaaya{sv}"
with open_dbus_connection(bus="SYSTEM", enable_fds=True) as conn:
    addr = DBusAddress("/org/tcd/Tcd1", bus_name="org.tcd.Tcd1", interface="org.tcd.Manager1")
    r = conn.send_and_get_reply(new_method_call(addr, method, signature, body), timeout=120)
    if r.header.message_type == MessageType.error:
        print(json.dumps({"error": r.header.fields.get(HeaderFields.error_name), "text": list(r.body)}))
    else:
        print(json.dumps({"reply": list(r.body)}))
"#;

/// `method` (see [`CALL`]) as `who`, on `host` handed read-write if `rw`.
fn call(sys: &System, who: &User, method: &str, host: &Path, rw: bool, backup: &Path) -> String {
    let out = sys
        .command(Some(who), PYTHON)
        .args(["-c", CALL, method, s(host), if rw { "rw" } else { "ro" }])
        .args([s(backup), THEIRS])
        .output()
        .expect("python3");
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `vol`'s header backup as `who`, opened by `pw`, at `file`.
fn backup(sys: &System, who: &User, vol: &Path, file: &Path, pw: &str) {
    let mut args = vec!["backup-header", s(vol), s(file)];
    args.extend(OPEN_FAST);
    sys.ok(Some(who), &args, &format!("{pw}\n"));
}

fn made_by(sys: &System, who: &User, name: &str, pw: &str) -> std::path::PathBuf {
    let vol = who.path(name);
    let mut args = vec!["create", s(&vol), "--size", "8M", "--filesystem", "ext4"];
    args.extend(OPEN_FAST);
    sys.ok(Some(who), &args, &format!("{pw}\n"));
    vol
}

#[test]
fn a_foreign_backup_is_restored_only_into_the_callers_own_container_and_only_when_asked() {
    require_tool("python3", "package python3-jeepney");
    let sys = System::start();
    let (alice, bob) = (&sys.users[0], &sys.users[1]);
    let hers = sys.create_volume(alice, "hers.hc", "8M");
    let his = made_by(&sys, bob, "his.hc", PASSWORD);
    let other = made_by(&sys, bob, "other.hc", THEIRS);
    let foreign = bob.path("other.backup");
    backup(&sys, bob, &other, &foreign, THEIRS);
    let restore = |vol: &Path, more: &[&str]| {
        let mut args = vec!["restore-header", s(vol), s(&foreign), "-q"];
        args.extend(more);
        args.extend(OPEN_FAST);
        sys.tcctl(Some(bob), &args, &format!("{THEIRS}\n"))
    };

    // His own container: the noise is said, nothing written.
    let before = std::fs::read(&his).expect("read");
    let out = restore(&his, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{err}");
    assert!(
        err.contains("the backup's keys read this volume's data as noise"),
        "{err}"
    );
    assert!(
        std::fs::read(&his).expect("read") == before,
        "nothing written"
    );

    // Her container, which he may read: tcctl cannot open it for writing,
    // and a read-only descriptor handed to the daemon writes nothing,
    // asked or not.
    std::fs::set_permissions(
        hers.parent().expect("home"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    std::fs::set_permissions(&hers, std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .expect("chmod");
    let theirs_before = std::fs::read(&hers).expect("read");
    let out = restore(&hers, &["--skip-data-check"]);
    assert_eq!(
        out.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = call(&sys, bob, "RestoreHeaders", &hers, false, &foreign);
    assert!(
        said.contains("org.tcd.Error.PermissionDenied")
            && said.contains("restoring its header needs the right to write it"),
        "{said}"
    );
    assert!(
        std::fs::read(&hers).expect("read") == theirs_before,
        "her container is as it was: {said}"
    );

    // Asked for, on a descriptor of his own container he may write: done.
    let said = call(&sys, bob, "RestoreHeaders", &his, true, &foreign);
    assert!(said.contains("\"reply\""), "{said}");
    let mut info = vec!["info", s(&his)];
    info.extend(OPEN_FAST);
    sys.ok(Some(bob), &info, &format!("{THEIRS}\n"));

    // The option on any other call is refused by name.
    let mut args = vec!["info", s(&his), "--skip-data-check"];
    args.extend(OPEN_FAST);
    let out = sys.tcctl(Some(bob), &args, &format!("{THEIRS}\n"));
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    let said = call(&sys, bob, "HeaderInfo", &his, false, &foreign);
    assert!(
        said.contains("org.tcd.Error.InvalidArgument")
            && said.contains("option skip_data_check: only RestoreHeaders"),
        "{said}"
    );
}
