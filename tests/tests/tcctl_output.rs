//! What `tcctl` prints for people and for scripts: `list` (a table with a
//! header, or a word when nothing is mounted; `--json` with a schema,
//! arrays and nulls), `status` (as `cryptsetup status`, failing when not
//! mounted), `info --json`, `dump` (as `cryptsetup tcryptDump`, the master
//! key checked against cryptsetup's), `monitor` (as `udisksctl monitor`),
//! and a failing `favorites mount` said once.
//!
//! Runs a daemon of its own on a socket (root, /dev/fuse); the master key
//! of a real TrueCrypt volume is checked with cryptsetup (cryptsetup-bin).

use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use tcd_tests::cryptsetup::{master_key, tcrypt_dump};
use tcd_tests::daemon::Daemon;
use tcd_tests::system::{OPEN_FAST, PASSWORD, System};
use tcd_tests::{s, tcrypt_images};

const WAIT: Duration = Duration::from_secs(30);
const PW: &str = "output words\n";
const OPEN: [&str; 5] = ["--hash", "sha512", "--pim", "1", "--password-stdin"];

fn create(d: &Daemon, vol: &Path, filesystem: &str) {
    let mut args = vec![
        "create",
        s(vol),
        "--size",
        "8M",
        "--encryption",
        "AES",
        "--force",
    ];
    args.extend(["--filesystem", filesystem]);
    args.extend(OPEN);
    d.ok(&args, PW);
}

fn with_open<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut a = args.to_vec();
    a.extend(OPEN);
    a
}

#[test]
fn list_says_when_nothing_is_mounted_and_its_json_has_a_schema() {
    let d = Daemon::start();
    assert_eq!(d.ok(&["list"], ""), "No volumes mounted.\n");
    assert_eq!(d.ok(&["favorites", "list"], ""), "No favorites.\n");
    assert_eq!(
        d.ok(&["favorites", "mount", "--auto"], ""),
        "No favorite to mount: none of yours is marked --auto-mount (--all mounts every one).\n"
    );
    let doc: Value = serde_json::from_str(&d.ok(&["list", "--json"], "")).expect("json");
    assert_eq!(doc, json!({"schema": 1, "volumes": []}));
    for args in [&["backends", "--json"][..], &["policy", "show", "--json"]] {
        let doc: Value = serde_json::from_str(&d.ok(args, "")).expect("json");
        assert_eq!(doc["schema"], 1, "{args:?}: {doc}");
    }
}

#[test]
fn list_and_status_show_a_mounted_volume_and_an_attached_one() {
    let d = Daemon::start();
    let (vol, bare, mnt) = (d.path("v.vc"), d.path("b.vc"), d.path("mnt"));
    create(&d, &vol, "ext4");
    create(&d, &bare, "none");
    std::fs::create_dir(&mnt).expect("mount point");
    d.ok(&with_open(&["mount", s(&vol), s(&mnt)]), PW);
    d.ok(&with_open(&["mount", s(&bare), "--filesystem", "none"]), PW);

    let doc: Value = serde_json::from_str(&d.ok(&["list", "--json"], "")).expect("json");
    assert_eq!(doc["schema"], 1, "{doc}");
    let rows = doc["volumes"].as_array().expect("volumes is an array");
    assert_eq!(rows.len(), 2, "{doc}");
    let (v, b) = (&rows[0], &rows[1]);
    assert_eq!(v["volume"], s(&vol));
    assert_eq!(v["mount_point"], s(&mnt));
    assert_eq!(v["filesystem"], "ext4");
    assert_eq!(v["encryption"], "AES");
    assert_eq!(v["hash"], "SHA-512");
    assert_eq!(v["format"], "VeraCrypt");
    assert_eq!(
        (v["read_only"].clone(), v["hidden"].clone()),
        (json!(false), json!(false))
    );
    assert_eq!(v["owner"], 0);
    assert_eq!(
        (v["state"].clone(), v["health"].clone()),
        (json!("mounted"), json!("ok"))
    );
    assert_eq!(v["problems"], json!([]));
    assert!(v["size"].as_u64().is_some_and(|n| n > 7 << 20), "{v}");
    assert!(
        v["backends"]
            .as_array()
            .is_some_and(|b| b.len() == 1 && b[0].is_string()),
        "{v}"
    );
    let id = v["id"].as_u64().expect("id is a number");
    assert_eq!(v["object"], format!("/org/tcd/Tcd1/volumes/{id}"));
    // Every field is named in tcctl(1) and docs/OUTPUT.md.
    let man = tcd_tests::tcctl_manual_page();
    let (_, output) = man.split_once(".SH OUTPUT").expect("an OUTPUT section");
    let doc_md = std::fs::read_to_string(tcd_tests::repo_dir().join("docs/OUTPUT.md"))
        .expect("docs/OUTPUT.md");
    for field in v.as_object().expect("an object").keys() {
        let bold = format!("\\fB{}\\fR", field.replace('-', "\\-"));
        assert!(output.contains(&bold), "tcctl(1) OUTPUT lacks {field}");
        assert!(
            doc_md.contains(&format!("`{field}`")),
            "OUTPUT.md lacks {field}"
        );
    }
    // Attached only: no mount point is null, not "".
    assert_eq!(b["volume"], s(&bare));
    assert_eq!(b["mount_point"], Value::Null, "{b}");
    assert_eq!(b["state"], "attached", "no filesystem mounted: {b}");
    assert!(
        b["device"].as_str().is_some_and(|p| p.starts_with("/dev/")),
        "{b}"
    );

    let human = d.ok(&["list"], "");
    let lines: Vec<&str> = human.lines().collect();
    let header: Vec<&str> = lines[0].split("  ").filter(|c| !c.is_empty()).collect();
    let header: Vec<&str> = header.iter().map(|c| c.trim()).collect();
    assert_eq!(
        header,
        [
            "VOLUME",
            "DEVICE",
            "MOUNT POINT",
            "SIZE",
            "ENCRYPTION",
            "FORMAT",
            "ACCESS",
            "HIDDEN",
            "BACKENDS",
            "STATE"
        ],
        "{human}"
    );
    assert_eq!(lines.len(), 3, "{human}");
    let cells: Vec<&str> = lines[1].split_whitespace().collect();
    let device = v["device"].as_str().expect("device");
    let backend = v["backends"][0].as_str().expect("backend");
    assert_eq!(
        cells,
        [
            s(&vol),
            device,
            s(&mnt),
            "7.8M",
            "AES",
            "VeraCrypt",
            "read-write",
            "No",
            backend,
            "ok"
        ],
        "{human}"
    );
    assert!(
        lines[2].starts_with(s(&bare)) && lines[2].contains("  -  "),
        "{human}"
    );

    status_by_every_name(&d, &vol, &mnt, device);
    d.ok(&["dismount", "--all"], "");
    let out = d.tcctl(&["status", s(&vol)], "");
    assert_eq!(out.status.code(), Some(3), "not mounted is exit 3");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!("tcctl: {} is not mounted\n", s(&vol))
    );
    assert_eq!(d.ok(&["list"], ""), "No volumes mounted.\n");
}

