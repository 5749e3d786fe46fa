//! The kernel's mount table, `/proc/self/mountinfo`, as the daemon and
//! `tcctl` read it.
//!
//! Any user who can mount (FUSE through `fusermount3`) chooses a mount
//! point's name, and a name need not be UTF-8: the table is read and split
//! as bytes so one odd name never hides the rest of it.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// One line of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mount {
    /// The kernel's ID of the mount.
    pub id: u64,
    /// The device of its filesystem, `major:minor`.
    pub device: String,
    /// Where it is mounted, in the daemon's namespace.
    pub point: PathBuf,
    /// The mount's own flag: mounted read-write.
    pub mounted_read_write: bool,
    /// The mount's own flag: nothing in it may be executed.
    pub no_exec: bool,
    /// The filesystem type (`ext4`, `fuse.tcd`).
    pub fs_type: String,
    /// The filesystem's source (`/dev/loop3`, or what the driver names).
    pub source: PathBuf,
    /// The superblock's flag: the filesystem itself is read-only.
    pub fs_read_only: bool,
}

/// The table as it is now; empty only where there is no `/proc`.
pub fn now() -> Vec<Mount> {
    std::fs::read("/proc/self/mountinfo")
        .map(|bytes| parse(&bytes))
        .unwrap_or_default()
}

/// Every well-formed line of `table`; a malformed one is skipped.
pub fn parse(table: &[u8]) -> Vec<Mount> {
    table.split(|&b| b == b'\n').filter_map(line).collect()
}

// id parent major:minor root mount-point options [tags...] - type source super-options
fn line(l: &[u8]) -> Option<Mount> {
    let fields: Vec<&[u8]> = l.split(|&b| b == b' ').collect();
    let dash = fields.iter().position(|f| *f == b"-")?;
    let (before, after) = (&fields[..dash], &fields[dash + 1..]);
    if before.len() < 6 || after.len() < 3 {
        return None;
    }
    Some(Mount {
        id: std::str::from_utf8(before[0]).ok()?.parse().ok()?,
        device: String::from_utf8(before[2].to_vec()).ok()?,
        point: unescape(before[4]),
        mounted_read_write: has_option(before[5], b"rw"),
        no_exec: has_option(before[5], b"noexec"),
        fs_type: String::from_utf8_lossy(after[0]).into_owned(),
        source: unescape(after[1]),
        fs_read_only: has_option(after[2], b"ro"),
    })
}

fn has_option(options: &[u8], wanted: &[u8]) -> bool {
    options.split(|&b| b == b',').any(|o| o == wanted)
}

/// The kernel writes a space, tab, newline and backslash in a name as
/// three octal digits after a backslash (`\040`); every other byte as is.
fn unescape(field: &[u8]) -> PathBuf {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        let octal = field
            .get(i + 1..i + 4)
            .filter(|d| field[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)))
            .map(|d| d.iter().fold(0u32, |n, c| n * 8 + u32::from(c - b'0')))
            .and_then(|n| u8::try_from(n).ok());
        match octal {
            Some(b) => {
                out.push(b);
                i += 4;
            }
            None => {
                out.push(field[i]);
                i += 1;
            }
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    const TABLE: &[u8] = b"\
22 27 0:21 / /proc rw,relatime - proc proc rw
101 27 7:5 / /run/media/u/my\\040vol rw,nosuid,relatime shared:80 master:3 - ext4 /dev/loop5 ro,errors=remount-ro
102 27 0:50 / /home/mallory/\xff\\012x\\134 rw,nosuid - fuse.x /dev/fuse rw
103 27 7:7 / /m ro,noexec,relatime - ext4 /dev/loop7 ro
garbage
";

    #[test]
    fn every_line_is_read_even_after_a_name_that_is_not_utf8() {
        let t = parse(TABLE);
        assert_eq!(
            t.iter().map(|m| m.id).collect::<Vec<_>>(),
            [22, 101, 102, 103]
        );
        assert_eq!(t[1].point, PathBuf::from("/run/media/u/my vol"));
        assert_eq!(t[1].device, "7:5");
        assert_eq!(t[1].source, PathBuf::from("/dev/loop5"));
        assert_eq!(t[1].fs_type, "ext4");
        assert!(t[1].mounted_read_write && t[1].fs_read_only);
        assert_eq!(
            t[2].point.as_os_str().as_bytes(),
            b"/home/mallory/\xff\nx\\"
        );
        assert!(!t[3].mounted_read_write && t[3].fs_read_only);
        assert!(t[3].no_exec && !t[1].no_exec);
    }

    #[test]
    fn a_backslash_not_followed_by_three_octal_digits_is_kept() {
        assert_eq!(unescape(b"a\\04"), PathBuf::from("a\\04"));
        assert_eq!(unescape(b"a\\09x"), PathBuf::from("a\\09x"));
        assert_eq!(unescape(b"\\134040"), PathBuf::from("\\040"));
    }
}
