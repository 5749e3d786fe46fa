//! VeraCrypt's text mode asks on the terminal for what a command line
//! leaves out: `-t` alone the volume to mount and where (and on a mount,
//! marks the keyfiles and hidden-volume protection for `mount` to ask
//! once its checks have passed), `-t -c` the new
//! volume's type, path, size, encryption, hash and filesystem (one
//! question each, as VeraCrypt asks them, once the daemon is reached;
//! `create` itself then asks the password, the PIM and the keyfiles), and
//! any other
//! command the volume or file it names. Only with `-t`, with a terminal on
//! standard input and without `--non-interactive`: scripts get the usage
//! error instead.

use crate::bus::{Failure, exit};
use crate::cli::{Cli, Encryption, Hash, NewFilesystem};
use crate::input::terminal_line;
use clap::ValueEnum;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use std::ffi::OsString;

/// Whether `given` (the command line as typed) may be asked about; `args`
/// is its translation (where `-p ""` became `--empty-password`).
fn may_ask(given: &[OsString], args: &[OsString]) -> bool {
    let has = |w: &str| given.iter().any(|a| a == w);
    (has("-t") || has("--text"))
        && !args
            .iter()
            .any(|a| a == "--non-interactive" || a == "--empty-password")
        && !["-h", "--help", "-V", "--version"].iter().any(|w| has(w))
        && std::io::IsTerminal::is_terminal(&std::io::stdin())
}

/// Every spelling of a keyfile option, VeraCrypt's and tcctl's.
const KEYFILES: &[&str] = &["-k", "--keyfiles", "--keyfile", "--key-file"];

/// Whether the command line as typed gives one of `options` (alone or as
/// `--option=value`).
fn names(given: &[OsString], options: &[&str]) -> bool {
    given.iter().any(|a| {
        let a = a.to_string_lossy();
        let name = a.split_once('=').map_or(a.as_ref(), |(n, _)| n);
        options.contains(&name)
    })
}

/// Before parsing: `-t -c` asks for each choice its command line leaves
/// out, adding the answers to `args` (the translated command line).
pub fn fill_in(given: &[OsString], args: &mut Vec<OsString>) -> Result<(), Failure> {
    // A VeraCrypt line that asks nothing (no terminal, --non-interactive)
    // makes VeraCrypt's default filesystem, FAT, as Enter at the menu does.
    let text = given.iter().any(|a| a == "-t" || a == "--text");
    if text
        && !may_ask(given, args)
        && args.get(1).is_some_and(|a| a == "create")
        && !names(given, &["--filesystem"])
        && !names(args, &["--filesystem"])
        && !["-h", "--help"]
            .iter()
            .any(|h| given.iter().any(|a| a == h))
    {
        args.extend(["--filesystem".into(), "fat".into()]);
    }
    if may_ask(given, args) && args.get(1).is_some_and(|a| a == "create") {
        // The daemon reached before anything is asked, as `create` itself
        // reaches it: no answer typed in vain.
        reach_daemon(args)?;
        // VeraCrypt's `-k ""` (no keyfile) leaves nothing in `args`.
        create(args, names(given, KEYFILES))?;
        if !names(given, &["--stdin", "--password-stdin"]) {
            args.push("--ask-outer".into());
        }
    }
    if may_ask(given, args) && args.get(1).is_some_and(|a| a == "mount") {
        mount_questions(given, args);
    }
    // `-t -C`: the current keyfiles, and the new ones, asked as VeraCrypt
    // asks them (unless the line names them or reads standard input), and
    // a wrong current password said and asked again.
    if may_ask(given, args)
        && args.get(1).is_some_and(|a| a == "change-password")
        && !names(given, &["--stdin", "--password-stdin"])
    {
        if !names(given, KEYFILES) && !names(given, &["--new-keyfiles", "--new-keyfile"]) {
            args.push("--ask-keyfiles".into());
        }
        args.push("--ask-again".into());
    }
    // `-t --backup-headers`, `--restore-headers`, `--auto-mount devices`,
    // `--volume-properties`: the keyfiles after the password and PIM, as
    // a mount asks them.
    let asks_keyfiles = ["backup-header", "restore-header", "mount-devices", "info"];
    if may_ask(given, args)
        && args
            .get(1)
            .is_some_and(|a| asks_keyfiles.iter().any(|c| a == c))
        && !names(given, &["--stdin", "--password-stdin"])
        && !names(given, KEYFILES)
    {
        args.push("--ask-keyfiles".into());
    }
    // `--volume-properties`: a wrong password asked again, as a mount.
    if may_ask(given, args)
        && args.get(1).is_some_and(|a| a == "info")
        && !names(given, &["--stdin", "--password-stdin"])
    {
        args.push("--ask-again".into());
    }
    Ok(())
}