#[test]
fn a_cascades_backends_are_named_one_per_layer_with_plus_signs() {
    let d = Daemon::start();
    let vol = d.path("c.vc");
    let create = [
        &[
            "create",
            s(&vol),
            "--size",
            "4M",
            "--encryption",
            "Serpent-AES",
        ][..],
        &["--filesystem", "none", "--force"],
        &OPEN,
    ]
    .concat();
    d.ok(&create, PW);
    d.ok(&with_open(&["mount", s(&vol), "--filesystem", "none"]), PW);
    let layers: Vec<String> = d.list()[0]["backends"]
        .as_array()
        .expect("backends")
        .iter()
        .map(|b| b.as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(layers.len(), 2, "{layers:?}");
    let named = layers.join("+");
    let list = d.ok(&["list"], "");
    assert!(
        list.lines()
            .nth(1)
            .is_some_and(|l| l.split_whitespace().any(|c| c == named)),
        "{list}"
    );
    let status = d.ok(&["status", s(&vol)], "");
    assert!(
        status.contains(&format!("  backends:        {named}\n")),
        "{status}"
    );
    let info = d.ok(&with_open(&["info", s(&vol)]), PW);
    assert!(
        info.ends_with(&format!("Backends           {named}\n")),
        "{info}"
    );
    d.ok(&["dismount", s(&vol)], "");
}

/// `status` finds the volume by container, mount point and device, and says
/// what `cryptsetup status` says.
fn status_by_every_name(d: &Daemon, vol: &Path, mnt: &Path, device: &str) {
    for name in [s(vol), s(mnt), device] {
        let out = d.ok(&["status", name], "");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            format!("{} is active and mounted.", s(vol)),
            "{out}"
        );
        for want in [
            format!("  device:          {device}"),
            format!("  mount point:     {}", s(mnt)),
            "  filesystem:      ext4".into(),
            "  type:            TCRYPT".into(),
            "  cipher:          AES".into(),
            "  cipher mode:     xts-plain64".into(),
            // As cryptsetup status: AES-XTS's two 256-bit keys, and a
            // VeraCrypt volume's data after its 128 KiB of headers.
            "  keysize:         512 bits".into(),
            "  offset:          256 sectors".into(),
            "  PRF:             SHA-512".into(),
            "  format:          VeraCrypt".into(),
            "  mode:            read/write".into(),
            "  hidden:          No".into(),
            "  protects hidden: No".into(),
            "  health:          ok".into(),
        ] {
            assert!(lines.contains(&want.as_str()), "{want:?} in {out}");
        }
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("  size:            7.8M (")),
            "{out}"
        );
    }
    let doc: Value = serde_json::from_str(&d.ok(&["status", s(mnt), "--json"], "")).expect("json");
    assert_eq!(
        (doc["schema"].clone(), doc["volume"].clone()),
        (json!(1), json!(s(vol)))
    );
}

#[test]
fn info_json_has_the_schema_path_pim_and_arrays() {
    let d = Daemon::start();
    let vol = d.path("v.vc");
    create(&d, &vol, "none");
    let doc: Value =
        serde_json::from_str(&d.ok(&with_open(&["info", s(&vol), "--json"]), PW)).expect("json");
    assert_eq!(doc["schema"], 1);
    assert_eq!(doc["path"], s(&vol));
    assert_eq!(doc["pim"], 1);
    assert_eq!(doc["iterations"], 16000, "VeraCrypt SHA-512 at PIM 1");
    assert_eq!(doc["key_bits"], 512);
    assert_eq!(doc["mode"], "xts-plain64");
    assert_eq!(doc["hash"], "SHA-512");
    assert!(
        doc["backends"].as_array().is_some_and(|b| b.len() == 1),
        "{doc}"
    );
    assert_eq!(doc["used_backup_header"], false);
    // The header's minimum program version, as VeraCrypt numbers it.
    assert_eq!(doc["minimum_version"], "VeraCrypt 1.0b");
    // Its earlier name, for the scripts that read it.
    assert_eq!(doc["created_by"], doc["minimum_version"]);
    assert_eq!(doc["system_encryption"], false);

    // For people: VeraCrypt's volume properties, in its order.
    let text = d.ok(&with_open(&["info", s(&vol)]), PW);
    let labels: Vec<&str> = text.lines().map(|l| l[..18].trim_end()).collect();
    assert_eq!(
        labels[..12],
        [
            "Volume",
            "Format",
            "Minimum version",
            "System encryption",
            "Header version",
            "Hidden volume",
            "Encryption",
            "Key size",
            "Mode",
            "PKCS-5 PRF",
            "Iterations",
            "PIM"
        ],
        "{text}"
    );
    assert!(text.contains("\nPIM                1\n"), "{text}");
    // VeraCrypt's words for AES-XTS's keys.
    assert!(
        text.contains("\nKey size           256 bits, secondary key (XTS mode) 256 bits\n"),
        "{text}"
    );
}

#[test]
fn dump_shows_the_header_and_with_a_flag_the_master_key_cryptsetup_finds() {
    let d = Daemon::start();
    let vol = d.path("tc_5-sha512-xts-aes");
    std::fs::copy(tcrypt_images().join("tc_5-sha512-xts-aes"), &vol).expect("copy");
    let pw = "aaaaaaaaaaaa\n";
    let plain = d.tcctl(&["dump", s(&vol), "--password-stdin"], pw);
    assert!(plain.status.success());
    let text = String::from_utf8_lossy(&plain.stdout).into_owned();
    // No PIM: TrueCrypt's format has none, and cryptsetup shows none.
    assert_eq!(
        text,
        format!(
            "TCRYPT header information for {}\n\
             Format:         TrueCrypt\n\
             Version:        5\n\
             Sector size:    512\n\
             Payload offset: 256 sectors\n\
             Data offset:    131072 bytes\n\
             Size:           {} bytes\n\
             PBKDF2 hash:    SHA-512\n\
             Iterations:     1000\n\
             Cipher chain:   AES\n\
             Cipher mode:    xts-plain64\n\
             MK bits:        512\n\
             Hidden:         No\n\
             Header used:    Primary\n",
            s(&vol),
            // The container less its two header areas of 128 KiB.
            std::fs::metadata(&vol).expect("the volume").len() - (256 << 10)
        )
    );
    assert_eq!(
        String::from_utf8_lossy(&plain.stderr),
        "",
        "no warning without the key"
    );

    let keyed = d.tcctl(
        &[
            "dump",
            s(&vol),
            "--password-stdin",
            "--dump-master-key",
            "-q",
        ],
        pw,
    );
    assert!(
        keyed.status.success(),
        "{}",
        String::from_utf8_lossy(&keyed.stderr)
    );
    let err = String::from_utf8_lossy(&keyed.stderr);
    assert!(err.starts_with("WARNING: the master key of "), "{err}");
    let ours = master_key(&String::from_utf8_lossy(&keyed.stdout));
    assert_eq!(ours.len(), 64);
    assert_eq!(
        ours,
        master_key(&tcrypt_dump(&vol, b"aaaaaaaaaaaa", "sha512", true))
    );
    let doc: Value = serde_json::from_slice(
        &d.tcctl(
            &[
                "dump",
                s(&vol),
                "--password-stdin",
                "--dump-master-key",
                "--batch-mode",
                "--json",
            ],
            pw,
        )
        .stdout,
    )
    .expect("json");
    let hex: String = ours.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        (doc["schema"].clone(), doc["master_key"].clone()),
        (json!(1), json!(hex))
    );
    assert_eq!(doc["pim"], Value::Null, "the default PIM is null");
}

