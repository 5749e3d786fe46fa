//! A volume's header: show it, change its password, back it up, restore
//! it.

use super::{Context, ask_credentials};
use crate::bus::{Client, Failure, HeaderInfo};
use crate::cli::{BackupHeaderArgs, ChangePasswordArgs, DumpArgs, InfoArgs, RestoreHeaderArgs};
use crate::input::{KeyfilesEachTry, Passwords, Retries, prepare_keyfiles, read_header};
use crate::{host, options, output, search};
use std::fs::File;
use tcd_proto::contract::SearchOptions;
use zeroize::Zeroizing;

/// `tcctl info`.
pub fn info(ctx: Context<'_>, mut a: InfoArgs) -> Result<(), Failure> {
    if a.mounted_status {
        // VeraCrypt's --volume-properties shows a mounted volume's
        // properties without its password: named by its volume, mount
        // point or device, as `status` takes it.
        // Without a daemon, the search's own errors come first, as before.
        let listed = Client::connect(ctx.at)
            .and_then(|c| c.list())
            .unwrap_or_default();
        let name = match super::volumes::mounted_row(&listed, &a.volume) {
            Some(row) => row.host().to_owned(),
            None => a.volume.to_string_lossy().into_owned(),
        };
        match super::volumes::status(ctx, super::volumes::Named::Name(name.clone()), a.json) {
            Err(f) if f.code == crate::bus::exit::NOT_FOUND => {}
            done => return done,
        }
    }
    // Without a daemon, the search's own errors come first, as before.
    let listed = Client::connect(ctx.at)
        .and_then(|c| c.list())
        .unwrap_or_default();
    let name = crate::input::shown(&a.volume);
    // A mounted volume's device holds its decrypted data, not a header.
    if let Some(row) = listed.iter().find(|r| r.device() == name) {
        let how = match row.mount_point() {
            Some(at) => format!("mounted on {at}"),
            None => "attached".to_owned(),
        };
        return Err(Failure::invalid(format!(
            "{name} is the device of the volume {host} ({how}): it holds no header; `tcctl \
             status {name}` shows the volume without a password, `tcctl info {word}` reads \
             its header",
            host = row.host(),
            word = crate::output::shell_word(row.host()),
        )));
    }
    // And its mount point holds its files.
    let real = std::fs::canonicalize(&a.volume).ok();
    if let Some(row) = listed.iter().find(|r| {
        r.mount_point()
            .is_some_and(|m| real.as_deref() == Some(std::path::Path::new(m)))
    }) {
        return Err(Failure::invalid(format!(
            "{name} is the mount point of the volume {host}: it holds no header; `tcctl \
             status {name}` shows the volume without a password, `tcctl info {word}` reads \
             its header",
            host = row.host(),
            word = crate::output::shell_word(row.host()),
        )));
    }
    let mounted = super::volumes::mounted_row(&listed, &a.volume).is_some();
    let looked = look_again(ctx, &mut a).map_err(|mut f| {
        if mounted && f.code == crate::bus::exit::USAGE {
            f.message.push_str(&format!(
                " (it is mounted: `tcctl status {}` shows it without a password)",
                crate::output::shell_word(&name)
            ));
        }
        f
    })?;
    if !a.check_only {
        output::header_info(&looked.info, &name, a.json);
    }
    Ok(())
}

/// A volume's header as `HeaderInfo` says it, and what opened it.
struct Looked {
    c: Client,
    host: File,
    password: Zeroizing<Vec<u8>>,
    keyfiles: Vec<Zeroizing<Vec<u8>>>,
    search: SearchOptions,
    info: HeaderInfo,
}

/// [`look`], the password asked again after a wrong one as often as
/// cryptsetup's --tries says.
fn look_again(ctx: Context<'_>, a: &mut InfoArgs) -> Result<Looked, Failure> {
    let mut retries = crate::input::Retries::new(a.ask_again, a.tries, &a.secrets.keyfiles);
    let pim_given = a.secrets.pim;
    let mut wrong = false;
    loop {
        let mut pw = Passwords::new(a.secrets.password_stdin, ctx.asking());
        match look(ctx, a, &mut pw) {
            Err(f) if f.code == crate::bus::exit::WRONG_PASSWORD && retries.another(&pw) => {
                eprintln!("tcctl: {}", f.message);
                a.secrets.pim = pim_given;
                wrong = true;
            }
            // Ctrl-D at the next prompt gives up: the wrong password
            // stands, as `mount` says it.
            Err(f) if f.code == crate::bus::exit::CANCELLED && wrong => {
                return Err(super::gave_up(&a.volume));
            }
            r => return r,
        }
    }
}

