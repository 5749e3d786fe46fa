//! VeraCrypt's text-mode command line (`veracrypt -t ...`) read as tcctl's:
//! its commands (`-d`, `-l`, `-c`, `--create-keyfile`, ...) become tcctl's
//! subcommands, and its spellings that tcctl's own parser cannot take
//! (`-tc`, comma-separated keyfiles, `--protect-hidden=yes|no`) become
//! tcctl's options, so a VeraCrypt user's scripts carry over. Spellings
//! clap can take are aliases in `cli.rs`. cryptsetup's spellings for
//! TrueCrypt volumes are listed here too, for the manual page.

use crate::bus::{Failure, exit};
use std::ffi::OsString;

/// VeraCrypt's spellings and what tcctl does with them, for the manual
/// page (docs/VERACRYPT.md has the same rows).
pub const SPELLINGS: &[(&str, &str)] = &[
    (
        "-t, --text",
        "taken first (or after the global options): the command line is read as VeraCrypt's; without a command it mounts. On a terminal (without --non-interactive) what the line leaves out is asked: the volume and its mount directory (not with --filesystem none; and after the password and PIM, keyfiles and whether to protect a hidden volume; a wrong password is said and all of it asked again), with -c each choice of the new volume, with --backup-headers the file",
    ),
    (
        "-h, --help",
        "with -t and no command, this list; after a command, that command's options",
    ),
    ("VOLUME [MOUNT_DIRECTORY], --mount", "mount"),
    (
        "-c, --create",
        "create; with -t on a terminal, once the daemon is reached (none: exit 9 before any question), the volume type, path, size (a bare number is MiB), encryption, hash and filesystem not given are asked in turn (the hash and filesystem menus numbered as VeraCrypt's, tcctl's own choices after them; Enter: AES, SHA-512, FAT), then the password, PIM and keyfiles (an empty password takes keyfiles; with none it is refused); for a hidden volume the outer volume's password, PIM and keyfiles come first, and an outer volume that holds a hidden volume already is refused once it opens (seen by the end of the outer volume being in use, or, for one an expand moved off the end, by the new password opening it; one under another password is unseen, as hiding it means, and a new one overwrites its header, as in VeraCrypt)",
    ),
    (
        "--volume-type normal|hidden",
        "create: hidden makes a hidden volume of --size in the existing outer volume (--hidden-size), whose password comes first (with --stdin, its line, then the hidden one's); other commands refuse normal and hidden (a hidden volume opens with its own password)",
    ),
    (
        "--volume-type veracrypt|truecrypt",
        "the format: --format (the old spelling)",
    ),
    ("-tc, --truecrypt", "--format truecrypt"),
    (
        "--encryption, --hash, --filesystem, --size, --pim, --quick",
        "the same options; VeraCrypt's value names in any case, a cascade also as VeraCrypt displays it (AES(Twofish(Serpent))), sizes with K, KiB, M, MiB, G, GiB, T, TiB",
    ),
    ("-m ro, -m readonly", "--readonly"),
    (
        "-m headerbak",
        "open the volume by its backup header only (mount, and info for its header)",
    ),
    (
        "-m ts, -m timestamp, -m nokernelcrypto",
        "ts: --no-preserve-timestamps, the container file's times are not put back at dismount (its modification time stays that of its last write); nokernelcrypto: accepted, tcd never uses the kernel's crypto",
    ),
    (
        "-m system",
        "--system-encryption: a system-encrypted drive or partition, read-only unless --read-write",
    ),
    (
        "--slot N",
        "the volume's slot, kept until it is dismounted; refused while another of yours holds it (without --slot: the lowest free one). Without a mount folder: mount on /run/media/$USER/veracryptN. With -d or -l: the volume in that slot (dismount --slot, status --slot)",
    ),
    (
        "--fs-options OPTIONS",
        "mount --fs-options: only uid=, gid= (your own; root: any), umask=, fmask=, dmask= (FAT, exFAT, NTFS; a mask not given is 077; FAT through fusefat: umask= only), noatime, noexec, and nosuid, nodev (always on, given or not)",
    ),
    ("--non-interactive", "--non-interactive"),
    ("--stdin", "--password-stdin"),
    (
        "-p, --password, --new-password, --protection-password, --token-pin",
        "refused: no password on the command line",
    ),
    (
        "-k A,B, --keyfiles A,B, --new-keyfiles A,B",
        "--keyfile A --keyfile B (,, is a comma in a name; -k \"\" none)",
    ),
    ("--protect-hidden yes|no", "--protect-hidden, or nothing"),
    (
        "--protection-pim N",
        "--protect-hidden-pim N: the hidden volume's PIM",
    ),
    (
        "--random-source /dev/urandom|/dev/random",
        "taken and passed over: tcd reads the kernel's random source itself; another file is refused",
    ),
    (
        "--wipe-cache",
        "wipe-cache: the passwords mount --cache kept are forgotten",
    ),
    (
        "--list-token-keyfiles, --list-securitytoken-keyfiles",
        "token list",
    ),
    (
        "--import-token-keyfiles, --delete-token-keyfiles",
        "refused, naming the command that does it: token import FILE, token delete KEYFILE",
    ),
    (
        "-p \"\", --password=",
        "the empty password: keyfiles open the volume alone, nothing is asked; without a keyfile it opens nothing and fails at once as a wrong password",
    ),
    (
        "--protection-hash HASH",
        "taken and passed over: the hidden volume's header is searched over every PRF (an unknown name is refused)",
    ),
    (
        "--display-password, --save-preferences, --load-preferences, --background-task, --no-size-check, --use-dummy-sudo-password, --export-token-keyfile, --list-emvtoken-keyfiles",
        "refused, saying why: tcctl never shows a password, keeps no preferences (favorites keep a volume's settings), has no background task to start (the daemon is one), always checks that a new volume fits, never runs sudo (the daemon does what needs root), reads a token's keyfile where it lies, and reads no EMV card",
    ),
    (
        "--allow-insecure-mount, --use-legacy-password-maximum-length",
        "taken and passed over: a volume is never mounted on a system folder, only on a folder of the user's or under /run/media; a password of up to 64 bytes is read as VeraCrypt before 1.26 read it, a longer one (up to 128) as 1.26 does",
    ),
    (
        "--protection-keyfiles A,B",
        "--protect-hidden-keyfile A --protect-hidden-keyfile B: the hidden volume's keyfiles",
    ),
    (
        "--create-keyfile FILE",
        "create-keyfile FILE: 64 random bytes, mode 0600, never over a file",
    ),
    (
        "--auto-mount favorites",
        "favorites mount --all: every favorite, each in its slot",
    ),
    (
        "--auto-mount devices",
        "mount-devices: the password tried on every unused device you may open",
    ),
    (
        "--volume-properties VOLUME, --test VOLUME",
        "info VOLUME: the header, read with the password, nothing mounted; --volume-properties of a mounted volume is status VOLUME (--slot N: status --slot N), with no password; with no volume, every mounted volume's",
    ),
    (
        "--test",
        "self-test: every cipher and hash against its test vectors",
    ),
    ("--explore", "mount --explore: xdg-open on the mount point"),
    (
        "--force with -c",
        "create --force: overwrite an existing file or device without asking, as -q (--batch-mode); also takes a password under 8 characters, or under 20 with a PIM under 485 (with a warning); without it, a password under 12 characters typed on a terminal is asked about (one from standard input is refused under 8), as VeraCrypt asks (y takes it; n asks for another, and change-password leaves the password unchanged). With a mount, --force is taken and passed over",
    ),
    (
        "-d, -u, --dismount, --unmount [VOLUME]",
        "dismount VOLUME, or without one dismount --all; -f is --force; --slot N: the volume in slot N; --dismount=VOLUME names it too; tcctl's dismount is also spelled unmount and umount",
    ),
    (
        "-l, --list",
        "VeraCrypt's lines, SLOT: VOLUME DEVICE MOUNT POINT in slot order (a path with a space quoted as VeraCrypt does; a volume detaching after a forced dismount has none), exit 1 when none is mounted; -l VOLUME and -l --slot N print that volume's line alone (exit 1 when it is not mounted); --json: list --json (a volume named: status --json), exit 1 as the lines; -v (anywhere) adds nothing",
    ),
    (
        "-C, --change",
        "change-password; with -t on a terminal the current keyfiles are asked, then the new PIM (unless --new-pim), then whether to keep the keyfiles (or new ones); a wrong current password is said and asked again",
    ),
    (
        "--new-hash HASH, --new-pim N",
        "with -C: change-password --new-hash, --new-pim: the new header's hash (PRF) and PIM (0: the default iterations); without them the volume keeps its own",
    ),
    (
        "--backup-headers VOLUME FILE, --restore-headers VOLUME FILE",
        "backup-header, restore-header; with -t on a terminal the file is asked for (--restore-headers VOLUME alone asks: the embedded backup, or a file)",
    ),
];

