//! The command line as clap reads it: every command, option and argument,
//! and the manual page and completions made from them.

use crate::bus::Failure;
use crate::input;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use std::ffi::OsString;
use std::path::PathBuf;

/// Where the options every command takes are listed, apart from its own.
const GLOBAL: &str = "Global options";
/// Where the security-token options are listed.
const TOKENS: &str = "Security tokens";

#[derive(Parser)]
#[command(
    version,
    about = "Mount, create and manage TrueCrypt and VeraCrypt volumes through tcd",
    after_help = "VeraCrypt's command line is taken too: tcctl -t (--text) with veracrypt's \
                  options (tcctl -t -h lists them). So are cryptsetup's words (tcryptOpen, \
                  open --type tcrypt, tcryptDump, close) and udisksctl's (unlock, lock, -b \
                  DEVICE): tcctl(1) lists them all."
)]
pub struct Cli {
    /// The daemon's socket (default: $TCD_SOCKET, then the system bus if
    /// tcd is there, then /run/tcd/tcd.sock).
    // $TCD_SOCKET is read by `socket()`, not clap's `env`: clap would show
    // an option set from the environment as required in its usage lines.
    #[arg(long, global = true, conflicts_with_all = ["system", "session"], help_heading = GLOBAL)]
    pub socket: Option<PathBuf>,
    /// Talk to a daemon on the session bus.
    #[arg(long, global = true, conflicts_with = "system", help_heading = GLOBAL)]
    pub session: bool,
    /// Talk to a daemon on the system bus.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub system: bool,
    /// Also report the result as a desktop notification (the default when
    /// no terminal is attached).
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub notify: bool,
    /// Never ask for a password (no prompt, dialog or password agent): it
    /// comes with --password-stdin; without that, keyfiles open the volume
    /// alone (the empty password, as VeraCrypt), and with none the command
    /// fails at once.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub non_interactive: bool,
    /// VeraCrypt's `-p ""`, as translated: the password is the empty one
    /// (keyfiles alone open the volume); implies --non-interactive.
    #[arg(long, global = true, hide = true)]
    pub empty_password: bool,
    /// The PKCS #11 library of your security token, for keyfiles named
    /// token://slot/N/file/NAME (default: $TCD_PKCS11_MODULE, then the
    /// policy's token_library, then p11-kit's proxy).
    #[arg(long, global = true, value_name = "LIBRARY", help_heading = TOKENS)]
    pub token_lib: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Reads a command line. A mistake's message shows the command's whole
    /// usage line: clap's own would list the options given as though they
    /// were required (`--socket <SOCKET>` among them).
    pub fn read(args: &[OsString]) -> Result<Cli, clap::Error> {
        let mut command = Cli::command();
        command.build();
        let mut command = whole_usage(command);
        let matches = command.try_get_matches_from_mut(args)?;
        Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
    }

    /// The socket asked for: --socket, else $TCD_SOCKET if set.
    pub fn socket(&self) -> Option<PathBuf> {
        self.socket.clone().or_else(|| {
            std::env::var_os("TCD_SOCKET")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
        })
    }
}

/// `command`'s subcommands (built), each with its usage line fixed.
fn whole_usage(command: clap::Command) -> clap::Command {
    command.mut_subcommands(|mut sub| {
        let usage = sub.render_usage().to_string();
        let usage = usage.strip_prefix("Usage: ").unwrap_or(&usage).to_owned();
        whole_usage(sub.override_usage(usage))
    })
}

#[derive(Args, Clone, Default)]
pub struct Secrets {
    /// Read passwords from standard input, one line each, in the order
    /// asked (VeraCrypt's --stdin); a terminal there is asked as at a
    /// prompt, the password not shown.
    #[arg(long, alias = "stdin")]
    pub password_stdin: bool,
    /// A keyfile (repeatable; a folder means the files in it but hidden
    /// ones, which are skipped with a warning, as VeraCrypt does; - reads
    /// one from standard input, and the password is then asked on the
    /// terminal). On udisksctl's unlock, --key-file FILE is the
    /// passphrase instead: FILE's first line, as udisksctl takes it.
    #[arg(long = "keyfile", short = 'k', visible_alias = "key-file")]
    pub keyfiles: Vec<PathBuf>,
    /// VeraCrypt's PIM (cryptsetup's --veracrypt-pim). Without it, a
    /// terminal asks for one (Enter for none) unless --password-stdin or
    /// --non-interactive is given; cryptsetup's --veracrypt-query-pim (not
    /// with create) asks for it even with --password-stdin, which then
    /// reads it on the line after the password. Above the policy's max_pim refused at once,
    /// except for root, whose search at a large PIM takes as long as
    /// VeraCrypt's.
    #[arg(long, allow_negative_numbers = true, alias = "veracrypt-pim")]
    pub pim: Option<u32>,
    /// cryptsetup's --veracrypt-query-pim: the PIM is asked (with
    /// --password-stdin, read on the line after the password).
    #[arg(long = "veracrypt-query-pim", hide = true, conflicts_with = "pim")]
    pub query_pim: bool,
    /// cryptsetup's line without --veracrypt-query-pim: no PIM is asked,
    /// as cryptsetup asks only for the passphrase.
    #[arg(long, hide = true)]
    pub no_pim_question: bool,
}

impl Secrets {
    /// The PIM given, or 0 (none).
    pub fn pim(&self) -> u32 {
        self.pim.unwrap_or(0)
    }
}

/// Whether the command line asks for a system drive's header
/// (`--system-encryption`, cryptsetup's `--tcrypt-system`, VeraCrypt's
/// `-m system`).
pub fn asks_system() -> bool {
    let given: Vec<String> = std::env::args().skip(1).collect();
    given
        .iter()
        .any(|a| a == "--system-encryption" || a == "--tcrypt-system")
        || mount_option_given(&given, "system")
}

/// Whether the command line asks for the backup headers alone (VeraCrypt's
/// `-m headerbak`, cryptsetup's `--tcrypt-backup`).
fn asks_backup_only(given: &[String]) -> bool {
    given.iter().any(|a| a == "--tcrypt-backup") || mount_option_given(given, "headerbak")
}

/// Whether VeraCrypt's `-m` (or `--mount-options`) lists `option`.
fn mount_option_given(given: &[String], option: &str) -> bool {
    let listed = |list: &str| list.split(',').any(|o| o == option);
    given
        .windows(2)
        .any(|w| ["-m", "--mount-options", "-o"].contains(&w[0].as_str()) && listed(&w[1]))
        || given.iter().any(|a| {
            a.strip_prefix("--mount-options=")
                .or_else(|| a.strip_prefix("-m="))
                .is_some_and(listed)
        })
}

/// Whether `--format` or `--volume-type` says truecrypt, in either form.
fn asks_truecrypt(given: &[String]) -> bool {
    given.windows(2).any(|w| {
        ["--format", "--volume-type"].contains(&w[0].as_str())
            && w[1].eq_ignore_ascii_case("truecrypt")
    }) || given.iter().any(|a| {
        ["--format=", "--volume-type="].iter().any(|p| {
            a.strip_prefix(p)
                .is_some_and(|v| v.eq_ignore_ascii_case("truecrypt"))
        })
    })
}

/// The options that narrow a search: create's outer volume's, or the
/// volume's own.
fn narrowing_options(create: bool) -> &'static [(&'static str, &'static [&'static str])] {
    if create {
        &[
            ("--outer-hash", &["--outer-hash"]),
            ("--outer-pim", &["--outer-pim"]),
        ]
    } else {
        &[
            ("--hash", &["--hash"]),
            (
                "--format",
                &[
                    "--format",
                    "--volume-type",
                    "--truecrypt",
                    "-tc",
                    "--disable-veracrypt",
                ],
            ),
            ("--pim", &["--pim", "--veracrypt-pim"]),
        ]
    }
}

/// An option's value as typed: `--name VALUE` or `--name=VALUE`.
fn value_of<'a>(given: &'a [String], name: &str) -> Option<&'a str> {
    let inline = format!("{name}=");
    given
        .iter()
        .position(|a| a == name)
        .and_then(|i| given.get(i + 1).map(String::as_str))
        .or_else(|| given.iter().find_map(|a| a.strip_prefix(inline.as_str())))
}

