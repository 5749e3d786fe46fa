//! `tcctl favorites`: favorite volumes kept by the
//! daemon, their passwords (with consent) in the user's own keyring, read
//! here in the user's session and never by the daemon, which only gets a
//! password for one mount. Nothing typed or stored for one favorite is
//! tried on another.

use super::Context;
use crate::bus::{Client, Failure, Favorite, exit};
use crate::cli::{FavoriteAddArgs, FavoriteMountArgs, FavoritesAction};
use crate::input::{Passwords, read_keyfiles};
use crate::{host, keystore, notify, options, output};
use std::path::{Path, PathBuf};
use zbus::zvariant::OwnedObjectPath;

/// The keyring entry of a favorite: the system's apart from the user's.
fn key_of(name: &str, system: bool) -> String {
    if system {
        format!("system/{name}")
    } else {
        name.to_owned()
    }
}

/// The name a favorite keeps: a device by its stable link, a file by its
/// absolute path.
fn host_name(volume: &Path) -> Result<String, Failure> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(volume)
        .map_err(|e| Failure::not_found(format!("{}: {e}", volume.display())))?;
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

/// `tcctl favorites ...`.
pub fn run(ctx: Context<'_>, action: FavoritesAction) -> Result<(), Failure> {
    match action {
        FavoritesAction::Add(a) => add(ctx, a),
        FavoritesAction::Remove { name, system } => remove(ctx, &name, system),
        FavoritesAction::Forget { name, system } => forget(&name, system),
        FavoritesAction::List { json } => {
            let c = Client::connect(ctx.at)?;
            let favs = c.list_favorites()?;
            output::favorites(&favs, json, |f| {
                keystore::load(&key_of(&f.settings.name, f.system))
                    .ok()
                    .flatten()
                    .is_some()
            });
            Ok(())
        }
        FavoritesAction::Mount(a) => mount(ctx, a),
    }
}

fn add(ctx: Context<'_>, a: FavoriteAddArgs) -> Result<(), Failure> {
    let host = host_name(&a.volume)?;
    let c = Client::connect(ctx.at)?;
    c.add_favorite(&options::favorite(&a, &host), a.system)?;
    let name = &a.name;
    println!(
        "{} favorite {name}: {host}",
        if a.system { "system" } else { "your" }
    );
    if a.remember {
        let mut pw = Passwords::new(a.password_stdin, ctx.interactive);
        let password = pw.ask(&format!("Password for {name} (to remember): "))?;
        let store = keystore::store(&key_of(name, false), &password)?;
        println!("password of {name} kept in your {store}");
    }
    Ok(())
}

fn remove(ctx: Context<'_>, name: &str, system: bool) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    if !c.remove_favorite(name, system)? {
        return Err(Failure::not_found(format!("no favorite {name}")));
    }
    // Its password goes with it; nothing stored is left to try.
    let _ = keystore::forget(&key_of(name, system));
    println!("favorite {name} removed");
    Ok(())
}

fn forget(name: &str, system: bool) -> Result<(), Failure> {
    if keystore::forget(&key_of(name, system))? {
        println!("password of {name} removed from your keyring");
        Ok(())
    } else {
        Err(Failure::not_found(format!(
            "no password of {name} in your keyring"
        )))
    }
}

