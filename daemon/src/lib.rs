//! The tcd daemon library: the cipher engine over loaded backends, the
//! volume library, and mounting through FUSE and loop devices (the D-Bus
//! service follows).

pub mod app;
pub mod backends;
pub(crate) mod benchmark;
pub(crate) mod cache;
pub mod engine;
pub mod error;
pub(crate) mod events;
pub mod favorites;
pub mod hardening;
pub(crate) mod memory;
pub mod mount;
pub mod mounts;
pub(crate) mod policy;
pub mod selftest;
pub mod service;
pub(crate) mod trust;
pub mod volume;

pub use error::{Error, Result};