fn look(ctx: Context<'_>, a: &mut InfoArgs, pw: &mut Passwords) -> Result<Looked, Failure> {
    use crate::cli::MountOption;
    a.system_encryption |= a.mount_options.contains(&MountOption::System);
    let headerbak = a.mount_options.contains(&MountOption::Headerbak);
    if headerbak && (a.system_encryption || a.detached.header.is_some()) {
        return Err(Failure {
            code: crate::bus::exit::USAGE,
            message: "-m headerbak goes with neither system encryption nor --header: a system \
                      drive or a header file has no backup header"
                .into(),
        });
    }
    let host = host::open_volume(&a.volume, false)?;
    let keyfiles = prepare_keyfiles(&a.secrets.keyfiles)?;
    let mut header = read_header(a.detached.header.as_deref())?;
    if a.system_encryption && header.is_none() {
        header = host::system_header(&a.volume, &host)?;
    }
    let ask = a.ask_keyfiles && a.secrets.keyfiles.is_empty();
    let (password, keyfiles) =
        ask_credentials(ask, pw, &mut a.secrets, &a.search, &a.volume, keyfiles)?;
    let c = Client::connect(ctx.at)?;
    let mut search = options::search(&a.search, a.secrets.pim());
    search.detached_header = header;
    search.system_encryption = a.system_encryption.then_some(true);
    search.backup_header = headerbak.then_some(true);
    let o = search.clone();
    let info = search::run_on(&c, &host, &a.volume, || {
        c.header_info(&host, &password, &keyfiles, o)
    })
    .map_err(|f| search::backup_as_volume(f, &a.volume))?;
    if info.used_backup_header == Some(true) && !headerbak {
        output::backup_header_used(&a.volume);
    }
    Ok(Looked {
        c,
        host,
        password,
        keyfiles,
        search,
        info,
    })
}

/// `tcctl dump`: the header, and with `--dump-master-key` the master key,
/// asked for with the PRF and encryption the first look found, so the
/// second search tries one.
pub fn dump(ctx: Context<'_>, mut a: DumpArgs) -> Result<(), Failure> {
    super::refuse_tcd_device(ctx.at, &a.info.volume, false)?;
    // Named as typed: cryptsetup's users write --dump-volume-key.
    let flag = match std::env::args().any(|w| w == "--dump-volume-key") {
        true => "--dump-volume-key",
        false => "--dump-master-key",
    };
    if a.dump_master_key && !a.batch_mode {
        // The daemon gives a master key to root alone: another user is
        // told so rather than asked to confirm (with --batch-mode the
        // daemon says it).
        // SAFETY: getuid has no arguments and cannot fail.
        if unsafe { libc::getuid() } != 0 {
            return Err(Failure {
                code: crate::bus::exit::PERMISSION_DENIED,
                message: format!("{flag}: only root may read a master key"),
            });
        }
        crate::input::can_confirm(ctx.interactive, flag, "--batch-mode")?;
    }
    let l = look_again(ctx, &mut a.info)?;
    let path = crate::input::shown(&a.info.volume);
    if !a.dump_master_key {
        output::dump(&l.info, &path, None, a.info.json);
        return Ok(());
    }
    // Asked once the password has opened the header, as cryptsetup asks.
    if !a.batch_mode {
        crate::input::confirm(
            ctx.interactive,
            flag,
            "The master key decrypts the volume without any password, and \
             stays valid when the password changes. Are you sure? (Type 'YES' \
             in capital letters): ",
            "--batch-mode",
        )?;
    }
    let mut search = l.search.clone();
    search.hash = l.info.hash.clone();
    search.encryption = xts_encryption(&l.info);
    let key =
        l.c.header_master_key(&l.host, &l.password, &l.keyfiles, search)?;
    eprintln!(
        "WARNING: the master key of {path} follows; it decrypts the volume \
         whatever its password becomes. Keep it secret."
    );
    output::dump(&l.info, &path, Some(key.as_bytes()), a.info.json);
    Ok(())
}