/// cryptsetup's spellings for TrueCrypt and VeraCrypt volumes and what
/// tcctl does with them, for the manual page (docs/VERACRYPT.md has the
/// same rows).
pub const CRYPTSETUP_SPELLINGS: &[(&str, &str)] = &[
    (
        "open, tcryptOpen",
        "mount; a password piped in is read as with --password-stdin (tcryptDump too)",
    ),
    ("close", "dismount"),
    ("tcryptDump", "dump"),
    (
        "--dump-volume-key, --dump-master-key",
        "dump --dump-master-key: root only, after YES is typed (or with -q, --batch-mode)",
    ),
    (
        "-M, --type tcrypt",
        "taken and passed over: tcctl opens TrueCrypt and VeraCrypt volumes only (another type is refused)",
    ),
    (
        "--veracrypt",
        "taken and passed over: VeraCrypt volumes are always searched",
    ),
    ("--veracrypt-pim N", "--pim N"),
    (
        "--veracrypt-query-pim",
        "the PIM is asked at the prompt (without it, open, tcryptOpen and tcryptDump ask only for the passphrase, as cryptsetup does); with --password-stdin, read on the line after the password (create refuses it: it takes --pim)",
    ),
    (
        "--disable-veracrypt",
        "--truecrypt: TrueCrypt's format only",
    ),
    (
        "--tcrypt-hidden",
        "only a hidden volume's headers are searched: its own password opens it, the outer volume's opens nothing",
    ),
    (
        "--tcrypt-system",
        "--system-encryption; on open and tcryptOpen read/write unless -r, as cryptsetup maps it (tcctl's own mount: read-only unless --read-write), with a warning",
    ),
    ("--tcrypt-backup", "-m headerbak: the backup header only"),
    (
        "-T N, --tries N",
        "on open (and open --test-passphrase, tcryptDump), a password typed on the terminal is asked N times in all before the wrong password's exit code (2); 3 without it, as cryptsetup asks; 0 asks until it opens. A password piped in is read once",
    ),
    (
        "--allow-discards",
        "mount --discard: discards (TRIM) are passed down, and status says flags: discards",
    ),
    (
        "-v, --verbose, --debug",
        "taken and passed over on cryptsetup's lines (close and status too): tcctl says what it does anyway, and the daemon's log (journalctl -u tcd) has the rest",
    ),
    (
        "OPTIONS ACTION",
        "cryptsetup's options before its action (open, tcryptOpen, tcryptDump, close, status) are taken as after it, and its short options as its parser takes them: a value attached (-T1, -dFILE, -Mtcrypt) and flags grouped (-rq); tcctl's global options (--socket, --system, --session, --notify, --non-interactive, --token-lib) stay where they are",
    ),
    (
        "-q, --batch-mode",
        "taken and passed over on open, which asks nothing to confirm; tcryptDump takes it (see --dump-volume-key)",
    ),
    ("-r, --read-only", "mount --readonly"),
    (
        "open --test-passphrase",
        "info, printing nothing: the password checked (exit 0, or 2 when wrong), nothing mounted",
    ),
    (
        "-d FILE, --key-file FILE",
        "--keyfile FILE (on a line in cryptsetup's words: open, tcryptOpen, tcryptDump, close, status or --type); a folder is taken as VeraCrypt takes one, with a note",
    ),
    (
        "open --type tcrypt VOLUME NAME",
        "NAME, the mapping name, is not kept: said, and the volume attached as a loop device only, as cryptsetup maps it unmounted (a folder's path with a slash, such as ./mnt, mounts it there); close NAME and status NAME say so",
    ),
];

/// A VeraCrypt command option and the tcctl subcommand it becomes.
const COMMANDS: &[(&[&str], &[&str])] = &[
    (&["-c", "--create"], &["create"]),
    (&["-C", "--change"], &["change-password"]),
    (&["-d", "-u", "--dismount", "--unmount"], &["dismount"]),
    (&["-l", "--list"], &["list"]),
    (&["--mount"], &["mount"]),
    (&["--create-keyfile"], &["create-keyfile"]),
    (&["--backup-headers"], &["backup-header"]),
    (&["--restore-headers"], &["restore-header"]),
    (&["--volume-properties"], &["info", "--mounted-status"]),
    (&["--test"], &["info"]),
    (&["--wipe-cache"], &["wipe-cache"]),
    (
        &["--list-token-keyfiles", "--list-securitytoken-keyfiles"],
        &["token", "list"],
    ),
];

/// tcctl's own subcommands: a command line naming one first is tcctl's.
const SUBCOMMANDS: &[&str] = &[
    "mount",
    "open",
    "tcryptOpen",
    "dismount",
    "unmount",
    "umount",
    "close",
    "list",
    "info",
    "create",
    "change-password",
    "backup-header",
    "restore-header",
    "wipe-cache",
    "favorites",
    "watch",
    "backends",
    "policy",
    "benchmark",
    "create-keyfile",
    "status",
    "dump",
    "tcrypt-dump",
    "tcryptDump",
    "expand",
    "monitor",
    "token",
    "self-test",
    "mount-devices",
    "help",
];

/// What bash completes after `-t`: the options of VeraCrypt's text mode
/// taken here (each spelling of [`SPELLINGS`] not refused).
pub fn text_mode_words() -> Vec<&'static str> {
    let mut words: Vec<&str> = SPELLINGS
        .iter()
        .flat_map(|(tag, _)| tag.split(", "))
        .filter_map(|t| t.split([' ', '=']).next())
        .filter(|w| w.starts_with('-') && !["-t", "--text"].contains(w))
        .filter(|w| !ON_THE_COMMAND_LINE.contains(w) && !NOT_TAKEN.iter().any(|(n, _)| n == w))
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// The option words of cryptsetup's spellings, for completion.
pub fn cryptsetup_option_words(dump: bool) -> Vec<&'static str> {
    // The options of one command alone are offered on it alone.
    let other_commands: &[&str] = match dump {
        true => &["--test-passphrase", "--allow-discards", "-r", "--read-only"],
        false => &["--dump-volume-key", "--dump-master-key"],
    };
    let mut words: Vec<&str> = CRYPTSETUP_SPELLINGS
        .iter()
        .flat_map(|(tag, _)| tag.split([',', ' ', '=']))
        .filter(|w| w.starts_with('-') && !other_commands.contains(w))
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

