//! Types shared by the daemon, the client and the cipher backends.
//!
//! `abi` is the versioned C ABI a cipher backend exports (mirrored by
//! `include/tcd_backend.h`). D-Bus types join later.

pub mod abi;
