//! `tcctl create-keyfile`: TrueCrypt's Keyfile Generator.

use crate::bus::Failure;
use crate::cli::KeyfileArgs;

/// Makes every keyfile asked for, or none, and names them.
pub fn create(a: &KeyfileArgs) -> Result<(), Failure> {
    if a.path.as_os_str() == "-" {
        if a.count != 1 {
            return Err(Failure {
                code: crate::bus::exit::USAGE,
                message:
                    "create-keyfile -: one keyfile goes to standard output, not --count of them"
                        .into(),
            });
        }
        return tcd_client::keyfiles::generate_to_stdout(a.size, a.random_size);
    }
    for p in tcd_client::keyfiles::generate(&a.path, a.count, a.size, a.random_size)? {
        println!("keyfile {} created", p.display());
    }
    Ok(())
}
