//! `--fs-options` on FAT, exFAT and NTFS through the real daemon, wherever
//! they are mounted (this kernel, like many without dm-crypt, lacks vfat,
//! exfat and ntfs3, so through FUSE drivers): `noexec` holds, and a mask
//! given alone leaves the other private rather than open to everyone.
//! Needs root, /dev/fuse, setpriv and each filesystem's tools.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;
use tcd_tests::daemon::Daemon;
use tcd_tests::{require_tool, s};

const PW: &str = "mask words\n";
const FAST: [&str; 5] = ["--password-stdin", "--pim", "1", "--hash", "sha512"];
/// Who tries to reach another user's files.
const NOBODY: &str = "65534";
/// What the daemon says when FAT goes through fusefat.
const FUSEFAT_MASKS: &str = "fs options: fmask= and dmask= are not available for FAT here: \
     the kernel lacks vfat, and its FUSE driver, fusefat, has one mask for files and folders; \
     use umask=";

/// A daemon with a `filesystem` volume and an empty mount point that any
/// user may reach (so only the mount's own modes keep them out).
fn volume(filesystem: &str, tools: &[&str], package: &str) -> (Daemon, String, String) {
    for tool in tools {
        require_tool(tool, package);
    }
    require_tool("setpriv", "package util-linux");
    let d = Daemon::start();
    let dir = d.path("");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let vol = s(&d.path("v.hc")).to_owned();
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let mut create = vec!["create", "--force", "--size", "24M", "--filesystem"];
    create.extend([filesystem, vol.as_str()]);
    create.extend(FAST);
    d.ok(&create, PW);
    (d, vol, s(&mnt).to_owned())
}

fn mount(d: &Daemon, vol: &str, mnt: &str, fs_options: &str) {
    let mut a = vec!["mount", vol, mnt, "--fs-options", fs_options];
    a.extend(FAST);
    d.ok(&a, PW);
}

/// Whether `nobody` may make a file in `dir`.
fn nobody_creates_in(dir: &Path) -> bool {
    Command::new("setpriv")
        .args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            "sh",
            "-c",
            "echo x > \"$1\"",
            "sh",
        ])
        .arg(dir.join("by-nobody"))
        .status()
        .expect("setpriv")
        .success()
}

/// Whether `nobody` may write `file`.
fn nobody_writes(file: &Path) -> bool {
    Command::new("setpriv")
        .args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            "sh",
            "-c",
            "echo x >> \"$1\"",
            "sh",
        ])
        .arg(file)
        .status()
        .expect("setpriv")
        .success()
}

/// `noexec` is the mount's flag, and a script there does not run.
fn noexec_holds(d: &Daemon, vol: &str, mnt: &str, filesystem: &str) {
    mount(d, vol, mnt, "noexec");
    let table = tcd_proto::mount_table::now();
    let m = table
        .iter()
        .find(|m| m.point == Path::new(mnt))
        .unwrap_or_else(|| panic!("{filesystem}: {mnt} not in the mount table"));
    assert!(m.no_exec, "{filesystem}: noexec not on the mount: {m:?}");
    let script = Path::new(mnt).join("run.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").expect("write the script");
    // Set where the filesystem keeps modes; FAT's come from the masks
    // (0700 here), executable by its owner all the same.
    let _ = std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755));
    assert!(
        std::fs::metadata(&script).expect("stat").mode() & 0o100 != 0,
        "{filesystem}: the script is executable by its mode"
    );
    let run = Command::new(&script).status();
    assert_eq!(
        run.as_ref().map_err(|e| e.raw_os_error()).err(),
        Some(Some(libc::EACCES)),
        "{filesystem}: a program ran on a noexec mount: {run:?}"
    );
    d.ok(&["dismount", mnt], "");
}

