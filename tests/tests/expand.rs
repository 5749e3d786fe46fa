//! `tcctl expand` (VeraCrypt's Expand Volume) through the daemon: an ext4
//! volume with data grows, its filesystem checks clean before and after
//! and fills the new size, cryptsetup opens it at its new size, the
//! container keeps its timestamps; hidden
//! volumes, volumes said to hold one, mounted volumes and sizes that do
//! not grow are refused, naming why; another user's container is refused
//! on the system bus.

use std::path::{Path, PathBuf};
use std::process::Command;
use tcd_tests::daemon::Daemon;
use tcd_tests::loop_device::LoopDevice;
use tcd_tests::system::{OPEN_FAST, PASSWORD, PYTHON, System};
use tcd_tests::{require_tool, s};

const OPEN: [&str; 5] = ["--password-stdin", "--pim", "1", "--hash", "sha512"];
const MIB: u64 = 1 << 20;

fn with<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut v = args.to_vec();
    v.extend(OPEN);
    v
}

/// `e2fsck -fn` of the volume's block device (attached without mounting).
fn fsck_clean(d: &Daemon, vol: &str) {
    fs_check_clean(d, vol, ("e2fsck", "package e2fsprogs", &["-fn"]));
}

/// The filesystem's size as df gives it, in bytes.
fn df_size(mnt: &Path) -> u64 {
    let out = Command::new("df")
        .args(["-B1", "--output=size"])
        .arg(mnt)
        .output()
        .expect("df");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .expect("a size")
}

/// A new ext4 volume `name` of `size` holding `data` in its file `data`,
/// dismounted: its path, a folder to mount it on, and the size df gave
/// its filesystem.
fn ext4_holding(d: &Daemon, name: &str, size: &str, data: &[u8]) -> (PathBuf, PathBuf, u64) {
    let vol = d.path(name);
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let (v, m) = (s(&vol), s(&mnt));
    d.ok(
        &with(&[
            "create",
            v,
            "--size",
            size,
            "--filesystem",
            "ext4",
            "--force",
        ]),
        "secret words\n",
    );
    d.ok(&with(&["mount", v, m]), "secret words\n");
    std::fs::write(mnt.join("data"), data).expect("write");
    let before = df_size(&mnt);
    d.ok(&["dismount", m], "");
    (vol, mnt, before)
}

/// The data area's size as the volume's header says it, once cryptsetup's
/// own tcrypt code has opened that header (this machine's kernel may have
/// no device-mapper for `cryptsetup open`).
fn header_size(d: &Daemon, vol: &Path) -> u64 {
    let mut child = Command::new(require_tool("cryptsetup", "package cryptsetup-bin"))
        .args([
            "tcryptDump",
            "--veracrypt",
            "--veracrypt-pim=1",
            "--hash",
            "sha512",
        ])
        .args(["--key-file=-", "--batch-mode"])
        .arg(vol)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("cryptsetup");
    std::io::Write::write_all(&mut child.stdin.take().expect("stdin"), b"secret words")
        .expect("password");
    let dump = child.wait_with_output().expect("cryptsetup");
    let text = String::from_utf8_lossy(&dump.stdout);
    assert!(
        dump.status.success() && text.contains("Cipher chain:\taes"),
        "{text}"
    );
    let info = d.ok(&with(&["info", s(vol), "--json"]), "secret words\n");
    let v: serde_json::Value = serde_json::from_str(&info).expect("JSON");
    v["size"].as_u64().expect("size")
}

