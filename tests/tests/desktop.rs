//! Desktop integration: the shipped desktop entries, MIME types and
//! Nautilus extension pass the tools that read them; `tcctl` started
//! without a terminal asks for the password in a dialog (stand-ins of
//! zenity, kdialog and systemd-ask-password answer here) and reports mounts
//! as desktop notifications (served by the test on a private session bus).
//! The volume tests need root, /dev/fuse, losetup, blkid and mkfs.ext4.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use tcd_tests::daemon::{Daemon, PrivateBus};
use tcd_tests::{build_dir, repo_dir, require_tool};
use zbus::zvariant::OwnedValue;

const TRUECRYPT_TYPE: &str = "application/x-truecrypt-volume";
const VERACRYPT_TYPE: &str = "application/x-veracrypt-volume";

fn desktop_dir() -> PathBuf {
    repo_dir().join("dist/desktop")
}

/// Every file under `dir` whose name ends with `suffix`, sorted.
fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("folder entry").path();
        if path.is_dir() {
            out.extend(files_ending(&path, suffix));
        } else if path.to_string_lossy().ends_with(suffix) {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// A desktop entry's groups and their keys (comments and blank lines left
/// out; localized keys kept as written).
fn desktop_entry(path: &Path) -> HashMap<String, HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut groups: HashMap<String, HashMap<String, String>> = HashMap::new();
    let mut group = String::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            group = name.to_owned();
            continue;
        }
        let (key, value) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("{}: not a key: {line}", path.display()));
        groups
            .entry(group.clone())
            .or_default()
            .insert(key.trim().to_owned(), value.trim().to_owned());
    }
    groups
}

fn list(value: &str) -> BTreeSet<String> {
    value
        .split(';')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_desktop_entry_validates() {
    let validate = require_tool("desktop-file-validate", "package desktop-file-utils");
    let entries = files_ending(&desktop_dir(), ".desktop");
    // The launcher, the KIO service menu and the two autostart entries.
    assert!(entries.len() >= 4, "desktop entries: {entries:?}");
    for path in &entries {
        let out = Command::new(&validate)
            .arg(path)
            .output()
            .expect("desktop-file-validate");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && !said.contains("error:") && !said.contains("warning:"),
            "{}: {said}",
            path.display()
        );
        let entry = desktop_entry(path);
        assert_eq!(
            entry["Desktop Entry"].get("Terminal").map(String::as_str),
            Some("false"),
            "{}: runs without a terminal",
            path.display()
        );
    }
}