/// The new password, typed twice unless read from standard input. A
/// mistyped repeat is said and both are asked again, as VeraCrypt does
/// (the current password's search is not made again); so is one typed
/// past the new header's limit, before its repeat. With new keyfiles and
/// nobody to ask (--non-interactive), none: the keyfiles open it alone.
fn ask_new_password(
    pw: &mut Passwords,
    stdin: bool,
    new_keyfiles: bool,
    truecrypt: bool,
) -> Result<(Zeroizing<Vec<u8>>, crate::input::Warning), Failure> {
    use crate::input::{asked, spelled};
    // Said of the new password, not the current one the keyfiles opened.
    if pw.asks_nobody() && !new_keyfiles {
        return Err(Failure {
            code: crate::bus::exit::USAGE,
            message: format!(
                "a new password is needed, and --non-interactive asks for none: give the \
                 current and new passwords on {}, a line each, or give {} for the volume to \
                 open with keyfiles alone (without it, the new header takes no keyfile)",
                spelled("--password-stdin"),
                spelled("--new-keyfile")
            ),
        });
    }
    loop {
        let new = pw.ask_unless_keyfiles_alone(
            asked("New password: ", "Enter new password: "),
            new_keyfiles,
        )?;
        let Some(length) = crate::input::judge_asked_length(pw, &new, truecrypt)? else {
            continue;
        };
        if stdin
            || (new_keyfiles && pw.asks_nobody())
            || pw.ask(asked("Repeat the new password: ", "Re-enter password: "))? == new
        {
            return Ok((new, length));
        }
        eprintln!("tcctl: the passwords differ: type them again");
    }
}

/// The current password's question: VeraCrypt's change of password asks
/// it without the volume's name.
fn current_password_prompt(volume: &std::path::Path) -> String {
    match crate::input::veracrypt_line() {
        true => "Enter password: ".to_owned(),
        false => format!("Current password for {}: ", volume.display()),
    }
}

/// `tcctl change-password`.
pub fn change_password(ctx: Context<'_>, mut a: ChangePasswordArgs) -> Result<(), Failure> {
    refuse_for_truecrypt(&a)?;
    a.volume = crate::input::shown_absolute(a.volume);
    super::refuse_tcd_device(ctx.at, &a.volume, false)?;
    let host = host::open_volume(&a.volume, true)?;
    let keyfiles = prepare_keyfiles(&a.secrets.keyfiles)?;
    let new_kf = prepare_keyfiles(&a.new_keyfiles)?;
    let mut pw = Passwords::new(a.secrets.password_stdin, ctx.asking());
    let c = Client::connect(ctx.at)?;
    let ((old, keyfiles), o) = current_credentials(&c, &host, &mut a, &mut pw, keyfiles)?;
    let weaker = confirm_weaker_header(ctx.interactive, &a, o.format)?;
    // The new header's format: the volume's, unless converted.
    let truecrypt = match a.to {
        Some(to) => to == crate::cli::Format::Truecrypt,
        None => o.format == Some(tcd_proto::contract::options::VolumeFormat::TrueCrypt),
    };
    let (new, length) = ask_new_password(
        &mut pw,
        a.secrets.password_stdin,
        !a.new_keyfiles.is_empty(),
        truecrypt,
    )?;
    // VeraCrypt's text mode asks the new PIM next (Enter: none); a
    // TrueCrypt header has no PIM to ask for.
    if a.ask_again && a.new_pim.is_none() {
        a.new_pim = Some(pw.pim(
            None,
            truecrypt,
            crate::input::asked("New PIM (Enter for none): ", "Enter new PIM: "),
        )?);
    }
    let new_kf = if a.ask_keyfiles {
        new_keyfiles_asked(&keyfiles)?
    } else {
        new_kf.finish()?
    };
    let weak = judge_new_password(&pw, &new, !new_kf.is_empty(), a.force)?;
    // Without --new-pim the volume keeps the PIM it opened with, unless
    // its new header is TrueCrypt's, which has none.
    let pim = match truecrypt {
        true => 0,
        false => a.new_pim.unwrap_or(a.secrets.pim()),
    };
    let few = crate::input::judge_new_pim(&new, pim, !new_kf.is_empty(), a.force)?;
    let new_o = options::new_credentials(a.new_pim, a.new_hash, a.to);
    let was = o.format;
    // What changed, as the first line says it: the same credentials again
    // are a header rewritten (a conversion, a new hash or PIM).
    let changed = match (new == old, new_kf == keyfiles) {
        (true, true) => "header rewritten, password unchanged",
        (false, true) => "password changed",
        (true, false) => "keyfiles changed, password unchanged",
        (false, false) => "password and keyfiles changed",
    };
    search::run_on(&c, &host, &a.volume, || {
        c.change_password(&host, &old, &keyfiles, o, &new, &new_kf, new_o)
    })
    .map_err(|mut f| {
        // A conversion keeps the hash unless told: the way on is said.
        if a.new_hash.is_none() && f.message.ends_with("is not a PRF of TrueCrypt") {
            f.message.push_str(
                ": --new-hash gives the header one TrueCrypt has (sha512, whirlpool or ripemd160)",
            );
        }
        f
    })?;
    println!("{}: {changed}", a.volume.display());
    // Said once the change is made: a refusal makes them moot.
    weak.say();
    few.say();
    length.say();
    crate::input::judge_portable(&new).say();
    if weaker {
        eprintln!("tcctl: warning: {TRUECRYPT_ITERATIONS}");
    }
    said_after_change(&a, was, keyfiles.len(), new_kf.len(), new.is_empty());
    Ok(())
}