/// Whether the hash or encryption given is one TrueCrypt never had, so
/// that only VeraCrypt's format was searched (`create`'s encryption is the
/// hidden volume's, not its search's).
fn veracrypt_only(given: &[String], hash_name: &str, create: bool) -> bool {
    let hash = value_of(given, hash_name).and_then(|h| Hash::from_str(h, true).ok());
    let encryption = value_of(given, "--encryption")
        .filter(|_| !create)
        .and_then(|e| Encryption::from_str(e, true).ok())
        .map(wire_name);
    hash.is_some_and(|h| {
        !matches!(
            h,
            Hash::Sha512 | Hash::Whirlpool | Hash::Ripemd160 | Hash::Sha1
        )
    }) || encryption.is_some_and(|e| e.contains("Camellia") || e.contains("Kuznyechik"))
}

/// A volume created with a PIM opens with that PIM alone: one not given
/// is a cause, said as such, not only a narrowing (VeraCrypt names an
/// incorrect PIM among the causes); in the words of the command line.
fn missing_pim_note(create: bool) -> String {
    let how = match (create, input::cryptsetup_line()) {
        (true, _) => {
            return "an outer volume created with a PIM opens only with that PIM: \
                             --outer-pim gives it"
                .into();
        }
        (false, true) => "--veracrypt-pim gives it, --veracrypt-query-pim asks for it",
        (false, false) => "--pim gives it",
    };
    format!("a volume created with a PIM opens only with that PIM: {how}")
}

/// What the command line narrowed the search to (its hash, encryption
/// and PIM), said so a wrong one is not taken for a wrong password.
fn tried_note(
    given: &[String],
    hash_name: &str,
    create: bool,
    pim: Option<String>,
) -> Option<String> {
    let encryption = value_of(given, "--encryption").filter(|_| !create);
    let tried: Vec<String> = [value_of(given, hash_name), encryption]
        .into_iter()
        .flatten()
        .map(str::to_owned)
        .chain(pim.map(|n| format!("PIM {n}")))
        .collect();
    match tried.as_slice() {
        [] => None,
        [one] => Some(format!("only {one} was tried")),
        [first @ .., last] => Some(format!("only {} and {last} were tried", first.join(", "))),
    }
}

/// A format or the backup headers alone, asked for, narrowed the search
/// too: said, so a volume of the other format or a good primary header is
/// not taken for a wrong password. (A PIM given says VeraCrypt already.)
fn scope_notes(given: &[String], truecrypt: bool, create: bool, pim: bool) -> Vec<String> {
    let mut notes = Vec::new();
    let veracrypt = ["--format", "--volume-type"]
        .iter()
        .any(|o| value_of(given, o).is_some_and(|v| v.eq_ignore_ascii_case("veracrypt")));
    if truecrypt && !create {
        notes.push("only TrueCrypt volumes were searched".into());
    } else if veracrypt && !pim && !create {
        notes.push("only VeraCrypt volumes were searched".into());
    }
    if asks_backup_only(given) {
        notes.push("only the backup headers were searched".into());
    }
    if given.iter().any(|a| a == "--tcrypt-hidden") {
        notes.push("only a hidden volume's headers were searched (--tcrypt-hidden)".into());
    }
    if asks_system() {
        let option = match input::cryptsetup_line() {
            true => "--tcrypt-system",
            false => input::spelled("--system-encryption"),
        };
        notes.push(format!(
            "only a system drive's header (in its first track) was searched: a volume in a file \
             or partition of its own opens without {option}"
        ));
    }
    notes
}

/// The hint after a wrong password: the narrowing options this command
/// line did not give (`giving --hash narrows the search`), or `None` when it gave
/// them all.
pub fn narrowing_hint() -> Option<String> {
    let given: Vec<String> = std::env::args().skip(1).collect();
    let has = |names: &[&str]| {
        given.iter().any(|a| {
            names
                .iter()
                .any(|n| a == n || a.strip_prefix(n).is_some_and(|r| r.starts_with('=')))
        })
    };
    // The one search `create` makes is its outer volume's (VeraCrypt's
    // `-c` and `--create` are create too): its --pim and --hash are the
    // hidden volume's, not the search's.
    let create = given
        .iter()
        .any(|a| ["create", "-c", "--create"].contains(&a.as_str()) || a.starts_with("--create="));
    let hash_name = match create {
        true => "--outer-hash",
        false => "--hash",
    };
    // TrueCrypt volumes have no PIM: no hint of one for them.
    let truecrypt = has(&["--truecrypt", "-tc", "--disable-veracrypt"]) || asks_truecrypt(&given);
    // A PIM, given or typed at the prompt, narrowed the search to
    // VeraCrypt's format (a TrueCrypt volume has none): no --format hint.
    let typed_pim = crate::input::typed_pim();
    // cryptsetup's --veracrypt-pim is --pim, named as typed.
    let pim_names: &[&'static str] = match create {
        true => &["--outer-pim"],
        false => &["--pim", "--veracrypt-pim"],
    };
    let pim_given = pim_names
        .iter()
        .copied()
        .find(|name| value_of(&given, name).is_some_and(|p| p.trim() != "0"));
    let pim_from = match (pim_given, typed_pim) {
        (Some(name), _) => Some(name),
        (None, Some((_, from))) => Some(from),
        (None, None) => None,
    }
    .filter(|_| !truecrypt);
    // `--pim 0` says the volume has none.
    let pim_missing =
        (!truecrypt && pim_from.is_none() && !has(pim_names)).then(|| missing_pim_note(create));
    let missing: Vec<&str> = narrowing_options(create)
        .iter()
        .filter(|(_, names)| !has(names))
        .map(|(name, _)| *name)
        .filter(|name| !name.ends_with("-pim"))
        .filter(|name| {
            !((pim_from.is_some() || veracrypt_only(&given, hash_name, create))
                && *name == "--format")
        })
        .collect();
    let mut notes: Vec<String> = pim_missing.into_iter().collect();
    notes.extend(match missing.as_slice() {
        [] => None,
        // Advice, not a cause: what the line could give.
        [one] => Some(format!("giving {one} narrows the search")),
        [first @ .., last] => Some(format!(
            "giving {} and {last} narrows the search",
            first.join(", ")
        )),
    });
    // A hash, encryption or PIM given narrowed the search too.
    let pim = match (pim_given, typed_pim) {
        (Some(name), _) => value_of(&given, name).map(|p| p.trim().to_owned()),
        (None, Some((n, _))) => Some(n.to_string()),
        (None, None) => None,
    }
    .filter(|_| !truecrypt);
    notes.extend(tried_note(&given, hash_name, create, pim));
    notes.extend(scope_notes(&given, truecrypt, create, pim_from.is_some()));
    if let Some(from) = pim_from {
        notes.push(format!(
            "with {from} only VeraCrypt volumes are searched: a TrueCrypt volume has no PIM"
        ));
    }
    (!notes.is_empty()).then(|| notes.join("; "))
}

#[derive(Args, Clone, Default)]
pub struct Search {
    /// Only try this hash (PRF). sha1 is taken too, for volumes of
    /// TrueCrypt before 5.0, but not listed: no new header takes it.
    #[arg(long, value_enum, ignore_case = true)]
    pub hash: Option<Hash>,
    /// Only try this encryption, as TrueCrypt names it.
    #[arg(long, value_enum, ignore_case = true)]
    pub encryption: Option<Encryption>,
    /// Only try this format. (cryptsetup's --veracrypt is taken and
    /// changes nothing: VeraCrypt volumes are always searched; its --type
    /// takes tcrypt alone, its --disable-veracrypt is --truecrypt, and its
    /// --tcrypt-hidden searches a hidden volume's headers only.)
    #[arg(long, value_enum, ignore_case = true)]
    pub format: Option<Format>,
    /// cryptsetup's --veracrypt: VeraCrypt volumes are always searched.
    #[arg(long, hide = true)]
    pub veracrypt: bool,
    /// cryptsetup's --tcrypt-hidden: only a hidden volume's headers are
    /// searched, so the outer volume's password opens nothing.
    #[arg(long, hide = true)]
    pub tcrypt_hidden: bool,
    /// cryptsetup's --type tcrypt: the only type tcctl opens.
    #[arg(long = "type", hide = true, value_name = "TYPE", value_parser = TcryptType)]
    pub device_type: Option<String>,
    /// The old spelling of --format: veracrypt or truecrypt. (VeraCrypt's
    /// normal and hidden go with create: a hidden volume opens with its
    /// own password, and --protect-hidden protects one.)
    #[arg(long, value_parser = format_as_volume_type, conflicts_with_all = ["format", "truecrypt"])]
    pub volume_type: Option<Format>,
    /// Only try TrueCrypt's format: --format truecrypt (VeraCrypt's -tc,
    /// cryptsetup's --disable-veracrypt).
    #[arg(long, alias = "disable-veracrypt", conflicts_with = "format")]
    pub truecrypt: bool,
    /// Use this cipher backend for every layer.
    #[arg(long)]
    pub backend: Option<String>,
}