/// Options that put a secret on the command line, where every local user
/// can read it in the process list.
const ON_THE_COMMAND_LINE: &[&str] = &[
    "-p",
    "--password",
    "--new-password",
    "--protection-password",
    "--token-pin",
];

fn usage(message: String) -> Failure {
    Failure {
        code: exit::USAGE,
        message,
    }
}

/// `tcctl -t -h` with no command: VeraCrypt's spellings and what each
/// does here, as `veracrypt -t -h` lists its options; `None` for any other
/// command line.
pub fn text_mode_help(args: &[OsString]) -> Option<String> {
    if text_mode_help_asked(args) != Some(false) {
        return None;
    }
    let mut out = String::from(
        "tcctl -t: VeraCrypt's text-mode command line, read as tcctl's\n\n\
         Usage: tcctl -t [OPTIONS] [VOLUME] [MOUNT_DIRECTORY]\n       \
         tcctl -t COMMAND [OPTIONS]   (-c, -d, -l, -C, --backup-headers, ...)\n\n\
         Each VeraCrypt spelling, and what tcctl does with it (tcctl -t -c -h and\n\
         the like show the options of each command; tcctl -h shows tcctl's own):\n",
    );
    for (spelling, meaning) in SPELLINGS {
        out.push_str(&format!("\n  {spelling}\n"));
        let mut line = String::from("      ");
        for word in meaning.split_whitespace() {
            if line.len() + word.len() > 78 && !line.trim().is_empty() {
                out.push_str(line.trim_end());
                out.push('\n');
                line = String::from("      ");
            }
            line.push_str(word);
            line.push(' ');
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    Some(out)
}

/// Help asked on a `-t` line: `Some(true)` after one of its commands (-c,
/// -C, ...), `Some(false)` with none; `None`: no help asked on a `-t` line.
fn text_mode_help_asked(args: &[OsString]) -> Option<bool> {
    let words: Vec<&str> = args.iter().skip(1).filter_map(|a| a.to_str()).collect();
    let text = words
        .iter()
        .take_while(|w| !SUBCOMMANDS.contains(*w))
        .any(|w| matches!(*w, "-t" | "--text"));
    let help = words.iter().any(|w| matches!(*w, "-h" | "--help"));
    let command = words.iter().any(|w| {
        let name = w.split_once('=').map_or(*w, |(n, _)| n);
        SUBCOMMANDS.contains(&name)
            || name == "--auto-mount"
            || COMMANDS.iter().any(|(names, _)| names.contains(&name))
    });
    (text && help).then_some(command)
}

/// `tcctl -t COMMAND -h`: said before the help of the tcctl command the
/// line becomes, whose options are tcctl's spellings.
pub fn text_mode_command_help_note(args: &[OsString]) -> Option<String> {
    if text_mode_help_asked(args) != Some(true) {
        return None;
    }
    // VeraCrypt's default filesystem, where the help below says tcctl's.
    let create = args.iter().any(|a| a == "-c" || a == "--create");
    Some(format!(
        "On a -t line, VeraCrypt's spellings are read too (--stdin, -k A,B,\n\
         --volume-type, ...): `tcctl -t -h` lists each and what it becomes.\n{}\
         Below, the help of the tcctl command this line becomes.\n\n",
        match create {
            true => "Without --filesystem, a -t -c line makes FAT, as VeraCrypt does.\n",
            false => "",
        }
    ))
}

/// Whether `given` (the program's name first) is in VeraCrypt's text mode:
/// `-t` or `--text` before any tcctl subcommand.
pub fn text_mode_line(given: &[OsString]) -> bool {
    given
        .iter()
        .skip(1)
        .take_while(|w| !w.to_str().is_some_and(|w| SUBCOMMANDS.contains(&w)))
        .any(|w| w == "-t" || w == "--text")
}

/// What an option of a VeraCrypt text-mode line that the command does not
/// take is told: a second command (VeraCrypt runs one at a time), an
/// option of another command, or one VeraCrypt's text mode never had.
pub fn misplaced_option(given: &[OsString], arg: &str) -> String {
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    let is_command = |w: &str| w == "--auto-mount" || COMMANDS.iter().any(|(c, _)| c.contains(&w));
    let command = given
        .iter()
        .filter_map(|w| w.to_str())
        .map(|w| w.split_once('=').map_or(w, |(n, _)| n))
        .find(|w| *w != name && is_command(w));
    let known = SPELLINGS.iter().any(|(spelled, _)| {
        spelled
            .split([',', ' ', '|'])
            .any(|w| w.starts_with('-') && w == name)
    });
    match command {
        Some(first) if is_command(name) => format!(
            "{first} and {name} are two commands: VeraCrypt's text mode runs one at a time \
             (`tcctl -t -h` lists them)"
        ),
        Some(first) if known => format!(
            "{name} does not go with {first} (`tcctl -t {first} -h` lists the options it takes)"
        ),
        _ if known => format!(
            "{name} does not go with mounting, the command of a line without one (`tcctl -t -h` \
             lists each command's options)"
        ),
        _ => format!(
            "{arg}: no such option of VeraCrypt's text mode here (`tcctl -t -h` lists the ones \
             taken)"
        ),
    }
}

/// `args` (the program's name first) as tcctl's parser takes them.
pub fn translate(args: Vec<OsString>) -> Result<Vec<OsString>, Failure> {
    let mut words: Vec<String> = Vec::with_capacity(args.len());
    for a in &args {
        match a.to_str() {
            Some(s) => words.push(s.to_owned()),
            // Not UTF-8: a path; nothing to translate, clap reads it.
            None => return Ok(args),
        }
    }
    let program = words.remove(0);
    // VeraCrypt wants -t first; here it may follow the global options,
    // and said twice (`-t --text`) it is still the one flag.
    let before_command = words
        .iter()
        .position(|w| SUBCOMMANDS.contains(&w.as_str()))
        .unwrap_or(words.len());
    let mut at = 0;
    let mut text = false;
    words.retain(|w| {
        at += 1;
        let flag = at <= before_command && (w == "-t" || w == "--text");
        text |= flag;
        !flag
    });
    if !text {
        cryptsetup_options_first(&mut words);
        udisks_words(&mut words);
        umount_words(&mut words);
    }
    if !text && cryptsetup_line(&words) {
        cryptsetup_words(&mut words);
    }
    if !text {
        test_passphrase_words(&mut words);
    }
    let command = command_of(&words, text)?;
    let mut out = vec![program];
    if let Some((at, sub)) = command {
        out.extend(sub.iter().map(|s| (*s).to_owned()));
        if let Some(at) = at {
            let inline = words[at]
                .split_once('=')
                .map(|(_, v)| v.to_owned())
                .filter(|_| !words[at].starts_with("--auto-mount"));
            match inline {
                // `--dismount=VOLUME`: the value is the command's volume,
                // never dropped (a dismount without one dismounts all).
                Some(value) => words[at] = value,
                None => {
                    // `--auto-mount favorites`: the option and its value.
                    let n = if words[at] == "--auto-mount" { 2 } else { 1 };
                    words.drain(at..(at + n).min(words.len()));
                }
            }
        }
    }
    // VeraCrypt's --force on a mount: nothing in tcd's mount waits for it.
    if command.is_some_and(|(_, sub)| sub == ["mount"]) {
        words.retain(|w| w != "--force");
    }
    out.extend(spellings(words, command.is_some())?);
    if command.is_some_and(|(_, sub)| sub == ["dismount"]) {
        dismount_all_without_target(&mut out);
    }
    if command.is_some_and(|(_, sub)| sub == ["list"]) {
        list_forms(&mut out);
    }
    // `--volume-properties --slot N`: the mounted volume in that slot;
    // with no volume, every mounted one, as VeraCrypt shows them.
    if command.is_some_and(|(_, sub)| sub == ["info", "--mounted-status"]) {
        if out
            .iter()
            .any(|w| w == "--slot" || w.starts_with("--slot="))
        {
            out.splice(1..3, ["status".to_owned()]);
        } else if !names_a_volume(&out) {
            out.splice(1..3, ["status".to_owned(), "--every".to_owned()]);
        }
    }
    // VeraCrypt's `--test` alone runs its algorithm self-tests.
    if command.is_some_and(|(_, sub)| sub == ["info"]) && !names_a_volume(&out) {
        out[1] = "self-test".into();
    }
    Ok(out.into_iter().map(OsString::from).collect())
}

/// udisksctl's words, for the manual page (docs/VERACRYPT.md has the
/// same rows).
pub const UDISKS_SPELLINGS: &[(&str, &str)] = &[
    (
        "unlock",
        "mount --filesystem none: the block device only, as udisks unlocks without mounting, \
         said as udisksctl says it (Unlocked VOLUME as DEVICE.); mount -b DEVICE then mounts its \
         filesystem without a password",
    ),
    (
        "lock",
        "dismount of a volume attached as its block device alone (Locked VOLUME.); one whose \
         filesystem is mounted is refused (exit 5), as udisks refuses to lock a device in use: \
         unmount -b DEVICE first",
    ),
    (
        "unmount -b DEVICE, umount -b DEVICE",
        "dismount --filesystem-only DEVICE: the filesystem unmounted, the volume still attached \
         as DEVICE, as udisksctl unmounts before it locks; mount -b DEVICE mounts it again, \
         lock detaches it (unmount without -b dismounts the volume)",
    ),
    (
        "-b DEVICE, --block-device DEVICE",
        "DEVICE as the command's argument",
    ),
    (
        "--key-file FILE",
        "with unlock: the passphrase is FILE's first line, read as --password-stdin reads standard input (on cryptsetup's open, --key-file stays a keyfile)",
    ),
    (
        "--no-user-interaction",
        "--non-interactive: nothing is asked",
    ),
    (
        "-o OPTIONS, --options OPTIONS",
        "with mount -b: --fs-options OPTIONS",
    ),
    (
        "-p OBJECT, --object-path OBJECT",
        "not taken, and said so (exit 64): the device is named by -b DEVICE, or the volume by \
         its file or mount point",
    ),
    (
        "loop-setup, loop-delete",
        "not needed, and said so (exit 64): tcd opens a container file itself (unlock -b FILE \
         attaches it) and detaches the loop devices it made",
    ),
];

/// udisksctl's habits: `unlock` is mount of the device only (udisks
/// unlocks without mounting) and `lock` dismount, `unmount -b DEVICE`
/// unmounts the filesystem alone (udisks' lock follows it), and
/// `-b DEVICE` (or `--block-device`) names the volume as tcctl's argument
/// does.
fn udisks_words(words: &mut Vec<String>) {
    let block = words
        .iter()
        .any(|w| w == "-b" || w == "--block-device" || w.starts_with("--block-device="));
    // Only udisksctl's line: tcctl's own `unmount VOLUME` dismounts it.
    let unmount = words
        .iter()
        .position(|w| SUBCOMMANDS.contains(&w.as_str()))
        .filter(|&i| block && (words[i] == "unmount" || words[i] == "umount"));
    if let Some(i) = unmount {
        words[i] = "dismount".into();
        words.insert(i + 1, "--filesystem-only".into());
    }
    let command = words
        .iter()
        .take_while(|w| !SUBCOMMANDS.contains(&w.as_str()))
        .position(|w| w == "unlock" || w == "lock");
    let block = words
        .iter()
        .any(|w| w == "-b" || w == "--block-device" || w.starts_with("--block-device="));
    if command.is_some() || block {
        let unlock = command.is_some_and(|i| words[i] == "unlock");
        udisks_options(words, unlock);
    }
    // mount -b's -t TYPE: tcd mounts the filesystem it finds there.
    if block && words.iter().any(|w| w == "mount") {
        drop_options(words, &["-t", "--filesystem-type"]);
    }
    if let Some(i) = command {
        // Said as udisksctl says it; a lock refuses a mounted filesystem.
        if words[i] == "lock" {
            words[i] = "dismount".into();
            words.insert(i + 1, "--udisks-lock".into());
        } else {
            words[i] = "mount".into();
            words.insert(i + 1, "--udisks-unlock".into());
            if !words.iter().any(|w| w.starts_with("--filesystem")) {
                words.extend(["--filesystem".into(), "none".into()]);
            }
        }
    }
    let mut i = 0;
    while i < words.len() {
        if words[i] == "-b" || words[i] == "--block-device" {
            // Its value stays, as the command's argument.
            words.remove(i);
            continue;
        }
        if let Some(v) = words[i].strip_prefix("--block-device=") {
            words[i] = v.to_owned();
        }
        i += 1;
    }
}

/// umount(8)'s -l (--lazy) on tcctl's `umount` and `unmount`: --force,
/// which takes the filesystem off its mount point at once, as umount -l
/// does (and detaches the volume when its users let go). umount's -lf,
/// -fl, -l -f and -lv (its -v passed over) are the same, said once.
fn umount_words(words: &mut Vec<String>) {
    let unmount = words
        .iter()
        .find(|w| SUBCOMMANDS.contains(&w.as_str()))
        .is_some_and(|c| c == "umount" || c == "unmount");
    if !unmount {
        return;
    }
    // umount's short options, bundled as it takes them (-lf, -lv, -av):
    // -l and -f force, -a is every volume tcd has, -v is passed over
    // (tcctl says what it did anyway).
    let letters = |w: &str| {
        w.strip_prefix('-')
            .filter(|l| !l.is_empty() && l.chars().all(|c| matches!(c, 'l' | 'f' | 'v' | 'a')))
            .map(str::to_owned)
    };
    let (mut force, mut all) = (false, false);
    // Where the first of them stood: tcctl's options go there.
    let mut at = None;
    let mut kept = Vec::with_capacity(words.len());
    for w in words.drain(..) {
        match letters(&w) {
            Some(l) => {
                force |= l.contains(['l', 'f']);
                all |= l.contains('a');
            }
            None if w == "--verbose" => {}
            None if matches!(w.as_str(), "--lazy" | "--force") => force = true,
            None if w == "--all" => all = true,
            None => {
                kept.push(w);
                continue;
            }
        }
        at.get_or_insert(kept.len());
    }
    let flags = [(force, "--force"), (all, "--all")]
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, f)| f.to_owned());
    let at = at.unwrap_or(kept.len());
    kept.splice(at..at, flags);
    *words = kept;
}