/// A `-t` mount: what VeraCrypt asks that its line leaves out, the mount
/// directory, then after the password and PIM the keyfiles and whether to
/// protect a hidden volume. `mount` asks them in that order, once its own
/// checks have passed.
fn mount_questions(given: &[OsString], args: &mut Vec<OsString>) {
    args.push("--ask-mount-point".into());
    let by_stdin = names(
        given,
        &["--stdin", "--password-stdin", "--cached", "--use-cached"],
    );
    if !by_stdin && !names(given, KEYFILES) {
        args.push("--ask-keyfiles".into());
    }
    if !by_stdin {
        args.push("--ask-again".into());
    }
    if !by_stdin && !names(given, &["--protect-hidden"]) {
        args.push("--ask-protection".into());
    }
}

/// After a parse that found required arguments missing: asks for each
/// one, adding the answers to `args`; false when it would not ask.
pub fn ask_missing(
    given: &[OsString],
    args: &mut Vec<OsString>,
    error: &clap::Error,
) -> Result<bool, Failure> {
    if !may_ask(given, args) || error.kind() != ErrorKind::MissingRequiredArgument {
        return Ok(false);
    }
    let missing = missing_names(error);
    let command = args
        .get(1)
        .and_then(|a| a.to_str())
        .unwrap_or_default()
        .to_owned();
    for name in &missing {
        match (command.as_str(), name.as_str()) {
            (_, "<VOLUME>") => {
                // A mount asks its folder itself, once the volume's checks
                // have passed.
                args.push(answer("Enter volume path: ", "no volume given")?.into());
            }
            // Asked once the password has opened the volume.
            // (BACKUP is required: `-` holds its place.)
            ("backup-header", "<BACKUP>") => {
                args.push("--ask-file".into());
                args.push("-".into());
            }
            ("restore-header", _) if name.contains("BACKUP") => restore_source(args)?,
            ("create-keyfile", "<PATH>") => {
                let file = answer("Enter the keyfile's path: ", "no keyfile path given")?;
                args.push(file.into());
            }
            _ => return Ok(false),
        }
    }
    Ok(!missing.is_empty())
}

/// The arguments clap found missing, as its usage names them (`<VOLUME>`).
fn missing_names(error: &clap::Error) -> Vec<String> {
    match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::Strings(names)) => names.clone(),
        Some(ContextValue::String(name)) => vec![name.clone()],
        _ => Vec::new(),
    }
}

/// `restore-header VOLUME` alone: which backup, as VeraCrypt asks.
fn restore_source(args: &mut Vec<OsString>) -> Result<(), Failure> {
    let pick = menu(
        "Restore the volume header from:",
        &[
            "the backup header embedded in the volume".to_owned(),
            "an external backup file".to_owned(),
        ],
        0,
    )?;
    if pick == 0 {
        args.push("--embedded".into());
    } else {
        let file = answer("Enter the backup file's path: ", "no backup file given")?;
        args.push(file.into());
    }
    Ok(())
}

