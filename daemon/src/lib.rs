//! The tcd daemon library: the cipher engine over loaded backends (and, in
//! later parts, volumes, mounting and the D-Bus service).

pub mod engine;
pub mod error;
pub mod volume;

pub use error::{Error, Result};