/// udisksctl's options on its lines: --no-user-interaction is
/// --non-interactive, -o and --options mount's --fs-options, and unlock's
/// --key-file FILE holds the passphrase (cryptsetup's --key-file is a
/// keyfile).
fn udisks_options(words: &mut [String], unlock: bool) {
    for w in words.iter_mut() {
        let (name, value) = match w.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (w.clone(), None),
        };
        let new = match name.as_str() {
            "--no-user-interaction" => "--non-interactive",
            "-o" | "--options" => "--fs-options",
            "--key-file" if unlock => "--password-file",
            _ => continue,
        };
        *w = match value {
            Some(v) => format!("{new}={v}"),
            None => new.to_owned(),
        };
    }
}

/// cryptsetup's `open --test-passphrase`: the password checked, nothing
/// mapped, as info checks it. Only after the command (cryptsetup's
/// options before it have moved there): before tcctl's own, clap names
/// the word typed.
fn test_passphrase_words(words: &mut [String]) {
    let Some(at) = words.iter().position(|w| w == "--test-passphrase") else {
        return;
    };
    let opening = words
        .iter()
        .position(|w| ["open", "tcryptOpen", "mount"].contains(&w.as_str()));
    if let Some(i) = opening.filter(|&i| i < at) {
        words[at] = "--check-only".into();
        words[i] = "info".into();
    }
}

