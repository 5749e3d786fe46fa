//! Where io_uring is forbidden (`kernel.io_uring_disabled = 2`, a common
//! hardening), volumes are still served: through `/dev/fuse`, and the
//! daemon's log says why. A file of its own: the switch is the machine's,
//! and no other test may run while it is set.

use std::path::Path;
use tcd_tests::daemon::Daemon;
use tcd_tests::s;

const PASSWORD: &str = "correct horse battery staple x\n";
const DISABLED: &str = "/proc/sys/kernel/io_uring_disabled";

/// Puts the switch back as it was, whatever the test does.
struct Restore(String);

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = std::fs::write(DISABLED, &self.0);
    }
}

fn mount(d: &Daemon, volume: &Path, at: &Path) {
    d.ok(
        &["mount", s(volume), s(at), "--pim", "1", "--password-stdin"],
        PASSWORD,
    );
}

#[test]
fn a_machine_without_io_uring_gets_its_volumes_through_dev_fuse() {
    let before = std::fs::read_to_string(DISABLED)
        .unwrap_or_else(|e| panic!("{DISABLED}: {e}: this test needs a kernel with io_uring"));
    let _restore = Restore(before);
    std::fs::write(DISABLED, "2").expect("forbid io_uring");
    let d = Daemon::start();
    let volume = d.path("v.hc");
    d.ok(
        &[
            "create",
            s(&volume),
            "--size",
            "32M",
            "--filesystem",
            "ext4",
            "--pim",
            "1",
            "--password-stdin",
        ],
        PASSWORD,
    );
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mount point");
    mount(&d, &volume, &mnt);
    let log = std::fs::read_to_string(d.path("tcd.log")).unwrap_or_default();
    assert!(
        log.contains("FUSE requests go through /dev/fuse: no io_uring here"),
        "{log}"
    );
    assert!(log.contains("served through /dev/fuse"), "{log}");
    std::fs::write(mnt.join("note"), "still here").expect("write");
    d.ok(&["dismount", s(&mnt)], "");
    mount(&d, &volume, &mnt);
    assert_eq!(
        std::fs::read_to_string(Path::new(&mnt).join("note")).expect("read"),
        "still here"
    );
    d.ok(&["dismount", s(&mnt)], "");
}
