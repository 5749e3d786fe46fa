//! Volumes: mount, dismount, list, create, and the daemon's password
//! cache.

use super::Context;
use crate::bus::{Client, Failure, exit};
use crate::cli::{CreateArgs, MountArgs};
use crate::input::{Passwords, absolute, read_keyfiles};
use crate::{host, notify, options, output};
use std::fs::{File, OpenOptions};
use std::path::Path;
use zbus::zvariant::OwnedObjectPath;

/// `tcctl mount`.
pub fn mount(ctx: Context<'_>, a: MountArgs) -> Result<(), Failure> {
    let failed = format!("Cannot mount {}", a.volume.display());
    notify::outcome(ctx.notify, &failed, mount_reported(ctx, &a))
}

/// Mounts, says where, and returns the notification's summary and body.
fn mount_reported(ctx: Context<'_>, a: &MountArgs) -> Result<(String, String), Failure> {
    options::refuse_unsupported(a)?;
    let host = host::open(&a.volume, !options::read_only(a))?;
    let mut pw = Passwords::new(a.secrets.password_stdin, ctx.interactive);
    let password = if a.cached {
        zeroize::Zeroizing::new(Vec::new())
    } else {
        pw.ask(&format!("Password for {}: ", a.volume.display()))?
    };
    let keyfiles = read_keyfiles(&a.secrets.keyfiles)?;
    let mut o = options::mount(a);
    let hidden_pw;
    if a.protect_hidden {
        hidden_pw = pw.ask("Hidden volume password (to protect it): ")?;
        options::protect_hidden(&mut o, &hidden_pw);
    }
    let c = Client::connect(ctx.at)?;
    let path = c.mount(&host, &absolute(&a.volume), &password, &keyfiles, o)?;
    let reported = report_mounted(&c, &path, &a.volume.display().to_string())?;
    if a.explore {
        explore(&c, &path);
    }
    Ok(reported)
}

/// `--explore`: the mount point opened in the file manager, by xdg-open.
/// The volume is mounted whatever happens here.
fn explore(c: &Client, path: &OwnedObjectPath) {
    let rows = c.list().unwrap_or_default();
    let Some(r) = rows.into_iter().find(|r| &r.object == path) else {
        return;
    };
    if r.mount_point.is_empty() {
        eprintln!("tcctl: --explore: no filesystem is mounted to open");
        return;
    }
    match std::process::Command::new("xdg-open")
        .arg(&r.mount_point)
        .status()
    {
        Ok(s) if s.success() => {}
        Ok(s) => eprintln!("tcctl: xdg-open {}: {s}", r.mount_point),
        Err(e) => eprintln!("tcctl: cannot run xdg-open: {e}"),
    }
}

/// Says where the volume at `path` went, and returns the notification's
/// summary and body.
fn report_mounted(
    c: &Client,
    path: &OwnedObjectPath,
    shown: &str,
) -> Result<(String, String), Failure> {
    let row = c.list()?.into_iter().find(|r| &r.object == path);
    Ok(match row {
        Some(r) if !r.mount_point.is_empty() => {
            println!("{shown} mounted on {} ({})", r.mount_point, r.device);
            (format!("Mounted {shown} at {}", r.mount_point), r.device)
        }
        Some(r) => {
            println!("{shown} attached as {}", r.device);
            (format!("Attached {shown} as {}", r.device), String::new())
        }
        None => {
            println!("{shown} mounted");
            (format!("Mounted {shown}"), String::new())
        }
    })
}

/// `tcctl dismount`.
pub fn dismount(
    ctx: Context<'_>,
    target: Option<String>,
    all: bool,
    force: bool,
) -> Result<(), Failure> {
    let what = match (&target, all) {
        (Some(t), false) => t.clone(),
        _ => "all volumes".into(),
    };
    // clap asks for one of the two.
    let result = Client::connect(ctx.at).and_then(|c| match target {
        Some(t) if !all => dismount_one(&c, t, force),
        _ => dismount_all(&c, force),
    });
    notify::outcome(ctx.notify, &format!("Cannot dismount {what}"), result)
}

fn dismount_all(c: &Client, force: bool) -> Result<(String, String), Failure> {
    let n = c.dismount_all(force)?;
    eprintln!("{n} volume(s) dismounted");
    for r in c.list()?.iter().filter(|r| r.state == "detaching") {
        eprintln!(
            "{} is still in use; it will be detached when its users let go",
            r.host
        );
    }
    Ok((format!("Dismounted {n} volume(s)"), String::new()))
}

