//! `tcctl` at a terminal while the daemon searches for a header, as users
//! of veracrypt --text and cryptsetup meet it: the search's progress on
//! the terminal (and never for scripts), the PIM asked for, a wrong
//! password's time and what narrows the search, a damaged primary header
//! said, and what can be refused without a password refused before it is
//! asked. On the real system bus, one user's search reaches no one else.
//!
//! Needs root, /dev/fuse, losetup, the tcrypt-images corpus; the system
//! bus test also dbus-daemon, polkitd, setpriv, useradd, mkfs.ext4 and
//! python3-jeepney.

use std::path::{Path, PathBuf};
use std::time::Duration;
use tcd_tests::daemon::Daemon;
use tcd_tests::pty::Pty;
use tcd_tests::{s, tcrypt_images};

const WAIT: Duration = Duration::from_secs(120);
/// What a failed search without a PIM says of one.
const NO_PIM: &str = "a volume created with a PIM opens only with that PIM: --pim gives it";
/// The corpus' password (see its README).
const CORPUS_PASSWORD: &str = "aaaaaaaaaaaa";
/// A copy of the corpus volume `name` in the daemon's folder.
fn copy_of(d: &Daemon, name: &str) -> PathBuf {
    let to = d.path(name);
    std::fs::copy(tcrypt_images().join(name), &to).expect("copy a corpus volume");
    to
}

/// `tcctl --socket … ARGS` on a terminal (standard error too unless
/// `stderr` is a file).
fn on_terminal(d: &Daemon, args: &[&str], stderr: Option<&Path>) -> Pty {
    let mut c = d.command();
    c.args(args);
    let stderr = stderr.map(|p| std::fs::File::create(p).expect("stderr file").into());
    Pty::spawn_as(c, stderr, None)
}

/// How `tcctl` ends on a terminal: its exit code and what the terminal
/// showed, lines ending in "\n".
fn ended(t: Pty) -> (Option<i32>, String) {
    let (code, shown) = t.finish(WAIT);
    (Some(code), shown.replace("\r\n", "\n"))
}

/// After a wrong password the terminal is asked again: Ctrl-D there
/// gives up, with the wrong password's exit code.
fn give_up_after_the_wrong_one(t: &mut Pty) {
    t.expect_times("Password for ", 2, WAIT);
    std::thread::sleep(std::time::Duration::from_millis(300));
    t.type_line("\u{4}");
}

#[test]
fn a_search_shows_its_progress_on_a_terminal_and_a_wrong_password_its_time_and_the_hint() {
    let d = Daemon::start();
    let vol = copy_of(&d, "vc_1-sha512-xts-aes");
    let narrow = ["--format", "veracrypt", "--hash", "sha512", "--pim", "0"];
    let mut args = vec!["info", s(&vol)];
    args.extend(narrow);
    let mut t = on_terminal(&d, &args, None);
    // A wrong password typed on the terminal is said and asked again, 3
    // times in all, as cryptsetup asks; the third ends it.
    let prompt = format!("Password for {}: ", vol.display());
    for asked in 1..=3 {
        t.expect_times(&prompt, asked, WAIT);
        std::thread::sleep(std::time::Duration::from_millis(300));
        t.type_line("not the password");
    }
    let (code, shown) = ended(t);
    assert_eq!(code, Some(2), "{shown}");
    assert_eq!(shown.matches(&prompt).count(), 3, "{shown}");
    assert!(
        shown.contains("Trying VeraCrypt SHA-512 on the primary headers: 0 % done"),
        "{shown}"
    );
    assert!(
        shown.contains("Trying VeraCrypt SHA-512 on the backup headers: "),
        "{shown}"
    );
    assert!(
        shown.contains(", about ") && shown.contains(" s left"),
        "an estimate of the time the whole search would still take: {shown}"
    );
    // Everything narrowed already: what was given is said, nothing more.
    let last = shown.rsplit("\x1b[K").next().unwrap_or_default();
    assert!(
        last.starts_with("tcctl: wrong password or keyfile, or not a volume (searched for ")
            && last.ends_with(" s; only sha512 was tried; only VeraCrypt volumes were searched)\n"),
        "{shown:?}"
    );
}

