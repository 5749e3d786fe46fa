//! `tcctl favorites`: favorite volumes kept by the daemon (see
//! `tcd_client::favorites`), listed, added, removed, mounted.

use super::Context;
use crate::bus::{Client, Failure, Favorite, exit};
use crate::cli::{FavoriteAddArgs, FavoriteMountArgs, FavoritesAction};
use crate::input::Passwords;
use crate::{keystore, notify, options, output};
use std::path::Path;
use tcd_client::favorites::{self as lib, host_name, key_of};

/// `tcctl favorites ...`.
pub fn run(ctx: Context<'_>, action: FavoritesAction) -> Result<(), Failure> {
    match action {
        FavoritesAction::Add(a) => add(ctx, *a),
        FavoritesAction::Remove { name, system } => remove(ctx, &name, system),
        FavoritesAction::Forget { name, system } => forget(ctx, &name, system),
        FavoritesAction::List { json } => {
            let c = Client::connect(ctx.at)?;
            let favs = c.list_favorites()?;
            output::favorites(&favs, json, lib::in_keyring);
            Ok(())
        }
        FavoritesAction::Mount(a) => mount(ctx, a),
    }
}

fn add(ctx: Context<'_>, a: FavoriteAddArgs) -> Result<(), Failure> {
    let host = host_name(&a.volume)?;
    let c = Client::connect(ctx.at)?;
    let name = &a.name;
    let existing = c
        .list_favorites()?
        .into_iter()
        .find(|f| &f.settings.name == name && f.system == a.system);
    if let (Some(old), false) = (&existing, a.replace) {
        return Err(Failure::invalid(format!(
            "a favorite named {name} exists ({}): --replace replaces it and all its settings",
            old.settings.host
        )));
    }
    let favorite = options::favorite(&a, &host);
    // A mount point its mount would refuse is said now, and kept: the
    // folder may be made or emptied before the favorite is mounted.
    if let Some(at) = &a.mount_point
        && favorite.filesystem.as_deref() != Some("none")
    {
        let hint = "the favorite's mount is refused until it is empty";
        let listed = c.list()?;
        // Its own volume mounted there now: nothing to warn of.
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
        let own = listed.iter().any(|v| {
            real(Path::new(v.host())) == real(&a.volume)
                && v.mount_point().is_some_and(|m| Path::new(m) == real(at))
        });
        if let Err(f) = super::volumes::check_mount_folder(at, false, hint, &listed)
            && !own
        {
            eprintln!("tcctl: warning: {}", f.message);
        }
    }
    // The password to remember is checked first: a wrong one adds nothing.
    let password = match a.remember {
        true => Some(password_to_remember(ctx, &c, &a, &favorite)?),
        false => None,
    };
    c.add_favorite(&favorite, a.system)?;
    println!(
        "{} favorite {name}: {host}{}",
        if a.system { "system" } else { "your" },
        if existing.is_some() {
            " (replaced)"
        } else {
            ""
        }
    );
    if let Some(password) = password {
        let store = keystore::store(&key_of(name, false), &password)?;
        println!("password of {name} kept in your {store}");
    }
    Ok(())
}

/// Whether `password` opens the favorite's volume, with its keyfiles, PIM
/// and format (its hash tried first): a password that does not is never
/// kept.
fn opens(
    c: &Client,
    a: &FavoriteAddArgs,
    f: &tcd_proto::contract::favorite::Favorite,
    password: &[u8],
) -> Result<(), Failure> {
    let host = crate::host::open_volume(&a.volume, false)?;
    let keyfiles = crate::input::read_keyfiles(&a.keyfiles)?;
    let mut search = tcd_proto::contract::SearchOptions {
        format: f.format,
        pim: Some(f.pim),
        hash: f.hash.clone(),
        ..Default::default()
    };
    if f.system_encryption {
        search.system_encryption = Some(true);
        search.detached_header = crate::host::system_header(&a.volume, &host)?;
    }
    // Its hash first, then every one: one search as the user sees it,
    // timed and hinted as a whole (the favorite's --hash is no "only").
    let tried =
        |s: tcd_proto::contract::SearchOptions| c.header_info(&host, password, &keyfiles, s);
    let opened = crate::search::run_hinted(
        c,
        "",
        |_| lib::narrowing(f),
        || {
            let first = tried(search.clone());
            match first {
                Err(e) if search.hash.is_some() && e.code == exit::WRONG_PASSWORD => {
                    tried(tcd_proto::contract::SearchOptions {
                        hash: None,
                        ..search
                    })
                }
                first => first,
            }
        },
    );
    opened.map(|_| ())
}

