//! The daemon as it runs in production, for tests that attack it: `tcd
//! --system` on a private dbus-daemon of type "system" with the shipped bus
//! policy (`dist/dbus/org.tcd.Tcd1.conf`), a real polkitd reading the
//! shipped actions (`dist/polkit/org.tcd.policy`), and two unprivileged
//! users who call it through `tcctl` (or any program) run with their own
//! uid and gid.
//!
//! A headless machine has no active login session, so a rules file stands
//! in for one: it grants the two test users what the actions give active
//! local users (`org.tcd.use-file`), nothing more; the second may not
//! change the backend policy or the system's favorites at all (polkit
//! says no, not "authenticate").
//! The actions and the rules files are installed where polkitd reads them
//! and left there: tests in parallel share them, and their content never
//! changes.
//!
//! Needs root, /dev/fuse, dbus-daemon, polkitd, setpriv, useradd, mkfs.ext4.

use crate::daemon::{PrivateBus, Stopped, run_with_input};
use crate::{build_dir, repo_dir, require_root_and_fuse, require_tool};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const ACTIONS: &str = "/usr/share/polkit-1/actions/org.tcd.policy";
const RULES: &str = "/etc/polkit-1/rules.d/49-tcd-test-users.rules";
/// polkit refuses the second test user outright what an administrator's
/// password would allow (`org.tcd.set-policy`,
/// `org.tcd.manage-system-favorites`): a user who may not.
const REFUSED: &str = "/etc/polkit-1/rules.d/48-tcd-test-refused.rules";
const POLKITD: &str = "/usr/lib/polkit-1/polkitd";
/// The two unprivileged test users.
pub const USERS: [&str; 2] = ["tcdtest1", "tcdtest2"];
/// Debian's Python, with python3-jeepney: a user other than root cannot
/// run a Python of root's own (pyenv's shims live under /root).
pub const PYTHON: &str = "/usr/bin/python3";
/// How volumes made by [`System::create_volume`] open quickly: PIM 1,
/// SHA-512, the password on standard input.
pub const OPEN_FAST: [&str; 5] = ["--pim", "1", "--hash", "sha512", "--password-stdin"];
/// The password of volumes made by [`System::create_volume`].
pub const PASSWORD: &str = "user words, twenty and more";

/// A new ext4 volume of 24 MiB mounted by root on `d`'s folder `mnt`:
/// the mount point and the volume's object path.
pub fn mounted_ext4(d: &crate::daemon::Daemon) -> (PathBuf, String) {
    let (vol, mnt) = (d.path("v.hc"), d.path("mnt"));
    std::fs::create_dir(&mnt).expect("mount point");
    let mut args = vec![
        "create",
        crate::s(&vol),
        "--size",
        "24M",
        "--filesystem",
        "ext4",
    ];
    args.extend(OPEN_FAST);
    d.ok(&args, &format!("{PASSWORD}\n"));
    let mut args = vec!["mount", crate::s(&vol), crate::s(&mnt)];
    args.extend(OPEN_FAST);
    d.ok(&args, &format!("{PASSWORD}\n"));
    let object = d.list()[0]["object"]
        .as_str()
        .expect("object path")
        .to_owned();
    (mnt, object)
}

/// An unprivileged user of the machine, with a private home folder.
#[derive(Debug, Clone)]
pub struct User {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
    /// Mode 0700, the user's, holding an empty folder `mnt` of theirs.
    pub home: PathBuf,
}

impl User {
    /// `home/name`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.home.join(name)
    }
}

/// Private system bus, polkitd and `tcd --system`, stopped on drop.
pub struct System {
    // Fields drop in order: the daemon, then polkit, then the bus.
    tcd: Stopped,
    _polkit: Stopped,
    _bus: PrivateBus,
    pub users: [User; 2],
    pub address: String,
    pub dir: tempfile::TempDir,
    setpriv: PathBuf,
}

impl System {
    pub fn start() -> System {
        Self::start_with(&[])
    }

