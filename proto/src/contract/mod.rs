//! The D-Bus API as types: what each method takes and returns.
//!
//! Options travel as `a{sv}` dictionaries (so a client may leave out what
//! it does not need), and are structs in Rust: a key a side does not know is
//! refused by name, a value of the wrong type is refused with its key.

pub mod errors;
pub mod favorite;
pub mod flags;
pub mod names;
pub mod options;
pub mod policy;
pub mod rows;
pub mod secret;
pub mod volume;

pub use errors::ErrorKind;
pub use options::{
    CreateOptions, DismountOptions, ExpandOptions, FilesystemMountOptions,
    FilesystemUnmountOptions, MountOptions, NewCredentials, SearchOptions,
};
pub use secret::{Secret, SecretList};
pub use volume::{HeaderInfo, VolumeRow, VolumeState, VolumeView};