#[test]
fn an_ext4_volume_grows_with_its_data_and_filesystem() {
    let d = Daemon::start();
    let data: Vec<u8> = (0..8 * MIB as usize).map(|i| (i * 7 / 512) as u8).collect();
    let (vol, mnt, before) = ext4_holding(&d, "v.vc", "32M", &data);
    let (v, m) = (s(&vol), s(&mnt));
    fsck_clean(&d, v);

    let st = Command::new("touch")
        .args(["-d", "2001-02-03 04:05:06", v])
        .status()
        .expect("touch");
    assert!(st.success());
    let mtime = || {
        std::fs::metadata(&vol)
            .and_then(|m| m.modified())
            .expect("mtime")
    };
    let touched = mtime();
    let out = d.ok(
        &with(&["expand", "-q", v, "--add", "32M"]),
        "secret words\n",
    );
    assert_eq!(mtime(), touched, "the container's times are put back");
    assert_eq!(
        out,
        format!(
            "{v}: expanded; the volume holds {} bytes\n\
             {v}: its ext4 filesystem was grown to fill it\n",
            64 * MIB - 256 * 1024
        )
    );
    assert_eq!(std::fs::metadata(&vol).expect("stat").len(), 64 * MIB);
    fsck_clean(&d, v);
    d.ok(&with(&["mount", v, m]), "secret words\n");
    assert!(
        std::fs::read(mnt.join("data")).expect("read") == data,
        "data intact"
    );
    let after = df_size(&mnt);
    assert!(
        after > before + 28 * MIB,
        "df shows the larger size: {before} then {after}"
    );
    d.ok(&["dismount", m], "");
    assert_eq!(header_size(&d, &vol), 64 * MIB - 256 * 1024);

    // --size and --no-random-fill: the new space stays as the host had it.
    let out = d.ok(
        &with(&["expand", "-q", v, "--size", "80M", "--no-random-fill"]),
        "secret words\n",
    );
    assert!(
        out.ends_with("its ext4 filesystem was grown to fill it\n"),
        "{out}"
    );
    fsck_clean(&d, v);
    assert_eq!(header_size(&d, &vol), 80 * MIB - 256 * 1024);
}

#[test]
fn hidden_volumes_mounted_volumes_and_sizes_that_do_not_grow_are_refused() {
    let d = Daemon::start();
    let vol = d.path("outer.vc");
    let v = s(&vol);
    d.ok(
        &with(&[
            "create",
            v,
            "--size",
            "16M",
            "--filesystem",
            "none",
            "--force",
        ]),
        "secret words\n",
    );
    let size = || std::fs::metadata(&vol).expect("stat").len();

    // Said to hold a hidden volume: refused before a password is asked.
    let (code, err) = d.fails(
        &with(&["expand", "-q", v, "--add", "8M", "--holds-hidden"]),
        "",
    );
    assert_eq!(
        (code, err.as_str()),
        (
            7,
            "tcctl: a volume that holds a hidden volume cannot be expanded: the hidden volume \
             would lose its backup header at the end of the host, and the grown outer \
             filesystem would write over it\n"
        )
    );
    let (code, err) = d.fails(
        &with(&["expand", "-q", v, "--size", "16M"]),
        "secret words\n",
    );
    assert_eq!(
        (code, err.as_str()),
        (
            7,
            "tcctl: the container holds 16777216 bytes already, all of them the volume's (its \
             data area ends at 16646144, and the backup headers take the last 131072): only a \
             larger size grows it\n"
        )
    );
    let (code, err) = d.fails(&with(&["expand", "-q", v]), "");
    assert_eq!(code, 64, "{err}");

    d.ok(
        &with(&[
            "create",
            "--force",
            v,
            "--hidden-size",
            "4M",
            "--outer-pim",
            "1",
            "--filesystem",
            "none",
        ]),
        "secret words\nhidden words\n",
    );
    let (code, err) = d.fails(&with(&["expand", "-q", v, "--add", "8M"]), "hidden words\n");
    assert_eq!(
        (code, err.as_str()),
        (
            7,
            "tcctl: a hidden volume cannot be expanded: it lies inside its outer volume\n"
        )
    );
    assert_eq!(size(), 16 * MIB);

    d.ok(
        &with(&["mount", v, "--filesystem", "none"]),
        "secret words\n",
    );
    // Said before any password is read (none is given), naming where.
    let (code, err) = d.fails(&with(&["expand", "-q", v, "--add", "8M"]), "");
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    assert_eq!(
        (code, err),
        (
            4,
            format!("tcctl: {v} is already mounted as {device}: `tcctl dismount {v}` first\n")
        )
    );
    assert_eq!(size(), 16 * MIB);
    d.ok(&["dismount", v], "");

    // The backing file of a loop device someone attached: it would grow
    // beneath it, so it is busy, as a header restore finds it.
    let dev = LoopDevice::attach(&vol);
    let (code, err) = d.fails(
        &with(&["expand", "-q", v, "--add", "8M", "--filesystem-as-is"]),
        "secret words\n",
    );
    assert_eq!(code, 5, "{err}");
    assert!(
        err.contains(&format!("(the backing file of {})", dev.path())),
        "{err}"
    );
    assert_eq!(size(), 16 * MIB);
}