/// A new password judged: a short one typed on the terminal is asked
/// about; not wanted, the volume is left as it was (its search is not
/// made again).
fn judge_new_password(
    pw: &Passwords,
    new: &[u8],
    keyfiles: bool,
    force: bool,
) -> Result<crate::input::Warning, Failure> {
    match crate::input::judge_typed_password(pw, new, keyfiles, force, "--new-keyfile")? {
        crate::input::Judged::Taken(warning) => Ok(warning),
        crate::input::Judged::AskAnother => Err(Failure {
            code: crate::bus::exit::CANCELLED,
            message: "the short password not taken: the password is unchanged".into(),
        }),
    }
}

/// A wrong password for a backup file: its credentials are the volume's
/// of the day it was backed up, not today's.
fn of_the_backup(mut f: Failure, from_file: bool) -> Failure {
    if f.code != crate::bus::exit::WRONG_PASSWORD {
        return f;
    }
    f.message.push_str(match from_file {
        true => {
            "; the backup opens with the password, PIM and keyfiles the volume had when it was \
             backed up"
        }
        false => {
            "; only the backup headers inside the volume were searched, not its primary ones \
             (`tcctl dump` says whether those open)"
        }
    });
    f
}

/// What a password change did beyond the password: a conversion (not to
/// the format the volume had), the PIM a TrueCrypt header cannot keep,
/// keyfiles dropped or now needed, a new PRF or PIM.
fn said_after_change(
    a: &ChangePasswordArgs,
    was: Option<tcd_proto::contract::options::VolumeFormat>,
    keyfiles_before: usize,
    keyfiles_now: usize,
    no_password: bool,
) {
    use tcd_proto::contract::options::VolumeFormat;
    let path = a.volume.display();
    let to = a.to.map(|to| match to {
        crate::cli::Format::Veracrypt => (VolumeFormat::VeraCrypt, "VeraCrypt"),
        crate::cli::Format::Truecrypt => (VolumeFormat::TrueCrypt, "TrueCrypt"),
    });
    if let Some((format, name)) = to.filter(|(f, _)| Some(*f) != was) {
        println!("{path}: converted to the {name} format");
        let pim = a.secrets.pim();
        if format == VolumeFormat::TrueCrypt && pim != 0 {
            println!("{path}: its PIM ({pim}) is gone: TrueCrypt's format has none");
        }
    }
    // As VeraCrypt: the new credentials are what was given. Dropping the
    // keyfiles that opened it is said, not left to be found out.
    if keyfiles_before > 0 && keyfiles_now == 0 {
        println!("{path}: it now opens without keyfiles (--new-keyfile gives it new ones)");
    } else if keyfiles_now > 0 {
        let n = crate::output::count(keyfiles_now, "keyfile");
        match no_password {
            true => println!("{path}: it now opens with {n} and no password"),
            false => println!("{path}: it now opens only with its password and {n}"),
        }
    }
    if let Some(h) = a.new_hash {
        println!("{path}: its header key is now derived with {}", h.label());
    }
    if let Some(pim) = a
        .new_pim
        .filter(|_| a.to != Some(crate::cli::Format::Truecrypt))
    {
        let verb = match a.secrets.pim() == pim {
            true => "stays",
            false => "is now",
        };
        match pim {
            0 => println!("{path}: its PIM {verb} the default"),
            n => println!("{path}: its PIM {verb} {n}"),
        }
    }
}

