//! The tcd daemon library: the cipher engine over loaded backends, the
//! volume library, and mounting through FUSE and loop devices (the D-Bus
//! service follows).

pub mod backends;
pub mod benchmark;
pub mod cache;
pub mod engine;
pub mod error;
pub mod events;
pub mod favorites;
pub mod hardening;
pub mod memory;
pub mod mount;
pub mod mounts;
pub mod policy;
pub mod service;
pub mod trust;
pub mod volume;

pub use error::{Error, Result};
