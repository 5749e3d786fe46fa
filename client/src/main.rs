//! `tcctl`: the command-line client of the tcd daemon. It talks D-Bus only:
//! it opens files with the user's own rights and hands the daemon their
//! descriptors, never paths.

mod bus;

use bus::{Client, Failure};
use clap::{Parser, Subcommand};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use zbus::zvariant::Value;
use zeroize::Zeroizing;

#[derive(Parser)]
#[command(
    version,
    about = "Mount, create and manage TrueCrypt and VeraCrypt volumes through tcd"
)]
struct Cli {
    /// The daemon's socket (default: $TCD_SOCKET, then /run/tcd/tcd.sock
    /// if it exists, then the system bus).
    #[arg(long, global = true, env = "TCD_SOCKET")]
    socket: Option<PathBuf>,
    /// Talk to a daemon on the session bus.
    #[arg(long, global = true, conflicts_with = "system")]
    session: bool,
    /// Talk to a daemon on the system bus.
    #[arg(long, global = true)]
    system: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone, Default)]
struct Secrets {
    /// Read passwords from standard input, one line each, in the order asked.
    #[arg(long)]
    password_stdin: bool,
    /// A keyfile (repeatable; a folder means the files in it).
    #[arg(long = "keyfile", short = 'k')]
    keyfiles: Vec<PathBuf>,
    /// VeraCrypt's PIM.
    #[arg(long, default_value_t = 0)]
    pim: u32,
}

#[derive(clap::Args, Clone, Default)]
struct Search {
    /// Only try this hash (PRF): sha512, sha256, whirlpool, blake2s, streebog, ripemd160, argon2id.
    #[arg(long)]
    hash: Option<String>,
    /// Only try this encryption, as TrueCrypt names it (AES-Twofish-Serpent).
    #[arg(long)]
    encryption: Option<String>,
    /// Only try this format: truecrypt or veracrypt.
    #[arg(long = "volume-type")]
    format: Option<String>,
    /// Use this cipher backend for every layer.
    #[arg(long)]
    backend: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Mount a volume (its filesystem, or only its block device).
    Mount {
        volume: PathBuf,
        mount_point: Option<PathBuf>,
        #[command(flatten)]
        secrets: Secrets,
        #[command(flatten)]
        search: Search,
        #[arg(long)]
        readonly: bool,
        /// "auto" (mount what is inside) or "none" (stop at the block device).
        #[arg(long, default_value = "auto")]
        filesystem: String,
        /// Also ask for the hidden volume's password and refuse writes into it.
        #[arg(long)]
        protect_hidden: bool,
        /// Mount on a folder that is not empty.
        #[arg(long)]
        allow_non_empty: bool,
        /// Pass discards (TRIM) down; reveals which blocks are used.
        #[arg(long)]
        discard: bool,
    },
    /// Dismount a volume by container, mount point or device, or all.
    Dismount {
        target: Option<String>,
        #[arg(long)]
        all: bool,
        /// Dismount even if files are open.
        #[arg(long)]
        force: bool,
    },
    /// List mounted volumes.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Show a volume's header without mounting it.
    Info {
        volume: PathBuf,
        #[command(flatten)]
        secrets: Secrets,
        #[command(flatten)]
        search: Search,
        #[arg(long)]
        json: bool,
    },
    /// Create a volume (a new file of --size, or an existing device).
    Create {
        volume: PathBuf,
        /// Size of a new container file: bytes, or with K, M, G.
        #[arg(long)]
        size: Option<String>,
        #[command(flatten)]
        secrets: Secrets,
        /// veracrypt (default) or truecrypt.
        #[arg(long = "volume-type", default_value = "veracrypt")]
        format: String,
        #[arg(long, default_value = "AES")]
        encryption: String,
        #[arg(long, default_value = "sha512")]
        hash: String,
        /// ext4, fat, exfat, btrfs, xfs or none.
        #[arg(long, default_value = "none")]
        filesystem: String,
        /// Sector size (default: 512 in a file, the device's own otherwise).
        #[arg(long, default_value_t = 0)]
        sector_size: u32,
        /// Write headers only (leaves old contents, reveals used space).
        #[arg(long)]
        quick: bool,
        /// Make a hidden volume of this size inside the existing outer volume.
        #[arg(long)]
        hidden_size: Option<String>,
    },
    /// Change a volume's password, keyfiles, PIM or hash (or convert it
    /// with --to). With --password-stdin: the old password, then the new.
    ChangePassword {
        volume: PathBuf,
        #[command(flatten)]
        secrets: Secrets,
        #[command(flatten)]
        search: Search,
        /// A keyfile for the new credentials (repeatable).
        #[arg(long = "new-keyfile")]
        new_keyfiles: Vec<PathBuf>,
        #[arg(long, default_value_t = 0)]
        new_pim: u32,
        /// A new hash (PRF).
        #[arg(long)]
        new_hash: Option<String>,
        /// Convert the volume: veracrypt or truecrypt.
        #[arg(long)]
        to: Option<String>,
    },
    /// Save both header slots (128 KiB) to a new file.
    BackupHeader {
        volume: PathBuf,
        backup: PathBuf,
        #[command(flatten)]
        secrets: Secrets,
        #[command(flatten)]
        search: Search,
    },
    /// Restore a header from a backup file, or with --embedded from the
    /// backup header inside the volume.
    RestoreHeader {
        volume: PathBuf,
        backup: Option<PathBuf>,
        #[arg(long)]
        embedded: bool,
        #[command(flatten)]
        secrets: Secrets,
        #[command(flatten)]
        search: Search,
    },
    /// The daemon's cipher backends.
    Backends {
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("tcctl: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

fn parse_size(s: &str) -> Result<u64, Failure> {
    let s = s.trim();
    let (num, mult) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&s[..s.len() - 1], 1 << 20),
        Some('G' | 'g') => (&s[..s.len() - 1], 1 << 30),
        Some('T' | 't') => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| Failure::usage(format!("bad size {s}")))
}

/// Passwords from standard input (one line each) or a terminal prompt.
struct Passwords {
    stdin: bool,
    lines: Option<std::io::StdinLock<'static>>,
}

impl Passwords {
    fn new(stdin: bool) -> Self {
        Passwords { stdin, lines: None }
    }

