//! Attacks on what a user learns about other users' volumes through the
//! daemon on the system bus, and what happens when the daemon loses the
//! bus.
//!
//! Bob (an unprivileged user) asks the daemon everything D-Bus lets him
//! ask about objects: `GetManagedObjects`, `Properties.GetAll` and `Get`
//! on every volume path, `Introspect` on every folder of the tree, and he
//! listens to every signal while Alice mounts, is dismounted for idleness,
//! and mounts again. He must learn nothing of Alice's volume: not its
//! host, mount point or owner, not even that it exists (its path answers
//! as one never used). Alice sees her own; root sees both users'.
//!
//! Runs the daemon of `tcd_tests::system::System` (private system bus,
//! polkitd, two users); the users' D-Bus client is python3 with jeepney.
//! Needs root, /dev/fuse, dbus-daemon, polkitd, setpriv, useradd,
//! mkfs.ext4, losetup, python3-jeepney.

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tcd_tests::require_tool;
use tcd_tests::s;
use tcd_tests::system::{System, User};
use tcd_tests::{PYTHON, require_python_with_jeepney};

/// A D-Bus client as the user runs it: `snoop IDS...` prints what every
/// question about objects answers; `listen` records every signal until a
/// line on its input, then prints them.
const PROBE: &str = r#"
import json, sys
from collections import deque
from jeepney import DBusAddress, HeaderFields, MatchRule, MessageType, message_bus, new_method_call
from jeepney.io.blocking import open_dbus_connection

BUS, ROOT = "org.tcd.Tcd1", "/org/tcd/Tcd1"

def call(conn, path, iface, method, sig=None, body=()):
    msg = new_method_call(DBusAddress(path, bus_name=BUS, interface=iface), method, sig, body)
    reply = conn.send_and_get_reply(msg, timeout=60)
    if reply.header.message_type == MessageType.error:
        return {"error": reply.header.fields.get(HeaderFields.error_name), "text": list(reply.body)}
    return {"reply": list(reply.body)}

