//! `tcctl create-keyfile`: TrueCrypt's Keyfile Generator. Random bytes
//! from the kernel, in new files only their owner may read.

use crate::bus::{Failure, exit};
use crate::cli::KeyfileArgs;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// VeraCrypt's smallest keyfile, and the most of one that counts.
const MIN_SIZE: u32 = 64;
const MAX_SIZE: u32 = 1 << 20;

/// Makes every keyfile asked for, or none: a failure removes those this
/// run made.
pub fn create(a: &KeyfileArgs) -> Result<(), Failure> {
    let paths = names(&a.path, a.count);
    let mut made: Vec<&PathBuf> = Vec::new();
    for path in &paths {
        let size = match (a.random_size, a.size) {
            (true, most) => random_size(most.unwrap_or(MAX_SIZE))?,
            (false, size) => size.unwrap_or(MIN_SIZE),
        };
        if let Err(e) = write_new(path, size) {
            for p in made {
                let _ = std::fs::remove_file(p);
            }
            return Err(e);
        }
        made.push(path);
    }
    for p in &paths {
        println!("keyfile {} created", p.display());
    }
    Ok(())
}

/// `path` alone, or `path_1` to `path_N`.
fn names(path: &Path, count: u32) -> Vec<PathBuf> {
    if count == 1 {
        return vec![path.to_owned()];
    }
    (1..=count)
        .map(|i| {
            let mut name = path.as_os_str().to_owned();
            name.push(format!("_{i}"));
            PathBuf::from(name)
        })
        .collect()
}

fn random(bytes: &mut [u8]) -> Result<(), Failure> {
    File::open("/dev/urandom")
        .and_then(|mut r| r.read_exact(bytes))
        .map_err(|e| Failure::invalid(format!("cannot read random bytes: {e}")))
}

/// A size from 64 bytes to `most`, uniform.
fn random_size(most: u32) -> Result<u32, Failure> {
    let mut b = [0u8; 4];
    random(&mut b)?;
    let span = most - MIN_SIZE + 1;
    Ok(MIN_SIZE + u32::from_le_bytes(b) % span)
}

/// A new file of `size` random bytes, mode 0600, never over another.
fn write_new(path: &Path, size: u32) -> Result<(), Failure> {
    let shown = path.display();
    let mut bytes = Zeroizing::new(vec![0u8; size as usize]);
    random(&mut bytes)?;
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => Failure {
                code: exit::USAGE,
                message: format!("{shown} exists: a keyfile is never replaced"),
            },
            _ => Failure::invalid(format!("{shown}: {e}")),
        })?;
    if let Err(e) = f.write_all(&bytes).and_then(|()| f.sync_all()) {
        let _ = std::fs::remove_file(path);
        return Err(Failure::invalid(format!("{shown}: {e}")));
    }
    Ok(())
}
