//! TrueCrypt 7 and VeraCrypt volumes: header layout, key derivation,
//! keyfiles, opening by trial, creating, and maintaining.

pub(crate) mod argon2id;
pub mod create;
pub mod expand;
pub mod header;
pub mod health;
pub mod kdf;
pub mod keyfile;
pub mod maintain;
pub mod opened;
pub mod system;
pub mod unlock;
