//! Favorite volumes, as `tcctl favorites` and the desktop's Favorites
//! handle them: kept by the daemon, their passwords (with consent) in the
//! user's own keyring, read here in the user's session and never by the
//! daemon, which only gets a password for one mount. Nothing typed or
//! stored for one favorite is tried on another.

use crate::bus::{Client, Failure, Favorite, exit};
use crate::input::read_keyfiles;
use crate::{host, keystore, options};
use std::path::{Path, PathBuf};
use tcd_proto::contract::options::VolumeFormat;
use zbus::zvariant::OwnedObjectPath;
use zeroize::Zeroizing;

/// Asks the user for a password, saying what for.
pub type Ask<'a> = &'a mut dyn FnMut(&str) -> Result<Zeroizing<Vec<u8>>, Failure>;

/// The keyring entry of a favorite: the system's apart from the user's.
pub fn key_of(name: &str, system: bool) -> String {
    if system {
        format!("system/{name}")
    } else {
        name.to_owned()
    }
}

/// Whether a favorite of yours has a password in your keyring.
pub fn in_keyring(f: &Favorite) -> bool {
    keystore::load(&key_of(&f.settings.name, f.system))
        .ok()
        .flatten()
        .is_some()
}

/// The name a favorite keeps: a device by its stable link, a file by its
/// absolute path.
pub fn host_name(volume: &Path) -> Result<String, Failure> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(volume).map_err(|e| {
        Failure::not_found(match e.kind() {
            std::io::ErrorKind::NotFound => format!("{}: no such file or device", volume.display()),
            _ => format!("{}: {e}", volume.display()),
        })
    })?;
    if meta.is_dir() {
        // VeraCrypt's order is volume then mount point; here the name
        // comes first.
        return Err(Failure::invalid(format!(
            "{} is a folder, not a volume: favorites add NAME VOLUME (the mount point is \
             --mount-point)",
            volume.display()
        )));
    }
    if meta.file_type().is_block_device() {
        return tcd_proto::devices::stable_name(volume).ok_or_else(|| {
            Failure::invalid(format!(
                "{} has no stable name (no /dev/disk/by-id or by-partuuid link, no partition UUID); \
                 a favorite must not follow whatever disk gets that name next",
                volume.display()
            ))
        });
    }
    std::fs::canonicalize(volume)
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| Failure::not_found(format!("{}: {e}", volume.display())))
}

/// Where a favorite's volume is now.
fn locate(host: &str) -> Result<PathBuf, Failure> {
    tcd_proto::devices::locate(host)
        .ok_or_else(|| Failure::not_found(format!("{host} is not present")))
}

/// One favorite mounted.
pub struct Mounted {
    /// Its mount point, or its block device.
    pub at: String,
    /// Only its block device: no filesystem was mounted.
    pub attached: bool,
    /// Its block device.
    pub device: String,
    /// The keyring the typed password was kept in, when asked to.
    pub kept: Option<String>,
}

