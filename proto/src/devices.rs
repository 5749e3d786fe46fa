//! Stable names of block devices, as favorites keep them.
//!
//! `/dev/sdb1` names whatever was plugged in second; a favorite names its
//! device as udev's links do: `/dev/disk/by-id/…`, `/dev/disk/by-partuuid/…`
//! (or by-uuid, by-partlabel). Where udev runs, the links exist and are
//! followed. Where it does not (containers, early boot), a by-partuuid or
//! by-partlabel name is found from the partition table itself (the
//! kernel's `PARTUUID`, else `blkid`), so the same favorite works on both.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The folder of udev's persistent links.
pub const DISK_LINKS: &str = "/dev/disk";

/// The kinds of persistent link a favorite may name, best first.
const KINDS: [&str; 4] = ["by-id", "by-partuuid", "by-uuid", "by-partlabel"];

/// Whether `host` names a device stably (a udev persistent link).
pub fn is_stable(host: &str) -> bool {
    host.strip_prefix(DISK_LINKS)
        .and_then(|r| r.strip_prefix('/'))
        .and_then(|r| r.split_once('/'))
        .is_some_and(|(kind, rest)| {
            KINDS.contains(&kind) && !matches!(rest, "" | "." | "..") && !rest.contains('/')
        })
}

/// Where a favorite's volume is now: a container's own path, or the device
/// its stable name points to (`None` when that device is absent).
pub fn locate(host: &str) -> Option<PathBuf> {
    if host.starts_with("/dev/") {
        resolve(host)
    } else {
        Some(PathBuf::from(host))
    }
}

/// The device (`/dev/NAME`) a stable name points to now, if present.
pub fn resolve(host: &str) -> Option<PathBuf> {
    let link = Path::new(host);
    if let Ok(p) = std::fs::canonicalize(link) {
        return Some(p);
    }
    let rest = host.strip_prefix(DISK_LINKS)?.strip_prefix('/')?;
    let (kind, value) = rest.split_once('/')?;
    let (kernel_key, blkid_key) = match kind {
        "by-partuuid" => ("PARTUUID", "PART_ENTRY_UUID"),
        "by-partlabel" => ("PARTNAME", "PART_ENTRY_NAME"),
        // by-id and by-uuid come only from udev's links.
        _ => return None,
    };
    partitions()
        .into_iter()
        .find(|name| {
            partition_value(name, kernel_key, blkid_key)
                .is_some_and(|v| v.eq_ignore_ascii_case(value))
        })
        .map(|name| Path::new("/dev").join(name))
}

/// The stable name of `device` (`/dev/sdb1`, or a link to it): an existing
/// udev link, else `/dev/disk/by-partuuid/…` read from the partition
/// table. `None` for a device with neither (a whole loop device, say).
pub fn stable_name(device: &Path) -> Option<String> {
    let target = std::fs::canonicalize(device).ok()?;
    for kind in KINDS {
        let Ok(dir) = std::fs::read_dir(Path::new(DISK_LINKS).join(kind)) else {
            continue;
        };
        let mut names: Vec<PathBuf> = dir.flatten().map(|e| e.path()).collect();
        names.sort();
        if let Some(link) = names
            .into_iter()
            .find(|l| std::fs::canonicalize(l).is_ok_and(|t| t == target))
        {
            return Some(link.to_string_lossy().into_owned());
        }
    }
    let name = target.file_name()?.to_str()?;
    let uuid = partition_value(name, "PARTUUID", "PART_ENTRY_UUID")?;
    Some(format!(
        "{DISK_LINKS}/by-partuuid/{}",
        uuid.to_ascii_lowercase()
    ))
}

/// The partitions the kernel knows (`sda1`, `loop0p1`).
fn partitions() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/sys/class/block") else {
        return Vec::new();
    };
    let mut v: Vec<String> = dir
        .flatten()
        .filter(|e| e.path().join("partition").exists())
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .collect();
    v.sort();
    v
}