    fn ask(&mut self, prompt: &str) -> Result<Zeroizing<Vec<u8>>, Failure> {
        if self.stdin {
            let lines = self.lines.get_or_insert_with(|| std::io::stdin().lock());
            let mut line = Zeroizing::new(String::new());
            lines
                .read_line(&mut line)
                .map_err(|e| Failure::usage(format!("cannot read a password: {e}")))?;
            let trimmed = line.trim_end_matches(['\n', '\r']);
            return Ok(Zeroizing::new(trimmed.as_bytes().to_vec()));
        }
        let p = rpassword::prompt_password(prompt)
            .map_err(|e| Failure::usage(format!("cannot read a password: {e}")))?;
        Ok(Zeroizing::new(p.into_bytes()))
    }
}

/// The container, opened with the user's own rights (the daemon gets the
/// descriptor, never the path).
fn open_volume(path: &Path, write: bool) -> Result<File, Failure> {
    OpenOptions::new()
        .read(true)
        .write(write)
        .open(path)
        .map_err(|e| Failure::not_found(format!("{}: {e}", path.display())))
}

fn read_keyfiles(paths: &[PathBuf]) -> Result<Vec<Zeroizing<Vec<u8>>>, Failure> {
    use std::io::Read;
    let mut out = Vec::new();
    let mut one = |p: &Path| -> Result<(), Failure> {
        let mut data = Zeroizing::new(Vec::new());
        File::open(p)
            .and_then(|f| f.take(1 << 20).read_to_end(&mut data))
            .map_err(|e| Failure::usage(format!("keyfile {}: {e}", p.display())))?;
        out.push(data);
        Ok(())
    };
    for p in paths {
        if p.is_dir() {
            // TrueCrypt's rule: the files directly inside, not hidden ones.
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| Failure::usage(format!("keyfile folder {}: {e}", p.display())))?
                .flatten()
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect();
            files.sort();
            if files.is_empty() {
                return Err(Failure::usage(format!(
                    "keyfile folder {} is empty",
                    p.display()
                )));
            }
            for f in files {
                one(&f)?;
            }
        } else {
            one(p)?;
        }
    }
    Ok(out)
}

