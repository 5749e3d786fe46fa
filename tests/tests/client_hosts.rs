//! What `tcctl` says of a host that is not a volume file or device, the
//! same from every command: a FIFO is refused at once (no command waits for
//! a writer), a folder gets one exit code whichever command met it, and a
//! container on a read-only file system is told apart from a missing one.
//! As an unprivileged user against the real daemon on a private system bus
//! with polkitd.
//!
//! Needs root, /dev/fuse, dbus-daemon, polkitd, setpriv, mkfifo, mount.

use std::path::Path;
use std::process::{Child, Output};
use std::time::{Duration, Instant};
use tcd_tests::require_tool;
use tcd_tests::s;
use tcd_tests::system::{OPEN_FAST, PASSWORD, System};

const INVALID_ARGUMENT: i32 = 7;
const NOT_FOUND: i32 = 3;
const PERMISSION_DENIED: i32 = 6;

/// The child's output if it ends within `limit`; it is killed otherwise.
fn finish_within(mut child: Child, limit: Duration) -> Option<Output> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if child.try_wait().expect("wait").is_some() {
            return Some(child.wait_with_output().expect("output"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// `tcctl ARGS` as the user, given the password on standard input; its
/// exit code and error text, or a failure naming the hang.
fn run(sys: &System, args: &[&str]) -> (i32, String) {
    let user = &sys.users[0];
    let child = sys
        .tcctl_command(Some(user))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("tcctl");
    let mut child = child;
    if let Some(mut input) = child.stdin.take() {
        let _ = std::io::Write::write_all(&mut input, format!("{PASSWORD}\n").as_bytes());
    }
    let out = finish_within(child, Duration::from_secs(15))
        .unwrap_or_else(|| panic!("tcctl {args:?} still waiting after 15 s"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn with_search(mut args: Vec<&str>) -> Vec<&str> {
    args.extend(OPEN_FAST);
    args
}

#[test]
fn a_fifo_or_a_folder_is_refused_at_once_with_one_exit_code() {
    require_tool("mkfifo", "coreutils");
    let sys = System::start();
    let user = &sys.users[0];
    let fifo = user.path("pipe.hc");
    let st = sys
        .command(Some(user), "mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(st.success());
    let folder = user.path("folder.hc");
    std::fs::create_dir(&folder).expect("mkdir");
    std::os::unix::fs::chown(&folder, Some(user.uid), Some(user.gid)).expect("chown");

    for (host, kind) in [(&fifo, "FIFO"), (&folder, "folder")] {
        for command in [
            vec!["info", s(host)],
            vec!["mount", s(host)],
            vec!["mount", s(host), "--readonly"],
            vec!["change-password", s(host)],
        ] {
            let (code, err) = run(&sys, &with_search(command.clone()));
            assert_eq!(code, INVALID_ARGUMENT, "tcctl {command:?}: {err}");
            assert!(
                err.contains(kind) && err.contains("a container file or a block device"),
                "tcctl {command:?}: {err}"
            );
        }
    }
    // Nothing was mounted, and the daemon is still answering.
    assert_eq!(sys.list(Some(user)).as_array().map(Vec::len), Some(0));
}

#[test]
fn a_container_on_a_read_only_file_system_is_not_called_missing() {
    require_tool("mount", "mount");
    let sys = System::start();
    let user = &sys.users[0];
    let vol = sys.create_volume(user, "v.hc", "8M");
    // The user's home, seen through a read-only bind mount.
    let ro = sys.dir.path().join("ro-view");
    std::fs::create_dir(&ro).expect("mkdir");
    let bind = |args: &[&str]| {
        let st = std::process::Command::new("mount")
            .args(args)
            .status()
            .expect("mount");
        assert!(st.success(), "mount {args:?}");
    };
    bind(&["--bind", s(&user.home), s(&ro)]);
    bind(&["-o", "remount,bind,ro", s(&ro)]);
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(&ro);
    let seen = ro.join(vol.file_name().expect("name"));

    // What must write it is refused, saying why.
    let (code, err) = run(&sys, &with_search(vec!["change-password", s(&seen)]));
    assert_eq!(code, PERMISSION_DENIED, "{err}");
    assert!(err.contains("is on a read-only file system"), "{err}");
    // A mount is made read-only, as VeraCrypt makes it, and says so.
    let (code, err) = run(
        &sys,
        &with_search(vec!["mount", s(&seen), "--filesystem", "none"]),
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("it is mounted read-only"), "{err}");
    assert_eq!(sys.list(Some(user))[0]["read_only"], true);
    sys.ok(Some(user), &["dismount", "--all"], "");

    let (code, err) = run(&sys, &with_search(vec!["mount", s(&user.path("gone.hc"))]));
    assert_eq!(code, NOT_FOUND, "{err}");

    // Read-only, the same container mounts.
    let (code, err) = run(
        &sys,
        &with_search(vec![
            "mount",
            s(&seen),
            "--readonly",
            "--filesystem",
            "none",
        ]),
    );
    assert_eq!(code, 0, "{err}");
    sys.ok(Some(user), &["dismount", "--all"], "");
}