/// The figures of "about X left" on the lines a terminal showed, in
/// seconds, each with what its line said was tried and how far.
fn estimates(shown: &str) -> Vec<(&str, u64)> {
    let secs = |s: &str| -> u64 {
        let (mut total, mut n) = (0, 0);
        for word in s.split(' ') {
            match word {
                "min" => total += n * 60,
                "s" => total += n,
                w => n = w.parse().unwrap_or(0),
            }
        }
        total
    };
    shown
        .split("\x1b[K")
        .filter_map(|l| {
            let (what, rest) = l.split_once(", about ")?;
            Some((what, secs(rest.split(" left").next()?)))
        })
        .collect()
}

#[test]
fn a_slow_trials_estimate_counts_down_while_no_news_comes() {
    let d = Daemon::start();
    let vol = copy_of(&d, "vc_1-sha512-xts-aes");
    // Argon2id at this PIM: 544 MiB and 8 passes a trial, seconds long,
    // and the daemon has no news to send while a trial runs.
    let args = [
        "info",
        s(&vol),
        "--format",
        "veracrypt",
        "--hash",
        "argon2id",
        "--pim",
        "16",
    ];
    let mut t = on_terminal(&d, &args, None);
    t.expect("Password for ", WAIT);
    t.type_line("not the password");
    give_up_after_the_wrong_one(&mut t);
    let (code, shown) = ended(t);
    assert_eq!(code, Some(2), "{shown}");
    let seen = estimates(&shown);
    // One report, redrawn as it ages: the same words, a smaller figure.
    assert!(
        seen.windows(2).any(|w| w[0].0 == w[1].0 && w[1].1 < w[0].1),
        "{shown:?}"
    );
}

#[test]
fn without_a_terminal_a_long_search_is_said_on_one_line_after_ten_seconds() {
    use std::io::{BufRead, Write};
    let d = Daemon::start();
    let vol = copy_of(&d, "vc_1-sha512-xts-aes");
    // Root's PIM is not bounded: at this one a single trial takes far
    // longer than the test waits, so the search is still running when the
    // line is due, with what it tries (no time left is known before a
    // first trial ends); tcctl is killed then, and the daemon drops the
    // search.
    let mut c = d.command();
    c.args([
        "info",
        s(&vol),
        "--password-stdin",
        "--format",
        "veracrypt",
        "--hash",
        "sha512",
        "--pim",
        "1000000",
    ])
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped());
    let started = std::time::Instant::now();
    let mut child = c.spawn().expect("tcctl");
    if let Some(mut input) = child.stdin.take() {
        input
            .write_all(b"not the password\n")
            .expect("the password");
    }
    let err = child.stderr.take().expect("standard error");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(err).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx.recv_timeout(Duration::from_secs(60));
    let took = started.elapsed();
    let _ = child.kill();
    let _ = child.wait();
    let line = line.expect("a line within a minute");
    assert!(
        line.starts_with("tcctl: still searching for the header after 1")
            && line.ends_with(" s: Trying VeraCrypt SHA-512 on the primary headers: 0 % done\n"),
        "{line:?}"
    );
    assert!(took >= Duration::from_secs(10), "said after {took:?}");
}

