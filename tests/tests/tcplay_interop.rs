//! tcplay, a separate TrueCrypt implementation, as the oracle: it reads the
//! TrueCrypt-format volumes made here (on a loop device), and volumes it
//! makes open here. Needs root (loop devices), `losetup`, `tcplay` and
//! `script` (for tcplay's terminal prompts); `dist/test.sh` installs them.
//!
//! tcplay names a cascade by its order of application: its
//! "SERPENT-256-XTS,TWOFISH-256-XTS" is TrueCrypt's "Twofish-Serpent".

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tcd::engine::{Chain, Engine};
use tcd::volume::create::{self, CreateOptions};
use tcd::volume::kdf::{Format, Prf};
use tcd::volume::opened::OpenVolume;
use tcd::volume::unlock::{Credentials, SearchOptions, Target};
use tcd_tests::creds;
use tcd_tests::loop_device::LoopDevice;
use tcd_tests::{engine, new_host as host, open_rw as rw, require_tool};

/// `tcplay -i` on `dev` with `password` (and keyfiles): its fields.
fn tcplay_info(dev: &Path, password: &[u8], keyfiles: &[&Path]) -> HashMap<String, String> {
    require_tool("tcplay", "package tcplay");
    let mut cmd = Command::new("tcplay");
    cmd.arg("-i").arg("-d").arg(dev);
    for k in keyfiles {
        cmd.arg("-k").arg(k);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tcplay");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(password).expect("password");
    stdin.write_all(b"\n").expect("newline");
    drop(stdin);
    let out = child.wait_with_output().expect("tcplay output");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "tcplay -i failed: {text} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

/// Runs `cmd` under a pseudo-terminal (tcplay reads passwords from one),
/// answering each prompt in turn once it appears.
fn converse(cmd: &str, answers: &[(&str, &str)]) -> String {
    require_tool("script", "package bsdutils");
    let mut child = Command::new("script")
        .args(["-qec", cmd, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run script");
    let mut stdout = child.stdout.take().expect("stdout");
    let seen = Arc::new(Mutex::new(String::new()));
    let reader = {
        let seen = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 256];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                seen.lock().expect("lock").push_str(&text);
            }
        })
    };
    let mut stdin = child.stdin.take().expect("stdin");
    let mut from = 0;
    for (prompt, answer) in answers {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let text = seen.lock().expect("lock").clone();
            if let Some(at) = text[from..].find(prompt) {
                from += at + prompt.len();
                break;
            }
            assert!(
                Instant::now() < deadline,
                "no prompt {prompt:?} from {cmd}: {text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // The prompt is printed before the terminal is set to read it.
        std::thread::sleep(Duration::from_millis(200));
        stdin.write_all(answer.as_bytes()).expect("answer");
        stdin.write_all(b"\n").expect("answer");
        stdin.flush().expect("flush");
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{cmd} did not finish");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(stdin);
    reader.join().expect("reader");
    let text = seen.lock().expect("lock").clone();
    assert!(status.success(), "{cmd} failed: {text}");
    text
}

/// tcplay's name for a chain: its ciphers in order of application.
fn tcplay_cipher(chain: &Chain) -> String {
    chain
        .ciphers
        .iter()
        .map(|c| format!("{}-256-XTS", c.to_uppercase()))
        .collect::<Vec<_>>()
        .join(",")
}

fn tcplay_prf(prf: Prf) -> &'static str {
    match prf {
        Prf::Sha512 => "SHA512",
        Prf::Ripemd160 => "RIPEMD160",
        Prf::Whirlpool => "whirlpool",
        other => panic!("tcplay has no {}", other.name()),
    }
}

#[test]
fn tcplay_reads_truecrypt_volumes_made_here() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let no = AtomicBool::new(false);
    for (chain, prf) in [
        ("AES", Prf::Sha512),
        ("Serpent-Twofish-AES", Prf::Whirlpool),
        ("Twofish-Serpent", Prf::Ripemd160),
        ("AES-Twofish-Serpent", Prf::Sha512),
    ] {
        let chain = Chain::by_name(chain).expect("chain");
        let path = dir.path().join(chain.name);
        let opts = CreateOptions {
            format: Format::TrueCrypt,
            chain,
            prf,
            ..CreateOptions::new()
        };
        let made = create::create(
            &e,
            &host(&path, 2 << 20),
            creds(b"made by tcd"),
            &opts,
            &mut |_, _| {},
            &no,
        )
        .expect("create");
        let dev = LoopDevice::attach_with_sector(&path, 512);
        let info = tcplay_info(dev.as_path(), b"made by tcd", &[]);
        assert_eq!(info["PBKDF2 PRF"], tcplay_prf(prf), "{}", chain.name);
        assert_eq!(info["Cipher"], tcplay_cipher(chain), "{}", chain.name);
        assert_eq!(
            info["Volume size"],
            format!("{} sectors", made.data_size / 512)
        );
        assert_eq!(
            info["Block offset"],
            format!("{} sectors", made.data_offset / 512)
        );
        assert_eq!(info["IV offset"], "256 sectors");
    }
}

