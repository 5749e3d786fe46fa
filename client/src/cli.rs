//! The command line as clap reads it: every command, option and argument,
//! and the manual page and completions made from them.

use crate::bus::Failure;
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    version,
    about = "Mount, create and manage TrueCrypt and VeraCrypt volumes through tcd"
)]
pub struct Cli {
    /// The daemon's socket (default: $TCD_SOCKET, then the system bus if
    /// tcd is there, then /run/tcd/tcd.sock).
    #[arg(long, global = true, env = "TCD_SOCKET")]
    pub socket: Option<PathBuf>,
    /// Talk to a daemon on the session bus.
    #[arg(long, global = true, conflicts_with = "system")]
    pub session: bool,
    /// Talk to a daemon on the system bus.
    #[arg(long, global = true)]
    pub system: bool,
    /// Also report the result as a desktop notification (the default when
    /// no terminal is attached).
    #[arg(long, global = true)]
    pub notify: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Clone, Default)]
pub struct Secrets {
    /// Read passwords from standard input, one line each, in the order asked.
    #[arg(long)]
    pub password_stdin: bool,
    /// A keyfile (repeatable; a folder means the files in it).
    #[arg(long = "keyfile", short = 'k')]
    pub keyfiles: Vec<PathBuf>,
    /// VeraCrypt's PIM.
    #[arg(long, default_value_t = 0)]
    pub pim: u32,
}

#[derive(Args, Clone, Default)]
pub struct Search {
    /// Only try this hash (PRF): sha512, sha256, whirlpool, blake2s, streebog, ripemd160, argon2id.
    #[arg(long)]
    pub hash: Option<String>,
    /// Only try this encryption, as TrueCrypt names it (AES-Twofish-Serpent).
    #[arg(long)]
    pub encryption: Option<String>,
    /// Only try this format: truecrypt or veracrypt.
    #[arg(long = "volume-type")]
    pub format: Option<String>,
    /// Use this cipher backend for every layer.
    #[arg(long)]
    pub backend: Option<String>,
}

/// TrueCrypt's auto-dismount preferences, for one mount.
#[derive(Args, Clone, Default)]
pub struct AutoDismount {
    /// Dismount it when you log out (your last session ends).
    #[arg(long)]
    pub dismount_on_logout: bool,
    /// Dismount it before the machine sleeps.
    #[arg(long)]
    pub dismount_before_sleep: bool,
    /// Dismount it after this many seconds without reads or writes.
    #[arg(long, value_name = "SECONDS")]
    pub dismount_idle: Option<u32>,
    /// Automatic dismounts go ahead even with files open.
    #[arg(long)]
    pub force_dismount: bool,
}

