//! Folders no volume is mounted on: the daemon refuses them, and `tcctl`
//! says so before it asks for a password.

use std::path::Path;

/// Folders no volume is mounted on or under.
const SYSTEM: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin",
    "/sys", "/usr", "/var/lib", "/var/log",
];
/// Folders no volume is mounted on (their subfolders are fine): covering
/// one hides what the running system or its users keep there. `/mnt`,
/// `/media`, `/opt` and `/srv` are not among them: root mounts on `/mnt`
/// by habit, as VeraCrypt and mount(8) let it; other users may mount
/// only on folders of their own.
const SYSTEM_EXACT: &[&str] = &["/", "/home", "/root", "/run", "/tmp", "/var"];

/// Whether `real` (an absolute path without symlinks) is a system folder
/// or inside one.
pub fn is_system_folder(real: &Path) -> bool {
    SYSTEM_EXACT.iter().any(|s| real == Path::new(s)) || SYSTEM.iter().any(|s| real.starts_with(s))
}

#[cfg(test)]
mod tests {
    use super::is_system_folder;
    use std::path::Path;

    #[test]
    fn system_folders_are_refused_and_mount_folders_are_not() {
        for refused in [
            "/",
            "/usr",
            "/usr/local",
            "/etc/x",
            "/proc",
            "/home",
            "/run",
            "/tmp",
        ] {
            assert!(is_system_folder(Path::new(refused)), "{refused}");
        }
        for taken in [
            "/mnt",
            "/media",
            "/media/usb",
            "/opt",
            "/srv",
            "/home/u/x",
            "/run/media/u/x",
        ] {
            assert!(!is_system_folder(Path::new(taken)), "{taken}");
        }
    }
}
