//! `tcctl create-keyfile`: TrueCrypt's Keyfile Generator.

use crate::bus::Failure;
use crate::cli::KeyfileArgs;

/// Makes every keyfile asked for, or none, and names them.
pub fn create(a: &KeyfileArgs) -> Result<(), Failure> {
    for p in tcd_client::keyfiles::generate(&a.path, a.count, a.size, a.random_size)? {
        println!("keyfile {} created", p.display());
    }
    Ok(())
}
