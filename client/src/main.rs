//! `tcctl`: the command-line client of the tcd daemon. It talks D-Bus only:
//! it opens files with the user's own rights and hands the daemon their
//! descriptors, never paths.

mod bus;
mod favorites;
mod host;
mod keystore;
mod notify;
mod prompt;

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
    /// The daemon's socket (default: $TCD_SOCKET, then the system bus if
    /// tcd is there, then /run/tcd/tcd.sock).
    #[arg(long, global = true, env = "TCD_SOCKET")]
    socket: Option<PathBuf>,
    /// Talk to a daemon on the session bus.
    #[arg(long, global = true, conflicts_with = "system")]
    session: bool,
    /// Talk to a daemon on the system bus.
    #[arg(long, global = true)]
    system: bool,
    /// Also report the result as a desktop notification (the default when
    /// no terminal is attached).
    #[arg(long, global = true)]
    notify: bool,
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

/// TrueCrypt's auto-dismount preferences, for one mount.
#[derive(clap::Args, Clone, Default)]
struct AutoDismount {
    /// Dismount it when you log out (your last session ends).
    #[arg(long)]
    dismount_on_logout: bool,
    /// Dismount it before the machine sleeps.
    #[arg(long)]
    dismount_before_sleep: bool,
    /// Dismount it after this many seconds without reads or writes.
    #[arg(long, value_name = "SECONDS")]
    dismount_idle: Option<u32>,
    /// Automatic dismounts go ahead even with files open.
    #[arg(long)]
    force_dismount: bool,
}

impl AutoDismount {
    /// As `Mount` options and favorite keys (the same names).
    fn options(&self) -> [(&'static str, Value<'static>); 4] {
        [
            ("dismount_on_logout", Value::from(self.dismount_on_logout)),
            (
                "dismount_before_sleep",
                Value::from(self.dismount_before_sleep),
            ),
            (
                "dismount_idle_seconds",
                Value::from(self.dismount_idle.unwrap_or(0)),
            ),
            ("force_dismount", Value::from(self.force_dismount)),
        ]
    }
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
        /// Keep this password (and keyfiles, PIM) in the daemon's locked
        /// memory, for --cached, until wiped or the daemon stops.
        #[arg(long)]
        cache: bool,
        /// Try the passwords cached for you, without asking for one.
        #[arg(long)]
        cached: bool,
        #[command(flatten)]
        auto_dismount: AutoDismount,
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
        /// The outer volume's PIM (with --hidden-size; --pim is the new
        /// hidden volume's).
        #[arg(long, default_value_t = 0, requires = "hidden_size")]
        outer_pim: u32,
        /// A keyfile of the outer volume (with --hidden-size; repeatable).
        #[arg(long = "outer-keyfile", requires = "hidden_size")]
        outer_keyfiles: Vec<PathBuf>,
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
    /// Wipe your passwords cached in the daemon (root: everyone's).
    WipeCache,
    /// Favorite volumes: add, remove, list, mount, forget a kept password.
    Favorites {
        #[command(subcommand)]
        action: favorites::Action,
    },
    /// Stay and report the daemon's automatic dismounts of your volumes
    /// (with --notify as desktop notifications; run by the session's
    /// autostart).
    Watch,
    /// Write the manual page and shell completions into a folder (for
    /// packaging).
    #[command(hide = true)]
    GenerateDist { dir: PathBuf },
    /// The daemon's cipher backends, loaded or not, and what the policy
    /// allows.
    Backends {
        #[arg(long)]
        json: bool,
    },
    /// The backend policy: show it, or change it (administrators).
    Policy {
        #[command(subcommand)]
        action: PolicyAction,
    },
    /// TrueCrypt's benchmark, run by the daemon on the backends mounted
    /// volumes would use.
    Benchmark {
        /// Buffer size: bytes, or with K, M, G (decimal as TrueCrypt: 100M
        /// is 100,000,000 bytes).
        #[arg(long, default_value = "100M")]
        size: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum PolicyAction {
    /// Print the policy in force.
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Change the policy; settings not given stay as they are.
    Set {
        /// auto (processor AES where present) or disabled (software only).
        #[arg(long)]
        hardware_acceleration: Option<String>,
        /// Only these backends may be used (comma-separated).
        #[arg(long, value_delimiter = ',', conflicts_with = "allow_all")]
        allow: Option<Vec<String>>,
        /// Every backend may be used.
        #[arg(long)]
        allow_all: bool,
        /// Order of preference (comma-separated backend names).
        #[arg(long, value_delimiter = ',')]
        prefer: Option<Vec<String>>,
        /// Take the whole policy from this TOML file ("-": standard input).
        #[arg(long, conflicts_with_all = ["hardware_acceleration", "allow", "allow_all", "prefer"])]
        file: Option<PathBuf>,
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

/// Passwords from standard input (one line each), a terminal prompt, or
/// without a terminal a graphical one.
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
        if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            return prompt::ask(prompt);
        }
        let p = rpassword::prompt_password(prompt)
            .map_err(|e| Failure::usage(format!("cannot read a password: {e}")))?;
        Ok(Zeroizing::new(p.into_bytes()))
    }
}

/// Opens a volume with the caller's own rights.
fn open_volume(path: &Path, write: bool) -> Result<File, Failure> {
    host::open(path, write)
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

/// `tcctl.1` and the bash, zsh and fish completions, into `dir`.
fn generate_dist(dir: &Path) -> Result<(), Failure> {
    use clap::CommandFactory;
    let fail = |e: std::io::Error| Failure::usage(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(fail)?;
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(fail)?;
    std::fs::write(dir.join("tcctl.1"), page).map_err(fail)?;
    for shell in [
        clap_complete::Shell::Bash,
        clap_complete::Shell::Zsh,
        clap_complete::Shell::Fish,
    ] {
        clap_complete::generate_to(shell, &mut Cli::command(), "tcctl", dir).map_err(fail)?;
    }
    Ok(())
}

fn yes_no(b: bool) -> &'static str {
    if b { "Yes" } else { "No" }
}

fn mbs(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.0}")
    } else {
        "-".into()
    }
}