/// `-t -c`'s questions, in VeraCrypt's order, for each choice not given.
fn create(args: &mut Vec<OsString>, keyfiles_given: bool) -> Result<(), Failure> {
    let words: Vec<String> = args.iter().map(|a| a.to_string_lossy().into()).collect();
    let has = |names: &[&str]| {
        words.iter().any(|w| {
            names
                .iter()
                .any(|n| w == n || w.strip_prefix(n).is_some_and(|r| r.starts_with('=')))
        })
    };
    let hidden = match has(&["--volume-type"]) {
        // `--volume-type hidden` or `--volume-type=hidden`.
        true => words.iter().any(|w| {
            let value = w.strip_prefix("--volume-type=").unwrap_or(w);
            value.eq_ignore_ascii_case("hidden")
        }),
        false => {
            let kinds = ["Normal".to_owned(), "Hidden".to_owned()];
            let hidden = menu("Volume type:", &kinds, 0)? == 1;
            if hidden {
                args.extend(["--volume-type".into(), "hidden".into()]);
            }
            hidden
        }
    };
    if volume_missing(args) {
        let path = match hidden {
            true => "Enter the outer volume's path: ",
            false => "Enter volume path: ",
        };
        args.push(checked(path, "no volume given", folder_exists)?.into());
    }
    // Something there already: asked now, as soon as the path is known,
    // not after every menu (create then asks no more).
    if !hidden && !has(&["--force", "--batch-mode"]) {
        confirm_overwrite(args)?;
    }
    if !has(&["--size"]) {
        let question = match hidden {
            true => "Enter hidden volume size (sizeK/size[M]/sizeG/sizeT): ",
            false => "Enter volume size (sizeK/size[M]/sizeG/sizeT/max): ",
        };
        let size = checked(question, "no size given", |typed| {
            // As VeraCrypt reads it: a bare number is in mebibytes.
            let size = match typed.bytes().all(|b| b.is_ascii_digit()) {
                true => format!("{typed}M"),
                false => typed.to_owned(),
            };
            if crate::input::parse_size(&size).is_err() {
                return Err(format!(
                    "{typed:?} is not a size: here a bare number is in MiB, as VeraCrypt reads \
                     it (5 is 5 MiB), or give its unit: K, M, G or T (binary units)"
                ));
            }
            crate::input::parse_create_size(&size).map(|_| size)
        })?;
        args.extend(["--size".into(), size.into()]);
    }
    // Enter takes VeraCrypt's default. The encryption menu keeps tcctl's
    // order (AES first, as VeraCrypt's); the hash and filesystem menus
    // number VeraCrypt's choices as VeraCrypt does, so a number typed or
    // piped by its users picks the same, tcctl's own choices after them.
    let given = |option| (option, has(&[option]));
    choose::<Encryption>(args, given("--encryption"), "Encryption algorithm:")?;
    pick(args, given("--hash"), "Hash algorithm:", HASHES, 0)?;
    pick(args, given("--filesystem"), "Filesystem:", FILESYSTEMS, 1)?;
    // Asked by `create` after the password and PIM, as VeraCrypt asks.
    if !keyfiles_given && !has(&["--keyfile", "-k", "--key-file"]) {
        args.push("--ask-keyfiles".into());
    }
    Ok(())
}

/// Reaches the daemon the command line names (`--socket`, `--session`,
/// `--system`, `$TCD_SOCKET`), as `main` picks it; its failure (exit 9
/// when there is none) ends the command.
fn reach_daemon(args: &[OsString]) -> Result<(), Failure> {
    let (mut socket, mut session, mut system) = (None, false, false);
    let mut words = args.iter().skip(1);
    while let Some(w) = words.next() {
        match w.to_string_lossy().as_ref() {
            "--" => break,
            "--session" => session = true,
            "--system" => system = true,
            "--socket" => socket = words.next().map(std::path::PathBuf::from),
            w => {
                if let Some(p) = w.strip_prefix("--socket=") {
                    socket = Some(p.into());
                }
            }
        }
    }
    let socket = socket.or_else(|| {
        std::env::var_os("TCD_SOCKET")
            .filter(|s| !s.is_empty())
            .map(std::path::PathBuf::from)
    });
    let at = crate::daemon_at(socket.as_deref(), session, system);
    crate::commands::volumes::listed_aside(at).map(|_| ())
}

/// A new volume's path whose folder is there.
fn folder_exists(typed: &str) -> Result<String, String> {
    let path = std::path::Path::new(typed);
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    match folder.is_dir() {
        true => Ok(typed.to_owned()),
        false => Err(format!("{}: no such folder", folder.display())),
    }
}

/// An answer `check` takes (its value), asked again with the reason
/// until it is; an empty one ends the command as cancelled.
fn checked(
    question: &str,
    nothing: &str,
    check: impl Fn(&str) -> Result<String, String>,
) -> Result<String, Failure> {
    let mut asked = question.to_owned();
    loop {
        match check(&answer(&asked, nothing)?) {
            Ok(value) => return Ok(value),
            Err(why) => asked = format!("{why}\n{question}"),
        }
    }
}