#[derive(Subcommand)]
pub enum Command {
    /// Mount a volume (its filesystem, or only its block device).
    Mount(MountArgs),
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
    Info(InfoArgs),
    /// Create a volume (a new file of --size, or an existing device).
    Create(CreateArgs),
    /// Change a volume's password, keyfiles, PIM or hash (or convert it
    /// with --to). With --password-stdin: the old password, then the new.
    ChangePassword(ChangePasswordArgs),
    /// Save both header slots (128 KiB) to a new file.
    BackupHeader(BackupHeaderArgs),
    /// Restore a header from a backup file, or with --embedded from the
    /// backup header inside the volume.
    RestoreHeader(RestoreHeaderArgs),
    /// Wipe your passwords cached in the daemon (root: everyone's).
    WipeCache,
    /// Favorite volumes: add, remove, list, mount, forget a kept password.
    Favorites {
        #[command(subcommand)]
        action: FavoritesAction,
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

// The commands' own arguments below carry no doc comment: the command's
// description is the variant's, above.

#[derive(Args)]
pub struct MountArgs {
    pub volume: PathBuf,
    pub mount_point: Option<PathBuf>,
    #[command(flatten)]
    pub secrets: Secrets,
    #[command(flatten)]
    pub search: Search,
    #[arg(long)]
    pub readonly: bool,
    /// "auto" (mount what is inside) or "none" (stop at the block device).
    #[arg(long, default_value = "auto")]
    pub filesystem: String,
    /// Also ask for the hidden volume's password and refuse writes into it.
    #[arg(long)]
    pub protect_hidden: bool,
    /// Mount on a folder that is not empty.
    #[arg(long)]
    pub allow_non_empty: bool,
    /// Pass discards (TRIM) down; reveals which blocks are used.
    #[arg(long)]
    pub discard: bool,
    /// Keep this password (and keyfiles, PIM) in the daemon's locked
    /// memory, for --cached, until wiped or the daemon stops.
    #[arg(long)]
    pub cache: bool,
    /// Try the passwords cached for you, without asking for one.
    #[arg(long)]
    pub cached: bool,
    #[command(flatten)]
    pub auto_dismount: AutoDismount,
}

#[derive(Args)]
pub struct InfoArgs {
    pub volume: PathBuf,
    #[command(flatten)]
    pub secrets: Secrets,
    #[command(flatten)]
    pub search: Search,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct CreateArgs {
    pub volume: PathBuf,
    /// Size of a new container file: bytes, or with K, M, G.
    #[arg(long)]
    pub size: Option<String>,
    #[command(flatten)]
    pub secrets: Secrets,
    /// veracrypt (default) or truecrypt.
    #[arg(long = "volume-type", default_value = "veracrypt")]
    pub format: String,
    #[arg(long, default_value = "AES")]
    pub encryption: String,
    #[arg(long, default_value = "sha512")]
    pub hash: String,
    /// ext4, fat, exfat, btrfs, xfs or none.
    #[arg(long, default_value = "none")]
    pub filesystem: String,
    /// Sector size (default: 512 in a file, the device's own otherwise).
    #[arg(long, default_value_t = 0)]
    pub sector_size: u32,
    /// Write headers only (leaves old contents, reveals used space).
    #[arg(long)]
    pub quick: bool,
    /// Make a hidden volume of this size inside the existing outer volume.
    #[arg(long)]
    pub hidden_size: Option<String>,
    /// The outer volume's PIM (with --hidden-size; --pim is the new
    /// hidden volume's).
    #[arg(long, default_value_t = 0, requires = "hidden_size")]
    pub outer_pim: u32,
    /// A keyfile of the outer volume (with --hidden-size; repeatable).
    #[arg(long = "outer-keyfile", requires = "hidden_size")]
    pub outer_keyfiles: Vec<PathBuf>,
}

#[derive(Args)]
pub struct ChangePasswordArgs {
    pub volume: PathBuf,
    #[command(flatten)]
    pub secrets: Secrets,
    #[command(flatten)]
    pub search: Search,
    /// A keyfile for the new credentials (repeatable).
    #[arg(long = "new-keyfile")]
    pub new_keyfiles: Vec<PathBuf>,
    #[arg(long, default_value_t = 0)]
    pub new_pim: u32,
    /// A new hash (PRF).
    #[arg(long)]
    pub new_hash: Option<String>,
    /// Convert the volume: veracrypt or truecrypt.
    #[arg(long)]
    pub to: Option<String>,
}

#[derive(Args)]
pub struct BackupHeaderArgs {
    pub volume: PathBuf,
    pub backup: PathBuf,
    #[command(flatten)]
    pub secrets: Secrets,
    #[command(flatten)]
    pub search: Search,
}

#[derive(Args)]
pub struct RestoreHeaderArgs {
    pub volume: PathBuf,
    pub backup: Option<PathBuf>,
    #[arg(long)]
    pub embedded: bool,
    #[command(flatten)]
    pub secrets: Secrets,
    #[command(flatten)]
    pub search: Search,
}

#[derive(Subcommand)]
pub enum PolicyAction {
    /// Print the policy in force.
    Show {
        #[arg(long)]
        json: bool,
    },
    /// Change the policy; settings not given stay as they are.
    Set(PolicySetArgs),
}

#[derive(Args)]
pub struct PolicySetArgs {
    /// auto (processor AES where present) or disabled (software only).
    #[arg(long)]
    pub hardware_acceleration: Option<String>,
    /// Only these backends may be used (comma-separated).
    #[arg(long, value_delimiter = ',', conflicts_with = "allow_all")]
    pub allow: Option<Vec<String>>,
    /// Every backend may be used.
    #[arg(long)]
    pub allow_all: bool,
    /// Order of preference (comma-separated backend names).
    #[arg(long, value_delimiter = ',')]
    pub prefer: Option<Vec<String>>,
    /// Take the whole policy from this TOML file ("-": standard input).
    #[arg(long, conflicts_with_all = ["hardware_acceleration", "allow", "allow_all", "prefer"])]
    pub file: Option<PathBuf>,
}

#[derive(Subcommand)]
pub enum FavoritesAction {
    /// Add (or replace) a favorite: a container file, or a device (kept by
    /// its /dev/disk/by-id or by-partuuid name).
    Add(FavoriteAddArgs),
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
    Mount(FavoriteMountArgs),
    /// Remove a favorite's password from your keyring.
    Forget {
        name: String,
        #[arg(id = "system_favorite", long = "system-favorite")]
        system: bool,
    },
}

#[derive(Args)]
pub struct FavoriteAddArgs {
    pub name: String,
    pub volume: PathBuf,
    #[arg(long)]
    pub mount_point: Option<PathBuf>,
    #[arg(long)]
    pub readonly: bool,
    /// Use this cipher backend for every layer.
    #[arg(long)]
    pub backend: Option<String>,
    /// "auto" (mount its filesystem) or "none" (block device only).
    #[arg(long)]
    pub filesystem: Option<String>,
    #[arg(long)]
    pub discard: bool,
    /// A keyfile (repeatable).
    #[arg(long = "keyfile", short = 'k')]
    pub keyfiles: Vec<PathBuf>,
    #[arg(long, default_value_t = 0)]
    pub pim: u32,
    /// Ask for the hidden volume's password at mount and protect it.
    #[arg(long)]
    pub protect_hidden: bool,
    /// Mount it automatically: a system favorite when the daemon
    /// starts or its device appears, yours when your session starts.
    #[arg(long)]
    pub auto_mount: bool,
    #[command(flatten)]
    pub auto_dismount: AutoDismount,
    /// A system favorite (administrators), mounted by the daemon itself.
    /// (Not `--system`: that one picks the system bus.)
    #[arg(id = "system_favorite", long = "system-favorite")]
    pub system: bool,
    /// System favorites: a root-only file with the password.
    #[arg(long, requires = "system_favorite")]
    pub password_file: Option<PathBuf>,
    /// Ask for the password now and keep it in your keyring.
    #[arg(long, conflicts_with = "system_favorite")]
    pub remember: bool,
    /// Read the password from standard input (with --remember).
    #[arg(long)]
    pub password_stdin: bool,
}

#[derive(Args)]
pub struct FavoriteMountArgs {
    #[arg(required_unless_present_any = ["all", "auto"], conflicts_with_all = ["all", "auto"])]
    pub name: Option<String>,
    #[arg(long)]
    pub all: bool,
    /// Your favorites marked auto-mount (run by the session's autostart).
    #[arg(long, conflicts_with = "all")]
    pub auto: bool,
    /// The system's favorite of that name, not yours.
    #[arg(id = "system_favorite", long = "system-favorite")]
    pub system: bool,
    /// Keep the password typed in your keyring.
    #[arg(long)]
    pub remember: bool,
    /// Read passwords from standard input, one line each.
    #[arg(long)]
    pub password_stdin: bool,
}

/// `tcctl.1` and the bash, zsh and fish completions, into `dir`.
pub fn generate_dist(dir: &Path) -> Result<(), Failure> {
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
