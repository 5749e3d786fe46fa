//! Keyfiles on a PKCS #11 security token (SoftHSM 2 as the token):
//! `tcctl token import/list/delete`, and a `token://slot/N/file/NAME`
//! keyfile opening a volume exactly as the same bytes in a file do.
//!
//! Needs root, /dev/fuse and softhsm2 (softhsm2-util and its library).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::process::{Command, Output};
use std::time::Duration;
use tcd_tests::daemon::{Daemon, run_with_input};
use tcd_tests::pty::Pty;
use tcd_tests::{require_tool, s};

const LIB: &str = "/usr/lib/softhsm/libsofthsm2.so";
const PIN: &str = "4321";
const PW: &str = "token words\n";
const OPEN: [&str; 5] = ["--password-stdin", "--hash", "sha512", "--pim", "1"];

/// A SoftHSM token store of the test's own, with one initialised token.
fn token_store(dir: &Path) -> PathBuf {
    let tokens = dir.join("tokens");
    std::fs::create_dir(&tokens).expect("token dir");
    let conf = dir.join("softhsm2.conf");
    std::fs::write(
        &conf,
        format!(
            "directories.tokendir = {}\nobjectstore.backend = file\nlog.level = ERROR\n",
            tokens.display()
        ),
    )
    .expect("softhsm2.conf");
    let st = Command::new(require_tool("softhsm2-util", "package softhsm2"))
        .env("SOFTHSM2_CONF", &conf)
        .args(["--init-token", "--free", "--label", "tcd test"])
        .args(["--pin", PIN, "--so-pin", "87654321"])
        .output()
        .expect("softhsm2-util");
    assert!(st.status.success(), "{st:?}");
    assert!(Path::new(LIB).exists(), "{LIB}: package softhsm2");
    conf
}

/// `tcctl --token-lib LIB ARGS` on the daemon's socket, the PIN (if any)
/// in $TCD_TOKEN_PIN.
fn tcctl(d: &Daemon, conf: &Path, pin: Option<&str>, args: &[&str], stdin: &str) -> Output {
    let mut with_lib = vec!["--token-lib", LIB];
    with_lib.extend(args);
    tcctl_as_given(d, conf, pin, &with_lib, stdin)
}

