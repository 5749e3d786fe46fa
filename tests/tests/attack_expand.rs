//! `Expand` called by hostile local users on the real daemon (private
//! system bus, polkitd): a pipe, a folder or a socket handed as the
//! container, a size past any file, a megabyte of hash name, a second
//! expansion or a mount of the same container racing one, and a client
//! that vanishes in the middle of the fill. Each is refused by name or
//! stopped, the container still opens, and the daemon keeps serving.

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};
use tcd_tests::s;
use tcd_tests::system::{OPEN_FAST, PASSWORD, PYTHON, System, User};

const MIB: u64 = 1 << 20;

/// Calls `Expand` as a raw client would. `argv`: what to hand as the
/// container (`file`, `fifo`, `folder`, `socket`), its path, the new size,
/// the hash option (a number: that many letters), and `vanish` to leave at
/// the first `ExpandProgress`.
/// Prints the error's name and text, the reply, or `vanished`.
const EXPAND: &str = r#"
import json, os, socket, sys
from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.fds import FileDescriptor
kind, path, size, hash_name, then = sys.argv[1:6]
if hash_name.isdigit():
    hash_name = "h" * int(hash_name)
if kind == "fifo":
    os.mkfifo(path)
    fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
elif kind == "folder":
    os.mkdir(path)
    fd = os.open(path, os.O_RDONLY)
elif kind == "socket":
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(path)
    fd = sock.fileno()
else:
    fd = os.open(path, os.O_RDWR)
options = {"pim": ("u", 1), "hash": ("s", hash_name)}
grow = {"size": ("t", int(size))}
with open_dbus_connection(bus="SYSTEM", enable_fds=True) as conn:
    addr = DBusAddress("/org/tcd/Tcd1", bus_name="org.tcd.Tcd1", interface="org.tcd.Manager1")
    body = (FileDescriptor(fd), b"user words, twenty and more", [], options, grow)
    call = new_method_call(addr, "Expand", "hayaaya{sv}a{sv}", body)
    if then == "vanish":
        conn.send(call)
        while True:
            m = conn.receive(timeout=120)
            if m.header.fields.get(HeaderFields.member) == "ExpandProgress":
                print("vanished", flush=True)
                os._exit(0)
            if m.header.message_type == MessageType.error:
                print(json.dumps({"error": m.header.fields.get(HeaderFields.error_name)}))
                sys.exit(0)
    r = conn.send_and_get_reply(call, timeout=120)
    if r.header.message_type == MessageType.error:
        print(json.dumps({"error": r.header.fields.get(HeaderFields.error_name), "text": list(r.body)}))
    else:
        print(json.dumps({"reply": list(r.body)}))
"#;

/// Runs [`EXPAND`] as `who`; its output and how long it took.
fn raw_expand(sys: &System, who: &User, args: [&str; 5]) -> (String, Duration) {
    let started = Instant::now();
    let out: Output = sys
        .command(Some(who), PYTHON)
        .args(["-c", EXPAND])
        .args(args)
        .output()
        .expect("python3");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (text, started.elapsed())
}

fn size_of(path: &Path) -> u64 {
    std::fs::metadata(path).expect("stat").len()
}

/// `tcctl info` as `who`: the volume still opens with its password.
fn opens(sys: &System, who: &User, vol: &Path) {
    let mut args = vec!["info", s(vol)];
    args.extend(OPEN_FAST);
    sys.ok(Some(who), &args, &format!("{PASSWORD}\n"));
}

#[test]
fn a_pipe_a_folder_or_a_socket_is_refused_by_name_at_once() {
    let sys = System::start();
    let user = &sys.users[0];
    for (kind, what) in [
        ("fifo", "a pipe"),
        ("folder", "a directory"),
        ("socket", "a socket"),
    ] {
        let path = user.path(&format!("not-a-volume-{kind}"));
        let size = (64 * MIB).to_string();
        let (text, took) = raw_expand(&sys, user, [kind, s(&path), &size, "sha512", "wait"]);
        assert!(
            text.contains("org.tcd.Error.InvalidArgument")
                && text.contains(&format!("the descriptor is {what}")),
            "{kind}: {text}"
        );
        // Refused for what it is, before any password is tried.
        assert!(took < Duration::from_secs(10), "{kind} took {took:?}");
    }
}