fn dismount_one(c: &Client, target: String, force: bool) -> Result<(String, String), Failure> {
    let name = if Path::new(&target).exists() {
        absolute(Path::new(&target))
    } else {
        target
    };
    let holders = c.dismount(&name, force)?;
    if holders.is_empty() {
        return Ok((format!("Dismounted {name}"), String::new()));
    }
    let said = format!(
        "{name} is off its mount point, but still in use by {}; it will be detached when they let go",
        output::describe_holders(&holders)
    );
    println!("{said}");
    Ok((format!("Dismounting {name}"), said))
}

/// `tcctl list`.
pub fn list(ctx: Context<'_>, json: bool) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    let rows = c.list()?;
    let health = c.volume_health()?;
    output::volumes(&rows, &health, json);
    Ok(())
}

/// `tcctl wipe-cache`.
pub fn wipe_cache(ctx: Context<'_>) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    let n = c.wipe_cache()?;
    println!("{n} cached password(s) wiped");
    Ok(())
}

/// `tcctl create-keyfile`: 64 random bytes, as VeraCrypt's keyfiles, in a
/// new file only the user may read.
pub fn create_keyfile(path: &Path) -> Result<(), Failure> {
    use std::io::{Read, Write};
    use std::os::unix::fs::OpenOptionsExt;
    let shown = path.display();
    let mut bytes = zeroize::Zeroizing::new([0u8; 64]);
    File::open("/dev/urandom")
        .and_then(|mut r| r.read_exact(&mut bytes[..]))
        .map_err(|e| Failure::usage(format!("cannot read random bytes: {e}")))?;
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => Failure {
                code: exit::USAGE,
                message: format!("{shown} exists: a keyfile is never replaced"),
            },
            _ => Failure::usage(format!("{shown}: {e}")),
        })?;
    if let Err(e) = f.write_all(&bytes[..]).and_then(|()| f.sync_all()) {
        let _ = std::fs::remove_file(path);
        return Err(Failure::usage(format!("{shown}: {e}")));
    }
    println!("keyfile {shown} created");
    Ok(())
}

/// `tcctl create`.
pub fn create(ctx: Context<'_>, a: CreateArgs) -> Result<(), Failure> {
    let a = a.resolve()?;
    let mut pw = Passwords::new(a.secrets.password_stdin, ctx.interactive);
    let hidden = a.hidden_size;
    let host = open_for_create(&a)?;
    let mut o = options::create(&a);
    if let Some(size) = hidden {
        let outer = pw.ask("Outer volume password: ")?;
        let outer_keyfiles = read_keyfiles(&a.outer_keyfiles)?
            .iter()
            .map(|k| k.to_vec())
            .collect();
        options::create_hidden(&mut o, size, &outer, a.outer_pim, outer_keyfiles);
    }
    let password = pw.ask(&format!(
        "Password for the new volume {}: ",
        a.volume.display()
    ))?;
    if !a.secrets.password_stdin {
        let again = pw.ask("Repeat the password: ")?;
        if again != password {
            return Err(Failure::usage("the passwords differ".into()));
        }
    }
    let keyfiles = read_keyfiles(&a.secrets.keyfiles)?;
    let c = Client::connect(ctx.at)?;
    let result = c.create(&host, &password, &keyfiles, o);
    if result.is_err() && a.size.is_some() && hidden.is_none() {
        // Leave no half-made container behind.
        let _ = std::fs::remove_file(&a.volume);
    }
    result?;
    if hidden.is_some() {
        println!("hidden volume created in {}", a.volume.display());
    } else {
        println!("{} created", a.volume.display());
    }
    Ok(())
}

/// The host of a new volume: a new file of `size` (replacing one with
/// `force`), or (without a size, or for a hidden volume) what is there.
fn open_for_create(a: &CreateArgs) -> Result<File, Failure> {
    let volume = &a.volume;
    let shown = volume.display();
    let opened = match (a.size, a.hidden_size) {
        (Some(bytes), None) => OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(!a.force)
            .create(a.force)
            .truncate(a.force)
            .open(volume)
            .and_then(|f| f.set_len(bytes).map(|()| f)),
        _ => OpenOptions::new().read(true).write(true).open(volume),
    };
    opened.map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => Failure {
            code: exit::USAGE,
            message: format!("{shown} exists: --force replaces it"),
        },
        std::io::ErrorKind::NotFound if a.hidden_size.is_none() => Failure {
            code: exit::USAGE,
            message: format!(
                "{shown} does not exist: give --size to make a container file \
                 of that size, or name an existing file or device"
            ),
        },
        _ => Failure::usage(format!("{shown}: {e}")),
    })
}
