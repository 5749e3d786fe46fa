//! The desktop application, `tcd-gtk`, driven end to end: the real program
//! under Xvfb with a session bus and the AT-SPI bus of its own, run as an
//! unprivileged user against the real daemon on a private system bus with
//! polkitd (`tcd_tests::system::System`). A Python driver
//! (`tests/gui/driver.py`, pyatspi) finds each control by its accessible
//! name, types into it and presses it, as a user with a screen reader
//! would; it reports each step on a line, and the test checks what the
//! step did with `tcctl` and the filesystem before letting it go on.
//! Screenshots of each screen are taken in the run (`import -window root`)
//! and copied to docs/screenshots/.
//!
//! Needs root, Xvfb (xvfb-run), dbus-daemon, at-spi2-core, python3-pyatspi,
//! imagemagick, polkitd, setpriv, losetup, gettext (msginit, msgfmt).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use tcd_tests::system::{DeviceGrant, PASSWORD, PYTHON, System, User};
use tcd_tests::{build_dir, repo_dir, require_tool};

/// A run of the driver: its steps, one line each.
struct Driver {
    child: Child,
    input: ChildStdin,
    lines: std::io::Lines<BufReader<ChildStdout>>,
    shots: tempfile::TempDir,
}

impl Driver {
    /// Runs `scenario` of the driver as `who`, under xvfb-run with a
    /// session bus of its own.
    fn start(sys: &System, who: &User, scenario: &str, args: &[&str]) -> Driver {
        Driver::start_with(sys, who, scenario, args, &[])
    }