#[test]
fn a_size_past_any_file_and_a_megabyte_of_hash_name_are_refused_and_change_nothing() {
    let sys = System::start();
    let user = &sys.users[0];
    let vol = sys.create_volume(user, "odd.hc", "16M");
    let before = size_of(&vol);
    let (text, _) = raw_expand(
        &sys,
        user,
        ["file", s(&vol), &u64::MAX.to_string(), "sha512", "wait"],
    );
    assert!(text.contains("\"error\""), "{text}");
    assert_eq!(size_of(&vol), before, "{text}");
    let size = (32 * MIB).to_string();
    let long = (1 << 20).to_string();
    let (text, took) = raw_expand(&sys, user, ["file", s(&vol), &size, &long, "wait"]);
    assert!(text.contains("org.tcd.Error.InvalidArgument"), "{text}");
    // The name is not echoed back whole.
    assert!(text.len() < 4096, "{} bytes of reply", text.len());
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_eq!(size_of(&vol), before);
    opens(&sys, user, &vol);
}

#[test]
fn a_second_expansion_or_a_mount_during_one_is_refused_and_the_first_completes() {
    let sys = System::start();
    let user = &sys.users[0];
    let vol = sys.create_volume(user, "race.hc", "16M");
    let mut grow = vec!["expand", "-q", s(&vol), "--size", "3072M"];
    grow.extend(OPEN_FAST);
    let mut first = sys.spawn_tcctl(Some(user), &grow, &format!("{PASSWORD}\n"));
    // The fill has begun once the file is larger.
    let deadline = Instant::now() + Duration::from_secs(120);
    while size_of(&vol) <= 16 * MIB {
        assert!(Instant::now() < deadline, "the expansion never began");
        std::thread::sleep(Duration::from_millis(20));
    }
    // Larger than the first: refused by the daemon, which holds the
    // volume, not by tcctl's own check that a container never shrinks.
    let mut again = vec!["expand", "-q", s(&vol), "--size", "4096M"];
    again.extend(OPEN_FAST);
    let second = sys.tcctl(Some(user), &again, &format!("{PASSWORD}\n"));
    let mut mount = vec!["mount", s(&vol), "--filesystem", "none"];
    mount.extend(OPEN_FAST);
    let mounted = sys.tcctl(Some(user), &mount, &format!("{PASSWORD}\n"));
    let status = first.wait().expect("first expansion");
    assert!(status.success(), "the first expansion: {}", sys.log());
    for (what, out) in [("second expansion", &second), ("mount", &mounted)] {
        assert_eq!(
            out.status.code(),
            Some(4),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(size_of(&vol), 3072 * MIB);
    assert_eq!(sys.list(Some(user)).as_array().map(Vec::len), Some(0));
    opens(&sys, user, &vol);
}

#[test]
fn a_client_that_vanishes_during_the_fill_stops_it_and_the_volume_still_opens() {
    let sys = System::start();
    let (user, other) = (&sys.users[0], &sys.users[1]);
    let vol = sys.create_volume(user, "gone.hc", "16M");
    let size = (4096 * MIB).to_string();
    let (text, _) = raw_expand(&sys, user, ["file", s(&vol), &size, "sha512", "vanish"]);
    assert_eq!(text.trim(), "vanished");
    // The daemon sees its caller go and stops: the container is let go
    // (a mount is no longer refused as busy) well before a 4 GiB fill ends.
    let left = Instant::now();
    let mut mount = vec!["mount", s(&vol), "--filesystem", "none"];
    mount.extend(OPEN_FAST);
    loop {
        let out = sys.tcctl(Some(user), &mount, &format!("{PASSWORD}\n"));
        if out.status.success() {
            break;
        }
        assert_eq!(
            out.status.code(),
            Some(4),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            left.elapsed() < Duration::from_secs(60),
            "still held: {}",
            sys.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        sys.log().contains("went away: cancelling its request"),
        "{}",
        sys.log()
    );
    // The fill stopped where the caller left: the middle of the new space
    // was never written (a finished fill leaves no zero MiB there).
    let mut middle = vec![0u8; MIB as usize];
    std::os::unix::fs::FileExt::read_exact_at(
        &std::fs::File::open(&vol).expect("open"),
        &mut middle,
        2048 * MIB,
    )
    .expect("read");
    assert!(middle.iter().all(|&b| b == 0), "the fill went on");
    sys.ok(Some(user), &["dismount", "--all"], "");
    // It opens, at its old size or its new one; and another user was
    // never held up by it.
    opens(&sys, user, &vol);
    let theirs = sys.create_volume(other, "theirs.hc", "16M");
    opens(&sys, other, &theirs);
}
