//! `tcctl`: the command-line client of the tcd daemon. It talks D-Bus only:
//! it opens files with the user's own rights and hands the daemon their
//! descriptors, never paths.

mod commands;
mod interrupt;
mod manual;
mod text_mode;
mod veracrypt;

// The shared client library, named at the crate root so that the commands'
// `crate::bus` paths read as before.
use tcd_client::{
    bus, cli, host, input, keystore, notify, options, output, search, signals, token,
};

use bus::{Failure, Where};
use cli::{Cli, Command};
use commands::{
    Context, backends, devices, expand, favorites, headers, keyfiles, monitor, tokens, volumes,
    watch,
};
use std::process::ExitCode;

/// A word of the command line that is not UTF-8 (a file named in
/// Latin-1, say): refused before anything is done, by every command
/// alike. The daemon names volumes, devices and mount points in D-Bus
/// strings, which are UTF-8: such a volume could be made or mounted but
/// never named again to `status` or `dismount`.
fn not_utf8(args: &[std::ffi::OsString]) -> Option<Failure> {
    let bad = args.iter().skip(1).find(|a| a.to_str().is_none())?;
    Some(Failure {
        code: bus::exit::USAGE,
        message: format!(
            "{bad:?} is not valid UTF-8: tcd names volumes, devices, mount points and keyfiles \
             in UTF-8 (as D-Bus carries them); rename it (convmv(1) converts names)"
        ),
    })
}

fn main() -> ExitCode {
    // A reader that goes away (`tcctl list | head -1`) ends tcctl quietly,
    // as it ends `ls`; Rust's ignored SIGPIPE would make the next print
    // panic. D-Bus writes are unaffected: zbus sends with MSG_NOSIGNAL.
    // SAFETY: signal(2) resets the disposition to the default; no handler
    // code runs, and no other thread exists yet.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    output_failures_said();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "generate-dist") {
        return generate_dist(&args[2..]);
    }
    if let Some(f) = not_utf8(&args) {
        return said(f);
    }
    if let Some(help) = veracrypt::text_mode_help(&args) {
        print!("{help}");
        return ExitCode::SUCCESS;
    }
    if let Some(note) = veracrypt::text_mode_command_help_note(&args) {
        print!("{note}");
    }
    let given = args.clone();
    if veracrypt::text_mode_line(&given) {
        input::set_veracrypt_line();
    }
    let args = match veracrypt::translate(args) {
        Ok(a) => a,
        Err(f) => return said(f),
    };
    let mut cli = match parse(&given, args) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    veracrypt::cryptsetup_open(&given, &mut cli);
    if let Command::Mount(a) = &mut cli.command
        && let Some(at) = a.mount_point_option.take()
    {
        a.mount_point = Some(at);
    }
    if let Command::Mount(a) = &cli.command
        && a.udisks_unlock
    {
        input::set_udisks_line();
    }
    if let Command::Mount(a) = &mut cli.command
        && let Some(file) = a.password_file.take()
    {
        if let Err(f) = input::password_from_file(&file) {
            return said(f);
        }
        a.secrets.password_stdin = true;
    }
    let result = run(cli);
    token::forget_pins();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            // Empty: the command said it already.
            if !f.message.is_empty() {
                eprintln!("tcctl: {}", f.message);
            }
            ExitCode::from(f.code)
        }
    }
}

/// The command line as tcctl reads it (`args`, VeraCrypt's spellings
/// translated); in VeraCrypt's text mode on a terminal, with what it
/// leaves out asked for. The exit code when it cannot be read.
fn parse(given: &[std::ffi::OsString], mut args: Vec<std::ffi::OsString>) -> Result<Cli, ExitCode> {
    text_mode::fill_in(given, &mut args).map_err(said)?;
    let cli = match Cli::read(&args) {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::MissingRequiredArgument => {
            if !text_mode::ask_missing(given, &mut args, &e).map_err(said)? {
                return Err(plainer(given, &e).map_or_else(|| usage_error(e), said));
            }
            Cli::read(&args).map_err(usage_error)?
        }
        Err(e) => return Err(plainer(given, &e).map_or_else(|| usage_error(e), said)),
    };
    Ok(cli)
}

