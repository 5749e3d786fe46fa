//! The commands, one module per group; each function runs one command.

pub mod backends;
pub mod devices;
pub mod expand;
pub mod favorites;
pub mod headers;
pub mod keyfiles;
pub mod monitor;
pub mod tokens;
pub mod volumes;
pub mod watch;

use crate::bus::{Failure, Where};
use crate::cli::{Format, Search, Secrets};
use crate::input::{Keyfiles, Passwords};
use zeroize::Zeroizing;

/// A password and the keyfiles' contents.
pub type Credentials = (Zeroizing<Vec<u8>>, Vec<Zeroizing<Vec<u8>>>);

/// Runs `attempt` (which asks the password with `pw`) until the password
/// opens `volume`: a wrong one typed on the terminal is said and asked
/// again as `retries` allows; Ctrl-D at the next prompt gives up, with the
/// wrong password's exit code, as cryptsetup's last try ends.
pub fn asking_again<T>(
    volume: &std::path::Path,
    mut retries: crate::input::Retries,
    pw: &mut Passwords,
    mut attempt: impl FnMut(&mut Passwords) -> Result<T, Failure>,
) -> Result<T, Failure> {
    use crate::bus::exit;
    let mut wrong = false;
    loop {
        match attempt(pw) {
            Err(f) if f.code == exit::WRONG_PASSWORD && retries.another(pw) => {
                eprintln!("tcctl: {}", f.message);
                wrong = true;
            }
            Err(f) if f.code == exit::CANCELLED && wrong => return Err(gave_up(volume)),
            r => return r,
        }
    }
}

/// Ctrl-D at a question after a wrong password (the password's, or a
/// later one's): the wrong password stands.
pub fn gave_up(volume: &std::path::Path) -> Failure {
    Failure {
        code: crate::bus::exit::WRONG_PASSWORD,
        message: format!(
            "{}: input ended before the volume opened: the last password tried was wrong",
            volume.display()
        ),
    }
}

/// What opening `volume` asks, in VeraCrypt's order: its password, its
/// PIM (see [`settle_pim`]), then the PIN of any token keyfile.
pub fn ask_to_open(
    pw: &mut Passwords,
    s: &mut Secrets,
    search: &Search,
    volume: &std::path::Path,
    keyfiles: Keyfiles,
) -> Result<Credentials, Failure> {
    let password = pw.ask_unless_keyfiles_alone(
        &crate::input::password_prompt(&volume.display().to_string()),
        !keyfiles.is_empty(),
    )?;
    settle_pim(pw, s, search, volume)?;
    let keyfiles = keyfiles.finish()?;
    opens_something(volume, password, keyfiles)
}

/// [`ask_to_open_then_keyfiles`] when `ask_keyfiles` (VeraCrypt's text
/// mode asking them), [`ask_to_open`] with `keyfiles` otherwise.
pub fn ask_credentials(
    ask_keyfiles: bool,
    pw: &mut Passwords,
    s: &mut Secrets,
    search: &Search,
    volume: &std::path::Path,
    keyfiles: Keyfiles,
) -> Result<Credentials, Failure> {
    match ask_keyfiles {
        true => ask_to_open_then_keyfiles(pw, s, search, volume),
        false => ask_to_open(pw, s, search, volume, keyfiles),
    }
}

/// VeraCrypt's text mode's order on a terminal, its line naming no
/// keyfile: the password, the PIM, then keyfiles typed one a line.
fn ask_to_open_then_keyfiles(
    pw: &mut Passwords,
    s: &mut Secrets,
    search: &Search,
    volume: &std::path::Path,
) -> Result<Credentials, Failure> {
    let password = pw.ask(&crate::input::password_prompt(
        &volume.display().to_string(),
    ))?;
    settle_pim(pw, s, search, volume)?;
    let typed = crate::input::keyfile_questions("Enter keyfile [none]: ")?;
    let keyfiles = crate::input::prepare_keyfiles(&typed)?.finish()?;
    opens_something(volume, password, keyfiles)
}

/// The credentials, unless both are empty: that opens no volume, a wrong
/// password said at once (as `-t -p ""` without a keyfile is).
fn opens_something(
    volume: &std::path::Path,
    password: Zeroizing<Vec<u8>>,
    keyfiles: Vec<Zeroizing<Vec<u8>>>,
) -> Result<Credentials, Failure> {
    if password.is_empty() && keyfiles.is_empty() {
        return Err(Failure {
            code: crate::bus::exit::WRONG_PASSWORD,
            message: format!(
                "{}: an empty password with no keyfile opens no volume",
                volume.display()
            ),
        });
    }
    Ok((password, keyfiles))
}

