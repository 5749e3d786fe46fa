//! Types shared by the daemon, the client and the cipher backends.
//!
//! `abi` is the versioned C ABI a cipher backend exports (mirrored by
//! `include/tcd_backend.h`); `dbus` the rows of the D-Bus API; `devices` the stable device names
//! favorites keep; `keyfiles` which files a keyfile list names.

pub mod abi;
pub mod dbus;
pub mod devices;
pub mod keyfiles;