/// What a VeraCrypt or cryptsetup user needs to hear instead of clap's
/// words for `e`, where clap's would mislead: an option unknown to
/// VeraCrypt's text mode is not one of `mount`'s (the command `-t`
/// implies), a restore needs a file or --embedded, and a bad value of
/// cryptsetup's --veracrypt-pim is named so.
fn plainer(given: &[std::ffi::OsString], e: &clap::Error) -> Option<Failure> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let usage = |message: String| Failure {
        code: bus::exit::USAGE,
        message,
    };
    if e.kind() == ErrorKind::UnknownArgument && veracrypt::text_mode_line(given) {
        let Some(ContextValue::String(arg)) = e.get(ContextKind::InvalidArg) else {
            return None;
        };
        // A word that is no option: one argument too many.
        if !arg.starts_with('-') {
            return Some(usage(format!(
                "{arg}: one argument more than VeraCrypt's text mode takes here (`tcctl -t -h` \
                 shows its usage)"
            )));
        }
        return Some(usage(veracrypt::misplaced_option(given, arg)));
    }
    if let Some(message) = veracrypt_pim_value(given, e).or_else(|| udisks_loop_command(e)) {
        return Some(usage(message));
    }
    // mount(8)'s -o: tcctl's own words for what it carries.
    let mounting = e.render().to_string().contains("Usage: tcctl mount ");
    if e.kind() == ErrorKind::UnknownArgument
        && mounting
        && matches!(e.get(ContextKind::InvalidArg), Some(ContextValue::String(a)) if a == "-o")
    {
        return Some(usage(
            "-o: mount(8)'s options are not taken here: -r (--readonly) mounts read-only, \
             --fs-options OPTIONS passes the filesystem's own, and -m takes VeraCrypt's (ro, \
             headerbak, ts, system)"
                .into(),
        ));
    }
    let restore = e
        .render()
        .to_string()
        .contains("Usage: tcctl restore-header ");
    let missing = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::Strings(s)) => s.clone(),
        Some(ContextValue::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    };
    if e.kind() == ErrorKind::MissingRequiredArgument && restore && missing == ["<BACKUP>"] {
        return Some(usage(
            "restore-header needs the header backup file to restore from, or --embedded to \
             restore from the backup header inside the volume (tcctl restore-header VOLUME \
             BACKUP, or VOLUME --embedded)"
                .into(),
        ));
    }
    // A VeraCrypt line (not asked on a terminal): said in its terms.
    if e.kind() == ErrorKind::MissingRequiredArgument && veracrypt::text_mode_line(given) {
        let named: Vec<String> = missing
            .iter()
            .map(|n| match n.as_str() {
                "<VOLUME>" => "the volume".to_owned(),
                "<BACKUP>" => "the backup file".to_owned(),
                "<PATH>" => "the file's path".to_owned(),
                // An option another one goes with (--protection-pim needs
                // --protect-hidden): named as the option it is.
                flag if flag.starts_with("--") => format!("{flag}, which its other options need"),
                other => format!("the {}", other.trim_matches(['<', '>']).to_lowercase()),
            })
            .collect();
        return Some(usage(format!(
            "this VeraCrypt line lacks {} (`tcctl -t -h` shows its usage)",
            named.join(" and ")
        )));
    }
    None
}

/// udisksctl's `loop-setup` and `loop-delete`, which tcctl has no need
/// of: what does their work here, rather than clap's nearest command.
fn udisks_loop_command(e: &clap::Error) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::InvalidSubcommand {
        return None;
    }
    match e.get(ContextKind::InvalidSubcommand) {
        Some(ContextValue::String(c)) if c == "loop-setup" => Some(
            "loop-setup: udisksctl's loop device is not needed: tcd opens a container file \
             itself (`tcctl unlock -b FILE` attaches the volume as its block device, `tcctl \
             mount FILE` mounts it)"
                .into(),
        ),
        Some(ContextValue::String(c)) if c == "loop-delete" => Some(
            "loop-delete: tcd detaches the loop devices it made itself (`tcctl lock -b DEVICE` \
             or `tcctl dismount VOLUME`)"
                .into(),
        ),
        _ => None,
    }
}

/// Standard output that cannot be written (a full disk, `> /dev/full`)
/// makes `println!` panic: said on one line instead of a backtrace, with
/// exit 1, and that what the command did (a mount, a dismount) stands,
/// as `tcctl list` shows. Any other panic keeps Rust's report.
fn output_failures_said() {
    let rust = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let said = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if let Some(why) = said.strip_prefix("failed printing to stdout: ") {
            eprintln!(
                "tcctl: cannot write to standard output ({why}): its report is lost, but what \
                 the command did stands (`tcctl list` shows the volumes)"
            );
            std::process::exit(1);
        }
        rust(info);
    }));
}

/// A failure said on standard error; its exit code.
fn said(f: Failure) -> ExitCode {
    eprintln!("tcctl: {}", f.message);
    ExitCode::from(f.code)
}