/// TrueCrypt's header iterations, said when a VeraCrypt header becomes one.
const TRUECRYPT_ITERATIONS: &str = "TrueCrypt's format derives the header key with 1,000 \
     iterations (2,000 for RIPEMD-160) where VeraCrypt's takes 500,000 and more: a password \
     guesser tries hundreds of times more passwords a second against it";

/// A VeraCrypt header converted to TrueCrypt's is far cheaper to attack
/// (VeraCrypt never converts that way): asked on a terminal, as VeraCrypt
/// asks before what cannot be undone; `--batch-mode` or `--force` goes
/// ahead, and then (true) it is said once the change is made.
fn confirm_weaker_header(
    interactive: bool,
    a: &ChangePasswordArgs,
    was: Option<tcd_proto::contract::options::VolumeFormat>,
) -> Result<bool, Failure> {
    use tcd_proto::contract::options::VolumeFormat;
    if a.to != Some(crate::cli::Format::Truecrypt) || was == Some(VolumeFormat::TrueCrypt) {
        return Ok(false);
    }
    if a.force || a.batch_mode {
        return Ok(true);
    }
    crate::input::confirm(
        interactive,
        &format!("converting {} to the TrueCrypt format", a.volume.display()),
        &format!(
            "WARNING: {TRUECRYPT_ITERATIONS}. Convert it all the same? (Type 'YES' in capital \
             letters): "
        ),
        "--batch-mode (-q) or --force",
    )
    .map(|()| false)
}

/// What a header that stays (or becomes) TrueCrypt's cannot hold, refused
/// before any password, as `create --truecrypt` refuses it.
fn refuse_for_truecrypt(a: &ChangePasswordArgs) -> Result<(), Failure> {
    use crate::cli::{Format, Hash};
    let truecrypt = a.to.or(a.search.format()) == Some(Format::Truecrypt);
    let refuse = |what: String| {
        let to = if a.to.is_some() {
            ""
        } else {
            ", or give --to veracrypt"
        };
        Err(Failure {
            code: crate::bus::exit::USAGE,
            message: format!("{what}{to}"),
        })
    };
    if !truecrypt {
        return Ok(());
    }
    if a.new_pim.is_some_and(|p| p != 0) {
        return refuse("a TrueCrypt volume has no PIM: drop --new-pim".into());
    }
    match a.new_hash {
        Some(h) if !matches!(h, Hash::Sha512 | Hash::Whirlpool | Hash::Ripemd160) => {
            refuse(format!(
                "TrueCrypt's hashes are sha512, whirlpool and ripemd160, not {}",
                crate::cli::wire_name(h)
            ))
        }
        _ => Ok(()),
    }
}