/// Settles the PIM of `s` for `volume`: the one given, else asked on a
/// terminal (see [`Passwords::pim`]).
pub fn settle_pim(
    pw: &mut Passwords,
    s: &mut Secrets,
    search: &Search,
    volume: &std::path::Path,
) -> Result<(), Failure> {
    let prompt = crate::input::pim_prompt(&volume.display().to_string());
    settle_pim_asking(pw, s, search, &prompt)
}

/// [`settle_pim`] with the question `prompt`.
pub fn settle_pim_asking(
    pw: &mut Passwords,
    s: &mut Secrets,
    search: &Search,
    prompt: &str,
) -> Result<(), Failure> {
    s.pim = Some(match s.query_pim && s.pim.is_none() {
        true => pw.query_pim(prompt)?,
        false if s.no_pim_question => s.pim(),
        false => pw.pim(s.pim, search.format() == Some(Format::Truecrypt), prompt)?,
    });
    Ok(())
}

/// Refuses, before any password is asked, a `--backend` the daemon does
/// not have, naming those it has.
pub fn check_backend(at: Where<'_>, search: &Search) -> Result<(), Failure> {
    let Some(name) = &search.backend else {
        return Ok(());
    };
    let (_, backends) = crate::bus::Client::connect(at)?.backends()?;
    let names: Vec<&str> = backends
        .iter()
        .map(|b| b.name.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    if names.contains(&name.as_str()) {
        return Ok(());
    }
    Err(Failure {
        code: crate::bus::exit::USAGE,
        message: format!(
            "no backend named {name}; the daemon has {}",
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        ),
    })
}

/// What every command is given besides its own arguments.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// Where the daemon is.
    pub at: Where<'a>,
    /// Report the outcome as a desktop notification too.
    pub notify: bool,
    /// Passwords may be asked for (not --non-interactive).
    pub interactive: bool,
    /// VeraCrypt's `-p ""`: the password is the empty one.
    pub empty_password: bool,
}

impl Context<'_> {
    /// How passwords are come by, for `Passwords::new`.
    pub fn asking(&self) -> crate::input::Asking {
        use crate::input::Asking;
        match (self.interactive, self.empty_password) {
            (_, true) => Asking::EmptyGiven,
            (true, false) => Asking::Yes,
            (false, false) => Asking::No,
        }
    }
}

/// A block device tcd serves a volume on, named where a container is
/// meant (`create`, `expand`, a header command): it holds that volume's
/// decrypted data, no header, so the command is refused before anything
/// is asked, naming the volume. `exit::BUSY` for `create`, which would
/// overwrite it; `exit::INVALID_ARGUMENT` for the rest. Without a daemon
/// to ask, nothing is refused here.
pub fn refuse_tcd_device(
    at: Where<'_>,
    path: &std::path::Path,
    create: bool,
) -> Result<(), Failure> {
    let Some(name) = path.to_str() else {
        return Ok(());
    };
    // Listed aside: `create` and `expand` block the interrupt signals
    // later, which a connection's threads started here must not take.
    let listed = volumes::listed_aside(at).unwrap_or_default();
    // A mount point named for its volume: the volume is named instead.
    if !create && path.is_dir() {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some(row) = listed.iter().find(|r| {
            r.mount_point()
                .is_some_and(|m| std::path::Path::new(m) == canonical)
        }) {
            return Err(Failure::invalid(format!(
                "{name} is the mount point of the volume {}: name the volume itself ({})",
                row.host(),
                crate::output::shell_word(row.host())
            )));
        }
    }
    let Some(row) = listed
        .iter()
        .find(|r| !r.device().is_empty() && r.device() == name)
    else {
        return Ok(());
    };
    let how = match row.mount_point() {
        Some(at) => format!("mounted on {at}"),
        None => "attached".to_owned(),
    };
    let host = row.host();
    let word = crate::output::shell_word(host);
    Err(match create {
        true => Failure {
            code: crate::bus::exit::BUSY,
            message: format!(
                "{name} is in use: it is the device of the volume {host} ({how}); `tcctl \
                 dismount {word}` frees it"
            ),
        },
        false => Failure::invalid(format!(
            "{name} is the device of the volume {host} ({how}): it holds its decrypted data, \
             no header; name the volume itself ({word})"
        )),
    })
}

/// A daemon that went away, waited for: connected again every 2 s until
/// it answers (`watch` and `monitor` outlive a restart).
pub fn wait_for_daemon(at: Where<'_>) -> crate::bus::Client {
    loop {
        std::thread::sleep(std::time::Duration::from_secs(2));
        if let Ok(c) = crate::bus::Client::connect(at) {
            return c;
        }
    }
}
