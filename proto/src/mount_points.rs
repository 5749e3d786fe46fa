//! Folders no volume is mounted on: the daemon refuses them, and `tcctl`
//! says so before it asks for a password.

use std::path::Path;

/// Folders no volume is mounted on or under.
const SYSTEM: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin",
    "/sys", "/usr", "/var/lib", "/var/log",
];
/// Folders no volume is mounted on (their subfolders are fine).
const SYSTEM_EXACT: &[&str] = &[
    "/", "/home", "/media", "/mnt", "/opt", "/root", "/run", "/srv", "/tmp", "/var",
];

/// Whether `real` (an absolute path without symlinks) is a system folder
/// or inside one.
pub fn is_system_folder(real: &Path) -> bool {
    SYSTEM_EXACT.iter().any(|s| real == Path::new(s)) || SYSTEM.iter().any(|s| real.starts_with(s))
}
