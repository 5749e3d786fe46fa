//! Remembered passwords of favorite volumes, in the user's own keyring:
//! the freedesktop Secret Service on a desktop, the kernel keyring
//! elsewhere. Only `tcctl`, in the user's session, stores and reads them;
//! the root daemon never sees the keyring.
//!
//! Entries: service "tcd", user "favorite:<name>" (the keyring itself is
//! per user). In the Secret Service that is an item with the attributes
//! `service=tcd username=favorite:<name>` and the label
//! `keyring:favorite:<name>@tcd`, in the default (login) collection.
//!
//! In the kernel it is a key of type "user" described
//! `keyring:favorite:<name>@tcd:<login>`, which linux-keyutils-keyring-store adds
//! to the session keyring (@s) and links into the user's persistent
//! keyring. @s is the login session's keyring (pam_keyinit), shared by
//! every process of that login, so the key outlives each `tcctl` run;
//! where no session keyring was set up, the kernel gives the process the
//! user-session keyring (@us), which every process of the user shares.
//! The persistent link keeps the key across logouts until the persistent
//! keyring expires (/proc/sys/kernel/keys/persistent_keyring_expiry, 3
//! days by default, renewed on use), like the Secret Service keeps it on
//! disk. A reboot clears it. We keep that behaviour: the user asked us to
//! remember.
//!
//! The kernel's keyrings belong to a uid, not to an account: deleting a
//! user leaves their persistent keyring until it expires, and a new
//! account given the same uid would own it. The login name in the key's
//! description keeps such an account from reading the keys of the one
//! before (`tcctl favorites forget` before `userdel` removes them).

use crate::bus::{Failure, exit};
use keyring_core::{CredentialStore, Entry, Error};
use std::ffi::{CStr, OsStr};
use std::fmt;
use std::sync::Arc;
use zeroize::Zeroizing;

const SERVICE: &str = "tcd";
const SECRETS_NAME: &str = "org.freedesktop.secrets";

/// Where a password is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    SecretService,
    KernelKeyring,
}

impl fmt::Display for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Store::SecretService => "Secret Service",
            Store::KernelKeyring => "kernel keyring",
        })
    }
}

/// Stores the favorite's password; returns where it went.
pub fn store(favorite: &str, password: &[u8]) -> Result<Store, Failure> {
    let store = chosen()?;
    store_in(store, favorite, password)?;
    Ok(store)
}

/// The stored password, if there is one (Ok(None) when nothing is stored).
pub fn load(favorite: &str) -> Result<Option<Zeroizing<Vec<u8>>>, Failure> {
    load_from(chosen()?, favorite)
}

/// Removes it; Ok(true) if one was there.
pub fn forget(favorite: &str) -> Result<bool, Failure> {
    forget_in(chosen()?, favorite)
}

/// The store this session uses, the same for every call so that a password
/// is read back from where it was put.
fn chosen() -> Result<Store, Failure> {
    choose(
        std::env::var_os("TCD_KEYRING").as_deref(),
        std::env::var_os("DBUS_SESSION_BUS_ADDRESS").as_deref(),
    )
}

/// `forced` is `$TCD_KEYRING`, `session_bus` `$DBUS_SESSION_BUS_ADDRESS`.
fn choose(forced: Option<&OsStr>, session_bus: Option<&OsStr>) -> Result<Store, Failure> {
    match forced.filter(|f| !f.is_empty()) {
        None => Ok(match secret_service_on(session_bus) {
            Ok(()) => Store::SecretService,
            Err(_) => Store::KernelKeyring,
        }),
        Some(f) if f == "kernel" => Ok(Store::KernelKeyring),
        Some(f) if f == "secret-service" => match secret_service_on(session_bus) {
            Ok(()) => Ok(Store::SecretService),
            Err(why) => Err(Failure {
                code: exit::FAILED,
                message: format!(
                    "{}: not available (TCD_KEYRING=secret-service): {why}",
                    Store::SecretService
                ),
            }),
        },
        Some(f) => Err(Failure::invalid(format!(
            "TCD_KEYRING={}: expected secret-service or kernel",
            f.to_string_lossy()
        ))),
    }
}