    /// As [`Driver::start`], with more variables in the environment.
    fn start_with(
        sys: &System,
        who: &User,
        scenario: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Driver {
        require_tool("xvfb-run", "apt-get install xvfb xauth");
        require_tool("import", "apt-get install imagemagick");
        require_tool("dbus-run-session", "apt-get install dbus");
        let shots = tempfile::tempdir().expect("screenshot folder");
        chown(shots.path(), who);
        let runtime = who.path("runtime");
        std::fs::create_dir_all(&runtime).expect("runtime folder");
        chown(&runtime, who);
        let driver = repo_dir().join("tests/gui/driver.py");
        let app = build_dir().join("tcd-gtk");
        // A display of its own, never one a run before left behind.
        let display = (100 + std::process::id() % 800).to_string();
        let mut c = sys.command(Some(who), "xvfb-run");
        c.args(["-a", "-n", &display, "-s", "-screen 0 1280x1000x24"])
            .args(["dbus-run-session", "--", PYTHON])
            .arg(driver)
            .arg(app)
            .arg(shots.path())
            .arg(scenario)
            .args(args)
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .env_remove("DISPLAY")
            .env("HOME", &who.home)
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("LANG", "C.UTF-8")
            .env("GTK_A11Y", "atspi")
            .env("NO_AT_BRIDGE", "0")
            // No Secret Service runs in this session: the user's kernel
            // keyring keeps a favorite's remembered password.
            .env("TCD_KEYRING", "kernel")
            .envs(env.iter().copied())
            .current_dir(&who.home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .process_group(0);
        let mut child = c.spawn().expect("run the driver under xvfb-run");
        let input = child.stdin.take().expect("driver stdin");
        let lines = BufReader::new(child.stdout.take().expect("driver stdout")).lines();
        Driver {
            child,
            input,
            lines,
            shots,
        }
    }

    /// The next step's detail; fails the test if the driver says another.
    fn step(&mut self, name: &str) -> String {
        // Other lines (the AT-SPI registry's) are passed on.
        let line = loop {
            match self.lines.next() {
                Some(Ok(l)) if l.starts_with("STEP ") => break l,
                Some(Ok(l)) => eprintln!("driver: {l}"),
                other => {
                    let st = self.child.wait();
                    panic!("the driver ended before step {name}: {other:?}, {st:?}");
                }
            }
        };
        let rest = &line["STEP ".len()..];
        let (got, detail) = rest.split_once(' ').unwrap_or((rest, ""));
        assert_eq!(got, name, "the driver's step: {line}");
        detail.to_owned()
    }

    fn go(&mut self) {
        writeln!(self.input, "go").expect("tell the driver to go on");
    }

    /// Waits for the end; copies the screenshots into docs/screenshots/.
    fn finish(mut self, shots: &[&str]) {
        self.step("done");
        let st = self.child.wait().expect("driver");
        assert!(st.success(), "the driver failed: {st}");
        let docs = repo_dir().join("docs/screenshots");
        std::fs::create_dir_all(&docs).expect("docs/screenshots");
        for s in shots {
            let from = self.shots.path().join(format!("{s}.png"));
            let png = std::fs::read(&from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
            assert!(png.starts_with(b"\x89PNG"), "{s}.png is a PNG");
            std::fs::write(docs.join(format!("{s}.png")), png).expect("save the screenshot");
        }
    }
}

/// A failed test leaves no X server, bus or application running.
impl Drop for Driver {
    fn drop(&mut self) {
        if let (Ok(None), Ok(pid)) = (self.child.try_wait(), i32::try_from(self.child.id())) {
            // SAFETY: kill(2) with a process group id; it touches no memory.
            unsafe { libc::kill(-pid, libc::SIGTERM) };
        }
        let _ = self.child.wait();
    }
}

fn chown(path: &Path, who: &User) {
    std::os::unix::fs::chown(path, Some(who.uid), Some(who.gid)).expect("chown");
}

fn tcctl_list(sys: &System, who: &User) -> Vec<String> {
    let rows = sys.list(Some(who));
    rows.as_array()
        .expect("rows")
        .iter()
        .map(|r| r["volume"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The backends the daemon has, by name, and `tcctl backends --json`.
fn backend_names(sys: &System, u: &User) -> (Vec<String>, serde_json::Value) {
    let backends: serde_json::Value =
        serde_json::from_str(&sys.ok(Some(u), &["backends", "--json"], "")).expect("backends");
    let names = backends["backends"]
        .as_array()
        .expect("backends")
        .iter()
        .filter_map(|b| b["name"].as_str())
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect();
    (names, backends)
}

/// Whether `password` mounts `vol` for `u` (dismounted again at once);
/// exit 2 (wrong password) when not.
fn mounts_with(sys: &System, u: &User, vol: &Path, mnt: &Path, password: &str) -> Option<i32> {
    let mut args = vec!["mount", s(vol), s(mnt)];
    args.extend(tcd_tests::system::OPEN_FAST);
    let out = sys.tcctl(Some(u), &args, &format!("{password}\n"));
    if out.status.success() {
        sys.ok(Some(u), &["dismount", s(vol)], "");
    }
    out.status.code()
}

#[test]
fn a_user_mounts_with_a_typed_password_and_dismounts_from_the_window() {
    let sys = System::start();
    let u = &sys.users[0];
    let vol = u.path("gui.vc");
    let mnt: PathBuf = u.path("mnt");
    let backup = u.path("gui.hdr");
    let keyfile = u.path("kf");
    let new_password = "other words of the user";
    let (names, backends) = backend_names(&sys, u);
    let names = names.join(",");
    let args = [
        s(&vol),
        s(&mnt),
        PASSWORD,
        "not it",
        "1",
        &names,
        new_password,
        s(&backup),
        s(&keyfile),
    ];
    let mut d = Driver::start(&sys, u, "mount", &args);

    // The Volume Creation Wizard makes the container, the user's own.
    let said = d.step("created");
    assert_eq!(said, "The volume was created.");
    let made = std::fs::metadata(&vol).expect("the container");
    assert_eq!((made.len(), made.uid()), (24 << 20, u.uid));
    d.go();

    // A wrong password: the daemon's error in the dialog, nothing mounted.
    let said = d.step("wrong-password");
    let (error, report) = said.split_once('|').expect("error|report");
    assert!(
        error == "wrong password or keyfile, or not a volume",
        "the dialog shows the daemon's error: {error:?}"
    );
    // The daemon's progress, in tcctl's words: "Trying VeraCrypt sha512 on
    // the primary headers: 40 % done".
    let words: Vec<&str> = report.split(' ').collect();
    assert!(
        words.len() >= 9
            && words[0] == "Trying"
            && ["VeraCrypt", "TrueCrypt"].contains(&words[1])
            && ["primary", "backup"].contains(&words[5])
            && words[6] == "headers:"
            && words[8].starts_with('%'),
        "the search's progress: {report:?}"
    );
    assert_eq!(tcctl_list(&sys, u), Vec::<String>::new());
    d.go();

    // The right one: listed in the window and by tcctl; the user writes
    // into the mount point.
    let row = d.step("mounted");
    assert!(row.starts_with(&format!("mounted on {}", s(&mnt))), "{row}");
    assert!(row.contains("VeraCrypt") && row.contains("AES"), "{row}");
    assert_eq!(tcctl_list(&sys, u), [s(&vol)]);
    sys.sh(u, &format!("echo from the test > {}/note", s(&mnt)));
    d.go();

    // Dismounted from the window: gone for tcctl too.
    let said = d.step("dismounted");
    assert_eq!(said, format!("Dismounted {}", s(&vol)));
    assert_eq!(tcctl_list(&sys, u), Vec::<String>::new());
    d.go();

    volume_tools(&sys, u, &mut d, [&vol, &mnt, &backup], new_password);
    performance(&sys, u, &mut d, &backends, &names);
    favorites_and_the_rest(&sys, u, &mut d, &vol, &keyfile);
    d.finish(&[
        "main-window",
        "wizard",
        "mount-error",
        "mount-dialog",
        "main-mounted",
        "benchmark",
        "performance",
        "volume-tools",
        "header-information",
        "preferences",
        "favorites",
        "keyfile-generator",
    ]);
    // Mounted by Mount Favorites: the file written before every header
    // change is there.
    let note = std::fs::read_to_string(mnt.join("note")).expect("the file written before");
    assert_eq!(note, "from the test\n");
    sys.ok(Some(u), &["dismount", s(&vol)], "");
}

/// Volume Tools: Header Information as `tcctl info` has it; a header
/// backup, a new password (the old one no longer opens it), and the
/// backup restored (the old one does again).
fn volume_tools(sys: &System, u: &User, d: &mut Driver, [vol, mnt, backup]: [&Path; 3], new: &str) {
    let info = d.step("header-info");
    let mut args = vec!["info", s(vol), "--json"];
    args.extend(tcd_tests::system::OPEN_FAST);
    let tcctl: serde_json::Value =
        serde_json::from_str(&sys.ok(Some(u), &args, &format!("{PASSWORD}\n"))).expect("info");
    assert_eq!(
        info,
        format!(
            "Encryption: {}|PKCS-5 PRF: {}",
            tcctl["encryption"].as_str().expect("encryption"),
            tcctl["hash"].as_str().expect("hash")
        )
    );
    assert!(
        info.starts_with("Encryption: AES|PKCS-5 PRF: SHA-512"),
        "{info}"
    );
    d.go();

    let said = d.step("backed-up");
    assert_eq!(
        said,
        format!("Headers of {} saved to {}", s(vol), s(backup))
    );
    let saved = std::fs::metadata(backup).expect("the header backup");
    assert_eq!((saved.uid(), saved.mode() & 0o777), (u.uid, 0o600));
    assert!(saved.len() >= 1024, "two headers: {} bytes", saved.len());
    d.go();

    let said = d.step("changed");
    assert_eq!(said, format!("{}: password changed", s(vol)));
    assert_eq!(mounts_with(sys, u, vol, mnt, PASSWORD), Some(2));
    assert_eq!(mounts_with(sys, u, vol, mnt, new), Some(0));
    d.go();

    let said = d.step("restored");
    assert!(
        said.starts_with(&format!("{}: header restored from {}", s(vol), s(backup))),
        "{said}"
    );
    assert_eq!(mounts_with(sys, u, vol, mnt, new), Some(2));
    assert_eq!(mounts_with(sys, u, vol, mnt, PASSWORD), Some(0));
    d.go();
}

/// Settings, Performance: the policy in force, as tcctl reports it.
fn performance(sys: &System, u: &User, d: &mut Driver, backends: &serde_json::Value, names: &str) {
    let perf = d.step("performance");
    let yes = if backends["cpu_aes"] == true {
        "Yes"
    } else {
        "No"
    };
    let policy: serde_json::Value =
        serde_json::from_str(&sys.ok(Some(u), &["policy", "show", "--json"], "")).expect("policy");
    let accel = policy["hardware_acceleration"]
        .as_str()
        .expect("hardware_acceleration");
    let allowed = match policy["allowed"].as_array() {
        Some(list) if policy["all_allowed"] != true => list
            .iter()
            .filter_map(|b| b.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        _ => "all".to_owned(),
    };
    // polkit asks an administrator's password of a user: the switches are
    // offered, none greyed.
    assert_eq!(perf, format!("{yes}|{accel}|{allowed}|{names}"));
    let prefs = std::fs::read_to_string(u.home.join(".config/tcd-gtk/settings.toml"))
        .expect("the Preferences saved");
    assert!(prefs.contains("cache_password = true"), "{prefs}");
    d.go();
}

/// Favorites: the mounted volume added, dismounted, mounted again by
/// Mount Favorites; Wipe Cache; the Keyfile Generator; the benchmark.
fn favorites_and_the_rest(sys: &System, u: &User, d: &mut Driver, vol: &Path, keyfile: &Path) {
    let row = d.step("favorite-added");
    let mnt = u.path("mnt");
    assert_eq!(
        row,
        format!("{} · yours · {} · auto-mount", s(vol), s(&mnt))
    );
    let listed = sys.ok(Some(u), &["favorites", "list", "--json"], "");
    let listed: serde_json::Value = serde_json::from_str(&listed).expect("favorites");
    let f = &listed["favorites"][0];
    assert_eq!(
        (&f["name"], &f["host"], &f["mount_point"]),
        (&"gui.vc".into(), &s(vol).into(), &s(&mnt).into()),
        "{listed}"
    );
    assert_eq!(
        (&f["pim"], &f["auto_mount"]),
        (&1.into(), &true.into()),
        "{listed}"
    );
    d.go();

    let said = d.step("favorites-mounted");
    assert_eq!(said, format!("gui.vc mounted on {}", s(&u.path("mnt"))));
    assert_eq!(tcctl_list(sys, u), [s(vol)]);
    d.go();

    // The mount with the Preferences' "cache" left the password there.
    assert_eq!(d.step("wiped"), "1 cached password wiped");
    d.go();

    let said = d.step("keyfiles");
    assert_eq!(said, format!("Keyfiles created: 3 ({}_1)", s(keyfile)));
    for i in 1..=3 {
        let k = std::fs::metadata(format!("{}_{i}", s(keyfile))).expect("a keyfile");
        assert_eq!((k.len(), k.uid(), k.mode() & 0o777), (128, u.uid, 0o600));
    }
    d.go();
    benchmark(d);
}

/// Tools: Benchmark fills both tables, sorted by speed, then by name.
fn benchmark(d: &mut Driver) {
    let bench = d.step("benchmark");
    let [progress, by_mean, by_name, prfs] = bench.split('|').collect::<Vec<_>>()[..] else {
        panic!("benchmark step: {bench}");
    };
    assert_eq!(progress, "1.0", "the progress bar ends full");
    let mut sorted: Vec<&str> = by_mean.split(',').collect();
    assert!(
        sorted.contains(&"AES") && sorted.contains(&"Serpent-Twofish-AES"),
        "{bench}"
    );
    sorted.sort_unstable();
    assert_eq!(sorted.join(","), by_name, "sorted by name on request");
    assert!(
        prfs.split(',').any(|p| p == "SHA-512"),
        "the PRF table: {prfs}"
    );
    d.go();
}

/// A device and a hidden volume: Select Device lists a loop device the
/// test attached and fills the volume field with it; the Volume Creation
/// Wizard writes a volume over the device, then a hidden volume inside
/// it (the outer volume opened first, its size limit shown); the hidden
/// volume mounts from the main window with its own password and is
/// listed as hidden; the outer volume then mounts with the hidden one
/// protected by its password and PIM (a wrong PIM refused). A volume made
/// with a keyfile mounts with the keyfile added in the Mount dialog's
/// list. A favorite mounted with "Remember
/// passwords in the keyring" ticked has its password kept there.
#[test]
fn a_user_makes_a_hidden_volume_on_a_device_and_mounts_with_keyfiles_and_the_keyring() {
    tcd_tests::require_root();
    let _grant = DeviceGrant::new(tcd_tests::system::USERS[0], "gui-device");
    let sys = System::start();
    let u = &sys.users[0];
    let image = u.path("device.img");
    std::fs::File::create(&image)
        .and_then(|f| f.set_len(48 << 20))
        .expect("the device's backing file");
    let device = tcd_tests::loop_device::LoopDevice::attach(&image);
    std::os::unix::fs::chown(device.as_path(), Some(u.uid), Some(u.gid)).expect("chown");
    let name = tcd_proto::devices::stable_name(device.as_path())
        .unwrap_or_else(|| device.path().to_owned());
    let (mnt, kmnt) = (u.path("hmnt"), u.path("kmnt"));
    sys.sh(u, &format!("mkdir {} {}", s(&mnt), s(&kmnt)));
    let hidden_password = "the hidden volume's own words";
    let (kvol, keyfile) = keyfile_volume(&sys, u);
    let fav = sys.create_volume(u, "fav.vc", "8M");
    // Named for this run: the user's kernel keyring outlives a run.
    let fav_name = format!("fav{}", std::process::id());
    sys.ok(
        Some(u),
        &["favorites", "add", &fav_name, s(&fav), "--pim", "1"],
        "",
    );
    let args = [
        device.path(),
        s(&mnt),
        PASSWORD,
        hidden_password,
        s(&kvol),
        s(&keyfile),
        s(&kmnt),
        &fav_name,
    ];
    let mut d = Driver::start(&sys, u, "device", &args);
    assert_eq!(d.step("device-chosen"), name);
    d.go();
    assert_eq!(d.step("device-created"), "The volume was created.");
    let mut info = vec!["info", device.path(), "--json"];
    info.extend(tcd_tests::system::OPEN_FAST);
    let outer: serde_json::Value =
        serde_json::from_str(&sys.ok(Some(u), &info, &format!("{PASSWORD}\n"))).expect("info");
    let size = outer["size"].as_u64().expect("the outer volume's size");
    d.go();
    // The limit: the outer data area less the 64 KiB and 4 KiB the daemon
    // keeps clear.
    let limit = (size - 69632) / 512 * 512;
    let said = d.step("outer-opened");
    let expected = format!(
        "The hidden volume may take up to {} MiB ({limit} bytes).",
        limit >> 20
    );
    assert!(said.starts_with(&expected), "{said}");
    d.go();
    assert_eq!(d.step("hidden-created"), "The hidden volume was created.");
    d.go();
    let row = d.step("hidden-mounted");
    assert!(
        row.starts_with(&format!("mounted on {}", s(&mnt))) && row.contains("hidden volume"),
        "{row}"
    );
    let listed = sys.list(Some(u));
    assert_eq!(listed[0]["volume"], device.path(), "{listed}");
    assert_eq!(listed[0]["hidden"], true, "{listed}");
    d.go();
    assert_eq!(
        d.step("hidden-dismounted"),
        format!("Dismounted {}", device.path())
    );
    assert_eq!(tcctl_list(&sys, u), Vec::<String>::new());
    d.go();
    protected(&sys, u, &mut d, device.path(), &mnt);
    keyfiles_and_keyring(&sys, u, &mut d, &kvol, &fav, &fav_name);
    d.finish(&[]);
}

/// The outer volume mounted from the Mount dialog with "Protect a hidden
/// volume": the hidden volume's password with a wrong PIM is refused with
/// the daemon's error and nothing mounted; with its PIM the outer volume
/// mounts, listed as protecting its hidden volume.
fn protected(sys: &System, u: &User, d: &mut Driver, device: &str, mnt: &Path) {
    assert_eq!(
        d.step("protection-refused"),
        "the outer volume opened, but the password, keyfiles and PIM given to protect a hidden \
         volume open none inside it"
    );
    assert_eq!(tcctl_list(sys, u), Vec::<String>::new());
    d.go();
    let row = d.step("protected-mounted");
    assert!(
        row.starts_with(&format!("mounted on {}", s(mnt)))
            && row.contains("hidden volume protected"),
        "{row}"
    );
    let listed = sys.list(Some(u));
    assert_eq!(listed[0]["volume"], device, "{listed}");
    assert_eq!(listed[0]["protects_hidden"], true, "{listed}");
    d.go();
}

/// A volume that opens only with its password and a keyfile.
fn keyfile_volume(sys: &System, u: &User) -> (PathBuf, PathBuf) {
    let (kvol, keyfile) = (u.path("kf.vc"), u.path("kf.key"));
    sys.sh(u, &format!("head -c 64 /dev/urandom > {}", s(&keyfile)));
    let mut args = vec![
        "create",
        s(&kvol),
        "--size",
        "8M",
        "--filesystem",
        "ext4",
        "--keyfile",
        s(&keyfile),
    ];
    args.extend(tcd_tests::system::OPEN_FAST);
    sys.ok(Some(u), &args, &format!("{PASSWORD}\n"));
    (kvol, keyfile)
}

/// The keyfile volume mounted from the Mount dialog; the favorite mounted
/// with its password typed and remembered in the keyring.
fn keyfiles_and_keyring(
    sys: &System,
    u: &User,
    d: &mut Driver,
    kvol: &Path,
    fav: &Path,
    name: &str,
) {
    let said = d.step("keyfile-listed");
    assert_eq!(said, s(&u.path("kf.key")));
    d.go();
    let row = d.step("keyfile-mounted");
    assert!(
        row.starts_with(&format!("mounted on {}", s(&u.path("kmnt")))),
        "{row}"
    );
    assert_eq!(tcctl_list(sys, u), [s(kvol)]);
    sys.ok(Some(u), &["dismount", s(kvol)], "");
    d.go();
    let fav_mnt = "mounted on";
    let said = d.step("remembered");
    assert!(
        said.starts_with(&format!("{name} {fav_mnt} "))
            && said.ends_with("(password kept in the kernel keyring)"),
        "{said}"
    );
    assert_eq!(tcctl_list(sys, u), [s(fav)]);
    sys.ok(Some(u), &["dismount", s(fav)], "");
    d.go();
}

/// A user polkit refuses policy changes outright sees the Performance
/// page's switches greyed, and why; the system's favorites likewise.
#[test]
fn a_user_polkit_refuses_sees_the_policy_and_the_system_favorites_greyed() {
    let sys = System::start();
    let u = &sys.users[1];
    let shared = u.path("shared.vc");
    std::fs::write(&shared, b"").expect("a volume file");
    sys.ok(
        None,
        &[
            "favorites",
            "add",
            "system",
            s(&shared),
            "--system-favorite",
        ],
        "",
    );
    let mut d = Driver::start(&sys, u, "refused", &[]);
    let said = d.step("refused");
    assert_eq!(
        said,
        "False|Only an administrator may change the backend policy (polkit refuses \
         org.tcd.set-policy to your account)."
    );
    d.go();
    // The system's favorite is listed as the system's, and its settings
    // are greyed with the reason.
    let said = d.step("system-favorite");
    assert_eq!(
        said,
        format!(
            "False|The system's favorites are read-only: polkit does not let you change \
             them.|{} · system's · mount point chosen",
            s(&shared)
        )
    );
    d.go();
    d.finish(&[]);
}

/// The test's German translations, by their English text.
const GERMAN: [(&str, &str); 6] = [
    ("_Mount…", "_Einhängen…"),
    ("_Dismount", "_Aushängen"),
    ("Mount {0}", "{0} einhängen"),
    ("Password", "Passwort"),
    ("_Password:", "_Passwort:"),
    (
        "Select a mounted volume first.",
        "Wählen Sie zuerst ein eingehängtes Volume.",
    ),
];

/// Runs `tool` with `args`; fails the test if it fails.
fn run_ok(tool: &Path, args: &[&std::ffi::OsStr]) {
    let out = std::process::Command::new(tool)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", tool.display()));
    assert!(
        out.status.success(),
        "{}: {}",
        tool.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A German catalog in `dir`/de/LC_MESSAGES, made as docs/DESKTOP.md
/// tells a translator: `msginit` from the template, [`GERMAN`] filled
/// in, `msgfmt --check`.
fn german_catalog(dir: &Path) {
    let msginit = require_tool("msginit", "apt-get install gettext");
    let msgfmt = require_tool("msgfmt", "apt-get install gettext");
    let pot = repo_dir().join("client/gtk/po/tcd-gtk.pot");
    let po = dir.join("de.po");
    run_ok(
        &msginit,
        &[
            "--no-translator".as_ref(),
            "--locale=de".as_ref(),
            "--input".as_ref(),
            pot.as_os_str(),
            "--output-file".as_ref(),
            po.as_os_str(),
        ],
    );
    let mut text = std::fs::read_to_string(&po).expect("de.po");
    for (english, german) in GERMAN {
        let empty = format!("msgid \"{english}\"\nmsgstr \"\"\n");
        assert!(text.contains(&empty), "the template has no {english:?}");
        text = text.replace(
            &empty,
            &format!("msgid \"{english}\"\nmsgstr \"{german}\"\n"),
        );
    }
    std::fs::write(&po, text).expect("de.po");
    let folder = dir.join("de/LC_MESSAGES");
    std::fs::create_dir_all(&folder).expect("the catalog's folder");
    let mo = folder.join("tcd-gtk.mo");
    run_ok(
        &msgfmt,
        &[
            "--check".as_ref(),
            "--output-file".as_ref(),
            mo.as_os_str(),
            po.as_os_str(),
        ],
    );
}

/// A user whose language has a catalog sees the application in it: the
/// main window's buttons and messages, the Mount dialog's title (its
/// volume put where the translation puts it) and its fields' names.
#[test]
fn a_user_sees_the_application_in_the_language_of_a_catalog() {
    let sys = System::start();
    let u = &sys.users[0];
    let locale = u.path("locale");
    std::fs::create_dir_all(&locale).expect("the catalogs' folder");
    german_catalog(&locale);
    let vol = u.path("a volume.vc");
    // glibc honours $LANGUAGE under any locale but plain C: the driver's
    // is C.UTF-8.
    let env = [("LANGUAGE", "de"), ("TCD_GTK_LOCALEDIR", s(&locale))];
    let mut d = Driver::start_with(&sys, u, "translated", &[s(&vol)], &env);
    assert_eq!(
        d.step("translated"),
        format!(
            "Einhängen…|{} einhängen|Passwort Passwort:|Wählen Sie zuerst ein eingehängtes \
             Volume.",
            s(&vol)
        )
    );
    d.go();
    d.finish(&[]);
}

/// The launcher and the AppStream metainfo the package installs pass the
/// distributions' validators, and name the same application.
#[test]
fn the_desktop_file_and_metainfo_validate() {
    let dir = repo_dir().join("dist/desktop");
    let appstream = require_tool("appstreamcli", "apt-get install appstream");
    let out = std::process::Command::new(appstream)
        .args(["validate", "--no-net"])
        .arg(dir.join("org.tcd.Desktop.metainfo.xml"))
        .output()
        .expect("appstreamcli");
    assert!(
        out.status.success(),
        "appstreamcli validate: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let validate = require_tool(
        "desktop-file-validate",
        "apt-get install desktop-file-utils",
    );
    let out = std::process::Command::new(validate)
        .arg(dir.join("org.tcd.Desktop.desktop"))
        .output()
        .expect("desktop-file-validate");
    assert!(
        out.status.success() && out.stdout.is_empty(),
        "desktop-file-validate: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let metainfo = std::fs::read_to_string(dir.join("org.tcd.Desktop.metainfo.xml")).expect("read");
    assert!(
        metainfo.contains("<launchable type=\"desktop-id\">org.tcd.Desktop.desktop</launchable>")
    );
    assert!(metainfo.contains("<binary>tcd-gtk</binary>"));
    let svg = std::fs::read_to_string(dir.join("org.tcd.Desktop.svg")).expect("icon");
    assert!(svg.contains("<svg"), "the icon is an SVG");
}

/// Overwrites 512 bytes of `vol` at `at` (from the end when negative):
/// a damaged header.
fn damage(vol: &Path, at: i64) {
    use std::io::{Seek, SeekFrom};
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(vol)
        .expect("open the volume");
    let from = if at < 0 {
        SeekFrom::End(at)
    } else {
        SeekFrom::Start(at.unsigned_abs())
    };
    f.seek(from).expect("seek");
    f.write_all(&[0x5a; 512]).expect("damage the header");
}

/// A TrueCrypt volume (SHA-512, ext4), made by `tcctl create --format
/// truecrypt`.
fn truecrypt_volume(sys: &System, u: &User) -> PathBuf {
    let tc = u.path("old.tc");
    let args = [
        "create",
        s(&tc),
        "--size",
        "8M",
        "--format",
        "truecrypt",
        "--hash",
        "sha512",
        "--filesystem",
        "ext4",
        "--password-stdin",
    ];
    sys.ok(Some(u), &args, &format!("{PASSWORD}\n"));
    tc
}

/// A first run of the application keeps the favorite `name`'s password
/// in the user's keyring when it mounts it (then dismounted by the test).
fn remembered_by_an_earlier_run(sys: &System, u: &User, vol: &Path, name: &str) {
    sys.ok(
        Some(u),
        &["favorites", "add", name, s(vol), "--pim", "1"],
        "",
    );
    let mut d = Driver::start(sys, u, "remember", &[name, PASSWORD]);
    let said = d.step("remembered");
    assert!(
        said.ends_with("(password kept in the kernel keyring)"),
        "{said}"
    );
    assert_eq!(tcctl_list(sys, u), [s(vol)]);
    sys.ok(Some(u), &["dismount", s(vol)], "");
    d.go();
    d.finish(&[]);
}

/// The Mount dialog's backup-header option; a TrueCrypt volume mounted in
/// TrueCrypt mode and kept as a favorite with its format, then given
/// system encryption; a password an earlier program kept in the keyring
/// forgotten; the TrueCrypt volume converted to the VeraCrypt format in
/// Volume Tools.
#[test]
fn a_user_mounts_by_the_backup_header_keeps_a_truecrypt_favorite_and_converts_it() {
    let sys = System::start();
    let u = &sys.users[0];
    let (mnt, tmnt) = (u.path("mnt"), u.path("tmnt"));
    sys.sh(u, &format!("mkdir -p {} {}", s(&mnt), s(&tmnt)));
    let bak = sys.create_volume(u, "bak.vc", "8M");
    let prim = sys.create_volume(u, "prim.vc", "8M");
    // The backup header (128 KiB from the end) of one, the primary of the
    // other.
    damage(&bak, -131072);
    damage(&prim, 0);
    let tc = truecrypt_volume(&sys, u);
    // Named for this run: the user's kernel keyring outlives a run.
    let name = format!("kept{}", std::process::id());
    remembered_by_an_earlier_run(&sys, u, &bak, &name);
    let new_password = "veracrypt words from now on";
    let args = [
        s(&bak),
        s(&prim),
        s(&mnt),
        PASSWORD,
        s(&tc),
        s(&tmnt),
        &name,
        new_password,
    ];
    let mut d = Driver::start(&sys, u, "modes", &args);
    backup_header(&sys, u, &mut d, [&bak, &prim, &mnt]);
    truecrypt_favorite(&sys, u, &mut d, &tc, &name);
    let said = d.step("converted");
    assert_eq!(
        said,
        format!(
            "{}: password changed, converted to the VeraCrypt format",
            s(&tc)
        )
    );
    let mut info = vec!["info", s(&tc), "--json"];
    info.extend(tcd_tests::system::OPEN_FAST);
    let shown: serde_json::Value =
        serde_json::from_str(&sys.ok(Some(u), &info, &format!("{new_password}\n"))).expect("info");
    assert_eq!(shown["format"], "VeraCrypt", "{shown}");
    d.go();
    d.finish(&[]);
}

/// The backup header only: refused for the volume whose backup is
/// damaged (which its primary opens), the volume whose primary is
/// damaged mounted.
fn backup_header(sys: &System, u: &User, d: &mut Driver, [bak, prim, mnt]: [&Path; 3]) {
    assert_eq!(
        d.step("backup-refused"),
        "wrong password or keyfile, or not a volume"
    );
    assert_eq!(tcctl_list(sys, u), Vec::<String>::new());
    assert_eq!(mounts_with(sys, u, bak, mnt, PASSWORD), Some(0));
    d.go();
    let row = d.step("backup-mounted");
    assert!(row.starts_with(&format!("mounted on {}", s(mnt))), "{row}");
    assert_eq!(tcctl_list(sys, u), [s(prim)]);
    d.go();
}

/// The favorite of the mounted TrueCrypt volume keeps its format; system
/// encryption ticked and saved; the kept password forgotten.
fn truecrypt_favorite(sys: &System, u: &User, d: &mut Driver, tc: &Path, name: &str) {
    let row = d.step("tc-mounted");
    assert!(row.contains("TrueCrypt"), "{row}");
    assert_eq!(tcctl_list(sys, u), [s(tc)]);
    d.go();
    let tmnt = u.path("tmnt");
    let favorite = || {
        let listed = sys.ok(Some(u), &["favorites", "list", "--json"], "");
        let listed: serde_json::Value = serde_json::from_str(&listed).expect("favorites");
        listed["favorites"]
            .as_array()
            .and_then(|a| a.iter().find(|f| f["name"] == "old.tc").cloned())
            .unwrap_or_else(|| panic!("no favorite old.tc: {listed}"))
    };
    let row = d.step("tc-favorite");
    assert_eq!(
        row,
        format!("{} · yours · {} · TrueCrypt format only", s(tc), s(&tmnt))
    );
    let f = favorite();
    assert_eq!(
        (&f["format"], &f["system_encryption"], &f["readonly"]),
        (&"truecrypt".into(), &false.into(), &false.into()),
        "{f}"
    );
    d.go();
    let row = d.step("tc-favorite-organised");
    assert!(
        row.ends_with(" · read-only · system encryption · TrueCrypt format only"),
        "{row}"
    );
    let f = favorite();
    assert_eq!(
        (&f["format"], &f["system_encryption"], &f["readonly"]),
        (&"truecrypt".into(), &true.into(), &true.into()),
        "{f}"
    );
    d.go();
    let said = d.step("forgotten");
    let [kept, message, after] = said.split('|').collect::<Vec<_>>()[..] else {
        panic!("forgotten: {said}");
    };
    assert!(kept.ends_with(" · password in your keyring"), "{kept}");
    assert_eq!(message, format!("Password forgotten: {name}"));
    assert!(!after.contains("keyring"), "{after}");
    d.go();
}