/// fmask= alone: the root folder stays private; dmask= alone: files do.
fn one_mask_leaves_the_other_private(d: &Daemon, vol: &str, mnt: &str, filesystem: &str) {
    let root = Path::new(mnt);
    mount(d, vol, mnt, "fmask=177");
    let mode = std::fs::metadata(root).expect("stat").mode() & 0o777;
    assert_eq!(
        mode, 0o700,
        "{filesystem}: fmask=177 gave the root {mode:o}"
    );
    assert!(
        !nobody_creates_in(root),
        "{filesystem}: with fmask= alone another user made a file in the root"
    );
    let file = root.join("f");
    std::fs::write(&file, "x").expect("write");
    let mode = std::fs::metadata(&file).expect("stat").mode() & 0o777;
    assert_eq!(mode, 0o600, "{filesystem}: fmask=177 gave a file {mode:o}");
    d.ok(&["dismount", mnt], "");

    mount(d, vol, mnt, "dmask=022");
    let mode = std::fs::metadata(root).expect("stat").mode() & 0o777;
    assert_eq!(
        mode, 0o755,
        "{filesystem}: dmask=022 gave the root {mode:o}"
    );
    let mode = std::fs::metadata(&file).expect("stat").mode() & 0o777;
    assert_eq!(mode, 0o700, "{filesystem}: dmask=022 gave a file {mode:o}");
    assert!(
        !nobody_writes(&file),
        "{filesystem}: with dmask= alone another user wrote a file"
    );
    assert!(!nobody_creates_in(root), "{filesystem}: dmask=022");
    d.ok(&["dismount", mnt], "");
}

fn kernel_has(fs_type: &str) -> bool {
    std::fs::read_to_string("/proc/filesystems")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().last() == Some(fs_type))
}

#[test]
fn fat_noexec_holds_and_fmask_dmask_work_or_are_refused_by_name() {
    let (d, vol, mnt) = volume("fat", &["mkfs.fat", "fusefat"], "dosfstools, fusefat");
    noexec_holds(&d, &vol, &mnt, "FAT");
    if kernel_has("vfat") {
        one_mask_leaves_the_other_private(&d, &vol, &mnt, "FAT");
        return;
    }
    // fusefat has one mask for all: the masks apart are refused before
    // anything is mounted, naming what to use; umask= works.
    for options in ["fmask=133", "dmask=022", "umask=077,fmask=177"] {
        let mut a = vec!["mount", vol.as_str(), mnt.as_str(), "--fs-options", options];
        a.extend(FAST);
        let (code, says) = d.fails(&a, PW);
        assert_eq!(
            (code, says.as_str()),
            (7, format!("tcctl: {FUSEFAT_MASKS}\n").as_str()),
            "{options}"
        );
        assert!(
            !tcd_proto::mount_table::now()
                .iter()
                .any(|m| m.point == Path::new(&mnt)),
            "{options}: mounted all the same"
        );
    }
    assert_eq!(
        d.list().as_array().map(Vec::len),
        Some(0),
        "nothing left open"
    );
    mount(&d, &vol, &mnt, "umask=022");
    let mode = std::fs::metadata(&mnt).expect("stat").mode() & 0o777;
    assert_eq!(mode, 0o755, "umask=022 gave the root {mode:o}");
    d.ok(&["dismount", &mnt], "");
}

#[test]
fn exfat_noexec_holds_and_one_mask_leaves_the_other_private() {
    let (d, vol, mnt) = volume(
        "exfat",
        &["mkfs.exfat", "mount.exfat-fuse"],
        "exfatprogs, exfat-fuse",
    );
    noexec_holds(&d, &vol, &mnt, "exFAT");
    one_mask_leaves_the_other_private(&d, &vol, &mnt, "exFAT");
}

#[test]
fn ntfs_noexec_holds_and_one_mask_leaves_the_other_private() {
    let (d, vol, mnt) = volume("ntfs", &["mkfs.ntfs", "ntfs-3g"], "ntfs-3g");
    noexec_holds(&d, &vol, &mnt, "NTFS");
    one_mask_leaves_the_other_private(&d, &vol, &mnt, "NTFS");
}

#[test]
fn without_masks_files_and_folders_are_the_owners_alone() {
    let (d, vol, mnt) = volume("exfat", &["mkfs.exfat"], "exfatprogs");
    mount(&d, &vol, &mnt, "noatime");
    let mode = std::fs::metadata(&mnt).expect("stat").mode() & 0o777;
    assert_eq!(mode, 0o700);
    assert!(!nobody_creates_in(Path::new(&mnt)));
    d.ok(&["dismount", &mnt], "");
}
