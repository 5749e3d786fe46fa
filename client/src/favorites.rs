//! `tcctl favorites` and `tcctl watch`: favorite volumes kept by the
//! daemon, their passwords (with consent) in the user's own keyring, read
//! here in the user's session and never by the daemon, which only gets a
//! password for one mount. Nothing typed or stored for one favorite is
//! tried on another.

use crate::bus::{Client, Failure, VolumeEvent, Where, exit};
use crate::{Passwords, absolute, keystore, notify, open_volume, read_keyfiles};
use clap::Subcommand;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use zbus::zvariant::{OwnedValue, Value};

#[derive(Subcommand)]
pub enum Action {
    /// Add (or replace) a favorite: a container file, or a device (kept by
    /// its /dev/disk/by-id or by-partuuid name).
    Add {
        name: String,
        volume: PathBuf,
        #[arg(long)]
        mount_point: Option<PathBuf>,
        #[arg(long)]
        readonly: bool,
        /// Use this cipher backend for every layer.
        #[arg(long)]
        backend: Option<String>,
        /// "auto" (mount its filesystem) or "none" (block device only).
        #[arg(long)]
        filesystem: Option<String>,
        #[arg(long)]
        discard: bool,
        /// A keyfile (repeatable).
        #[arg(long = "keyfile", short = 'k')]
        keyfiles: Vec<PathBuf>,
        #[arg(long, default_value_t = 0)]
        pim: u32,
        /// Ask for the hidden volume's password at mount and protect it.
        #[arg(long)]
        protect_hidden: bool,
        /// Mount it automatically: a system favorite when the daemon
        /// starts or its device appears, yours when your session starts.
        #[arg(long)]
        auto_mount: bool,
        #[command(flatten)]
        auto_dismount: crate::AutoDismount,
        /// A system favorite (administrators), mounted by the daemon itself.
        /// (Not `--system`: that one picks the system bus.)
        #[arg(id = "system_favorite", long = "system-favorite")]
        system: bool,
        /// System favorites: a root-only file with the password.
        #[arg(long, requires = "system_favorite")]
        password_file: Option<PathBuf>,
        /// Ask for the password now and keep it in your keyring.
        #[arg(long, conflicts_with = "system_favorite")]
        remember: bool,
        /// Read the password from standard input (with --remember).
        #[arg(long)]
        password_stdin: bool,
    },
    /// Remove a favorite (and its password from your keyring).
    Remove {
        name: String,
        #[arg(id = "system_favorite", long = "system-favorite")]
        system: bool,
    },
    /// Your favorites and the system's.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Mount one favorite, all of them, or those marked auto-mount.
    Mount {
        #[arg(required_unless_present_any = ["all", "auto"], conflicts_with_all = ["all", "auto"])]
        name: Option<String>,
        #[arg(long)]
        all: bool,
        /// Your favorites marked auto-mount (run by the session's autostart).
        #[arg(long, conflicts_with = "all")]
        auto: bool,
        /// The system's favorite of that name, not yours.
        #[arg(id = "system_favorite", long = "system-favorite")]
        system: bool,
        /// Keep the password typed in your keyring.
        #[arg(long)]
        remember: bool,
        /// Read passwords from standard input, one line each.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Remove a favorite's password from your keyring.
    Forget {
        name: String,
        #[arg(id = "system_favorite", long = "system-favorite")]
        system: bool,
    },
}

/// One favorite as the daemon lists it.
struct Favorite {
    name: String,
    system: bool,
    fields: HashMap<String, OwnedValue>,
}

impl Favorite {
    fn str(&self, key: &str) -> Option<String> {
        self.fields
            .get(key)
            .and_then(|v| String::try_from(v.try_clone().ok()?).ok())
    }
    fn bool(&self, key: &str) -> bool {
        self.fields
            .get(key)
            .and_then(|v| bool::try_from(&**v).ok())
            .unwrap_or(false)
    }
    fn u32(&self, key: &str) -> u32 {
        self.fields
            .get(key)
            .and_then(|v| u32::try_from(&**v).ok())
            .unwrap_or(0)
    }
    fn list(&self, key: &str) -> Vec<String> {
        self.fields
            .get(key)
            .and_then(|v| Vec::<String>::try_from(v.try_clone().ok()?).ok())
            .unwrap_or_default()
    }
    fn host(&self) -> String {
        self.str("host").unwrap_or_default()
    }
    /// The keyring entry: the system's favorites apart from the user's.
    fn key(&self) -> String {
        key_of(&self.name, self.system)
    }
}

fn key_of(name: &str, system: bool) -> String {
    if system {
        format!("system/{name}")
    } else {
        name.to_owned()
    }
}

fn fetch(c: &Client) -> Result<Vec<Favorite>, Failure> {
    Ok(c.list_favorites()?
        .into_iter()
        .map(|(name, system, fields)| Favorite {
            name,
            system,
            fields,
        })
        .collect())
}

/// The name a favorite keeps: a device by its stable link, a file by its
/// absolute path.
fn host_name(volume: &Path) -> Result<String, Failure> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(volume)
        .map_err(|e| Failure::not_found(format!("{}: {e}", volume.display())))?;
    if meta.file_type().is_block_device() {
        return tcd_proto::devices::stable_name(volume).ok_or_else(|| {
            Failure::usage(format!(
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

fn add_str(d: &mut HashMap<&'static str, Value<'static>>, k: &'static str, v: Option<String>) {
    if let Some(v) = v {
        d.insert(k, Value::from(v));
    }
}

pub fn run(action: Action, at: Where<'_>, notify: bool) -> Result<(), Failure> {
    match action {
        Action::Add {
            name,
            volume,
            mount_point,
            readonly,
            backend,
            filesystem,
            discard,
            keyfiles,
            pim,
            protect_hidden,
            auto_mount,
            auto_dismount,
            system,
            password_file,
            remember,
            password_stdin,
        } => {
            let host = host_name(&volume)?;
            let mut d: HashMap<&'static str, Value<'static>> = HashMap::new();
            d.insert("name", Value::from(name.clone()));
            d.insert("host", Value::from(host.clone()));
            add_str(&mut d, "mount_point", mount_point.as_deref().map(absolute));
            add_str(&mut d, "backend", backend);
            add_str(&mut d, "filesystem", filesystem);
            add_str(
                &mut d,
                "password_file",
                password_file.as_deref().map(absolute),
            );
            for (k, v) in [
                ("readonly", readonly),
                ("discard", discard),
                ("protect_hidden", protect_hidden),
                ("auto_mount", auto_mount),
            ] {
                d.insert(k, Value::from(v));
            }
            d.insert("pim", Value::from(pim));
            d.extend(auto_dismount.options());
            if !keyfiles.is_empty() {
                let k: Vec<String> = keyfiles.iter().map(|p| absolute(p)).collect();
                d.insert("keyfiles", Value::from(k));
            }
            let c = Client::connect(at)?;
            c.add_favorite(d, system)?;
            println!(
                "{} favorite {name}: {host}",
                if system { "system" } else { "your" }
            );
            if remember {
                let mut pw = Passwords::new(password_stdin);
                let password = pw.ask(&format!("Password for {name} (to remember): "))?;
                let store = keystore::store(&key_of(&name, false), &password)?;
                println!("password of {name} kept in your {store}");
            }
            Ok(())
        }
        Action::Remove { name, system } => {
            let c = Client::connect(at)?;
            if !c.remove_favorite(&name, system)? {
                return Err(Failure::not_found(format!("no favorite {name}")));
            }
            // Its password goes with it; nothing stored is left to try.
            let _ = keystore::forget(&key_of(&name, system));
            println!("favorite {name} removed");
            Ok(())
        }
        Action::Forget { name, system } => {
            if keystore::forget(&key_of(&name, system))? {
                println!("password of {name} removed from your keyring");
                Ok(())
            } else {
                Err(Failure::not_found(format!(
                    "no password of {name} in your keyring"
                )))
            }
        }
        Action::List { json } => {
            let c = Client::connect(at)?;
            let favs = fetch(&c)?;
            if json {
                let v: Vec<_> = favs
                    .iter()
                    .map(|f| {
                        let mut o = serde_json::Map::new();
                        for (k, v) in &f.fields {
                            o.insert(k.clone(), crate::bus::to_json(v));
                        }
                        o.insert("system".into(), f.system.into());
                        serde_json::Value::Object(o)
                    })
                    .collect();
                println!("{}", serde_json::Value::Array(v));
                return Ok(());
            }
            println!(
                "{:<14} {:<6} {:<44} {:<20} SETTINGS",
                "NAME", "OWNER", "VOLUME", "MOUNT POINT"
            );
            for f in &favs {
                let mut notes = Vec::new();
                if f.bool("auto_mount") {
                    notes.push("auto-mount".to_owned());
                }
                if f.bool("readonly") {
                    notes.push("read-only".into());
                }
                if f.bool("dismount_on_logout") {
                    notes.push("dismount at logout".into());
                }
                if f.bool("dismount_before_sleep") {
                    notes.push("dismount before sleep".into());
                }
                if f.u32("dismount_idle_seconds") > 0 {
                    notes.push(format!(
                        "dismount after {} s idle",
                        f.u32("dismount_idle_seconds")
                    ));
                }
                if let (Some(h), Some(e)) = (f.str("hash"), f.str("encryption")) {
                    notes.push(format!("last {e}/{h}"));
                }
                if !f.system && keystore::load(&f.key()).ok().flatten().is_some() {
                    notes.push("password in keyring".into());
                }
                println!(
                    "{:<14} {:<6} {:<44} {:<20} {}",
                    f.name,
                    if f.system { "system" } else { "you" },
                    f.host(),
                    f.str("mount_point").unwrap_or_else(|| "-".into()),
                    notes.join(", ")
                );
            }
            Ok(())
        }
        Action::Mount {
            name,
            all,
            auto: _,
            system,
            remember,
            password_stdin,
        } => {
            let c = Client::connect(at)?;
            let favs = fetch(&c)?;
            let chosen: Vec<&Favorite> = match &name {
                Some(n) => {
                    let f = favs
                        .iter()
                        .filter(|f| &f.name == n && (f.system || !system))
                        .min_by_key(|f| f.system)
                        .ok_or_else(|| Failure::not_found(format!("no favorite {n}")))?;
                    vec![f]
                }
                // Yours; the daemon mounts the system's it can.
                None => favs
                    .iter()
                    .filter(|f| !f.system && (all || f.bool("auto_mount")))
                    .collect(),
            };
            let mounted: Vec<String> = c.list()?.into_iter().map(|r| r.1).collect();
            let mut pw = Passwords::new(password_stdin);
            let mut first_failure = None;
            for f in chosen {
                if name.is_none() && mounted.contains(&f.host()) {
                    println!("{}: already mounted", f.name);
                    continue;
                }
                let result = mount_one(&c, f, &mut pw, remember);
                let result = notify::outcome(notify, &format!("Cannot mount {}", f.name), result);
                if let Err(e) = result {
                    eprintln!("tcctl: {}: {}", f.name, e.message);
                    first_failure.get_or_insert(e);
                }
            }
            first_failure.map_or(Ok(()), Err)
        }
    }
}

/// Mounts one favorite: with its stored password if there is one, else
/// (or when that one is wrong) with one asked for.
fn mount_one(
    c: &Client,
    f: &Favorite,
    pw: &mut Passwords,
    remember: bool,
) -> Result<(String, String), Failure> {
    let host_path = locate(&f.host())?;
    let host = open_volume(&host_path, !f.bool("readonly"))?;
    let keyfiles = read_keyfiles(
        &f.list("keyfiles")
            .iter()
            .map(PathBuf::from)
            .collect::<Vec<_>>(),
    )?;
    let options = || {
        let mut o: HashMap<&'static str, Value<'static>> = HashMap::new();
        o.insert("favorite", Value::from(f.name.clone()));
        o.insert("favorite_system", Value::from(f.system));
        o.insert("pim", Value::from(f.u32("pim")));
        o
    };
    let hidden = if f.bool("protect_hidden") {
        Some(pw.ask(&format!(
            "Hidden volume password of {} (to protect it): ",
            f.name
        ))?)
    } else {
        None
    };
    let with_hidden = |mut o: HashMap<&'static str, Value<'static>>| {
        if let Some(h) = &hidden {
            o.insert("protect_hidden_password", Value::from(h.to_vec()));
        }
        o
    };
    let stored = match keystore::load(&f.key()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("tcctl: {}: {}", f.name, e.message);
            None
        }
    };
    let mut path = None;
    if let Some(stored) = stored {
        match c.mount(&host, &f.host(), &stored, &keyfiles, with_hidden(options())) {
            Ok(p) => path = Some(p),
            Err(e) if e.code == exit::WRONG_PASSWORD => {
                eprintln!(
                    "tcctl: {}: the password in your keyring does not open it; asking instead",
                    f.name
                );
            }
            Err(e) => return Err(e),
        }
    }
    let path = match path {
        Some(p) => p,
        None => {
            let password = pw.ask(&format!("Password for {}: ", f.name))?;
            let p = c.mount(
                &host,
                &f.host(),
                &password,
                &keyfiles,
                with_hidden(options()),
            )?;
            if remember {
                let store = keystore::store(&f.key(), &password)?;
                println!("password of {} kept in your {store}", f.name);
            }
            p
        }
    };
    let row = c.list()?.into_iter().find(|r| r.0 == path);
    let at = row
        .map(|r| if r.3.is_empty() { r.2 } else { r.3 })
        .unwrap_or_default();
    println!("{} ({}) mounted on {at}", f.name, f.host());
    Ok((format!("Mounted {} at {at}", f.name), f.host()))
}

/// `tcctl watch`: reports the daemon's automatic dismounts of the user's
/// volumes and their failures (a notification with --notify), until the
/// daemon goes.
pub fn watch(at: Where<'_>, notify: bool) -> Result<(), Failure> {
    use std::os::unix::fs::MetadataExt;
    let me = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(u32::MAX);
    let c = Client::connect(at)?;
    for event in c.volume_events()? {
        let (owner, summary, body, urgent) = match event {
            VolumeEvent::AutoDismounted {
                host,
                owner,
                reason,
                error,
            } if error.is_empty() => (
                owner,
                format!("Dismounted {host} ({reason})"),
                String::new(),
                false,
            ),
            VolumeEvent::AutoDismounted {
                host,
                owner,
                reason,
                error,
            } => (
                owner,
                format!("Could not dismount {host} ({reason}): {error}"),
                String::new(),
                true,
            ),
            VolumeEvent::HealthChanged {
                host,
                owner,
                health,
                problems,
            } => (
                owner,
                format!("Volume {host} {health}"),
                problems.join("; "),
                health != "ok",
            ),
        };
        if me != 0 && owner != me {
            continue;
        }
        if body.is_empty() {
            println!("{summary}");
        } else {
            println!("{summary}: {body}");
        }
        if notify {
            notify::send(&summary, &body, urgent);
        }
    }
    Err(Failure {
        code: exit::NO_DAEMON,
        message: "the daemon went away".into(),
    })
}