/// cryptsetup's `--type`: tcrypt, the only type tcctl opens, and the one
/// value its completion offers.
#[derive(Clone)]
struct TcryptType;

impl clap::builder::TypedValueParser for TcryptType {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        tcrypt_type.parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(std::iter::once("tcrypt".into())))
    }
}

fn tcrypt_type(value: &str) -> Result<String, String> {
    match value {
        "tcrypt" => Ok(value.to_owned()),
        _ => Err(
            "tcctl opens TrueCrypt and VeraCrypt volumes only: --type takes tcrypt \
                  (cryptsetup's name for them)"
                .into(),
        ),
    }
}

impl Command {
    /// The secrets and search of a command that opens a volume.
    pub fn opening(&self) -> Option<(&Secrets, &Search)> {
        match self {
            Command::Mount(a) => Some((&a.secrets, &a.search)),
            Command::MountDevices(a) => Some((&a.secrets, &a.search)),
            Command::Info(a) => Some((&a.secrets, &a.search)),
            Command::Dump(a) => Some((&a.info.secrets, &a.info.search)),
            Command::ChangePassword(a) => Some((&a.secrets, &a.search)),
            Command::Expand(a) => Some((&a.secrets, &a.search)),
            Command::BackupHeader(a) => Some((&a.secrets, &a.search)),
            Command::RestoreHeader(a) => Some((&a.secrets, &a.search)),
            _ => None,
        }
    }
}

impl Search {
    /// The format asked for, by --format, --volume-type or --truecrypt.
    pub fn format(&self) -> Option<Format> {
        if self.truecrypt {
            Some(Format::Truecrypt)
        } else {
            self.format.or(self.volume_type)
        }
    }
}

/// `--volume-type` outside `create`: a format, as --format takes it;
/// VeraCrypt's volume types are refused with what to do instead.
fn format_as_volume_type(value: &str) -> Result<Format, String> {
    match value.to_ascii_lowercase().as_str() {
        "normal" | "hidden" => Err(format!(
            "{value} goes with create; a hidden volume opens with its own password (and \
             --protect-hidden protects one from the outer volume's writes), so this command \
             takes veracrypt or truecrypt here, as --format"
        )),
        v => Format::from_str(v, true).map_err(|_| {
            "[possible values: veracrypt, truecrypt] (normal and hidden go with create)".to_string()
        }),
    }
}

/// A hash (PRF) as users type it (any case; the aliases are the other
/// spellings the daemon knows); the daemon takes these names.
#[derive(ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Hash {
    #[value(alias = "sha-512", alias = "sha_512")]
    Sha512,
    #[value(alias = "sha-256", alias = "sha_256")]
    Sha256,
    Whirlpool,
    #[value(alias = "ripemd-160", alias = "rmd160", alias = "rmd-160")]
    Ripemd160,
    #[value(alias = "blake2s-256", alias = "blake2s256")]
    Blake2s,
    #[value(
        alias = "streebog512",
        alias = "streebog-512",
        alias = "stribog",
        alias = "stribog512",
        alias = "stribog-512"
    )]
    Streebog,
    #[value(alias = "argon2")]
    Argon2id,
    /// TrueCrypt before 5.0 only: taken to narrow a search, never listed
    /// (and refused for new headers).
    #[value(alias = "sha-1", alias = "sha_1", hide = true)]
    Sha1,
}

impl Hash {
    /// As VeraCrypt's menus and `tcctl info` name it.
    pub fn label(self) -> &'static str {
        match self {
            Hash::Sha512 => "SHA-512",
            Hash::Sha256 => "SHA-256",
            Hash::Whirlpool => "Whirlpool",
            Hash::Ripemd160 => "RIPEMD-160",
            Hash::Blake2s => "BLAKE2s-256",
            Hash::Streebog => "Streebog",
            Hash::Argon2id => "Argon2id",
            Hash::Sha1 => "SHA-1",
        }
    }
}

/// An encryption algorithm (a cascade is written outermost first), as
/// TrueCrypt and VeraCrypt name them; the last five are VeraCrypt's only.
#[derive(ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Encryption {
    #[value(name = "AES")]
    Aes,
    #[value(name = "Serpent")]
    Serpent,
    #[value(name = "Twofish")]
    Twofish,
    #[value(name = "AES-Twofish")]
    AesTwofish,
    #[value(name = "AES-Twofish-Serpent")]
    AesTwofishSerpent,
    #[value(name = "Serpent-AES")]
    SerpentAes,
    #[value(name = "Serpent-Twofish-AES")]
    SerpentTwofishAes,
    #[value(name = "Twofish-Serpent")]
    TwofishSerpent,
    #[value(name = "Camellia")]
    Camellia,
    #[value(name = "Kuznyechik")]
    Kuznyechik,
    #[value(name = "Camellia-Kuznyechik")]
    CamelliaKuznyechik,
    #[value(name = "Camellia-Serpent")]
    CamelliaSerpent,
    #[value(name = "Kuznyechik-AES")]
    KuznyechikAes,
    #[value(name = "Kuznyechik-Serpent-Camellia")]
    KuznyechikSerpentCamellia,
    #[value(name = "Kuznyechik-Twofish")]
    KuznyechikTwofish,
}

/// A volume format.
#[derive(ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Format {
    Veracrypt,
    Truecrypt,
}

/// `create --volume-type`, VeraCrypt's: a normal volume, or a hidden one
/// inside an existing outer volume. The formats, its old values, still
/// pick the format.
#[derive(ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum VolumeType {
    Normal,
    Hidden,
    #[value(hide = true)]
    Veracrypt,
    #[value(hide = true)]
    Truecrypt,
}

/// VeraCrypt's volume mount options (`-m`).
#[derive(ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum MountOption {
    /// Mount read-only (--readonly).
    Ro,
    /// The same as ro.
    Readonly,
    /// Open the volume by its backup header only.
    Headerbak,
    /// Do not put the container file's times back at dismount: its
    /// modification time stays that of its last write
    /// (--no-preserve-timestamps).
    Ts,
    /// The same as ts.
    Timestamp,
    /// Never use the kernel's crypto (tcd never does).
    Nokernelcrypto,
    /// Mount with system encryption (--system-encryption).
    System,
}

/// The `-m` options a favorite keeps.
#[derive(ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum FavoriteMountOption {
    /// Mount read-only (--readonly).
    Ro,
    /// The same as ro.
    Readonly,
    /// System encryption (--system-encryption).
    System,
}

/// What a mount goes as far as.
#[derive(ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum MountFilesystem {
    /// Mount the filesystem inside.
    Auto,
    /// Stop at the block device.
    None,
}

/// `--filesystem` of the commands that mount: auto or none, as a value
/// enum (help, completions); a filesystem type instead, as VeraCrypt's
/// scripts pass, is refused saying why.
#[derive(Clone)]
pub struct MountFilesystemParser;

impl clap::builder::TypedValueParser for MountFilesystemParser {
    type Value = MountFilesystem;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<MountFilesystem, clap::Error> {
        clap::builder::EnumValueParser::<MountFilesystem>::new()
            .parse_ref(cmd, arg, value)
            .map_err(|_| {
                clap::Error::raw(
                    clap::error::ErrorKind::InvalidValue,
                    format!(
                        "--filesystem {}: tcd finds the filesystem inside the volume itself; \
                         --filesystem takes auto (the default) or none\n",
                        value.to_string_lossy()
                    ),
                )
                .with_cmd(cmd)
            })
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            MountFilesystem::value_variants()
                .iter()
                .filter_map(ValueEnum::to_possible_value),
        ))
    }
}

/// The filesystem `create` makes in a new volume.
#[derive(ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum NewFilesystem {
    Ext4,
    /// FAT (mkfs.fat picks FAT12, 16 or 32 by size).
    #[value(alias = "vfat")]
    Fat,
    Exfat,
    Btrfs,
    Xfs,
    /// NTFS (mkfs.ntfs of ntfs-3g), for volumes shared with Windows.
    Ntfs,
    /// ext3 and ext2, VeraCrypt's older Linux choices.
    Ext3,
    Ext2,
    /// No filesystem: the volume stays empty.
    None,
}