#[test]
fn without_a_terminal_no_progress_is_shown_and_a_wrong_password_says_its_time_and_the_hint() {
    let d = Daemon::start();
    let vol = copy_of(&d, "vc_1-sha512-xts-aes");
    let args = [
        "info",
        s(&vol),
        "--password-stdin",
        "--format",
        "veracrypt",
        "--hash",
        "sha512",
    ];
    let (code, err) = d.fails(&args, "not the password\n");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("tcctl: wrong password or keyfile, or not a volume (searched for ")
            && err.ends_with(&format!(
                " s; {NO_PIM}; only sha512 was tried; only VeraCrypt volumes were searched)\n"
            ))
            && err.lines().count() == 1,
        "{err:?}"
    );
    // A TrueCrypt search has no PIM to narrow it by: with the hash given,
    // no hint is left, only what was tried. Only the backup headers asked
    // for are said too.
    let (code, err) = d.fails(
        &[
            "info",
            s(&vol),
            "--password-stdin",
            "--truecrypt",
            "--hash",
            "sha512",
            "-m",
            "headerbak",
        ],
        "not the password\n",
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.ends_with(
            " s; only sha512 was tried; only TrueCrypt volumes were searched; only the backup \
             headers were searched)\n"
        ) && !err.contains("--pim"),
        "{err:?}"
    );
    // A hash TrueCrypt never had searched VeraCrypt's format alone: no
    // --format hint.
    let (code, err) = d.fails(
        &["info", s(&vol), "--password-stdin", "--hash", "sha256"],
        "not the password\n",
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.ends_with(&format!(" s; {NO_PIM}; only sha256 was tried)\n")),
        "{err:?}"
    );
    // Standard input and output on a terminal, standard error not: no
    // progress either.
    let log = d.path("stderr.txt");
    let mut t = on_terminal(
        &d,
        &args[..2]
            .iter()
            .chain(&args[3..])
            .copied()
            .collect::<Vec<_>>(),
        Some(&log),
    );
    t.expect("Password for ", WAIT);
    t.type_line("not the password");
    t.expect("PIM for ", WAIT);
    t.type_line("");
    give_up_after_the_wrong_one(&mut t);
    let (code, shown) = ended(t);
    assert_eq!(code, Some(2), "{shown}");
    let err = std::fs::read_to_string(&log).expect("stderr");
    assert!(!err.contains("Trying"), "{err:?}");
    assert!(
        err.contains(&format!(
            " s; {NO_PIM}; only sha512 was tried; only VeraCrypt volumes were searched)\n"
        )),
        "{err:?}"
    );
}

#[test]
fn a_terminal_is_asked_for_the_pim_and_enter_means_none() {
    let d = Daemon::start();
    let vol = copy_of(&d, "vcpim_1_1234-sha256-xts-aes");
    let mut t = on_terminal(&d, &["info", s(&vol), "--hash", "sha256"], None);
    t.expect(&format!("Password for {}: ", vol.display()), WAIT);
    t.type_line("cccccccccccccccccccc");
    t.expect(
        &format!("PIM for {} (Enter for none): ", vol.display()),
        WAIT,
    );
    t.type_line("1234");
    let (code, shown) = ended(t);
    assert_eq!(code, Some(0), "{shown}");
    assert!(shown.contains("PKCS-5 PRF         SHA-256\n"), "{shown}");

    // Given on the command line (or for TrueCrypt): not asked.
    let tc = copy_of(&d, "tc_5-sha512-xts-aes");
    for args in [
        vec!["info", s(&tc), "--pim", "0", "--hash", "sha512"],
        vec!["info", s(&tc), "--format", "truecrypt", "--hash", "sha512"],
    ] {
        let mut t = on_terminal(&d, &args, None);
        t.expect("Password for ", WAIT);
        t.type_line(CORPUS_PASSWORD);
        let (code, shown) = ended(t);
        assert_eq!(code, Some(0), "{args:?}: {shown}");
        assert!(!shown.contains("PIM for"), "{args:?}: {shown}");
    }
}

/// A copy of a TrueCrypt 7 volume whose primary header is overwritten.
fn damaged(d: &Daemon) -> PathBuf {
    use std::os::unix::fs::FileExt;
    let vol = copy_of(d, "tc_5-sha512-xts-aes");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&vol)
        .expect("open the copy");
    f.write_all_at(&[0x5a; 512], 0).expect("damage the header");
    vol
}

