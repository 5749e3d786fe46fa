//! A `tcd` daemon of a test's own, on a peer-to-peer socket in a temporary
//! folder, driven through the real `tcctl`.

use crate::{build_dir, require_root_and_fuse};
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A daemon of its own, in its own folder; stopped with SIGTERM on drop.
pub struct Daemon {
    child: Option<Child>,
    pub dir: tempfile::TempDir,
    /// Extra arguments of `tcd` (a policy, a backend folder).
    args: Vec<OsString>,
    /// Extra environment of `tcd` (`TCD_SIMD`).
    env: Vec<(OsString, OsString)>,
}

impl Daemon {
    pub fn start() -> Daemon {
        Self::start_with(&[])
    }

    /// A daemon with extra arguments; `--backend-dir` among them replaces
    /// the build folder.
    pub fn start_with(args: &[&OsStr]) -> Daemon {
        Self::start_with_env(args, &[])
    }

    /// A daemon with extra arguments and environment variables.
    pub fn start_with_env(args: &[&OsStr], env: &[(&str, &str)]) -> Daemon {
        require_root_and_fuse();
        let dir = tempfile::tempdir().expect("temp dir");
        let mut d = Daemon {
            child: None,
            dir,
            args: args.iter().map(|a| a.to_os_string()).collect(),
            env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
        };
        d.spawn();
        d
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, |c| c.id())
    }

    /// Sends `sig` to the daemon.
    pub fn signal(&self, sig: i32) {
        send_signal(self.pid(), sig);
    }

    /// SIGKILL: the daemon cleans up nothing.
    pub fn kill(&mut self) {
        let mut child = self.child.take().expect("running");
        child.kill().expect("SIGKILL the daemon");
        child.wait().expect("wait");
    }

    pub fn spawn(&mut self) {
        let bin = build_dir().join("tcd");
        assert!(
            bin.is_file(),
            "{} missing: run `cargo build --workspace` first",
            bin.display()
        );
        let child = Command::new(bin)
            .arg("--socket")
            .arg(self.socket())
            .arg("--runtime-dir")
            .arg(self.dir.path().join("run"))
            .args(
                (!self.args.iter().any(|a| a == "--backend-dir"))
                    .then(|| [OsString::from("--backend-dir"), build_dir().into()])
                    .into_iter()
                    .flatten(),
            )
            // Favorites of the test's own, never the machine's.
            .args(
                (!self.args.iter().any(|a| a == "--state-dir"))
                    .then(|| {
                        [
                            OsString::from("--state-dir"),
                            self.dir.path().join("state").into(),
                        ]
                    })
                    .into_iter()
                    .flatten(),
            )
            .args(
                (!self.args.iter().any(|a| a == "--system-favorites"))
                    .then(|| {
                        [
                            OsString::from("--system-favorites"),
                            self.dir.path().join("system-favorites.toml").into(),
                        ]
                    })
                    .into_iter()
                    .flatten(),
            )
            .args(&self.args)
            .env("TCD_LOG", "info,fuser=error")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stderr(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(self.dir.path().join("tcd.log"))
                    .expect("daemon log"),
            )
            .spawn()
            .expect("start tcd");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(self.socket()).is_err() {
            assert!(Instant::now() < deadline, "tcd did not start listening");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("tcd.sock")
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A copy of the corpus image `name` in this daemon's folder, as a
    /// path to give tcctl.
    pub fn image(&self, name: &str) -> String {
        let p = self.path(name);
        std::fs::copy(crate::tcrypt_images().join(name), &p).expect("copy the image");
        crate::s(&p).to_owned()
    }

    /// `tcctl --socket` this daemon's socket, to add arguments to.
    pub fn command(&self) -> Command {
        let mut c = Command::new(build_dir().join("tcctl"));
        c.arg("--socket").arg(self.socket());
        c
    }

    /// Runs tcctl with `stdin` as its input.
    pub fn tcctl(&self, args: &[&str], stdin: &str) -> Output {
        let mut c = self.command();
        c.args(args);
        run_with_input(c, stdin)
    }

    /// tcctl that must succeed; its standard output.
    pub fn ok(&self, args: &[&str], stdin: &str) -> String {
        succeeded(args, self.tcctl(args, stdin), "")
    }

    /// The exit code of a tcctl that must fail, and its message.
    pub fn fails(&self, args: &[&str], stdin: &str) -> (i32, String) {
        let out = self.tcctl(args, stdin);
        assert!(!out.status.success(), "tcctl {args:?} should have failed");
        // A search past 10 s (a loaded machine) says so on a line of its
        // own first: progress, not the failure the tests read.
        let said: String = String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| !l.starts_with("tcctl: still searching for the header"))
            .map(|l| format!("{l}\n"))
            .collect();
        (out.status.code().unwrap_or(-1), said)
    }

    /// Waits (up to 30 s) until the daemon's log says `line`.
    pub fn wait_for_log(&self, line: &str, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let log = std::fs::read_to_string(self.path("tcd.log")).unwrap_or_default();
            if log.contains(line) {
                return;
            }
            assert!(Instant::now() < deadline, "{what}: {log}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The volumes of `tcctl list --json` (its `volumes` array).
    pub fn list(&self) -> serde_json::Value {
        let doc: serde_json::Value =
            serde_json::from_str(&self.ok(&["list", "--json"], "")).expect("list --json");
        doc["volumes"].clone()
    }

    pub fn stop(&mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("running");
        send_signal(child.id(), 15);
        child.wait().expect("wait for tcd")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.stop();
        }
    }
}

/// kill(2): sends `sig` to process `pid`.
pub fn send_signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) takes a pid and a signal number; no memory is shared.
    unsafe { libc_kill(pid as i32, sig) };
}

unsafe extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