/// The policy's use of processor crypto instructions.
#[derive(ValueEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum Acceleration {
    /// Processor AES where present.
    Auto,
    /// Software only.
    Disabled,
}

/// The name the daemon takes for a value: the one shown on the command
/// line.
pub fn wire_name(v: impl ValueEnum) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_owned())
        .unwrap_or_default()
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
    ///
    /// A volume mounted already, a missing mount point and one that is not
    /// empty (without --allow-non-empty) are refused before the password
    /// is asked. On a terminal the header search shows which format and
    /// hash it tries and the time left; a wrong password says how long the
    /// search took and that --hash, --format and --pim narrow it, and a
    /// password typed there is asked 3 times in all, as cryptsetup asks. A
    /// volume opened by its backup header (its primary header is damaged)
    /// is said on standard error, with the repair: restore-header
    /// --embedded.
    #[command(visible_aliases = ["open", "tcryptOpen"])]
    Mount(MountArgs),
    /// Dismount a volume by container, mount point or device, or all.
    ///
    /// As umount and unmount it takes umount(8)'s -l (--lazy: --force),
    /// -a (--all) and -v (passed over: it says what it did anyway); as
    /// close, cryptsetup's -v and --debug (passed over too) and --deferred
    /// (--force: detached once its last user lets go); and
    /// udisksctl's unmount -b DEVICE (--filesystem-only) and lock -b (see
    /// tcctl(1)).
    #[command(
        visible_aliases = ["unmount", "umount", "close"],
        override_usage = "tcctl dismount [OPTIONS] <TARGET | --all | --slot N>"
    )]
    Dismount {
        /// The volume: its container or device, its mount point, or its
        /// mapped device.
        #[arg(required_unless_present_any = ["all", "slot"], conflicts_with_all = ["all", "slot"])]
        target: Option<String>,
        /// Every volume you mounted (root: every volume); -a as umount's
        /// (bundled with its -l, -f, -v on `tcctl umount` and `unmount`).
        #[arg(long, short = 'a', conflicts_with = "slot")]
        all: bool,
        /// The volume in this slot, as VeraCrypt's --slot: the slot the
        /// daemon gave it at its mount (shown by `tcctl -t -l`).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
        slot: Option<u32>,
        /// Dismount even if files are open: the filesystem leaves its
        /// mount point at once, and the volume goes when they let go
        /// (umount's -l and -lf, taken as this on `tcctl umount` and `unmount`).
        #[arg(long, short = 'f')]
        force: bool,
        /// Unmount the filesystem and leave the volume attached as its
        /// block device, as udisksctl unmount does: `tcctl mount -b
        /// DEVICE` mounts it again, `dismount` detaches it. With --force a
        /// filesystem in use is unmounted lazily.
        #[arg(long, conflicts_with = "all")]
        filesystem_only: bool,
        /// udisksctl's lock: a volume whose filesystem is mounted is
        /// refused, as udisks refuses it, and the lock said as it says it.
        #[arg(long, hide = true, conflicts_with_all = ["all", "filesystem_only"])]
        udisks_lock: bool,
    },
    /// Keyfiles on PKCS #11 security tokens (smart cards, USB tokens), as
    /// TrueCrypt keeps them: list, import a file, delete.
    Token {
        #[command(subcommand)]
        action: TokenAction,
    },
    /// TrueCrypt's Auto-Mount Devices: try the password on every partition
    /// and device that nothing uses and that you may open, and mount each
    /// that opens on its own default mount point. On a terminal, standard
    /// error shows which device is being tried, and the search's progress
    /// on it.
    MountDevices(MountDevicesArgs),
    /// Write new keyfiles of random bytes, as TrueCrypt's Keyfile
    /// Generator: 64 bytes by default, mode 0600; an existing file is never
    /// replaced.
    CreateKeyfile(KeyfileArgs),
    /// List mounted volumes.
    #[command(after_help = "VeraCrypt's forms (tcctl -t -l):\n  \
        tcctl -t -l                 VeraCrypt's lines, SLOT: VOLUME DEVICE MOUNT POINT, one a \
        volume\n                              (exit 1 when none is mounted)\n  \
        tcctl -t -l VOLUME          that volume's line alone (exit 1 when it is not \
        mounted)\n  \
        tcctl -t -l --slot N        the line of the volume in slot N (exit 1 when there is \
        none)\n  \
        tcctl -t -l --json          list --json (a volume named: status --json); exit 1 as \
        above")]
    List {
        /// Print JSON, for scripts.
        #[arg(long)]
        json: bool,
        /// VeraCrypt's `-t -l` lines (`N: VOLUME DEVICE MOUNT POINT`; with
        /// --json the JSON), and exit 1 when what is listed is not
        /// mounted, as veracrypt does.
        #[arg(long, hide = true)]
        veracrypt_lines: bool,
        /// With the VeraCrypt lines: only the line of this volume (its
        /// container or device, mount point or mapped device).
        #[arg(
            long = "only",
            hide = true,
            requires = "veracrypt_lines",
            conflicts_with = "slot"
        )]
        target: Option<String>,
        /// With the VeraCrypt lines: only the line of the volume in this
        /// slot.
        #[arg(
            long,
            hide = true,
            requires = "veracrypt_lines",
            value_parser = clap::value_parser!(u32).range(1..=64)
        )]
        slot: Option<u32>,
    },
    /// What a mounted volume is and where it is mapped, as `cryptsetup
    /// status` says it; exits 3 when it is not mounted.
    #[command(override_usage = "tcctl status [OPTIONS] <TARGET | --slot N>")]
    Status {
        /// The volume: its container or device, its mount point, or its
        /// mapped device.
        #[arg(required_unless_present_any = ["slot", "every"], conflicts_with = "slot")]
        target: Option<String>,
        /// The volume in this slot, as VeraCrypt's --slot (see dismount).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
        slot: Option<u32>,
        /// Print JSON, for scripts.
        #[arg(long)]
        json: bool,
        /// Every mounted volume, one after another (VeraCrypt's
        /// --volume-properties with no volume).
        #[arg(long, hide = true, conflicts_with_all = ["target", "slot"])]
        every: bool,
    },
    /// Show a volume's header without mounting it.
    ///
    /// On a terminal the header search shows its progress; a wrong
    /// password says how long it took and what narrows it, and one typed
    /// there is asked 3 times in all; a damaged
    /// primary header (the backup header opened the volume) is said on
    /// standard error.
    Info(InfoArgs),
    /// Dump a volume's header as `cryptsetup tcryptDump` does: key size,
    /// mode, PRF, iterations, PIM, sector size, offsets; with
    /// --dump-master-key (root only) its master key too.
    #[command(visible_aliases = ["tcrypt-dump", "tcryptDump"])]
    Dump(DumpArgs),
    /// Create a volume (a new file of --size, or in an existing file or
    /// device), or with --hidden-size a hidden volume inside one.
    Create(CreateArgs),
    /// Change a volume's password, keyfiles, PIM or hash (or convert it
    /// with --to). With --password-stdin: the old password, then the new.
    ChangePassword(ChangePasswordArgs),
    /// VeraCrypt's Expand Volume: grow a dismounted container (or the
    /// volume on a device that has grown), encrypt the new space, move the
    /// backup headers to the new end and grow the filesystem inside.
    Expand(ExpandArgs),
    /// Save both header slots (128 KiB) to a new file (asks the password).
    ///
    /// The password (PIM, keyfiles) must open the volume first, as
    /// VeraCrypt asks it: the outer volume's or a hidden volume's, either,
    /// backs up both slots as they are on disk, the other volume's header
    /// still sealed by its own password.
    BackupHeader(BackupHeaderArgs),
    /// Restore a header from a backup file, or with --embedded from the
    /// backup header inside the volume. From a file, the password (PIM,
    /// keyfiles) asked is the backup's: the volume's as it was when the
    /// backup was made, as VeraCrypt asks for the header stored in the
    /// backup file. A backup of another volume is refused, and nothing is
    /// written: its size differs, or this volume's header still opens and
    /// its keys differ, or (neither header opening) the backup's keys read
    /// the volume's data as noise.
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
    /// autostart). When the daemon stops, its dismounts are reported and
    /// it is waited for until it is back.
    Watch,
    /// Print every change as it happens, a timestamped line each (as
    /// `udisksctl monitor`): mounts, dismounts, automatic dismounts,
    /// health and state changes of the volumes you may see, volumes
    /// created, expanded, given a new password or their header restored
    /// (yours; root and administrators: everyone's), and policy changes.
    /// When the daemon goes, that is said, and it is monitored again once
    /// it is back.
    Monitor {
        /// One JSON object a line, for scripts: schema, time (UTC), event,
        /// object, message and the event's own fields.
        #[arg(long)]
        json: bool,
    },
    /// The daemon's cipher backends, loaded or not, and what the policy
    /// allows.
    Backends {
        /// Print JSON, for scripts.
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
        /// Buffer size, passed over once: bytes, or with K, M, G (KiB, MiB,
        /// GiB: binary, as TrueCrypt's and as create's --size), from 512
        /// bytes (one data unit; other sizes are rounded down to whole
        /// units) to 256 MiB (root: 1 GiB, TrueCrypt's largest). Default:
        /// 1 MiB, which stays in the processor's caches, passed over 100
        /// times, so the figures are the ciphers' speed rather than the
        /// memory's.
        #[arg(long, value_parser = input::parse_benchmark_size)]
        size: Option<u64>,
        /// Print JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// TrueCrypt's Test Vectors, run by the daemon: every encryption
    /// algorithm on each backend that serves it at each SIMD level this
    /// processor runs, and every hash and header-key PRF on each code path
    /// of the key search, against published test vectors. Exits 0 only
    /// when every check passes, 12 otherwise.
    SelfTest {
        /// Print JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
}

// The commands' own arguments below carry no doc comment: the command's
// description is the variant's, above.

#[derive(Args)]
pub struct MountArgs {
    /// The volume: a container file or a device; or the device of a volume
    /// attached with --filesystem none, whose filesystem is then mounted
    /// without a password.
    pub volume: PathBuf,
    /// cryptsetup's mapping name, given where the mount point goes: said,
    /// once the volume is attached, to be of no use here.
    #[arg(skip)]
    pub mapping_name: Option<PathBuf>,
    /// Where to mount it (default: a new folder /run/media/$USER/tcdN);
    /// also given as --mount-point DIR, favorites add's spelling.
    pub mount_point: Option<PathBuf>,
    /// favorites add's spelling of MOUNT_POINT, which its users carry here.
    #[arg(
        long = "mount-point",
        value_name = "DIR",
        hide = true,
        conflicts_with = "mount_point"
    )]
    pub mount_point_option: Option<PathBuf>,
    #[command(flatten)]
    pub secrets: Secrets,
    #[command(flatten)]
    pub search: Search,
    #[command(flatten)]
    pub detached: Detached,
    /// Mount read-only: nothing is written to the volume.
    #[arg(long, short = 'r', visible_alias = "read-only")]
    pub readonly: bool,
    /// Open a drive or partition encrypted by TrueCrypt's or VeraCrypt's
    /// system encryption (a Windows system drive), without its boot
    /// loader: the header is read from the drive's first track, with your
    /// own rights (reading the drive may need more than the partition), or
    /// from --header. Give the encrypted partition (or a disk image).
    /// Read-only unless --read-write (cryptsetup's --tcrypt-system, with
    /// `tcryptOpen` or `open`: read/write unless -r, as cryptsetup maps it).
    #[arg(long, alias = "tcrypt-system")]
    pub system_encryption: bool,
    /// Mount read-write a volume that mounts read-only by default: system
    /// encryption (a Windows system written to while Windows is hibernated,
    /// or shut down with fast startup, is corrupted when Windows resumes)
    /// and volumes of TrueCrypt before 5.0 (LRW and CBC modes, which
    /// TrueCrypt 7.1a called deprecated). Other volumes mount read-write
    /// anyway.
    #[arg(long, conflicts_with = "readonly")]
    pub read_write: bool,
    /// Do not put a container file's access and modification times back
    /// at dismount: its modification time stays that of its last write.
    /// By default they are put back, so the file does not tell when the
    /// volume was last used.
    #[arg(long)]
    pub no_preserve_timestamps: bool,
    /// VeraCrypt's mount options, comma-separated: ro (--readonly),
    /// headerbak (open by the backup header only; cryptsetup's
    /// --tcrypt-backup), ts
    /// (--no-preserve-timestamps), nokernelcrypto (tcd's only way),
    /// system (--system-encryption).
    #[arg(
        long,
        short = 'm',
        value_enum,
        value_delimiter = ',',
        value_name = "OPTIONS"
    )]
    pub mount_options: Vec<MountOption>,
    /// VeraCrypt's slot for the volume (refused while another of yours
    /// holds it; by default the lowest free one). Without a mount point it
    /// mounts on /run/media/$USER/veracryptN.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub slot: Option<u32>,
    /// Filesystem options, comma-separated, from an allow-list: uid=,
    /// gid= (your own; root: any), umask=, fmask=, dmask= (FAT, exFAT,
    /// NTFS; a mask not given is 077; FAT through its FUSE driver fusefat,
    /// where the kernel lacks vfat, takes umask= only), noatime, noexec,
    /// and nosuid, nodev (always on, given or not).
    #[arg(long, value_name = "OPTIONS")]
    pub fs_options: Option<String>,
    /// Open the mount point in the file manager (xdg-open) once mounted.
    #[arg(long)]
    pub explore: bool,
    /// Mount what is inside, or stop at the block device.
    #[arg(long, value_parser = MountFilesystemParser, default_value = "auto")]
    pub filesystem: MountFilesystem,
    /// Also ask for the hidden volume's password and refuse writes into
    /// it (its PIM, when not given, is asked on a terminal).
    #[arg(long)]
    pub protect_hidden: bool,
    #[command(flatten)]
    pub hidden: HiddenCredentials,
    /// VeraCrypt's text mode on a terminal: ask for the mount directory
    /// when none is given (not with --filesystem none).
    #[arg(long, hide = true)]
    pub ask_mount_point: bool,
    /// VeraCrypt's text mode on a terminal, no keyfile on its line: ask
    /// for keyfiles after the password and PIM, as VeraCrypt does.
    #[arg(long, hide = true)]
    pub ask_keyfiles: bool,
    /// udisksctl's unlock: said as it says it (`Unlocked VOLUME as DEVICE.`).
    #[arg(long, hide = true)]
    pub udisks_unlock: bool,
    /// VeraCrypt's text mode on a terminal, no --protect-hidden on its
    /// line: ask whether to protect a hidden volume, as VeraCrypt does.
    #[arg(long, hide = true)]
    pub ask_protection: bool,
    /// VeraCrypt's text mode on a terminal: a wrong password is said and
    /// the password asked again, until it opens or Ctrl-C.
    #[arg(long, hide = true)]
    pub ask_again: bool,
    /// cryptsetup's --tries, -T: how often a password typed on the
    /// terminal is asked in all (3 on its open line; 0: until it opens).
    #[arg(long, hide = true)]
    pub tries: Option<u32>,
    /// udisksctl's unlock --key-file: the password is this file's first
    /// line, read as --password-stdin reads standard input.
    #[arg(long, hide = true, value_name = "FILE")]
    pub password_file: Option<PathBuf>,
    /// Mount on a folder that is not empty.
    #[arg(long)]
    pub allow_non_empty: bool,
    /// Pass discards (TRIM) down; reveals which blocks are used.
    #[arg(long, alias = "allow-discards")]
    pub discard: bool,
    /// Keep this password (and keyfiles, PIM) in the daemon's locked
    /// memory, for --cached, until wiped or the daemon stops.
    #[arg(long)]
    pub cache: bool,
    /// Try the passwords cached for you first; when none opens the volume,
    /// the password is asked (or read with --password-stdin), as TrueCrypt
    /// does; with neither, it fails as a wrong password.
    #[arg(long)]
    pub cached: bool,
    #[command(flatten)]
    pub auto_dismount: AutoDismount,
}