def snoop(conn, ids):
    out = {"managed": call(conn, ROOT, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")}
    for p in ["/", "/org", "/org/tcd", ROOT, ROOT + "/volumes"]:
        out["introspect " + p] = call(conn, p, "org.freedesktop.DBus.Introspectable", "Introspect")
    for i in ids:
        p = f"{ROOT}/volumes/{i}"
        out[f"{i} getall"] = call(conn, p, "org.freedesktop.DBus.Properties", "GetAll", "s", ("org.tcd.Volume1",))
        for prop in ["Host", "MountPoint", "Owner", "Hidden", "ProtectsHidden"]:
            out[f"{i} get {prop}"] = call(conn, p, "org.freedesktop.DBus.Properties", "Get", "ss", ("org.tcd.Volume1", prop))
        out[f"{i} introspect"] = call(conn, p, "org.freedesktop.DBus.Introspectable", "Introspect")
    print(json.dumps(out, default=repr))

def listen(conn):
    got = []
    with conn.filter(MatchRule(type="signal"), queue=deque()) as signals:
        conn.send_and_get_reply(message_bus.AddMatch(MatchRule(type="signal")))
        # Known to the daemon, as any client that looks at volumes is.
        call(conn, ROOT, "org.tcd.Manager1", "ListVolumes")
        print("ready", flush=True)
        sys.stdin.readline()
        # The daemon's earlier signals come before this reply.
        call(conn, ROOT, "org.freedesktop.DBus.Peer", "Ping")
        while signals:
            msg = signals.popleft()
            f = msg.header.fields
            if f.get(HeaderFields.sender) == "org.freedesktop.DBus":
                continue
            got.append({"path": f.get(HeaderFields.path), "interface": f.get(HeaderFields.interface),
                        "member": f.get(HeaderFields.member), "body": list(msg.body)})
    print(json.dumps(got, default=repr))

with open_dbus_connection(bus="SYSTEM") as conn:
    if sys.argv[1] == "snoop":
        snoop(conn, sys.argv[2:])
    else:
        listen(conn)
"#;

fn probe_script(sys: &System) -> PathBuf {
    let p = sys.dir.path().join("probe.py");
    if !p.exists() {
        std::fs::write(&p, PROBE).expect("probe script");
    }
    p
}

/// What `who` (root for `None`) learns asking about volumes `ids`.
fn snoop(sys: &System, who: Option<&User>, ids: &[u32]) -> Value {
    let mut c = sys.command(who, PYTHON);
    c.arg(probe_script(sys)).arg("snoop");
    c.args(ids.iter().map(u32::to_string));
    let out = c.output().expect("python3");
    assert!(
        out.status.success(),
        "probe as {:?}: {}",
        who.map(|u| &u.name),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("probe output")
}

/// A signal listener as `who`, ready (subscribed and known to the daemon).
struct Listener(Child, BufReader<std::process::ChildStdout>);

impl Listener {
    fn start(sys: &System, who: Option<&User>) -> Listener {
        let mut child = sys
            .command(who, PYTHON)
            .arg(probe_script(sys))
            .arg("listen")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        out.read_line(&mut line).expect("listener starts");
        assert_eq!(line.trim(), "ready", "the listener subscribed");
        Listener(child, out)
    }

    /// Every signal the listener got from anyone but the bus.
    fn signals(mut self) -> Value {
        let mut stdin = self.0.stdin.take().expect("stdin");
        stdin.write_all(b"stop\n").expect("stop the listener");
        let mut text = String::new();
        std::io::Read::read_to_string(&mut self.1, &mut text).expect("listener output");
        assert!(
            self.0.wait().expect("listener").success(),
            "listener: {text}"
        );
        serde_json::from_str(&text).expect("listener output")
    }
}

/// The volume ids a user's `list --json` shows (from the object paths).
fn ids(list: &Value) -> Vec<u32> {
    list.as_array()
        .expect("list")
        .iter()
        .map(|r| {
            let o = r["object"].as_str().expect("object path");
            o.rsplit('/')
                .next()
                .and_then(|n| n.parse().ok())
                .expect("id")
        })
        .collect()
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done() {
        assert!(Instant::now() < deadline, "{what}: not within 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_user_learns_nothing_of_another_users_volumes_from_the_bus() {
    require_python_with_jeepney();
    let sys = System::start();
    let [alice, bob] = &sys.users;
    let a_vol = sys.create_volume(alice, "alice.vc", "24M");
    let b_vol = sys.create_volume(bob, "bob.vc", "24M");
    let (a_mnt, b_mnt) = (alice.path("mnt"), bob.path("mnt"));
    let mount = |who: &User, vol: &Path, mnt: &Path, extra: &[&str]| {
        let mut args = vec![
            "mount",
            s(vol),
            s(mnt),
            "--pim",
            "1",
            "--hash",
            "sha512",
            "--password-stdin",
        ];
        args.extend_from_slice(extra);
        sys.ok(
            Some(who),
            &args,
            &format!("{}\n", tcd_tests::system::PASSWORD),
        );
    };

    // Bob, Alice and root listen while Alice's volume comes, goes by
    // itself (idle), and comes again; Bob mounts his own.
    let listeners = [
        Listener::start(&sys, Some(bob)),
        Listener::start(&sys, Some(alice)),
        Listener::start(&sys, None),
    ];
    mount(alice, &a_vol, &a_mnt, &["--dismount-idle", "5"]);
    let first = ids(&sys.list(Some(alice)));
    wait_until("the idle volume is dismounted", || {
        sys.list(Some(alice)).as_array().is_some_and(Vec::is_empty)
    });
    mount(alice, &a_vol, &a_mnt, &[]);
    mount(bob, &b_vol, &b_mnt, &[]);
    let [to_bob, to_alice, to_root] = listeners.map(Listener::signals);

    let a_ids = [first, ids(&sys.list(Some(alice)))].concat();
    let b_ids = ids(&sys.list(Some(bob)));
    let never = 4000;
    let all: Vec<u32> = a_ids.iter().chain(&b_ids).copied().chain([never]).collect();
    let secrets = [s(&a_vol), s(&a_mnt), "alice.vc"];

    // What Bob heard: his own volume's coming, nothing of Alice's.
    let heard = to_bob.to_string();
    for secret in secrets {
        assert!(!heard.contains(secret), "Bob heard of {secret}: {heard}");
    }
    for id in &a_ids {
        let path = format!("/org/tcd/Tcd1/volumes/{id}\"");
        assert!(!heard.contains(&path), "Bob heard of {path}: {heard}");
    }
    assert!(
        heard.contains(s(&b_vol)),
        "Bob hears of his own volume: {heard}"
    );
    // Alice heard all of hers (the listener works), root everything.
    let heard_a = to_alice.to_string();
    for what in ["InterfacesAdded", "InterfacesRemoved", "AutoDismounted"] {
        assert!(heard_a.contains(what), "Alice hears {what}: {heard_a}");
    }
    assert!(heard_a.contains(s(&a_vol)), "{heard_a}");
    assert!(!heard_a.contains(s(&b_vol)), "Alice heard Bob's: {heard_a}");
    let heard_root = to_root.to_string();
    assert!(
        heard_root.contains(s(&a_vol)) && heard_root.contains(s(&b_vol)),
        "root hears both: {heard_root}"
    );

    // What Bob asks: Alice's paths answer as a path never used, and no
    // listing names them.
    let seen = snoop(&sys, Some(bob), &all);
    let text = seen.to_string();
    for secret in secrets {
        assert!(!text.contains(secret), "Bob learns {secret}: {text}");
    }
    let never_answer = |key: &str| seen[format!("{never} {key}")].to_string();
    for id in &a_ids {
        for key in [
            "getall",
            "get Host",
            "get MountPoint",
            "get Owner",
            "get Hidden",
            "get ProtectsHidden",
            "introspect",
        ] {
            let answer = seen[format!("{id} {key}")].to_string();
            assert_eq!(
                answer.replace(&format!("volumes/{id}"), &format!("volumes/{never}")),
                never_answer(key),
                "Bob's {key} of Alice's volume {id} differs from a path never used"
            );
        }
    }
    let managed = seen["managed"].to_string();
    assert!(
        managed.contains(s(&b_vol)) && !managed.contains(s(&a_vol)),
        "Bob manages only his own: {managed}"
    );
    for id in &a_ids {
        for folder in ["/org/tcd/Tcd1", "/org/tcd/Tcd1/volumes", "/"] {
            let xml = seen[format!("introspect {folder}")].to_string();
            assert!(
                !xml.contains(&format!("<node name=\\\"{id}\\\"")),
                "Introspect {folder} shows Bob Alice's volume {id}: {xml}"
            );
        }
    }
    for id in &b_ids {
        assert_eq!(
            seen[format!("{id} get Host")]["reply"][0][1],
            s(&b_vol),
            "Bob reads his own volume: {text}"
        );
    }

    // Alice reads her own; root reads both.
    let alice_sees = snoop(&sys, Some(alice), &all);
    let now = *a_ids.last().expect("alice's volume");
    assert_eq!(
        alice_sees[format!("{now} get Host")]["reply"][0][1],
        s(&a_vol)
    );
    assert!(!alice_sees.to_string().contains(s(&b_vol)));

    // Nor does Bob learn it by trying to dismount it: by host, mount
    // point or object path it answers as a name nothing is mounted on.
    let nothing = "/nothing/mounted/here";
    let none = sys.tcctl(Some(bob), &["dismount", nothing], "");
    let object = format!("/org/tcd/Tcd1/volumes/{now}");
    for name in [s(&a_vol), s(&a_mnt), object.as_str()] {
        let out = sys.tcctl(Some(bob), &["dismount", name], "");
        assert_eq!(out.status.code(), none.status.code(), "dismount {name}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).replace(name, nothing),
            String::from_utf8_lossy(&none.stderr),
            "Bob's dismount of {name}"
        );
    }
    assert_eq!(ids(&sys.list(Some(alice))), [now], "Alice's stays mounted");
    let root_sees = snoop(&sys, None, &all);
    let managed = root_sees["managed"].to_string();
    assert!(
        managed.contains(s(&a_vol)) && managed.contains(s(&b_vol)),
        "root sees both: {managed}"
    );
    assert_eq!(
        root_sees[format!("{now} get Owner")]["reply"][0][1],
        alice.uid
    );
}

/// The pid of the private bus of `sys` (a dbus-daemon this test started,
/// found by its configuration file).
fn bus_pid(sys: &System) -> i32 {
    let conf = sys.dir.path().join("bus.conf");
    let want = format!("--config-file={}", conf.display());
    for entry in std::fs::read_dir("/proc").expect("/proc") {
        let Ok(entry) = entry else { continue };
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if cmdline.split(|b| *b == 0).any(|a| a == want.as_bytes()) {
            return pid;
        }
    }
    panic!("no dbus-daemon with {want}");
}

/// The exit status of the daemon (our child) once it exits, left for its
/// owner to reap.
fn exit_code_within(pid: u32, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    loop {
        // SAFETY: siginfo_t is plain data; waitid writes it for our own
        // child and WNOWAIT leaves the child to be reaped by its owner.
        let info = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let rc = libc::waitid(
                libc::P_PID,
                pid,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            );
            assert_eq!(rc, 0, "waitid: {}", std::io::Error::last_os_error());
            info
        };
        // SAFETY: waitid filled in the child's fields (pid 0: not yet).
        let (who, code, status) = unsafe { (info.si_pid(), info.si_code, info.si_status()) };
        if who != 0 {
            return Some(if code == libc::CLD_EXITED {
                status
            } else {
                128 + status
            });
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Lines of `/proc/self/mountinfo` and `losetup -l` that mention `dir`.
fn mounts_and_loops_under(dir: &Path) -> Vec<String> {
    let d = s(dir);
    let mut found: Vec<String> = std::fs::read_to_string("/proc/self/mountinfo")
        .expect("mountinfo")
        .lines()
        .filter(|l| l.contains(d))
        .map(str::to_owned)
        .collect();
    let out = Command::new(require_tool("losetup", "package util-linux"))
        .args(["-l", "-n", "-O", "NAME,BACK-FILE"])
        .output()
        .expect("losetup");
    found.extend(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.contains(d))
            .map(|l| format!("loop: {l}")),
    );
    found
}

#[test]
fn the_daemon_that_loses_the_bus_dismounts_everything_and_fails() {
    let sys = System::start();
    let alice = &sys.users[0];
    let vol = sys.create_volume(alice, "v.vc", "24M");
    sys.mount(alice, &vol, &alice.path("mnt"));
    let before = mounts_and_loops_under(sys.dir.path());
    assert!(
        before.iter().any(|l| l.contains(s(&alice.path("mnt"))))
            && before.iter().any(|l| l.starts_with("loop: ")),
        "the volume is mounted, through a loop device: {before:?}"
    );

    // The bus goes away (as when it disconnects the daemon).
    let bus = bus_pid(&sys);
    // SAFETY: a signal to the dbus-daemon this test started.
    assert_eq!(unsafe { libc::kill(bus, libc::SIGKILL) }, 0, "kill the bus");

    let code = exit_code_within(sys.tcd_pid(), Duration::from_secs(60));
    assert!(
        code.is_some_and(|c| c != 0),
        "the daemon exits with an error (got {code:?}): {}",
        sys.log()
    );
    let log = sys.log();
    assert!(log.contains("lost the"), "it says why: {log}");
    let after = mounts_and_loops_under(sys.dir.path());
    assert!(after.is_empty(), "everything dismounted: {after:?}\n{log}");
}