    /// With extra arguments for `tcd`.
    pub fn start_with(tcd_args: &[&str]) -> System {
        require_root_and_fuse();
        require_tool("mkfs.ext4", "package e2fsprogs");
        let setpriv = require_tool("setpriv", "package util-linux");
        assert!(
            Path::new(POLKITD).is_file(),
            "{POLKITD} missing: install package polkitd"
        );
        install_polkit_files();
        let dir = tempfile::Builder::new()
            .prefix("tcd-system-")
            .tempdir()
            .expect("temp dir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        let conf = bus_config(dir.path());
        let address = format!(
            "unix:path={}",
            dir.path().join("system_bus_socket").display()
        );
        let bus = PrivateBus::from_config(&conf, &address);
        let polkit = Stopped(
            Command::new(POLKITD)
                .arg("--no-debug")
                .env("DBUS_SYSTEM_BUS_ADDRESS", &address)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("polkitd"),
        );
        wait_for_name(&address, "org.freedesktop.PolicyKit1");
        let p = |n: &str| dir.path().join(n);
        let tcd = Stopped(
            Command::new(build_dir().join("tcd"))
                .args(["--system", "--runtime-dir"])
                .arg(p("run"))
                .arg("--policy")
                .arg(p("policy.toml"))
                .arg("--state-dir")
                .arg(p("state"))
                .arg("--system-favorites")
                .arg(p("system-favorites.toml"))
                .arg("--backend-dir")
                .arg(build_dir())
                .args(tcd_args)
                .env("DBUS_SYSTEM_BUS_ADDRESS", &address)
                .env("TCD_LOG", "info,fuser=error")
                .stdin(Stdio::null())
                .stderr(std::fs::File::create(p("tcd.log")).expect("log"))
                .spawn()
                .expect("tcd --system"),
        );
        wait_for_name(&address, "org.tcd.Tcd1");
        let users = USERS.map(|name| make_user(dir.path(), name));
        System {
            tcd,
            _polkit: polkit,
            _bus: bus,
            users,
            address,
            dir,
            setpriv,
        }
    }

    pub fn tcd_pid(&self) -> u32 {
        self.tcd.0.id()
    }

    /// The daemon's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("tcd.log")).unwrap_or_default()
    }

    /// `program` as `who` (root for `None`), with this bus as the system
    /// bus; not started.
    pub fn command(&self, who: Option<&User>, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = match who {
            Some(u) => {
                let mut c = Command::new(&self.setpriv);
                c.arg(format!("--reuid={}", u.uid))
                    .arg(format!("--regid={}", u.gid))
                    .arg("--clear-groups")
                    .arg(program);
                c
            }
            None => Command::new(program),
        };
        c.env("DBUS_SYSTEM_BUS_ADDRESS", &self.address);
        c
    }

    /// Runs shell `script` as `who`; fails the test unless it succeeds.
    pub fn sh(&self, who: &User, script: &str) {
        let st = self
            .command(Some(who), "sh")
            .args(["-c", script])
            .status()
            .expect("sh");
        assert!(st.success(), "as {}: {script}", who.name);
    }

    /// `tcctl --system` as `who`; not started.
    pub fn tcctl_command(&self, who: Option<&User>) -> Command {
        let mut c = self.command(who, build_dir().join("tcctl"));
        c.arg("--system");
        c
    }

    /// Runs tcctl as `who` with `stdin` as its input.
    pub fn tcctl(&self, who: Option<&User>, args: &[&str], stdin: &str) -> Output {
        let mut c = self.tcctl_command(who);
        c.args(args);
        run_with_input(c, stdin)
    }

    /// tcctl as `who`, started with `stdin` written to it and its output
    /// discarded: a client to race, wait for with a bound, or kill.
    pub fn spawn_tcctl(&self, who: Option<&User>, args: &[&str], stdin: &str) -> Child {
        let mut child = self
            .tcctl_command(who)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tcctl");
        if let Some(mut input) = child.stdin.take() {
            let _ = std::io::Write::write_all(&mut input, stdin.as_bytes());
        }
        child
    }