/// Whether the command line lacks the volume (clap says so).
/// Asks, as `create` asks, before an existing file or device named on
/// the create line `args` is written over; `--batch-mode` added once
/// confirmed.
fn confirm_overwrite(args: &mut Vec<OsString>) -> Result<(), Failure> {
    let volume = match Cli::read(args).map(|c| c.command) {
        Ok(crate::cli::Command::Create(a)) => a.volume,
        _ => return Ok(()),
    };
    if std::fs::symlink_metadata(&volume).is_err() {
        return Ok(());
    }
    // A folder is refused, not offered to be written over.
    crate::host::refuse_no_host(&volume)?;
    crate::input::confirm(
        true,
        &format!("{} exists", volume.display()),
        &format!(
            "WARNING: this overwrites everything in {} irrevocably. Are you sure? (Type 'YES' \
             in capital letters): ",
            volume.display()
        ),
        "--force",
    )?;
    args.push("--batch-mode".into());
    Ok(())
}

fn volume_missing(args: &[OsString]) -> bool {
    match Cli::read(args) {
        Err(e) => missing_names(&e).iter().any(|n| n == "<VOLUME>"),
        Ok(_) => false,
    }
}

/// Asks `title`'s menu of `V`'s listed values unless `given`, adding the
/// choice as `option value`.
fn choose<V: ValueEnum>(
    args: &mut Vec<OsString>,
    (option, given): (&str, bool),
    title: &str,
) -> Result<(), Failure> {
    if given {
        return Ok(());
    }
    let names: Vec<String> = V::value_variants()
        .iter()
        .filter_map(|v| v.to_possible_value())
        .filter(|p| !p.is_hide_set())
        .map(|p| p.get_name().to_owned())
        .collect();
    let pick = menu(title, &names, 0)?;
    args.extend([option.into(), names[pick].clone().into()]);
    Ok(())
}

/// VeraCrypt 1.26's hash menu (its label, tcctl's value), then tcctl's.
const HASHES: &[(&str, Hash)] = &[
    ("SHA-512", Hash::Sha512),
    ("SHA-256", Hash::Sha256),
    ("BLAKE2s-256", Hash::Blake2s),
    ("Whirlpool", Hash::Whirlpool),
    ("Streebog", Hash::Streebog),
    ("Argon2id", Hash::Argon2id),
    ("RIPEMD-160", Hash::Ripemd160),
];

/// VeraCrypt's filesystem menu (its label, tcctl's value), then tcctl's.
const FILESYSTEMS: &[(&str, NewFilesystem)] = &[
    ("None", NewFilesystem::None),
    ("FAT", NewFilesystem::Fat),
    ("Linux Ext2", NewFilesystem::Ext2),
    ("Linux Ext3", NewFilesystem::Ext3),
    ("Linux Ext4", NewFilesystem::Ext4),
    ("NTFS", NewFilesystem::Ntfs),
    ("exFAT", NewFilesystem::Exfat),
    ("Btrfs", NewFilesystem::Btrfs),
    ("XFS", NewFilesystem::Xfs),
];

/// Asks `title`'s menu of `items` unless `given`, adding the choice as
/// `option value`.
fn pick<V: ValueEnum + Copy>(
    args: &mut Vec<OsString>,
    (option, given): (&str, bool),
    title: &str,
    items: &[(&str, V)],
    default: usize,
) -> Result<(), Failure> {
    if given {
        return Ok(());
    }
    let labels: Vec<String> = items.iter().map(|(l, _)| (*l).to_owned()).collect();
    let chosen = items[menu(title, &labels, default)?].1;
    args.extend([option.into(), crate::cli::wire_name(chosen).into()]);
    Ok(())
}

/// A numbered menu on the terminal; Enter takes `default`. A wrong answer
/// is asked again.
fn menu(title: &str, items: &[String], default: usize) -> Result<usize, Failure> {
    let mut text = format!("{title}\n");
    for (i, item) in items.iter().enumerate() {
        text.push_str(&format!(" {}) {item}\n", i + 1));
    }
    text.push_str(&format!("Select [{}]: ", default + 1));
    loop {
        let typed = terminal_line(&text)?;
        if typed.is_empty() {
            return Ok(default);
        }
        match typed.trim().parse::<usize>() {
            Ok(n) if (1..=items.len()).contains(&n) => return Ok(n - 1),
            _ => {
                let which = match items.len() {
                    2 => "1 or 2".to_owned(),
                    n => format!("a number from 1 to {n}"),
                };
                text = format!("Incorrect selection: type {which}. Select: ");
            }
        }
    }
}

/// A non-empty answer; an empty one ends the command as cancelled.
fn answer(question: &str, nothing: &str) -> Result<String, Failure> {
    let typed = terminal_line(question)?;
    if typed.is_empty() {
        return Err(Failure {
            code: exit::CANCELLED,
            message: nothing.into(),
        });
    }
    Ok(typed)
}