fn search_options(s: &Search, pim: u32) -> HashMap<&'static str, Value<'static>> {
    let mut o = HashMap::new();
    if let Some(h) = &s.hash {
        o.insert("hash", Value::from(h.clone()));
    }
    if let Some(e) = &s.encryption {
        o.insert("encryption", Value::from(e.clone()));
    }
    if let Some(f) = &s.format {
        o.insert("format", Value::from(f.clone()));
    }
    if let Some(b) = &s.backend {
        o.insert("backend", Value::from(b.clone()));
    }
    if pim != 0 {
        o.insert("pim", Value::from(pim));
    }
    o
}

fn absolute(p: &Path) -> String {
    std::path::absolute(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

fn run(cli: Cli) -> Result<(), Failure> {
    let at = match (&cli.socket, cli.session, cli.system) {
        (_, true, _) => bus::Where::Session,
        (_, _, true) => bus::Where::System,
        (Some(p), _, _) => bus::Where::Socket(p),
        _ => bus::Where::Default,
    };
    match cli.command {
        Command::Backends { json } => {
            let c = Client::connect(at)?;
            let list = c.backends()?;
            if json {
                let v: Vec<_> = list
                    .iter()
                    .map(|(n, d, ver, cpu, avail, ciphers)| {
                        serde_json::json!({"name": n, "description": d, "version": ver,
                            "uses_cpu_crypto": cpu, "available": avail, "ciphers": ciphers})
                    })
                    .collect();
                println!("{}", serde_json::Value::Array(v));
            } else {
                println!("{:<8} {:<9} {:<5} CIPHERS", "BACKEND", "AVAILABLE", "CPU");
                for (n, _, _, cpu, avail, ciphers) in list {
                    println!(
                        "{n:<8} {:<9} {:<5} {}",
                        if avail { "yes" } else { "no" },
                        if cpu { "yes" } else { "no" },
                        ciphers.join(", ")
                    );
                }
            }
            Ok(())
        }
        Command::List { json } => {
            let c = Client::connect(at)?;
            let rows = c.list()?;
            if json {
                let v: Vec<_> = rows
                    .iter()
                    .map(|r| {
                        serde_json::json!({"object": r.0.as_str(), "volume": r.1, "device": r.2,
                            "mount_point": r.3, "filesystem": r.4, "format": r.5,
                            "encryption": r.6, "hash": r.7, "read_only": r.8, "hidden": r.9,
                            "protects_hidden": r.10, "size": r.11})
                    })
                    .collect();
                println!("{}", serde_json::Value::Array(v));
            } else {
                for r in rows {
                    println!(
                        "{}  {}  {}  {}  {}  {}{}",
                        r.1,
                        r.2,
                        if r.3.is_empty() { "-" } else { &r.3 },
                        r.6,
                        r.5,
                        if r.8 { "read-only" } else { "read-write" },
                        if r.9 { ", hidden" } else { "" }
                    );
                }
            }
            Ok(())
        }
        Command::Dismount { target, all, force } => {
            let c = Client::connect(at)?;
            match (all, target) {
                (true, _) => {
                    let n = c.dismount_all(force)?;
                    eprintln!("{n} volume(s) dismounted");
                    Ok(())
                }
                (false, Some(t)) => {
                    let name = if Path::new(&t).exists() {
                        absolute(Path::new(&t))
                    } else {
                        t
                    };
                    c.dismount(&name, force)
                }
                (false, None) => Err(Failure::usage("name a volume to dismount, or --all".into())),
            }
        }
        Command::Mount {
            volume,
            mount_point,
            secrets,
            search,
            readonly,
            filesystem,
            protect_hidden,
            allow_non_empty,
            discard,
        } => {
            let host = open_volume(&volume, !readonly)?;
            let mut pw = Passwords::new(secrets.password_stdin);
            let password = pw.ask(&format!("Password for {}: ", volume.display()))?;
            let keyfiles = read_keyfiles(&secrets.keyfiles)?;
            let mut o = search_options(&search, secrets.pim);
            o.insert("readonly", Value::from(readonly));
            o.insert("filesystem", Value::from(filesystem));
            o.insert("allow_non_empty", Value::from(allow_non_empty));
            o.insert("discard", Value::from(discard));
            if let Some(m) = &mount_point {
                o.insert("mount_point", Value::from(absolute(m)));
            }
            let hidden_pw;
            if protect_hidden {
                hidden_pw = pw.ask("Hidden volume password (to protect it): ")?;
                o.insert("protect_hidden_password", Value::from(hidden_pw.to_vec()));
            }
            let c = Client::connect(at)?;
            let path = c.mount(&host, &absolute(&volume), &password, &keyfiles, o)?;
            let row = c.list()?.into_iter().find(|r| r.0 == path);
            match row {
                Some(r) if !r.3.is_empty() => {
                    println!("{} mounted on {} ({})", volume.display(), r.3, r.2)
                }
                Some(r) => println!("{} attached as {}", volume.display(), r.2),
                None => println!("{} mounted", volume.display()),
            }
            Ok(())
        }
        Command::Info {
            volume,
            secrets,
            search,
            json,
        } => {
            let host = open_volume(&volume, false)?;
            let mut pw = Passwords::new(secrets.password_stdin);
            let password = pw.ask(&format!("Password for {}: ", volume.display()))?;
            let keyfiles = read_keyfiles(&secrets.keyfiles)?;
            let c = Client::connect(at)?;
            let info = c.header_info(
                &host,
                &password,
                &keyfiles,
                search_options(&search, secrets.pim),
            )?;
            let mut keys: Vec<_> = info.keys().cloned().collect();
            keys.sort();
            if json {
                let map: serde_json::Map<String, serde_json::Value> = keys
                    .iter()
                    .map(|k| (k.clone(), bus::to_json(&info[k])))
                    .collect();
                println!("{}", serde_json::Value::Object(map));
            } else {
                for k in keys {
                    println!(
                        "{k:<20} {}",
                        bus::to_json(&info[&k]).to_string().trim_matches('"')
                    );
                }
            }
            Ok(())
        }
        Command::ChangePassword {
            volume,
            secrets,
            search,
            new_keyfiles,
            new_pim,
            new_hash,
            to,
        } => {
            let host = open_volume(&volume, true)?;
            let mut pw = Passwords::new(secrets.password_stdin);
            let old = pw.ask(&format!("Current password for {}: ", volume.display()))?;
            let new = pw.ask("New password: ")?;
            if !secrets.password_stdin && pw.ask("Repeat the new password: ")? != new {
                return Err(Failure::usage("the passwords differ".into()));
            }
            let keyfiles = read_keyfiles(&secrets.keyfiles)?;
            let new_kf = read_keyfiles(&new_keyfiles)?;
            let mut n: HashMap<&str, Value> = HashMap::new();
            if new_pim != 0 {
                n.insert("pim", Value::from(new_pim));
            }
            if let Some(h) = new_hash {
                n.insert("hash", Value::from(h));
            }
            if let Some(f) = to {
                n.insert("format", Value::from(f));
            }
            let c = Client::connect(at)?;
            c.change_password(
                &host,
                &old,
                &keyfiles,
                search_options(&search, secrets.pim),
                &new,
                &new_kf,
                n,
            )?;
            println!("{}: password changed", volume.display());
            Ok(())
        }
        Command::BackupHeader {
            volume,
            backup,
            secrets,
            search,
        } => {
            let host = open_volume(&volume, false)?;
            let mut pw = Passwords::new(secrets.password_stdin);
            let password = pw.ask(&format!("Password for {}: ", volume.display()))?;
            let keyfiles = read_keyfiles(&secrets.keyfiles)?;
            let out = {
                use std::os::unix::fs::OpenOptionsExt;
                OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&backup)
                    .map_err(|e| Failure::usage(format!("{}: {e}", backup.display())))?
            };
            let c = Client::connect(at)?;
            let r = c.backup_headers(
                &host,
                &out,
                &password,
                &keyfiles,
                search_options(&search, secrets.pim),
            );
            if r.is_err() {
                let _ = std::fs::remove_file(&backup);
            }
            r?;
            println!(
                "headers of {} saved to {}",
                volume.display(),
                backup.display()
            );
            Ok(())
        }
        Command::RestoreHeader {
            volume,
            backup,
            embedded,
            secrets,
            search,
        } => {
            let host = open_volume(&volume, true)?;
            let file = match (&backup, embedded) {
                (Some(b), false) => Some(
                    File::open(b)
                        .map_err(|e| Failure::not_found(format!("{}: {e}", b.display())))?,
                ),
                (None, true) => None,
                _ => {
                    return Err(Failure::usage(
                        "give a backup file or --embedded (not both)".into(),
                    ));
                }
            };
            let mut pw = Passwords::new(secrets.password_stdin);
            let password = pw.ask(&format!("Password for {}: ", volume.display()))?;
            let keyfiles = read_keyfiles(&secrets.keyfiles)?;
            let c = Client::connect(at)?;
            let used = c.restore_headers(
                &host,
                file.as_ref(),
                &password,
                &keyfiles,
                search_options(&search, secrets.pim),
            )?;
            println!("{}: restored from the {used}", volume.display());
            Ok(())
        }
        Command::Create {
            volume,
            size,
            secrets,
            format,
            encryption,
            hash,
            filesystem,
            sector_size,
            quick,
            hidden_size,
        } => {
            let mut pw = Passwords::new(secrets.password_stdin);
            let hidden = hidden_size.as_deref().map(parse_size).transpose()?;
            let host = match (&size, hidden) {
                (_, Some(_)) => OpenOptions::new().read(true).write(true).open(&volume),
                (Some(s), None) => {
                    let bytes = parse_size(s)?;
                    OpenOptions::new()
                        .read(true)
                        .write(true)
                        .create_new(true)
                        .open(&volume)
                        .and_then(|f| f.set_len(bytes).map(|()| f))
                }
                (None, None) => OpenOptions::new().read(true).write(true).open(&volume),
            }
            .map_err(|e| Failure::usage(format!("{}: {e}", volume.display())))?;
            let mut o: HashMap<&str, Value> = HashMap::new();
            if let Some(h) = hidden {
                let outer = pw.ask("Outer volume password: ")?;
                o.insert("outer_password", Value::from(outer.to_vec()));
                o.insert("hidden_size", Value::from(h));
            }
            let password = pw.ask(&format!(
                "Password for the new volume {}: ",
                volume.display()
            ))?;
            if !secrets.password_stdin {
                let again = pw.ask("Repeat the password: ")?;
                if again != password {
                    return Err(Failure::usage("the passwords differ".into()));
                }
            }
            let keyfiles = read_keyfiles(&secrets.keyfiles)?;
            o.insert("format", Value::from(format));
            o.insert("encryption", Value::from(encryption));
            o.insert("hash", Value::from(hash));
            o.insert("filesystem", Value::from(filesystem));
            o.insert("quick", Value::from(quick));
            if sector_size != 0 {
                o.insert("sector_size", Value::from(sector_size));
            }
            if secrets.pim != 0 {
                o.insert("pim", Value::from(secrets.pim));
            }
            let c = Client::connect(at)?;
            let result = c.create(&host, &password, &keyfiles, o);
            if result.is_err() && size.is_some() && hidden.is_none() {
                // Leave no half-made container behind.
                let _ = std::fs::remove_file(&volume);
            }
            result?;
            println!("{} created", volume.display());
            Ok(())
        }
    }
}
