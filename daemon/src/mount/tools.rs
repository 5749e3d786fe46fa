//! The system tools the daemon runs (losetup, blkid, mount, umount, mkfs,
//! fsck): by absolute path from the system folders only, with an empty
//! environment, so no caller's PATH or locale reaches them (VeraCrypt's
//! CVE-2024-54187 was a PATH hijack of such a helper).

use crate::error::{Error, Result};
use std::ffi::OsStr;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const SYSTEM_DIRS: &[&str] = &["/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/// The absolute path of a system tool.
pub fn find(tool: &str) -> Result<PathBuf> {
    SYSTEM_DIRS
        .iter()
        .map(|d| PathBuf::from(d).join(tool))
        .find(|p| p.is_file())
        .ok_or_else(|| Error::ToolMissing(tool.to_owned()))
}

/// How long a tool may run before it is killed: nothing the daemon runs
/// while a volume is being mounted or dismounted may hold it without a
/// bound. mkfs of a large volume gets [`MKFS_LIMIT`].
pub const LIMIT: Duration = Duration::from_secs(60);
/// mkfs writes its metadata over the whole volume.
pub const MKFS_LIMIT: Duration = Duration::from_secs(30 * 60);

/// Runs `tool` with `args` and returns its output; a non-zero exit is an
/// error carrying the tool's own message. Killed after [`LIMIT`].
pub fn run<I, S>(tool: &str, args: I) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    run_for(tool, args, LIMIT)
}

/// [`run`] with its own time limit.
pub fn run_for<I, S>(tool: &str, args: I, limit: Duration) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let path = find(tool)?;
    let io = |e| Error::Io {
        what: format!("cannot run {}", path.display()),
        source: e,
    };
    let mut child = Command::new(&path)
        .args(args)
        .env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(io)?;
    // Both pipes are drained while waiting, so a chatty tool never blocks.
    let drain = |r: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = drain(child.stdout.take().map(|r| Box::new(r) as _));
    let stderr = drain(child.stderr.take().map(|r| Box::new(r) as _));
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(io)? {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            tracing::warn!(
                tool,
                seconds = limit.as_secs(),
                "tool killed after its time limit"
            );
            return Err(Error::ToolTimedOut {
                tool: tool.to_owned(),
                seconds: limit.as_secs(),
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // A tool that left a child holding its pipes (a FUSE driver that went
    // to the background) must not hold us: the pipes are not waited for.
    let collect = |h: std::thread::JoinHandle<Vec<u8>>| {
        let until = Instant::now() + Duration::from_secs(1);
        while !h.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        if h.is_finished() {
            h.join().unwrap_or_default()
        } else {
            Vec::new()
        }
    };
    let out = Output {
        status,
        stdout: collect(stdout),
        stderr: collect(stderr),
    };
    if !out.status.success() {
        // The reason in one line (a tool's usage text after it is noise
        // to the user); the whole of it in the log.
        let said = String::from_utf8_lossy(&out.stderr);
        tracing::debug!(tool, "failed: {}", said.trim());
        let first = said.lines().map(str::trim).find(|l| !l.is_empty());
        return Err(Error::ToolFailed {
            tool: tool.to_owned(),
            message: first.unwrap_or_default().to_owned(),
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