#[test]
fn the_master_key_needs_yes_typed_on_a_terminal_or_batch_mode() {
    let d = Daemon::start();
    let vol = d.path("tc_5-sha512-xts-aes");
    std::fs::copy(tcrypt_images().join("tc_5-sha512-xts-aes"), &vol).expect("copy");
    let args = [
        "dump",
        s(&vol),
        "--password-stdin",
        "--hash",
        "sha512",
        "--dump-master-key",
    ];
    // No terminal to confirm on: refused at once, before any search.
    let out = d.tcctl(&args, "aaaaaaaaaaaa\n");
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            out.stdout.len()
        ),
        (
            Some(64),
            "tcctl: --dump-master-key: confirmation needed and no terminal to ask on: give --batch-mode\n".into(),
            0
        )
    );
    // cryptsetup's spelling is named as typed.
    let mut volume_key = args;
    volume_key[5] = "--dump-volume-key";
    let out = d.tcctl(&volume_key, "aaaaaaaaaaaa\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tcctl: --dump-volume-key: confirmation needed and no terminal to ask on: give --batch-mode\n"
    );
    let password = d.path("password");
    std::fs::write(&password, "aaaaaaaaaaaa\n").expect("password file");
    let on_terminal = |answer: &str| {
        let mut c = d.command();
        c.args(args);
        let input = std::fs::File::open(&password).expect("password file");
        let mut t = tcd_tests::pty::Pty::spawn(c, Some(Stdio::from(input)));
        t.expect("Are you sure? (Type 'YES' in capital letters): ", WAIT);
        std::thread::sleep(Duration::from_millis(300));
        t.type_line(answer);
        let (code, shown) = t.finish(Duration::from_secs(120));
        (code, shown.replace("\r\n", "\n"))
    };
    let (code, shown) = on_terminal("yes");
    assert_eq!(code, 10, "{shown}");
    assert!(
        shown.ends_with("yes\ntcctl: not confirmed: nothing done\n") && !shown.contains("MK dump"),
        "{shown}"
    );
    let (code, shown) = on_terminal("YES");
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("WARNING: the master key of "), "{shown}");
    assert_eq!(master_key(&shown).len(), 64, "{shown}");
    // The password typed on the terminal comes first, as cryptsetup asks
    // it; a wrong one ends the command without the question.
    let typed = |password: &str| {
        let mut c = d.command();
        c.args(args.iter().filter(|a| **a != "--password-stdin"));
        let mut t = tcd_tests::pty::Pty::spawn(c, None);
        t.answer("Password for ", password, WAIT);
        t.answer("PIM for ", "", WAIT);
        t
    };
    let mut t = typed("aaaaaaaaaaaa");
    t.expect("Are you sure? (Type 'YES' in capital letters): ", WAIT);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("YES");
    let (code, shown) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{shown}");
    assert_eq!(
        master_key(&shown.replace("\r\n", "\n")).len(),
        64,
        "{shown}"
    );
    // A wrong one is told and the password asked again (as VeraCrypt
    // does), without the question.
    let mut t = typed("not the password");
    t.expect_times("Password for ", 2, WAIT);
    let shown = t.text();
    assert!(shown.contains("wrong password"), "{shown}");
    assert!(!shown.contains("Are you sure"), "{shown}");
    t.child.kill().expect("kill");
    t.child.wait().expect("wait");
}

/// A daemon with a policy file of the test's own (`policy set` writes
/// it), an ext4 volume and a folder to mount it on.
fn with_policy_and_volume() -> (tempfile::TempDir, Daemon, PathBuf, PathBuf) {
    let policy = tempfile::tempdir().expect("temp dir");
    let file = policy.path().join("policy.toml");
    let d = Daemon::start_with(&[std::ffi::OsStr::new("--policy"), file.as_os_str()]);
    let (vol, mnt) = (d.path("v.vc"), d.path("mnt"));
    create(&d, &vol, "ext4");
    std::fs::create_dir(&mnt).expect("mount point");
    (policy, d, vol, mnt)
}

/// Runs `tcctl monitor` on the daemon of `d`.
fn monitor(d: &Daemon) -> (std::process::Child, mpsc::Receiver<String>) {
    let c = d.command();
    monitor_with(c)
}

/// Runs `tcctl` (`c`, daemon chosen) `monitor`; its lines come on the
/// receiver.
fn monitor_with(c: Command) -> (std::process::Child, mpsc::Receiver<String>) {
    monitor_args(c, &[])
}

/// Runs `tcctl` (`c`, daemon chosen) `monitor` with `args`; its lines come
/// on the receiver.
fn monitor_args(mut c: Command, args: &[&str]) -> (std::process::Child, mpsc::Receiver<String>) {
    let mut child = c
        .arg("monitor")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("tcctl monitor");
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// The next line of `rx` (within 20 s).
fn next(rx: &mpsc::Receiver<String>, what: &str) -> String {
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("monitor printed no line for {what}"))
}

/// "HH:MM:SS.mmm: rest" → rest, the stamp checked.
fn stamped(line: &str) -> &str {
    let (stamp, rest) = line.split_at(12.min(line.len()));
    let digits: Vec<bool> = stamp.chars().map(|c| c.is_ascii_digit()).collect();
    assert!(
        stamp.len() == 12
            && stamp.chars().enumerate().all(|(i, c)| match i {
                2 | 5 => c == ':',
                8 => c == '.',
                _ => digits[i],
            }),
        "no timestamp: {line}"
    );
    rest.strip_prefix(": ").unwrap_or_else(|| panic!("{line}"))
}