/// Ok when the session bus has a Secret Service running or can start one;
/// else why not.
fn secret_service_on(session_bus: Option<&OsStr>) -> Result<(), String> {
    let address = session_bus
        .filter(|a| !a.is_empty())
        .ok_or("DBUS_SESSION_BUS_ADDRESS is not set")?
        .to_str()
        .ok_or("DBUS_SESSION_BUS_ADDRESS is not UTF-8")?;
    let conn = zbus::blocking::connection::Builder::address(address)
        .and_then(|b| b.build())
        .map_err(|e| format!("cannot reach the session bus: {e}"))?;
    let dbus = zbus::blocking::fdo::DBusProxy::new(&conn).map_err(|e| e.to_string())?;
    let name = zbus::names::BusName::try_from(SECRETS_NAME).map_err(|e| e.to_string())?;
    if dbus.name_has_owner(name).unwrap_or(false) {
        return Ok(());
    }
    let activatable = dbus
        .list_activatable_names()
        .map(|names| names.iter().any(|n| n.as_str() == SECRETS_NAME))
        .unwrap_or(false);
    if activatable {
        Ok(())
    } else {
        Err(format!("no {SECRETS_NAME} on the session bus"))
    }
}

fn entry(store: Store, favorite: &str) -> Result<Entry, Failure> {
    if favorite.is_empty() {
        return Err(Failure::invalid("a favorite needs a name".to_string()));
    }
    let backend: Result<Arc<CredentialStore>, Error> = match store {
        Store::SecretService => {
            zbus_secret_service_keyring_store::Store::new().map(|s| s as Arc<CredentialStore>)
        }
        Store::KernelKeyring => {
            link_persistent_keyring();
            linux_keyutils_keyring_store::Store::new().map(|s| s as Arc<CredentialStore>)
        }
    };
    let service = match store {
        Store::SecretService => SERVICE.to_owned(),
        Store::KernelKeyring => format!("{SERVICE}:{}", login_name(store)?),
    };
    backend
        .and_then(|b| Entry::new_in_store(&b, &service, &format!("favorite:{favorite}")))
        .map_err(|e| failure(store, e))
}

/// Links the user's persistent keyring into this process's session
/// keyring (joining a new one where there is none), as `keyctl
/// get_persistent @s` does. A key stored earlier is kept there, linked
/// from the session that stored it: once that session (or, without
/// pam_keyinit, the user-session keyring) is gone, only this link lets the
/// next run find it, or forget it. A kernel without persistent keyrings
/// refuses, and the session keyring alone is used.
fn link_persistent_keyring() {
    const KEYCTL_GET_PERSISTENT: libc::c_long = 22;
    const KEY_SPEC_SESSION_KEYRING: libc::c_long = -3;
    // SAFETY: keyctl(KEYCTL_GET_PERSISTENT, uid, keyring) takes two
    // integers and touches no memory of ours; -1 is this process's uid.
    let _ = unsafe {
        libc::syscall(
            libc::SYS_keyctl,
            KEYCTL_GET_PERSISTENT,
            -1 as libc::c_long,
            KEY_SPEC_SESSION_KEYRING,
        )
    };
}

/// The login name of this process's user, from the password database.
fn login_name(store: Store) -> Result<String, Failure> {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: an all-zero passwd (null pointers, zero ids) is a valid value
    // for getpwuid_r to overwrite.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is to live memory of the size given; on success
    // the strings in `pw` point into `buf`, which outlives their use here.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr(), buf.len(), &mut found) };
    if rc != 0 || found.is_null() || pw.pw_name.is_null() {
        return Err(Failure {
            code: exit::FAILED,
            message: format!("{store}: uid {uid} has no login name in the password database"),
        });
    }
    // SAFETY: getpwuid_r succeeded: pw_name is a NUL-terminated string in
    // `buf`.
    let name = unsafe { CStr::from_ptr(pw.pw_name) };
    Ok(name.to_string_lossy().into_owned())
}

fn store_in(store: Store, favorite: &str, password: &[u8]) -> Result<(), Failure> {
    // The kernel store refuses empty secrets; refuse them in both stores
    // alike.
    if password.is_empty() {
        return Err(Failure::invalid(
            "nothing to remember: the password is empty".to_string(),
        ));
    }
    entry(store, favorite)?
        .set_secret(password)
        .map_err(|e| failure(store, e))
}

fn load_from(store: Store, favorite: &str) -> Result<Option<Zeroizing<Vec<u8>>>, Failure> {
    match entry(store, favorite)?.get_secret() {
        Ok(secret) => Ok(Some(Zeroizing::new(secret))),
        Err(Error::NoEntry) => Ok(None),
        Err(e) => Err(failure(store, e)),
    }
}

