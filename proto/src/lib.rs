//! The contracts of tcd, each spelled once for every side.
//!
//! `abi` is the versioned C ABI a cipher backend exports (mirrored by
//! `include/tcd_backend.h`); `devices` the stable device names favorites
//! keep; `fs_options` the filesystem mount options a caller may give;
//! `keyfiles` which files a keyfile list names; `mount_points` the folders
//! no volume is mounted on; `mount_table` the kernel's mount table. With
//! the `contract` feature, `contract` is the D-Bus API: bus names and paths, the options
//! and results of every method, the error names with their `tcctl` exit
//! codes, the volume view and the policy file. The daemon and every client
//! use these types; a new option is added here once.

pub mod abi;
#[cfg(feature = "contract")]
pub mod contract;
pub mod devices;
pub mod fs_options;
pub mod keyfiles;
pub mod mount_points;
pub mod mount_table;