/// cryptsetup's actions that tcctl takes by their names.
const CRYPTSETUP_ACTIONS: &[&str] = &[
    "open",
    "tcryptOpen",
    "tcryptDump",
    "tcrypt-dump",
    "close",
    "status",
];

/// cryptsetup takes its options before the action too (`cryptsetup
/// --test-passphrase tcryptOpen VOL`): those before one of its actions
/// are moved after it, where tcctl's parser reads a command's options.
/// tcctl's own global options (and their values) stay where they are.
fn cryptsetup_options_first(words: &mut Vec<String>) {
    let Some(at) = words.iter().position(|w| SUBCOMMANDS.contains(&w.as_str())) else {
        return;
    };
    if !CRYPTSETUP_ACTIONS.contains(&words[at].as_str()) {
        return;
    }
    let (mut kept, mut moved) = (Vec::new(), Vec::new());
    let mut before = words.drain(..at).peekable();
    while let Some(w) = before.next() {
        let name = w.split_once('=').map_or(w.as_str(), |(n, _)| n);
        let global = GLOBAL_OPTIONS.contains(&name);
        let valued = GLOBAL_VALUED.contains(&w.as_str());
        let target = if global || valued {
            &mut kept
        } else {
            &mut moved
        };
        target.push(w);
        if valued && let Some(value) = before.next() {
            kept.push(value);
        }
    }
    drop(before);
    let action = words.remove(0);
    let rest = std::mem::take(words);
    words.extend(kept);
    words.push(action);
    words.extend(moved);
    words.extend(rest);
}

/// tcctl's global options, taken before the command.
const GLOBAL_OPTIONS: &[&str] = &[
    "--socket",
    "--session",
    "--system",
    "--notify",
    "--non-interactive",
    "--empty-password",
    "--token-lib",
];

/// Those of them whose value is the next word.
const GLOBAL_VALUED: &[&str] = &["--socket", "--token-lib"];

/// A command line in cryptsetup's words: one of its actions (`open`,
/// `tcryptOpen`, `tcryptDump`, `close`, `status`), or `--type` (tcrypt,
/// the one tcctl takes).
fn cryptsetup_line(words: &[String]) -> bool {
    let command = words.iter().find(|w| SUBCOMMANDS.contains(&w.as_str()));
    command.is_some_and(|c| CRYPTSETUP_ACTIONS.contains(&c.as_str()))
        || words
            .iter()
            .any(|w| w == "--type" || w == "-M" || w.starts_with("--type="))
}

/// cryptsetup's options on its own lines: `-d` is its --key-file
/// (VeraCrypt's -d dismounts), `-T` its --tries, `-M` its --type, close's
/// `--deferred` a forced dismount; -v,
/// --verbose and --debug ask for what tcctl says anyway (the daemon's log
/// has the rest); -q, --batch-mode confirm nothing where nothing is asked
/// (dump takes it); no PIM is asked without --veracrypt-query-pim.
fn cryptsetup_words(words: &mut Vec<String>) {
    crate::input::set_cryptsetup_line();
    *words = words.drain(..).flat_map(short_options_apart).collect();
    let dump = words
        .iter()
        .any(|w| ["tcryptDump", "tcrypt-dump", "dump"].contains(&w.as_str()));
    words.retain(|w| {
        !matches!(w.as_str(), "-v" | "--verbose" | "--debug")
            && (dump || !matches!(w.as_str(), "-q" | "--batch-mode"))
    });
    for w in words.iter_mut() {
        match w.as_str() {
            "-d" => *w = "--keyfile".into(),
            "-T" => *w = "--tries".into(),
            "-M" => *w = "--type".into(),
            // close's "removed once its last user lets go": tcd's
            // forced dismount, which leaves it detaching until then.
            "--deferred" => *w = "--force".into(),
            _ => {}
        }
    }
    // cryptsetup asks only for the passphrase, a PIM only when told to.
    let opening = words
        .iter()
        .position(|w| ["open", "tcryptOpen", "tcryptDump", "tcrypt-dump"].contains(&w.as_str()));
    let query = words
        .iter()
        .any(|w| w == "--veracrypt-query-pim" || w.starts_with("--veracrypt-query-pim="));
    if let Some(i) = opening.filter(|_| !query) {
        words.insert(i + 1, "--no-pim-question".into());
    }
}

/// cryptsetup's short options as its parser takes them, apart: a value
/// attached (`-T1`, `-dFILE`, `-Mtcrypt`) and flags grouped (`-rq`).
fn short_options_apart(w: String) -> Vec<String> {
    let Some(rest) = w
        .strip_prefix('-')
        .filter(|r| !r.starts_with('-') && r.len() > 1)
    else {
        return vec![w];
    };
    let mut letters = rest.chars();
    match letters.next() {
        Some(c @ ('T' | 'd' | 'M')) => vec![format!("-{c}"), letters.as_str().to_owned()],
        _ if rest.chars().all(|c| matches!(c, 'r' | 'q' | 'v')) => {
            rest.chars().map(|c| format!("-{c}")).collect()
        }
        _ => vec![w],
    }
}