/// A child process stopped with SIGTERM and reaped on drop, even when a
/// test fails first.
pub struct Stopped(pub Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        // Not once reaped: its pid may belong to another process by now.
        if let Ok(None) = self.0.try_wait() {
            send_signal(self.0.id(), 15);
            let _ = self.0.wait();
        }
    }
}

/// A private dbus-daemon of the test's own, stopped on drop.
pub struct PrivateBus {
    pub address: String,
    pid: u32,
}

impl PrivateBus {
    /// A session bus.
    pub fn session() -> PrivateBus {
        Self::start(&["--session"])
    }

    /// A bus from `config` (the address is the one it listens on,
    /// `listen`).
    pub fn from_config(config: &std::path::Path, listen: &str) -> PrivateBus {
        let mut bus = Self::start(&[&format!("--config-file={}", config.display())]);
        bus.address = listen.to_owned();
        bus
    }

    fn start(args: &[&str]) -> PrivateBus {
        let out = Command::new(crate::require_tool("dbus-daemon", "package dbus"))
            .args(args)
            .args(["--fork", "--print-address=1", "--print-pid=1"])
            .output()
            .expect("dbus-daemon");
        assert!(
            out.status.success(),
            "dbus-daemon starts: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut lines = text.lines();
        let address = lines.next().expect("address").trim().to_owned();
        let pid = lines
            .next()
            .and_then(|p| p.trim().parse().ok())
            .expect("pid");
        PrivateBus { address, pid }
    }

    /// `tcctl --session` on this bus with `stdin` as its input; its output.
    pub fn tcctl(&self, args: &[&str], stdin: &str) -> Output {
        let mut c = Command::new(build_dir().join("tcctl"));
        c.arg("--session")
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address);
        run_with_input(c, stdin)
    }

    /// Waits (20 s at most) until a daemon answers `tcctl list` on this bus.
    pub fn wait_for_tcd(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !self.tcctl(&["list"], "").status.success() {
            assert!(Instant::now() < deadline, "tcd did not appear on the bus");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for PrivateBus {
    fn drop(&mut self) {
        send_signal(self.pid, 15);
    }
}

/// A daemon of its own on a private bus, served as if it were the system
/// bus (`tcd --system`, `tcctl --system` with `DBUS_SYSTEM_BUS_ADDRESS`);
/// no polkit there, so root only.
pub struct BusDaemon {
    // Fields drop in order: the daemon before its bus and its folder.
    _tcd: Stopped,
    pub bus: PrivateBus,
    pub dir: tempfile::TempDir,
}

impl BusDaemon {
    pub fn start() -> BusDaemon {
        require_root_and_fuse();
        let dir = tempfile::tempdir().expect("temp dir");
        let bus = PrivateBus::session();
        let p = |n: &str| dir.path().join(n);
        let tcd = Stopped(
            Command::new(build_dir().join("tcd"))
                .args(["--system", "--runtime-dir"])
                .arg(p("run"))
                .arg("--state-dir")
                .arg(p("state"))
                .arg("--system-favorites")
                .arg(p("system-favorites.toml"))
                .arg("--backend-dir")
                .arg(build_dir())
                .env("DBUS_SYSTEM_BUS_ADDRESS", &bus.address)
                .env("TCD_LOG", "info,fuser=error")
                .stdin(Stdio::null())
                .stderr(std::fs::File::create(p("tcd.log")).expect("log"))
                .spawn()
                .expect("tcd --system"),
        );
        let d = BusDaemon {
            _tcd: tcd,
            bus,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !d.tcctl(&["list"], "").status.success() {
            assert!(Instant::now() < deadline, "tcd did not come on the bus");
            std::thread::sleep(Duration::from_millis(100));
        }
        d
    }

    /// The daemon's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("tcd.log")).unwrap_or_default()
    }

    /// `tcctl --system`, on this bus, for the caller to finish and start.
    pub fn command(&self) -> Command {
        let mut c = Command::new(build_dir().join("tcctl"));
        c.arg("--system")
            .env("DBUS_SYSTEM_BUS_ADDRESS", &self.bus.address);
        c
    }

    /// Runs tcctl with `stdin` as its input.
    pub fn tcctl(&self, args: &[&str], stdin: &str) -> Output {
        let mut c = self.command();
        c.args(args);
        run_with_input(c, stdin)
    }

    /// tcctl that must succeed (else the daemon's log is shown too); its
    /// standard output.
    pub fn ok(&self, args: &[&str], stdin: &str) -> String {
        succeeded(args, self.tcctl(args, stdin), &self.log())
    }
}

/// The note tcctl gives without a terminal when a header search is still
/// running after 10 s (after `tcctl: `, or a device's name with
/// `mount-devices`): whether it comes depends on this machine's speed, so
/// [`run_with_input`] leaves it out (its own test reads it).
pub const STILL_SEARCHING: &str = "still searching for the header (";

/// Runs `command` with `stdin` as its input; its output, without the
/// [`STILL_SEARCHING`] lines.
pub fn run_with_input(command: Command, stdin: &str) -> Output {
    let mut out = run_raw(command, stdin);
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    if text.contains(STILL_SEARCHING) {
        out.stderr = text
            .split_inclusive('\n')
            .filter(|l| !(l.starts_with("tcctl: ") && l.contains(STILL_SEARCHING)))
            .collect::<String>()
            .into_bytes();
    }
    out
}

fn run_raw(mut command: Command, stdin: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tcctl");
    // tcctl may refuse before reading its input (a missing file).
    let written = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    child.wait_with_output().expect("tcctl output")
}

/// The standard output of a tcctl run that must have succeeded.
fn succeeded(args: &[&str], out: Output, log: &str) -> String {
    assert!(
        out.status.success(),
        "tcctl {args:?} failed ({:?}): {}\n{log}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
