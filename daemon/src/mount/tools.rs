//! The system tools the daemon runs (losetup, blkid, mount, umount, mkfs,
//! fsck): by absolute path from the system folders only, with an empty
//! environment, so no caller's PATH or locale reaches them (VeraCrypt's
//! CVE-2024-54187 was a PATH hijack of such a helper).

use crate::error::{Error, Result};
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

const SYSTEM_DIRS: &[&str] = &["/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/// The absolute path of a system tool.
pub fn find(tool: &str) -> Result<PathBuf> {
    SYSTEM_DIRS
        .iter()
        .map(|d| PathBuf::from(d).join(tool))
        .find(|p| p.is_file())
        .ok_or_else(|| Error::ToolMissing(tool.to_owned()))
}

/// Runs `tool` with `args` and returns its output; a non-zero exit is an
/// error carrying the tool's own message.
pub fn run<I, S>(tool: &str, args: I) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let path = find(tool)?;
    let out = Command::new(&path)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::Io {
            what: format!("cannot run {}", path.display()),
            source: e,
        })?;
    if !out.status.success() {
        return Err(Error::ToolFailed {
            tool: tool.to_owned(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(out)
}

/// `run`, returning trimmed standard output.
pub fn output<I, S>(tool: &str, args: I) -> Result<String>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = run(tool, args)?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}
