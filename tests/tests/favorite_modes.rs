//! Favorites that remember VeraCrypt's "TrueCrypt mode" and "System
//! encryption": `tcctl favorites add --truecrypt` / `--system-encryption`
//! kept by the real daemon, shown by `favorites list`, and applied when the
//! favorite mounts (only the TrueCrypt format tried; the system header
//! opened, read-only unless the favorite says read-write), with the
//! corpus's TrueCrypt, VeraCrypt and system-encryption images, as a disk
//! image and as a partition (its header in the drive's first track, read
//! by tcctl for your favorite and by the daemon for the system's). A
//! favorites file written before these keys still loads.
//!
//! Needs root, /dev/fuse, losetup, partx, blkid, tar, xz.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};
use tcd_tests::daemon::Daemon;
use tcd_tests::loop_device::LoopDevice;
use tcd_tests::{blkid_uuid, require_tool, s, tcrypt_images};

const AAA: &str = "aaaaaaaaaaaa\n";
const TC: &str = "tc_5-sha512-xts-aes";
const VC: &str = "vc_1-sha512-xts-aes";
const MBR_PART: &str = "sys_vc_1_mbr_part-sha256-xts-aes";

fn favorites_json(d: &Daemon) -> serde_json::Value {
    serde_json::from_str(&d.ok(&["favorites", "list", "--json"], "")).expect("json")
}

#[test]
fn a_truecrypt_mode_favorite_tries_only_the_truecrypt_format() {
    let d = Daemon::start();
    let tc = d.image(TC);
    let vc = d.image(VC);
    assert_eq!(
        d.ok(
            &[
                "favorites",
                "add",
                "old",
                &tc,
                "--truecrypt",
                "--filesystem",
                "none"
            ],
            ""
        ),
        format!("your favorite old: {tc}\n")
    );
    // VeraCrypt's own spelling, -tc, says the same.
    d.ok(
        &[
            "favorites",
            "add",
            "new",
            &vc,
            "-tc",
            "--filesystem",
            "none",
        ],
        "",
    );
    let favs = favorites_json(&d);
    assert_eq!(favs["favorites"][0]["format"], "truecrypt");
    assert_eq!(favs["favorites"][0]["system_encryption"], false);
    assert_eq!(favs["favorites"][1]["format"], "truecrypt");
    let table = d.ok(&["favorites", "list"], "");
    let row = table
        .lines()
        .find(|l| l.starts_with("old "))
        .expect("the favorite's row");
    assert!(row.ends_with(" TrueCrypt format only"), "{table}");

    // The TrueCrypt volume opens, as TrueCrypt.
    let out = d.ok(&["favorites", "mount", "old", "--password-stdin"], AAA);
    let rows = d.list();
    let device = rows[0]["device"].as_str().expect("device").to_owned();
    assert_eq!(out, format!("old ({tc}) attached as {device}\n"));
    assert_eq!(rows[0]["format"], "TrueCrypt");
    assert_eq!(blkid_uuid(std::path::Path::new(&device)), "DEAD-BABE");
    d.ok(&["dismount", &device], "");

    // A VeraCrypt volume, its right password given, does not open in
    // TrueCrypt mode.
    let (code, err) = d.fails(&["favorites", "mount", "new", "--password-stdin"], AAA);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.starts_with("tcctl: new: wrong password or keyfile, or not a volume (searched for "),
        "{err}"
    );
    // What narrows a favorite's search is its own settings, not options
    // its mount does not take; a TrueCrypt-mode favorite has no PIM.
    assert!(
        err.ends_with(
            "; giving the favorite --hash (`tcctl favorites add --replace`) narrows the search)\n"
        ),
        "{err}"
    );
    assert_eq!(d.list(), serde_json::json!([]));
    // Without the mode, the same favorite opens as VeraCrypt.
    let removed = d.ok(&["favorites", "remove", "new"], "");
    assert_eq!(removed, "your favorite new removed\n");
    d.ok(
        &["favorites", "add", "new", &vc, "--filesystem", "none"],
        "",
    );
    d.ok(&["favorites", "mount", "new", "--password-stdin"], AAA);
    assert_eq!(d.list()[0]["format"], "VeraCrypt");
}

