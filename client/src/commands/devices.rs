//! `tcctl mount-devices`: TrueCrypt's Auto-Mount Devices. One password
//! (and keyfiles, PIM) tried on every block device that nothing uses and
//! that the user may open; each that opens is mounted where a plain
//! `tcctl mount` would put it.

use super::Context;
use crate::bus::{Client, Failure, exit};
use crate::cli::{MountDevicesArgs, MountFilesystem};
use crate::input::{Passwords, prepare_keyfiles};
use crate::{host, options, output, search};
use std::path::{Path, PathBuf};
use tcd_proto::contract::MountOptions;

/// Tries every candidate in turn: a wrong password moves on, and so does
/// any other failure (said); the command fails (`WRONG_PASSWORD`) only
/// when nothing opened.
pub fn mount_all(ctx: Context<'_>, mut a: MountDevicesArgs) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    // Hosts tcd has open, and the devices it made: neither is tried.
    let candidates: Vec<PathBuf> = tcd_client::devices::free(&c)?;
    if candidates.is_empty() {
        return Err(Failure::not_found(
            "no device to try: every one is in use (mounted, swap, a partition table, \
             a tcd volume) or there is none"
                .into(),
        ));
    }
    let keyfiles = prepare_keyfiles(&a.secrets.keyfiles)?;
    let mut pw = Passwords::new(a.secrets.password_stdin, ctx.asking());
    // With --non-interactive (or VeraCrypt's -p ""), keyfiles alone, as
    // `tcctl mount` opens with them.
    let password =
        pw.ask_unless_keyfiles_alone("Password for every device: ", !keyfiles.is_empty())?;
    let pim = match a.secrets.query_pim && a.secrets.pim.is_none() {
        true => pw.query_pim("PIM (Enter for none): ")?,
        false => pw.pim(
            a.secrets.pim,
            a.search.format() == Some(crate::cli::Format::Truecrypt),
            "PIM (Enter for none): ",
        )?,
    };
    a.secrets.pim = Some(pim);
    let keyfiles = match a.ask_keyfiles && keyfiles.is_empty() {
        true => crate::input::read_keyfiles(&crate::input::keyfile_questions(
            "Enter keyfile [none]: ",
        )?)?,
        false => keyfiles.finish()?,
    };
    let (mut mounted, mut unopened) = (0, 0);
    // The first failure other than the password's, for the exit code.
    let mut failed: Option<u8> = None;
    for (i, device) in candidates.iter().enumerate() {
        // A device can be slow to open or long to search: the user sees
        // which one is being tried until the search's own progress, or
        // the device's result, takes the line.
        status(&format!(
            "{}: trying (device {} of {})",
            device.display(),
            i + 1,
            candidates.len()
        ));
        match try_device(&c, device, &a, &password, &keyfiles)? {
            Tried::Mounted => mounted += 1,
            Tried::NotYours => unopened += 1,
            Tried::Not => {}
            Tried::Failed(code) => {
                failed.get_or_insert(code);
            }
        }
    }
    status("");
    let tried = candidates.len() - unopened;
    println!(
        "mounted {mounted} of the {} tried{}",
        output::count(tried, "device"),
        match unopened {
            0 => String::new(),
            n => format!(" ({n} you may not open left untried)"),
        }
    );
    outcome(mounted, tried, failed)
}

/// How `mount-devices` ends: `mounted` of the `tried` devices, `failed`
/// the first refusal that was not the password's.
fn outcome(mounted: usize, tried: usize, failed: Option<u8>) -> Result<(), Failure> {
    match (mounted, tried) {
        (0, 0) => Err(Failure {
            code: exit::PERMISSION_DENIED,
            message: "no device was tried: you may open none of them (polkit's \
                      org.tcd.use-device decides)"
                .into(),
        }),
        // Opened, or tried, but not mounted for another reason (said
        // above): that reason's code, not the wrong password's.
        (0, _) if failed.is_some() => Err(Failure {
            code: failed.unwrap_or(exit::FAILED),
            message: "no device was mounted: what the password opens could not be mounted (said \
                      above)"
                .into(),
        }),
        (0, _) => Err(Failure {
            code: exit::WRONG_PASSWORD,
            message: "the password opens none of the devices".into(),
        }),
        _ => Ok(()),
    }
}

/// What became of one device.
enum Tried {
    Mounted,
    /// Not the user's to open: not theirs to try.
    NotYours,
    /// Not opened by the password, or not opened at all: said why.
    Not,
    /// Tried, and refused for another reason than the password (no
    /// filesystem to mount, say): said why; the refusal's exit code.
    Failed(u8),
}

/// `line` on standard error in place of the one before, when it is a
/// terminal.
fn status(line: &str) {
    use std::io::{IsTerminal, Write};
    let mut err = std::io::stderr();
    if err.is_terminal() {
        let _ = write!(err, "\r\x1b[K{line}");
        let _ = err.flush();
    }
}

/// What came of one device, on standard output, the status line cleared.
fn say(line: &str) {
    status("");
    println!("{line}");
}

/// Tries the password on `device`, and says what came of it.
fn try_device(
    c: &Client,
    device: &Path,
    a: &MountDevicesArgs,
    password: &[u8],
    keyfiles: &[zeroize::Zeroizing<Vec<u8>>],
) -> Result<Tried, Failure> {
    let shown = device.display().to_string();
    let file = match host::open(device, !a.readonly) {
        Ok(f) => f,
        Err(f) if f.code == exit::PERMISSION_DENIED => return Ok(Tried::NotYours),
        Err(f) => {
            say(&format!("{shown}: not opened ({})", f.message));
            return Ok(Tried::Not);
        }
    };
    let o = mount_options(a);
    match search::run_for(c, &shown, || c.mount(&file, &shown, password, keyfiles, o)) {
        Ok(path) => {
            // As `tcctl mount` says it: a volume with no filesystem
            // mounted is attached.
            let row = c.list()?.into_iter().find(|v| v.object == path);
            match row.as_ref().map(|v| (v.mount_point(), v.device())) {
                Some((Some(at), _)) => say(&format!("{shown}: mounted on {at}")),
                Some((None, device)) => say(&format!("{shown}: attached as {device}")),
                None => say(&format!("{shown}: mounted")),
            }
            return Ok(Tried::Mounted);
        }
        Err(f) if f.code == exit::WRONG_PASSWORD => say(&format!("{shown}: not opened")),
        Err(f) => {
            say(&format!("{shown}: not mounted ({})", f.message));
            return Ok(Tried::Failed(f.code));
        }
    }
    Ok(Tried::Not)
}

fn mount_options(a: &MountDevicesArgs) -> MountOptions {
    MountOptions {
        readonly: Some(a.readonly),
        filesystem: Some(match a.filesystem {
            MountFilesystem::None => tcd_proto::contract::options::MountFilesystem::None,
            _ => tcd_proto::contract::options::MountFilesystem::Auto,
        }),
        ..Default::default()
    }
    .with_search(options::search(&a.search, a.secrets.pim()))
}