#[derive(Args)]
pub struct InfoArgs {
    /// The volume: a container file or a device.
    pub volume: PathBuf,
    #[command(flatten)]
    pub secrets: Secrets,
    #[command(flatten)]
    pub search: Search,
    #[command(flatten)]
    pub detached: Detached,
    /// The header of a drive or partition encrypted by system encryption
    /// (read from the drive's first track; cryptsetup's --tcrypt-system).
    #[arg(long, alias = "tcrypt-system")]
    pub system_encryption: bool,
    /// VeraCrypt's -m, as mount takes it: headerbak reads the backup header
    /// only, system is --system-encryption; the others are about a mount
    /// and change nothing here.
    #[arg(
        long,
        short = 'm',
        value_enum,
        value_delimiter = ',',
        value_name = "OPTIONS"
    )]
    pub mount_options: Vec<MountOption>,
    /// Print JSON, for scripts.
    #[arg(long)]
    pub json: bool,
    /// A mounted volume is shown as `status` shows it, with no password
    /// (VeraCrypt's --volume-properties).
    #[arg(long, hide = true)]
    pub mounted_status: bool,
    /// Print nothing: the exit code says whether the password opens it
    /// (cryptsetup's open --test-passphrase).
    #[arg(long, hide = true)]
    pub check_only: bool,
    /// cryptsetup's --tries, -T, as mount takes it.
    #[arg(long, hide = true)]
    pub tries: Option<u32>,
    /// VeraCrypt's text mode on a terminal, no keyfile on its line: ask
    /// for keyfiles after the password and PIM, as a mount asks them.
    #[arg(long, hide = true)]
    pub ask_keyfiles: bool,
    /// VeraCrypt's text mode on a terminal: a wrong password is said and
    /// the password asked again, until it opens or Ctrl-C.
    #[arg(long, hide = true)]
    pub ask_again: bool,
}