#[test]
fn a_damaged_primary_header_is_said_with_the_repair() {
    let d = Daemon::start();
    let vol = damaged(&d);
    let notice = format!(
        "tcctl: warning: the primary header of {v} is damaged; its backup header opened it. \
         Repair the primary header with: tcctl restore-header --embedded {v}\n",
        v = vol.display()
    );
    let narrow = [
        "--password-stdin",
        "--format",
        "truecrypt",
        "--hash",
        "sha512",
    ];
    let mut info = vec!["info", s(&vol)];
    info.extend(narrow);
    let out = d.tcctl(&info, &format!("{CORPUS_PASSWORD}\n"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), notice);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Opened by backup   Yes"));
    // cryptsetup's dump says which header it read, not whether one exists.
    let mut dump = vec!["dump", s(&vol)];
    dump.extend(narrow);
    let out = d.tcctl(&dump, &format!("{CORPUS_PASSWORD}\n"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), notice);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.ends_with("\nHeader used:    Backup\n"), "{text}");

    let mut mount = vec!["mount", s(&vol), "--filesystem", "none", "--readonly"];
    mount.extend(narrow);
    let out = d.tcctl(&mount, &format!("{CORPUS_PASSWORD}\n"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), notice);
    d.ok(&["dismount", "--all"], "");

    // An intact volume says nothing of it.
    let intact = copy_of(&d, "tc_5-sha512-xts-serpent-aes");
    let mut info = vec!["info", s(&intact)];
    info.extend(narrow);
    let out = d.tcctl(&info, &format!("{CORPUS_PASSWORD}\n"));
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// `tcctl mount ARGS` on a terminal: refused with `code` (the daemon's
/// for the same refusal: 7 for a mount point, 4 mounted already) and
/// `said`, before any password is asked.
fn refused_before_the_prompt(d: &Daemon, args: &[&str], code: i32, said: &str) {
    let mut all = vec!["mount"];
    all.extend(args);
    let (got, shown) = ended(on_terminal(d, &all, None));
    assert_eq!(got, Some(code), "{args:?}: {shown}");
    assert_eq!(shown, said, "{args:?}");
}

