//! Loop devices over the tests' own files, detached on drop.
//!
//! The kernel here has no MBR or GPT parser, so `losetup --partscan` finds
//! nothing: partitions are added with `partx -a`, which tells the kernel
//! through BLKPG where each one is.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::require_tool;

/// A loop device attached by a test; on drop its partitions are removed, its
/// node is given back to root (group disk, 0660) in case a test gave it to a
/// user, and it is detached.
pub struct LoopDevice {
    path: String,
    partitions: bool,
}

impl LoopDevice {
    /// `losetup --find --show FILE`.
    pub fn attach(file: &Path) -> LoopDevice {
        Self::losetup(file, &[])
    }

    /// The same with a logical sector size of `sector` bytes (`-b`).
    pub fn attach_with_sector(file: &Path, sector: u32) -> LoopDevice {
        Self::losetup(file, &["-b", &sector.to_string()])
    }

    /// A disk image attached with its partitions: the device and the path of
    /// its first partition, once that node exists.
    pub fn attach_with_partitions(image: &Path) -> (LoopDevice, String) {
        let mut device = Self::attach(image);
        let partx = require_tool("partx", "package util-linux");
        // The kernel keeps a detached loop device's partitions that partx
        // added: a free device may carry another image's, which `-a` would
        // refuse to add again. Drop them first (none there is fine).
        // A partition udev (or a daemon watching for it) is still probing
        // cannot be dropped for a moment: tried again for up to 10 s.
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let _ = Command::new(&partx)
                .args(["-d", &device.path])
                .stderr(std::process::Stdio::null())
                .status();
            let st = Command::new(&partx)
                .args(["-a", &device.path])
                .stderr(std::process::Stdio::null())
                .status()
                .expect("partx -a");
            if st.success() {
                break;
            }
            assert!(Instant::now() < deadline, "partx -a {}", device.path);
            std::thread::sleep(Duration::from_millis(200));
        }
        device.partitions = true;
        let part = format!("{}p1", device.path);
        let deadline = Instant::now() + Duration::from_secs(20);
        while !Path::new(&part).exists() {
            assert!(Instant::now() < deadline, "{part} did not appear");
            std::thread::sleep(Duration::from_millis(100));
        }
        (device, part)
    }

    fn losetup(file: &Path, extra: &[&str]) -> LoopDevice {
        crate::require_root();
        let out = Command::new(require_tool("losetup", "package mount"))
            .args(["--find", "--show"])
            .args(extra)
            .arg(file)
            .output()
            .expect("losetup");
        let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        assert!(
            out.status.success() && path.starts_with("/dev/loop"),
            "losetup {}: {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        drop_stale_partitions(&path);
        LoopDevice {
            path,
            partitions: false,
        }
    }

    /// The device node, `/dev/loopN`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The same as a path.
    pub fn as_path(&self) -> &Path {
        Path::new(&self.path)
    }

    /// Makes the node the user's (as a desktop's udev rule would for a
    /// removable drive); undone on drop.
    pub fn give_to(&self, uid: u32, gid: u32) {
        std::os::unix::fs::chown(&self.path, Some(uid), Some(gid)).expect("chown the device");
    }
}

/// A free loop device may keep the partitions partx added for another
/// image (the kernel keeps them past a detach, and a drop may not have
/// managed to take them while something probed them): dropped, so that
/// this device's users (`mount-devices`, which tries a partitioned
/// device by its partitions) see its own contents alone. Tried again for
/// up to 5 s while something still probes one.
fn drop_stale_partitions(path: &str) {
    let first = format!("{path}p1");
    for _ in 0..25 {
        if !Path::new(&first).exists() {
            return;
        }
        let _ = Command::new("partx")
            .args(["-d", path])
            .stderr(std::process::Stdio::null())
            .status();
        std::thread::sleep(Duration::from_millis(200));
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        // The node outlives the loop device: the next test that gets it
        // must not find a user's.
        let _ = Command::new("chown")
            .args(["root:disk", &self.path])
            .status();
        let _ = std::fs::set_permissions(&self.path, std::fs::Permissions::from_mode(0o660));
        if self.partitions {
            // Tried again while something still probes a partition, so
            // the next user of the device does not find it.
            let first = format!("{}p1", self.path);
            for _ in 0..25 {
                let _ = Command::new("partx")
                    .args(["-d", &self.path])
                    .stderr(std::process::Stdio::null())
                    .status();
                if !Path::new(&first).exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        let _ = Command::new("losetup").args(["-d", &self.path]).status();
    }
}

/// Writes a disk image of `bytes` with a GPT holding one partition that
/// fills it.
pub fn gpt_image(image: &Path, bytes: u64) {
    use std::io::Write;
    std::fs::File::create(image)
        .and_then(|f| f.set_len(bytes))
        .expect("image");
    let mut child = Command::new(require_tool("sfdisk", "package fdisk"))
        .arg("-q")
        .arg(image)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("sfdisk");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"label: gpt\n,\n")
        .expect("partition table");
    assert!(child.wait().expect("sfdisk").success(), "sfdisk");
}
