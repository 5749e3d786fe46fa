//! The Debian package: what `dist/deb/build.sh` makes (dist/test.sh builds
//! it before the tests) holds the daemon, the client, both backends, the
//! system files, man pages and completions; it installs with `dpkg -i`,
//! and the installed daemon (its default backend folder and policy) passes
//! a create, mount, write, dismount, mount, read round trip through the
//! installed client. The package is removed again afterwards. Needs root,
//! /dev/fuse, dpkg, mkfs.ext4.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tcd_tests::daemon::send_signal;
use tcd_tests::{repo_dir, require_root_and_fuse, require_tool};

fn package() -> PathBuf {
    let dir = repo_dir().join("target/debian");
    let found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("tcd_") && n.ends_with(".deb"))
                })
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        found.len(),
        1,
        "one tcd_*.deb in {}: build it with dist/deb/build.sh (dist/test.sh does)",
        dir.display()
    );
    found[0].clone()
}

#[test]
fn the_package_installs_and_its_daemon_mounts_a_volume() {
    require_root_and_fuse();
    require_tool("mkfs.ext4", "package e2fsprogs");
    let dpkg = require_tool("dpkg", "package dpkg");
    let deb = package();

    let listing = Command::new(require_tool("dpkg-deb", "package dpkg"))
        .arg("--contents")
        .arg(&deb)
        .output()
        .expect("dpkg-deb");
    let listing = String::from_utf8_lossy(&listing.stdout).into_owned();
    for file in [
        "./usr/bin/tcd",
        "./usr/bin/tcctl",
        "./usr/lib/tcd/backends/libtcd_backend_aesni.so",
        "./usr/lib/tcd/backends/libtcd_backend_soft.so",
        "./usr/lib/systemd/system/tcd.service",
        "./usr/lib/systemd/system/tcd-bus.service",
        "./usr/lib/tmpfiles.d/tcd.conf",
        "./usr/share/dbus-1/system.d/org.tcd.Tcd1.conf",
        "./usr/share/dbus-1/system-services/org.tcd.Tcd1.service",
        "./usr/share/polkit-1/actions/org.tcd.policy",
        "./etc/tcd/policy.toml",
        "./usr/share/man/man1/tcctl.1.gz",
        "./usr/share/man/man1/tcctl-mount.1.gz",
        "./usr/share/man/man1/tcctl-favorites-add.1.gz",
        "./usr/share/man/man8/tcd.8.gz",
        "./usr/share/bash-completion/completions/tcctl",
        "./usr/share/zsh/vendor-completions/_tcctl",
        "./usr/share/fish/vendor_completions.d/tcctl.fish",
    ] {
        assert!(listing.contains(file), "{file} in the package:\n{listing}");
    }
    // The README's links to docs/ lead to pages in the package.
    let readme = std::fs::read_to_string(tcd_tests::repo_dir().join("README.md")).expect("README");
    for page in readme
        .split("docs/")
        .skip(1)
        .filter_map(|rest| rest.split_once(".md").map(|(name, _)| name))
        .filter(|name| {
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
    {
        let shipped = format!("./usr/share/doc/tcd/docs/{page}.md");
        assert!(
            listing.contains(&shipped),
            "{shipped} (linked from the README) in the package"
        );
    }
    assert!(listing.contains("./usr/share/doc/tcd/README.md"));

    let st = Command::new(&dpkg)
        .arg("-i")
        .arg(&deb)
        .status()
        .expect("dpkg -i");
    assert!(st.success(), "dpkg -i");
    struct Purge(PathBuf);
    impl Drop for Purge {
        fn drop(&mut self) {
            let _ = Command::new(&self.0)
                .args(["--purge", "tcd"])
                .stdout(Stdio::null())
                .status();
        }
    }
    let _purge = Purge(dpkg.clone());
    let conffiles = std::fs::read_to_string("/var/lib/dpkg/info/tcd.conffiles").unwrap_or_default();
    assert!(
        conffiles.contains("/etc/tcd/policy.toml"),
        "the policy is a conffile"
    );
    let man = Command::new("zcat")
        .arg("/usr/share/man/man1/tcctl.1.gz")
        .output()
        .expect("zcat");
    assert!(
        String::from_utf8_lossy(&man.stdout).contains(".TH tcctl"),
        "a man page"
    );

    // The installed daemon, with its installed defaults; it makes its
    // state folder itself (no systemd here), root's alone.
    let _ = std::fs::remove_dir_all("/var/lib/tcd");
    let dir = tempfile::tempdir().expect("temp dir");
    let socket = dir.path().join("tcd.sock");
    let mut daemon = Command::new("/usr/bin/tcd")
        .arg("--socket")
        .arg(&socket)
        .arg("--runtime-dir")
        .arg(dir.path().join("run"))
        .env_remove("TCD_BACKEND_DIR")
        .env_remove("TCD_POLICY")
        .stderr(std::fs::File::create(dir.path().join("tcd.log")).expect("log"))
        .spawn()
        .expect("installed tcd");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !socket.exists() {
        assert!(Instant::now() < deadline, "the installed tcd did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let log = std::fs::read_to_string(dir.path().join("tcd.log")).unwrap_or_default();
    assert!(
        log.contains("/usr/lib/tcd/backends"),
        "installed backends: {log}"
    );
    let tcctl = |args: &[&str], stdin: &str| {
        let mut c = Command::new("/usr/bin/tcctl")
            .arg("--socket")
            .arg(&socket)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("installed tcctl");
        let _ = c.stdin.take().expect("stdin").write_all(stdin.as_bytes());
        let out = c.wait_with_output().expect("output");
        assert!(
            out.status.success(),
            "tcctl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let vol = dir.path().join("v.vc");
    let v = vol.to_str().expect("utf-8");
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).expect("mkdir");
    let m = mnt.to_str().expect("utf-8");
    let pw = "installed\n";
    let common = ["--pim", "1", "--hash", "sha512", "--password-stdin"];
    let with =
        |a: &[&str]| -> Vec<String> { a.iter().chain(&common).map(|s| s.to_string()).collect() };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        tcctl(&a, pw)
    };
    run(with(&[
        "create",
        "--force",
        v,
        "--size",
        "24M",
        "--filesystem",
        "ext4",
    ]));
    run(with(&["mount", v, m]));
    std::fs::write(mnt.join("f"), b"through the package").expect("write");
    tcctl(&["dismount", m], "");
    run(with(&["mount", v, m, "--readonly"]));
    assert_eq!(
        std::fs::read(mnt.join("f")).expect("read"),
        b"through the package"
    );
    assert!(tcctl(&["backends"], "").contains("aesni"));
    tcctl(&["favorites", "add", "kept", v], "");
    let state = std::fs::metadata("/var/lib/tcd").expect("the state folder");
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&state.permissions()) & 0o7777,
        0o700
    );
    tcctl(&["dismount", "--all"], "");
    send_signal(daemon.id(), 15);
    assert!(daemon.wait().expect("wait").success());

    // Purged, nothing of it stays: not the favorites filed by UID (a
    // later user of that UID would inherit them), not the runtime folder.
    let st = Command::new(&dpkg)
        .args(["--purge", "tcd"])
        .stdout(Stdio::null())
        .status()
        .expect("dpkg --purge");
    assert!(st.success(), "dpkg --purge");
    for gone in ["/var/lib/tcd", "/run/tcd", "/etc/tcd/policy.toml"] {
        assert!(
            !std::path::Path::new(gone).exists(),
            "{gone} after dpkg --purge"
        );
    }
}
