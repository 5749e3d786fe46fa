//! Block devices appearing and going, from the kernel's uevents on a
//! netlink socket (what udev itself listens to; no polling, and no udev
//! needed).

use crate::error::{Error, Result};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// What happened to a block device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Present with a medium (added, or a loop device given a file).
    Present { name: String, device: u64 },
    /// Removed, or its medium gone (a loop device cleared).
    Gone { name: String, device: u64 },
    /// Events were dropped (the socket's buffer overflowed while the
    /// daemon was busy): look at every device again.
    Lost,
}

/// The kernel's multicast group of uevents.
const KERNEL_GROUP: u32 = 1;

/// A socket receiving the kernel's uevents.
pub struct Listener {
    fd: OwnedFd,
}

impl Listener {
    pub fn open() -> Result<Listener> {
        let io = |e| Error::Io {
            what: "cannot listen for device events".into(),
            source: e,
        };
        // SAFETY: socket(2) with constant arguments; the result is checked
        // before it is owned.
        let raw = unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
                libc::NETLINK_KOBJECT_UEVENT,
            )
        };
        if raw < 0 {
            return Err(io(std::io::Error::last_os_error()));
        }
        // SAFETY: `raw` is a fresh descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // Room for a burst of events (a disk with many partitions) while a
        // mount holds the listener; an overflow is reported, not fatal.
        let size: libc::c_int = 1 << 20;
        // SAFETY: setsockopt reads one c_int of the size given.
        unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&size as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        // SAFETY: an all-zero sockaddr_nl is valid; we set its fields.
        let mut addr: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        addr.nl_groups = KERNEL_GROUP;
        // SAFETY: bind(2) reads `addr`, a live sockaddr_nl of the size given.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_nl).cast(),
                std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
            )
        };
        if rc != 0 {
            return Err(io(std::io::Error::last_os_error()));
        }
        Ok(Listener { fd })
    }

    /// The next block-device change (other events are skipped).
    pub fn next(&self) -> Result<Change> {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            // SAFETY: an all-zero sockaddr_nl is valid; recvfrom fills it.
            let mut from: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t;
            // SAFETY: recvfrom writes at most buf.len() bytes into `buf` and
            // at most `len` bytes into `from`, both live.
            let n = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    0,
                    (&mut from as *mut libc::sockaddr_nl).cast(),
                    &mut len,
                )
            };
            if n < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                if e.raw_os_error() == Some(libc::ENOBUFS) {
                    return Ok(Change::Lost);
                }
                return Err(Error::Io {
                    what: "cannot read device events".into(),
                    source: e,
                });
            }
            // Only the kernel (port 0) speaks for devices.
            if from.nl_pid != 0 {
                continue;
            }
            let len = usize::try_from(n).unwrap_or(0).min(buf.len());
            if let Some(c) = parse(&buf[..len]) {
                return Ok(c);
            }
        }
    }
}

/// A kernel uevent: `ACTION@DEVPATH\0KEY=VALUE\0…`.
pub fn parse(msg: &[u8]) -> Option<Change> {
    let mut action = None;
    let mut subsystem = None;
    let mut name = None;
    let (mut major, mut minor) = (None, None);
    let mut media_change = false;
    for field in msg.split(|b| *b == 0).skip(1) {
        let field = std::str::from_utf8(field).ok()?;
        let Some((k, v)) = field.split_once('=') else {
            continue;
        };
        match k {
            "ACTION" => action = Some(v),
            "SUBSYSTEM" => subsystem = Some(v),
            "DEVNAME" => name = Some(v),
            "MAJOR" => major = v.parse::<u32>().ok(),
            "MINOR" => minor = v.parse::<u32>().ok(),
            "DISK_MEDIA_CHANGE" => media_change = v == "1",
            _ => {}
        }
    }
    if subsystem != Some("block") {
        return None;
    }
    let name = name?.trim_start_matches("/dev/").to_owned();
    if name.contains('/') && !name.starts_with("disk/") {
        // Names are kernel names (sda1, loop0p1); anything else is odd.
        return None;
    }
    let device = libc::makedev(major?, minor?);
    match action? {
        "add" => Some(Change::Present { name, device }),
        "remove" => Some(Change::Gone { name, device }),
        // A loop device given a file, or cleared, says "change" with a
        // media change; its size tells which.
        "change" if media_change || name.starts_with("loop") => {
            if size_of(&name) > 0 {
                Some(Change::Present { name, device })
            } else {
                Some(Change::Gone { name, device })
            }
        }
        _ => None,
    }
}

/// A block device's size in sectors, from sysfs (0 when absent).
fn size_of(name: &str) -> u64 {
    std::fs::read_to_string(format!("/sys/class/block/{name}/size"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(fields: &[&str]) -> Vec<u8> {
        let mut v = b"x@/devices/virtual/block/sdz9".to_vec();
        for f in fields {
            v.push(0);
            v.extend_from_slice(f.as_bytes());
        }
        v.push(0);
        v
    }

    #[test]
    fn block_adds_and_removes_are_read_and_the_rest_skipped() {
        let add = msg(&[
            "ACTION=add",
            "SUBSYSTEM=block",
            "DEVNAME=sdz9",
            "MAJOR=8",
            "MINOR=9",
        ]);
        assert_eq!(
            parse(&add),
            Some(Change::Present {
                name: "sdz9".into(),
                device: libc::makedev(8, 9)
            })
        );
        let rm = msg(&[
            "ACTION=remove",
            "SUBSYSTEM=block",
            "DEVNAME=sdz9",
            "MAJOR=8",
            "MINOR=9",
        ]);
        assert!(matches!(parse(&rm), Some(Change::Gone { .. })));
        let net = msg(&[
            "ACTION=add",
            "SUBSYSTEM=net",
            "DEVNAME=eth0",
            "MAJOR=1",
            "MINOR=1",
        ]);
        assert_eq!(parse(&net), None);
        assert_eq!(parse(b"garbage"), None);
        assert_eq!(parse(&msg(&["ACTION=add", "SUBSYSTEM=block"])), None);
    }
}