#[test]
fn the_menus_run_tcctl_with_notifications() {
    let launcher = desktop_entry(&desktop_dir().join("tcd-mount.desktop"));
    assert_eq!(launcher["Desktop Entry"]["Exec"], "tcctl mount --notify %f");
    assert_eq!(launcher["Desktop Entry"]["NoDisplay"], "true");
    assert_eq!(
        list(&launcher["Desktop Entry"]["Actions"]),
        list("Mount;Dismount")
    );
    assert_eq!(
        launcher["Desktop Action Dismount"]["Exec"],
        "tcctl dismount --notify %f"
    );
    let kio = desktop_entry(&desktop_dir().join("kio/tcd-volume.desktop"));
    assert_eq!(
        kio["Desktop Entry"]["X-KDE-ServiceTypes"],
        "KonqPopupMenu/Plugin"
    );
    assert_eq!(
        kio["Desktop Action mount"]["Exec"],
        "tcctl mount --notify %f"
    );
    assert_eq!(
        kio["Desktop Action dismount"]["Exec"],
        "tcctl dismount --notify %f"
    );
    for (file, exec) in [
        (
            "autostart/tcd-favorites.desktop",
            "tcctl favorites mount --auto --notify",
        ),
        ("autostart/tcd-watch.desktop", "tcctl watch --notify"),
    ] {
        let entry = desktop_entry(&desktop_dir().join(file));
        assert_eq!(entry["Desktop Entry"]["Exec"], exec, "{file}");
        assert_eq!(
            entry["Desktop Entry"]["X-GNOME-Autostart-enabled"], "true",
            "{file}"
        );
    }
    // The built tcctl takes every command line the entries run (clap
    // refuses an unknown argument before it reads --help).
    for path in files_ending(&desktop_dir(), ".desktop") {
        for (group, keys) in desktop_entry(&path) {
            let Some(exec) = keys.get("Exec") else {
                continue;
            };
            let words: Vec<&str> = exec.split_whitespace().filter(|w| *w != "%f").collect();
            // The desktop application's own entry starts it (gui_app runs
            // it as a user; as root it refuses to start); every other
            // entry runs tcctl.
            if words == ["tcd-gtk"] {
                assert!(
                    path.ends_with("org.tcd.Desktop.desktop")
                        && build_dir().join("tcd-gtk").is_file(),
                    "{}: {exec}",
                    path.display()
                );
                continue;
            }
            assert_eq!(words.first(), Some(&"tcctl"), "{}: {exec}", path.display());
            let out = Command::new(build_dir().join("tcctl"))
                .args(&words[1..])
                .arg("--help")
                .output()
                .expect("tcctl --help");
            assert!(
                out.status.success(),
                "{} [{group}] {exec}: {}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// The types `tcd-mime.xml` declares.
fn declared_types(xml: &str) -> BTreeSet<String> {
    xml.split("<mime-type ")
        .skip(1)
        .map(|rest| {
            let value = rest
                .split_once("type=\"")
                .and_then(|(_, v)| v.split_once('"'))
                .map(|(v, _)| v.to_owned());
            value.unwrap_or_else(|| panic!("a mime-type without type: {rest}"))
        })
        .collect()
}

#[test]
fn the_mime_types_install_and_match_the_menus() {
    let update = require_tool("update-mime-database", "package shared-mime-info");
    let xml = std::fs::read_to_string(desktop_dir().join("tcd-mime.xml")).expect("tcd-mime.xml");
    let declared = declared_types(&xml);
    let expected: BTreeSet<String> = [TRUECRYPT_TYPE, VERACRYPT_TYPE].map(str::to_owned).into();
    assert_eq!(declared, expected);

    // An XDG data folder of the test's own: <tmp>/mime/packages/.
    let tmp = tempfile::tempdir().expect("temp dir");
    let mime = tmp.path().join("mime");
    std::fs::create_dir_all(mime.join("packages")).expect("mkdir");
    std::fs::write(mime.join("packages/tcd-mime.xml"), &xml).expect("copy");
    let out = Command::new(&update)
        .arg(&mime)
        .output()
        .expect("update-mime-database");
    assert!(
        out.status.success(),
        "update-mime-database: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // globs2: weight:type:pattern[:flags]
    let globs2 = std::fs::read_to_string(mime.join("globs2")).expect("globs2 written");
    let globs: HashMap<&str, &str> = globs2
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split(':');
            let _weight = f.next()?;
            let kind = f.next()?;
            Some((f.next()?, kind))
        })
        .collect();
    assert_eq!(globs.get("*.tc"), Some(&TRUECRYPT_TYPE), "{globs2}");
    assert_eq!(globs.get("*.hc"), Some(&VERACRYPT_TYPE), "{globs2}");
    assert_eq!(globs.get("*.vc"), Some(&VERACRYPT_TYPE), "{globs2}");
    let subclasses = std::fs::read_to_string(mime.join("subclasses")).expect("subclasses");
    for kind in &declared {
        assert!(
            subclasses
                .lines()
                .any(|l| l == format!("{kind} application/octet-stream")),
            "{kind} is a kind of application/octet-stream: {subclasses}"
        );
    }

    // The menus offer themselves for exactly these types.
    let with_types: Vec<_> = files_ending(&desktop_dir(), ".desktop")
        .into_iter()
        .filter_map(|p| {
            let types = desktop_entry(&p)
                .get("Desktop Entry")?
                .get("MimeType")
                .map(|v| list(v))?;
            Some((p, types))
        })
        .collect();
    let names: Vec<_> = with_types
        .iter()
        .filter_map(|(p, _)| p.file_name())
        .collect();
    assert!(
        names.contains(&OsStr::new("tcd-mount.desktop"))
            && names.contains(&OsStr::new("tcd-volume.desktop")),
        "{names:?}"
    );
    for (path, types) in &with_types {
        assert_eq!(types, &declared, "{}", path.display());
    }
    let extension = std::fs::read_to_string(desktop_dir().join("nautilus/tcd-nautilus.py"))
        .expect("Nautilus extension");
    for kind in &declared {
        assert!(
            extension.contains(kind.as_str()),
            "Nautilus menu for {kind}"
        );
    }
}

#[test]
fn the_nautilus_extension_compiles() {
    let python = require_tool("python3", "package python3");
    let source = desktop_dir().join("nautilus/tcd-nautilus.py");
    let text = std::fs::read_to_string(&source).expect("extension");
    assert!(
        text.contains("gi.require_version(\"Nautilus\", \"4.0\")"),
        "written for Nautilus' API 4.0"
    );
    assert!(!text.contains("shell=True"), "runs tcctl without a shell");
    // Compiled in a copy: no __pycache__ in the source tree.
    let tmp = tempfile::tempdir().expect("temp dir");
    let copy = tmp.path().join("tcd-nautilus.py");
    std::fs::copy(&source, &copy).expect("copy");
    let out = Command::new(python)
        .args(["-m", "py_compile"])
        .arg(&copy)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "py_compile: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const PASSWORD: &str = "correct horse 7391";
const WRONG: &str = "wrong horse 1937";

/// A daemon with a 16 MiB ext4 VeraCrypt volume (PIM 1: quick to open) and
/// an empty folder to mount it on.
fn daemon_with_volume() -> (Daemon, String, String) {
    require_tool("mkfs.ext4", "package e2fsprogs");
    let d = Daemon::start();
    let vol = d.path("secret.hc").to_str().expect("utf-8").to_owned();
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    d.ok(
        &[
            "create",
            &vol,
            "--size",
            "16M",
            "--password-stdin",
            "--hash",
            "sha512",
            "--pim",
            "1",
            "--force",
            "--filesystem",
            "ext4",
        ],
        &format!("{PASSWORD}\n"),
    );
    (d, vol, mnt.to_str().expect("utf-8").to_owned())
}

fn mount_args<'a>(vol: &'a str, mnt: &'a str) -> Vec<&'a str> {
    vec![vol, mnt, "--hash", "sha512", "--pim", "1"]
}

fn is_mounted(dir: &str) -> bool {
    std::fs::read_to_string("/proc/self/mounts")
        .expect("/proc/self/mounts")
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(dir))
}

/// tcctl as a launcher or file manager starts it: no terminal anywhere
/// (standard input an empty pipe), no display unless `env` sets one, and
/// `env` on top.
fn tcctl_without_terminal(
    d: &Daemon,
    args: &[&str],
    stdin: &str,
    env: &[(&str, &OsStr)],
) -> Output {
    let mut command = Command::new(build_dir().join("tcctl"));
    command
        .arg("--socket")
        .arg(d.socket())
        .args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().expect("run tcctl");
    let mut input = child.stdin.take().expect("stdin");
    // tcctl may refuse before reading its input.
    if let Err(e) = std::io::Write::write_all(&mut input, stdin.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    // End of input: standard input is a pipe with nothing more in it.
    drop(input);
    child.wait_with_output().expect("tcctl output")
}

/// Folder of stand-ins for the password helpers: each records its
/// arguments in `<name>.args` beside it, then runs `then`.
struct Helpers(tempfile::TempDir);

impl Helpers {
    fn new() -> Helpers {
        Helpers(tempfile::tempdir().expect("temp dir"))
    }

    fn add(&self, name: &str, then: &str) {
        use std::os::unix::fs::PermissionsExt;
        let path = self.0.path().join(name);
        let record = self.0.path().join(format!("{name}.args"));
        // Shell built-ins only: PATH holds nothing but this folder.
        let script = format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{}'\n{then}\n",
            record.display()
        );
        std::fs::write(&path, script).expect("write stand-in");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    /// What `name` was called with, or None if it never ran.
    fn args(&self, name: &str) -> Option<Vec<String>> {
        let text = std::fs::read_to_string(self.0.path().join(format!("{name}.args"))).ok()?;
        Some(text.lines().map(str::to_owned).collect())
    }

    /// PATH holding only the stand-ins, so a real zenity or kdialog on this
    /// machine never answers in their place.
    fn path(&self) -> &OsStr {
        self.0.path().as_os_str()
    }
}

fn answers() -> String {
    format!("printf '%s\\n' '{PASSWORD}'")
}

/// A session bus address where nothing listens: notifications (sent
/// because no terminal is attached) fail, and the mount must not.
fn no_bus(d: &Daemon) -> std::ffi::OsString {
    format!("unix:path={}", d.path("no-bus").display()).into()
}

/// Mounts `vol` on `mnt` with no terminal, `display` (a variable and its
/// value) set if given and only `helpers` on PATH, and checks `tool`
/// answered: its arguments.
fn mount_through(
    d: &Daemon,
    (vol, mnt): (&str, &str),
    helpers: &Helpers,
    display: Option<(&str, &str)>,
    tool: &str,
) -> Vec<String> {
    let no_bus = no_bus(d);
    let mut env = vec![
        ("PATH", helpers.path()),
        ("DBUS_SESSION_BUS_ADDRESS", no_bus.as_os_str()),
    ];
    if let Some((var, value)) = display {
        env.push((var, OsStr::new(value)));
    }
    let mut args = vec!["mount"];
    args.extend(mount_args(vol, mnt));
    let out = tcctl_without_terminal(d, &args, "", &env);
    assert!(
        out.status.success(),
        "mount through {tool}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(is_mounted(mnt), "{mnt} is mounted");
    helpers
        .args(tool)
        .unwrap_or_else(|| panic!("{tool} was asked"))
}

#[test]
fn without_a_terminal_zenity_asks_and_cancel_mounts_nothing() {
    let (d, vol, mnt) = daemon_with_volume();
    let helpers = Helpers::new();
    let no_bus = no_bus(&d);
    let env = [
        ("PATH", helpers.path()),
        ("DISPLAY", OsStr::new(":7")),
        ("DBUS_SESSION_BUS_ADDRESS", &no_bus),
    ];
    let mut args = vec!["mount"];
    args.extend(mount_args(&vol, &mnt));

    // The user presses Cancel.
    helpers.add("zenity", "exit 1");
    let out = tcctl_without_terminal(&d, &args, "", &env);
    assert_eq!(
        out.status.code(),
        Some(10),
        "cancelled: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!is_mounted(&mnt), "nothing mounted after Cancel");
    assert_eq!(d.list().as_array().map(Vec::len), Some(0));

    // The user types the password.
    helpers.add("zenity", &answers());
    let called = mount_through(
        &d,
        (&vol, &mnt),
        &helpers,
        Some(("DISPLAY", ":7")),
        "zenity",
    );
    assert!(called.iter().any(|a| a == "--password"), "{called:?}");
    assert!(
        called.iter().any(|a| a.contains("secret.hc")),
        "the dialog names the volume: {called:?}"
    );
    assert!(
        !called.iter().any(|a| a.contains(PASSWORD)),
        "no password on a command line"
    );
    d.ok(&["dismount", &mnt], "");
    assert!(!is_mounted(&mnt));
}

#[test]
fn on_wayland_without_zenity_kdialog_asks() {
    let (d, vol, mnt) = daemon_with_volume();
    let helpers = Helpers::new();
    helpers.add("kdialog", &answers());
    helpers.add("systemd-ask-password", &answers());
    let wayland = Some(("WAYLAND_DISPLAY", "wayland-7"));
    let called = mount_through(&d, (&vol, &mnt), &helpers, wayland, "kdialog");
    assert!(called.iter().any(|a| a == "--password"), "{called:?}");
    assert_eq!(helpers.args("systemd-ask-password"), None);
    d.ok(&["dismount", &mnt], "");
}

#[test]
fn without_a_display_systemd_ask_password_asks() {
    let (d, vol, mnt) = daemon_with_volume();
    let helpers = Helpers::new();
    // Dialogs need a display: these must not be asked.
    helpers.add("zenity", &answers());
    helpers.add("kdialog", &answers());
    helpers.add("systemd-ask-password", &answers());
    let _agent = tcd_tests::process::PasswordAgent::start();
    let called = mount_through(&d, (&vol, &mnt), &helpers, None, "systemd-ask-password");
    assert!(called.iter().any(|a| a == "--timeout=0"), "{called:?}");
    assert!(
        called.iter().any(|a| a.contains("secret.hc")),
        "the prompt names the volume: {called:?}"
    );
    assert_eq!(helpers.args("zenity"), None);
    assert_eq!(helpers.args("kdialog"), None);
    d.ok(&["dismount", &mnt], "");
}

/// One Notify call as the notification server received it.
#[derive(Debug)]
struct Note {
    app_name: String,
    app_icon: String,
    summary: String,
    body: String,
    hints: HashMap<String, OwnedValue>,
}

impl Note {
    fn urgency(&self) -> Option<u8> {
        self.hints.get("urgency").and_then(|v| u8::try_from(v).ok())
    }
}

/// org.freedesktop.Notifications as a desktop serves it, keeping each call.
struct Notifications(Arc<Mutex<Vec<Note>>>);

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Notifications {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: String,
        _replaces_id: u32,
        app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        hints: HashMap<String, OwnedValue>,
        _expire_timeout: i32,
    ) -> u32 {
        let mut notes = self.0.lock().expect("notes");
        notes.push(Note {
            app_name,
            app_icon,
            summary,
            body,
            hints,
        });
        notes.len() as u32
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".into()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        ("tcd-tests".into(), "tcd".into(), "1".into(), "1.2".into())
    }
}

#[test]
fn mounts_and_failures_are_notified_without_the_password() {
    let (d, vol, mnt) = daemon_with_volume();
    let bus = PrivateBus::session();
    let notes = Arc::new(Mutex::new(Vec::new()));
    let _server = zbus::blocking::connection::Builder::address(bus.address.as_str())
        .expect("bus address")
        .name("org.freedesktop.Notifications")
        .expect("name")
        .serve_at(
            "/org/freedesktop/Notifications",
            Notifications(notes.clone()),
        )
        .expect("serve")
        .build()
        .expect("notification server on the private bus");
    let address = OsStr::new(&bus.address);
    let env = [("DBUS_SESSION_BUS_ADDRESS", address)];
    let take = || std::mem::take(&mut *notes.lock().expect("notes"));
    let mut mount = vec!["mount", "--notify", "--password-stdin"];
    mount.extend(mount_args(&vol, &mnt));

    let out = tcctl_without_terminal(&d, &mount, &format!("{WRONG}\n"), &env);
    assert_eq!(out.status.code(), Some(2), "wrong password");
    let mut seen = take();
    let got = &seen;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].app_name, "tcd");
    assert_eq!(got[0].urgency(), Some(2), "a failure is urgent: {got:?}");
    assert!(got[0].summary.contains(&vol), "names the volume: {got:?}");
    assert!(got[0].body.contains("wrong password"), "the error: {got:?}");
    assert!(!is_mounted(&mnt));

    let input = format!("{PASSWORD}\n");
    let out = tcctl_without_terminal(&d, &mount, &input, &env);
    assert!(
        out.status.success(),
        "mount: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(is_mounted(&mnt));
    let got = take();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].app_name, "tcd");
    assert!(!got[0].app_icon.is_empty());
    assert_eq!(got[0].urgency(), Some(1), "{got:?}");
    assert!(
        got[0].summary.contains("Mounted")
            && got[0].summary.contains(&vol)
            && got[0].summary.contains(&mnt),
        "{got:?}"
    );
    seen.extend(got);

    let out = tcctl_without_terminal(&d, &["dismount", "--notify", &vol], "", &env);
    assert!(out.status.success(), "dismount");
    assert!(!is_mounted(&mnt));
    let got = take();
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        got[0].summary.contains("Dismounted") && got[0].summary.contains(&vol),
        "{got:?}"
    );
    seen.extend(got);

    // No --notify: with no terminal attached, notifying is the default.
    let plain: Vec<&str> = mount.iter().copied().filter(|a| *a != "--notify").collect();
    let out = tcctl_without_terminal(&d, &plain, &input, &env);
    assert!(out.status.success(), "mount without --notify");
    let out = tcctl_without_terminal(&d, &["dismount", &mnt], "", &env);
    assert!(out.status.success(), "dismount without --notify");
    let got = take();
    assert_eq!(got.len(), 2, "a mount and a dismount: {got:?}");
    assert!(got[0].summary.contains("Mounted"), "{got:?}");
    assert!(got[1].summary.contains("Dismounted"), "{got:?}");
    seen.extend(got);

    assert_eq!(seen.len(), 5);
    for note in &seen {
        let all = format!("{note:?}");
        assert!(
            !all.contains(PASSWORD) && !all.contains(WRONG),
            "a password in {all}"
        );
    }
    // No session bus: a notification asked for and not shown is said;
    // one tried unasked (no terminal) is not, lest scripts' errors fill.
    let none = [(
        "DBUS_SESSION_BUS_ADDRESS",
        OsStr::new("unix:path=/nonexistent/bus"),
    )];
    let out = tcctl_without_terminal(&d, &mount, &input, &none);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.starts_with("tcctl: warning: --notify: no notification shown: "),
        "{said}"
    );
    let out = tcctl_without_terminal(&d, &["dismount", &vol], "", &none);
    assert!(out.status.success(), "dismount without a session bus");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