/// cryptsetup's habits on its `open` line, once read: a password piped in
/// is read (as cryptsetup reads a standard input that is no terminal), and
/// a second argument that is no folder's path is its mapping name, which
/// tcd has no use for: the volume is attached as a loop device only, as
/// cryptsetup maps it without mounting.
pub fn cryptsetup_open(given: &[OsString], cli: &mut crate::cli::Cli) {
    let words: Vec<String> = given
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    if !cryptsetup_line(&words) {
        return;
    }
    use crate::cli::Command;
    let secrets = match &mut cli.command {
        Command::Mount(a) => &mut a.secrets,
        Command::Info(a) => &mut a.secrets,
        Command::Dump(a) => &mut a.info.secrets,
        _ => return,
    };
    let piped = !std::io::IsTerminal::is_terminal(&std::io::stdin());
    let keyfile_piped = secrets.keyfiles.iter().any(|k| k.as_os_str() == "-");
    if piped && !keyfile_piped {
        secrets.password_stdin = true;
    }
    // (A password typed on the terminal is asked 3 times, as cryptsetup
    // asks, unless --tries says otherwise; one read from standard input,
    // once: see `Retries`.)
    let Command::Mount(a) = &mut cli.command else {
        return;
    };
    // cryptsetup's NAME is never a folder, even one of that name here:
    // only a path (with a slash) is a mount point.
    let name = a.mount_point.as_ref().filter(|p| {
        let bytes = p.as_os_str().as_encoded_bytes();
        !bytes.contains(&b'/') && bytes != b"." && bytes != b".."
    });
    if name.is_some() {
        a.mapping_name = a.mount_point.take();
        a.filesystem = crate::cli::MountFilesystem::None;
    }
    // cryptsetup maps a system-encrypted drive read/write unless -r: so
    // does its line here (tcctl's own mount opens one read-only unless
    // --read-write), with the warning that read/write says.
    if crate::options::system(a) && !crate::options::asked_read_only(a) {
        a.read_write = true;
    }
}

/// A VeraCrypt command: its place among the words (none when implied)
/// and the tcctl subcommand.
type VcCommand = (Option<usize>, &'static [&'static str]);

/// The VeraCrypt command given (its place, the subcommand), or with `-t`
/// and none, a mount; `None` for tcctl's own command lines.
fn command_of(words: &[String], text: bool) -> Result<Option<VcCommand>, Failure> {
    for (i, w) in words.iter().enumerate() {
        if SUBCOMMANDS.contains(&w.as_str()) {
            return Ok(None);
        }
        let name = w.split_once('=').map_or(w.as_str(), |(n, _)| n);
        if name == "--auto-mount" {
            return auto_mount(words, i).map(|sub| Some((Some(i), sub)));
        }
        if let Some((_, sub)) = COMMANDS.iter().find(|(names, _)| names.contains(&name)) {
            return Ok(Some((Some(i), sub)));
        }
    }
    let asks_help = words
        .iter()
        .any(|w| matches!(w.as_str(), "-h" | "--help" | "-V" | "--version"));
    Ok((text && !asks_help).then_some((None, &["mount"][..])))
}

/// `--auto-mount favorites` is `favorites mount --all` (every favorite), and
/// `--auto-mount devices` is `mount-devices`.
fn auto_mount(words: &[String], at: usize) -> Result<&'static [&'static str], Failure> {
    let value = match words[at].split_once('=') {
        Some((_, v)) => v.to_owned(),
        None => words.get(at + 1).cloned().unwrap_or_default(),
    };
    match value.as_str() {
        "favorites" => Ok(&["favorites", "mount", "--all"]),
        "devices" => Ok(&["mount-devices"]),
        "devices,favorites" | "favorites,devices" => Err(usage(
            "--auto-mount takes one of devices and favorites here: run \
             `tcctl mount-devices` and `tcctl favorites mount --all` one after the other"
                .into(),
        )),
        _ => Err(usage(format!(
            "--auto-mount takes devices or favorites, not \"{value}\""
        ))),
    }
}

/// Whether `value` is a udisks object path, whole or short.
fn is_object_path(value: &str) -> bool {
    value.starts_with("/org/freedesktop/UDisks2/") || value.starts_with("block_devices/")
}

/// udisksctl's `-p`/`--object-path`, which tcctl does not take.
fn object_path(option: &str) -> Failure {
    usage(format!(
        "{option}: udisksctl's object path is not taken here: name the device with -b DEVICE \
         (`tcctl list` shows each volume's device), or the volume by its file or mount point"
    ))
}

/// The words after the command, VeraCrypt's spellings turned into
/// tcctl's; on a VeraCrypt line, `-k` takes VeraCrypt's list too.
fn spellings(words: Vec<String>, veracrypt: bool) -> Result<Vec<String>, Failure> {
    let mut out = Vec::with_capacity(words.len());
    let (mut empty_password, mut unprotected) = (false, false);
    let mut it = words.into_iter().peekable();
    while let Some(w) = it.next() {
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n.to_owned(), Some(v.to_owned())),
            _ => (w.clone(), None),
        };
        let value = |it: &mut std::iter::Peekable<std::vec::IntoIter<String>>| {
            inline.clone().or_else(|| it.next()).unwrap_or_default()
        };
        if reworded(&name, inline.as_deref(), &mut it, &mut out) {
            continue;
        }
        match name.as_str() {
            "-tc" => out.push("--truecrypt".into()),
            // cryptsetup's: the backup header only, as -m headerbak.
            "--tcrypt-backup" => out.extend(["-m".into(), "headerbak".into()]),
            // VeraCrypt's verbose output: what tcctl always says.
            "-v" | "--verbose" if veracrypt => {}
            // Never a system folder anyway; a password's length decides
            // how it is read, as VeraCrypt 1.26 does.
            "--allow-insecure-mount" | "--use-legacy-password-maximum-length" if veracrypt => {}
            // The kernel's own sources: what tcd reads anyway (getrandom).
            // (The guard takes the value; another is refused just below.)
            "--random-source"
                if matches!(value(&mut it).as_str(), "/dev/urandom" | "/dev/random") => {}
            "--random-source" => {
                return Err(usage(
                    "--random-source takes only /dev/urandom or /dev/random: tcd reads the \
                     kernel's random source (getrandom) for keys, salts and the random fill, \
                     and nothing else"
                        .into(),
                ));
            }
            "--keyfiles" => keyfiles("--keyfile", &value(&mut it), &mut out),
            "-k" if veracrypt => keyfiles("--keyfile", &value(&mut it), &mut out),
            "--new-keyfiles" => keyfiles("--new-keyfile", &value(&mut it), &mut out),
            "--protection-keyfiles" => {
                keyfiles("--protect-hidden-keyfile", &value(&mut it), &mut out)
            }
            "--protect-hidden" => match protect_hidden(inline.as_deref(), &mut it) {
                true => out.push("--protect-hidden".into()),
                false => unprotected = true,
            },
            // udisksctl's object path (`-p block_devices/loop0`), no password.
            "--object-path" => return Err(object_path(&name)),
            "-p" if it.peek().is_some_and(|v| is_object_path(v)) => return Err(object_path(&name)),
            "--token-pin" => {
                return Err(usage(
                    "--token-pin: tcctl takes no PIN on the command line (every user can read \
                     it in the process list): a terminal asks for it, or set $TCD_TOKEN_PIN"
                        .into(),
                ));
            }
            // `-p ""`: VeraCrypt's way to script a volume opened by its
            // keyfiles alone; nothing secret is on the line. (The guard
            // takes the value; a non-empty one is refused just below.)
            "-p" | "--password" if value(&mut it).is_empty() => {
                empty_password = true;
                out.push("--empty-password".into());
            }
            // The hidden volume's header is searched over every PRF.
            "--protection-hash" => known_hash(&value(&mut it))?,
            n if let Some((_, why)) = NOT_TAKEN.iter().find(|(o, _)| *o == n) => {
                return Err(usage(format!("{n}: {why}")));
            }
            n if ON_THE_COMMAND_LINE.contains(&n) => {
                return Err(usage(format!(
                    "{n}: tcctl takes no password on the command line (every user can read \
                     it in the process list): give it on standard input with {}",
                    crate::input::spelled("--password-stdin")
                )));
            }
            _ => out.push(w),
        }
    }
    if unprotected {
        drop_protection(&mut out);
    }
    settle_empty_password(out, empty_password)
}