#[test]
fn what_needs_no_password_is_refused_before_it_is_asked() {
    let d = Daemon::start();
    let vol = copy_of(&d, "tc_5-sha512-xts-aes");
    let v = s(&vol);
    let missing = d.path("no-such-folder");
    refused_before_the_prompt(
        &d,
        &[v, s(&missing)],
        7,
        &format!(
            "tcctl: mount point {} does not exist: create the folder first\n",
            missing.display()
        ),
    );
    let full = d.path("full");
    std::fs::create_dir(&full).expect("mkdir");
    std::fs::write(full.join("a file"), b"x").expect("a file");
    refused_before_the_prompt(
        &d,
        &[v, s(&full)],
        7,
        &format!(
            "tcctl: mount point {} is not empty: --allow-non-empty mounts over what is there\n",
            full.display()
        ),
    );
    refused_before_the_prompt(
        &d,
        &[v, "/usr"],
        7,
        "tcctl: mount point /usr is a system folder: choose another\n",
    );
    // A link to an empty folder: the folder itself is asked for.
    let empty = d.path("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let link = d.path("link");
    std::os::unix::fs::symlink(&empty, &link).expect("symlink");
    refused_before_the_prompt(
        &d,
        &[v, s(&link)],
        7,
        &format!(
            "tcctl: mount point {} is a symbolic link (to {}): name the folder itself\n",
            link.display(),
            empty.display()
        ),
    );
    // Mounted already (as a block device only).
    d.ok(
        &[
            "mount",
            v,
            "--filesystem",
            "none",
            "--readonly",
            "--password-stdin",
            "--format",
            "truecrypt",
            "--hash",
            "sha512",
        ],
        &format!("{CORPUS_PASSWORD}\n"),
    );
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    refused_before_the_prompt(
        &d,
        &[v],
        4,
        &format!(
            "tcctl: {v} is already attached as {device}: `tcctl mount -b {device}` mounts the \
             filesystem it holds, if any\n"
        ),
    );
    d.ok(&["dismount", "--all"], "");
    // Another volume's mount point: said so, not "not empty".
    let taken = d.path("taken");
    std::fs::create_dir(&taken).expect("mkdir");
    d.ok(
        &[
            "mount",
            v,
            s(&taken),
            "--readonly",
            "--password-stdin",
            "--format",
            "truecrypt",
            "--hash",
            "sha512",
        ],
        &format!("{CORPUS_PASSWORD}\n"),
    );
    let other = copy_of(&d, "tc_5-sha512-xts-serpent-aes");
    refused_before_the_prompt(
        &d,
        &[s(&other), s(&taken)],
        7,
        &format!(
            "tcctl: mount point {} is where {v} is mounted: dismount it first, or choose \
             another\n",
            taken.display()
        ),
    );
    // By another path to the same file, too.
    let link = d.path("another name");
    std::os::unix::fs::symlink(v, &link).expect("symlink");
    refused_before_the_prompt(
        &d,
        &[s(&link)],
        4,
        &format!(
            "tcctl: {} is {v}, which is already mounted on {}: `tcctl dismount {v}` first\n",
            s(&link),
            taken.display()
        ),
    );
    d.ok(&["dismount", "--all"], "");
}

/// Subscribes to every `SearchProgress` on the system bus and counts
/// what reaches it until a line comes on standard input; then searches
/// the volume `argv[1]` itself (a wrong password) and counts again.
/// Prints: others' signals seen, its own, the error of its search.
const LISTENER: &str = r#"
import sys, threading
from jeepney import DBusAddress, HeaderFields, MatchRule, new_method_call
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection
rule = MatchRule(type="signal", interface="org.tcd.Manager1", member="SearchProgress")
with open_dbus_connection(bus="SYSTEM", enable_fds=True) as conn:
    conn.send_and_get_reply(message_bus.AddMatch(rule), timeout=10)
    with conn.filter(rule, bufsize=100000) as seen:
        print("ready", flush=True)
        stop = threading.Event()
        threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
        while not stop.is_set():
            try:
                conn.recv_messages(timeout=0.2)
            except TimeoutError:
                pass
        others = len(seen)
        seen.clear()
        addr = DBusAddress("/org/tcd/Tcd1", bus_name="org.tcd.Tcd1", interface="org.tcd.Manager1")
        opts = {"hash": ("s", "sha512"), "format": ("s", "veracrypt")}
        with open(sys.argv[1], "rb") as f:
            call = new_method_call(addr, "HeaderInfo", "hayaaya{sv}", (f, b"not the password", [], opts))
            r = conn.send_and_get_reply(call, timeout=300)
        print(others, len(seen), r.header.fields.get(HeaderFields.error_name), flush=True)
"#;

#[test]
fn a_users_search_progress_reaches_that_user_alone_on_the_system_bus() {
    use std::io::{BufRead, Write};
    use tcd_tests::system::{PYTHON, System};
    tcd_tests::require_tool("python3", "package python3-jeepney");
    let sys = System::start();
    let (alice, bob) = (&sys.users[0], &sys.users[1]);
    let alices = sys.create_volume(alice, "a.hc", "24M");
    let bobs = sys.create_volume(bob, "b.hc", "24M");
    let mut listener = sys
        .command(Some(bob), PYTHON)
        .args(["-c", LISTENER, s(&bobs)])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let mut said = std::io::BufReader::new(listener.stdout.take().expect("stdout"));
    let mut line = String::new();
    said.read_line(&mut line)
        .expect("the listener's first line");
    assert_eq!(line, "ready\n");

    // Alice at a terminal, a wrong password: she sees her search go.
    let mut c = sys.tcctl_command(Some(alice));
    c.args([
        "info",
        s(&alices),
        "--format",
        "veracrypt",
        "--hash",
        "sha512",
    ]);
    let mut t = Pty::spawn_as(c, None, Some(alice.uid));
    t.expect("Password for ", WAIT);
    t.type_line("not the password");
    t.expect("PIM for ", WAIT);
    t.type_line("");
    give_up_after_the_wrong_one(&mut t);
    let (code, shown) = ended(t);
    assert_eq!(code, Some(2), "{shown}\n{}", sys.log());
    assert!(
        shown.contains("Trying VeraCrypt SHA-512 on the primary headers"),
        "{shown}"
    );

    // Bob heard none of it, but hears his own search.
    let mut input = listener.stdin.take().expect("stdin");
    input.write_all(b"go\n").expect("tell the listener");
    line.clear();
    said.read_line(&mut line).expect("the listener's counts");
    let _ = listener.wait();
    let counts: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(counts.first(), Some(&"0"), "Bob saw Alice's search: {line}");
    assert_eq!(
        counts.get(2),
        Some(&"org.tcd.Error.WrongPassword"),
        "{line}"
    );
    let own: u32 = counts.get(1).and_then(|n| n.parse().ok()).unwrap_or(0);
    assert!(own >= 2, "Bob sees his own search's progress: {line}");
}