#[test]
fn tcplay_reads_a_hidden_volume_and_keyfiles_made_here() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let no = AtomicBool::new(false);
    let keyfile = dir.path().join("keyfile");
    std::fs::write(&keyfile, b"a keyfile of a few bytes").expect("keyfile");
    let kf = std::fs::read(&keyfile).expect("read");
    let kfs = [kf.as_slice()];
    let outer = Credentials {
        password: b"outer",
        keyfiles: &kfs,
        pim: 0,
    };
    let hidden = creds(b"hidden");
    let path = dir.path().join("outer");
    let tc = CreateOptions {
        format: Format::TrueCrypt,
        ..CreateOptions::new()
    };
    create::create(&e, &host(&path, 4 << 20), outer, &tc, &mut |_, _| {}, &no).expect("outer");
    let hidden_opts = CreateOptions {
        chain: Chain::by_name("Serpent").expect("chain"),
        prf: Prf::Whirlpool,
        ..tc.clone()
    };
    let h = create::create_hidden(
        &e,
        &rw(&path),
        outer,
        hidden,
        1 << 20,
        &hidden_opts,
        &mut |_, _| {},
        &no,
    )
    .expect("hidden");
    let dev = LoopDevice::attach_with_sector(&path, 512);
    let info = tcplay_info(dev.as_path(), b"outer", &[&keyfile]);
    assert_eq!(info["Cipher"], "AES-256-XTS");
    let info = tcplay_info(dev.as_path(), b"hidden", &[]);
    assert_eq!(info["Cipher"], "SERPENT-256-XTS");
    assert_eq!(info["PBKDF2 PRF"], "whirlpool");
    assert_eq!(
        info["Volume size"],
        format!("{} sectors", h.data_size / 512)
    );
    assert_eq!(
        info["Block offset"],
        format!("{} sectors", h.data_offset / 512)
    );
}

#[test]
fn a_volume_on_a_4k_device_gets_4k_sectors() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("4k");
    drop(host(&path, 2 << 20));
    let dev = LoopDevice::attach_with_sector(&path, 4096);
    let device = rw(dev.as_path());
    assert_eq!(
        create::host_sector_size(&device).expect("sector size"),
        4096
    );
    let tc = CreateOptions {
        format: Format::TrueCrypt,
        ..CreateOptions::new()
    };
    create::create(
        &e,
        &device,
        creds(b"4k"),
        &tc,
        &mut |_, _| {},
        &AtomicBool::new(false),
    )
    .expect("create");
    let info = tcplay_info(dev.as_path(), b"4k", &[]);
    assert_eq!(info["Sector size"], "4096");
    let v = OpenVolume::open(
        &e,
        rw(dev.as_path()),
        creds(b"4k"),
        Target::Any,
        &SearchOptions::new(),
        &AtomicBool::new(false),
        true,
    )
    .expect("opens");
    assert_eq!(v.info().sector_size, 4096);
    // 512-byte sectors on a 4K device cannot work: refused.
    let small = CreateOptions {
        sector_size: Some(512),
        ..tc
    };
    assert!(
        create::create(
            &e,
            &device,
            creds(b"4k"),
            &small,
            &mut |_, _| {},
            &AtomicBool::new(false)
        )
        .is_err()
    );
}