/// A header kept apart from its volume.
#[derive(Args, Clone, Default)]
pub struct Detached {
    /// Read the header from this file (a header backup, as `backup-header`
    /// or VeraCrypt write it) instead of from the volume; the data stays in
    /// the volume.
    #[arg(long, value_name = "FILE")]
    pub header: Option<PathBuf>,
}

#[derive(Args)]
pub struct MountDevicesArgs {
    #[command(flatten)]
    pub secrets: Secrets,
    #[command(flatten)]
    pub search: Search,
    /// Mount read-only (as mount's -r).
    #[arg(long, short = 'r', visible_alias = "read-only")]
    pub readonly: bool,
    /// Mount the filesystem inside, or attach the block device only.
    #[arg(long, value_parser = MountFilesystemParser, default_value = "auto")]
    pub filesystem: MountFilesystem,
    /// VeraCrypt's text mode on a terminal, no keyfile on its line: ask
    /// for keyfiles after the password and PIM, as a mount asks them.
    #[arg(long, hide = true)]
    pub ask_keyfiles: bool,
}

#[derive(Subcommand)]
pub enum TokenAction {
    /// Every keyfile on every token, as token://slot/N/file/NAME.
    List {
        /// Print JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Store a file (its first MiB) on a token as a keyfile.
    Import {
        /// The file to store.
        file: PathBuf,
        /// The token's slot (from `tcctl token list`; default: the first
        /// slot holding a token).
        #[arg(long)]
        slot: Option<u64>,
        /// Its name on the token (default: the file's name).
        #[arg(long)]
        name: Option<String>,
    },
    /// Delete a keyfile from its token, once YES is typed (a volume it
    /// opened opens no more without it).
    Delete {
        /// token://slot/N/file/NAME
        keyfile: String,
        /// Do not ask: delete it (needed without a terminal).
        #[arg(short = 'q', long, alias = "force")]
        batch_mode: bool,
    },
}

#[derive(Args)]
pub struct KeyfileArgs {
    /// The keyfile to make; with --count, the files PATH_1 to PATH_N; "-"
    /// writes one to standard output (never to a terminal).
    pub path: PathBuf,
    /// How many keyfiles to make.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub count: u32,
    /// Bytes in each keyfile, or with K or M (64 to 1M; only the first MiB
    /// of a keyfile counts). With --random-size, the largest size.
    #[arg(long, value_name = "BYTES", value_parser = input::parse_keyfile_size)]
    pub size: Option<u32>,
    /// Give each keyfile a random size from 64 bytes to --size (1048576
    /// without it), so their sizes say nothing.
    #[arg(long)]
    pub random_size: bool,
}

#[derive(Args)]
pub struct DumpArgs {
    #[command(flatten)]
    pub info: InfoArgs,
    /// Also print the master key, which decrypts the volume whatever its
    /// password becomes (root only; asks to type YES first, as cryptsetup
    /// does, and a warning goes to standard error).
    #[arg(long, visible_alias = "dump-volume-key")]
    pub dump_master_key: bool,
    /// Do not ask for confirmation (cryptsetup's --batch-mode): needed for
    /// --dump-master-key without a terminal.
    #[arg(long, short = 'q')]
    pub batch_mode: bool,
}

#[derive(Args)]
pub struct CreateArgs {
    /// The new volume: a container file to make (with --size), or an
    /// existing file or device to overwrite.
    pub volume: PathBuf,
    /// VeraCrypt's text mode on a terminal: a hidden volume's outer
    /// keyfiles are asked after its password and PIM, and a wrong outer
    /// password is said and asked again, as VeraCrypt does.
    #[arg(long, hide = true)]
    pub ask_outer: bool,
    /// VeraCrypt's text mode on a terminal, no keyfile on its line: the
    /// new volume's keyfiles are asked after its password and PIM, as
    /// VeraCrypt asks them.
    #[arg(long, hide = true)]
    pub ask_keyfiles: bool,
    /// Size of a new container file: bytes, or with K, M, G, T (binary;
    /// 1.5G too), whole 512-byte sectors; `max` takes the free space of
    /// its filesystem less 1 MiB, as VeraCrypt's --size=max. Beyond the
    /// free space refused (with --quick, a warning). An existing file of
    /// that name is replaced only once the new volume is made (beside it):
    /// a refused or interrupted create leaves it as it was. Without
    /// --size, the volume is made in the existing file or device.
    #[arg(long, value_parser = input::parse_create_size)]
    pub size: Option<u64>,
    /// Overwrite an existing file or device without asking (VeraCrypt's
    /// --force, as -q); and take a password shorter than 8 characters, or
    /// one shorter than 20 with a PIM under 485 (with a warning). Without
    /// it, a password under 12 characters typed on a terminal is asked
    /// about, as VeraCrypt asks: yes takes it, no asks for another.
    #[arg(long)]
    pub force: bool,
    /// Do not ask before overwriting an existing file or device
    /// (cryptsetup's --batch-mode): needed without a terminal.
    #[arg(long, short = 'q')]
    pub batch_mode: bool,
    /// Set once overwriting what is there was asked for or confirmed.
    #[arg(skip)]
    pub replace: bool,
    #[command(flatten)]
    pub secrets: Secrets,
    /// The volume's format (default: veracrypt).
    #[arg(long, value_enum, ignore_case = true)]
    pub format: Option<Format>,
    /// The TrueCrypt format: --format truecrypt (VeraCrypt's -tc).
    #[arg(long, conflicts_with = "format")]
    pub truecrypt: bool,
    /// VeraCrypt's: normal, or hidden (a hidden volume of --size inside the
    /// existing outer volume, as --hidden-size). The old values veracrypt
    /// and truecrypt pick the format.
    #[arg(long, value_enum, ignore_case = true)]
    pub volume_type: Option<VolumeType>,
    /// The encryption, as TrueCrypt names it.
    #[arg(long, value_enum, ignore_case = true, default_value_t = Encryption::Aes)]
    pub encryption: Encryption,
    /// The hash (PRF) that derives the header key.
    #[arg(long, value_enum, ignore_case = true, default_value_t = Hash::Sha512)]
    pub hash: Hash,
    /// The filesystem made inside (ext4 unless told; "none" leaves the
    /// volume empty). Each needs room, past the headers' 256 KiB: xfs 300
    /// MiB, btrfs 109 MiB, exfat 3 MiB, ntfs 1152 KiB, ext2/3/4 128 KiB,
    /// fat 64 KiB.
    #[arg(long, value_enum, ignore_case = true, default_value_t = NewFilesystem::Ext4)]
    pub filesystem: NewFilesystem,
    /// Sector size: 512, 1024, 2048 or 4096 (default: 512 in a file, the
    /// device's own otherwise).
    #[arg(long, value_parser = input::parse_sector_size)]
    pub sector_size: Option<u32>,
    /// Write headers only (leaves old contents, reveals used space).
    #[arg(long)]
    pub quick: bool,
    /// Make a hidden volume of this size inside the existing outer volume,
    /// which must be fully written and hold FAT, exFAT or NTFS (ext2/3/4,
    /// XFS and Btrfs spread their files over the whole volume, over the
    /// hidden one too: refused).
    #[arg(long, value_parser = input::parse_volume_size)]
    pub hidden_size: Option<u64>,
    /// The outer volume's PIM (with --hidden-size; --pim is the new
    /// hidden volume's). Without it, a terminal asks (Enter for none).
    #[arg(long, allow_negative_numbers = true)]
    pub outer_pim: Option<u32>,
    /// A keyfile of the outer volume (with --hidden-size; repeatable).
    #[arg(long = "outer-keyfile")]
    pub outer_keyfiles: Vec<PathBuf>,
    /// The outer volume's hash (with --hidden-size; --hash is the new
    /// hidden volume's): narrows the outer volume's search.
    #[arg(long, value_enum, ignore_case = true)]
    pub outer_hash: Option<Hash>,
}

impl CreateArgs {
    /// VeraCrypt's --volume-type and --truecrypt folded into --format and
    /// --hidden-size.
    pub fn resolve(mut self) -> Result<Self, Failure> {
        let contradiction = |what: &str| Err(bad_line(format!("{what} contradict each other")));
        let format = |f: Format| {
            if f == Format::Truecrypt {
                "truecrypt"
            } else {
                "veracrypt"
            }
        };
        match self.volume_type {
            Some(VolumeType::Hidden) => {
                if self.hidden_size.is_some() {
                    return contradiction(
                        "--volume-type hidden (whose size is --size) and --hidden-size",
                    );
                }
                let size = self.size.take().ok_or_else(|| {
                    bad_line("--volume-type hidden needs --size: the hidden volume's size".into())
                })?;
                self.hidden_size = Some(size);
            }
            Some(VolumeType::Normal) if self.hidden_size.is_some() => {
                return contradiction("--volume-type normal and --hidden-size");
            }
            Some(t @ (VolumeType::Veracrypt | VolumeType::Truecrypt)) => {
                let f = if t == VolumeType::Truecrypt {
                    Format::Truecrypt
                } else {
                    Format::Veracrypt
                };
                if self.format.is_some_and(|g| g != f) || (self.truecrypt && f != Format::Truecrypt)
                {
                    return contradiction(&format!(
                        "--volume-type {} and the format asked for",
                        format(f)
                    ));
                }
                self.format = Some(f);
            }
            _ => {}
        }
        if self.truecrypt {
            self.format = Some(Format::Truecrypt);
        }
        if self.secrets.query_pim {
            return Err(bad_line(
                "--veracrypt-query-pim goes with the commands that open a volume: create takes \
                 the new volume's --pim, or asks for it on a terminal"
                    .into(),
            ));
        }
        if self.hidden_size.is_none()
            && (self.outer_pim.is_some() || !self.outer_keyfiles.is_empty())
        {
            return Err(bad_line(
                "--outer-pim and --outer-keyfile go with a hidden volume: --hidden-size, or \
                 --volume-type hidden with --size"
                    .into(),
            ));
        }
        Ok(self)
    }
}

/// A command line that contradicts itself (EX_USAGE, as clap's errors).
fn bad_line(message: String) -> Failure {
    Failure {
        code: crate::bus::exit::USAGE,
        message,
    }
}

#[derive(Args)]
pub struct ChangePasswordArgs {
    /// The volume: a container file or a device.
    pub volume: PathBuf,
    #[command(flatten)]
    pub secrets: Secrets,
    #[command(flatten)]
    pub search: Search,
    /// A keyfile for the new credentials (repeatable). Without one the
    /// volume opens without keyfiles afterwards (said when it had some).
    #[arg(long = "new-keyfile")]
    pub new_keyfiles: Vec<PathBuf>,
    /// VeraCrypt's text mode on a terminal: ask for the current keyfiles,
    /// and whether to keep them (or new ones), as VeraCrypt does.
    #[arg(long, hide = true)]
    pub ask_keyfiles: bool,
    /// VeraCrypt's text mode on a terminal: a wrong current password is
    /// said and the current credentials asked again, until they open the
    /// volume or Ctrl-C.
    #[arg(long, hide = true)]
    pub ask_again: bool,
    /// The new PIM (0: the default iterations; without it the PIM stays).
    #[arg(long, allow_negative_numbers = true)]
    pub new_pim: Option<u32>,
    /// Take a new password shorter than 8 characters, or one shorter than
    /// 20 with a PIM under 485 (with a warning). Without it, one under 12
    /// characters typed on a terminal is asked about, as VeraCrypt asks:
    /// yes takes it, no leaves the password unchanged. Also converts to
    /// TrueCrypt's format without asking (with a warning).
    #[arg(long)]
    pub force: bool,
    /// A new hash (PRF).
    #[arg(long, value_enum, ignore_case = true)]
    pub new_hash: Option<Hash>,
    /// Convert the volume to this format. To truecrypt, from VeraCrypt's:
    /// asked first (its header takes 1,000 or 2,000 iterations, not
    /// 500,000), --batch-mode or --force without asking.
    #[arg(long, value_enum, ignore_case = true)]
    pub to: Option<Format>,
    /// Convert to TrueCrypt's format without asking (cryptsetup's
    /// --batch-mode): needed without a terminal. Unlike --force, it takes
    /// no short password.
    #[arg(long, short = 'q')]
    pub batch_mode: bool,
}

#[derive(Args)]
pub struct ExpandArgs {
    /// The volume: a container file, or a device that has grown.
    pub volume: PathBuf,
    /// The container's new size: bytes, or with K, M, G, T (binary, as
    /// create takes it). A device's volume grows to the device's size.
    /// The size an interrupted expansion was going to finishes it.
    #[arg(long, value_parser = input::parse_volume_size, conflicts_with = "add")]
    pub size: Option<u64>,
    /// Grow the container by this much (K, M, G, T as --size).
    #[arg(long, value_parser = input::parse_volume_size)]
    pub add: Option<u64>,
    /// Leave the new space as it is instead of encrypting it (faster; the
    /// host then shows how much of the volume is new).
    #[arg(long)]
    pub no_random_fill: bool,
    /// The volume holds a hidden volume: expanding it is refused, as
    /// VeraCrypt refuses it, before any password is asked.
    #[arg(long)]
    pub holds_hidden: bool,
    /// Expand a volume whose filesystem cannot be grown here (FAT, exFAT,
    /// btrfs that stays under 256 MiB) all the same, as VeraCrypt's
    /// expander does after its warning: the filesystem keeps its size (grow
    /// it elsewhere). Without it, such a volume is refused before anything
    /// is written.
    #[arg(long)]
    pub filesystem_as_is: bool,
    /// Do not ask before expanding (cryptsetup's --batch-mode): needed
    /// without a terminal. Expanding may damage a hidden volume inside,
    /// which the outer volume's password cannot see: its embedded backup
    /// header is overwritten, and the grown filesystem may write over it.
    #[arg(long, short = 'q')]
    pub batch_mode: bool,
    #[command(flatten)]
    pub secrets: Secrets,
    #[command(flatten)]
    pub search: Search,
}

#[derive(Args)]
pub struct BackupHeaderArgs {
    /// The volume: a container file or a device.
    pub volume: PathBuf,
    /// The backup file to make (it must not exist).
    // None once --ask-file has set aside the placeholder it comes with.
    #[arg(required = true)]
    pub backup: Option<PathBuf>,
    #[command(flatten)]
    pub secrets: Secrets,
    #[command(flatten)]
    pub search: Search,
    /// VeraCrypt's text mode on a terminal: ask for the keyfiles after the
    /// password and PIM, one a line, as VeraCrypt does.
    #[arg(long, hide = true)]
    pub ask_keyfiles: bool,
    /// VeraCrypt's text mode on a terminal without a backup file named:
    /// ask for it once the password has opened the volume, as VeraCrypt
    /// asks it last (the BACKUP given with it, `-`, is a placeholder).
    #[arg(long, hide = true)]
    pub ask_file: bool,
}

#[derive(Args)]
#[command(override_usage = "tcctl restore-header [OPTIONS] <VOLUME> <BACKUP | --embedded>")]
pub struct RestoreHeaderArgs {
    /// The volume: a container file or a device.
    pub volume: PathBuf,
    /// The backup file made by backup-header.
    #[arg(required_unless_present = "embedded", conflicts_with = "embedded")]
    pub backup: Option<PathBuf>,
    /// Restore from the backup header inside the volume itself.
    #[arg(long)]
    pub embedded: bool,
    /// Restore the file's header even when its keys read the volume's
    /// data as noise. Without it, that is refused: the backup is then of
    /// another volume of the same size, or the volume holds no filesystem,
    /// only random data (this volume's own headers not opening to compare
    /// keys with).
    #[arg(long, conflicts_with = "embedded")]
    pub skip_data_check: bool,
    /// Do not ask for confirmation (cryptsetup's --batch-mode, VeraCrypt's
    /// --force): needed without a terminal.
    #[arg(long, short = 'q', visible_alias = "force")]
    pub batch_mode: bool,
    #[command(flatten)]
    pub secrets: Secrets,
    #[command(flatten)]
    pub search: Search,
    /// VeraCrypt's text mode on a terminal: ask for the keyfiles after the
    /// password and PIM, one a line, as VeraCrypt does.
    #[arg(long, hide = true)]
    pub ask_keyfiles: bool,
}

#[derive(Subcommand)]
pub enum PolicyAction {
    /// Print the policy in force.
    Show {
        /// Print JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Change the policy; settings not given stay as they are.
    Set(PolicySetArgs),
}

#[derive(Args)]
// Nothing to set is a mistake, not a rewrite of the file as it is.
#[command(group(clap::ArgGroup::new("change").required(true).multiple(true).args([
    "hardware_acceleration", "allow", "allow_all", "prefer", "token_library", "file",
])))]
pub struct PolicySetArgs {
    /// Use processor AES instructions where present, or software only.
    #[arg(long, value_enum)]
    pub hardware_acceleration: Option<Acceleration>,
    /// Only these backends may be used (comma-separated).
    #[arg(long, value_delimiter = ',', conflicts_with = "allow_all")]
    pub allow: Option<Vec<String>>,
    /// Every backend may be used.
    #[arg(long)]
    pub allow_all: bool,
    /// Order of preference (comma-separated backend names; "" for none).
    #[arg(long, value_delimiter = ',')]
    pub prefer: Option<Vec<String>>,
    /// The PKCS #11 library clients read token keyfiles with when the user
    /// names none (--token-lib, $TCD_PKCS11_MODULE): an absolute path.
    #[arg(long, value_name = "PATH")]
    pub token_library: Option<PathBuf>,
    /// Take the whole policy from this TOML file ("-": standard input).
    #[arg(long, conflicts_with_all = ["hardware_acceleration", "allow", "allow_all", "prefer", "token_library"])]
    pub file: Option<PathBuf>,
}

