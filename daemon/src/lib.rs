//! The tcd daemon library: the cipher engine over loaded backends, the
//! volume library, and mounting through FUSE and loop devices (the D-Bus
//! service follows).

pub mod engine;
pub mod error;
pub mod mount;
pub mod mounts;
pub mod service;
pub mod volume;

pub use error::{Error, Result};