fn print_backends(cpu_aes: bool, list: &[bus::Backend], policy: &bus::PolicyView, json: bool) {
    if json {
        let v: Vec<_> = list
            .iter()
            .map(|b| {
                serde_json::json!({"name": b.0, "description": b.1, "version": b.2,
                    "file": b.3, "sha256": b.4, "uses_cpu_crypto": b.5, "available": b.6,
                    "allowed": b.7, "loaded": b.8, "ciphers": b.9,
                    "problem": if b.10.is_empty() { serde_json::Value::Null } else { b.10.clone().into() }})
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({"cpu_aes": cpu_aes, "hardware_acceleration": policy.2,
                "policy_file": policy.1, "backends": v})
        );
        return;
    }
    println!(
        "Processor (CPU) in this computer provides hardware acceleration for AES: {}",
        yes_no(cpu_aes)
    );
    println!(
        "Hardware acceleration by policy: {} ({})\n",
        policy.2, policy.1
    );
    println!(
        "{:<8} {:<8} {:<10} {:<9} {:<7} {:<6} CIPHERS",
        "BACKEND", "VERSION", "CPU CRYPTO", "AVAILABLE", "ALLOWED", "LOADED"
    );
    for b in list.iter().filter(|b| b.10.is_empty()) {
        println!(
            "{:<8} {:<8} {:<10} {:<9} {:<7} {:<6} {}",
            b.0,
            b.2,
            yes_no(b.5),
            yes_no(b.6),
            yes_no(b.7),
            yes_no(b.8),
            b.9.join(", ")
        );
    }
    println!();
    for b in list {
        if b.10.is_empty() {
            println!("{}: {}", b.0, b.1);
        } else {
            println!("skipped: {}", b.10);
        }
        println!("  {}\n  sha256 {}", b.3, b.4);
    }
}

/// A policy as TOML, from its settings.
fn policy_text(acceleration: &str, allowed: Option<&[String]>, prefer: &[String]) -> String {
    let list = |names: &[String]| {
        let quoted: Vec<String> = names
            .iter()
            .map(|n| format!("\"{}\"", n.replace('\\', "\\\\").replace('"', "\\\"")))
            .collect();
        format!("[{}]", quoted.join(", "))
    };
    let mut t = format!(
        "hardware_acceleration = \"{}\"\n",
        acceleration.replace(['\\', '"'], "")
    );
    if let Some(a) = allowed {
        t.push_str(&format!("allowed = {}\n", list(a)));
    }
    if !prefer.is_empty() {
        t.push_str(&format!("prefer = {}\n", list(prefer)));
    }
    t
}

/// A size in decimal units, as TrueCrypt's benchmark states them.
fn parse_decimal_size(s: &str) -> Result<u64, Failure> {
    let t = s.trim();
    let (digits, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1_000,
                'M' => 1_000_000,
                'G' => 1_000_000_000,
                _ => return Err(Failure::usage(format!("bad size {s}"))),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|n| *n > 0)
        .ok_or_else(|| Failure::usage(format!("bad size {s}")))
}

/// "PID 1234 (bash), a process of another user".
fn describe_holders(holders: &[(u32, String)]) -> String {
    holders
        .iter()
        .map(|(pid, command)| match pid {
            0 => "a process of another user".to_owned(),
            _ => format!("PID {pid} ({command})"),
        })
        .collect::<Vec<_>>()
        .join(", ")
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
    let notify = notify::wanted(cli.notify);
    match cli.command {
        Command::GenerateDist { dir } => generate_dist(&dir),
        Command::Favorites { action } => favorites::run(action, at, notify),
        Command::Watch => favorites::watch(at, notify),
        Command::WipeCache => {
            let c = Client::connect(at)?;
            let n = c.wipe_cache()?;
            println!("{n} cached password(s) wiped");
            Ok(())
        }
        Command::Backends { json } => {
            let c = Client::connect(at)?;
            let (cpu_aes, list) = c.backends()?;
            let policy = c.policy()?;
            print_backends(cpu_aes, &list, &policy, json);
            Ok(())
        }
        Command::Policy { action } => {
            let c = Client::connect(at)?;
            match action {
                PolicyAction::Show { json } => {
                    let p = c.policy()?;
                    if json {
                        println!(
                            "{}",
                            serde_json::json!({"file": p.1, "hardware_acceleration": p.2,
                                "allowed": if p.3 { serde_json::Value::Null } else { p.4.clone().into() },
                                "prefer": p.5, "text": p.0})
                        );
                    } else {
                        println!("# {}", p.1);
                        print!("{}", p.0);
                    }
                    Ok(())
                }
                PolicyAction::Set {
                    hardware_acceleration,
                    allow,
                    allow_all,
                    prefer,
                    file,
                } => {
                    let text = match file {
                        Some(f) if f.as_os_str() == "-" => {
                            let mut t = String::new();
                            std::io::Read::read_to_string(&mut std::io::stdin(), &mut t)
                                .map_err(|e| Failure::usage(format!("standard input: {e}")))?;
                            t
                        }
                        Some(f) => std::fs::read_to_string(&f)
                            .map_err(|e| Failure::usage(format!("{}: {e}", f.display())))?,
                        None => {
                            let now = c.policy()?;
                            let allowed = if allow_all {
                                None
                            } else {
                                allow.or(if now.3 { None } else { Some(now.4) })
                            };
                            let mut text = policy_text(
                                hardware_acceleration.as_deref().unwrap_or(&now.2),
                                allowed.as_deref(),
                                &prefer.unwrap_or(now.5),
                            );
                            // The filesystem allow-list and the tables
                            // (`[limits]`) stay as they are.
                            let top = now.0.find("\n[").map_or(&now.0[..], |at| &now.0[..at]);
                            for line in top.lines().filter(|l| l.starts_with("filesystems")) {
                                text.push_str(line);
                                text.push('\n');
                            }
                            if let Some(at) = now.0.find("\n[") {
                                text.push_str(&now.0[at..]);
                            }
                            text
                        }
                    };
                    let kept = c.set_policy(&text)?;
                    for note in &kept {
                        println!("{note}");
                    }
                    let p = c.policy()?;
                    println!("policy in force ({}):", p.1);
                    print!("{}", p.0);
                    Ok(())
                }
            }
        }
        Command::Benchmark { size, json } => {
            let bytes = parse_decimal_size(&size)?;
            let c = Client::connect(at)?;
            let show = !json && std::io::IsTerminal::is_terminal(&std::io::stderr());
            let (threads, cpu_aes, mut ciphers, mut kdfs) = c.benchmark(bytes, show)?;
            ciphers.sort_by(|a, b| b.4.total_cmp(&a.4));
            kdfs.sort_by(|a, b| b.2.total_cmp(&a.2));
            if json {
                let rows: Vec<_> = ciphers
                    .iter()
                    .map(|r| {
                        serde_json::json!({"encryption": r.0, "backends": r.1, "encrypt_mbs": r.2,
                            "decrypt_mbs": r.3, "mean_mbs": r.4, "hardware_aes": r.5})
                    })
                    .collect();
                let prfs: Vec<_> = kdfs
                    .iter()
                    .map(|k| {
                        serde_json::json!({"prf": k.0, "iterations": k.1,
                            "iterations_per_second": k.2, "trial_seconds": k.3})
                    })
                    .collect();
                println!(
                    "{}",
                    serde_json::json!({"buffer_bytes": bytes, "threads": threads,
                        "cpu_aes": cpu_aes, "ciphers": rows, "prfs": prfs})
                );
            } else {
                println!(
                    "Buffer {} MB on {threads} threads; processor AES instructions: {}",
                    bytes as f64 / 1e6,
                    yes_no(cpu_aes)
                );
                println!(
                    "{:<28} {:<11} {:>9} {:>9} {:>9}  AES ON",
                    "ALGORITHM", "BACKENDS", "ENCRYPT", "DECRYPT", "MEAN"
                );
                for r in &ciphers {
                    let hw = if !r.0.contains("AES") {
                        "-"
                    } else if r.5 {
                        "hardware"
                    } else {
                        "software"
                    };
                    println!(
                        "{:<28} {:<11} {:>9} {:>9} {:>9}  {hw}",
                        r.0,
                        r.1,
                        mbs(r.2),
                        mbs(r.3),
                        mbs(r.4)
                    );
                }
                println!("(MB/s, 10^6 bytes per second)\n");
                println!(
                    "{:<12} {:>10} {:>14} {:>14}",
                    "PRF", "ITERATIONS", "ITER/S (1 CPU)", "HEADER TRIAL"
                );
                for k in &kdfs {
                    println!("{:<12} {:>10} {:>14.0} {:>12.2} s", k.0, k.1, k.2, k.3);
                }
            }
            Ok(())
        }
        Command::List { json } => {
            let c = Client::connect(at)?;
            let rows = c.list()?;
            let health = c.volume_health()?;
            // A volume whose object is not (or no longer) there: never "ok".
            let health_of = |path: &str| {
                health
                    .get(path)
                    .cloned()
                    .unwrap_or_else(|| ("unknown".into(), Vec::new()))
            };
            if json {
                let v: Vec<_> = rows
                    .iter()
                    .map(|r| {
                        let (health, problems) = health_of(r.0.as_str());
                        serde_json::json!({"object": r.0.as_str(), "volume": r.1, "device": r.2,
                            "mount_point": r.3, "filesystem": r.4, "format": r.5,
                            "encryption": r.6, "hash": r.7, "read_only": r.8, "hidden": r.9,
                            "protects_hidden": r.10, "size": r.11, "backends": r.12,
                            "state": r.13, "health": health, "problems": problems})
                    })
                    .collect();
                println!("{}", serde_json::Value::Array(v));
            } else {
                for r in rows {
                    let (health, problems) = health_of(r.0.as_str());
                    println!(
                        "{}  {}  {}  {}  {}  {}{}  [{}]{}{}",
                        r.1,
                        r.2,
                        if r.3.is_empty() { "-" } else { &r.3 },
                        r.6,
                        r.5,
                        if r.8 { "read-only" } else { "read-write" },
                        if r.9 { ", hidden" } else { "" },
                        r.12,
                        if r.13 == "mounted" {
                            String::new()
                        } else {
                            format!("  {}", r.13)
                        },
                        // Quiet while all is well; loud otherwise.
                        if health == "ok" {
                            String::new()
                        } else {
                            format!("  {}", health.to_uppercase())
                        }
                    );
                    for p in problems {
                        println!("    {p}");
                    }
                }
            }
            Ok(())
        }
        Command::Dismount { target, all, force } => {
            let what = match (&target, all) {
                (Some(t), false) => t.clone(),
                _ => "all volumes".into(),
            };
            let result = (|| {
                let c = Client::connect(at)?;
                match (all, target) {
                    (true, _) => {
                        let n = c.dismount_all(force)?;
                        eprintln!("{n} volume(s) dismounted");
                        for r in c.list()?.iter().filter(|r| r.13 == "detaching") {
                            eprintln!(
                                "{} is still in use; it will be detached when its users let go",
                                r.1
                            );
                        }
                        Ok((format!("Dismounted {n} volume(s)"), String::new()))
                    }
                    (false, Some(t)) => {
                        let name = if Path::new(&t).exists() {
                            absolute(Path::new(&t))
                        } else {
                            t
                        };
                        let holders = c.dismount(&name, force)?;
                        if holders.is_empty() {
                            return Ok((format!("Dismounted {name}"), String::new()));
                        }
                        let said = format!(
                            "{name} is off its mount point, but still in use by {}; it will be detached when they let go",
                            describe_holders(&holders)
                        );
                        println!("{said}");
                        Ok((format!("Dismounting {name}"), said))
                    }
                    (false, None) => {
                        Err(Failure::usage("name a volume to dismount, or --all".into()))
                    }
                }
            })();
            notify::outcome(notify, &format!("Cannot dismount {what}"), result)
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
            cache,
            cached,
            auto_dismount,
        } => notify::outcome(
            notify,
            &format!("Cannot mount {}", volume.display()),
            (|| {
                let host = open_volume(&volume, !readonly)?;
                let mut pw = Passwords::new(secrets.password_stdin);
                let password = if cached {
                    zeroize::Zeroizing::new(Vec::new())
                } else {
                    pw.ask(&format!("Password for {}: ", volume.display()))?
                };
                let keyfiles = read_keyfiles(&secrets.keyfiles)?;
                let mut o = search_options(&search, secrets.pim);
                o.insert("readonly", Value::from(readonly));
                o.insert("filesystem", Value::from(filesystem));
                o.insert("allow_non_empty", Value::from(allow_non_empty));
                o.insert("discard", Value::from(discard));
                o.insert("cache", Value::from(cache));
                o.insert("use_cache", Value::from(cached));
                o.extend(auto_dismount.options());
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
                let shown = volume.display();
                match row {
                    Some(r) if !r.3.is_empty() => {
                        println!("{shown} mounted on {} ({})", r.3, r.2);
                        Ok((format!("Mounted {shown} at {}", r.3), r.2))
                    }
                    Some(r) => {
                        println!("{shown} attached as {}", r.2);
                        Ok((format!("Attached {shown} as {}", r.2), String::new()))
                    }
                    None => {
                        println!("{shown} mounted");
                        Ok((format!("Mounted {shown}"), String::new()))
                    }
                }
            })(),
        ),
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
            outer_pim,
            outer_keyfiles,
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
                if outer_pim != 0 {
                    o.insert("outer_pim", Value::from(outer_pim));
                }
                if !outer_keyfiles.is_empty() {
                    let k: Vec<Vec<u8>> = read_keyfiles(&outer_keyfiles)?
                        .iter()
                        .map(|k| k.to_vec())
                        .collect();
                    o.insert("outer_keyfiles", Value::from(k));
                }
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