/// The password to remember, asked (again after a wrong one typed on the
/// terminal, as `mount` asks) until it opens the favorite's volume; a
/// wrong one in the end adds nothing.
fn password_to_remember(
    ctx: Context<'_>,
    c: &Client,
    a: &FavoriteAddArgs,
    favorite: &tcd_proto::contract::favorite::Favorite,
) -> Result<zeroize::Zeroizing<Vec<u8>>, Failure> {
    let mut pw = Passwords::new(a.password_stdin, ctx.asking());
    let retries = crate::input::Retries::new(false, None, &a.keyfiles);
    let prompt = format!("Password for {} (to remember): ", a.name);
    super::asking_again(&a.volume, retries, &mut pw, |pw| {
        let password = pw.ask(&prompt)?;
        opens(c, a, favorite, &password).map(|()| password)
    })
    .map_err(|mut e| {
        if e.code == exit::WRONG_PASSWORD {
            // With --replace, the one of that name there is stays.
            let there = a.replace
                && c.list_favorites().is_ok_and(|l| {
                    l.iter()
                        .any(|f| f.settings.name == a.name && f.system == a.system)
                });
            let what = match there {
                true => "not replaced (it stays as it was)",
                false => "not added",
            };
            e.message = format!(
                "the password to remember does not open {}: the favorite {} is {what}, \
                 nor the password kept: {}",
                a.volume.display(),
                a.name,
                e.message
            );
        }
        e
    })
}

fn remove(ctx: Context<'_>, name: &str, system: bool) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    if !c.remove_favorite(name, system)? {
        // The other list's favorite of that name, pointed to.
        let other = c
            .list_favorites()?
            .iter()
            .any(|f| f.settings.name == name && f.system != system);
        let hint = match (other, system) {
            (true, false) => " of yours (the system's of that name goes with --system-favorite)",
            (true, true) => " of the system's (yours of that name goes without --system-favorite)",
            (false, _) => "",
        };
        return Err(Failure::not_found(format!("no favorite {name}{hint}")));
    }
    // Its password goes with it; nothing stored is left to try.
    let _ = keystore::forget(&key_of(name, system));
    // Named as `favorites add` names it.
    let whose = if system { "system" } else { "your" };
    println!("{whose} favorite {name} removed");
    Ok(())
}

