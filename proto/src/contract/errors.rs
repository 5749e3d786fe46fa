//! The errors the daemon replies with: one name each (`org.tcd.Error.*`),
//! and the `tcctl` exit code a script tells them apart by.

/// Every error name of the API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Wrong password or keyfile, or not a volume (deliberately one error).
    WrongPassword,
    AlreadyMounted,
    NotFound,
    Busy,
    PermissionDenied,
    UnsupportedCipher,
    InvalidArgument,
    PasswordTooLong,
    Cancelled,
    /// Above a bound the policy sets for callers who are not
    /// administrators (PIM, Argon2 memory).
    LimitExceeded,
    MountPoint,
    NoFilesystem,
    /// A filesystem type outside the policy's allow-list.
    FilesystemNotAllowed,
    /// A policy text with an error: the message names its line and column.
    InvalidPolicy,
    /// A favorite, or a user's favorites, past the daemon's size limits.
    TooLarge,
    /// A file the daemon would read as root is not a root-owned regular
    /// file that only root may change.
    UnsafeFile,
    /// The volume was dismounted, but writes to it did not all reach the
    /// host (the message says what went wrong).
    WritesLost,
    /// A read-only mount of a filesystem whose journal needs a replay the
    /// daemon cannot make in memory: mount read-write once.
    JournalNeedsReplay,
    Failed,
}

/// `WrongPassword`'s message when `protect_hidden_password` is what
/// failed (the outer volume's credentials were right): a client tells the
/// two apart by it, to name the hidden volume's options.
pub const HIDDEN_NOT_UNLOCKED: &str = "the outer volume opened, but the password, keyfiles and \
                                       PIM given to protect a hidden volume open none inside it";

/// Ends `InvalidArgument`'s message when the host given as a volume is a
/// header backup's size and its header's data area does not fit it: a
/// client names its own way to give the backup as the volume's header.
pub const BACKUP_AS_VOLUME: &str =
    "a host of this size is a header backup, which opens only as the header of its volume";

/// `tcctl`'s exit codes, one per kind of failure a script tells apart.
pub mod exit {
    pub const FAILED: u8 = 1;
    pub const WRONG_PASSWORD: u8 = 2;
    pub const NOT_FOUND: u8 = 3;
    pub const ALREADY_MOUNTED: u8 = 4;
    pub const BUSY: u8 = 5;
    pub const PERMISSION_DENIED: u8 = 6;
    pub const INVALID_ARGUMENT: u8 = 7;
    pub const UNSUPPORTED_CIPHER: u8 = 8;
    pub const NO_DAEMON: u8 = 9;
    pub const CANCELLED: u8 = 10;
    /// Ctrl-C (128 + SIGINT), as shells count a command killed by it.
    pub const INTERRUPTED: u8 = 130;
    /// Dismounted, but writes to the volume did not all reach its host.
    pub const WRITES_LOST: u8 = 11;
    /// `tcctl self-test`: an algorithm did not match its test vectors.
    pub const SELF_TEST_FAILED: u8 = 12;
    /// The command line is wrong (sysexits' EX_USAGE): an unknown option
    /// or value, a missing argument.
    pub const USAGE: u8 = 64;