/// Makes a volume with tcplay on a loop device over a new file.
fn tcplay_create(path: &Path, size: u64, args: &str, answers: &[(&str, &str)]) -> LoopDevice {
    require_tool("tcplay", "package tcplay");
    drop(host(path, size));
    let dev = LoopDevice::attach_with_sector(path, 512);
    converse(
        &format!("tcplay -c -d {} {args} --insecure-erase", dev.path()),
        answers,
    );
    dev
}

fn open(e: &Engine, dev: &Path, password: &[u8]) -> OpenVolume {
    OpenVolume::open(
        e,
        rw(dev),
        creds(password),
        Target::Any,
        &SearchOptions::new(),
        &AtomicBool::new(false),
        false,
    )
    .unwrap_or_else(|err| panic!("{}: {err}", dev.display()))
}

fn write_read(v: &OpenVolume) {
    let mut data: Vec<u8> = (0..64 * 1024).map(|i| (i * 7) as u8).collect();
    let expected = data.clone();
    v.write_at(&mut data, 512 * 10).expect("write");
    let mut back = vec![0u8; expected.len()];
    v.read_at(&mut back, 512 * 10).expect("read");
    assert!(back == expected);
}

#[test]
fn volumes_made_by_tcplay_open_here() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    for (args, chain, prf) in [
        (
            "-a whirlpool -b SERPENT-256-XTS,TWOFISH-256-XTS",
            "Twofish-Serpent",
            Prf::Whirlpool,
        ),
        (
            "-a SHA512 -b AES-256-XTS,TWOFISH-256-XTS,SERPENT-256-XTS",
            "Serpent-Twofish-AES",
            Prf::Sha512,
        ),
        ("-a RIPEMD160 -b AES-256-XTS", "AES", Prf::Ripemd160),
    ] {
        let path = dir.path().join(chain);
        let dev = tcplay_create(
            &path,
            4 << 20,
            args,
            &[
                ("Passphrase:", "tcplay made"),
                ("Repeat passphrase:", "tcplay made"),
                ("(y/n)", "y"),
            ],
        );
        let v = open(&e, dev.as_path(), b"tcplay made");
        let info = v.info();
        assert_eq!(info.format, Format::TrueCrypt);
        assert_eq!(info.chain.name, chain, "{args}");
        assert_eq!(info.prf, prf);
        assert_eq!(info.data_offset, 131072);
        assert_eq!(info.data_size, (4 << 20) - 262144);
        write_read(&v);
    }
}

#[test]
fn a_hidden_volume_made_by_tcplay_opens_here_and_is_protected() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("hidden");
    let dev = tcplay_create(
        &path,
        8 << 20,
        "-g -a SHA512 -b AES-256-XTS -x whirlpool -y TWOFISH-256-XTS",
        &[
            ("Passphrase:", "outer pw"),
            ("Repeat passphrase:", "outer pw"),
            ("Passphrase for hidden volume:", "hidden pw"),
            ("Repeat passphrase:", "hidden pw"),
            ("Size of hidden volume", "1M"),
            ("(y/n)", "y"),
        ],
    );
    let h = open(&e, dev.as_path(), b"hidden pw");
    assert!(h.info().hidden);
    assert_eq!(h.info().chain.name, "Twofish");
    assert_eq!(h.info().data_size, 1 << 20);
    write_read(&h);
    let hidden_start = h.info().data_offset;
    drop(h);
    let o = OpenVolume::open_protected(
        &e,
        rw(dev.as_path()),
        creds(b"outer pw"),
        creds(b"hidden pw"),
        &SearchOptions::new(),
        &AtomicBool::new(false),
        false,
    )
    .expect("outer with protection");
    let mut data = vec![1u8; 512];
    let into = hidden_start - o.info().data_offset;
    assert!(o.write_at(&mut data, into).is_err());
    assert!(o.is_read_only());
}