#[test]
fn a_system_encryption_favorite_mounts_read_only_unless_it_says_read_write() {
    let d = Daemon::start();
    let v = d.image(MBR_PART);
    d.ok(
        &[
            "favorites",
            "add",
            "windows",
            &v,
            "--system-encryption",
            "--filesystem",
            "none",
            "--hash",
            "sha256",
        ],
        "",
    );
    let favs = favorites_json(&d);
    assert_eq!(favs["favorites"][0]["system_encryption"], true);
    assert_eq!(favs["favorites"][0]["readonly"], true);
    assert_eq!(favs["favorites"][0]["format"], serde_json::Value::Null);
    let table = d.ok(&["favorites", "list"], "");
    assert!(
        table
            .lines()
            .nth(1)
            .expect("row")
            .ends_with(" system encryption, read-only"),
        "{table}"
    );
    let out = d.tcctl(&["favorites", "mount", "windows", "--password-stdin"], AAA);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tcctl: a system drive is mounted read-only, as VeraCrypt mounts one (--read-write \
         writes to it)\n"
    );
    let row = d.list()[0].clone();
    let device = row["device"].as_str().expect("device").to_owned();
    assert_eq!(row["read_only"], true);
    assert_eq!(row["system_encryption"], true);
    assert_eq!(blkid_uuid(std::path::Path::new(&device)), "DEAD-BABE");
    d.ok(&["dismount", &device], "");

    // VeraCrypt's -m system, with --read-write: read-write, and warned.
    d.ok(&["favorites", "remove", "windows"], "");
    d.ok(
        &[
            "favorites",
            "add",
            "windows",
            &v,
            "-m",
            "system",
            "--read-write",
            "--filesystem",
            "none",
        ],
        "",
    );
    assert_eq!(favorites_json(&d)["favorites"][0]["readonly"], false);
    let out = d.tcctl(&["favorites", "mount", "windows", "--password-stdin"], AAA);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tcctl: warning: attaching a system drive read-write. If Windows on it is hibernated \
         (or was shut down with fast startup), writing to it corrupts the system and the \
         files Windows has open when it resumes.\n"
    );
    let row = d.list()[0].clone();
    assert_eq!(row["read_only"], false);
    assert_eq!(row["system_encryption"], true);

    // A system drive has no hidden volume to protect.
    let (code, err) = d.fails(
        &[
            "favorites",
            "add",
            "both",
            &v,
            "--system-encryption",
            "--protect-hidden",
        ],
        "",
    );
    assert_eq!(code, 7, "{err}");
    assert_eq!(
        err,
        "tcctl: favorite \"both\": system encryption has no hidden volume to protect\n"
    );

    // A volume in a file of its own, its favorite made with -m system:
    // its right password fails, and where the search looked is said.
    let plain = d.image("vc_1-sha512-xts-aes");
    d.ok(
        &[
            "favorites",
            "add",
            "plain",
            &plain,
            "-m",
            "system",
            "--hash",
            "sha512",
        ],
        "",
    );
    let (code, err) = d.fails(&["favorites", "mount", "plain", "--password-stdin"], AAA);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(
            "only a system drive's header (in its first track) was searched, as the favorite's \
             -m system (--system-encryption) asks"
        ),
        "{err}"
    );
}

