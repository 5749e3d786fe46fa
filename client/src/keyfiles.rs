//! TrueCrypt's Keyfile Generator, for `tcctl create-keyfile` and the
//! desktop application: random bytes from the kernel, in new files only
//! their owner may read.

use crate::bus::Failure;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// VeraCrypt's smallest keyfile, and the most of one that counts.
pub const MIN_SIZE: u32 = 64;
pub const MAX_SIZE: u32 = 1 << 20;

/// Makes `count` keyfiles at `path` (`path_1` to `path_N` when more than
/// one) of `size` bytes (64 without it), or with `randomly` of a random
/// size up to `size`; all or none: a failure removes those this run made.
/// The paths made.
pub fn generate(
    path: &Path,
    count: u32,
    size: Option<u32>,
    randomly: bool,
) -> Result<Vec<PathBuf>, Failure> {
    let paths = names(path, count);
    let mut made: Vec<&PathBuf> = Vec::new();
    for path in &paths {
        let size = pick_size(size, randomly)?;
        if let Err(e) = write_new(path, size) {
            for p in made {
                let _ = std::fs::remove_file(p);
            }
            return Err(e);
        }
        made.push(path);
    }
    Ok(paths)
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

/// `size` (64 without it), or `randomly` one up to it (1 MiB without it).
fn pick_size(size: Option<u32>, randomly: bool) -> Result<u32, Failure> {
    match (randomly, size) {
        (true, most) => random_size(most.unwrap_or(MAX_SIZE)),
        (false, size) => Ok(size.unwrap_or(MIN_SIZE)),
    }
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
    let mut bytes = Zeroizing::new(vec![0u8; size as usize]);
    random(&mut bytes)?;
    let mut f = crate::host::create_private(path, "a keyfile is never replaced")?;
    if let Err(e) = f.write_all(&bytes).and_then(|()| f.sync_all()) {
        let _ = std::fs::remove_file(path);
        return Err(Failure::file(path, &e));
    }
    Ok(())
}

/// One keyfile's random bytes on standard output (`create-keyfile -`, as
/// `--keyfile -` reads one from standard input), never onto a terminal.
pub fn generate_to_stdout(size: Option<u32>, randomly: bool) -> Result<(), Failure> {
    use std::io::IsTerminal;
    let out = std::io::stdout();
    if out.is_terminal() {
        return Err(Failure {
            code: crate::bus::exit::USAGE,
            message: "a keyfile is binary: send standard output to a file or a pipe \
                      (or name the file instead of -)"
                .into(),
        });
    }
    let size = pick_size(size, randomly)?;
    let mut bytes = Zeroizing::new(vec![0u8; size as usize]);
    random(&mut bytes)?;
    let mut out = out.lock();
    out.write_all(&bytes)
        .and_then(|()| out.flush())
        .map_err(|e| Failure {
            code: crate::bus::exit::FAILED,
            message: format!("standard output: {e}"),
        })
}