    /// tcctl as `who` that must succeed; its standard output.
    pub fn ok(&self, who: Option<&User>, args: &[&str], stdin: &str) -> String {
        let out = self.tcctl(who, args, stdin);
        assert!(
            out.status.success(),
            "tcctl {args:?} as {:?} failed ({:?}): {}\n{}",
            who.map(|u| &u.name),
            out.status.code(),
            String::from_utf8_lossy(&out.stderr),
            self.log()
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `tcctl list --json` as `who`.
    /// The volumes of `tcctl list --json` as `who` (its `volumes` array).
    pub fn list(&self, who: Option<&User>) -> serde_json::Value {
        let doc: serde_json::Value =
            serde_json::from_str(&self.ok(who, &["list", "--json"], "")).expect("list --json");
        doc["volumes"].clone()
    }

    /// Makes `name` (`size`, e.g. "24M") in `who`'s home as that user:
    /// VeraCrypt, ext4, SHA-512, PIM 1, [`PASSWORD`].
    pub fn create_volume(&self, who: &User, name: &str, size: &str) -> PathBuf {
        let vol = who.path(name);
        let mut args = vec![
            "create",
            path_str(&vol),
            "--size",
            size,
            "--filesystem",
            "ext4",
        ];
        args.extend(OPEN_FAST);
        self.ok(Some(who), &args, &format!("{PASSWORD}\n"));
        vol
    }

    /// Mounts `volume` on `mount_point` as `who` (SHA-512, PIM 1,
    /// [`PASSWORD`]).
    pub fn mount(&self, who: &User, volume: &Path, mount_point: &Path) {
        let mut args = vec!["mount", path_str(volume), path_str(mount_point)];
        args.extend(OPEN_FAST);
        self.ok(Some(who), &args, &format!("{PASSWORD}\n"));
    }
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// The shipped actions, and the rules file that stands in for an active
/// session of the test users.
fn install_polkit_files() {
    let actions = std::fs::read(repo_dir().join("dist/polkit/org.tcd.policy")).expect("actions");
    if std::fs::read(ACTIONS).ok().as_ref() != Some(&actions) {
        std::fs::create_dir_all(Path::new(ACTIONS).parent().expect("folder")).expect("mkdir");
        write_atomically(Path::new(ACTIONS), &actions);
    }
    let rules = format!(
        "polkit.addRule(function(action, subject) {{\n  if (action.id == \"org.tcd.use-file\" && [{}].indexOf(subject.user) >= 0) {{\n    return polkit.Result.YES;\n  }}\n}});\n",
        USERS.map(|u| format!("\"{u}\"")).join(", ")
    );
    let refused = format!(
        "polkit.addRule(function(action, subject) {{\n  if ((action.id == \"org.tcd.set-policy\" || action.id == \"org.tcd.manage-system-favorites\") && subject.user == \"{}\") {{\n    return polkit.Result.NO;\n  }}\n}});\n",
        USERS[1]
    );
    for (path, text) in [(RULES, rules), (REFUSED, refused)] {
        if std::fs::read_to_string(path).ok().as_deref() != Some(text.as_str()) {
            std::fs::create_dir_all("/etc/polkit-1/rules.d").expect("rules folder");
            write_atomically(Path::new(path), text.as_bytes());
        }
    }
}

/// Tests in parallel install the same files: never show one half-written.
fn write_atomically(path: &Path, bytes: &[u8]) {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}-{n}", std::process::id()));
    std::fs::write(&tmp, bytes).expect("write");
    std::fs::rename(&tmp, path).expect("rename");
}

/// Makes the test user `name` if missing, with a fresh home under `dir`.
fn make_user(dir: &Path, name: &str) -> User {
    let id = |flag: &str| -> Option<u32> {
        let out = Command::new("id").args([flag, name]).output().ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    };
    if id("-u").is_none() {
        let out = Command::new(require_tool("useradd", "package passwd"))
            .args(["--no-create-home", "--shell", "/usr/sbin/nologin", name])
            .output()
            .expect("useradd");
        // A test in parallel may have made it meanwhile.
        assert!(
            out.status.success() || id("-u").is_some(),
            "useradd {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let (uid, gid) = (id("-u").expect("uid"), id("-g").expect("gid"));
    let home = dir.join(name);
    std::fs::create_dir(&home).expect("home");
    std::fs::create_dir(home.join("mnt")).expect("mount point");
    for p in [home.clone(), home.join("mnt")] {
        std::os::unix::fs::chown(&p, Some(uid), Some(gid)).expect("chown");
    }
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    User {
        name: name.to_owned(),
        uid,
        gid,
        home,
    }
}

fn bus_config(dir: &Path) -> PathBuf {
    let conf = dir.join("bus.conf");
    let text = format!(
        r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={bus}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus"/>
  </policy>
  <policy user="root">
    <allow own="org.freedesktop.PolicyKit1"/>
  </policy>
  <include>/usr/share/dbus-1/system.d/org.freedesktop.PolicyKit1.conf</include>
  <include>{tcd}</include>
</busconfig>
"#,
        bus = dir.join("system_bus_socket").display(),
        tcd = repo_dir().join("dist/dbus/org.tcd.Tcd1.conf").display(),
    );
    std::fs::write(&conf, text).expect("bus config");
    conf
}

/// Waits until `name` has an owner on the bus at `address`.
pub fn wait_for_name(address: &str, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = Command::new(require_tool("dbus-send", "package dbus"))
            .args([
                &format!("--bus={address}"),
                "--print-reply",
                "--dest=org.freedesktop.DBus",
                "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner",
                &format!("string:{name}"),
            ])
            .output()
            .expect("dbus-send");
        if String::from_utf8_lossy(&out.stdout).contains("boolean true") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name} did not appear on the bus"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A polkit rule, for one test only, that lets `user` use devices (as an
/// administrator may let a group): in the rules folder under `name`
/// until dropped.
pub struct DeviceGrant(PathBuf);

impl DeviceGrant {
    pub fn new(user: &str, name: &str) -> DeviceGrant {
        let path = PathBuf::from(format!("/etc/polkit-1/rules.d/48-tcd-test-{name}.rules"));
        let rule = format!(
            "polkit.addRule(function(action, subject) {{\n  if (action.id == \"org.tcd.use-device\" && subject.user == \"{user}\") {{\n    return polkit.Result.YES;\n  }}\n}});\n"
        );
        std::fs::create_dir_all("/etc/polkit-1/rules.d").expect("rules folder");
        std::fs::write(&path, rule).expect("rules file");
        DeviceGrant(path)
    }
}

impl Drop for DeviceGrant {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