/// The current password, PIM and keyfiles of a password change, checked
/// before the new ones are asked, as the outer volume's are before a
/// hidden volume's: a typo is said at once (and with --ask-again, VeraCrypt's
/// text mode on a terminal, they are asked again, until they open it or
/// Ctrl-C). The search the change then makes, narrowed to where the
/// header opened.
fn current_credentials(
    c: &Client,
    host: &File,
    a: &mut ChangePasswordArgs,
    pw: &mut Passwords,
    keyfiles: crate::input::Keyfiles,
) -> Result<(super::Credentials, SearchOptions), Failure> {
    let pim_given = a.secrets.pim;
    let mut prepared = KeyfilesEachTry::new(keyfiles);
    let mut retries = Retries::new(a.ask_again, None, &a.secrets.keyfiles);
    let mut wrong = false;
    loop {
        let keyfiles = prepared.next(&a.secrets.keyfiles)?;
        let prompt = current_password_prompt(&a.volume);
        let old = match pw.ask_unless_keyfiles_alone(&prompt, !a.secrets.keyfiles.is_empty()) {
            Err(f) if f.code == crate::bus::exit::CANCELLED && wrong => {
                return Err(super::gave_up(&a.volume));
            }
            old => old?,
        };
        // VeraCrypt's change of password asks "Enter current PIM".
        let prompt = match crate::input::veracrypt_line() {
            true => "Enter current PIM: ".to_owned(),
            false => crate::input::pim_prompt(&a.volume.display().to_string()),
        };
        super::settle_pim_asking(pw, &mut a.secrets, &a.search, &prompt)?;
        let keyfiles = if a.ask_keyfiles {
            let typed = crate::input::keyfile_questions("Enter current keyfile [none]: ")?;
            prepare_keyfiles(&typed)?.finish()?
        } else {
            keyfiles.finish()?
        };
        let mut o = options::search(&a.search, a.secrets.pim());
        match search::run_on(c, host, &a.volume, || {
            c.header_info(host, &old, &keyfiles, o.clone())
        }) {
            Ok(info) => {
                narrow_to(&mut o, &info);
                return Ok(((old, keyfiles), o));
            }
            Err(f) if f.code == crate::bus::exit::WRONG_PASSWORD && retries.another(pw) => {
                eprintln!("tcctl: {}", f.message);
                a.secrets.pim = pim_given;
                wrong = true;
            }
            Err(f) => return Err(f),
        }
    }
}

/// VeraCrypt's text mode's new keyfiles: the current ones kept unless
/// the answer is no, else typed one a line.
fn new_keyfiles_asked(
    current: &[zeroize::Zeroizing<Vec<u8>>],
) -> Result<Vec<zeroize::Zeroizing<Vec<u8>>>, Failure> {
    if !current.is_empty()
        && crate::input::terminal_yes_or_no("Keep current keyfiles? (y=Yes/n=No) [Yes]: ", true)?
    {
        return Ok(current.to_vec());
    }
    let typed = crate::input::keyfile_questions("Enter new keyfile [none]: ")?;
    prepare_keyfiles(&typed)?.finish()
}

/// `o` narrowed to the format, hash and encryption a header opened with.
fn narrow_to(o: &mut tcd_proto::contract::SearchOptions, info: &tcd_proto::contract::HeaderInfo) {
    use tcd_proto::contract::options::VolumeFormat;
    o.format = match info.format.as_deref() {
        Some("TrueCrypt") => Some(VolumeFormat::TrueCrypt),
        Some("VeraCrypt") => Some(VolumeFormat::VeraCrypt),
        _ => o.format,
    };
    o.hash = info.hash.clone().or(o.hash.take());
    o.encryption = xts_encryption(info).or(o.encryption.take());
}

/// The encryption a header opened with, to narrow a second search to: an
/// XTS one (a legacy CBC or LRW volume's encryption narrows no search;
/// its hash does).
fn xts_encryption(info: &tcd_proto::contract::HeaderInfo) -> Option<String> {
    info.encryption
        .clone()
        .filter(|_| info.mode.as_deref().is_none_or(|m| m == "xts-plain64"))
}