/// `tcctl ARGS`: no library but what ARGS or the policy name.
fn tcctl_as_given(
    d: &Daemon,
    conf: &Path,
    pin: Option<&str>,
    args: &[&str],
    stdin: &str,
) -> Output {
    let mut c = d.command();
    c.env("SOFTHSM2_CONF", conf)
        .env_remove("TCD_TOKEN_PIN")
        .env_remove("TCD_PKCS11_MODULE");
    if let Some(p) = pin {
        c.env("TCD_TOKEN_PIN", p);
    }
    c.args(args);
    run_with_input(c, stdin)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_keyfile_on_a_token_opens_the_volume_its_bytes_made() {
    let d = Daemon::start();
    let conf = token_store(&d.path(""));
    let key = d.path("key");
    std::fs::write(&key, (0..=255u8).cycle().take(300).collect::<Vec<u8>>()).expect("key");

    let out = tcctl(
        &d,
        &conf,
        Some(PIN),
        &["token", "import", s(&key), "--name", "work key"],
        "",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let imported = text(&out.stdout);
    let uri = imported
        .strip_suffix(" imported\n")
        .unwrap_or_else(|| panic!("{imported}"))
        .to_owned();
    assert!(
        uri.starts_with("token://slot/") && uri.ends_with("/file/work key"),
        "{uri}"
    );
    let out = tcctl(&d, &conf, Some(PIN), &["token", "list"], "");
    assert_eq!(text(&out.stdout), format!("{uri}\n"));
    let out = tcctl(&d, &conf, Some(PIN), &["token", "list", "--json"], "");
    let slot = uri
        .strip_prefix("token://slot/")
        .and_then(|r| r.strip_suffix("/file/work key"))
        .unwrap_or_else(|| panic!("{uri}"));
    assert_eq!(
        text(&out.stdout),
        format!(
            "{{\"keyfiles\":[{{\"keyfile\":\"{uri}\",\"name\":\"work key\",\"slot\":{slot}}}],\"schema\":1}}\n"
        )
    );
    // Never over a keyfile of the same name.
    let out = tcctl(
        &d,
        &conf,
        Some(PIN),
        &["token", "import", s(&key), "--name", "work key"],
        "",
    );
    // A refused request (exit 7), as for a keyfile file that exists.
    assert_eq!(out.status.code(), Some(7), "{}", text(&out.stderr));

    // A volume made with the token's keyfile opens with the file's bytes.
    let vol = d.path("v.hc");
    let mut args = vec![
        "create",
        s(&vol),
        "--size",
        "8M",
        "--filesystem",
        "none",
        "--force",
    ];
    args.extend(["--keyfile", &uri]);
    args.extend(OPEN);
    let out = tcctl(&d, &conf, Some(PIN), &args, PW);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut args = vec!["info", s(&vol), "--keyfile", s(&key)];
    args.extend(OPEN);
    assert!(
        tcctl(&d, &conf, None, &args, PW).status.success(),
        "the file's bytes open it"
    );
    let mut args = vec!["mount", s(&vol), "--filesystem", "none", "--keyfile", &uri];
    args.extend(OPEN);
    let out = tcctl(&d, &conf, Some(PIN), &args, PW);
    assert!(out.status.success(), "{}", text(&out.stderr));
    d.ok(&["dismount", "--all"], "");

    // A wrong PIN, and no PIN with no terminal to ask on.
    let out = tcctl(&d, &conf, Some("0000"), &args, PW);
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (Some(2), "tcctl: token tcd test: wrong PIN\n".into())
    );
    let out = tcctl(&d, &conf, None, &args, PW);
    assert_eq!(out.status.code(), Some(64), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("$TCD_TOKEN_PIN"),
        "{}",
        text(&out.stderr)
    );

    // Deleting asks YES first: with no terminal, -q is needed, and
    // nothing is deleted without it.
    let out = tcctl(&d, &conf, Some(PIN), &["token", "delete", &uri], "");
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(64),
            format!(
                "tcctl: deleting {uri}: confirmation needed and no terminal to ask on: give -q \
                 (--batch-mode)\n"
            )
        )
    );
    let out = tcctl(&d, &conf, Some(PIN), &["token", "list"], "");
    assert_eq!(text(&out.stdout), format!("{uri}\n"));
    // A token not there is said before any question, as on a terminal.
    let absent = "token://slot/4099/file/x";
    let out = tcctl(&d, &conf, Some(PIN), &["token", "delete", absent], "");
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (Some(3), "tcctl: no token in slot 4099\n".into())
    );
    // Deleted: gone from the list, and named as missing.
    let out = tcctl(&d, &conf, Some(PIN), &["token", "delete", &uri, "-q"], "");
    assert_eq!(text(&out.stdout), format!("{uri} deleted\n"));
    let out = tcctl(&d, &conf, Some(PIN), &["token", "list"], "");
    assert_eq!(text(&out.stdout), "No keyfiles on the tokens.\n");
    let out = tcctl(&d, &conf, Some(PIN), &args, PW);
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(3),
            format!("tcctl: {uri}: no such keyfile on the token\n")
        )
    );
    assert_eq!(d.list().as_array().map(Vec::len), Some(0));
}