#[derive(Subcommand)]
pub enum FavoritesAction {
    /// Add a favorite (--replace replaces one of the same name): a
    /// container file, or a device (kept by its /dev/disk/by-id or
    /// by-partuuid name).
    Add(Box<FavoriteAddArgs>),
    /// Remove a favorite (and its password from your keyring).
    Remove {
        /// The favorite's name.
        name: String,
        /// The system's favorite of that name, not yours.
        #[arg(id = "system_favorite", long = "system-favorite")]
        system: bool,
    },
    /// Your favorites and the system's.
    List {
        /// Print JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
    /// Mount one favorite, all of them, or those marked auto-mount.
    ///
    /// A wrong password typed on the terminal is said and asked again, 3
    /// times in all, as mount asks it. With --all or --auto, as VeraCrypt
    /// mounts favorites, a password is tried on each favorite in turn: one
    /// read with --password-stdin on every one, once each; one typed, once
    /// it opened a favorite, on the next ones, where a favorite it does not
    /// open asks its own.
    Mount(FavoriteMountArgs),
    /// Remove a favorite's password from your keyring. The kernel
    /// keyring belongs to your uid and outlives your account for days: its
    /// keys carry your login name, so a later account with your uid and
    /// another name never reads them; forget them before an account goes.
    Forget {
        /// The favorite's name.
        name: String,
        /// The system's favorite of that name, not yours.
        #[arg(id = "system_favorite", long = "system-favorite")]
        system: bool,
    },
}

#[derive(Args)]
pub struct FavoriteAddArgs {
    /// The favorite's name.
    pub name: String,
    /// The volume: a container file or a device.
    pub volume: PathBuf,
    /// Where to mount it.
    #[arg(long)]
    pub mount_point: Option<PathBuf>,
    /// VeraCrypt's slot it mounts in (as mount's --slot; without
    /// --mount-point, it mounts on that slot's /run/media/$USER/veracryptN).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub slot: Option<u32>,
    /// Mount it read-only (as mount's -r).
    #[arg(long, short = 'r', visible_alias = "read-only")]
    pub readonly: bool,
    /// Only try this format at each mount (absent: both).
    #[arg(long, value_enum, ignore_case = true)]
    pub format: Option<Format>,
    /// Only try TrueCrypt's format: --format truecrypt (VeraCrypt's -tc).
    #[arg(long, conflicts_with = "format")]
    pub truecrypt: bool,
    /// A drive or partition under system encryption (as mount's
    /// --system-encryption): read-only unless --read-write.
    #[arg(long)]
    pub system_encryption: bool,
    /// With system encryption: mount it read-write all the same.
    #[arg(long, conflicts_with = "readonly")]
    pub read_write: bool,
    /// VeraCrypt's -m: system (--system-encryption), ro (--readonly).
    #[arg(
        long,
        short = 'm',
        value_enum,
        value_delimiter = ',',
        value_name = "OPTIONS"
    )]
    pub mount_options: Vec<FavoriteMountOption>,
    /// Use this cipher backend for every layer.
    #[arg(long)]
    pub backend: Option<String>,
    /// Mount its filesystem, or stop at the block device.
    #[arg(long, value_parser = MountFilesystemParser)]
    pub filesystem: Option<MountFilesystem>,
    /// Pass discards (TRIM) down; reveals which blocks are used.
    #[arg(long)]
    pub discard: bool,
    /// A keyfile (repeatable).
    #[arg(long = "keyfile", short = 'k')]
    pub keyfiles: Vec<PathBuf>,
    /// VeraCrypt's PIM (none: the default iterations).
    #[arg(long, allow_negative_numbers = true)]
    pub pim: Option<u32>,
    /// The hash (PRF) it opens with, tried first at each mount.
    #[arg(long, value_enum, ignore_case = true)]
    pub hash: Option<Hash>,
    /// The encryption it opens with, tried first at each mount.
    #[arg(long, value_enum, ignore_case = true)]
    pub encryption: Option<Encryption>,
    /// Ask for the hidden volume's password at mount, after the volume's,
    /// and protect it (its PIM, when not given, is the favorite's --pim).
    #[arg(long)]
    pub protect_hidden: bool,
    #[command(flatten)]
    pub hidden: HiddenCredentials,
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
    /// Ask for the password now and keep it in your keyring, once it has
    /// opened the volume (one that does not: nothing is added, exit 2).
    #[arg(long, conflicts_with = "system_favorite")]
    pub remember: bool,
    /// Read the password from standard input (with --remember).
    #[arg(long)]
    pub password_stdin: bool,
    /// Replace a favorite of that name, and all its settings, with this
    /// one (without it, that name is refused).
    #[arg(long)]
    pub replace: bool,
}

