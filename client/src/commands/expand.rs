//! `tcctl expand`: VeraCrypt's Expand Volume, made by the daemon on a
//! container the user may write.

use super::{Context, ask_to_open};
use crate::bus::{Client, Failure, exit};
use crate::cli::ExpandArgs;
use crate::input::{KeyfilesEachTry, Passwords, Retries, prepare_keyfiles};
use crate::{host, options, search};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tcd_proto::contract::ExpandOptions;
use tcd_proto::contract::options::{EXPANDED_BY_BACKUP, HOLDS_HIDDEN};

/// The container's new size from `--size` or `--add`; `None` for a device
/// (it grows to the device's size).
fn new_size(a: &ExpandArgs, host: &std::fs::File) -> Result<Option<u64>, Failure> {
    let path = a.volume.display();
    let meta = host
        .metadata()
        .map_err(|e| Failure::invalid(format!("{path}: {e}")))?;
    if !meta.is_file() {
        if a.size.is_some() || a.add.is_some() {
            return Err(Failure::invalid(format!(
                "{path} is a device: its volume grows to the device's size; give neither --size nor --add"
            )));
        }
        return Ok(None);
    }
    let size = match (a.size, a.add) {
        (Some(n), _) => n,
        (None, Some(d)) => meta.len().saturating_add(d),
        (None, None) => {
            return Err(Failure {
                code: exit::USAGE,
                message: format!("{path} is a container: give its new size with --size or --add"),
            });
        }
    };
    // A container never shrinks: said before the password is asked. The
    // daemon judges the rest against the data area (a container an
    // interrupted expansion left grown is expanded again to the same size).
    if size < meta.len() {
        return Err(Failure {
            code: exit::INVALID_ARGUMENT,
            message: format!(
                "{path} holds {} bytes already: a volume cannot shrink; give a --size above that, \
                 or --add the bytes to add",
                meta.len()
            ),
        });
    }
    Ok(Some(size))
}

/// `tcctl expand`.
pub fn expand(ctx: Context<'_>, mut a: ExpandArgs) -> Result<(), Failure> {
    a.volume = crate::input::shown_absolute(a.volume);
    super::refuse_tcd_device(ctx.at, &a.volume, false)?;
    if a.holds_hidden {
        return Err(Failure::invalid(HOLDS_HIDDEN.to_owned()));
    }
    let host = host::open_volume(&a.volume, true)?;
    let size = new_size(&a, &host)?;
    if let (Some(size), Ok(meta)) = (size, host.metadata()) {
        let more = size.saturating_sub(meta.len());
        host::check_room(&host, &a.volume, more, a.no_random_fill)?;
    }
    let keyfiles = prepare_keyfiles(&a.secrets.keyfiles)?;
    // Set before the first connection, so that every thread it starts
    // leaves the signals to the one that reports them.
    let was = host.metadata().map(|m| m.len()).ok();
    let begun = interrupt_report(&a.volume, size, was);
    let c = Client::connect(ctx.at)?;
    super::volumes::check_not_mounted(&c.list()?, &a.volume)?;
    if !a.batch_mode {
        confirm_expansion(ctx.interactive, &a.volume)?;
    }
    let mut pw = Passwords::new(a.secrets.password_stdin, ctx.asking());
    let x = ExpandOptions {
        size,
        no_random_fill: Some(a.no_random_fill),
        holds_hidden: None,
        filesystem_as_is: Some(a.filesystem_as_is),
    };
    let show = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let retries = Retries::new(false, None, &a.secrets.keyfiles);
    let (volume, pim_given) = (a.volume.clone(), a.secrets.pim);
    let mut prepared = KeyfilesEachTry::new(keyfiles);
    let (data, fs, grown, note) = super::asking_again(&volume, retries, &mut pw, |pw| {
        let keyfiles = prepared.next(&a.secrets.keyfiles)?;
        a.secrets.pim = pim_given;
        let (password, keyfiles) = ask_to_open(pw, &mut a.secrets, &a.search, &a.volume, keyfiles)?;
        begun.store(true, Ordering::Relaxed);
        let o = options::search(&a.search, a.secrets.pim());
        search::run_on(&c, &host, &a.volume, || {
            c.expand(&host, &password, &keyfiles, o, x.clone(), show)
        })
    })?;
    let path = a.volume.display();
    println!("{path}: expanded; the volume holds {data} bytes");
    if grown {
        println!("{path}: its {fs} filesystem was grown to fill it");
    }
    for line in note.lines() {
        if line == EXPANDED_BY_BACKUP {
            eprintln!("tcctl: warning: {path}: {line}");
        } else {
            println!("{path}: {line}");
        }
    }
    Ok(())
}

/// A hidden volume inside cannot be seen with the outer volume's password;
/// expanding overwrites its backup header, and the grown filesystem's new
/// metadata may land on its data: asked as VeraCrypt's expander warns.
fn confirm_expansion(interactive: bool, volume: &std::path::Path) -> Result<(), Failure> {
    let path = volume.display();
    crate::input::confirm(
        interactive,
        &format!("expanding {path}"),
        &format!(
            "WARNING: if {path} holds a hidden volume, expanding it may damage the hidden \
             volume: its embedded backup header is overwritten, and the grown outer filesystem \
             may write over its data (give --holds-hidden to be refused instead). Are you sure? \
             (Type 'YES' in capital letters): "
        ),
        "--batch-mode",
    )
}

/// From now on an interrupt says where the volume stands: untouched until
/// the returned flag is set (the password given, the daemon at work), then
/// as [`stopped`] says.
fn interrupt_report(
    volume: &std::path::Path,
    size: Option<u64>,
    was: Option<u64>,
) -> Arc<AtomicBool> {
    let begun = Arc::new(AtomicBool::new(false));
    let word = crate::output::shell_word(&volume.to_string_lossy()).into_owned();
    let again = match size {
        Some(n) => format!("tcctl expand --size {n} {word}"),
        None => format!("tcctl expand {word}"),
    };
    let path = volume.display().to_string();
    let seen = begun.clone();
    crate::interrupt::on_interrupt(move || {
        if seen.load(Ordering::Relaxed) {
            let now = std::fs::metadata(&path).map(|m| m.len()).ok();
            stopped(&path, &again, was.zip(now).filter(|(was, now)| now > was))
        } else {
            format!("nothing was done to {path}")
        }
    });
    begun
}

/// Where an interrupted expansion leaves the volume (see the daemon's
/// `volume::expand`): its primary header still opens it at its old size,
/// and the same command again finishes whatever was begun. A file that
/// had grown (`grown`: its size before and now) is said to have.
fn stopped(path: &str, again: &str, grown: Option<(u64, u64)>) -> String {
    match grown {
        Some((was, now)) => format!(
            "{path} has grown from {was} to {now} bytes, but its volume keeps its old size (its \
             primary header opens it so until the expansion is finished): `{again}` finishes \
             the expansion"
        ),
        None => format!(
            "{path} keeps its old size; if it had begun to grow, `{again}` finishes the \
             expansion"
        ),
    }
}