/// A favorite's password out of the keyring. None kept: said, and done;
/// no favorite of that name either is said as `remove` says it (the
/// daemon, when it can be reached, knows).
fn forget(ctx: Context<'_>, name: &str, system: bool) -> Result<(), Failure> {
    if keystore::forget(&key_of(name, system))? {
        println!("password of {name} removed from your keyring");
        return Ok(());
    }
    let no_favorite = Client::connect(ctx.at)
        .and_then(|c| c.list_favorites())
        .is_ok_and(|l| {
            !l.iter()
                .any(|f| f.settings.name == name && f.system == system)
        });
    if no_favorite {
        return Err(Failure::not_found(format!(
            "no favorite {name} (and no password of that name in your keyring)"
        )));
    }
    // Already as asked: forgetting what was never kept is no failure, as
    // `wipe-cache` with nothing cached is none.
    println!("no password of {name} was kept in your keyring");
    Ok(())
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
    let mut pw = Passwords::new(a.password_stdin, ctx.asking()).of_favorites();
    // One password given serves every favorite it opens (VeraCrypt's
    // habit): standard input's line, or the last one typed that opened one.
    let mut shared = SharedPassword {
        from_stdin: a.password_stdin,
        password: None,
        opened: String::new(),
    };
    let mut first_failure = None;
    for f in chosen {
        // Said before any password is asked, as `tcctl mount` says it.
        if mounted.contains(&f.settings.host) {
            if a.name.is_some() {
                return Err(Failure {
                    code: crate::bus::exit::ALREADY_MOUNTED,
                    message: format!(
                        "{} ({}) is already mounted: `tcctl dismount {}` first",
                        f.settings.name,
                        f.settings.host,
                        output::shell_word(&f.settings.host)
                    ),
                });
            }
            println!("{}: already mounted", f.settings.name);
            continue;
        }
        let result = mount_one(&c, f, &mut pw, &mut shared, a.remember);
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

/// Mounts one favorite, saying where.
/// No hidden volume's password to protect it: what to give, named (exit
/// 64, as any password that cannot be asked).
fn hidden_not_given(e: Failure, stdin: bool) -> Failure {
    if e.code != exit::USAGE {
        return e;
    }
    let how = match stdin {
        true => "the line after the volume's password on standard input, which has no more lines",
        false => "needed, and there is no way to ask for it",
    };
    Failure {
        code: e.code,
        message: format!(
            "not mounted: it protects a hidden volume, whose password is {how} (the \
             favorite keeps its --protect-hidden)"
        ),
    }
}

/// The password tried first on each favorite: standard input's one line
/// (read once, and the only one), or the last one typed that opened a
/// favorite (a favorite it does not open asks its own).
struct SharedPassword {
    from_stdin: bool,
    password: Option<zeroize::Zeroizing<Vec<u8>>>,
    /// The favorite a typed one opened, named when it opens no other.
    opened: String,
}

fn mount_one(
    c: &Client,
    f: &Favorite,
    pw: &mut Passwords,
    shared: &mut SharedPassword,
    remember: bool,
) -> Result<(String, String), Failure> {
    let name = &f.settings.name;
    let stdin = shared.from_stdin;
    // Its mount point, checked before any password is asked, as `mount`
    // checks one.
    if let Some(at) = &f.settings.mount_point
        && f.settings.filesystem.as_deref() != Some("none")
    {
        let hint = "empty it, or add the favorite again with another --mount-point and --replace";
        super::volumes::check_mount_folder(Path::new(at), false, hint, &c.list()?)?;
    }
    let tried_shared = std::cell::Cell::new(false);
    let asked = std::cell::Cell::new(0);
    // The shared password's failure is its own, not one this favorite was
    // given.
    let opened = &shared.opened;
    let note = |said: &str| match tried_shared.get() && asked.get() == 0 && !stdin {
        true => eprintln!("tcctl: {name}: the password that opened {opened} does not open it"),
        false => eprintln!("tcctl: {name}: {said}"),
    };
    if f.settings.system_encryption && !f.settings.readonly {
        output::system_read_write_warning(f.settings.filesystem.as_deref() == Some("none"));
    } else if f.settings.system_encryption {
        output::system_read_only_note();
    }
    // With --non-interactive, a favorite with keyfiles opens with them
    // alone, as `tcctl mount --non-interactive --keyfile` does.
    let main_prompt = lib::password_prompt(name);
    let has_keyfiles = !f.settings.keyfiles.is_empty();
    let hidden_keyfiles = !f.settings.protect_hidden_keyfiles.is_empty();
    let keyfiles_alone = pw.asks_nobody() && has_keyfiles;
    // A wrong password typed on the terminal is asked again, 3 times in
    // all, as `mount` asks it; the shared one is tried once first.
    let typing = pw.typed();
    let given = std::cell::RefCell::new(None);
    let mut ask = |prompt: &str| {
        if prompt != main_prompt {
            return pw
                .ask_unless_keyfiles_alone(prompt, hidden_keyfiles)
                .map_err(|e| hidden_not_given(e, pw.reads_stdin()));
        }
        if keyfiles_alone {
            return Ok(zeroize::Zeroizing::new(Vec::new()));
        }
        if let Some(p) = &shared.password
            && (stdin || !tried_shared.replace(true))
        {
            return Ok(p.clone());
        }
        let p = pw.ask_unless_keyfiles_alone(prompt, has_keyfiles)?;
        asked.set(asked.get() + 1);
        *given.borrow_mut() = Some(p.clone());
        Ok(p)
    };
    // Standard input's line is the only one; after the shared password
    // fails, this favorite's own is asked.
    let again = || {
        let n = asked.get();
        !stdin && ((tried_shared.get() && n == 0) || (typing && (1..3).contains(&n)))
    };
    let result = lib::mount_one(c, f, &mut ask, &again, remember, &note);
    if let Some(p) = given.into_inner()
        && (stdin || result.is_ok())
    {
        shared.password = Some(p);
        shared.opened = name.clone();
    }
    Ok(said_mounted(f, result?))
}

/// A favorite mounted, said as `mount` says it (a volume with no
/// filesystem is attached); the notification's summary and body.
fn said_mounted(f: &Favorite, mounted: lib::Mounted) -> (String, String) {
    let name = &f.settings.name;
    if let Some(store) = mounted.kept {
        println!("password of {name} kept in your {store}");
    }
    let at = mounted.at;
    if mounted.attached {
        println!("{name} ({}) attached as {at}", f.settings.host);
    } else {
        println!(
            "{name} ({}) mounted on {at} ({})",
            f.settings.host, mounted.device
        );
    }
    (format!("Mounted {name} at {at}"), f.settings.host.clone())
}