/// After a wrong password: the favorite's settings that would narrow the
/// search, as `favorites add` sets them (a favorite's mount takes no
/// `--hash` of its own).
pub fn narrowing(f: &tcd_proto::contract::favorite::Favorite) -> Option<String> {
    let truecrypt = f.format == Some(VolumeFormat::TrueCrypt);
    let missing: Vec<&str> = [
        ("--hash", f.hash.is_none()),
        ("--format", f.format.is_none()),
        ("--pim", f.pim == 0 && !truecrypt),
    ]
    .iter()
    .filter(|(_, missing)| *missing)
    .map(|(name, _)| *name)
    .collect();
    let mut notes: Vec<String> = match missing.as_slice() {
        [] => None,
        [one] => Some(((*one).to_owned(), "narrows")),
        [first @ .., last] => Some((format!("{} and {last}", first.join(", ")), "narrow")),
    }
    .map(|(list, verb)| {
        format!("giving the favorite {list} (`tcctl favorites add --replace`) {verb} the search")
    })
    .into_iter()
    .collect();
    // Its PIM is the only one tried: said, as `mount --pim` says it.
    if f.pim != 0 {
        notes.insert(0, format!("only the favorite's PIM {} was tried", f.pim));
    }
    // As `mount --system-encryption` says: where the search looked.
    if f.system_encryption {
        notes.push(
            "only a system drive's header (in its first track) was searched, as the favorite's \
             -m system (--system-encryption) asks: a volume in a file or partition of its own \
             opens without it (`tcctl favorites add --replace`)"
                .into(),
        );
    }
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// What `mount_one` asks the favorite `name`'s password with.
pub fn password_prompt(name: &str) -> String {
    crate::input::password_prompt(name)
}

/// Mounts one favorite: with its stored password if there is one, else
/// (or when that one is wrong) with one asked for, and asked again while
/// it is wrong and `again` says to; `note` hears why a stored one was not
/// used, and each wrong password asked.
pub fn mount_one(
    c: &Client,
    f: &Favorite,
    ask: Ask<'_>,
    again: &dyn Fn() -> bool,
    remember: bool,
    note: &dyn Fn(&str),
) -> Result<Mounted, Failure> {
    let host_path = locate(&f.settings.host)?;
    let host = host::open_volume(&host_path, !f.settings.readonly)?;
    let keyfiles = read_kept_keyfiles(&f.settings.keyfiles)?;
    // A system-encrypted partition's header lies in its drive's first
    // track, read here with the user's rights as `tcctl mount -m system`
    // does; the daemon applies the rest of the favorite.
    let header = if f.settings.system_encryption {
        host::system_header(&host_path, &host)?
    } else {
        None
    };
    // The volume's password first, then the hidden one's, as `mount
    // --protect-hidden` asks them.
    let key = key_of(&f.settings.name, f.system);
    let (stored, by_file) = stored_password(f, &key, note);
    let given = stored.is_some();
    let prompt = password_prompt(&f.settings.name);
    let password = match stored {
        Some(p) => p,
        None => ask(&prompt)?,
    };
    let hidden = match f.settings.protect_hidden {
        true => Some(ask(&format!(
            "Hidden volume password of {} (to protect it): ",
            f.settings.name
        ))?),
        false => None,
    };
    let hidden_keyfiles = read_kept_keyfiles(&f.settings.protect_hidden_keyfiles)?;
    let mount = |password: &[u8]| {
        let mut o = options::favorite_mount(
            &f.settings,
            f.system,
            hidden
                .as_deref()
                .map(|h| (h.as_slice(), hidden_keyfiles.as_slice())),
        );
        o.detached_header = header.clone();
        crate::search::run_hinted(
            c,
            "",
            |said| hint_for(&f.settings, said),
            || c.mount(&host, &f.settings.host, password, &keyfiles, o),
        )
    };
    let asking = Asking {
        ask,
        again,
        note,
        prompt: &prompt,
    };
    let (path, kept) = match given {
        true => match mount(&password) {
            Err(e) if by_file => {
                return Err(from_password_file(e, f));
            }
            // A kept password the volume no longer takes: said, asked, and
            // replaced there by the one that opens it.
            Err(e) if e.code == exit::WRONG_PASSWORD && !is_hidden_failure(&e) => {
                note("the password in your keyring does not open it");
                let asked = (asking.ask)(&prompt).map_err(|e| keyring_refused(e, f))?;
                let (path, asked) = asking.mount(&mount, asked)?;
                (path, remembered(true, &key, &asked)?)
            }
            Err(e) => return Err(e),
            Ok(p) => (p, None),
        },
        false => {
            let (path, password) = asking.mount(&mount, password)?;
            (path, remembered(remember, &key, &password)?)
        }
    };
    Ok(Mounted {
        kept,
        ..mounted_at(c, &path)?
    })
}

/// A favorite's password not asked for: from a system favorite's password
/// file (named only to administrators) when this user can read it (then
/// `true`), else from the keyring.
fn stored_password(
    f: &Favorite,
    key: &str,
    note: &dyn Fn(&str),
) -> (Option<Zeroizing<Vec<u8>>>, bool) {
    if let Some(p) = system_password_file(f, note) {
        return (Some(p), true);
    }
    let kept = keystore::load(key).unwrap_or_else(|e| {
        note(&e.message);
        None
    });
    (kept, false)
}

/// How a favorite's password is asked, and asked again after a wrong one.
struct Asking<'a, 'b> {
    ask: Ask<'b>,
    again: &'a dyn Fn() -> bool,
    note: &'a dyn Fn(&str),
    prompt: &'a str,
}

impl Asking<'_, '_> {
    /// `mount` with `password`, asked: while it is wrong (the volume's
    /// own, not the hidden one's) and `again` says so, said and asked
    /// again. What mounted, and the password that opened it.
    fn mount<T>(
        self,
        mount: &dyn Fn(&[u8]) -> Result<T, Failure>,
        mut password: Zeroizing<Vec<u8>>,
    ) -> Result<(T, Zeroizing<Vec<u8>>), Failure> {
        loop {
            match mount(&password) {
                Err(e)
                    if e.code == exit::WRONG_PASSWORD
                        && !is_hidden_failure(&e)
                        && (self.again)() =>
                {
                    (self.note)(&e.message);
                    password = (self.ask)(self.prompt)?;
                }
                r => return r.map(|done| (done, password)),
            }
        }
    }
}

/// The keyfiles whose paths a favorite keeps, read.
fn read_kept_keyfiles(paths: &[String]) -> Result<Vec<zeroize::Zeroizing<Vec<u8>>>, Failure> {
    read_keyfiles(&paths.iter().map(PathBuf::from).collect::<Vec<_>>())
}

/// Where `--remember` kept `password`, if it was asked to.
fn remembered(remember: bool, key: &str, password: &[u8]) -> Result<Option<String>, Failure> {
    match remember {
        true => Ok(Some(keystore::store(key, password)?.to_string())),
        false => Ok(None),
    }
}

/// The daemon's refusal of the hidden volume's password (the volume's own
/// opened it).
fn is_hidden_failure(e: &Failure) -> bool {
    e.message
        .starts_with(tcd_proto::contract::errors::HIDDEN_NOT_UNLOCKED)
}

/// What narrows a favorite's failed search: its settings, or for the
/// hidden volume it protects, what that search takes.
fn hint_for(s: &tcd_proto::contract::favorite::Favorite, said: &str) -> Option<String> {
    match said {
        tcd_proto::contract::errors::HIDDEN_NOT_UNLOCKED => Some(
            "its PIM and keyfiles are the favorite's --protect-hidden-pim (else its --pim) and \
             --protect-hidden-keyfile; its header is searched over every hash and encryption"
                .to_owned(),
        ),
        _ => narrowing(s),
    }
}

/// No way to ask for a password after the keyring's was refused: a wrong
/// password, not a mistake in the command line.
fn keyring_refused(e: Failure, f: &Favorite) -> Failure {
    if e.code != exit::USAGE {
        return e;
    }
    let forget = match f.system {
        true => "favorites forget --system-favorite",
        false => "favorites forget",
    };
    Failure {
        code: exit::WRONG_PASSWORD,
        message: format!(
            "the password in your keyring does not open it, and no other can be asked for: {} \
             (a mount on a terminal asks, and keeps the one that opens it; `tcctl {forget} {}` \
             removes the old one)",
            e.message,
            crate::output::shell_word(&f.settings.name)
        ),
    }
}

/// A wrong password that came from a system favorite's password file,
/// said to have come from there.
fn from_password_file(mut e: Failure, f: &Favorite) -> Failure {
    if e.code == exit::WRONG_PASSWORD {
        e.message = format!(
            "{} (with the password of its password file {})",
            e.message,
            f.settings.password_file.as_deref().unwrap_or_default()
        );
    }
    e
}

/// Where the volume at `path` is: its mount point, or (attached only) its
/// block device; nothing kept yet.
fn mounted_at(c: &Client, path: &OwnedObjectPath) -> Result<Mounted, Failure> {
    let row = c.list()?.into_iter().find(|r| &r.object == path);
    let device = row
        .as_ref()
        .map(|r| r.device().to_owned())
        .unwrap_or_default();
    let at = row
        .as_ref()
        .and_then(|r| r.mount_point())
        .map(str::to_owned);
    Ok(Mounted {
        attached: at.is_none(),
        at: at.unwrap_or_else(|| device.clone()),
        device,
        kept: None,
    })
}

/// The password in a system favorite's password file, without its line
/// end; `None` (and `note` says why) when there is none this user can
/// read. Only a regular file is read, without following a link or waiting
/// on a pipe, as the daemon reads it.
fn system_password_file(f: &Favorite, note: &dyn Fn(&str)) -> Option<Zeroizing<Vec<u8>>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let path = f.settings.password_file.as_deref().filter(|_| f.system)?;
    let read = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .and_then(|file| {
            let meta = file.metadata()?;
            if !meta.is_file() {
                return Err(std::io::Error::other("not a regular file"));
            }
            // The daemon's rule for the files it reads at start: a file
            // someone else could read or change is no secret of root's.
            use std::os::unix::fs::{MetadataExt, PermissionsExt};
            if meta.uid() != 0 || meta.permissions().mode() & 0o077 != 0 {
                return Err(std::io::Error::other(
                    "must be root's and readable by no one else",
                ));
            }
            let mut bytes = Zeroizing::new(Vec::new());
            file.take(PASSWORD_FILE_LIMIT).read_to_end(&mut bytes)?;
            Ok(bytes)
        });
    match read {
        Ok(mut bytes) => {
            while bytes.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                bytes.pop();
            }
            Some(bytes)
        }
        Err(e) => {
            note(&format!(
                "cannot read its password file {path} ({}): asking instead",
                crate::bus::io_text(&e)
            ));
            None
        }
    }
}

/// More than any password a volume takes; a bigger file is cut short.
const PASSWORD_FILE_LIMIT: u64 = 4096;