/// Packaging's `generate-dist DIR`.
fn generate_dist(args: &[std::ffi::OsString]) -> ExitCode {
    const USAGE: &str = "usage: tcctl generate-dist DIR (writes the manual pages and shell \
                         completions there)";
    let dir = match args {
        [help] if help == "-h" || help == "--help" => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        // An option is no folder name (`--help` made a folder of that name).
        [dir] if !dir.as_encoded_bytes().starts_with(b"-") => dir,
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(bus::exit::USAGE);
        }
    };
    match manual::generate_dist(std::path::Path::new(dir)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("tcctl: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

/// cryptsetup's --veracrypt-pim is tcctl's --pim: a bad value of it is
/// said under the name typed.
fn veracrypt_pim_value(given: &[std::ffi::OsString], e: &clap::Error) -> Option<String> {
    use clap::error::ErrorKind;
    let typed = given.iter().any(|a| {
        a.to_str()
            .is_some_and(|a| a == "--veracrypt-pim" || a.starts_with("--veracrypt-pim="))
    });
    if !typed
        || !matches!(
            e.kind(),
            ErrorKind::InvalidValue | ErrorKind::ValueValidation
        )
    {
        return None;
    }
    let said = e.render().to_string();
    let first = said.lines().next()?.strip_prefix("error: ")?;
    first
        .contains("'--pim <PIM>'")
        .then(|| first.replace("'--pim <PIM>'", "'--veracrypt-pim <PIM>'"))
}

/// Help and version go to standard output with success; a wrong command
/// line exits 64 (EX_USAGE), apart from 2 (a wrong password).
fn usage_error(e: clap::Error) -> ExitCode {
    let _ = e.print();
    if e.use_stderr() {
        ExitCode::from(bus::exit::USAGE)
    } else {
        ExitCode::SUCCESS
    }
}

/// Where the daemon is: `--session`, `--system`, `--socket`, or the default.
fn daemon_at(socket: Option<&std::path::Path>, session: bool, system: bool) -> Where<'_> {
    match (socket, session, system) {
        (_, true, _) => Where::Session,
        (_, _, true) => Where::System,
        (Some(p), _, _) => Where::Socket(p),
        _ => Where::Default,
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    let socket = cli.socket();
    let (session, system) = (cli.session, cli.system);
    let at = daemon_at(socket.as_deref(), session, system);
    let owned = socket.clone();
    token::configure(cli.token_lib.clone(), move || {
        token::policy_library(daemon_at(owned.as_deref(), session, system))
    });
    if let Some((secrets, search)) = cli.command.opening() {
        options::refuse_for_truecrypt(secrets, search)?;
        commands::check_backend(at, search)?;
    }
    let ctx = Context {
        at,
        notify: notify::wanted(cli.notify),
        interactive: !cli.non_interactive && !cli.empty_password,
        empty_password: cli.empty_password,
    };
    match cli.command {
        Command::Mount(a) => volumes::mount(ctx, a),
        Command::Dismount {
            target,
            force,
            slot,
            filesystem_only: true,
            ..
        } => volumes::unmount_filesystem(ctx, volumes::Named::of(target, slot), force),
        Command::Dismount {
            target,
            all,
            force,
            slot,
            filesystem_only: false,
            udisks_lock,
        } => {
            let target = volumes::Named::of(target, slot);
            volumes::dismount(ctx, target, all, force, udisks_lock)
        }
        Command::List {
            json,
            veracrypt_lines,
            target,
            slot,
        } => volumes::list(ctx, json, veracrypt_lines, volumes::Named::of(target, slot)),
        Command::Create(a) => volumes::create(ctx, a),
        Command::WipeCache => volumes::wipe_cache(ctx),
        Command::Status {
            every: true, json, ..
        } => volumes::status_of_every(ctx, json),
        Command::Status {
            target, slot, json, ..
        } => volumes::status(ctx, volumes::Named::of(target, slot), json),
        Command::CreateKeyfile(a) => keyfiles::create(&a),
        Command::MountDevices(a) => devices::mount_all(ctx, a),
        Command::Token { action } => tokens::run(action, ctx.interactive),
        Command::Info(a) => headers::info(ctx, a),
        Command::Dump(a) => headers::dump(ctx, a),
        Command::ChangePassword(a) => headers::change_password(ctx, a),
        Command::Expand(a) => expand::expand(ctx, a),
        Command::BackupHeader(a) => headers::backup(ctx, a),
        Command::RestoreHeader(a) => headers::restore(ctx, a),
        Command::Backends { json } => backends::backends(ctx, json),
        Command::Policy { action } => backends::policy(ctx, action),
        Command::Benchmark { size, json } => backends::benchmark(ctx, size.unwrap_or(0), json),
        Command::SelfTest { json } => backends::self_test(ctx, json),
        Command::Favorites { action } => favorites::run(ctx, action),
        Command::Watch => watch::watch(ctx),
        Command::Monitor { json } => monitor::monitor(ctx, json),
    }
}