    /// Every code and what it means, for the manual page.
    pub const TABLE: &[(u8, &str)] = &[
        (0, "success"),
        (FAILED, "failed for another reason (the message says why)"),
        (
            WRONG_PASSWORD,
            "wrong password, keyfile or PIM, or not a volume (one typed on a terminal is asked 3 times in all first, as cryptsetup asks; VeraCrypt's -t asks until it opens; Ctrl-D at the prompt after a wrong one gives up with this code)",
        ),
        (NOT_FOUND, "no such volume, file or device"),
        (ALREADY_MOUNTED, "the volume is mounted already"),
        (
            BUSY,
            "the volume or the daemon is busy (dismount with --force)",
        ),
        (
            PERMISSION_DENIED,
            "not allowed (by the policy, polkit, or file permissions)",
        ),
        (
            INVALID_ARGUMENT,
            "a request refused (a bad mount point, filesystem, policy text or size; a file \
             too small to be any volume, searched for no password), or a file to be made that \
             exists already",
        ),
        (UNSUPPORTED_CIPHER, "no allowed backend has the cipher"),
        (NO_DAEMON, "the daemon cannot be reached"),
        (
            CANCELLED,
            "cancelled: a confirmation not given (anything but YES), a prompt ended with \
             Ctrl-D (after a wrong password, that password's 2) or its dialog cancelled, or \
             the search cancelled by its caller",
        ),
        (
            WRITES_LOST,
            "dismounted, but writes to the volume were lost",
        ),
        (
            SELF_TEST_FAILED,
            "self-test: an algorithm did not match its test vectors",
        ),
        (
            USAGE,
            "the command line is wrong (an unknown option or value, such as a backend name \
             the daemon does not have, a missing argument), \
             or a password or a confirmation is needed and there is no way to ask \
             (--password-stdin gives the password, -q the confirmation)",
        ),
        (
            INTERRUPTED,
            "interrupted by Ctrl-C, wherever it is typed (SIGTERM: 143); a create removes \
             its unfinished file",
        ),
    ];
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 19] = [
        ErrorKind::WrongPassword,
        ErrorKind::AlreadyMounted,
        ErrorKind::NotFound,
        ErrorKind::Busy,
        ErrorKind::PermissionDenied,
        ErrorKind::UnsupportedCipher,
        ErrorKind::InvalidArgument,
        ErrorKind::PasswordTooLong,
        ErrorKind::Cancelled,
        ErrorKind::LimitExceeded,
        ErrorKind::MountPoint,
        ErrorKind::NoFilesystem,
        ErrorKind::FilesystemNotAllowed,
        ErrorKind::InvalidPolicy,
        ErrorKind::TooLarge,
        ErrorKind::UnsafeFile,
        ErrorKind::WritesLost,
        ErrorKind::JournalNeedsReplay,
        ErrorKind::Failed,
    ];

    /// The short name ("WrongPassword").
    pub fn short_name(self) -> &'static str {
        match self {
            ErrorKind::WrongPassword => "WrongPassword",
            ErrorKind::AlreadyMounted => "AlreadyMounted",
            ErrorKind::NotFound => "NotFound",
            ErrorKind::Busy => "Busy",
            ErrorKind::PermissionDenied => "PermissionDenied",
            ErrorKind::UnsupportedCipher => "UnsupportedCipher",
            ErrorKind::InvalidArgument => "InvalidArgument",
            ErrorKind::PasswordTooLong => "PasswordTooLong",
            ErrorKind::Cancelled => "Cancelled",
            ErrorKind::LimitExceeded => "LimitExceeded",
            ErrorKind::MountPoint => "MountPoint",
            ErrorKind::NoFilesystem => "NoFilesystem",
            ErrorKind::FilesystemNotAllowed => "FilesystemNotAllowed",
            ErrorKind::InvalidPolicy => "InvalidPolicy",
            ErrorKind::TooLarge => "TooLarge",
            ErrorKind::UnsafeFile => "UnsafeFile",
            ErrorKind::WritesLost => "WritesLost",
            ErrorKind::JournalNeedsReplay => "JournalNeedsReplay",
            ErrorKind::Failed => "Failed",
        }
    }

    /// The D-Bus error name ("org.tcd.Error.WrongPassword").
    pub fn dbus_name(self) -> String {
        format!("{}.{}", super::names::ERROR_PREFIX, self.short_name())
    }

    /// The kind a D-Bus error name stands for; `None` for names that are
    /// not the daemon's (the bus's own errors).
    pub fn from_dbus_name(name: &str) -> Option<ErrorKind> {
        let short = name
            .strip_prefix(super::names::ERROR_PREFIX)?
            .strip_prefix('.')?;
        ErrorKind::ALL.into_iter().find(|k| k.short_name() == short)
    }

    /// `tcctl`'s exit code for it.
    pub fn exit_code(self) -> u8 {
        use exit::*;
        match self {
            ErrorKind::WrongPassword => WRONG_PASSWORD,
            ErrorKind::NotFound => NOT_FOUND,
            ErrorKind::AlreadyMounted => ALREADY_MOUNTED,
            ErrorKind::Busy => BUSY,
            ErrorKind::PermissionDenied | ErrorKind::LimitExceeded => PERMISSION_DENIED,
            ErrorKind::InvalidArgument
            | ErrorKind::PasswordTooLong
            | ErrorKind::MountPoint
            | ErrorKind::NoFilesystem
            | ErrorKind::FilesystemNotAllowed
            | ErrorKind::InvalidPolicy
            | ErrorKind::TooLarge
            | ErrorKind::UnsafeFile => INVALID_ARGUMENT,
            ErrorKind::UnsupportedCipher => UNSUPPORTED_CIPHER,
            ErrorKind::Cancelled => CANCELLED,
            ErrorKind::WritesLost => WRITES_LOST,
            ErrorKind::JournalNeedsReplay | ErrorKind::Failed => FAILED,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_comes_back_and_no_two_kinds_share_one() {
        for k in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_dbus_name(&k.dbus_name()), Some(k));
        }
        assert_eq!(
            ErrorKind::from_dbus_name("org.freedesktop.DBus.Error.Failed"),
            None
        );
        assert_eq!(ErrorKind::from_dbus_name("org.tcd.Error.Nonsense"), None);
    }
}
