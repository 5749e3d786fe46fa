//! System encryption opened without its boot loader (`tcctl mount
//! --system-encryption`, VeraCrypt's `-m system`): the corpus's three
//! VeraCrypt system drives, as disk images read directly, checked as
//! cryptsetup's compatibility test checks them (the FAT serial DEAD-BABE
//! of the decrypted system partition), read-only unless asked, and as an
//! unprivileged user on the system bus.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use tcd_tests::daemon::Daemon;
use tcd_tests::loop_device::LoopDevice;
use tcd_tests::system::{DeviceGrant, System};
use tcd_tests::{blkid_uuid, require_tool, s, tcrypt_images};

const AAA: &str = "aaaaaaaaaaaa\n";
const GPT_PART: &str = "sys_vc_1_gpt_part-sha512-xts-aes";
const MBR_PART: &str = "sys_vc_1_mbr_part-sha256-xts-aes";
const MBR_FULL: &str = "sys_vc_1_mbr_full-sha256-xts-aes";

fn hash_of(name: &str) -> &str {
    name.split('-').nth(1).expect("the PRF in the name")
}

fn attach_system(d: &Daemon, name: &str, extra: &[&str]) -> (String, serde_json::Value) {
    let v = d.image(name);
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
    let v = d.image(MBR_PART);
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
        "tcctl: warning: attaching a system drive read-write. If Windows on it is hibernated \
         (or was shut down with fast startup), writing to it corrupts the system and the \
         files Windows has open when it resumes.\n"
    );
    let row = d.list()[0].clone();
    assert_eq!(row["read_only"], false);
    d.ok(&["dismount", row["device"].as_str().expect("device")], "");
    // Other volumes mount read-write anyway: no warning for them.
    let v = d.image("tc_5-sha512-xts-aes");
    let out = d.tcctl(
        &[
            "mount",
            &v,
            "--read-write",
            "--filesystem",
            "none",
            "--password-stdin",
            "--hash",
            "sha512",
        ],
        AAA,
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let row = d.list()[0].clone();
    assert_eq!(row["read_only"], false);
    d.ok(&["dismount", row["device"].as_str().expect("device")], "");
}

#[test]
fn info_shows_the_system_header_as_veracrypt_does() {
    let d = Daemon::start();
    let v = d.image(MBR_PART);
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
        "Minimum version    VeraCrypt 1.0b\n",
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

/// Mounts `part` as `who` through the D-Bus API directly, sending no
/// header: what a client that skips reading the drive would do. The reply
/// or the error's name.
fn mount_partition_raw(sys: &System, who: &tcd_tests::system::User, part: &str) -> String {
    let script = r#"
import os, sys
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection
conn = open_dbus_connection(bus="SYSTEM", enable_fds=True)
addr = DBusAddress("/org/tcd/Tcd1", bus_name="org.tcd.Tcd1", interface="org.tcd.Manager1")
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_CLOEXEC)
opts = {"hash": ("s", "sha256"), "filesystem": ("s", "none"), "readonly": ("b", True),
        "system_encryption": ("b", True)}
msg = new_method_call(addr, "Mount", "hsayaaya{sv}", (fd, sys.argv[1], b"aaaaaaaaaaaa", [], opts))
reply = conn.send_and_get_reply(msg)
print(reply.header.fields.get(4) or reply.body[0])
"#;
    let out = sys
        .command(Some(who), tcd_tests::system::PYTHON)
        .args(["-c", script, part])
        .output()
        .expect("python3");
    assert!(out.status.success(), "jeepney: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn a_partitions_header_is_read_with_the_users_rights_never_the_daemons() {
    tcd_tests::require_root();
    let _grant = DeviceGrant::new(tcd_tests::system::USERS[0], "system-partition");
    let sys = System::start();
    let one = &sys.users[0];
    let img = sys.dir.path().join("windows.img");
    std::fs::copy(tcrypt_images().join(MBR_PART), &img).expect("copy");
    let (disk, part) = LoopDevice::attach_with_partitions(&img);
    // The user is given the encrypted partition, not the drive (root's,
    // 0600), as a udev rule or an administrator might do.
    std::os::unix::fs::chown(&part, Some(one.uid), Some(one.gid)).expect("chown");
    std::fs::set_permissions(disk.path(), std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let args = [
        "mount",
        &part,
        "--system-encryption",
        "--filesystem",
        "none",
        "--password-stdin",
        "--hash",
        "sha256",
    ];
    let out = sys.tcctl(Some(one), &args, AAA);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{out:?}");
    assert!(
        err.contains(&format!("{}: permission denied", disk.path())) && err.contains("first track"),
        "{err}"
    );
    // A client that sends no header is refused: the daemon does not read
    // the drive for it.
    let reply = mount_partition_raw(&sys, one, &part);
    assert_eq!(reply, "org.tcd.Error.InvalidArgument", "{}", sys.log());
    assert_eq!(sys.list(None).as_array().map(Vec::len), Some(0));
    // Allowed to read the drive too, the user mounts the partition: the
    // decrypted system partition's FAT serial, as cryptsetup checks it.
    disk.give_to(one.uid, one.gid);
    sys.ok(Some(one), &args, AAA);
    let rows = sys.list(Some(one));
    assert_eq!(rows[0]["read_only"], true, "{rows}");
    let device = rows[0]["device"].as_str().expect("device").to_owned();
    assert_eq!(blkid_uuid(std::path::Path::new(&device)), "DEAD-BABE");
    sys.ok(Some(one), &["dismount", &device], "");
}

#[test]
fn a_drive_and_its_own_partition_are_one_host_mounted_once() {
    tcd_tests::require_root();
    let d = Daemon::start();
    let img = d.path("windows.img");
    std::fs::copy(tcrypt_images().join(MBR_PART), &img).expect("copy");
    let (disk, part) = LoopDevice::attach_with_partitions(&img);
    let args = |host: &str| {
        [
            "mount",
            host,
            "--system-encryption",
            "--read-write",
            "--filesystem",
            "none",
            "--password-stdin",
            "--hash",
            "sha256",
        ]
        .map(str::to_owned)
    };
    d.ok(&args(disk.path()).each_ref().map(String::as_str), AAA);
    // Mounted already: refused before the read-write warning, which is
    // given only once nothing but the password stands in the way.
    let (code, err) = d.fails(&args(disk.path()).each_ref().map(String::as_str), AAA);
    assert_eq!(code, 4, "{err}");
    assert!(
        err.starts_with("tcctl: ") && !err.contains("warning"),
        "{err}"
    );
    // The partition's sectors are the drive's: two read-write mappings of
    // one FAT would corrupt it. Refused before any password is tried.
    let (code, err) = d.fails(&args(&part).each_ref().map(String::as_str), AAA);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("already mounted"), "{err}");
    assert_eq!(d.list().as_array().map(Vec::len), Some(1));
    // `status` says it is a system drive; other volumes get no such line.
    let status = d.ok(&["status", disk.path()], "");
    assert!(status.contains("\n  system encryption: Yes\n"), "{status}");
    d.ok(&["dismount", "--all"], "");
    // And the other way round.
    d.ok(&args(&part).each_ref().map(String::as_str), AAA);
    let (code, err) = d.fails(&args(disk.path()).each_ref().map(String::as_str), AAA);
    assert_eq!(code, 4, "{err}");
    d.ok(&["dismount", "--all"], "");
}