/// What opens the hidden volume `--protect-hidden` protects, besides its
/// password.
#[derive(Args)]
pub struct HiddenCredentials {
    /// The hidden volume's PIM, with --protect-hidden (VeraCrypt's
    /// --protection-pim).
    #[arg(
        long,
        allow_negative_numbers = true,
        visible_alias = "protection-pim",
        requires = "protect_hidden"
    )]
    pub protect_hidden_pim: Option<u32>,
    /// A keyfile of the hidden volume, with --protect-hidden (repeatable;
    /// VeraCrypt's --protection-keyfiles).
    #[arg(
        long = "protect-hidden-keyfile",
        visible_alias = "protection-keyfile",
        value_name = "FILE",
        requires = "protect_hidden"
    )]
    pub protect_hidden_keyfiles: Vec<PathBuf>,
}

#[derive(Args)]
pub struct FavoriteMountArgs {
    /// The favorite's name.
    #[arg(required_unless_present_any = ["all", "auto"], conflicts_with_all = ["all", "auto"])]
    pub name: Option<String>,
    /// All your favorites.
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
    /// Read the password from standard input: its first line is tried on
    /// every favorite mounted (as VeraCrypt's --auto-mount favorites
    /// --stdin); a hidden volume's password to protect is the next line.
    #[arg(long, alias = "stdin")]
    pub password_stdin: bool,
}