#[test]
fn monitor_prints_each_mount_dismount_and_policy_change_once() {
    let (_policy, d, vol, mnt) = with_policy_and_volume();
    let (mut child, rx) = monitor(&d);
    assert_eq!(
        next(&rx, "the start"),
        "Monitoring the tcd daemon. Press Ctrl+C to exit."
    );
    d.ok(&with_open(&["mount", s(&vol), s(&mnt)]), PW);
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    let object = d.list()[0]["object"].as_str().expect("object").to_owned();
    let line = next(&rx, "the mount");
    assert_eq!(
        stamped(&line),
        format!("{object}: mounted {} on {} ({device})", s(&vol), s(&mnt))
    );
    // Typed with a slash at its end, named without it.
    let out = d.tcctl(&["dismount", &format!("{}/", s(&mnt))], "");
    assert_eq!(
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        (
            Some(0),
            format!("{} dismounted ({})\n", s(&vol), s(&mnt)).into(),
            "".into()
        ),
        "dismount says on standard output which volume went, by what it was named"
    );
    let line = next(&rx, "the dismount");
    assert_eq!(stamped(&line), format!("{object}: dismounted {}", s(&vol)));
    // A read-only mount says so.
    d.ok(&with_open(&["mount", s(&vol), s(&mnt), "-r"]), PW);
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    let object = d.list()[0]["object"].as_str().expect("object").to_owned();
    assert_eq!(
        stamped(&next(&rx, "the read-only mount")),
        format!(
            "{object}: mounted {} on {} ({device}), read-only",
            s(&vol),
            s(&mnt)
        )
    );
    d.ok(&["dismount", s(&mnt)], "");
    assert_eq!(
        stamped(&next(&rx, "the read-only dismount")),
        format!("{object}: dismounted {}", s(&vol))
    );
    // An idle dismount is one line, and the mount before it one line too:
    // the next thing said is the policy change.
    d.ok(
        &with_open(&["mount", s(&vol), s(&mnt), "--dismount-idle", "1"]),
        PW,
    );
    let object = d.list()[0]["object"].as_str().expect("object").to_owned();
    let line = next(&rx, "the second mount");
    assert!(
        stamped(&line).starts_with(&format!("{object}: mounted {}", s(&vol))),
        "{line}"
    );
    let line = next(&rx, "the idle dismount");
    assert_eq!(
        stamped(&line),
        format!("{object}: dismounted {} automatically (idle)", s(&vol))
    );
    d.ok(
        &["policy", "set", "--hardware-acceleration", "disabled"],
        "",
    );
    let line = next(&rx, "the policy change");
    assert_eq!(
        stamped(&line),
        "policy changed: hardware acceleration disabled, backends allowed all, preferred -"
    );
    // Another change of another setting is another line.
    d.ok(&["policy", "set", "--allow", "soft"], "");
    let line = next(&rx, "the allow-list change");
    assert_eq!(
        stamped(&line),
        "policy changed: hardware acceleration disabled, backends allowed soft, preferred -"
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn monitor_json_gives_each_event_a_line_of_its_fields() {
    let (_policy, d, vol, mnt) = with_policy_and_volume();
    let (mut child, rx) = monitor_args(d.command(), &["--json"]);
    // No banner: the first line is the first event, JSON like every line.
    let event = |what: &str| -> serde_json::Value {
        let line = next(&rx, what);
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{what}: {e}: {line}"))
    };
    std::thread::sleep(Duration::from_millis(500));
    d.ok(&with_open(&["mount", s(&vol), s(&mnt)]), PW);
    let row = d.list()[0].clone();
    let e = event("the mount");
    assert_eq!(e["schema"], 1);
    assert_eq!(e["event"], "mounted");
    assert_eq!(e["object"], row["object"]);
    assert_eq!(e["volume"], s(&vol));
    assert_eq!(e["mount_point"], s(&mnt));
    assert_eq!(e["device"], row["device"]);
    assert_eq!(e["read_only"], false);
    let time = e["time"].as_str().expect("time");
    assert!(
        time.len() == 24 && time.ends_with('Z') && time.as_bytes()[10] == b'T',
        "{time}"
    );
    assert_eq!(
        e["message"],
        format!(
            "mounted {} on {} ({})",
            s(&vol),
            s(&mnt),
            row["device"].as_str().expect("device")
        )
    );
    d.ok(&["dismount", s(&mnt)], "");
    let e = event("the dismount");
    assert_eq!(
        (&e["event"], &e["object"], &e["volume"]),
        (&"dismounted".into(), &row["object"], &s(&vol).into())
    );
    d.ok(
        &["policy", "set", "--hardware-acceleration", "disabled"],
        "",
    );
    let e = event("the policy change");
    assert_eq!(e["event"], "policy_changed");
    assert_eq!(e["object"], serde_json::Value::Null);
    assert_eq!(e["policy"]["hardware_acceleration"], "disabled");
    assert_eq!(e["policy"]["all_allowed"], true);
    assert_eq!(e["policy"]["allowed"], serde_json::Value::Null);
    d.ok(
        &with_open(&["change-password", s(&vol)]),
        &format!("{PW}new output words, twenty and more\n"),
    );
    let e = event("the password change");
    assert_eq!(
        (&e["event"], &e["method"], &e["backup"]),
        (
            &"headers_written".into(),
            &"ChangePassword".into(),
            &serde_json::Value::Null
        ),
        "{e}"
    );
    assert_eq!(
        (&e["converted_to"], &e["hidden"]),
        (&serde_json::Value::Null, &false.into()),
        "{e}"
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_favorite_that_cannot_be_mounted_is_reported_once() {
    let d = Daemon::start();
    let vol = d.path("gone.vc");
    create(&d, &vol, "none");
    d.ok(&["favorites", "add", "gone", s(&vol)], "");
    std::fs::remove_file(&vol).expect("remove the volume");
    let (code, err) = d.fails(&["favorites", "mount", "gone", "--password-stdin"], PW);
    assert_eq!(code, 3, "{err}");
    assert_eq!(
        err,
        format!("tcctl: gone: {}: no such file or device\n", s(&vol))
    );
}

#[test]
fn on_the_system_bus_only_root_reads_a_master_key_and_a_monitor_sees_its_own() {
    let sys = System::start();
    let (alice, bob) = (&sys.users[0], &sys.users[1]);
    let vol = sys.create_volume(alice, "a.hc", "24M");
    let mut args = vec!["dump", s(&vol), "--dump-master-key", "--batch-mode"];
    args.extend(OPEN_FAST);
    let out = sys.tcctl(Some(alice), &args, &format!("{PASSWORD}\n"));
    assert_eq!(out.status.code(), Some(6), "PERMISSION_DENIED");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tcctl: only root may read a master key\n"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    // Without --batch-mode, tcctl says it before asking to confirm.
    args.retain(|a| *a != "--batch-mode");
    let out = sys.tcctl(Some(alice), &args, &format!("{PASSWORD}\n"));
    assert_eq!(
        (out.status.code(), String::from_utf8_lossy(&out.stderr)),
        (
            Some(6),
            "tcctl: --dump-master-key: only root may read a master key\n".into()
        )
    );

    // Root gets the key cryptsetup finds, and the daemon logs none of it.
    let corpus = sys.dir.path().join("tc_5-sha512-xts-aes");
    std::fs::copy(tcrypt_images().join("tc_5-sha512-xts-aes"), &corpus).expect("copy");
    let dump = sys.ok(
        None,
        &[
            "dump",
            s(&corpus),
            "--dump-master-key",
            "-q",
            "--password-stdin",
        ],
        "aaaaaaaaaaaa\n",
    );
    let key = master_key(&dump);
    assert_eq!(
        key,
        master_key(&tcrypt_dump(&corpus, b"aaaaaaaaaaaa", "sha512", true))
    );
    let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    let log = sys.log().to_lowercase();
    assert!(!log.contains(&hex) && !log.contains(&hex[..16]), "{log}");

    // Alice's monitor shows her mount, not Bob's before it.
    let bob_vol = sys.create_volume(bob, "b.hc", "24M");
    let (mut child, rx) = monitor_with(sys.tcctl_command(Some(alice)));
    assert_eq!(
        next(&rx, "the start"),
        "Monitoring the tcd daemon. Press Ctrl+C to exit."
    );
    sys.mount(bob, &bob_vol, &bob.path("mnt"));
    sys.mount(alice, &vol, &alice.path("mnt"));
    let line = next(&rx, "alice's mount");
    let mounted = format!(": mounted {} on {} (", s(&vol), s(&alice.path("mnt")));
    assert!(stamped(&line).contains(&mounted), "{line}");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_reader_that_goes_away_ends_tcctl_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let d = Daemon::start();
    // `tcctl backends | true`: the pipe's reader is gone before tcctl
    // writes.
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let out = d
        .command()
        .arg("backends")
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("tcctl");
    assert_eq!(
        (
            out.status.signal(),
            String::from_utf8_lossy(&out.stderr).into_owned()
        ),
        (Some(libc::SIGPIPE), String::new()),
        "ended by SIGPIPE as `ls` would be, with nothing said: {:?}",
        out.status
    );
}

/// A typo at the PIM prompt is asked again, as VeraCrypt does; the
/// password typed before it stands.
#[test]
fn a_pim_that_is_not_a_number_is_asked_again() {
    let d = Daemon::start();
    let vol = d.path("v.vc");
    create(&d, &vol, "none");
    let mut c = d.command();
    c.args(["info", s(&vol), "--hash", "sha512"]);
    let mut t = tcd_tests::pty::Pty::spawn(c, None);
    let prompt = format!("PIM for {} (Enter for none): ", s(&vol));
    t.expect(&format!("Password for {}: ", s(&vol)), WAIT);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    t.expect(&prompt, WAIT);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("abc");
    t.expect("a PIM is a whole number (Enter for none)", WAIT);
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("1");
    let (code, shown) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{shown}");
    assert_eq!(shown.matches(&prompt).count(), 2, "{shown}");
    assert!(shown.contains("PIM                1\r\n"), "{shown}");
}

/// A backend the daemon does not have is refused before the password is
/// asked, with the names of those it has.
#[test]
fn an_unknown_backend_is_refused_before_the_password_with_the_backends_there_are() {
    let d = Daemon::start();
    let vol = d.path("v.vc");
    create(&d, &vol, "none");
    let listed: serde_json::Value =
        serde_json::from_str(&d.ok(&["backends", "--json"], "")).expect("backends --json");
    let names: Vec<&str> = listed["backends"]
        .as_array()
        .expect("backends")
        .iter()
        .filter_map(|b| b["name"].as_str())
        .collect();
    assert!(names.contains(&"soft"), "{listed}");
    for command in ["mount", "info"] {
        let mut c = d.command();
        c.args([command, s(&vol), "--backend", "bogus"]);
        let t = tcd_tests::pty::Pty::spawn(c, None);
        let (code, shown) = t.finish(WAIT);
        assert_eq!(
            (code, shown.trim_end()),
            (
                64,
                format!(
                    "tcctl: no backend named bogus; the daemon has {}",
                    names.join(", ")
                )
                .as_str()
            ),
            "{command}"
        );
    }
}

#[test]
fn monitor_prints_a_line_for_each_call_that_writes_a_volumes_headers() {
    let d = Daemon::start();
    let (vol, backup) = (d.path("h.vc"), d.path("h.backup"));
    let (mut child, rx) = monitor(&d);
    assert_eq!(
        next(&rx, "the start"),
        "Monitoring the tcd daemon. Press Ctrl+C to exit."
    );
    create(&d, &vol, "none");
    assert_eq!(
        stamped(&next(&rx, "the creation")),
        format!("created {}", s(&vol))
    );
    // A new container in the place of a file is named by that file, not
    // by the file it is made in beside it.
    create(&d, &vol, "none");
    assert_eq!(
        stamped(&next(&rx, "the replacement")),
        format!("created {}", s(&vol))
    );
    // A hidden volume is written inside the container, which stays.
    d.ok(
        &with_open(&[
            "create",
            s(&vol),
            "--hidden-size",
            "1M",
            "--outer-pim",
            "1",
            "--outer-hash",
            "sha512",
            "--filesystem",
            "none",
        ]),
        &format!("{PW}hidden output words, twenty and more\n"),
    );
    assert_eq!(
        stamped(&next(&rx, "the hidden volume")),
        format!("created a hidden volume in {}", s(&vol))
    );
    d.ok(
        &with_open(&["expand", "-q", s(&vol), "--size", "16M", "--no-random-fill"]),
        PW,
    );
    assert_eq!(
        stamped(&next(&rx, "the expansion")),
        format!("expanded {} to 16 MiB", s(&vol))
    );
    // A backup writes no header of the volume: no line.
    d.ok(&with_open(&["backup-header", s(&vol), s(&backup)]), PW);
    d.ok(
        &with_open(&["change-password", s(&vol)]),
        &format!("{PW}new output words, twenty and more\n"),
    );
    assert_eq!(
        stamped(&next(&rx, "the password change")),
        format!("changed the credentials of {}", s(&vol))
    );
    d.ok(
        &with_open(&["restore-header", s(&vol), s(&backup), "-q"]),
        PW,
    );
    assert_eq!(
        stamped(&next(&rx, "the restore from a file")),
        format!("restored the header of {} from {}", s(&vol), s(&backup))
    );
    d.ok(
        &with_open(&["restore-header", s(&vol), "--embedded", "-q"]),
        PW,
    );
    assert_eq!(
        stamped(&next(&rx, "the restore of the embedded backup")),
        format!(
            "restored the header of {} from its embedded backup",
            s(&vol)
        )
    );
    d.ok(
        &with_open(&["change-password", s(&vol), "--to", "truecrypt", "--force"]),
        &format!("{PW}truecrypt output words, twenty and more\n"),
    );
    assert_eq!(
        stamped(&next(&rx, "the conversion")),
        format!(
            "changed the credentials of {} and converted it to TrueCrypt",
            s(&vol)
        )
    );
    let _ = child.kill();
    let _ = child.wait();
    assert!(rx.try_recv().is_err(), "one line for each");
}

#[test]
fn on_the_system_bus_a_users_header_work_is_told_to_them_and_root_but_not_to_another_user() {
    let sys = System::start();
    let (alice, bob) = (&sys.users[0], &sys.users[1]);
    let started = |c: Command| {
        let (child, rx) = monitor_with(c);
        assert_eq!(
            next(&rx, "the start"),
            "Monitoring the tcd daemon. Press Ctrl+C to exit."
        );
        (tcd_tests::daemon::Stopped(child), rx)
    };
    let (_bob_monitor, bobs) = started(sys.tcctl_command(Some(bob)));
    let (_alice_monitor, alices) = started(sys.tcctl_command(Some(alice)));
    let (_root_monitor, roots) = started(sys.tcctl_command(None));
    let vol = sys.create_volume(alice, "a.hc", "24M");
    let mut args = vec!["change-password", s(&vol)];
    args.extend(OPEN_FAST);
    sys.ok(
        Some(alice),
        &args,
        &format!("{PASSWORD}\nnew user words, twenty and more\n"),
    );
    for (rx, who) in [(&alices, "alice"), (&roots, "root")] {
        assert_eq!(
            stamped(&next(rx, &format!("alice's creation, to {who}"))),
            format!("created {}", s(&vol))
        );
        assert_eq!(
            stamped(&next(rx, &format!("alice's password change, to {who}"))),
            format!("changed the credentials of {}", s(&vol))
        );
    }
    // Bob's first line is his own volume's: nothing of Alice's came first.
    let his = sys.create_volume(bob, "b.hc", "24M");
    assert_eq!(
        stamped(&next(&bobs, "bob's creation")),
        format!("created {}", s(&his))
    );
    assert_eq!(
        stamped(&next(&roots, "bob's creation, to root")),
        format!("created {}", s(&his))
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(alices.try_recv().is_err(), "alice hears nothing of bob's");
    assert!(bobs.try_recv().is_err(), "bob hears nothing more");
}

/// The daemon names options by their D-Bus keys; tcctl says them as its
/// user typed them.
#[test]
fn a_daemon_refusal_names_tcctls_options_not_the_dbus_keys() {
    let d = Daemon::start();
    let (vol, mnt) = (d.path("v.vc"), d.path("mnt"));
    create(&d, &vol, "ext4");
    std::fs::create_dir(&mnt).expect("mount point");
    let hidden = "h".repeat(5000);
    let (code, err) = d.fails(
        &with_open(&["mount", s(&vol), s(&mnt), "--protect-hidden"]),
        &format!("{PW}{hidden}\n"),
    );
    assert_eq!(
        (code, err.as_str()),
        (7, "tcctl: --protect-hidden of 5000 bytes (at most 4096)\n")
    );
    let fs_options = ["noatime"; 600].join(",");
    let (code, err) = d.fails(
        &with_open(&["mount", s(&vol), s(&mnt), "--fs-options", &fs_options]),
        PW,
    );
    assert_eq!(
        (code, err.as_str()),
        (7, "tcctl: --fs-options of 4799 bytes (at most 4096)\n")
    );
    assert_eq!(d.ok(&["list"], ""), "No volumes mounted.\n");
}

#[test]
fn monitor_prints_only_changes_and_each_dismount_when_the_daemon_stops_and_outlives_it() {
    let mut d = Daemon::start();
    let (v1, v2, mnt) = (d.path("v1.vc"), d.path("v2.vc"), d.path("mnt"));
    create(&d, &v1, "none");
    create(&d, &v2, "ext4");
    std::fs::create_dir(&mnt).expect("mount point");
    d.ok(&with_open(&["mount", s(&v1), "--filesystem", "none"]), PW);
    let first = d.list()[0]["object"].as_str().expect("object").to_owned();
    let (mut child, rx) = monitor(&d);
    assert_eq!(
        next(&rx, "the start"),
        "Monitoring the tcd daemon. Press Ctrl+C to exit."
    );
    // The volume mounted before it started is no news: the next line is
    // the mount after it.
    d.ok(&with_open(&["mount", s(&v2), s(&mnt)]), PW);
    let second = d.list()[1]["object"].as_str().expect("object").to_owned();
    let line = next(&rx, "the mount");
    assert!(
        stamped(&line).starts_with(&format!("{second}: mounted {}", s(&v2))),
        "{line}"
    );
    // SIGTERM dismounts both, and the monitor hears of each, as
    // dismounts nobody called for.
    assert!(d.stop().success());
    let mut said = vec![
        stamped(&next(&rx, "a dismount at the stop")).to_owned(),
        stamped(&next(&rx, "the other dismount at the stop")).to_owned(),
    ];
    said.sort();
    assert_eq!(
        said,
        [
            format!(
                "{first}: dismounted {} automatically (daemon stopping)",
                s(&v1)
            ),
            format!(
                "{second}: dismounted {} automatically (daemon stopping)",
                s(&v2)
            ),
        ]
    );
    // Said, waited for, and monitored again once back, as udisksctl
    // monitor outlives udisksd.
    assert_eq!(
        stamped(&next(&rx, "the daemon's going")),
        "the daemon went away: monitoring again once it is back"
    );
    d.spawn();
    assert_eq!(
        stamped(&next(&rx, "the daemon's return")),
        "the daemon is back"
    );
    d.ok(&with_open(&["mount", s(&v1), "--filesystem", "none"]), PW);
    let again = d.list()[0]["object"].as_str().expect("object").to_owned();
    assert!(
        stamped(&next(&rx, "a mount after the return"))
            .starts_with(&format!("{again}: attached {}", s(&v1))),
        "monitored again"
    );
    assert_eq!(child.try_wait().expect("monitor"), None, "monitor ended");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn status_and_list_say_discards_and_the_idle_dismount() {
    let d = Daemon::start();
    let (vol, mnt) = (d.path("v.vc"), d.path("mnt"));
    create(&d, &vol, "ext4");
    std::fs::create_dir(&mnt).expect("mount point");
    d.ok(
        &with_open(&[
            "mount",
            s(&vol),
            s(&mnt),
            "--discard",
            "--dismount-idle",
            "300",
        ]),
        PW,
    );
    let out = d.ok(&["status", s(&vol)], "");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.contains(&"  flags:              discards"), "{out}");
    assert!(lines.contains(&"  dismount when idle: 300 s"), "{out}");
    let row = &d.list()[0];
    assert_eq!(
        (row["discard"].clone(), row["dismount_idle"].clone()),
        (json!(true), json!(300)),
        "{row}"
    );
    let doc: Value = serde_json::from_str(&d.ok(&["status", s(&vol), "--json"], "")).expect("json");
    assert_eq!(
        (doc["discard"].clone(), doc["dismount_idle"].clone()),
        (json!(true), json!(300))
    );
    d.ok(&["dismount", s(&vol)], "");
    // Without them: no flags line, and JSON says false and 0.
    d.ok(&with_open(&["mount", s(&vol), s(&mnt)]), PW);
    let out = d.ok(&["status", s(&vol)], "");
    assert!(
        !out.contains("flags:") && !out.contains("when idle"),
        "{out}"
    );
    let row = &d.list()[0];
    assert_eq!(
        (row["discard"].clone(), row["dismount_idle"].clone()),
        (json!(false), json!(0)),
        "{row}"
    );
}

#[test]
fn a_legacy_volumes_master_key_is_dumped_as_its_header() {
    // TrueCrypt 4's CBC volumes: the second search is narrowed by the
    // hash only (their encryption names no XTS chain).
    let d = Daemon::start();
    for name in ["tc_1-sha1-cbc-cast5", "tc_1-sha1-cbc-blowfish"] {
        let vol = d.image(name);
        let args = [
            "dump",
            "-q",
            "--dump-master-key",
            &vol,
            "--password-stdin",
            "--hash",
            "sha1",
        ];
        let out = d.tcctl(&args, "aaaaaaaaaaaa\n");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("\nMK dump:"), "{name}: {text}");
    }
}

#[test]
fn status_keysize_and_offset_are_cryptsetups_mk_bits_and_mk_offset() {
    let d = Daemon::start();
    let vol = d.path("v.tc");
    std::fs::copy(tcrypt_images().join("tc_5-sha512-xts-aes"), &vol).expect("copy the image");
    d.ok(
        &[
            "mount",
            s(&vol),
            "--filesystem",
            "none",
            "--hash",
            "sha512",
            "--password-stdin",
        ],
        "aaaaaaaaaaaa\n",
    );
    let status = d.ok(&["status", s(&vol)], "");
    d.ok(&["dismount", "--all"], "");
    // cryptsetup's own reading of the same header (AES: the cipher this
    // kernel's crypto interface gives cryptsetup).
    let dump = tcrypt_dump(&vol, b"aaaaaaaaaaaa", "sha512", false);
    let field = |name: &str| {
        dump.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim_start_matches(':').trim().to_owned())
            .unwrap_or_else(|| panic!("{name} in {dump}"))
    };
    // cryptsetup status says the MK offset (bytes) in 512-byte sectors.
    let (bits, offset) = (field("MK bits"), field("MK offset"));
    assert_eq!(
        (bits.as_str(), offset.as_str()),
        ("512", "131072"),
        "{dump}"
    );
    let sectors = offset.parse::<u64>().expect("a number") / 512;
    for want in [
        format!("  keysize:         {bits} bits"),
        format!("  offset:          {sectors} sectors"),
    ] {
        assert!(status.lines().any(|l| l == want), "{want:?} in {status}");
    }
}

#[test]
fn an_idle_volume_held_open_is_told_once_and_dismounted_once_let_go() {
    let d = Daemon::start();
    let (vol, mnt) = (d.path("v.vc"), d.path("mnt"));
    // FAT: a journalled filesystem's first mount has the kernel write to
    // it for some seconds afterwards, I/O that rightly counts as use.
    create(&d, &vol, "fat");
    std::fs::create_dir(&mnt).expect("mount point");
    let (mut child, rx) = monitor(&d);
    next(&rx, "the start");
    d.ok(
        &with_open(&["mount", s(&vol), s(&mnt), "--dismount-idle", "2"]),
        PW,
    );
    let object = d.list()[0]["object"].as_str().expect("object").to_owned();
    let line = next(&rx, "the mount");
    assert!(
        stamped(&line).starts_with(&format!("{object}: mounted {}", s(&vol))),
        "{line}"
    );
    // A process whose working folder is in the volume holds it, and does
    // no I/O.
    let mut holder = tcd_tests::daemon::Stopped(
        Command::new("sleep")
            .arg("600")
            .current_dir(&mnt)
            .spawn()
            .expect("sleep"),
    );
    let line = next(&rx, "the refused idle dismount");
    assert!(
        stamped(&line).starts_with(&format!(
            "{object}: could not dismount {} (idle): ",
            s(&vol)
        )),
        "{line}"
    );
    // Tried again at each check, quietly: nothing more is said.
    if let Ok(line) = rx.recv_timeout(Duration::from_secs(6)) {
        panic!("a refusal is told once, yet the monitor said: {line}");
    }
    assert_eq!(d.list().as_array().map(Vec::len), Some(1), "held, it stays");
    // Its holder gone, the next check dismounts it, with no new I/O.
    let _ = holder.0.kill();
    let _ = holder.0.wait();
    let line = next(&rx, "the idle dismount once let go");
    assert_eq!(
        stamped(&line),
        format!("{object}: dismounted {} automatically (idle)", s(&vol))
    );
    assert_eq!(d.list().as_array().map(Vec::len), Some(0));
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_monitor_started_after_an_attach_prints_only_what_changed_and_says_attached() {
    let (_policy, d, vol, _mnt) = with_policy_and_volume();
    d.ok(&with_open(&["mount", s(&vol), "--filesystem", "none"]), PW);
    let object = d.list()[0]["object"].as_str().expect("object").to_owned();
    let (mut child, rx) = monitor(&d);
    next(&rx, "the start");
    // Software only: the volume's Backends change (the daemon announces
    // its other properties again, unchanged).
    d.ok(
        &["policy", "set", "--hardware-acceleration", "disabled"],
        "",
    );
    let mut lines = Vec::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(3)) {
        lines.push(stamped(&line).to_owned());
    }
    let changes: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with(&format!("{object}: ")))
        .collect();
    assert!(
        lines.iter().any(|l| l.starts_with("policy changed: ")),
        "{lines:?}"
    );
    assert!(
        changes.len() <= 1
            && changes.iter().all(|l| {
                l.starts_with(&format!("{object}: {} changed: Backends ", s(&vol)))
                    && !l.contains("ReadOnly")
                    && !l.contains("State")
                    && !l.contains("MountPoint")
                    && !l.contains("Slot")
            }),
        "only the Backends change is said: {lines:?}"
    );
    assert!(
        !lines.iter().any(|l| l.contains("State mounted")),
        "an attached volume is not mounted: {lines:?}"
    );
    let _ = child.kill();
    let _ = child.wait();
}

/// udisksctl's `unmount -b` leaves the volume attached and `mount -b`
/// mounts it again: the monitor says the State each move leaves, at the
/// move (the daemon sends the mount point and the state apart), and an
/// absent mount point is null in JSON.
#[test]
fn a_monitor_says_the_state_an_unmount_and_a_mount_of_the_device_leave() {
    let (_policy, d, vol, mnt) = with_policy_and_volume();
    d.ok(&with_open(&["mount", s(&vol), s(&mnt)]), PW);
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    let (mut child, rx) = monitor_args(d.command(), &["--json"]);
    // No banner in JSON: a moment for the monitor to listen.
    std::thread::sleep(Duration::from_millis(500));
    let changes = |what: &str| {
        let mut all = serde_json::Map::new();
        while let Ok(line) = rx.recv_timeout(Duration::from_secs(3)) {
            let event: serde_json::Value = serde_json::from_str(&line).expect("json");
            if let Some(c) = event["changes"].as_object() {
                all.extend(c.clone());
            }
        }
        assert!(!all.is_empty(), "no change said after {what}");
        all
    };
    d.ok(&["unmount", "-b", &device], "");
    let after = changes("unmount -b");
    assert_eq!(after.get("State"), Some(&json!("attached")), "{after:?}");
    assert_eq!(after.get("MountPoint"), Some(&json!(null)), "{after:?}");
    d.ok(&["mount", "-b", &device], "");
    let after = changes("mount -b");
    assert_eq!(after.get("State"), Some(&json!("mounted")), "{after:?}");
    assert!(
        after.get("MountPoint").is_some_and(|m| m.is_string()),
        "{after:?}"
    );
    d.ok(&["dismount", s(&vol)], "");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn header_backup_and_restore_say_the_file_by_its_absolute_path() {
    let d = Daemon::start();
    let vol = d.path("h.vc");
    create(&d, &vol, "none");
    // Typed relative to the working folder, said absolute, as the volume.
    let here = std::fs::canonicalize(d.dir.path()).expect("the daemon's folder");
    let run = |args: &[&str]| {
        let mut c = d.command();
        c.args(with_open(args)).current_dir(&here);
        let out = tcd_tests::daemon::run_with_input(c, PW);
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let (vol, backup) = (here.join("h.vc"), here.join("h.hdr"));
    assert_eq!(
        run(&["backup-header", "h.vc", "h.hdr"]),
        format!("headers of {} saved to {}\n", s(&vol), s(&backup))
    );
    assert_eq!(
        run(&["restore-header", "h.vc", "h.hdr", "-q"]),
        format!(
            "{}: header restored from {} (the primary header in it)\n",
            s(&vol),
            s(&backup)
        )
    );
    // `.` and `..` go, as list shows the volume.
    std::fs::create_dir(here.join("sub")).expect("a folder");
    assert_eq!(
        run(&["backup-header", "sub/../h.vc", "./sub/../h2.hdr"]),
        format!(
            "headers of {} saved to {}\n",
            s(&vol),
            s(&here.join("h2.hdr"))
        )
    );
    let info = run(&["info", "sub/../h.vc"]);
    assert!(
        info.starts_with(&format!("Volume             {}\n", s(&vol))),
        "{info}"
    );
    let dump = run(&["dump", "./sub/../h.vc"]);
    assert!(
        dump.starts_with(&format!("VERACRYPT header information for {}\n", s(&vol))),
        "{dump}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&run(&["info", "--json", "sub/../h.vc"])).expect("JSON");
    assert_eq!(json["path"], s(&vol), "{json}");
    // A symbolic link to it: named as list names it, by the file.
    std::os::unix::fs::symlink(&vol, here.join("link.hc")).expect("a link");
    let info = run(&["info", "link.hc"]);
    assert!(
        info.starts_with(&format!("Volume             {}\n", s(&vol))),
        "{info}"
    );
    // `-` is no file here (elsewhere standard input or output): refused,
    // and no file called `-` is made.
    for (args, words) in [
        (["backup-header", "h.vc", "-"], "never to standard output"),
        (["restore-header", "h.vc", "-"], "never from standard input"),
    ] {
        let mut c = d.command();
        c.args(with_open(&args)).current_dir(&here);
        let out = tcd_tests::daemon::run_with_input(c, PW);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{err}");
        assert!(err.contains(words), "{err}");
        assert!(!here.join("-").exists(), "no file called -");
    }
}

#[test]
fn policy_show_json_has_every_limit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("policy.toml");
    std::fs::write(&path, "[limits]\nmax_pim = 500\nsearches = 3\n").expect("write policy");
    let d = Daemon::start_with(&[std::ffi::OsStr::new("--policy"), path.as_os_str()]);
    let doc: Value = serde_json::from_str(&d.ok(&["policy", "show", "--json"], "")).expect("json");
    // Those the file sets, and the defaults of those it leaves out.
    assert_eq!(
        doc["limits"],
        json!({"max_pim": 500, "argon2_max_pim": 31, "argon2_max_memory_mib": 1024,
            "searches_per_user": 2, "searches": 3}),
        "{doc}"
    );
    // Each is named in docs/OUTPUT.md.
    let output = std::fs::read_to_string(tcd_tests::repo_dir().join("docs/OUTPUT.md"))
        .expect("docs/OUTPUT.md");
    for key in doc["limits"].as_object().expect("an object").keys() {
        assert!(
            output.contains(&format!("`{key}`")),
            "OUTPUT.md lacks {key}"
        );
    }
}

/// Standard output that cannot be written (`> /dev/full`): one line on
/// standard error and exit 1, no panic, and what the command did stands.
#[test]
fn a_full_standard_output_is_said_on_one_line_and_the_mount_stands() {
    let d = Daemon::start();
    let (vol, mnt) = (d.path("full.vc"), d.path("mnt"));
    create(&d, &vol, "ext4");
    std::fs::create_dir(&mnt).expect("mount point");
    let full = || Stdio::from(std::fs::File::create("/dev/full").expect("/dev/full"));
    let run = |args: &[&str], input: &str| {
        let mut c = d.command();
        c.args(args)
            .stdin(Stdio::piped())
            .stdout(full())
            .stderr(Stdio::piped());
        let mut child = c.spawn().expect("tcctl");
        if let Some(mut i) = child.stdin.take() {
            std::io::Write::write_all(&mut i, input.as_bytes()).expect("stdin");
        }
        child.wait_with_output().expect("wait")
    };
    let said = |out: &std::process::Output| String::from_utf8_lossy(&out.stderr).into_owned();
    let out = run(&with_open(&["mount", s(&vol), s(&mnt)]), PW);
    assert_eq!(
        (out.status.code(), said(&out)),
        (
            Some(1),
            "tcctl: cannot write to standard output (No space left on device (os error 28)): \
             its report is lost, but what the command did stands (`tcctl list` shows the \
             volumes)\n"
                .to_owned()
        )
    );
    assert_eq!(d.list()[0]["mount_point"], s(&mnt), "the mount stands");
    let out = run(&["list"], "");
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    let out = run(&["dismount", "--all"], "");
    assert_eq!(out.status.code(), Some(1), "{}", said(&out));
    assert!(!said(&out).contains("panicked"), "{}", said(&out));
    assert_eq!(d.list(), json!([]), "the dismount stands");
}