/// `tcctl backup-header`: into a new file only its owner may read. With
/// `--ask-file` (VeraCrypt's text mode), the file is asked for once the
/// password has opened the volume: the backup is made in memory first.
pub fn backup(ctx: Context<'_>, mut a: BackupHeaderArgs) -> Result<(), Failure> {
    if a.ask_file {
        a.backup = None;
    }
    if let Some(b) = &a.backup {
        refuse_dash(b, "writes the backup to a file, never to standard output")?;
    }
    a.volume = crate::input::shown_absolute(a.volume);
    super::refuse_tcd_device(ctx.at, &a.volume, false)?;
    // Said by its absolute path, as the volume is.
    a.backup = a.backup.map(crate::input::shown_absolute);
    let host = host::open_volume(&a.volume, false)?;
    let mut prepared = KeyfilesEachTry::new(prepare_keyfiles(&a.secrets.keyfiles)?);
    if let Some(b) = &a.backup {
        tcd_client::tools::check_backup_path(b)?;
    }
    let mut pw = Passwords::new(a.secrets.password_stdin, ctx.asking());
    let retries = Retries::new(false, None, &a.secrets.keyfiles);
    let (volume, pim_given) = (a.volume.clone(), a.secrets.pim);
    let made = super::asking_again(&volume, retries, &mut pw, |pw| {
        let keyfiles = prepared.next(&a.secrets.keyfiles)?;
        a.secrets.pim = pim_given;
        let (s, ask) = (&mut a.secrets, a.ask_keyfiles);
        let (password, keyfiles) = ask_credentials(ask, pw, s, &a.search, &a.volume, keyfiles)?;
        let out = match &a.backup {
            Some(b) => tcd_client::tools::new_backup_file(b)?,
            None => in_memory()?,
        };
        let c = Client::connect(ctx.at)?;
        let o = options::search(&a.search, a.secrets.pim());
        let r = search::run_on(&c, &host, &a.volume, || {
            c.backup_headers(&host, &out, &password, &keyfiles, o)
        });
        if let (Err(_), Some(b)) = (&r, &a.backup) {
            let _ = std::fs::remove_file(b);
        }
        r.map(|()| out)
    })?;
    let backup = match a.backup {
        Some(b) => b,
        None => write_asked_file(made)?,
    };
    println!(
        "headers of {} saved to {}",
        a.volume.display(),
        backup.display()
    );
    Ok(())
}

