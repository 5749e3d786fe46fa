//! The D-Bus form of an error: its name from the API's list
//! ([`ErrorKind`]) and a message, or an error of the bus itself.

use crate::error::Error;
use tcd_proto::contract::ErrorKind;
use zbus::message::{Header, Message};
use zbus::names::ErrorName;

#[derive(Debug)]
pub enum ServiceError {
    /// The bus failed (or zbus refused the call's arguments).
    Bus(zbus::Error),
    /// `org.tcd.Error.<kind>` with a message.
    Named(ErrorKind, String),
}

impl ServiceError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        ServiceError::Named(kind, message.into())
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }
    pub fn denied(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::PermissionDenied, message)
    }
    pub fn kind(&self) -> Option<ErrorKind> {
        match self {
            ServiceError::Named(k, _) => Some(*k),
            ServiceError::Bus(_) => None,
        }
    }
}

impl std::fmt::Display for ServiceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServiceError::Bus(e) => write!(f, "{e}"),
            ServiceError::Named(k, m) => write!(f, "{}: {m}", k.dbus_name()),
        }
    }
}

impl std::error::Error for ServiceError {}

impl From<zbus::Error> for ServiceError {
    fn from(e: zbus::Error) -> Self {
        ServiceError::Bus(e)
    }
}

impl From<Error> for ServiceError {
    fn from(e: Error) -> Self {
        ServiceError::Named(e.kind(), e.to_string())
    }
}

/// The name zbus gives its own errors.
const ZBUS_ERROR: &str = "org.freedesktop.zbus.Error";

impl zbus::DBusError for ServiceError {
    fn create_reply(&self, call: &Header<'_>) -> zbus::Result<Message> {
        match self {
            ServiceError::Bus(zbus::Error::FDO(e)) => e.create_reply(call),
            _ => {
                let message = self.description().unwrap_or_default().to_owned();
                Message::error(call, self.name())?.build(&(message,))
            }
        }
    }

    fn name(&self) -> ErrorName<'_> {
        match self {
            ServiceError::Bus(zbus::Error::FDO(e)) => e.name(),
            ServiceError::Bus(_) => ErrorName::from_static_str_unchecked(ZBUS_ERROR),
            ServiceError::Named(kind, _) => ErrorName::try_from(kind.dbus_name())
                .unwrap_or_else(|_| ErrorName::from_static_str_unchecked(ZBUS_ERROR)),
        }
    }

    fn description(&self) -> Option<&str> {
        match self {
            ServiceError::Bus(zbus::Error::FDO(e)) => e.description(),
            ServiceError::Bus(_) => None,
            ServiceError::Named(_, message) => Some(message),
        }
    }
}