fn forget_in(store: Store, favorite: &str) -> Result<bool, Failure> {
    match entry(store, favorite)?.delete_credential() {
        Ok(()) => Ok(true),
        Err(Error::NoEntry) => Ok(false),
        // Another program added a second item with our attributes: the
        // user asked for none to be left.
        Err(Error::Ambiguous(items)) => {
            for item in items {
                item.delete_credential().map_err(|e| failure(store, e))?;
            }
            Ok(true)
        }
        Err(e) => Err(failure(store, e)),
    }
}

/// The message names the store and never holds secret bytes: the variants
/// that carry some have them wiped here.
fn failure(store: Store, e: Error) -> Failure {
    let (code, what) = match e {
        Error::NoStorageAccess(why) => (exit::PERMISSION_DENIED, format!("no access: {why}")),
        Error::PlatformFailure(why) => (exit::FAILED, why.to_string()),
        Error::BadEncoding(bytes) => {
            drop(Zeroizing::new(bytes));
            (exit::FAILED, "the stored password is malformed".to_string())
        }
        Error::BadDataFormat(bytes, why) => {
            drop(Zeroizing::new(bytes));
            (
                exit::FAILED,
                format!("the stored password is malformed: {why}"),
            )
        }
        Error::Ambiguous(items) => (
            exit::FAILED,
            format!(
                "{} items hold this favorite's password; forget it, then store it again",
                items.len()
            ),
        ),
        Error::TooLong(what, limit) => (
            exit::INVALID_ARGUMENT,
            format!("the {what} is longer than the limit of {limit}"),
        ),
        Error::Invalid(what, why) => (exit::INVALID_ARGUMENT, format!("invalid {what}: {why}")),
        other => (exit::FAILED, other.to_string()),
    };
    let hint = match store {
        Store::SecretService => " (TCD_KEYRING=kernel uses the kernel keyring instead)",
        // Seen where no login set up a session keyring (no pam_keyinit):
        // the user-session keyring's keys cannot be linked to the
        // persistent keyring.
        Store::KernelKeyring if code == exit::PERMISSION_DENIED => {
            " (is there a session keyring? logins get one from pam_keyinit; `keyctl session -` starts one)"
        }
        Store::KernelKeyring => "",
    };
    Failure {
        code,
        message: format!("{store}: {what}{hint}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader, Write};
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Output, Stdio};
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

    /// A non-UTF-8 byte and a NUL: passwords are bytes, not strings.
    const PASSWORD: &[u8] = b"p\xe4ss\0w\xffrd";

    /// A tool a test needs; missing, the test fails and names its package.
    fn tool(name: &str, package: &str) -> PathBuf {
        std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("{name} not found: install the Debian package {package}"))
    }

    fn unique(what: &str) -> String {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        format!("test-{what}-{}-{nanos}", std::process::id())
    }

    fn run(cmd: &mut Command) -> Output {
        cmd.output()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
    }

    fn run_with_stdin(cmd: &mut Command, input: &[u8]) -> Output {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    }

    fn stdout_line(out: &Output) -> String {
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    #[test]
    fn store_names_read_as_users_see_them() {
        assert_eq!(Store::SecretService.to_string(), "Secret Service");
        assert_eq!(Store::KernelKeyring.to_string(), "kernel keyring");
    }

    #[test]
    fn tcd_keyring_forces_a_store() {
        let os = |s: &'static str| Some(OsStr::new(s));
        let dead_bus = os("unix:path=/nonexistent/tcd-test-bus");
        assert_eq!(choose(os("kernel"), None).unwrap(), Store::KernelKeyring);
        assert_eq!(
            choose(os("kernel"), dead_bus).unwrap(),
            Store::KernelKeyring
        );

        // No Secret Service to be had: the kernel keyring, unless forced.
        assert_eq!(choose(None, None).unwrap(), Store::KernelKeyring);
        assert_eq!(choose(os(""), dead_bus).unwrap(), Store::KernelKeyring);
        let e = choose(os("secret-service"), None).unwrap_err();
        assert_eq!(e.code, exit::FAILED);
        assert!(
            e.message.starts_with("Secret Service: not available"),
            "{}",
            e.message
        );
        assert!(
            e.message.contains("DBUS_SESSION_BUS_ADDRESS is not set"),
            "{}",
            e.message
        );
        let e = choose(os("secret-service"), dead_bus).unwrap_err();
        assert!(
            e.message.contains("cannot reach the session bus"),
            "{}",
            e.message
        );

        let e = choose(os("gnome"), None).unwrap_err();
        assert_eq!(e.code, exit::INVALID_ARGUMENT);
        assert!(e.message.contains("TCD_KEYRING=gnome"), "{}", e.message);
    }

    #[test]
    fn empty_password_or_name_is_refused() {
        let e = store_in(Store::KernelKeyring, &unique("empty"), b"").unwrap_err();
        assert_eq!(e.code, exit::INVALID_ARGUMENT);
        assert!(e.message.contains("password is empty"), "{}", e.message);
        let e = store_in(Store::KernelKeyring, "", PASSWORD).unwrap_err();
        assert_eq!(e.code, exit::INVALID_ARGUMENT);
    }

    /// Runs this module's test `test` again, in a child process that
    /// `cmd` (a command line to which the test binary is appended) starts
    /// with `marker` set, and fails unless it passed there.
    fn rerun(mut cmd: Command, test: &str, marker: &str) {
        let module = module_path!().split_once("::").unwrap().1;
        let out = run(cmd
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", &format!("{module}::{test}"), "--nocapture"])
            .env(marker, "1"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{test} in its child process: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A child's time limit: a hung keyring fails the test, not CI.
    fn timeout() -> Command {
        let mut cmd = Command::new(tool("timeout", "coreutils"));
        cmd.arg("120");
        cmd
    }

    /// Set in the kernel test's child, which runs in a session keyring of
    /// its own, as a login with pam_keyinit does: the test then does not
    /// depend on how it was started.
    const IN_KEY_SESSION: &str = "TCD_KEYSTORE_TEST_KEY_SESSION";

    /// Forgets a test's favorites however it ends: the persistent keyring
    /// would keep them for days.
    struct Forget(Store, Vec<String>);

    impl Drop for Forget {
        fn drop(&mut self) {
            for name in &self.1 {
                let _ = forget_in(self.0, name);
            }
        }
    }

    /// The key's id in `keyring` (searched recursively), if there is one.
    fn key_in(keyctl: &Path, keyring: &str, description: &str) -> Option<String> {
        let out = run(Command::new(keyctl).args(["search", keyring, "user", description]));
        out.status.success().then(|| stdout_line(&out))
    }

    /// The ids linked directly in `keyring`.
    fn linked(keyctl: &Path, keyring: &str) -> Vec<String> {
        let out = run(Command::new(keyctl).args(["rlist", keyring]));
        assert!(out.status.success(), "keyctl rlist {keyring}: {out:?}");
        stdout_line(&out)
            .split_whitespace()
            .map(str::to_string)
            .collect()
    }

    /// A key an earlier account of this uid left (another login name, or
    /// none) is never read, nor forgotten for `name`.
    fn an_earlier_accounts_key_is_not_read(keyctl: &Path, name: &str) {
        let left = [
            format!("keyring:favorite:{name}@tcd:former-account"),
            format!("keyring:favorite:{name}@tcd"),
        ];
        for description in &left {
            let out = run_with_stdin(
                Command::new(keyctl).args(["padd", "user", description, "@s"]),
                b"old password",
            );
            assert!(out.status.success(), "keyctl padd: {out:?}");
        }
        assert_eq!(load_from(Store::KernelKeyring, name).unwrap(), None);
        assert!(!forget_in(Store::KernelKeyring, name).unwrap());
        for description in &left {
            let id = key_in(keyctl, "@s", description).expect("the earlier account's key");
            let out = run(Command::new(keyctl).args(["unlink", &id, "@s"]));
            assert!(out.status.success(), "keyctl unlink: {out:?}");
        }
    }

    #[test]
    fn kernel_keyring_round_trip() {
        let keyctl = tool("keyctl", "keyutils");
        if std::env::var_os(IN_KEY_SESSION).is_none() {
            let mut cmd = timeout();
            cmd.arg(&keyctl).args(["session", "-"]);
            return rerun(cmd, "kernel_keyring_round_trip", IN_KEY_SESSION);
        }
        let name = unique("kernel");
        let other = unique("kernel-other");
        let _cleanup = Forget(Store::KernelKeyring, vec![name.clone(), other.clone()]);
        let login = login_name(Store::KernelKeyring).unwrap();
        let description = format!("keyring:favorite:{name}@tcd:{login}");
        assert_eq!(load_from(Store::KernelKeyring, &name).unwrap(), None);

        store_in(Store::KernelKeyring, &name, b"first").unwrap();
        store_in(Store::KernelKeyring, &name, PASSWORD).unwrap();

        // Other processes of the session (keyctl here, the next tcctl run
        // in use) find the key in the session keyring itself, holding the
        // bytes given.
        let id = key_in(&keyctl, "@s", &description)
            .unwrap_or_else(|| panic!("no user key {description} in @s"));
        assert!(
            linked(&keyctl, "@s").contains(&id),
            "key {id} is not in @s itself"
        );
        let out = run(Command::new(&keyctl).args(["pipe", &id]));
        assert!(out.status.success(), "keyctl pipe: {out:?}");
        assert_eq!(out.stdout, PASSWORD, "the stored bytes (replaced once)");
        // And linked into the persistent keyring, where the kernel has one.
        let out = run(Command::new(&keyctl).args(["get_persistent", "@s"]));
        if out.status.success() {
            assert!(
                linked(&keyctl, &stdout_line(&out)).contains(&id),
                "key {id} is not in the persistent keyring"
            );
        }

        assert_eq!(
            load_from(Store::KernelKeyring, &name).unwrap().as_deref(),
            Some(&PASSWORD.to_vec())
        );
        assert!(forget_in(Store::KernelKeyring, &name).unwrap());
        assert_eq!(key_in(&keyctl, "@s", &description), None, "forgotten");
        assert_eq!(load_from(Store::KernelKeyring, &name).unwrap(), None);
        assert!(!forget_in(Store::KernelKeyring, &name).unwrap());

        an_earlier_accounts_key_is_not_read(&keyctl, &other);

        // What another process of the session stored is read.
        let description = format!("keyring:favorite:{other}@tcd:{login}");
        let out = run_with_stdin(
            Command::new(&keyctl).args(["padd", "user", &description, "@s"]),
            PASSWORD,
        );
        assert!(out.status.success(), "keyctl padd: {out:?}");
        assert_eq!(
            load_from(Store::KernelKeyring, &other).unwrap().as_deref(),
            Some(&PASSWORD.to_vec())
        );
        assert!(forget_in(Store::KernelKeyring, &other).unwrap());
        assert_eq!(key_in(&keyctl, "@s", &description), None);
    }

    /// Set in the Secret Service test's child, which runs inside a private
    /// session bus with its own gnome-keyring.
    const IN_PRIVATE_SESSION: &str = "TCD_KEYSTORE_TEST_PRIVATE_SESSION";

    /// A private session: a bus and a Secret Service (gnome-keyring, its
    /// login keyring unlocked with a test password) in a temporary home,
    /// so that the developer's own session is never touched.
    struct PrivateSession {
        dir: PathBuf,
        address: String,
        children: Vec<Child>,
    }

    impl PrivateSession {
        fn start() -> PrivateSession {
            let dbus_daemon = tool("dbus-daemon", "dbus-daemon");
            let keyring_daemon = tool("gnome-keyring-daemon", "gnome-keyring");
            let dir = std::env::temp_dir().join(unique("session"));
            for sub in ["home", "data", "config", "cache", "run"] {
                std::fs::create_dir_all(dir.join(sub)).unwrap();
            }
            let mut session = PrivateSession {
                dir,
                address: String::new(),
                children: Vec::new(),
            };
            let mut bus = session
                .command(&dbus_daemon)
                .args(["--session", "--nofork", "--print-address=1"])
                .stdout(Stdio::piped())
                .spawn()
                .expect("dbus-daemon");
            let stdout = bus.stdout.take().unwrap();
            session.children.push(bus);
            BufReader::new(stdout)
                .read_line(&mut session.address)
                .unwrap();
            session.address = session.address.trim().to_string();
            assert!(!session.address.is_empty(), "dbus-daemon gave no address");

            let log = std::fs::File::create(session.dir.join("gnome-keyring.log")).unwrap();
            // With an empty password gnome-keyring makes no login keyring.
            let mut keyring = session
                .command(&keyring_daemon)
                .args(["--foreground", "--components=secrets", "--unlock"])
                .env("DBUS_SESSION_BUS_ADDRESS", &session.address)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .expect("gnome-keyring-daemon");
            let mut stdin = keyring.stdin.take().unwrap();
            session.children.push(keyring);
            stdin.write_all(b"tcd-test").unwrap();
            drop(stdin);
            session.wait_for_login_keyring();
            session
        }

        /// A command with only this session's environment.
        fn command(&self, program: &Path) -> Command {
            let mut cmd = Command::new(program);
            cmd.env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("HOME", self.dir.join("home"))
                .env("XDG_DATA_HOME", self.dir.join("data"))
                .env("XDG_CONFIG_HOME", self.dir.join("config"))
                .env("XDG_CACHE_HOME", self.dir.join("cache"))
                .env("XDG_RUNTIME_DIR", self.dir.join("run"));
            cmd
        }

        fn wait_for_login_keyring(&self) {
            let conn = zbus::blocking::connection::Builder::address(self.address.as_str())
                .unwrap()
                .build()
                .unwrap();
            let dbus = zbus::blocking::fdo::DBusProxy::new(&conn).unwrap();
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                let owned = dbus
                    .name_has_owner(SECRETS_NAME.try_into().unwrap())
                    .unwrap_or(false);
                // Asked only once owned, so that the bus does not start
                // a locked gnome-keyring of its own.
                let default = owned
                    .then(|| {
                        conn.call_method(
                            Some(SECRETS_NAME),
                            "/org/freedesktop/secrets",
                            Some("org.freedesktop.Secret.Service"),
                            "ReadAlias",
                            &("default",),
                        )
                        .ok()?
                        .body()
                        .deserialize::<zbus::zvariant::OwnedObjectPath>()
                        .ok()
                    })
                    .flatten();
                if default.is_some_and(|p| p.as_str() != "/") {
                    return;
                }
                assert!(
                    Instant::now() < deadline,
                    "gnome-keyring made no default collection: {}",
                    std::fs::read_to_string(self.dir.join("gnome-keyring.log")).unwrap_or_default()
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    impl Drop for PrivateSession {
        fn drop(&mut self) {
            for child in self.children.iter_mut().rev() {
                let _ = child.kill();
                let _ = child.wait();
            }
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    /// The Secret Service, with the choice made from the environment as
    /// `tcctl` makes it. Runs itself again in a child process inside a
    /// private session: the environment is process-wide.
    #[test]
    fn secret_service_round_trip() {
        if std::env::var_os(IN_PRIVATE_SESSION).is_some() {
            return secret_service_checks();
        }
        tool("secret-tool", "libsecret-tools");
        let session = PrivateSession::start();
        let mut cmd = session.command(&tool("timeout", "coreutils"));
        cmd.arg("120")
            .env("DBUS_SESSION_BUS_ADDRESS", &session.address);
        rerun(cmd, "secret_service_round_trip", IN_PRIVATE_SESSION);
    }

    /// `secret-tool` (libsecret), an independent Secret Service client.
    fn secret_tool(args: &[&str]) -> Output {
        run(Command::new(tool("secret-tool", "libsecret-tools")).args(args))
    }

    fn secret_service_checks() {
        let name = unique("ss");
        let user = format!("favorite:{name}");
        let lookup = || secret_tool(&["lookup", "service", "tcd", "username", &user]);

        assert_eq!(chosen().unwrap(), Store::SecretService);
        assert_eq!(load(&name).unwrap(), None);
        assert_eq!(store(&name, b"first").unwrap(), Store::SecretService);
        assert_eq!(store(&name, PASSWORD).unwrap(), Store::SecretService);

        let out = lookup();
        assert!(out.status.success(), "secret-tool lookup: {out:?}");
        assert_eq!(out.stdout, PASSWORD, "the stored bytes (replaced once)");
        let out = secret_tool(&["search", "--all", "service", "tcd", "username", &user]);
        let listing = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            listing.lines().filter(|l| l.starts_with('[')).count(),
            1,
            "{listing}"
        );
        assert!(
            listing.contains(&format!("label = keyring:{user}@tcd")),
            "{listing}"
        );

        assert_eq!(load(&name).unwrap().as_deref(), Some(&PASSWORD.to_vec()));
        assert!(forget(&name).unwrap());
        assert!(!lookup().status.success(), "still there after forget");
        assert_eq!(load(&name).unwrap(), None);
        assert!(!forget(&name).unwrap());

        // What another client stored under our attributes is read too.
        let other = unique("ss-other");
        let other_user = format!("favorite:{other}");
        let out = run_with_stdin(
            Command::new(tool("secret-tool", "libsecret-tools")).args([
                "store",
                "--label=other",
                "service",
                "tcd",
                "username",
                &other_user,
            ]),
            PASSWORD,
        );
        assert!(out.status.success(), "secret-tool store: {out:?}");
        assert_eq!(load(&other).unwrap().as_deref(), Some(&PASSWORD.to_vec()));
        assert!(forget(&other).unwrap());
    }
}
