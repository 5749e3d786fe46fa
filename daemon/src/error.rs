//! The daemon library's one error type.

use std::path::PathBuf;

/// Why a backend library was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendProblem {
    #[error("not owned by root (owner uid {0})")]
    NotRootOwned(u32),
    #[error("writable by group or others (mode {0:o})")]
    Writable(u32),
    #[error("not a regular file")]
    NotAFile,
    #[error("cannot open: {0}")]
    Open(String),
    #[error("not a loadable shared library: {0}")]
    NotALibrary(String),
    #[error("no `tcd_backend_entry` symbol: not a tcd backend")]
    NoEntry,
    #[error("entry point returned no descriptor")]
    NullDescriptor,
    #[error("built for backend ABI version {found}, this daemon speaks versions 1 to {expected}")]
    AbiVersion { found: u32, expected: u32 },
    #[error("malformed descriptor: {0}")]
    Malformed(String),
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("backend {}: {problem}", path.display())]
    Backend {
        path: PathBuf,
        problem: BackendProblem,
    },
    #[error("backend folder {}: {problem}", path.display())]
    BackendDir {
        path: PathBuf,
        problem: BackendProblem,
    },
    #[error("backend {backend} is not available on this processor")]
    BackendUnavailable { backend: String },
    #[error("backend {backend} has no cipher {cipher}")]
    NoSuchCipher { backend: String, cipher: String },
    #[error(
        "no backend the policy allows provides the cipher {0} (`tcctl backends` lists what each has)"
    )]
    UnsupportedCipher(String),
    #[error("unknown encryption algorithm {0}")]
    UnknownChain(String),
    #[error("key material of {got} bytes where {expected} are needed")]
    KeyLength { expected: usize, got: usize },
    #[error("{len} bytes is not a whole number of {unit}-byte data units")]
    Alignment { len: usize, unit: usize },
    #[error("{units} data units from number {first_unit} pass the last unit number")]
    UnitRange { first_unit: u64, units: u64 },
    #[error("backend {backend} failed in {call}: status {status}")]
    BackendCall {
        backend: String,
        call: &'static str,
        status: i32,
    },
    /// One message for a wrong password, a missing keyfile and a file that
    /// is no volume, on purpose: telling them apart would leak which.
    #[error("wrong password or keyfile, or not a volume{}", untried_note(untried))]
    NotUnlocked { untried: Vec<String> },
    /// `--protect-hidden`: the outer password was right, the hidden one
    /// opened nothing. Says nothing of whether a hidden volume exists.
    #[error("{}", tcd_proto::contract::errors::HIDDEN_NOT_UNLOCKED)]
    HiddenNotUnlocked,
    /// A file too small to be a volume: nothing was searched, so this is a
    /// bad request, not a wrong password.
    #[error("{0}")]
    NotAVolume(String),
    #[error("{what}: {}", plain(source))]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    InvalidArgument(String),
    #[error("write refused: it would land in the protected hidden volume")]
    HiddenVolumeProtected,
    #[error("the volume is read-only")]
    ReadOnly,
    #[error("cancelled")]
    Cancelled,
    #[error(
        "this volume's Argon2id needs {needed_mib} MiB of memory, more than the {limit_mib} MiB allowed"
    )]
    Argon2Memory { needed_mib: u64, limit_mib: u64 },
    /// A request above what the policy lets this caller spend (PIM,
    /// Argon2 memory): refused before any work.
    #[error("{0}")]
    OverLimit(String),
    #[error("PIM {0} is out of range")]
    InvalidPim(u32),
    #[error("{prf} is not a PRF of {format}")]
    PrfNotInFormat {
        prf: &'static str,
        format: &'static str,
    },
    #[error("password of {len} bytes is longer than the {max} bytes {format} allows")]
    PasswordTooLong {
        len: usize,
        max: usize,
        format: &'static str,
    },
    #[error("the operating system's random source failed: {0}")]
    Random(String),
    #[error("a layer's XTS primary and secondary keys are equal: refused as weak")]
    WeakKeys,
    #[error("the host has {size} bytes; a volume needs at least {min}")]
    VolumeTooSmall { size: u64, min: u64 },
    #[error(
        "a hidden volume of {size} bytes does not fit: the outer volume has room for at most \
         {room} bytes (less what its files take)"
    )]
    HiddenDoesNotFit { size: u64, room: u64 },
    #[error(
        "the outer volume has an unencrypted (all-zero) sector at host byte {offset}, which would betray a hidden volume: fill the outer volume first (full format)"
    )]
    OuterNotFilled { offset: u64 },
    #[error(
        "the outer volume's filesystem has data at host byte {offset} (files, or files since deleted), inside the space a hidden volume of {size} bytes would take: at most {room} bytes fit behind it; move or delete the outer volume's files, or make the hidden volume smaller"
    )]
    HiddenOverOuterData { offset: u64, size: u64, room: u64 },
    #[error(
        "the end of the outer volume, where a hidden volume lies, is in use: it holds a hidden volume already (an outer volume holds one, and a new one would destroy it), or the outer filesystem's data reaches its last sector"
    )]
    OuterEndInUse,
    #[error(
        "the outer volume holds a hidden volume already, which this password opens: a new one would destroy it"
    )]
    HiddenThere,
    #[error("keyfile {path}: {problem}")]
    Keyfile { path: String, problem: String },
    #[error("{0} is not installed")]
    ToolMissing(String),
    #[error("{tool} failed: {message}")]
    ToolFailed { tool: String, message: String },
    #[error("{tool} did not finish within {seconds} s and was stopped")]
    ToolTimedOut { tool: String, seconds: u64 },
    #[error("mount point {path} {problem}")]
    MountPoint { path: String, problem: String },
    #[error("{0} is busy")]
    Busy(String),
    /// A filesystem the processes named keep busy (pid 0: one the caller
    /// may not see).
    #[error("{what} is busy{}", in_use_by(holders))]
    Held { what: String, holders: Vec<Holder> },
    #[error("{0} is already mounted")]
    AlreadyMounted(String),
    /// A volume dismounted by force that processes still hold.
    #[error(
        "{volume} is still detaching (dismounted by force){}; mount it again once they let go",
        in_use_by(holders)
    )]
    Detaching {
        volume: String,
        holders: Vec<Holder>,
    },
    #[error("{0} is not mounted")]
    NotMounted(String),
    #[error(
        "{0} holds no filesystem this machine can mount (mount with option filesystem \"none\" to reach its block device)"
    )]
    NoFilesystem(String),
    #[error(
        "{volume} holds a {fs_type} filesystem, which is not among the filesystems the policy lets users mount ({allowed}); mount with option filesystem \"none\" to reach its block device"
    )]
    FilesystemNotAllowed {
        volume: String,
        fs_type: String,
        allowed: String,
    },
    /// A read-only mount whose filesystem's journal (or log) needs a
    /// replay the daemon cannot make in memory.
    #[error(
        "the {fs_type} filesystem's journal needs replaying after an unclean stop, which this read-only mount cannot do ({why}); mount the volume read-write once to replay it, then read-only again"
    )]
    JournalNeedsReplay { fs_type: String, why: String },
    #[error("key derivation failed: {0}")]
    Kdf(String),
    #[error("{source_name}: line {line}, column {column}: {message}")]
    Policy {
        source_name: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("backend {0} is not allowed by the policy")]
    BackendNotAllowed(String),
    #[error("cannot start the cipher thread pool: {0}")]
    ThreadPool(String),
    /// Past a size or count limit the daemon keeps so that no reply
    /// (favorites) grows towards the bus's message limit.
    #[error("{0}")]
    TooLarge(String),
    /// A file the daemon reads as root for nobody in particular (a system
    /// favorite's keyfile or password file) that is not a regular file of
    /// root's, writable by no one else.
    #[error("{path}: {problem}")]
    UnsafeFile { path: String, problem: String },
    /// Something the caller named does not exist (a favorite, a device).
    #[error("{0}")]
    NotFound(String),
    /// The caller may not do this.
    #[error("{0}")]
    PermissionDenied(String),
    /// The daemon already runs as much of this as it allows at once (the
    /// message says what).
    #[error("{0}")]
    AtCapacity(String),
    /// A volume was dismounted, but writes to it did not all reach the
    /// host (what went wrong, a line per volume).
    #[error("{0}")]
    WritesLost(String),
}

