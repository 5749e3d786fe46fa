//! Named D-Bus errors (`org.tcd.Error.*`), one per thing a client tells
//! apart, mapped from the library's errors at the boundary.

use crate::error::Error;

#[derive(Debug, zbus::DBusError)]
#[zbus(prefix = "org.tcd.Error")]
pub enum ServiceError {
    #[zbus(error)]
    ZBus(zbus::Error),
    /// Wrong password or keyfile, or not a volume (deliberately one error).
    WrongPassword(String),
    AlreadyMounted(String),
    NotFound(String),
    Busy(String),
    PermissionDenied(String),
    UnsupportedCipher(String),
    InvalidArgument(String),
    PasswordTooLong(String),
    Cancelled(String),
    /// Above a bound the policy sets for callers who are not
    /// administrators (PIM, Argon2 memory).
    LimitExceeded(String),
    MountPoint(String),
    NoFilesystem(String),
    /// A filesystem type outside the policy's allow-list.
    FilesystemNotAllowed(String),
    /// A policy text with an error: the message names its line and column.
    InvalidPolicy(String),
    /// A favorite, or a user's favorites, past the daemon's size limits.
    TooLarge(String),
    /// A file the daemon would read as root is not a root-owned regular
    /// file that only root may change.
    UnsafeFile(String),
    /// The volume was dismounted, but writes to it did not all reach the
    /// host (the message says what went wrong).
    WritesLost(String),
    /// A read-only mount of a filesystem whose journal needs a replay the
    /// daemon cannot make in memory: mount read-write once.
    JournalNeedsReplay(String),
    Failed(String),
}

impl From<Error> for ServiceError {
    fn from(e: Error) -> Self {
        let msg = e.to_string();
        match e {
            Error::NotUnlocked { .. } => ServiceError::WrongPassword(msg),
            Error::AlreadyMounted(_) => ServiceError::AlreadyMounted(msg),
            Error::NotMounted(_) => ServiceError::NotFound(msg),
            Error::Busy(_) => ServiceError::Busy(msg),
            Error::UnsupportedCipher(_) | Error::NoSuchCipher { .. } | Error::UnknownChain(_) => {
                ServiceError::UnsupportedCipher(msg)
            }
            Error::PasswordTooLong { .. } => ServiceError::PasswordTooLong(msg),
            Error::Cancelled => ServiceError::Cancelled(msg),
            Error::OverLimit(_) | Error::Argon2Memory { .. } => ServiceError::LimitExceeded(msg),
            Error::MountPoint { .. } => ServiceError::MountPoint(msg),
            Error::NoFilesystem(_) => ServiceError::NoFilesystem(msg),
            Error::FilesystemNotAllowed { .. } => ServiceError::FilesystemNotAllowed(msg),
            Error::Policy { .. } => ServiceError::InvalidPolicy(msg),
            Error::BackendNotAllowed(_) => ServiceError::PermissionDenied(msg),
            Error::TooLarge(_) => ServiceError::TooLarge(msg),
            Error::UnsafeFile { .. } => ServiceError::UnsafeFile(msg),
            Error::JournalNeedsReplay { .. } => ServiceError::JournalNeedsReplay(msg),
            Error::InvalidArgument(_)
            | Error::InvalidPim(_)
            | Error::PrfNotInFormat { .. }
            | Error::VolumeTooSmall { .. }
            | Error::HiddenDoesNotFit { .. }
            | Error::OuterNotFilled { .. }
            | Error::Keyfile { .. } => ServiceError::InvalidArgument(msg),
            _ => ServiceError::Failed(msg),
        }
    }
}