#[test]
fn a_favorites_file_without_the_new_keys_still_loads() {
    let d = Daemon::start();
    let tc = d.image(TC);
    let dir = d.path("state/favorites");
    std::fs::create_dir_all(&dir).expect("favorites folder");
    std::fs::write(
        dir.join("0.toml"),
        format!(
            "[[favorite]]\nname = \"old\"\nhost = \"{tc}\"\nreadonly = false\nfilesystem = \"none\"\n"
        ),
    )
    .expect("favorites file");
    let favs = favorites_json(&d);
    assert_eq!(favs["favorites"][0]["name"], "old");
    assert_eq!(favs["favorites"][0]["format"], serde_json::Value::Null);
    assert_eq!(favs["favorites"][0]["system_encryption"], false);
    // Both formats tried: the TrueCrypt volume opens.
    d.ok(&["favorites", "mount", "old", "--password-stdin"], AAA);
    assert_eq!(d.list()[0]["format"], "TrueCrypt");
}

/// The stable name tcctl and the daemon give `part`.
fn by_partuuid(part: &str) -> String {
    let out = std::process::Command::new(require_tool("blkid", "package util-linux"))
        .args(["-p", "-o", "value", "-s", "PART_ENTRY_UUID", part])
        .output()
        .expect("blkid");
    let uuid = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(!uuid.is_empty(), "{part} has a PARTUUID");
    format!("/dev/disk/by-partuuid/{uuid}")
}

fn wait_for_a_mount(d: &Daemon) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let rows = d.list();
        if rows.as_array().is_some_and(|r| !r.is_empty()) {
            return rows[0].clone();
        }
        assert!(Instant::now() < deadline, "no mount: {rows}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_system_encrypted_partition_mounts_as_your_favorite_and_as_the_systems() {
    let dir = tempfile::tempdir().expect("temp dir");
    let img = dir.path().join("windows.img");
    std::fs::copy(tcrypt_images().join(MBR_PART), &img).expect("copy");
    let (_disk, part) = LoopDevice::attach_with_partitions(&img);
    let stable = by_partuuid(&part);
    {
        // Yours: tcctl reads the header from the drive's first track.
        let d = Daemon::start();
        let args = [
            "favorites",
            "add",
            "windows",
            &part,
            "--system-encryption",
            "--filesystem",
            "none",
            "--hash",
            "sha256",
        ];
        assert_eq!(
            d.ok(&args, ""),
            format!("your favorite windows: {stable}\n")
        );
        let out = d.ok(&["favorites", "mount", "windows", "--password-stdin"], AAA);
        let row = d.list()[0].clone();
        let device = row["device"].as_str().expect("device").to_owned();
        assert_eq!(out, format!("windows ({stable}) attached as {device}\n"));
        assert_eq!(row["read_only"], true);
        assert_eq!(row["system_encryption"], true);
        assert_eq!(blkid_uuid(std::path::Path::new(&device)), "DEAD-BABE");
        d.ok(&["dismount", &device], "");
    }
    // The system's, written by hand without `readonly`: the daemon mounts
    // it at start, reading the drive's first track itself, read-only.
    let password_file = dir.path().join("password");
    std::fs::write(&password_file, AAA.trim_end()).expect("password file");
    std::fs::set_permissions(&password_file, std::fs::Permissions::from_mode(0o600))
        .expect("chmod");
    let system = dir.path().join("favorites.toml");
    std::fs::write(
        &system,
        format!(
            "[[favorite]]\nname = \"windows\"\nhost = \"{stable}\"\nsystem_encryption = true\n\
             filesystem = \"none\"\nhash = \"sha256\"\nauto_mount = true\npassword_file = \"{}\"\n",
            s(&password_file)
        ),
    )
    .expect("system favorites");
    std::fs::set_permissions(&system, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let d = Daemon::start_with(&["--system-favorites".as_ref(), system.as_os_str()]);
    let row = wait_for_a_mount(&d);
    assert_eq!(row["volume"], stable.as_str());
    assert_eq!(row["read_only"], true);
    assert_eq!(row["system_encryption"], true);
    let device = row["device"].as_str().expect("device").to_owned();
    assert_eq!(blkid_uuid(std::path::Path::new(&device)), "DEAD-BABE");
    d.ok(&["dismount", &device], "");
}
