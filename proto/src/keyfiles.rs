//! Which files a keyfile list names, by TrueCrypt's rule: a file is
//! itself; a folder stands for the regular files directly in it (not in
//! its subfolders, and not hidden ones whose name starts with `.`), in byte
//! order of their names. An empty folder is an error, since it would
//! silently add nothing. Every side that reads keyfiles a user named uses
//! this, so they all mean the same files.

use std::fmt;
use std::path::{Path, PathBuf};

/// How much of a keyfile counts: its first MiB, as in TrueCrypt.
pub const MAX_READ: usize = 1 << 20;

/// A keyfile path that names no usable file.
#[derive(Debug)]
pub struct KeyfileError {
    /// The path as given (or the folder's file that failed).
    pub path: PathBuf,
    pub problem: String,
}

impl fmt::Display for KeyfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "keyfile {}: {}", self.path.display(), self.problem)
    }
}

impl std::error::Error for KeyfileError {}

/// The files `paths` stand for, in the order they count.
pub fn files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, KeyfileError> {
    let mut out = Vec::new();
    for path in paths {
        let fail = |problem: String| KeyfileError {
            path: path.clone(),
            problem,
        };
        let meta = std::fs::metadata(path).map_err(|e| fail(e.to_string()))?;
        if !meta.is_dir() {
            out.push(path.clone());
            continue;
        }
        let in_folder = folder_files(path).map_err(|e| fail(e.to_string()))?;
        if in_folder.is_empty() {
            return Err(fail("folder has no keyfiles".into()));
        }
        out.extend(in_folder);
    }
    Ok(out)
}

/// The hidden regular files (names starting with `.`) directly in the
/// folders among `paths`: never keyfiles, as VeraCrypt has it, and said
/// to be skipped as VeraCrypt warns of them.
pub fn hidden_skipped(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in paths.iter().filter(|p| p.is_dir()) {
        let Ok(entries) = std::fs::read_dir(path) else {
            continue;
        };
        for entry in entries.flatten() {
            let hidden = entry.file_name().as_encoded_bytes().first() == Some(&b'.');
            if hidden && std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file()) {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

/// The regular files directly in `folder` that are not hidden, sorted.
fn folder_files(folder: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder)? {
        let entry = entry?;
        let hidden = entry.file_name().as_encoded_bytes().first() == Some(&b'.');
        let is_file = std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file());
        if is_file && !hidden {
            files.push(entry.path());
        }
    }
    files.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tcd-keyfiles-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("scratch folder");
        d
    }

    #[test]
    fn a_folder_is_its_visible_files_in_name_order_and_a_file_is_itself() {
        let d = scratch("order");
        for name in ["b", "a", ".hidden", "B"] {
            std::fs::write(d.join(name), name).expect("write");
        }
        std::fs::create_dir(d.join("sub")).expect("subfolder");
        std::fs::write(d.join("sub/inner"), "x").expect("write");
        let single = d.join("a");
        let got = files(&[single.clone(), d.clone()]).expect("files");
        assert_eq!(
            got,
            vec![single.clone(), d.join("B"), d.join("a"), d.join("b")]
        );
        // The hidden one skipped is named, for the warning.
        assert_eq!(
            hidden_skipped(&[single, d.clone()]),
            vec![d.join(".hidden")]
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn an_empty_folder_and_a_missing_file_are_errors_naming_them() {
        let d = scratch("empty");
        std::fs::write(d.join(".only-hidden"), "x").expect("write");
        let e = files(std::slice::from_ref(&d)).expect_err("empty folder");
        assert_eq!(e.path, d);
        assert_eq!(e.problem, "folder has no keyfiles");
        let missing = d.join("missing");
        let e = files(std::slice::from_ref(&missing)).expect_err("missing file");
        assert_eq!(e.path, missing);
        let _ = std::fs::remove_dir_all(&d);
    }
}