/// `tcctl favorites mount`: each chosen one in turn; the first failure is
/// the command's.
fn mount(ctx: Context<'_>, a: FavoriteMountArgs) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    let favs = c.list_favorites()?;
    let chosen: Vec<&Favorite> = match &a.name {
        Some(n) => {
            let f = favs
                .iter()
                .filter(|f| &f.settings.name == n && (f.system || !a.system))
                .min_by_key(|f| f.system)
                .ok_or_else(|| Failure::not_found(format!("no favorite {n}")))?;
            vec![f]
        }
        // Yours; the daemon mounts the system's it can.
        None => favs
            .iter()
            .filter(|f| !f.system && (a.all || f.settings.auto_mount))
            .collect(),
    };
    if chosen.is_empty() {
        println!(
            "No favorite to mount: {}",
            if a.all {
                "you have none."
            } else {
                "none of yours is marked --auto-mount (--all mounts every one)."
            }
        );
        return Ok(());
    }
    let mounted: Vec<String> = c.list()?.iter().map(|r| r.host().to_owned()).collect();
    let mut pw = Passwords::new(a.password_stdin, ctx.interactive);
    let mut first_failure = None;
    for f in chosen {
        if a.name.is_none() && mounted.contains(&f.settings.host) {
            println!("{}: already mounted", f.settings.name);
            continue;
        }
        let result = mount_one(&c, f, &mut pw, a.remember);
        let result = notify::outcome(
            ctx.notify,
            &format!("Cannot mount {}", f.settings.name),
            result,
        );
        if let Err(e) = result {
            eprintln!("tcctl: {}: {}", f.settings.name, e.message);
            // Said once, here, with the favorite's name.
            first_failure.get_or_insert(Failure {
                code: e.code,
                message: String::new(),
            });
        }
    }
    first_failure.map_or(Ok(()), Err)
}

/// Mounts one favorite: with its stored password if there is one, else
/// (or when that one is wrong) with one asked for.
fn mount_one(
    c: &Client,
    f: &Favorite,
    pw: &mut Passwords,
    remember: bool,
) -> Result<(String, String), Failure> {
    let host_path = locate(&f.settings.host)?;
    let host = host::open(&host_path, !f.settings.readonly)?;
    let keyfiles = read_keyfiles(
        &f.settings
            .keyfiles
            .iter()
            .map(PathBuf::from)
            .collect::<Vec<_>>(),
    )?;
    let hidden = if f.settings.protect_hidden {
        Some(pw.ask(&format!(
            "Hidden volume password of {} (to protect it): ",
            f.settings.name
        ))?)
    } else {
        None
    };
    let options = || {
        options::favorite_mount(
            &f.settings.name,
            f.system,
            f.settings.pim,
            hidden.as_deref().map(|h| h.as_slice()),
        )
    };
    let key = key_of(&f.settings.name, f.system);
    let mount = |password: &[u8]| {
        crate::search::run(c, || {
            c.mount(&host, &f.settings.host, password, &keyfiles, options())
        })
    };
    let path = match mount_stored(f, &key, mount)? {
        Some(p) => p,
        None => {
            let password = pw.ask(&format!("Password for {}: ", f.settings.name))?;
            let p = mount(&password)?;
            if remember {
                let store = keystore::store(&key, &password)?;
                println!("password of {} kept in your {store}", f.settings.name);
            }
            p
        }
    };
    let at = c
        .list()?
        .into_iter()
        .find(|r| r.object == path)
        .map(|r| r.mount_point().unwrap_or(r.device()).to_owned())
        .unwrap_or_default();
    println!("{} ({}) mounted on {at}", f.settings.name, f.settings.host);
    Ok((
        format!("Mounted {} at {at}", f.settings.name),
        f.settings.host.clone(),
    ))
}

/// Mounts with the password kept in the keyring under `key`, if there is
/// one and it opens the volume; `None` when one must be asked for.
fn mount_stored(
    f: &Favorite,
    key: &str,
    mount: impl Fn(&[u8]) -> Result<OwnedObjectPath, Failure>,
) -> Result<Option<OwnedObjectPath>, Failure> {
    let stored = match keystore::load(key) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("tcctl: {}: {}", f.settings.name, e.message);
            None
        }
    };
    let Some(stored) = stored else {
        return Ok(None);
    };
    match mount(&stored) {
        Ok(p) => Ok(Some(p)),
        Err(e) if e.code == exit::WRONG_PASSWORD => {
            eprintln!(
                "tcctl: {}: the password in your keyring does not open it; asking instead",
                f.settings.name
            );
            Ok(None)
        }
        Err(e) => Err(e),
    }
}