/// A file in memory alone, for a backup whose file is asked afterwards.
fn in_memory() -> Result<File, Failure> {
    // SAFETY: the name is NUL-terminated and outlives the call;
    // memfd_create returns a new descriptor or -1.
    let fd = unsafe { libc::memfd_create(c"tcd-header-backup".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(Failure::invalid(format!(
            "cannot hold the backup in memory: {e}"
        )));
    }
    // SAFETY: `fd` was just returned by memfd_create and is owned by nothing else.
    Ok(unsafe { <File as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

/// Asks the backup file's name (VeraCrypt's "Enter filename:"), again
/// while it is taken, and writes `made` there.
fn write_asked_file(mut made: File) -> Result<std::path::PathBuf, Failure> {
    let path = loop {
        let typed = crate::input::terminal_line("Enter filename: ")?;
        if typed.is_empty() {
            return Err(Failure {
                code: crate::bus::exit::CANCELLED,
                message: "no backup file given: nothing saved".into(),
            });
        }
        let path = crate::input::shown_absolute(std::path::PathBuf::from(typed));
        match tcd_client::tools::check_backup_path(&path) {
            Ok(()) => break path,
            Err(f) => eprintln!("tcctl: {}", f.message),
        }
    };
    let mut out = tcd_client::tools::new_backup_file(&path)?;
    std::io::Seek::rewind(&mut made)
        .and_then(|_| std::io::copy(&mut made, &mut out))
        .and_then(|_| out.sync_all())
        .map_err(|e| {
            let _ = std::fs::remove_file(&path);
            Failure::invalid(format!("cannot write {}: {e}", path.display()))
        })?;
    Ok(path)
}

/// `-`, which elsewhere means standard input or output, is no header
/// file's name here: refused rather than made or looked for as a file.
fn refuse_dash(backup: &std::path::Path, what: &str) -> Result<(), Failure> {
    if backup.as_os_str() != "-" {
        return Ok(());
    }
    Err(Failure {
        code: crate::bus::exit::USAGE,
        message: format!("the header backup {what} (`-`): name a file (./- for one called -)"),
    })
}

/// A host too small for an embedded backup is said before anything is
/// asked (the daemon refuses it too).
fn refuse_no_embedded(host: &std::fs::File, volume: &std::path::Path) -> Result<(), Failure> {
    use tcd_proto::contract::options::{MIN_WITH_BACKUP_BYTES, no_embedded_backup};
    let size = host
        .metadata()
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len());
    match size.filter(|&n| n < MIN_WITH_BACKUP_BYTES) {
        Some(size) => Err(Failure::invalid(format!(
            "{}: {}",
            volume.display(),
            no_embedded_backup(size)
        ))),
        None => Ok(()),
    }
}

/// As VeraCrypt asks before it restores: the headers there now, and any
/// password changed since the backup, are gone for good.
fn confirm_restore(ctx: Context<'_>, a: &RestoreHeaderArgs) -> Result<(), Failure> {
    // The embedded backup follows each password change; a file keeps the
    // password it was saved with.
    let (from, lost) = match &a.backup {
        Some(b) => (
            b.display().to_string(),
            "a password or keyfile changed since that backup no longer opens it",
        ),
        None => (
            "its embedded backup".into(),
            "the primary header is rewritten from the backup, which the password opens",
        ),
    };
    crate::input::confirm(
        ctx.interactive,
        &format!("restoring the header of {}", a.volume.display()),
        &format!(
            "WARNING: this replaces the headers of {} with those of {from}: {lost}. Are you \
             sure? (Type 'YES' in capital letters): ",
            a.volume.display()
        ),
        "--batch-mode (VeraCrypt's --force)",
    )
}

/// `tcctl restore-header`.
pub fn restore(ctx: Context<'_>, mut a: RestoreHeaderArgs) -> Result<(), Failure> {
    if let Some(b) = &a.backup {
        refuse_dash(b, "reads the backup from a file, never from standard input")?;
    }
    a.volume = crate::input::shown_absolute(a.volume);
    super::refuse_tcd_device(ctx.at, &a.volume, false)?;
    // Said by its absolute path, as the volume is.
    a.backup = a.backup.map(crate::input::shown_absolute);
    let host = host::open_volume(&a.volume, true)?;
    if a.backup.is_none() {
        refuse_no_embedded(&host, &a.volume)?;
    }
    // clap asks for one of the two: without a file, the embedded one.
    let file = a
        .backup
        .as_deref()
        .map(tcd_client::tools::open_backup)
        .transpose()?;
    let keyfiles = prepare_keyfiles(&a.secrets.keyfiles)?;
    // Said before anything is asked, as mount and expand say it.
    let c = Client::connect(ctx.at)?;
    super::volumes::check_not_mounted(&c.list()?, &a.volume)?;
    if !a.batch_mode {
        confirm_restore(ctx, &a)?;
    }
    let mut pw = Passwords::new(a.secrets.password_stdin, ctx.asking());
    let retries = Retries::new(false, None, &a.secrets.keyfiles);
    let (volume, pim_given) = (a.volume.clone(), a.secrets.pim);
    let mut prepared = KeyfilesEachTry::new(keyfiles);
    // From a file, the password is the backup's, asked for by its name as
    // VeraCrypt asks for "the header stored in backup file".
    let asked_for = match &a.backup {
        Some(b) => format!("the header stored in {}", crate::input::shown(b)).into(),
        None => a.volume.clone(),
    };
    let used = super::asking_again(&volume, retries, &mut pw, |pw| {
        let keyfiles = prepared.next(&a.secrets.keyfiles)?;
        a.secrets.pim = pim_given;
        let (s, ask) = (&mut a.secrets, a.ask_keyfiles);
        let (password, keyfiles) = ask_credentials(ask, pw, s, &a.search, &asked_for, keyfiles)?;
        let mut o = options::search(&a.search, a.secrets.pim());
        o.skip_data_check = a.skip_data_check.then_some(true);
        // The daemon reads the backup from where the descriptor stands:
        // from its start again at each try.
        if let Some(mut f) = file.as_ref() {
            std::io::Seek::rewind(&mut f).map_err(|e| {
                Failure::invalid(format!("cannot read the header backup again: {e}"))
            })?;
        }
        search::run(&c, || {
            c.restore_headers(&host, file.as_ref(), &password, &keyfiles, o)
        })
        .map_err(|f| of_the_backup(f, file.is_some()))
    })?;
    match &a.backup {
        Some(b) => println!(
            "{}: header restored from {} (the {used} in it)",
            a.volume.display(),
            b.display()
        ),
        None => println!("{}: header restored from its {used}", a.volume.display()),
    }
    Ok(())
}
