//! TrueCrypt 7 and VeraCrypt volumes: header layout, key derivation,
//! keyfiles, and opening by trial (creating and maintaining follow).

pub mod header;
pub mod kdf;
pub mod keyfile;
pub mod opened;
pub mod unlock;