impl Error {
    /// The API's name for this error, which clients tell apart.
    pub fn kind(&self) -> tcd_proto::contract::ErrorKind {
        use tcd_proto::contract::ErrorKind as K;
        match self {
            Error::NotUnlocked { .. } | Error::HiddenNotUnlocked => K::WrongPassword,
            Error::AlreadyMounted(_) => K::AlreadyMounted,
            Error::NotMounted(_) | Error::NotFound(_) => K::NotFound,
            Error::Busy(_)
            | Error::Held { .. }
            | Error::Detaching { .. }
            | Error::AtCapacity(_) => K::Busy,
            Error::UnsupportedCipher(_) | Error::NoSuchCipher { .. } | Error::UnknownChain(_) => {
                K::UnsupportedCipher
            }
            Error::PasswordTooLong { .. } => K::PasswordTooLong,
            Error::Cancelled => K::Cancelled,
            Error::OverLimit(_) | Error::Argon2Memory { .. } => K::LimitExceeded,
            Error::MountPoint { .. } => K::MountPoint,
            Error::NoFilesystem(_) => K::NoFilesystem,
            Error::FilesystemNotAllowed { .. } => K::FilesystemNotAllowed,
            Error::Policy { .. } => K::InvalidPolicy,
            Error::BackendNotAllowed(_) | Error::PermissionDenied(_) => K::PermissionDenied,
            Error::TooLarge(_) => K::TooLarge,
            Error::UnsafeFile { .. } => K::UnsafeFile,
            Error::JournalNeedsReplay { .. } => K::JournalNeedsReplay,
            Error::WritesLost(_) => K::WritesLost,
            Error::InvalidArgument(_)
            | Error::NotAVolume(_)
            | Error::InvalidPim(_)
            | Error::PrfNotInFormat { .. }
            | Error::VolumeTooSmall { .. }
            | Error::HiddenDoesNotFit { .. }
            | Error::OuterNotFilled { .. }
            | Error::HiddenOverOuterData { .. }
            | Error::OuterEndInUse
            | Error::HiddenThere
            | Error::Keyfile { .. } => K::InvalidArgument,
            _ => K::Failed,
        }
    }
}

