//! System encryption opened without its boot loader (`tcctl mount
//! --system-encryption`, VeraCrypt's `-m system`): the corpus's three
//! VeraCrypt system drives, as disk images read directly, checked as
//! cryptsetup's compatibility test checks them (the FAT serial DEAD-BABE
//! of the decrypted system partition), read-only unless asked, and as an
//! unprivileged user on the system bus.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use tcd_tests::daemon::Daemon;
use tcd_tests::system::System;
use tcd_tests::{blkid_uuid, require_tool, s, tcrypt_images};

const AAA: &str = "aaaaaaaaaaaa\n";
const GPT_PART: &str = "sys_vc_1_gpt_part-sha512-xts-aes";
const MBR_PART: &str = "sys_vc_1_mbr_part-sha256-xts-aes";
const MBR_FULL: &str = "sys_vc_1_mbr_full-sha256-xts-aes";

/// A copy of a corpus image in the daemon's folder.
fn image(d: &Daemon, name: &str) -> String {
    let p = d.path(name);
    std::fs::copy(tcrypt_images().join(name), &p).expect("copy the image");
    s(&p).to_owned()
}

fn hash_of(name: &str) -> &str {
    name.split('-').nth(1).expect("the PRF in the name")
}

fn attach_system(d: &Daemon, name: &str, extra: &[&str]) -> (String, serde_json::Value) {
    let v = image(d, name);
    let mut args = vec![
        "mount",
        &v,
        "--system-encryption",
        "--filesystem",
        "none",
        "--password-stdin",
        "--hash",
        hash_of(name),
    ];
    args.extend(extra);
    d.ok(&args, AAA);
    let row = d.list()[0].clone();
    (row["device"].as_str().expect("device").to_owned(), row)
}

/// The UUID blkid finds `offset` bytes into `device`.
fn uuid_at(device: &str, offset: u64) -> String {
    let out = Command::new(require_tool("blkid", "package util-linux"))
        .args([
            "-p",
            "-o",
            "value",
            "-s",
            "UUID",
            "-O",
            &offset.to_string(),
            device,
        ])
        .output()
        .expect("blkid");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn system_partition_images_open_read_only_with_their_serial() {
    let d = Daemon::start();
    for name in [GPT_PART, MBR_PART] {
        let (device, row) = attach_system(&d, name, &[]);
        assert_eq!(
            blkid_uuid(std::path::Path::new(&device)),
            "DEAD-BABE",
            "{name}"
        );
        assert_eq!(row["read_only"], true, "{name}: read-only by default");
        assert_eq!(row["system_encryption"], true, "{name}");
        // The partition the header's key scope names, whole.
        assert_eq!(row["size"], 16 * 1024 * 1024, "{name}");
        d.ok(&["dismount", &device], "");
    }
}

#[test]
fn a_whole_encrypted_drive_opens_from_sector_63_with_its_partition_inside() {
    let d = Daemon::start();
    let (device, row) = attach_system(&d, MBR_FULL, &[]);
    // Encrypted from sector 63 to the end; the partition starts at 2048.
    assert_eq!(row["size"], 18_874_368 - 63 * 512);
    assert_eq!(uuid_at(&device, (2048 - 63) * 512), "DEAD-BABE");
    d.ok(&["dismount", &device], "");
}

#[test]
fn read_write_is_asked_for_and_warned_about() {
    let d = Daemon::start();
    let v = image(&d, MBR_PART);
    let out = d.tcctl(
        &[
            "mount",
            &v,
            "--system-encryption",
            "--read-write",
            "--filesystem",
            "none",
            "--password-stdin",
            "--hash",
            "sha256",
        ],
        AAA,
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tcctl: warning: mounting a system drive read-write. If Windows on it is hibernated \
         (or was shut down with fast startup), writing to it corrupts the system and the \
         files Windows has open when it resumes.\n"
    );
    let row = d.list()[0].clone();
    assert_eq!(row["read_only"], false);
    d.ok(&["dismount", row["device"].as_str().expect("device")], "");
    // --read-write means nothing for other volumes (they are read-write).
    let (code, msg) = d.fails(&["mount", &v, "--read-write", "--password-stdin"], AAA);
    assert_eq!(code, 64);
    assert_eq!(
        msg,
        "tcctl: --read-write goes with --system-encryption (other volumes mount read-write \
         unless --readonly)\n"
    );
}

#[test]
fn info_shows_the_system_header_as_veracrypt_does() {
    let d = Daemon::start();
    let v = image(&d, MBR_PART);
    let text = d.ok(
        &[
            "info",
            &v,
            "--system-encryption",
            "--password-stdin",
            "--hash",
            "sha256",
        ],
        AAA,
    );
    for line in [
        "Format             VeraCrypt\n",
        "Created by         VeraCrypt 1.0b\n",
        "System encryption  Yes\n",
        "PKCS-5 PRF         SHA-256\n",
        // The boot loader's count, not a volume's 500000.
        "Iterations         200000\n",
        "Size (bytes)       16777216\n",
        "Data offset        1048576\n",
    ] {
        assert!(text.contains(line), "{line:?} in\n{text}");
    }
    // Without the option the drive's first sector is no volume header.
    let (code, _) = d.fails(
        &[
            "info",
            &v,
            "--password-stdin",
            "--hash",
            "sha256",
            "--format",
            "veracrypt",
        ],
        AAA,
    );
    assert_eq!(code, 2, "wrong password or not a volume");
}

#[test]
fn a_user_mounts_their_own_system_image_and_not_another_users() {
    let sys = System::start();
    let (one, two) = (&sys.users[0], &sys.users[1]);
    let img = one.path("windows.img");
    std::fs::copy(tcrypt_images().join(MBR_PART), &img).expect("copy");
    std::os::unix::fs::chown(&img, Some(one.uid), Some(one.gid)).expect("chown");
    std::fs::set_permissions(&img, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let args = [
        "mount",
        s(&img),
        "--system-encryption",
        "--filesystem",
        "none",
        "--password-stdin",
        "--hash",
        "sha256",
    ];
    // Another user cannot open the file, so cannot hand it over.
    let out = sys.tcctl(Some(two), &args, AAA);
    assert_eq!(out.status.code(), Some(6), "{out:?}");
    sys.ok(Some(one), &args, AAA);
    let rows = sys.list(Some(one));
    assert_eq!(rows.as_array().map(Vec::len), Some(1), "{rows}");
    assert_eq!(rows[0]["read_only"], true);
    assert_eq!(rows[0]["owner"], one.uid);
    assert_eq!(sys.list(Some(two)).as_array().map(Vec::len), Some(0));
    let device = rows[0]["device"].as_str().expect("device").to_owned();
    assert_eq!(blkid_uuid(std::path::Path::new(&device)), "DEAD-BABE");
    sys.ok(Some(one), &["dismount", &device], "");
}