/// `--protect-hidden=no`: the protection's PIM and keyfiles on the same
/// line (a script's template) are passed over, as VeraCrypt passes them.
fn drop_protection(out: &mut Vec<String>) {
    drop_options(
        out,
        &[
            "--protection-pim",
            "--protect-hidden-pim",
            "--protect-hidden-keyfile",
        ],
    );
}

/// Takes `names` out of `words`, each with its value (the next word, or
/// after `=`): options tcd passes over.
fn drop_options(words: &mut Vec<String>, names: &[&str]) {
    let mut kept = Vec::with_capacity(words.len());
    let mut all = std::mem::take(words).into_iter();
    while let Some(w) = all.next() {
        match w.split_once('=') {
            Some((name, _)) if names.contains(&name) => {}
            None if names.contains(&w.as_str()) => {
                all.next();
            }
            _ => kept.push(w),
        }
    }
    *words = kept;
}

/// Values VeraCrypt writes its own way, put into `out` as tcctl takes
/// them; false for any other option.
fn reworded(
    name: &str,
    inline: Option<&str>,
    it: &mut std::iter::Peekable<std::vec::IntoIter<String>>,
    out: &mut Vec<String>,
) -> bool {
    let next = inline.map(str::to_owned).or_else(|| it.peek().cloned());
    let mut take = || {
        inline
            .map(str::to_owned)
            .or_else(|| it.next())
            .unwrap_or_default()
    };
    match name {
        // `-m ""` (a script's empty `-m "$OPTIONS"`): no options, as
        // VeraCrypt takes it.
        "-m" | "--mount-options" if next.as_deref() == Some("") => {
            take();
            true
        }
        // VeraCrypt's displayed form of a cascade, AES(Twofish(Serpent)),
        // is AES-Twofish-Serpent.
        "--encryption" if next.is_some_and(|v| v.contains('(')) => {
            let v = take();
            out.push("--encryption".into());
            out.push(v.replace('(', "-").replace(')', ""));
            true
        }
        _ => false,
    }
}

/// `--protect-hidden`, `--protect-hidden=yes|no` or `--protect-hidden
/// yes|no`: whether it asks for protection (taking a separate yes or no).
fn protect_hidden(
    inline: Option<&str>,
    it: &mut std::iter::Peekable<std::vec::IntoIter<String>>,
) -> bool {
    match inline {
        Some(v) => v == "yes",
        None => match it.peek().map(String::as_str) {
            Some(v @ ("yes" | "no")) => {
                let yes = v == "yes";
                it.next();
                yes
            }
            _ => true,
        },
    }
}

/// A hash name tcctl knows, or the usage error listing them.
fn known_hash(name: &str) -> Result<(), Failure> {
    if name.is_empty() || name.starts_with('-') {
        return Err(usage("--protection-hash needs a hash name".into()));
    }
    match <crate::cli::Hash as clap::ValueEnum>::from_str(name, true) {
        Ok(_) => Ok(()),
        Err(_) => Err(usage(format!(
            "--protection-hash: unknown hash {name:?} (possible values: sha512, sha256, \
             whirlpool, ripemd160, blake2s, streebog, argon2id)"
        ))),
    }
}

/// `-p ""` with `--stdin` contradicts itself; given twice it is said
/// once, as clap takes a flag.
fn settle_empty_password(mut out: Vec<String>, empty: bool) -> Result<Vec<String>, Failure> {
    if empty
        && out
            .iter()
            .any(|w| w == "--password-stdin" || w == "--stdin")
    {
        return Err(usage(
            "-p \"\" (keyfiles alone) and --stdin (a password on standard input) contradict \
             each other: give one"
                .into(),
        ));
    }
    let mut seen = false;
    out.retain(|w| w != "--empty-password" || !std::mem::replace(&mut seen, true));
    Ok(out)
}

/// VeraCrypt options with no counterpart here, and why.
const NOT_TAKEN: &[(&str, &str)] = &[
    (
        "--display-password",
        "tcctl never shows a password, typed or stored",
    ),
    (
        "--save-preferences",
        "tcctl keeps no preferences; a favorite keeps a volume's settings (tcctl favorites add)",
    ),
    (
        "--background-task",
        "the tcd daemon is the background service; tcctl has nothing to start",
    ),
    (
        "--no-size-check",
        "tcctl always checks that a new volume fits the free space (--size max takes all of it)",
    ),
    (
        "--load-preferences",
        "tcctl keeps no preferences; a favorite keeps a volume's settings (tcctl favorites add)",
    ),
    (
        "--use-dummy-sudo-password",
        "tcctl never runs sudo: the tcd daemon does what needs root, and polkit decides who may",
    ),
    (
        "--export-token-keyfile",
        "tcctl reads a keyfile on a token where it lies (--keyfile token://slot/N/file/NAME); \
         pkcs11-tool --read-object copies one out",
    ),
    (
        "--list-emvtoken-keyfiles",
        "tcctl reads keyfiles on PKCS #11 security tokens only, not EMV cards (tcctl token list)",
    ),
    (
        "--import-token-keyfiles",
        "tcctl token import FILE stores a keyfile on a security token, one file a call \
         (--slot N, --name NAME)",
    ),
    (
        "--delete-token-keyfiles",
        "tcctl token delete token://slot/N/file/NAME deletes one keyfile from a token",
    ),
];

/// VeraCrypt's keyfile list: comma-separated, `,,` a comma in a name, an
/// empty list none at all.
fn keyfiles(option: &str, list: &str, out: &mut Vec<String>) {
    let mut name = String::new();
    let mut chars = list.chars().peekable();
    let mut names = Vec::new();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            (',', Some(',')) => {
                chars.next();
                name.push(',');
            }
            (',', _) => names.push(std::mem::take(&mut name)),
            _ => name.push(c),
        }
    }
    names.push(name);
    for n in names.into_iter().filter(|n| !n.is_empty()) {
        out.push(option.to_owned());
        out.push(n);
    }
}

/// VeraCrypt's `-d` without a volume dismounts every one.
fn dismount_all_without_target(out: &mut Vec<String>) {
    if !names_a_volume(out) && !out.iter().any(|w| w == "--all") {
        out.push("--all".into());
    }
}

/// Whether the words after the subcommand name a volume (a word that is
/// no option, less --socket's value).
fn names_a_volume(out: &[String]) -> bool {
    let mut words = out[2..].iter();
    while let Some(w) = words.next() {
        if w == "--socket" || w == "--slot" {
            words.next();
        } else if w.starts_with("--slot=") {
            // A slot names the volume.
            return true;
        } else if !w.starts_with('-') {
            return true;
        }
    }
    out.iter().any(|w| w == "--slot")
}

