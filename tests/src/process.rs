//! Child processes a test starts and must not leave behind.

use std::process::Child;
use std::time::{Duration, Instant};

/// Waits for `child` at most `limit`; its exit code, or None if it was
/// still running (it is killed then).
pub fn wait_at_most(child: &mut Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(st) = child.try_wait().expect("wait") {
            return Some(st.code().unwrap_or(-1));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A process named as systemd's password agent is (`systemd-tty-ask`, as
/// the kernel shortens `systemd-tty-ask-password-agent`), so that `tcctl`
/// without a terminal finds an agent to ask through; it answers nothing
/// itself (a stand-in `systemd-ask-password` does). Gone when dropped.
pub struct PasswordAgent {
    child: Child,
    _dir: tempfile::TempDir,
}

impl PasswordAgent {
    pub fn start() -> PasswordAgent {
        let dir = tempfile::tempdir().expect("tempdir");
        let exe = dir.path().join("systemd-tty-ask-password-agent");
        // A link, not a copy: the process is named for the link (the
        // name tcctl looks for), and no file is written that a fork of a
        // test running beside this one could still hold open for writing
        // when it is run (ETXTBSY).
        std::os::unix::fs::symlink("/bin/sleep", &exe).expect("link sleep");
        let child = std::process::Command::new(&exe)
            .arg("600")
            .spawn()
            .expect("start the stand-in agent");
        PasswordAgent { child, _dir: dir }
    }
}

impl Drop for PasswordAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