/// Two keyfiles on one token: its PIN is asked once, as VeraCrypt asks it,
/// and again only when it was typed wrong.
#[test]
fn the_pin_is_asked_once_per_token_however_many_of_its_keyfiles_are_named() {
    let d = Daemon::start();
    let conf = token_store(&d.path(""));
    let mut uris = Vec::new();
    for (name, byte) in [("one", 1u8), ("two", 2u8)] {
        let key = d.path(name);
        std::fs::write(&key, [byte; 64]).expect("key");
        let out = tcctl(&d, &conf, Some(PIN), &["token", "import", s(&key)], "");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let said = text(&out.stdout);
        uris.push(said.trim_end().trim_end_matches(" imported").to_owned());
    }
    let vol = d.path("v.hc");
    let mut args = vec![
        "create",
        s(&vol),
        "--size",
        "8M",
        "--filesystem",
        "none",
        "--force",
    ];
    args.extend(["--keyfile", &uris[0], "--keyfile", &uris[1]]);
    args.extend(OPEN);
    let out = tcctl(&d, &conf, Some(PIN), &args, PW);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let mut c = d.command();
    c.env("SOFTHSM2_CONF", &conf).env_remove("TCD_TOKEN_PIN");
    c.args(["--token-lib", LIB, "info", s(&vol)]);
    c.args(["--keyfile", &uris[0], "--keyfile", &uris[1]])
        .args(OPEN);
    let password = d.path("password");
    std::fs::write(&password, PW).expect("password");
    let input = std::fs::File::open(&password).expect("password");
    let mut t = Pty::spawn(c, Some(Stdio::from(input)));
    t.expect("PIN for token tcd test: ", Duration::from_secs(20));
    // The prompt is written before echo goes off: type a moment after. A
    // wrong PIN is said and asked again, not the end of the command.
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("9999");
    t.expect("token tcd test: wrong PIN", Duration::from_secs(20));
    t.expect("PIN for token tcd test: ", Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PIN);
    let (code, said) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{said}");
    assert_eq!(said.matches("PIN for token").count(), 2, "{said}");

    // Asked on the terminal, the password comes first and the PIN after
    // it, as VeraCrypt asks them.
    let mut c = d.command();
    c.env("SOFTHSM2_CONF", &conf).env_remove("TCD_TOKEN_PIN");
    c.args(["--token-lib", LIB, "info", s(&vol), "--hash", "sha512"]);
    c.args(["--pim", "1", "--keyfile", &uris[0], "--keyfile", &uris[1]]);
    let mut t = Pty::spawn(c, None);
    t.expect(
        &format!("Password for {}: ", s(&vol)),
        Duration::from_secs(20),
    );
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PW.trim_end());
    t.expect("PIN for token tcd test: ", Duration::from_secs(20));
    std::thread::sleep(Duration::from_millis(300));
    t.type_line(PIN);
    let (code, said) = t.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{said}");
    assert!(
        said.find("Password for") < said.find("PIN for token"),
        "{said}"
    );
}

/// The administrator's policy names the library when the user names none
/// (neither --token-lib nor $TCD_PKCS11_MODULE); the user's choice wins.
#[test]
fn the_policy_names_the_token_library_when_the_user_names_none() {
    let policy_dir = tempfile::tempdir().expect("temp dir");
    let policy = policy_dir.path().join("policy.toml");
    let d = Daemon::start_with(&[std::ffi::OsStr::new("--policy"), policy.as_os_str()]);
    let conf = token_store(&d.path(""));
    let missing = d.path("missing-pkcs11.so");
    d.ok(&["policy", "set", "--token-library", s(&missing)], "");
    let shown: serde_json::Value =
        serde_json::from_str(&d.ok(&["policy", "show", "--json"], "")).expect("json");
    assert_eq!(shown["token_library"], s(&missing));
    let out = tcctl_as_given(&d, &conf, Some(PIN), &["token", "list"], "");
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(3),
            format!("tcctl: {}: no such PKCS #11 library\n", missing.display())
        ),
        "the policy's library is the one tried"
    );
    let out = tcctl(&d, &conf, Some(PIN), &["token", "list"], "");
    assert_eq!(
        text(&out.stdout),
        "No keyfiles on the tokens.\n",
        "--token-lib wins"
    );

    d.ok(&["policy", "set", "--token-library", LIB], "");
    assert!(
        d.ok(&["policy", "show"], "")
            .contains(&format!("token_library = \"{LIB}\""))
    );
    let key = d.path("key");
    std::fs::write(&key, [7u8; 64]).expect("key");
    let out = tcctl_as_given(&d, &conf, Some(PIN), &["token", "import", s(&key)], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let uri = text(&out.stdout)
        .trim_end()
        .trim_end_matches(" imported")
        .to_owned();
    let out = tcctl_as_given(&d, &conf, Some(PIN), &["token", "list"], "");
    assert_eq!(text(&out.stdout), format!("{uri}\n"));

    let vol = d.path("v.hc");
    let mut args = vec![
        "create",
        s(&vol),
        "--size",
        "8M",
        "--filesystem",
        "none",
        "--force",
    ];
    args.extend(["--keyfile", &uri]);
    args.extend(OPEN);
    let out = tcctl_as_given(&d, &conf, Some(PIN), &args, PW);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut args = vec!["mount", s(&vol), "--filesystem", "none", "--keyfile", &uri];
    args.extend(OPEN);
    let out = tcctl_as_given(&d, &conf, Some(PIN), &args, PW);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(d.list().as_array().map(Vec::len), Some(1));
    d.ok(&["dismount", "--all"], "");
}