/// What the search could not try, said once each: the encryptions no
/// allowed backend has in one group (the policy, not the password, kept
/// them out), those the backend asked for lacks in another, then anything
/// else with its reason.
fn untried_note(untried: &[String]) -> String {
    const NO_BACKEND: &str = " (no allowed backend)";
    const NOT_IN: &str = " (not in backend ";
    let mut unserved: Vec<&str> = Vec::new();
    let mut lacking: Vec<&str> = Vec::new();
    let mut asked = "";
    let mut other: Vec<&str> = Vec::new();
    for item in untried {
        let (list, name) = if let Some(name) = item.strip_suffix(NO_BACKEND) {
            (&mut unserved, name)
        } else if let Some((name, backend)) = item.split_once(NOT_IN) {
            asked = backend.trim_end_matches(')');
            (&mut lacking, name)
        } else {
            (&mut other, item.as_str())
        };
        if !list.contains(&name) {
            list.push(name);
        }
    }
    let mut note = String::new();
    if !other.is_empty() {
        note.push_str(&format!(" (not tried: {})", other.join(", ")));
    }
    if !unserved.is_empty() {
        note.push_str(&format!(
            " (not tried, as no backend the policy allows has them: {})",
            unserved.join(", ")
        ));
    }
    if !lacking.is_empty() {
        note.push_str(&format!(
            " (not tried, as backend {asked}, the one asked for, has none of them: {})",
            lacking.join(", ")
        ));
    }
    note
}

pub type Result<T> = std::result::Result<T, Error>;

/// ": in use by PID 387 (sleep), a process of another user", or nothing.
fn in_use_by(holders: &[Holder]) -> String {
    if holders.is_empty() {
        return String::new();
    }
    let named: Vec<String> = holders
        .iter()
        .map(|h| match h.pid {
            0 => "a process of another user".to_owned(),
            pid => format!("PID {pid} ({})", h.command),
        })
        .collect();
    format!(": in use by {}", named.join(", "))
}

/// A process that keeps a filesystem busy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    pub uid: u32,
    /// Its command name (`/proc/PID/comm`).
    pub command: String,
}

/// An I/O error as a user reads it: without the "(os error N)" Rust adds
/// for programmers.
fn plain(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}