/// Calls `Expand` with a descriptor of the file opened read-only (all a
/// user who may read but not write it can hand over); prints the error.
const EXPAND: &str = r#"
import json, os, sys
from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.fds import FileDescriptor
fd = os.open(sys.argv[1], os.O_RDONLY)
with open_dbus_connection(bus="SYSTEM", enable_fds=True) as conn:
    addr = DBusAddress("/org/tcd/Tcd1", bus_name="org.tcd.Tcd1", interface="org.tcd.Manager1")
    body = (FileDescriptor(fd), b"user words, twenty and more", [], {"pim": ("u", 1)}, {"size": ("t", 64 << 20)})
    r = conn.send_and_get_reply(new_method_call(addr, "Expand", "hayaaya{sv}a{sv}", body), timeout=60)
    if r.header.message_type == MessageType.error:
        print(json.dumps({"error": r.header.fields.get(HeaderFields.error_name), "text": list(r.body)}))
    else:
        print(json.dumps({"reply": list(r.body)}))
"#;

#[test]
fn another_users_container_is_refused() {
    require_tool("python3", "package python3-jeepney");
    let sys = System::start();
    let (alice, bob) = (&sys.users[0], &sys.users[1]);
    let vol = sys.create_volume(alice, "a.hc", "24M");
    let v = s(&vol);
    let before = std::fs::metadata(&vol).expect("stat").len();
    // tcctl opens the container with bob's rights: he may not write it.
    let mut args = vec!["expand", "-q", v, "--add", "8M"];
    args.extend(OPEN_FAST);
    let out = sys.tcctl(Some(bob), &args, &format!("{PASSWORD}\n"));
    assert_eq!(
        out.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Handed a descriptor he could open (read-only), the daemon refuses.
    std::fs::set_permissions(
        vol.parent().expect("home"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    std::fs::set_permissions(&vol, std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .expect("chmod");
    let out = sys
        .command(Some(bob), PYTHON)
        .args(["-c", EXPAND, v])
        .output()
        .expect("python3");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("org.tcd.Error.PermissionDenied")
            && text.contains("expanding it needs the right to write it"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::metadata(&vol).expect("stat").len(), before);
    // Its owner expands it.
    let out = sys.tcctl(Some(alice), &args, &format!("{PASSWORD}\n"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::metadata(&vol).expect("stat").len(),
        before + 8 * MIB
    );
}

#[test]
fn an_xfs_volume_grows_without_the_random_fill() {
    // XFS's smallest filesystem is 300 MiB.
    grows_with_data("xfs", "320M", ("xfs_repair", "package xfsprogs", &["-n"]));
}

#[test]
fn a_btrfs_volume_grows_without_the_random_fill() {
    grows_with_data(
        "btrfs",
        "160M",
        ("btrfs", "package btrfs-progs", &["check", "--readonly"]),
    );
}

#[test]
fn an_ntfs_volume_grows_without_the_random_fill() {
    grows_with_data("ntfs", "64M", ("ntfsfix", "package ntfs-3g", &["-n"]));
}

/// The volume's filesystem checks clean: `check` (tool, package, its
/// arguments before the device) on its block device, attached without
/// mounting.
fn fs_check_clean(d: &Daemon, vol: &str, (tool, package, args): (&str, &str, &[&str])) {
    let attached = d.ok(
        &with(&["mount", vol, "--filesystem", "none"]),
        "secret words\n",
    );
    let device = attached
        .trim()
        .rsplit(' ')
        .next()
        .expect("device")
        .to_owned();
    let st = Command::new(require_tool(tool, package))
        .args(args)
        .arg(&device)
        .output()
        .expect("filesystem check");
    assert!(
        st.status.success(),
        "{tool}: {}{}",
        String::from_utf8_lossy(&st.stdout),
        String::from_utf8_lossy(&st.stderr)
    );
    d.ok(&["dismount", &device], "");
}

/// A `filesystem` volume of `size` with a file in it grows by 128 MiB
/// without the random fill: the filesystem checks clean before and after,
/// is said to have grown, keeps the file, and df gives it the new space.
fn grows_with_data(filesystem: &str, size: &str, check: (&str, &str, &[&str])) {
    let d = Daemon::start();
    let vol = d.path("x.vc");
    let v = s(&vol);
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let m = s(&mnt);
    d.ok(
        &with(&[
            "create",
            "--force",
            v,
            "--size",
            size,
            "--quick",
            "--filesystem",
            filesystem,
        ]),
        "secret words\n",
    );
    d.ok(&with(&["mount", v, m]), "secret words\n");
    std::fs::write(mnt.join("data"), b"kept across the expansion").expect("write");
    let before = df_size(&mnt);
    d.ok(&["dismount", m], "");
    fs_check_clean(&d, v, check);
    let out = d.ok(
        &with(&["expand", "-q", v, "--add", "128M", "--no-random-fill"]),
        "secret words\n",
    );
    assert!(
        out.ends_with(&format!(
            "{v}: its {filesystem} filesystem was grown to fill it\n"
        )),
        "{out}"
    );
    fs_check_clean(&d, v, check);
    d.ok(&with(&["mount", v, m]), "secret words\n");
    assert_eq!(
        std::fs::read(mnt.join("data")).expect("read"),
        b"kept across the expansion"
    );
    let after = df_size(&mnt);
    assert!(after > before + 120 * MIB, "df: {before} then {after}");
    d.ok(&["dismount", m], "");
}

#[test]
fn a_volume_on_a_device_that_has_grown_fills_it() {
    let d = Daemon::start();
    let backing = d.path("disk");
    std::fs::File::create(&backing)
        .and_then(|f| f.set_len(24 * MIB))
        .expect("backing file");
    let dev = LoopDevice::attach(&backing);
    d.ok(
        &with(&[
            "create",
            dev.path(),
            "--quick",
            "--filesystem",
            "ext4",
            "--force",
            "--batch-mode",
        ]),
        "secret words\n",
    );
    // A size is the device's to give.
    let (code, err) = d.fails(&with(&["expand", "-q", dev.path(), "--add", "8M"]), "");
    assert_eq!(code, 7, "{err}");
    // A device not grown yet: said so.
    let (code, err) = d.fails(&with(&["expand", "-q", dev.path()]), "secret words\n");
    assert_eq!(code, 7, "{err}");
    assert!(
        err.starts_with("tcctl: the volume already fills its device ("),
        "{err}"
    );
    std::fs::OpenOptions::new()
        .write(true)
        .open(&backing)
        .and_then(|f| f.set_len(40 * MIB))
        .expect("grow the backing file");
    let st = Command::new("losetup")
        .args(["-c", dev.path()])
        .status()
        .expect("losetup -c");
    assert!(st.success());
    let out = d.ok(&with(&["expand", "-q", dev.path()]), "secret words\n");
    assert_eq!(
        out,
        format!(
            "{0}: expanded; the volume holds {1} bytes\n{0}: its ext4 filesystem was grown to fill it\n",
            dev.path(),
            40 * MIB - 256 * 1024
        )
    );
    fsck_clean(&d, dev.path());
}

#[test]
fn a_fat_or_exfat_volume_is_refused_unless_its_filesystem_may_stay_as_it_is() {
    let d = Daemon::start();
    for (fs, name) in [("fat", "FAT"), ("exfat", "exFAT")] {
        let vol = d.path(&format!("{fs}.vc"));
        let v = s(&vol);
        let create = [
            "create",
            "--force",
            v,
            "--size",
            "16M",
            "--quick",
            "--filesystem",
            fs,
        ];
        d.ok(&with(&create), "secret words\n");
        let before = std::fs::read(&vol).expect("the volume");
        // Refused before anything is written: the container is as it was.
        let (code, msg) = d.fails(&with(&["expand", "-q", v, "--add", "8M"]), "secret words\n");
        assert_eq!(code, 7, "{msg}");
        assert_eq!(
            msg,
            format!(
                "tcctl: the volume's {name} filesystem cannot be grown here, so the new space \
                 would lie unused (a container never shrinks): nothing was written; copy its \
                 files into a new, larger volume, or expand with --filesystem-as-is and grow \
                 {name} elsewhere\n"
            )
        );
        assert!(
            std::fs::read(&vol).expect("the volume") == before,
            "{v} was written"
        );
        // Asked for, it grows and says the filesystem was left.
        let out = d.ok(
            &with(&["expand", "-q", v, "--add", "8M", "--filesystem-as-is"]),
            "secret words\n",
        );
        let expanded = format!(
            "{v}: expanded; the volume holds {} bytes\n",
            24 * MIB - 256 * 1024
        );
        assert!(out.starts_with(&expanded), "{out}");
        assert!(out.contains(&format!("{v}: {name} ")), "{out}");
    }
}

#[test]
fn a_btrfs_volume_that_would_stay_under_256_mib_is_refused_before_anything_is_written() {
    let d = Daemon::start();
    let vol = d.path("small-btrfs.vc");
    let v = s(&vol);
    let create = [
        "create",
        "--force",
        v,
        "--size",
        "120M",
        "--quick",
        "--filesystem",
        "btrfs",
    ];
    d.ok(&with(&create), "secret words\n");
    let before = std::fs::metadata(&vol).expect("the volume").len();
    let (code, msg) = d.fails(
        &with(&["expand", "-q", v, "--add", "20M"]),
        "secret words\n",
    );
    assert_eq!(code, 7, "{msg}");
    assert_eq!(
        msg,
        format!(
            "tcctl: the volume's btrfs filesystem is grown to 256 MiB or more only, and the \
             volume would hold {} bytes: nothing was written; expand it to 256 MiB or more, or \
             expand with --filesystem-as-is\n",
            140 * MIB - 256 * 1024
        )
    );
    assert_eq!(std::fs::metadata(&vol).expect("the volume").len(), before);
    // Asked for, the container grows and the filesystem is said to be left.
    let out = d.ok(
        &with(&["expand", "-q", v, "--add", "20M", "--filesystem-as-is"]),
        "secret words\n",
    );
    assert!(
        out.contains("btrfs is grown to 256 MiB or more only"),
        "{out}"
    );
    assert_eq!(
        std::fs::metadata(&vol).expect("the volume").len(),
        before + 20 * MIB
    );
}

#[test]
fn expanding_asks_first_and_an_interrupted_expansion_says_how_to_finish_it() {
    use std::time::Duration;
    use tcd_tests::pty::Pty;
    let d = Daemon::start();
    let vol = d.path("ask.vc");
    let v = s(&vol);
    d.ok(
        &with(&[
            "create",
            v,
            "--size",
            "16M",
            "--filesystem",
            "none",
            "--force",
        ]),
        "secret words\n",
    );
    let size = || std::fs::metadata(&vol).expect("stat").len();
    // A hidden volume inside is invisible to the outer password and may
    // be damaged: with no terminal to ask on, nothing happens.
    let (code, err) = d.fails(&with(&["expand", v, "--add", "8M"]), "secret words\n");
    assert_eq!(
        (code, err),
        (
            64,
            format!(
                "tcctl: expanding {v}: confirmation needed and no terminal to ask on: give --batch-mode\n"
            )
        )
    );
    assert_eq!(size(), 16 * MIB);
    let on_terminal = |more: &[&str]| {
        let mut c = d.command();
        c.args(["expand", v, "--pim", "1", "--hash", "sha512"])
            .args(more);
        let mut t = Pty::spawn(c, None);
        t.expect("(Type 'YES' in capital letters): ", Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(300));
        t
    };
    let mut t = on_terminal(&["--add", "8M"]);
    t.type_line("yes");
    let (code, text) = t.finish(Duration::from_secs(10));
    assert_eq!(code, 10, "{text}");
    assert!(
        text.contains(&format!(
            "WARNING: if {v} holds a hidden volume, expanding it may damage the hidden volume: \
             its embedded backup header is overwritten"
        )) && text.contains("tcctl: not confirmed: nothing done"),
        "{text}"
    );
    assert_eq!(size(), 16 * MIB);

    // Ctrl-C during the fill of 3 GiB.
    let mut t = on_terminal(&["--size", "3G"]);
    t.type_line("YES");
    t.expect("Password for", Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(300));
    t.type_line("secret words");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while size() == 16 * MIB {
        assert!(std::time::Instant::now() < deadline, "{}", t.text());
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    tcd_tests::daemon::send_signal(t.child.id(), 2);
    let (code, text) = t.finish(Duration::from_secs(30));
    assert_eq!(code, 130, "{text}");
    let again = format!("tcctl expand --size {} {v}", 3u64 << 30);
    // The file had grown by then: said so, with how to finish.
    let said = text
        .split_once(&format!(
            "tcctl: interrupted: {v} has grown from {} to ",
            16 * MIB
        ))
        .map(|(_, rest)| rest.to_owned())
        .unwrap_or_default();
    assert!(
        said.contains(&format!(
            " bytes, but its volume keeps its old size (its primary header opens it so until the \
             expansion is finished): `{again}` finishes the expansion"
        )),
        "{text}"
    );
    d.wait_for_log("cancelling its request", "the fill went on");
    // The primary header opens it at the old size; the backup header at
    // the file's end, at the new one.
    let opened = |extra: &[&str]| {
        let mut args = vec!["mount", v, "--filesystem", "none"];
        args.extend(extra);
        d.ok(&with(&args), "secret words\n");
        let size = d.list()[0]["size"].as_u64().expect("size");
        d.ok(&["dismount", "--all"], "");
        size
    };
    assert_eq!(opened(&[]), 16 * MIB - 256 * 1024);
    assert_eq!(opened(&["-m", "headerbak"]), (3u64 << 30) - 256 * 1024);
    // The same command finishes it.
    let args: Vec<&str> = again.split(' ').skip(1).collect();
    let mut args = with(&args);
    args.push("-q");
    d.ok(&args, "secret words\n");
    assert_eq!(opened(&[]), (3u64 << 30) - 256 * 1024);
}

#[test]
fn an_expansion_opened_by_the_backup_header_says_so_and_leaves_both_headers_whole() {
    use std::os::unix::fs::FileExt;
    let d = Daemon::start();
    let vol = d.path("torn.vc");
    let v = s(&vol);
    d.ok(
        &with(&[
            "create",
            v,
            "--size",
            "8M",
            "--filesystem",
            "none",
            "--force",
        ]),
        "secret words\n",
    );
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&vol)
        .expect("open");
    f.write_all_at(&[0x5a; 512], 0).expect("damage the header");
    let out = d.tcctl(&with(&["expand", "-q", v, "--add", "8M"]), "secret words\n");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "tcctl: warning: {v}: its primary header did not open it (damaged, or an expansion \
             was interrupted) and its backup header did; both headers now hold the new size\n"
        )
    );
    assert_eq!(
        stdout,
        format!(
            "{v}: expanded; the volume holds {} bytes\n\
             {v}: the volume holds no filesystem the daemon recognises\n",
            16 * MIB - 256 * 1024
        )
    );
    // The primary header opens it again, at the new size, with nothing
    // to warn of; cryptsetup reads the same.
    let out = d.tcctl(&with(&["info", v, "--json"]), "secret words\n");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(header_size(&d, &vol), 16 * MIB - 256 * 1024);
}

/// An expansion stopped during its fill, its primary header then damaged
/// and restored from the embedded backup (which already says the new
/// size): the command the interrupt printed still finishes it, filling
/// the space never written and growing the filesystem, and says so; once
/// finished, the same size again is refused as before.
#[test]
fn an_interrupted_expansion_is_finished_after_its_primary_header_is_restored_from_the_backup() {
    use std::os::unix::fs::FileExt;
    use std::time::{Duration, Instant};
    let d = Daemon::start();
    let (vol, mnt, before) = ext4_holding(&d, "cut.vc", "16M", b"across it all");
    let (v, m) = (s(&vol), s(&mnt));
    let size = || std::fs::metadata(&vol).expect("stat").len();

    // Interrupted once the container has grown (its new backup header
    // written), while the new space is being filled.
    let new = 2u64 << 30;
    let mut c = d.command();
    c.args(with(&["expand", "-q", v, "--size", "2G"]))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().expect("tcctl");
    std::io::Write::write_all(child.stdin.as_mut().expect("stdin"), b"secret words\n")
        .expect("password");
    let deadline = Instant::now() + Duration::from_secs(60);
    while size() == 16 * MIB {
        assert!(Instant::now() < deadline, "the container never grew");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(100));
    tcd_tests::daemon::send_signal(child.id(), 2);
    let out = child.wait_with_output().expect("tcctl");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let again = format!("tcctl expand --size {new} {v}");
    assert!(
        err.contains(&format!("`{again}` finishes the expansion")),
        "{err}"
    );
    d.wait_for_log("cancelling its request", "the fill went on");
    let data_end = new - 128 * 1024;
    let mut last = [0u8; 512];
    let host = std::fs::File::open(&vol).expect("open");
    host.read_exact_at(&mut last, data_end - 512).expect("read");
    assert_eq!(last, [0u8; 512], "the fill was stopped before the end");

    // The primary header damaged, the embedded backup restored over it:
    // both now say the new size, the filesystem is still the old one.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&vol)
        .and_then(|f| f.write_all_at(&[0u8; 512], 0))
        .expect("damage the primary header");
    d.ok(
        &with(&["restore-header", v, "--embedded", "-q"]),
        "secret words\n",
    );
    assert_eq!(header_size(&d, &vol), data_end - 128 * 1024);

    // The printed command finishes it.
    let args: Vec<&str> = again.split(' ').skip(1).collect();
    let mut args = with(&args);
    args.push("-q");
    let out = d.ok(&args, "secret words\n");
    let tail = |out: &str| {
        out.split_once("(the last ")
            .and_then(|(_, rest)| rest.split_once(' '))
            .and_then(|(n, _)| n.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let filled = tail(&out);
    assert!(filled > 0 && filled < new - 16 * MIB, "{out}");
    assert_eq!(
        out,
        format!(
            "{v}: expanded; the volume holds {} bytes\n\
             {v}: its ext4 filesystem was grown to fill it\n\
             {v}: its headers held this size already: an expansion left unfinished was finished \
             (the last {filled} bytes of its data area, never written, were encrypted)\n",
            data_end - 128 * 1024
        )
    );
    host.read_exact_at(&mut last, data_end - 512).expect("read");
    assert_ne!(last, [0u8; 512], "the space left is filled");
    fsck_clean(&d, v);
    d.ok(&with(&["mount", v, m]), "secret words\n");
    assert_eq!(
        std::fs::read(mnt.join("data")).expect("read"),
        b"across it all"
    );
    let after = df_size(&mnt);
    assert!(after > before + (1 << 30), "df: {before} then {after}");
    d.ok(&["dismount", m], "");

    // Nothing is left to finish: the same size again is refused.
    let (code, err) = d.fails(&args, "secret words\n");
    assert_eq!(code, 7, "{err}");
    assert!(
        err.contains(&format!("the container holds {new} bytes already")),
        "{err}"
    );
}