/// A partition's value from the kernel's uevent (set when the kernel read
/// the table), else from `blkid -p` (partitions added with BLKPG).
fn partition_value(name: &str, kernel_key: &str, blkid_key: &str) -> Option<String> {
    let uevent =
        std::fs::read_to_string(Path::new("/sys/class/block").join(name).join("uevent")).ok()?;
    let from_kernel = uevent
        .lines()
        .find_map(|l| l.strip_prefix(kernel_key)?.strip_prefix('='))
        .filter(|v| !v.is_empty())
        .map(str::to_owned);
    if from_kernel.is_some() {
        return from_kernel;
    }
    if !Path::new("/sys/class/block")
        .join(name)
        .join("partition")
        .exists()
    {
        return None;
    }
    let out = system_tool("blkid")?
        .args(["-p", "-o", "value", "-s", blkid_key])
        .arg(Path::new("/dev").join(name))
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let (status, stdout) = finish_within(out, Duration::from_secs(10))?;
    let v = String::from_utf8(stdout).ok()?.trim().to_owned();
    (status.success() && !v.is_empty()).then_some(v)
}

/// Folders a system tool is run from; a caller's `PATH` never counts (the
/// daemon runs this as root).
const SYSTEM_DIRS: &[&str] = &["/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/// `tool` from the system folders, as a command with an empty environment
/// (only a fixed `PATH` and the C locale) and no input.
pub fn system_tool(tool: &str) -> Option<Command> {
    let path = SYSTEM_DIRS
        .iter()
        .map(|d| Path::new(d).join(tool))
        .find(|p| p.is_file())?;
    let mut c = Command::new(path);
    c.env_clear()
        .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    Some(c)
}

/// The exit status and output of `child`, or `None` (and the child killed)
/// when it takes longer than `limit`: a hung tool never holds its caller.
fn finish_within(
    mut child: std::process::Child,
    limit: Duration,
) -> Option<(std::process::ExitStatus, Vec<u8>)> {
    let mut stdout = child.stdout.take()?;
    // Read on a thread so a chatty tool never blocks on a full pipe.
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::Read::take(&mut stdout, 1 << 16), &mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    Some((status, reader.join().ok()?))
}

/// The loop device whose backing file is the file with device number
/// `dev` and inode `ino` (as sysfs names it, readable by every user), if
/// one is attached to it.
pub fn loop_device_over(dev: u64, ino: u64) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let entries = std::fs::read_dir("/sys/block").ok()?;
    entries.flatten().find_map(|e| {
        let name = e.file_name();
        if !name.to_string_lossy().starts_with("loop") {
            return None;
        }
        let back = std::fs::read_to_string(e.path().join("loop/backing_file")).ok()?;
        let m = std::fs::metadata(back.trim_end_matches('\n')).ok()?;
        (m.dev() == dev && m.ino() == ino).then(|| Path::new("/dev").join(name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_names_are_udev_links_of_known_kinds() {
        assert!(is_stable("/dev/disk/by-id/usb-Kingston_DT_1234-0:0-part1"));
        assert!(is_stable("/dev/disk/by-partuuid/0a1b2c3d-01"));
        assert!(!is_stable("/dev/sdb1"));
        assert!(!is_stable("/dev/disk/by-path/pci-0000:00:1f.2-ata-1"));
        assert!(!is_stable("/dev/disk/by-id/"));
        assert!(!is_stable("/dev/disk/by-id/../../sdb"));
        assert!(!is_stable("/dev/disk/by-id/.."));
        assert!(!is_stable("/home/u/vol.hc"));
    }

    #[test]
    fn tools_run_by_absolute_path_with_an_empty_environment() {
        // Whatever the daemon's own environment holds (a PATH, a locale),
        // the tool comes from a system folder and sees none of it.
        let mut c = system_tool("env").expect("env is installed");
        let program = std::path::PathBuf::from(c.get_program());
        assert!(
            SYSTEM_DIRS
                .iter()
                .any(|d| program.parent() == Some(Path::new(d))),
            "{}",
            program.display()
        );
        let out = c.stdout(Stdio::piped()).output().unwrap();
        let mut vars: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        vars.sort();
        assert_eq!(vars, ["LC_ALL=C", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"]);
        assert!(system_tool("no-such-tool-here").is_none());
    }

    #[test]
    fn a_hung_tool_is_killed() {
        let child = system_tool("sleep")
            .unwrap()
            .arg("60")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        assert!(finish_within(child, Duration::from_millis(200)).is_none());
        assert!(start.elapsed() < Duration::from_secs(30));
    }
}
