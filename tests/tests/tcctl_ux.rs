//! `tcctl` as its users meet it before any daemon is involved: what a
//! wrong command line says and its exit code, told apart from a wrong
//! password's, and the exit codes as the manual page and the docs state
//! them.

use std::process::{Command, Output};
use tcd_tests::{build_dir, repo_dir};

/// sysexits' EX_USAGE.
const USAGE: i32 = 64;
const INVALID_ARGUMENT: i32 = 7;

/// `tcctl ARGS` with no daemon anywhere it could look.
fn tcctl(args: &[&str]) -> Output {
    Command::new(build_dir().join("tcctl"))
        .args(args)
        .env("TCD_SOCKET", "/nonexistent/tcd.sock")
        .env_remove("DBUS_SYSTEM_BUS_ADDRESS")
        .output()
        .expect("run tcctl")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_wrong_command_line_exits_64_with_the_usage_and_nothing_on_standard_output() {
    // TCD_SOCKET is set (by `tcctl`), and --socket given: the usage lines
    // are the commands' whole ones, with no option given shown as required.
    let cases: &[(&[&str], &str)] = &[
        (
            &["dismount"],
            "error: the following required arguments were not provided:\n  <TARGET>\n\n\
             Usage: tcctl dismount [OPTIONS] <TARGET | --all | --slot N>\n\n\
             For more information, try '--help'.\n",
        ),
        (
            &["mount"],
            "error: the following required arguments were not provided:\n  <VOLUME>\n\n\
             Usage: tcctl mount [OPTIONS] <VOLUME> [MOUNT_POINT]\n\n\
             For more information, try '--help'.\n",
        ),
        (
            &["mount", "--socket", "/run/x.sock", "--readonl", "v.hc"],
            "error: unexpected argument '--readonl' found\n\n  \
             tip: a similar argument exists: '--readonly'\n\n\
             Usage: tcctl mount [OPTIONS] <VOLUME> [MOUNT_POINT]\n\n\
             For more information, try '--help'.\n",
        ),
        (
            &["favorites", "add", "--socket", "/run/x.sock", "--bogus"],
            "error: unexpected argument '--bogus' found\n\n  \
             tip: to pass '--bogus' as a value, use '-- --bogus'\n\n\
             Usage: tcctl favorites add [OPTIONS] <NAME> <VOLUME>\n\n\
             For more information, try '--help'.\n",
        ),
        // A negative PIM is a bad value of --pim, not an option of its
        // own (whose tip would pass it as a volume).
        (
            &["info", "v.hc", "--pim", "-1"],
            "error: invalid value '-1' for '--pim <PIM>': -1 is not in 0..=4294967295\n\n\
             For more information, try '--help'.\n",
        ),
        (
            &["list", "--bogus"],
            "error: unexpected argument '--bogus' found\n\n\
             Usage: tcctl list [OPTIONS]\n\n\
             For more information, try '--help'.\n",
        ),
        (
            &["benchmark", "--size", "12X"],
            "error: invalid value '12X' for '--size <SIZE>': not a number (a size is a number \
             of bytes, or of K, M, G or T: binary units, 10M is 10 MiB)\n\n\
             For more information, try '--help'.\n",
        ),
        (
            &["create", "v.hc", "--size", "lots"],
            "error: invalid value 'lots' for '--size <SIZE>': not a number (a size is a number \
             of bytes, or of K, M, G or T: binary units, 10M is 10 MiB)\n\n\
             For more information, try '--help'.\n",
        ),
        (
            &["restore-header", "v.hc", "backup.bin", "--embedded"],
            "error: the argument '[BACKUP]' cannot be used with '--embedded'\n\n\
             Usage: tcctl restore-header [OPTIONS] <VOLUME> <BACKUP | --embedded>\n\n\
             For more information, try '--help'.\n",
        ),
    ];
    for (args, said) in cases {
        let out = tcctl(args);
        assert_eq!(out.status.code(), Some(USAGE), "tcctl {args:?}");
        assert_eq!(text(&out.stderr), *said, "tcctl {args:?}");
        assert_eq!(text(&out.stdout), "", "tcctl {args:?}");
    }
}

#[test]
fn help_and_version_succeed_on_standard_output() {
    for args in [&["--help"][..], &["mount", "--help"], &["--version"]] {
        let out = tcctl(args);
        assert_eq!(out.status.code(), Some(0), "tcctl {args:?}");
        assert!(
            text(&out.stdout).contains("tcctl"),
            "tcctl {args:?}: {}",
            text(&out.stdout)
        );
        assert_eq!(text(&out.stderr), "", "tcctl {args:?}");
    }
}

#[test]
fn help_names_the_other_tools_spellings() {
    let out = tcctl(&["--help"]);
    let help = text(&out.stdout);
    for words in ["tcctl -t (--text)", "tcryptOpen", "unlock, lock, -b"] {
        assert!(help.contains(words), "--help lacks {words}: {help}");
    }
}

/// VeraCrypt's text mode runs one command at a time: a second command,
/// or an option of another command, is said as such, not as an option
/// VeraCrypt never had.
#[test]
fn a_text_mode_line_with_two_commands_or_anothers_option_says_so() {
    for (args, said) in [
        (
            &["-t", "-l", "-d"][..],
            "tcctl: -l and -d are two commands: VeraCrypt's text mode runs one at a time \
             (`tcctl -t -h` lists them)\n",
        ),
        (
            &["-t", "-d", "--size=5M"][..],
            "tcctl: --size does not go with -d (`tcctl -t -d -h` lists the options it takes)\n",
        ),
        (
            &["-t", "--bogus"][..],
            "tcctl: --bogus: no such option of VeraCrypt's text mode here (`tcctl -t -h` lists \
             the ones taken)\n",
        ),
    ] {
        let out = tcctl(args);
        assert_eq!(out.status.code(), Some(USAGE), "{args:?}");
        assert_eq!(text(&out.stderr), said, "{args:?}");
    }
}

/// cryptsetup's --veracrypt-pim is tcctl's --pim: a bad value is said
/// under the name typed.
#[test]
fn a_bad_veracrypt_pim_is_said_by_the_name_typed() {
    let out = tcctl(&[
        "open",
        "--type",
        "tcrypt",
        "--veracrypt-pim",
        "-1",
        "v.hc",
        "x",
    ]);
    assert_eq!(out.status.code(), Some(USAGE));
    assert_eq!(
        text(&out.stderr),
        "tcctl: invalid value '-1' for '--veracrypt-pim <PIM>': -1 is not in 0..=4294967295\n"
    );
}

#[test]
fn no_daemon_is_not_a_usage_error() {
    let out = tcctl(&["list"]);
    assert_eq!(out.status.code(), Some(9), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr)
            .starts_with("tcctl: cannot reach the tcd daemon at /nonexistent/tcd.sock"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_manual_page_and_the_docs_state_the_exit_codes() {
    let dir = std::env::temp_dir().join(format!("tcctl-ux-man-{}", std::process::id()));
    let out = tcctl(&["generate-dist", dir.to_str().expect("a UTF-8 path")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = std::fs::read_to_string(dir.join("tcctl.1")).expect("tcctl.1");
    let _ = std::fs::remove_dir_all(&dir);
    let status = page
        .split(".SH \"EXIT STATUS\"\n")
        .nth(1)
        .expect("an EXIT STATUS section");
    for (code, meaning) in [
        (0, "success"),
        (2, "wrong password"),
        (9, "the daemon cannot be reached"),
        (64, "the command line is wrong"),
    ] {
        assert!(
            status.contains(&format!(".TP\n{code}\n{meaning}")),
            "exit {code} in the manual page:\n{status}"
        );
    }
    let dbus = std::fs::read_to_string(repo_dir().join("docs/DBUS.md")).expect("DBUS.md");
    assert!(
        dbus.contains("| — | 64 | the command line is wrong"),
        "docs/DBUS.md's table has the usage exit code"
    );
}

#[test]
fn unknown_values_are_refused_with_the_valid_ones_listed() {
    let out = tcctl(&["mount", "v.hc", "--encryption", "AES-Twofish-Serpant"]);
    assert_eq!(out.status.code(), Some(USAGE));
    assert_eq!(
        text(&out.stderr),
        "error: invalid value 'AES-Twofish-Serpant' for '--encryption <ENCRYPTION>'\n  \
         [possible values: AES, Serpent, Twofish, AES-Twofish, AES-Twofish-Serpent, \
         Serpent-AES, Serpent-Twofish-AES, Twofish-Serpent, Camellia, Kuznyechik, \
         Camellia-Kuznyechik, Camellia-Serpent, Kuznyechik-AES, Kuznyechik-Serpent-Camellia, \
         Kuznyechik-Twofish]\n\n\
         \x20 tip: a similar value exists: 'AES-Twofish-Serpent'\n\n\
         For more information, try '--help'.\n"
    );
    let out = tcctl(&["info", "v.hc", "--volume-type", "tc"]);
    assert_eq!(out.status.code(), Some(USAGE));
    assert!(
        text(&out.stderr).contains("[possible values: veracrypt, truecrypt]"),
        "{}",
        text(&out.stderr)
    );
    // VeraCrypt's volume types belong to create; elsewhere the option is
    // named as typed and says what to do.
    let out = tcctl(&["mount", "v.hc", "mnt", "--volume-type", "hidden"]);
    assert_eq!(out.status.code(), Some(USAGE));
    assert!(
        text(&out.stderr).starts_with(
            "error: invalid value 'hidden' for '--volume-type <VOLUME_TYPE>': hidden goes with \
             create; a hidden volume opens with its own password (and --protect-hidden protects \
             one from the outer volume's writes)"
        ),
        "{}",
        text(&out.stderr)
    );
    let out = tcctl(&["policy", "set", "--hardware-acceleration", "off"]);
    assert_eq!(out.status.code(), Some(USAGE));
    assert!(
        text(&out.stderr).contains("[possible values: auto, disabled]"),
        "{}",
        text(&out.stderr)
    );
    let out = tcctl(&["create", "v.hc", "--hash", "md5"]);
    assert_eq!(out.status.code(), Some(USAGE));
    assert!(
        text(&out.stderr).contains(
            "[possible values: sha512, sha256, whirlpool, ripemd160, blake2s, streebog, argon2id]"
        ),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_other_spellings_the_daemon_knows_are_taken() {
    // Accepted by the command line: the missing volume is what fails.
    for (option, value) in [
        ("--hash", "SHA-512"),
        ("--hash", "stribog512"),
        ("--hash", "rmd160"),
        ("--encryption", "aes-twofish"),
        ("--volume-type", "TrueCrypt"),
    ] {
        let out = tcctl(&["info", "/nonexistent/v.hc", option, value]);
        assert_eq!(
            out.status.code(),
            Some(3),
            "{option} {value}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn help_lists_the_valid_values_and_the_default_filesystem() {
    let out = tcctl(&["create", "--help"]);
    let help = text(&out.stdout);
    for shown in [
        "[default: ext4]",
        "[possible values: AES, Serpent, Twofish, AES-Twofish, AES-Twofish-Serpent,",
        "[possible values: sha512, sha256, whirlpool, ripemd160, blake2s, streebog, argon2id]",
        "[possible values: veracrypt, truecrypt]",
        "- exfat",
    ] {
        assert!(help.contains(shown), "create --help shows {shown}:\n{help}");
    }
}

#[test]
fn completions_offer_the_values_and_not_the_hidden_command() {
    let dir = std::env::temp_dir().join(format!("tcctl-ux-comp-{}", std::process::id()));
    let out = tcctl(&["generate-dist", dir.to_str().expect("a UTF-8 path")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bash = std::fs::read_to_string(dir.join("tcctl.bash")).expect("tcctl.bash");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        bash.contains("AES-Twofish-Serpent") && bash.contains("argon2id"),
        "values completed"
    );
    assert!(
        !bash.contains("generate-dist"),
        "the hidden command is not offered"
    );
}

/// A regular file that is no volume: enough to reach the password prompt.
fn not_a_volume(name: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("tcctl-ux-{name}-{}", std::process::id()));
    std::fs::write(&p, vec![0u8; 64 << 10]).expect("write");
    p
}

#[test]
fn non_interactive_without_password_stdin_fails_at_once_naming_it() {
    let vol = not_a_volume("ni");
    let v = vol.to_str().expect("utf-8");
    let out = tcctl(&["--non-interactive", "info", v]);
    assert_eq!(out.status.code(), Some(USAGE));
    assert_eq!(
        text(&out.stderr),
        "tcctl: a password is needed, and --non-interactive asks for none: \
         give it with --password-stdin, or open with keyfiles alone: give them with \
         --keyfile\n"
    );
    // A VeraCrypt line is told VeraCrypt's names.
    let out = tcctl(&["-t", "--non-interactive", "--test", v]);
    let _ = std::fs::remove_file(&vol);
    assert_eq!(out.status.code(), Some(USAGE));
    assert_eq!(
        text(&out.stderr),
        "tcctl: a password is needed, and --non-interactive asks for none: \
         give it with --stdin, or open with keyfiles alone: give them with --keyfiles\n"
    );
}

#[test]
fn without_a_terminal_or_a_way_to_ask_a_password_fails_at_once_naming_password_stdin() {
    let vol = not_a_volume("noterm");
    let empty = tempfile::tempdir().expect("tempdir");
    let started = std::time::Instant::now();
    let out = Command::new(build_dir().join("tcctl"))
        .args(["info", vol.to_str().expect("utf-8")])
        .env("TCD_SOCKET", "/nonexistent/tcd.sock")
        .env("PATH", empty.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run tcctl");
    let _ = std::fs::remove_file(&vol);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(out.status.code(), Some(USAGE));
    assert_eq!(
        text(&out.stderr),
        "tcctl: no terminal, dialog or password agent to ask for a password on: \
         give it with --password-stdin\n"
    );
}

#[test]
fn systemd_ask_password_without_an_agent_to_answer_is_no_way_to_ask() {
    use std::os::unix::fs::PermissionsExt;
    let vol = not_a_volume("noagent");
    let helpers = tempfile::tempdir().expect("tempdir");
    let asked = helpers.path().join("asked");
    let tool = helpers.path().join("systemd-ask-password");
    std::fs::write(
        &tool,
        format!("#!/bin/sh\ntouch {}\nexec sleep 300\n", asked.display()),
    )
    .expect("write the stand-in");
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = Command::new(build_dir().join("tcctl"))
        .args(["info", vol.to_str().expect("utf-8")])
        .env("TCD_SOCKET", "/nonexistent/tcd.sock")
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", helpers.path().display()),
        )
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run tcctl");
    let _ = std::fs::remove_file(&vol);
    assert_eq!(out.status.code(), Some(USAGE), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        "tcctl: no terminal, dialog or password agent to ask for a password on: \
         give it with --password-stdin\n"
    );
    assert!(
        !asked.exists(),
        "systemd-ask-password was started with no agent to answer it"
    );
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn a_password_agent_dies_with_tcctl() {
    use std::os::unix::fs::PermissionsExt;
    let vol = not_a_volume("agent");
    let helpers = tempfile::tempdir().expect("tempdir");
    let pidfile = helpers.path().join("agent.pid");
    let agent = helpers.path().join("systemd-ask-password");
    std::fs::write(
        &agent,
        format!(
            "#!/bin/sh\necho $$ > {}\nexec sleep 300\n",
            pidfile.display()
        ),
    )
    .expect("write the agent");
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let _running = tcd_tests::process::PasswordAgent::start();
    let mut child = Command::new(build_dir().join("tcctl"))
        .args(["info", vol.to_str().expect("utf-8")])
        .env("TCD_SOCKET", "/nonexistent/tcd.sock")
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", helpers.path().display()),
        )
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run tcctl");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            break pid;
        }
        assert!(std::time::Instant::now() < deadline, "the agent was asked");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    child.kill().expect("kill tcctl");
    let out = child.wait_with_output().expect("wait");
    let _ = std::fs::remove_file(&vol);
    assert!(
        text(&out.stderr).contains("asking the system's password agents"),
        "the wait is announced: {}",
        text(&out.stderr)
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !gone(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the agent {pid} outlived tcctl"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn create_says_what_is_missing_and_what_it_made() {
    let d = tcd_tests::daemon::Daemon::start();
    let vol = d.path("new.hc");
    let v = vol.to_str().expect("utf-8");
    let (code, msg) = d.fails(&["create", v, "--password-stdin"], "pw\n");
    assert_eq!(code, USAGE);
    assert_eq!(
        msg,
        format!(
            "tcctl: {v} does not exist: give --size to make a container file of that size, \
             or name an existing file or device\n"
        )
    );
    assert!(!vol.exists());

    let out = d.ok(
        &[
            "create",
            v,
            "--size",
            "8M",
            "--pim",
            "1",
            "--force",
            "--password-stdin",
        ],
        "outer words\n",
    );
    assert_eq!(out, format!("{v} created\n"));
    // The default filesystem is ext4: it mounts as it is.
    let m = d.path("m");
    std::fs::create_dir(&m).expect("mount point");
    let mounted = d.ok(
        &[
            "mount",
            v,
            m.to_str().expect("utf-8"),
            "--pim",
            "1",
            "--password-stdin",
        ],
        "outer words\n",
    );
    assert!(
        mounted.starts_with(&format!("{v} mounted on ")),
        "{mounted}"
    );
    assert_eq!(d.list()[0]["filesystem"], "ext4", "{}", d.list());
    d.ok(&["dismount", m.to_str().expect("utf-8")], "");

    // Asked once the password read is judged: a fit one, then the question.
    let (code, msg) = d.fails(
        &["create", v, "--size", "8M", "--password-stdin"],
        "twenty or more characters\n",
    );
    assert_eq!(code, USAGE);
    assert_eq!(
        msg,
        format!(
            "tcctl: {v} exists: confirmation needed and no terminal to ask on: give --batch-mode (VeraCrypt's --force)\n"
        )
    );
    // VeraCrypt's --force and cryptsetup's -q both say "do not ask".
    for flag in ["--force", "-q"] {
        std::fs::write(v, b"old").expect("replaced below");
        let out = d.ok(
            &[
                "create",
                v,
                "--size",
                "8M",
                "--pim",
                "1",
                flag,
                "--password-stdin",
            ],
            // Long enough for PIM 1: -q takes no short password.
            "outer words, twenty or more\n",
        );
        assert_eq!(out, format!("{v} created\n"));
        assert_eq!(std::fs::metadata(v).expect("volume").len(), 8 << 20);
    }

    // A filesystem too big for the volume: said before any password is
    // asked or file made; and by the daemon for an existing file (whose
    // size tcctl does not judge), which is left as it was.
    let small = d.path("small.hc");
    let sv = small.to_str().expect("utf-8");
    let args = ["create", sv, "--filesystem", "xfs", "--pim", "1"];
    let (code, msg) = d.fails(
        &[&args[..], &["--size", "20M", "--password-stdin"]].concat(),
        "",
    );
    assert_eq!(code, 7, "{msg}");
    assert_eq!(
        msg,
        format!(
            "tcctl: {sv}: xfs needs a volume of at least 300 MiB of data (19.75 MiB here): its \
             mkfs refuses less\n"
        )
    );
    assert!(!small.exists());
    let (code, msg) = d.fails(
        &[
            "create",
            sv,
            "--filesystem",
            "btrfs",
            "--size",
            "100M",
            "--password-stdin",
        ],
        "",
    );
    assert_eq!(
        (code, msg),
        (
            7,
            format!(
                "tcctl: {sv}: btrfs needs a volume of at least 109 MiB of data (99.75 MiB here): \
                 its mkfs refuses less\n"
            )
        )
    );
    assert!(!small.exists());
    // The small filesystems have their least too, said in KiB: 300K less
    // the headers' 256 KiB leaves 44 KiB of data, 288K leaves 32.
    for (fs, size, said) in [
        (
            "ext4",
            "300K",
            "ext4 needs a volume of at least 128 KiB of data (44 KiB here)",
        ),
        (
            "fat",
            "288K",
            "fat needs a volume of at least 64 KiB of data (32 KiB here)",
        ),
        (
            "ntfs",
            "1M",
            "ntfs needs a volume of at least 1152 KiB of data (768 KiB here)",
        ),
        (
            "exfat",
            "3M",
            "exfat needs a volume of at least 3 MiB of data (2.75 MiB here)",
        ),
    ] {
        let (code, msg) = d.fails(
            &[
                "create",
                sv,
                "--filesystem",
                fs,
                "--size",
                size,
                "--password-stdin",
            ],
            "",
        );
        assert_eq!(code, 7, "{msg}");
        assert_eq!(msg, format!("tcctl: {sv}: {said}: its mkfs refuses less\n"));
        assert!(!small.exists());
    }
    // Below what the headers take, whatever the filesystem: refused with
    // the same code.
    let none = ["--filesystem", "none", "--password-stdin"];
    let (code, msg) = d.fails(&[&["create", sv, "--size", "100K"][..], &none].concat(), "");
    assert_eq!(
        (code, msg.as_str()),
        (
            7,
            "tcctl: --size 100K: a volume takes at least 288 KiB (its headers and 32 KiB of \
             data)\n"
        )
    );
    // With the default filesystem the same least: ext4's own is said
    // past it (300K above), each message the least it enforces.
    let (code, msg) = d.fails(&["create", sv, "--size", "100K", "--password-stdin"], "");
    assert_eq!(
        (code, msg.as_str()),
        (
            7,
            "tcctl: --size 100K: a volume takes at least 288 KiB (its headers and 32 KiB of \
             data)\n"
        )
    );
    assert!(!small.exists());
    std::fs::write(&small, vec![7u8; 20 << 20]).expect("an existing file");
    // An existing file made into a volume at its own size is judged by
    // that size, by name, before its overwriting is asked (a refusal
    // leaves nothing to confirm), with or without --batch-mode.
    for batch in [&[][..], &["--batch-mode"]] {
        let (code, msg) = d.fails(
            &[&args[..], &["--password-stdin"], batch].concat(),
            "twenty-one characters\n",
        );
        assert_eq!(
            (code, msg),
            (
                7,
                format!(
                    "tcctl: {sv}: xfs needs a volume of at least 300 MiB of data (19.75 MiB \
                     here): its mkfs refuses less\n"
                )
            )
        );
    }
    // One it fits: overwriting what is there is asked first; without a
    // terminal, it takes --batch-mode.
    let (code, msg) = d.fails(
        &[
            "create",
            sv,
            "--filesystem",
            "ext4",
            "--pim",
            "1",
            "--password-stdin",
        ],
        "twenty-one characters\n",
    );
    assert_eq!(code, USAGE, "{msg}");
    assert_eq!(
        msg,
        format!(
            "tcctl: {sv} exists: confirmation needed and no terminal to ask on: give \
             --batch-mode (VeraCrypt's --force)\n"
        )
    );
    assert!(
        std::fs::read(&small)
            .expect("still there")
            .iter()
            .all(|&b| b == 7),
        "no header written"
    );

    // A short password: refused without --force, before any file is made;
    // one shorter than VeraCrypt advises: a warning.
    let short = d.path("short.hc");
    let sv = short.to_str().expect("utf-8");
    let new = [
        "create",
        sv,
        "--size",
        "4M",
        "--filesystem",
        "none",
        "--quick",
    ];
    let (code, msg) = d.fails(&[&new[..], &["--password-stdin"]].concat(), "abc12\n");
    assert_eq!(code, 7);
    assert_eq!(
        msg,
        "tcctl: a password of 5 characters is easy to guess: tcctl takes no fewer than 8 \
         and advises 20 or more (--force takes it anyway)\n"
    );
    assert!(!short.exists(), "no file is made for a refused password");
    // VeraCrypt's rule: a PIM under 485 takes 20 characters or more,
    // said alone (a warning of the short password would be moot).
    let (code, msg) = d.fails(
        &[&new[..], &["--pim", "1", "--password-stdin"]].concat(),
        "eleven char\n",
    );
    assert_eq!(code, 7, "{msg}");
    assert_eq!(
        msg,
        "tcctl: a PIM under 485 takes a password of 20 characters or more, as VeraCrypt \
         requires; this one has 11 (a larger PIM, or none, takes it; --force takes it \
         anyway)\n"
    );
    assert!(!short.exists(), "no file is made for a refused PIM");
    // Under 8 characters, no PIM takes it: the way out says so.
    let (code, msg) = d.fails(
        &[&new[..], &["--pim", "1", "--password-stdin"]].concat(),
        "abc12\n",
    );
    assert_eq!(code, 7, "{msg}");
    assert!(
        msg.ends_with(
            "this one has 5 (a larger PIM, or none, takes one of 8 characters or more; --force \
             takes it anyway)\n"
        ),
        "{msg}"
    );
    let out = d.tcctl(
        &[&new[..], &["--pim", "1", "--password-stdin"]].concat(),
        "twenty characters ok\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "20 characters with PIM 1 are taken");
    std::fs::remove_file(&short).expect("made");
    let out = d.tcctl(&[&new[..], &["--password-stdin"]].concat(), "eleven char\n");
    assert!(out.status.success());
    assert_eq!(
        text(&out.stderr),
        "tcctl: warning: a password shorter than 20 characters is easier to guess by brute \
         force; 20 or more are advised\n"
    );
    std::fs::remove_file(&short).expect("made");
    let out = d.tcctl(
        &[&new[..], &["--force", "--pim", "1", "--password-stdin"]].concat(),
        "abc12\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("warning: PIM 1 with a password of 5 characters"),
        "still warned: {}",
        text(&out.stderr)
    );

    let hidden = [
        "create",
        v,
        "--hidden-size",
        "2M",
        "--outer-pim",
        "1",
        "--pim",
        "2",
        "--force",
        "--filesystem",
        "none",
        "--password-stdin",
    ];
    let words = "outer words, twenty or more\nhidden words\n";
    // The ext4 outer volume would write anywhere: no hidden volume in it.
    let (code, msg) = d.fails(&hidden, words);
    assert_eq!(code, 7, "{msg}");
    assert!(msg.contains("holds an ext2/3/4 filesystem"), "{msg}");
    // A FAT one fills from the start.
    let fat = ["--pim", "1", "--force", "--filesystem", "fat"];
    d.ok(
        &[
            &["create", v, "--size", "8M"][..],
            &fat,
            &["--password-stdin"],
        ]
        .concat(),
        "outer words, twenty or more\n",
    );
    let out = d.ok(&hidden, words);
    assert_eq!(out, format!("hidden volume created in {v}\n"));
    // A wrong outer password is found before the hidden volume's is
    // asked, and the hint names the outer volume's options.
    let (code, msg) = d.fails(
        &[
            "create",
            v,
            "--hidden-size",
            "2M",
            "--outer-pim",
            "1",
            "--filesystem",
            "none",
            "--password-stdin",
        ],
        "wrong words\nhidden words\n",
    );
    assert_eq!(code, 2, "{msg}");
    assert!(
        msg.contains("giving --outer-hash narrows the search"),
        "{msg}"
    );

    let out = d.ok(
        &[
            "create",
            v,
            "--size",
            "4M",
            "--force",
            "--filesystem",
            "none",
            "--password-stdin",
        ],
        "new words\n",
    );
    assert_eq!(out, format!("{v} created\n"));
    assert_eq!(std::fs::metadata(&vol).expect("volume").len(), 4 << 20);
}

#[test]
fn policy_set_refuses_an_unknown_backend_by_name() {
    let d = tcd_tests::daemon::Daemon::start();
    let (code, msg) = d.fails(&["policy", "set", "--allow", "soft,bogus"], "");
    assert_eq!(code, 64, "{msg}");
    assert!(
        msg.starts_with("tcctl: unknown backend bogus (the daemon has: "),
        "{msg}"
    );
    for (option, value) in [("--allow", ""), ("--allow", "soft,"), ("--prefer", ",soft")] {
        let (code, msg) = d.fails(&["policy", "set", option, value], "");
        assert_eq!(code, 64, "{msg}");
        assert!(
            msg.starts_with(&format!(
                "tcctl: {option} takes backend names, comma-separated, none empty (the daemon has: "
            )),
            "{msg}"
        );
    }
    let shown = d.ok(&["policy", "show", "--json"], "");
    assert!(
        shown.contains("\"allowed\":null"),
        "the policy stays: {shown}"
    );
}

#[test]
fn every_option_and_argument_of_every_command_is_described() {
    let commands: &[&[&str]] = &[
        &[],
        &["mount"],
        &["dismount"],
        &["list"],
        &["status"],
        &["info"],
        &["dump"],
        &["create"],
        &["change-password"],
        &["backup-header"],
        &["restore-header"],
        &["wipe-cache"],
        &["create-keyfile"],
        &["favorites", "add"],
        &["favorites", "remove"],
        &["favorites", "list"],
        &["favorites", "mount"],
        &["favorites", "forget"],
        &["watch"],
        &["monitor"],
        &["backends"],
        &["policy", "show"],
        &["policy", "set"],
        &["benchmark"],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.push("-h");
        let out = tcctl(&args);
        assert!(out.status.success(), "tcctl {args:?}");
        let help = text(&out.stdout);
        // One line per option or argument (-h does not wrap): its name, two
        // spaces or more, its description.
        let bare: Vec<&str> = help
            .lines()
            .filter(|l| {
                let t = l.trim_start();
                l.starts_with("  ")
                    && (t.starts_with('-') || t.starts_with('<') || t.starts_with('['))
            })
            .collect();
        let lines: Vec<&str> = help.lines().collect();
        let bare: Vec<&str> = bare
            .into_iter()
            .filter(|l| {
                // Long names put the description on the next line, deeper.
                let next = lines
                    .iter()
                    .position(|x| x == l)
                    .and_then(|i| lines.get(i + 1))
                    .copied()
                    .unwrap_or("");
                let same_line = l.trim().contains("  ");
                let next_line = next.starts_with("        ") && !next.trim().is_empty();
                !(same_line || next_line)
            })
            .collect();
        assert!(bare.is_empty(), "tcctl {args:?}: undescribed {bare:?}");
    }
}

#[test]
fn a_user_on_roots_socket_is_told_to_use_the_system_bus() {
    use std::os::unix::fs::PermissionsExt;
    tcd_tests::require_root();
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let socket = dir.path().join("tcd.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("bind");
    std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let out = Command::new(tcd_tests::require_tool("setpriv", "package util-linux"))
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(build_dir().join("tcctl"))
        .arg("--socket")
        .arg(&socket)
        .arg("list")
        .output()
        .expect("run tcctl as nobody");
    assert_eq!(out.status.code(), Some(6), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "tcctl: {}: Permission denied: the daemon's socket is for root; \
             users reach tcd on the system bus (tcctl --system), where polkit decides\n",
            socket.display()
        )
    );
}

#[test]
fn the_keyfile_generator_makes_count_files_of_the_size_asked_or_none() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let base = dir.path().join("key");
    let base = base.to_str().expect("utf-8");
    let out = tcctl(&["create-keyfile", base, "--count", "3", "--size", "100"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let names: Vec<String> = (1..=3).map(|i| format!("{base}_{i}")).collect();
    assert_eq!(
        text(&out.stdout),
        names
            .iter()
            .map(|n| format!("keyfile {n} created\n"))
            .collect::<String>()
    );
    let contents: Vec<Vec<u8>> = names
        .iter()
        .map(|n| {
            let meta = std::fs::metadata(n).expect("keyfile");
            assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{n}");
            std::fs::read(n).expect("read")
        })
        .collect();
    assert!(contents.iter().all(|c| c.len() == 100));
    assert!(
        contents[0] != contents[1] && contents[1] != contents[2],
        "random"
    );

    // Random sizes, within 64 bytes and --size.
    let sized = format!("{base}-r");
    let out = tcctl(&[
        "create-keyfile",
        &sized,
        "--count",
        "8",
        "--random-size",
        "--size",
        "4096",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let sizes: Vec<u64> = (1..=8)
        .map(|i| {
            std::fs::metadata(format!("{sized}_{i}"))
                .expect("keyfile")
                .len()
        })
        .collect();
    assert!(sizes.iter().all(|s| (64..=4096).contains(s)), "{sizes:?}");
    assert!(sizes.iter().any(|s| *s != sizes[0]), "{sizes:?}");

    // One of them exists: nothing is made, nothing replaced.
    let other = format!("{base}-x");
    std::fs::write(format!("{other}_2"), b"mine").expect("a file");
    let out = tcctl(&["create-keyfile", &other, "--count", "3"]);
    assert_eq!(
        (out.status.code(), text(&out.stderr)),
        (
            Some(INVALID_ARGUMENT),
            format!("tcctl: {other}_2 exists: a keyfile is never replaced\n")
        )
    );
    assert!(!std::path::Path::new(&format!("{other}_1")).exists());
    assert!(!std::path::Path::new(&format!("{other}_3")).exists());
    assert_eq!(std::fs::read(format!("{other}_2")).expect("kept"), b"mine");

    // The largest with a unit, as --size takes it elsewhere.
    let big = format!("{base}-big");
    let out = tcctl(&["create-keyfile", &big, "--size", "1M"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::metadata(&big).expect("keyfile").len(), 1 << 20);
    // Below VeraCrypt's smallest keyfile: a usage error.
    let out = tcctl(&["create-keyfile", &format!("{base}-s"), "--size", "63"]);
    assert_eq!(out.status.code(), Some(USAGE));
    assert!(
        text(&out.stderr).contains("63 is not from 64 bytes to 1M (1048576 bytes)"),
        "{}",
        text(&out.stderr)
    );
}

/// Option combinations tcctl can see are contradictory: refused on a
/// terminal before any prompt, with exit 64, naming the options as typed.
#[test]
fn contradictory_options_are_refused_before_the_password_is_asked() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-t", "-m", "system,headerbak", "/dev/null"],
            "-m system and -m headerbak cannot go together: a system drive has no backup header",
        ),
        (
            &[
                "mount",
                "--system-encryption",
                "--protect-hidden",
                "/dev/null",
            ],
            "--system-encryption and --protect-hidden cannot go together: a system drive has no \
             hidden volume",
        ),
        (
            &["mount", "-m", "headerbak", "--header", "h.bin", "/dev/null"],
            "-m headerbak and --header cannot go together: a header file has no backup header",
        ),
        (
            &["mount", "--truecrypt", "--pim", "5", "/dev/null"],
            "TrueCrypt volumes have no PIM (--pim goes with VeraCrypt volumes)",
        ),
        (
            &["mount", "--fs-options", "noatime,sync", "/dev/null"],
            "fs options: \"sync\" is not allowed; only uid=, gid=, umask=, fmask=, dmask= (FAT, \
             exFAT, NTFS), noatime, noexec, nodev, nosuid",
        ),
        (
            &["info", "--format", "truecrypt", "--pim", "5", "/dev/null"],
            "TrueCrypt volumes have no PIM (--pim goes with VeraCrypt volumes)",
        ),
        (
            &["mount", "--truecrypt", "--hash", "sha256", "/dev/null"],
            "TrueCrypt's hashes are sha512, whirlpool, ripemd160 and (before 5.0) sha1, not \
             sha256 (it goes with VeraCrypt volumes)",
        ),
        (
            &["info", "-tc", "--encryption", "Camellia", "/dev/null"],
            "TrueCrypt's ciphers are AES, Serpent and Twofish and their cascades, not Camellia \
             (it goes with VeraCrypt volumes)",
        ),
        (
            &[
                "mount",
                "--filesystem",
                "none",
                "--fs-options",
                "uid=0",
                "/dev/null",
            ],
            "--fs-options and --filesystem none cannot go together: no filesystem is mounted \
             to take the options",
        ),
    ];
    for (args, said) in cases {
        let mut c = Command::new(build_dir().join("tcctl"));
        c.args(*args).env("TCD_SOCKET", "/nonexistent/tcd.sock");
        let t = tcd_tests::pty::Pty::spawn(c, None);
        let (code, text) = t.finish(std::time::Duration::from_secs(20));
        assert_eq!(
            (code, text.trim_end()),
            (USAGE, format!("tcctl: {said}").as_str()),
            "tcctl {args:?}"
        );
    }
    // A keyfile from standard input that is the terminal: nothing was
    // piped in, and reading would wait in silence.
    let d = tcd_tests::daemon::Daemon::start();
    let vol = d.path("v.hc");
    std::fs::write(&vol, vec![0u8; 1 << 20]).expect("a file");
    let mut c = d.command();
    c.args(["mount", "--keyfile", "-", vol.to_str().expect("utf-8")]);
    let (code, text) =
        tcd_tests::pty::Pty::spawn(c, None).finish(std::time::Duration::from_secs(20));
    assert_eq!(
        (code, text.trim_end()),
        (
            USAGE,
            "tcctl: --keyfile - reads a keyfile piped to standard input, which is a terminal \
             here: pipe or redirect the keyfile in (tcctl ... --keyfile - < FILE)"
        )
    );
}

#[test]
fn a_hidden_volume_never_overwrites_the_outer_volumes_files() {
    let d = tcd_tests::daemon::Daemon::start();
    let vol = d.path("full.hc");
    let v = vol.to_str().expect("utf-8");
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let m = mnt.to_str().expect("utf-8");
    let outer = ["--pim", "1", "--hash", "sha512", "--password-stdin"];
    d.ok(
        &[
            &[
                "create",
                v,
                "--size",
                "10M",
                "--filesystem",
                "fat",
                "--force",
            ][..],
            &outer,
        ]
        .concat(),
        "outer words\n",
    );
    d.ok(&[&["mount", v, m][..], &outer].concat(), "outer words\n");
    let data: Vec<u8> = (0..8 << 20).map(|i: u32| (i / 4093) as u8).collect();
    std::fs::write(mnt.join("decoy"), &data).expect("write the outer's file");
    d.ok(&["dismount", m], "");
    let hidden = |size: &str| {
        d.tcctl(
            &[
                "create",
                v,
                "--hidden-size",
                size,
                "--outer-pim",
                "1",
                "--outer-hash",
                "sha512",
                "--pim",
                "2",
                "--force",
                "--filesystem",
                "none",
                "--password-stdin",
            ],
            "outer words\nhidden words\n",
        )
    };
    // 3 MiB at the end of a 10 MiB volume holding 8 MiB would overwrite
    // the file: refused, with the size that fits.
    let out = hidden("3M");
    let msg = text(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{msg}");
    let room: u64 = msg
        .split_once("at most ")
        .and_then(|(_, rest)| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the room is named: {msg}"));
    assert!(
        msg.contains("tcctl: the outer volume's filesystem has data at host byte ")
            && room > 64 * 1024
            && room < 2 << 20,
        "{msg}"
    );
    // The size offered fits, and the outer's file stays whole.
    let out = hidden(&room.to_string());
    assert!(out.status.success(), "{}", text(&out.stderr));
    d.ok(
        &[&["mount", v, m, "--readonly"][..], &outer].concat(),
        "outer words\n",
    );
    assert!(
        std::fs::read(mnt.join("decoy")).expect("read") == data,
        "the outer's file is intact"
    );
    d.ok(&["dismount", m], "");
}

/// What VeraCrypt's users and scripts pass that tcd has no use for: refused
/// (exit 64) saying what to do instead, before any prompt.
#[test]
fn veracrypt_values_tcd_has_no_use_for_are_refused_saying_why() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-t", "--random-source=/tmp/entropy", "-c", "x.hc"],
            "tcctl: --random-source takes only /dev/urandom or /dev/random: tcd reads the \
             kernel's random source (getrandom) for keys, salts and the random fill, and \
             nothing else\n",
        ),
        (
            &["mount", "--fs-options", "uid=0,ro", "/dev/null"],
            "tcctl: --fs-options ro: a read-only mount is --readonly (or -m ro)\n",
        ),
        (
            &["mount", "--filesystem", "vfat", "/dev/null"],
            "error: --filesystem vfat: tcd finds the filesystem inside the volume itself; \
             --filesystem takes auto (the default) or none\n",
        ),
        (
            &["-t", "--filesystem=ntfs", "/dev/null"],
            "error: --filesystem ntfs: tcd finds the filesystem inside the volume itself; \
             --filesystem takes auto (the default) or none\n",
        ),
    ];
    for (args, said) in cases {
        let out = tcctl(args);
        assert_eq!(
            (
                out.status.code(),
                text(&out.stderr).lines().next().map(str::to_owned)
            ),
            (Some(USAGE), said.lines().next().map(str::to_owned)),
            "tcctl {args:?}: {}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "tcctl {args:?}");
    }
}

#[test]
fn change_password_checks_the_current_password_before_asking_the_new_one() {
    use std::time::Duration;
    let d = tcd_tests::daemon::Daemon::start();
    let vol = d.path("v.hc");
    let v = vol.to_str().expect("utf-8");
    let open = ["--pim", "1", "--hash", "sha512"];
    d.ok(
        &[
            &[
                "create",
                v,
                "--size",
                "4M",
                "--filesystem",
                "none",
                "--password-stdin",
                "--force",
            ][..],
            &open,
        ]
        .concat(),
        "the current words\n",
    );
    let on_terminal = || {
        let mut c = d.command();
        c.args(["change-password", v]).args(open);
        let mut t = tcd_tests::pty::Pty::spawn(c, None);
        t.expect("Current password for", Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(300));
        t
    };
    let mut t = on_terminal();
    t.type_line("a typo");
    // Said, and the current password asked again (as mount asks it);
    // Ctrl-D there gives up, as a wrong password.
    t.expect_times("Current password for", 2, Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("\u{4}");
    let (code, text) = t.finish(Duration::from_secs(60));
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("wrong password"), "{text}");
    assert!(!text.contains("New password"), "{text}");
    // The right one: then the new password, twice.
    let mut t = on_terminal();
    t.type_line("the current words");
    t.expect("New password: ", Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("the new words, longer");
    t.expect("Repeat the new password: ", Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("the new words, longer");
    let (code, text) = t.finish(Duration::from_secs(60));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains(&format!("{v}: password changed")), "{text}");
    d.ok(
        &[&["info", v, "--password-stdin"][..], &open].concat(),
        "the new words, longer\n",
    );
}

#[test]
fn a_conversion_to_truecrypt_of_a_hash_it_lacks_says_new_hash() {
    let d = tcd_tests::daemon::Daemon::start();
    let v = d.path("s.hc");
    let v = v.to_str().expect("utf-8");
    let open = [
        "--pim",
        "1",
        "--filesystem",
        "none",
        "--force",
        "--password-stdin",
    ];
    d.ok(
        &[
            &["create", v, "--size", "4M", "--hash", "sha256"][..],
            &open,
        ]
        .concat(),
        "sha-256 words here\n",
    );
    let change = ["change-password", v, "--pim", "1", "--to", "truecrypt"];
    let (code, msg) = d.fails(
        &[&change[..], &["--force", "--password-stdin"]].concat(),
        "sha-256 words here\nnew words for it\n",
    );
    assert_eq!(code, 7, "{msg}");
    assert!(
        msg.ends_with(
            "SHA-256 is not a PRF of TrueCrypt: --new-hash gives the header one TrueCrypt has \
             (sha512, whirlpool or ripemd160)\n"
        ),
        "{msg}"
    );
    let out = d.ok(
        &[
            &change[..],
            &["--new-hash", "sha512", "--force", "--password-stdin"],
        ]
        .concat(),
        "sha-256 words here\nnew words for it\n",
    );
    assert!(out.contains("converted to the TrueCrypt format"), "{out}");
}

#[test]
fn change_password_says_when_it_converted_the_format() {
    let d = tcd_tests::daemon::Daemon::start();
    let vol = d.path("t.tc");
    let v = vol.to_str().expect("utf-8");
    d.ok(
        &[
            "create",
            v,
            "--size",
            "4M",
            "--format",
            "truecrypt",
            "--hash",
            "sha512",
            "--filesystem",
            "none",
            "--password-stdin",
        ],
        "truecrypt words here\n",
    );
    let out = d.ok(
        &[
            "change-password",
            v,
            "--hash",
            "sha512",
            "--to",
            "veracrypt",
            "--new-pim",
            "1",
            "--force",
            "--password-stdin",
        ],
        "truecrypt words here\nveracrypt words now\n",
    );
    assert_eq!(
        out,
        format!(
            "{v}: password changed\n{v}: converted to the VeraCrypt format\n{v}: its PIM is \
             now 1\n"
        )
    );
    let info = d.ok(
        &[
            "info",
            v,
            "--format",
            "veracrypt",
            "--pim",
            "1",
            "--hash",
            "sha512",
            "--json",
            "--password-stdin",
        ],
        "veracrypt words now\n",
    );
    assert!(info.contains("\"format\":\"VeraCrypt\""), "{info}");
    // To the format it has: no conversion said.
    let again = [
        &["change-password", v, "--hash", "sha512", "--pim", "1"][..],
        &["--to", "veracrypt", "--force", "--password-stdin"],
    ]
    .concat();
    let out = d.ok(&again, "veracrypt words now\nveracrypt words again\n");
    assert_eq!(out, format!("{v}: password changed\n"));
    // The same password again (a new PIM): no password said changed.
    let same = [
        &["change-password", v, "--hash", "sha512", "--pim", "1"][..],
        &["--new-pim", "2", "--password-stdin"],
    ]
    .concat();
    let out = d.ok(&same, "veracrypt words again\nveracrypt words again\n");
    assert_eq!(
        out,
        format!("{v}: header rewritten, password unchanged\n{v}: its PIM is now 2\n")
    );
    let same = [
        &["change-password", v, "--hash", "sha512", "--pim", "2"][..],
        &["--new-pim", "1", "--password-stdin"],
    ]
    .concat();
    d.ok(&same, "veracrypt words again\nveracrypt words again\n");
    // Back to TrueCrypt's: the PIM it had is said to be gone, and its
    // rule (20 characters under PIM 485) is not applied to a header that
    // has none.
    // Its header becomes far cheaper to attack: asked first, and with no
    // terminal to ask on, refused unless -q (cryptsetup's --batch-mode) or
    // --force (which says why).
    let back = [
        &["change-password", v, "--hash", "sha512", "--pim", "1"][..],
        &["--to", "truecrypt", "--password-stdin"],
    ]
    .concat();
    let (code, msg) = d.fails(&back, "veracrypt words again\ntc words 1234\n");
    assert_eq!(
        (code, msg),
        (
            64,
            format!(
                "tcctl: converting {v} to the TrueCrypt format: confirmation needed and no \
                 terminal to ask on: give --batch-mode (-q) or --force\n"
            )
        )
    );
    let out = d.tcctl(
        &[&back[..], &["-q"]].concat(),
        "veracrypt words again\ntc words 1234\n",
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "{v}: password changed\n{v}: converted to the TrueCrypt format\n{v}: its PIM (1) \
             is gone: TrueCrypt's format has none\n"
        )
    );
    let warned = String::from_utf8_lossy(&out.stderr);
    assert!(
        warned.contains(
            "tcctl: warning: TrueCrypt's format derives the header key with 1,000 iterations"
        ),
        "{warned}"
    );
}

/// What needs no password is said before any is asked: `create` over a
/// mounted volume names where it is mounted; `expand` to a size below the
/// container's says a volume cannot shrink. Standard input is empty and
/// no terminal is there, so a prompt would fail with another message.
#[test]
fn create_and_expand_refuse_what_needs_no_password_before_asking_one() {
    let d = tcd_tests::daemon::Daemon::start();
    let vol = d.path("in-use.hc");
    let v = vol.to_str().expect("utf-8");
    let open = ["--filesystem", "none", "--pim", "1", "--password-stdin"];
    d.ok(
        &[&["create", v, "--size", "8M", "--force"][..], &open].concat(),
        "some words\n",
    );
    d.ok(&[&["mount", v][..], &open].concat(), "some words\n");
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    let (code, msg) = d.fails(&["create", v, "-q", "--filesystem", "none"], "");
    assert_eq!(code, 4, "{msg}");
    assert_eq!(
        msg,
        format!("tcctl: {v} is already mounted as {device}: `tcctl dismount {v}` first\n")
    );
    d.ok(&["dismount", v], "");

    let (code, msg) = d.fails(&["expand", v, "-q", "--size", "4M"], "");
    assert_eq!(code, INVALID_ARGUMENT, "{msg}");
    assert_eq!(
        msg,
        format!(
            "tcctl: {v} holds 8388608 bytes already: a volume cannot shrink; give a --size \
             above that, or --add the bytes to add\n"
        )
    );
    assert_eq!(std::fs::metadata(&vol).expect("volume").len(), 8 << 20);
}

#[test]
fn manual_pages_name_each_options_other_spellings_as_help_does() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = tcctl(&["generate-dist", dir.path().to_str().expect("a UTF-8 path")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = std::fs::read_to_string(dir.path().join("tcctl-mount.1")).expect("tcctl-mount.1");
    let help = text(&tcctl(&["mount", "--help"]).stdout);
    for alias in [
        "key-file",
        "read-only",
        "protection-keyfile",
        "protection-pim",
    ] {
        assert!(
            help.contains(&format!("[alias: --{alias}]")),
            "--help names --{alias}: {help}"
        );
        let roff = alias.replace('-', "\\-");
        assert!(
            page.contains(&format!("[alias: \\-\\-{roff}]")),
            "tcctl-mount.1 names --{alias}"
        );
    }
}

#[test]
fn completions_offer_no_option_tcctl_only_gives_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = tcctl(&["generate-dist", dir.path().to_str().expect("a UTF-8 path")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for script in ["tcctl.bash", "_tcctl", "tcctl.fish"] {
        let body = std::fs::read_to_string(dir.path().join(script)).expect(script);
        // What VeraCrypt's and cryptsetup's spellings are translated into.
        for internal in [
            "empty-password",
            "ask-again",
            "mounted-status",
            "veracrypt-lines",
        ] {
            assert!(!body.contains(internal), "{script} offers --{internal}");
        }
        // What users type stays.
        for option in ["readonly", "slot", "password-stdin", "non-interactive"] {
            assert!(body.contains(option), "{script} lacks --{option}");
        }
    }
    // cryptsetup's names of commands complete as the commands do.
    let bash = std::fs::read_to_string(dir.path().join("tcctl.bash")).expect("bash");
    for alias in ["tcctl,tcryptOpen)", "tcctl,tcryptDump)"] {
        assert!(bash.contains(alias), "no {alias} in the bash completion");
    }
    let bash = std::process::Command::new("bash")
        .arg("-n")
        .arg(dir.path().join("tcctl.bash"))
        .status()
        .expect("bash");
    assert!(bash.success(), "the bash completion still parses");
    // What bash offers, as a user's Tab shows it: cryptsetup's one type;
    // after -t, VeraCrypt's options (and none it refuses).
    let complete = |words: &[&str]| {
        let script = format!(
            "source {}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE=\"${{COMP_WORDS[*]}}\"; \
             COMP_POINT=${{#COMP_LINE}}; complete -p tcctl | grep -o -- '-F [^ ]*' | \
             cut -c4- > f; $(cat f) tcctl \"${{COMP_WORDS[-1]}}\" \"${{COMP_WORDS[-2]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            dir.path().join("tcctl.bash").display(),
            words
                .iter()
                .map(|w| format!("'{w}'"))
                .collect::<Vec<_>>()
                .join(" "),
            words.len() - 1
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &script])
            .current_dir(dir.path())
            .output()
            .expect("bash");
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    assert_eq!(complete(&["tcctl", "open", "--type", ""]), "tcrypt\n");
    let offered = complete(&["tcctl", "-t", "--"]);
    for option in ["--mount", "--stdin", "--auto-mount", "--volume-properties"] {
        assert!(offered.lines().any(|l| l == option), "{option}: {offered}");
    }
    for refused in ["--password", "--display-password", "--token-pin"] {
        assert!(
            !offered.lines().any(|l| l == refused),
            "{refused}: {offered}"
        );
    }
    // Their values, as mount's own options complete theirs.
    let hashes = complete(&["tcctl", "-t", "--hash", ""]);
    assert!(hashes.lines().any(|l| l == "sha512"), "{hashes}");
    let options = complete(&["tcctl", "-t", "-m", ""]);
    assert!(options.lines().any(|l| l == "headerbak"), "{options}");
    let hashes = complete(&["tcctl", "-t", "-C", "--new-hash", ""]);
    assert!(hashes.lines().any(|l| l == "sha512"), "{hashes}");
    let offered = complete(&["tcctl", "-t", "-C", "--new-"]);
    for option in ["--new-hash", "--new-pim", "--new-keyfiles"] {
        assert!(offered.lines().any(|l| l == option), "{option}: {offered}");
    }
    // A backend is named, not a file.
    assert_eq!(
        complete(&["tcctl", "mount", "--backend", ""]),
        "aesni\nsoft\n"
    );
    assert_eq!(complete(&["tcctl", "-t", "--backend", "s"]), "soft\n");
    assert_eq!(
        complete(&["tcctl", "policy", "set", "--allow", ""]),
        "aesni\nsoft\n"
    );
    // udisksctl's unlock and lock take -b, then the volume: a file, or
    // for lock a device too.
    assert_eq!(
        complete(&["tcctl", "unlock", "-"]),
        "-b\n--block-device\n--no-user-interaction\n--key-file\n"
    );
    assert_eq!(
        complete(&["tcctl", "lock", "--"]),
        "--block-device\n--no-user-interaction\n"
    );
    // Its commands are offered with tcctl's, cryptsetup's options on its
    // commands.
    assert_eq!(complete(&["tcctl", "unl"]), "unlock\n");
    let offered = complete(&["tcctl", "tcryptOpen", "--tcrypt-"]);
    for option in ["--tcrypt-hidden", "--tcrypt-system", "--tcrypt-backup"] {
        assert_eq!(
            offered.lines().filter(|l| l == &option).count(),
            1,
            "{option} once: {offered}"
        );
    }
    // umount(8)'s lazy unmount; VeraCrypt's --protect-hidden yes|no.
    let offered = complete(&["tcctl", "umount", "-"]);
    for option in ["-l", "--lazy", "-f", "--force"] {
        assert!(offered.lines().any(|l| l == option), "{option}: {offered}");
    }
    assert_eq!(
        complete(&["tcctl", "-t", "--protect-hidden", ""]),
        "yes\nno\n"
    );
    let offered = complete(&["tcctl", "open", "--veracrypt-"]);
    for option in ["--veracrypt-pim", "--veracrypt-query-pim"] {
        assert!(offered.lines().any(|l| l == option), "{option}: {offered}");
    }
    assert_eq!(
        complete(&["tcctl", "unlock", "-b", "tcctl.ba"]),
        "tcctl.bash\n"
    );
    // And the block devices, as udisksctl offers them.
    let offered = complete(&["tcctl", "unlock", "-b", "/dev/loop"]);
    let some = std::fs::read_dir("/sys/class/block")
        .expect("/sys/class/block")
        .flatten()
        .find(|b| b.file_name().to_string_lossy().starts_with("loop"))
        .map(|b| format!("/dev/{}", b.file_name().to_string_lossy()))
        .expect("a loop device on this machine");
    assert!(offered.lines().any(|l| l == some), "{some}: {offered}");
    // cryptsetup's options on the commands that take them: the key dump
    // on tcryptDump alone, --test-passphrase on open.
    assert_eq!(complete(&["tcctl", "open", "--dump-"]), "\n");
    let mut offered: Vec<String> = complete(&["tcctl", "tcryptDump", "--dump-"])
        .lines()
        .map(str::to_owned)
        .collect();
    offered.sort();
    assert_eq!(offered, ["--dump-master-key", "--dump-volume-key"]);
    assert_eq!(
        complete(&["tcctl", "open", "--test-"]),
        "--test-passphrase\n"
    );
    let offered = complete(&["tcctl", "umount", "-"]);
    for option in ["-v", "--verbose"] {
        assert!(offered.lines().any(|l| l == option), "{option}: {offered}");
    }
    // lock takes only what tcd has unlocked (no daemon here: nothing, and
    // no file).
    assert_eq!(
        complete(&["tcctl", "lock", "--block-device", "tcctl.ba"]),
        "\n"
    );
    // A slot is a number; cryptsetup's -M its one type.
    assert_eq!(
        complete(&["tcctl", "dismount", "--slot", "1"]),
        "1\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n"
    );
    assert_eq!(complete(&["tcctl", "status", "--slot", "64"]), "64\n");
    assert_eq!(complete(&["tcctl", "open", "-M", ""]), "tcrypt\n");
}