/// VeraCrypt's `-l VOLUME` lists that volume's line alone. Its `-v`
/// (verbose) asks for what `list` and `status` always show.
fn list_forms(out: &mut Vec<String>) {
    let verbose = |w: &String| w == "-v" || w == "--verbose";
    let mut i = 2;
    while i < out.len() {
        if verbose(&out[i]) {
            out.remove(i);
        } else {
            i += 1;
        }
    }
    out.push("--veracrypt-lines".into());
    // `-l VOLUME`: that volume's line (with --json, its status), by
    // `list --only`.
    let mut i = 2;
    while i < out.len() {
        match out[i].as_str() {
            "--socket" | "--slot" => i += 2,
            w if w.starts_with('-') => i += 1,
            _ => {
                out.insert(i, "--only".into());
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(args: &[&str]) -> Vec<String> {
        let mut v = vec![OsString::from("tcctl")];
        v.extend(args.iter().map(OsString::from));
        translate(v)
            .expect("translates")
            .into_iter()
            .skip(1)
            .map(|s| s.into_string().expect("utf-8"))
            .collect()
    }

    #[test]
    fn cryptsetup_asks_a_pim_only_when_told_to() {
        assert_eq!(
            t(&["tcryptOpen", "v.hc", "-T", "2"]),
            ["tcryptOpen", "--no-pim-question", "v.hc", "--tries", "2"]
        );
        assert_eq!(
            t(&["tcryptOpen", "v.hc", "--veracrypt-query-pim"]),
            ["tcryptOpen", "v.hc", "--veracrypt-query-pim"]
        );
        // VeraCrypt's and tcctl's own lines ask it as before.
        assert_eq!(t(&["mount", "v.hc"]), ["mount", "v.hc"]);
    }

    #[test]
    fn udisks_unmount_with_a_block_device_unmounts_the_filesystem_alone() {
        let fs_only = ["dismount", "--filesystem-only", "/dev/loop3"];
        assert_eq!(t(&["unmount", "-b", "/dev/loop3"]), fs_only);
        assert_eq!(t(&["umount", "--block-device", "/dev/loop3"]), fs_only);
        assert_eq!(t(&["unmount", "--block-device=/dev/loop3"]), fs_only);
        assert_eq!(
            t(&["unmount", "-b", "/dev/loop3", "--force"]),
            ["dismount", "--filesystem-only", "/dev/loop3", "--force"]
        );
        // umount(8)'s lazy unmount is --force.
        assert_eq!(
            t(&["umount", "-l", "/mnt/x"]),
            ["umount", "--force", "/mnt/x"]
        );
        assert_eq!(
            t(&["unmount", "/mnt/x", "--lazy"]),
            ["unmount", "/mnt/x", "--force"]
        );
        assert_eq!(t(&["umount", "-v", "/mnt/x"]), ["umount", "/mnt/x"]);
        assert_eq!(t(&["umount", "-vv", "/mnt/x"]), ["umount", "/mnt/x"]);
        assert_eq!(
            t(&["mount", "-b", "/dev/loop3", "-t", "vfat", "/mnt/x"]),
            ["mount", "/dev/loop3", "/mnt/x"]
        );
        for joined in [
            &["-lf"][..],
            &["-fl"],
            &["-l", "-f"],
            &["-f", "--lazy"],
            &["-lv"],
            &["-vl"],
            &["-v", "-fl"],
        ] {
            let line = [&["umount"][..], joined, &["/mnt/x"]].concat();
            assert_eq!(t(&line), ["umount", "--force", "/mnt/x"], "{line:?}");
        }
        assert_eq!(t(&["-t", "-l"]), ["list", "--veracrypt-lines"]);
        // tcctl's own unmount, and udisks' lock: the whole volume.
        assert_eq!(t(&["unmount", "/dev/loop3"]), ["unmount", "/dev/loop3"]);
        assert_eq!(
            t(&["lock", "-b", "/dev/sdb1"]),
            ["dismount", "--udisks-lock", "/dev/sdb1"]
        );
    }

    #[test]
    fn veracrypt_commands_become_subcommands() {
        assert_eq!(t(&["-t", "-d"]), ["dismount", "--all"]);
        assert_eq!(t(&["--text", "-u", "/mnt/x"]), ["dismount", "/mnt/x"]);
        assert_eq!(t(&["-t", "-l"]), ["list", "--veracrypt-lines"]);
        assert_eq!(t(&["-t", "-l", "-v"]), ["list", "--veracrypt-lines"]);
        assert_eq!(
            t(&["-t", "-l", "--slot", "2"]),
            ["list", "--slot", "2", "--veracrypt-lines"]
        );
        assert_eq!(
            t(&["-t", "--slot=2", "-l"]),
            ["list", "--slot=2", "--veracrypt-lines"]
        );
        assert_eq!(t(&["-t", "--dismount=/m"]), ["dismount", "/m"]);
        assert_eq!(t(&["-t", "-m", "", "/v.hc"]), ["mount", "/v.hc"]);
        assert_eq!(
            t(&["-t", "-c", "--encryption", "AES(Twofish(Serpent))", "v"]),
            ["create", "--encryption", "AES-Twofish-Serpent", "v"]
        );
        assert_eq!(
            t(&["-t", "-c", "--encryption=Serpent(AES)", "v"]),
            ["create", "--encryption", "Serpent-AES", "v"]
        );
        assert_eq!(t(&["-t", "--mount-options=", "/v.hc"]), ["mount", "/v.hc"]);
        assert_eq!(
            t(&["-t", "-m", "ro", "/v.hc"]),
            ["mount", "-m", "ro", "/v.hc"]
        );
        assert_eq!(t(&["-t", "-d=/m"]), ["dismount", "/m"]);
        assert_eq!(
            t(&["-t", "--list=/m"]),
            ["list", "--only", "/m", "--veracrypt-lines"]
        );
        assert_eq!(t(&["-t", "-d", "--slot", "3"]), ["dismount", "--slot", "3"]);
        assert_eq!(
            t(&["-t", "--stdin", "-v", "--mount", "/v.hc"]),
            ["mount", "--stdin", "/v.hc"]
        );
        assert_eq!(
            t(&["-t", "-l", "/v.hc"]),
            ["list", "--only", "/v.hc", "--veracrypt-lines"]
        );
        assert_eq!(
            t(&["-t", "--list", "--verbose", "/v.hc"]),
            ["list", "--only", "/v.hc", "--veracrypt-lines"]
        );
        assert_eq!(
            t(&["-t", "--auto-mount", "favorites"]),
            ["favorites", "mount", "--all"]
        );
        assert_eq!(
            t(&["-t", "-tc", "--stdin", "v.tc", "/mnt"]),
            ["mount", "--truecrypt", "--stdin", "v.tc", "/mnt"]
        );
        assert_eq!(t(&["--test", "v"]), ["info", "v"]);
        assert_eq!(t(&["-t", "--test"]), ["self-test"]);
    }

    #[test]
    fn tcctl_command_lines_keep_their_words() {
        assert_eq!(t(&["mount", "-k", "a,b", "v"]), ["mount", "-k", "a,b", "v"]);
        assert_eq!(t(&["list", "--json"]), ["list", "--json"]);
        assert_eq!(
            t(&["favorites", "add", "n", "v", "--auto-mount"]),
            ["favorites", "add", "n", "v", "--auto-mount"]
        );
        assert_eq!(
            t(&["mount", "--keyfiles=a,,b,c", "--protect-hidden=no", "v"]),
            ["mount", "--keyfile", "a,b", "--keyfile", "c", "v"]
        );
        assert_eq!(
            t(&["mount", "--protect-hidden", "yes", "v"]),
            ["mount", "--protect-hidden", "v"]
        );
        // A template's protection settings, with protection off.
        assert_eq!(
            t(&[
                "mount",
                "--protect-hidden=no",
                "--protection-pim=0",
                "--protection-keyfiles",
                "k",
                "--protection-pim",
                "3",
                "v"
            ]),
            ["mount", "v"]
        );
    }
}
