//! What every tcd cipher backend shares.
//!
//! - [`BlockCipher`]: a block cipher that encrypts many blocks per call, the
//!   shape fast implementations want (bitsliced, interleaved, SIMD).
//! - [`XtsCipher`] and [`Xts`]: IEEE 1619 XTS over whole data units, with
//!   tweaks made in batches.
//! - [`export_backend!`]: the `tcd_backend_entry` symbol and the C ABI shims,
//!   which validate every argument and never let a panic cross the boundary.

pub mod block;
pub mod export;
pub mod simd;
pub mod xts;

pub use block::BlockCipher;
pub use tcd_proto::abi;
pub use xts::{Xts, XtsCipher};
