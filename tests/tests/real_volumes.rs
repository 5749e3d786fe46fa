//! Known answers from real TrueCrypt volumes, through the loaded backends.
//!
//! For each TrueCrypt 7 (and 6) volume of the cryptsetup corpus made with
//! SHA-512, derive the header key, decrypt the header through the engine's
//! chain, check its magic and both CRC-32s, then decrypt the first sector
//! of the data area with the master key and find the FAT serial DEAD-BABE
//! (CAFE-BABE in a hidden volume). Every AES layer runs once on the AES-NI
//! backend and once on the software backend, so a backend that derives or
//! encrypts differently from TrueCrypt cannot pass.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use tcd::engine::{Chain, Engine};
use tcd_tests::engine;
use tcd_tests::tcrypt_images;

const PASSWORD: &[u8] = b"aaaaaaaaaaaa";
const HIDDEN_PASSWORD: &[u8] = b"bbbbbbbbbbbb";

fn read_at(f: &mut File, offset: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    f.seek(SeekFrom::Start(offset)).expect("seek");
    f.read_exact(&mut buf).expect("read");
    buf
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Opens the header at `offset` and returns the FAT serial of the volume's
/// first data sector, little-endian as blkid prints it.
fn open_and_read_serial(
    e: &Engine,
    image: &str,
    chain: &'static Chain,
    header_at: u64,
    password: &[u8],
) -> u32 {
    let path = tcrypt_images().join(image);
    let mut f = File::open(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let header = read_at(&mut f, header_at, 512);
    let mut header_key = [0u8; 192];
    pbkdf2::pbkdf2_hmac::<sha2::Sha512>(password, &header[..64], 1000, &mut header_key);

    // The 448 encrypted bytes are one XTS data unit numbered 0.
    let mut area = header[64..].to_vec();
    let hc = e
        .volume_cipher_units(chain, &header_key, None, 448)
        .expect("header cipher");
    hc.decrypt(&mut area, 0).expect("decrypt header");
    assert_eq!(
        &area[..4],
        b"TRUE",
        "{image}: header magic with {:?}",
        hc.backends()
    );
    assert_eq!(
        be32(&area, 8),
        crc32fast::hash(&area[192..448]),
        "{image}: master key CRC"
    );
    // Header version 3 (TrueCrypt 5) has no CRC of the header fields.
    if u16::from_be_bytes([area[4], area[5]]) >= 4 {
        assert_eq!(
            be32(&area, 188),
            crc32fast::hash(&area[..188]),
            "{image}: header CRC"
        );
    }

    // TrueCrypt 5 left the offset zero: its data follows the header sector.
    let data_offset = match be64(&area, 44) {
        0 if u16::from_be_bytes([area[4], area[5]]) == 3 => 512,
        offset => offset,
    };
    let master = &area[192..448];
    let vc = e.volume_cipher(chain, master, None).expect("volume cipher");
    let mut sector = read_at(&mut f, data_offset, 512);
    // Units count from the start of the host file, hidden volumes included.
    vc.decrypt(&mut sector, data_offset / 512)
        .expect("decrypt sector");
    assert_eq!(
        &sector[510..512],
        &[0x55, 0xaa],
        "{image}: boot sector signature"
    );
    let at = if &sector[0x52..0x57] == b"FAT32" {
        0x43
    } else {
        0x27
    };
    u32::from_le_bytes(sector[at..at + 4].try_into().expect("4 bytes"))
}

fn chain_of(image: &str) -> &'static Chain {
    let name = image
        .split("-xts-")
        .nth(1)
        .expect("xts image")
        .trim_end_matches("-hidden");
    Chain::by_name(name).unwrap_or_else(|| panic!("no chain {name}"))
}

const IMAGES: &[&str] = &[
    "tc_5-sha512-xts-aes",
    "tc_5-sha512-xts-twofish",
    "tc_5-sha512-xts-serpent",
    "tc_5-sha512-xts-aes-twofish",
    "tc_5-sha512-xts-aes-twofish-serpent",
    "tc_5-sha512-xts-serpent-aes",
    "tc_5-sha512-xts-serpent-twofish-aes",
    "tc_5-sha512-xts-twofish-serpent",
    "tc_4-sha512-xts-aes",
    "tc_4-sha512-xts-twofish-serpent",
    "tc_3-sha512-xts-aes",
];

#[test]
fn truecrypt_volumes_decrypt_on_every_backend_order() {
    for order in [&["aesni", "soft"][..], &["soft"][..]] {
        let e = engine(order);
        for image in IMAGES {
            let serial = open_and_read_serial(&e, image, chain_of(image), 0, PASSWORD);
            assert_eq!(serial, 0xDEAD_BABE, "{image} with backends {order:?}");
        }
    }
}

#[test]
fn hidden_volumes_decrypt_at_their_own_unit_numbers() {
    for order in [&["aesni", "soft"][..], &["soft"][..]] {
        let e = engine(order);
        for image in [
            "tc_5-sha512-xts-aes-hidden",
            "tc_5-sha512-xts-serpent-twofish-aes-hidden",
        ] {
            // The hidden header sits at 64 KiB.
            let serial = open_and_read_serial(&e, image, chain_of(image), 65536, HIDDEN_PASSWORD);
            assert_eq!(serial, 0xCAFE_BABE, "{image} with backends {order:?}");
            let outer = open_and_read_serial(&e, image, chain_of(image), 0, PASSWORD);
            assert_eq!(outer, 0xDEAD_BABE, "{image} outer with backends {order:?}");
        }
    }
}

#[test]
#[should_panic(expected = "header magic")]
fn a_wrong_password_does_not_decrypt() {
    let e = engine(&["soft"]);
    open_and_read_serial(
        &e,
        "tc_5-sha512-xts-aes",
        chain_of("tc_5-sha512-xts-aes"),
        0,
        b"aaaaaaaaaaab",
    );
}

/// The volumes of TrueCrypt before 5.0 (header versions 1 and 2: LRW and
/// CBC modes), as the corpus names them: `tc_<1|2>-<prf>-<mode>-<chain>`,
/// the chain in cryptsetup's order (of application) but for the Blowfish
/// cascades, which keep TrueCrypt's name.
fn legacy_images() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tcrypt_images())
        .expect("corpus folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("tc_1-") || n.starts_with("tc_2-"))
        .collect();
    names.sort();
    names
}

mod legacy {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use tcd::engine::chain::Mode;
    use tcd::volume::kdf::{Format, Prf};
    use tcd::volume::opened::OpenVolume;
    use tcd::volume::unlock::{SearchOptions, Target};
    use tcd_tests::{creds, fat_serial};

    /// What an image's name promises: PRF, mode, and the ciphers.
    fn parts(name: &str) -> (Prf, Mode, Vec<String>, bool) {
        let f: Vec<&str> = name.split('-').collect();
        let prf = Prf::by_name(f[1]).unwrap_or_else(|| panic!("{name}: PRF"));
        let mode = match f[2] {
            "lrw" => Mode::Lrw,
            "cbc" => Mode::Cbc,
            other => panic!("{name}: mode {other}"),
        };
        let hidden = name.ends_with("-hidden");
        let ciphers = f[3..]
            .iter()
            .filter(|c| **c != "hidden")
            .map(|c| match *c {
                "des3_ede" => "Triple DES".to_owned(),
                "cast5" => "CAST5".to_owned(),
                "aes" => "AES".to_owned(),
                c => {
                    let mut s = c[..1].to_uppercase();
                    s.push_str(&c[1..]);
                    s
                }
            })
            .collect();
        (prf, mode, ciphers, hidden)
    }

    fn first_sector(v: &OpenVolume) -> Vec<u8> {
        let mut s = vec![0u8; 512];
        v.read_at(&mut s, 0).expect("read the first sector");
        s
    }

    /// The corpus keeps no data for the modes cryptsetup cannot map
    /// (Blowfish, and the outer CBC of cascades): their data areas are
    /// zeros, only their headers are real. Every other image carries its
    /// FAT filesystem.
    fn carries_a_filesystem(mode: Mode, ciphers: &[String]) -> bool {
        mode == Mode::Lrw || (ciphers.len() == 1 && ciphers[0] != "Blowfish")
    }

    /// Opens `name` with `password` and checks what the corpus promises:
    /// the FAT serial where it carries a filesystem, zeros on disk where
    /// it does not. Returns whether the volume opened as hidden.
    fn check(e: &Engine, name: &str, password: &[u8], target: Target, serial: u32) -> bool {
        let (prf, mode, ciphers, _) = parts(name);
        let mut opts = SearchOptions::new();
        opts.format = Some(Format::TrueCrypt);
        opts.prf = Some(prf);
        let path = tcrypt_images().join(name);
        let host = File::open(&path).expect("image");
        let cancel = AtomicBool::new(false);
        let v = OpenVolume::open(e, host, creds(password), target, &opts, &cancel, true)
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        let info = v.info();
        // The corpus names a chain by TrueCrypt's name (the reverse of the
        // order of application) or by cryptsetup's (that order).
        let applied: Vec<String> = info.chain.ciphers.iter().map(|c| c.to_string()).collect();
        let mut reversed = applied.clone();
        reversed.reverse();
        let shown = info.chain.display_name();
        assert!(
            applied == ciphers || reversed == ciphers,
            "{name}: opened as {shown}"
        );
        assert_eq!(
            info.chain.mode == Mode::Lrw,
            mode == Mode::Lrw,
            "{name}: {shown}"
        );
        assert!(
            info.header_version <= 2,
            "{name}: version {}",
            info.header_version
        );
        assert_eq!(info.prf, prf, "{name}");
        if carries_a_filesystem(mode, &ciphers) {
            assert_eq!(
                fat_serial(&first_sector(&v)),
                Some(serial),
                "{name}: {shown}"
            );
        } else {
            let mut f = File::open(&path).expect("image");
            let on_disk = read_at(&mut f, info.data_offset, 512);
            assert!(
                on_disk.iter().all(|&b| b == 0),
                "{name}: data kept after all"
            );
        }
        info.hidden
    }

    #[test]
    fn every_volume_of_truecrypt_before_5_opens_and_shows_its_filesystem() {
        let e = engine(&["aesni", "soft"]);
        let images = legacy_images();
        assert_eq!(images.len(), 28, "{images:?}");
        let mut opened = 0;
        for name in &images {
            assert!(
                !check(&e, name, PASSWORD, Target::Outer, 0xDEAD_BABE),
                "{name}"
            );
            opened += 1;
            if name.ends_with("-hidden") {
                assert!(
                    check(&e, name, HIDDEN_PASSWORD, Target::Any, 0xCAFE_BABE),
                    "{name}"
                );
                opened += 1;
            }
        }
        assert_eq!(opened, 32);
    }

    /// Through the daemon and `tcctl`, as a user mounts them.
    mod tcctl {
        use super::*;
        use std::os::unix::fs::FileExt;
        use tcd_tests::blkid_uuid;
        use tcd_tests::daemon::Daemon;

        fn copy(d: &Daemon, name: &str) -> String {
            let p = d.path(name);
            std::fs::copy(tcrypt_images().join(name), &p).expect("copy the image");
            tcd_tests::s(&p).to_owned()
        }

        /// Mounts `volume` as a block device alone; the list row.
        fn attach(
            d: &Daemon,
            volume: &str,
            password: &str,
            extra: &[&str],
        ) -> (serde_json::Value, String) {
            let hash = volume
                .rsplit('/')
                .next()
                .and_then(|n| n.split('-').nth(1))
                .expect("hash");
            let mut args = vec![
                "mount",
                volume,
                "--filesystem",
                "none",
                "--password-stdin",
                "--hash",
                hash,
            ];
            args.extend(extra);
            let out = d.tcctl(&args, &format!("{password}\n"));
            assert!(out.status.success(), "{volume}: {out:?}");
            let row = d.list()[0].clone();
            (row, String::from_utf8_lossy(&out.stderr).into_owned())
        }

        fn device(row: &serde_json::Value) -> String {
            row["device"].as_str().expect("device").to_owned()
        }

        #[test]
        fn they_mount_read_only_and_show_their_serials() {
            let d = Daemon::start();
            let mut mounted = 0;
            for name in legacy_images() {
                let (_, mode, ciphers, hidden) = parts(&name);
                let v = copy(&d, &name);
                let mut passwords = vec![("aaaaaaaaaaaa", "DEAD-BABE")];
                if hidden {
                    passwords.push(("bbbbbbbbbbbb", "CAFE-BABE"));
                }
                for (password, serial) in passwords {
                    let (row, stderr) = attach(&d, &v, password, &[]);
                    assert_eq!(
                        stderr,
                        format!(
                            "tcctl: {v} is a volume of TrueCrypt before 5.0 (LRW or CBC mode): \
                             attached read-only (--read-write to write to it)\n"
                        )
                    );
                    assert_eq!(row["read_only"], true, "{name}");
                    let encryption = row["encryption"].as_str().expect("encryption");
                    let want_mode = if mode == Mode::Lrw {
                        "(LRW, legacy)"
                    } else {
                        "CBC, legacy)"
                    };
                    assert!(encryption.ends_with(want_mode), "{name}: {encryption}");
                    if carries_a_filesystem(mode, &ciphers) {
                        let uuid = blkid_uuid(std::path::Path::new(&device(&row)));
                        assert_eq!(uuid, serial, "{name}");
                    }
                    d.ok(&["dismount", &device(&row)], "");
                    mounted += 1;
                }
            }
            assert_eq!(mounted, 32);
            // Read-only asked for: nothing more to say.
            let name = legacy_images().into_iter().next().expect("a legacy image");
            let v = copy(&d, &name);
            let (row, stderr) = attach(&d, &v, "aaaaaaaaaaaa", &["-r"]);
            assert_eq!(stderr, "", "{name}");
            assert_eq!(row["read_only"], true, "{name}");
            d.ok(&["dismount", &device(&row)], "");
        }

        #[test]
        fn info_shows_the_header_version_and_the_legacy_mode() {
            let d = Daemon::start();
            let v = copy(&d, "tc_2-ripemd160-lrw-aes-twofish");
            let text = d.ok(
                &["info", &v, "--password-stdin", "--hash", "ripemd160"],
                "aaaaaaaaaaaa\n",
            );
            for line in [
                "Header version     2",
                "Encryption         AES-Twofish",
                "Key size           768 bits",
                "Mode               lrw-benbi (TrueCrypt before 5.0, legacy)",
                "PKCS-5 PRF         RIPEMD-160",
            ] {
                assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
            }
            let v = copy(&d, "tc_1-sha1-cbc-des3_ede");
            let text = d.ok(&["info", &v, "--password-stdin"], "aaaaaaaaaaaa\n");
            for line in [
                "Header version     1",
                "Encryption         Triple DES",
                "Mode               cbc-tcw (TrueCrypt before 5.0, legacy)",
                "PKCS-5 PRF         SHA-1",
                "Iterations         2000",
            ] {
                assert!(text.lines().any(|l| l == line), "{line:?} in\n{text}");
            }
        }

        #[test]
        fn status_names_the_legacy_mode_as_info_and_cryptsetup_do() {
            let d = Daemon::start();
            for name in [
                "tc_2-ripemd160-lrw-serpent-twofish-aes",
                "tc_2-ripemd160-cbc-aes",
                "tc_2-ripemd160-cbc-serpent-twofish-aes",
                "tc_2-ripemd160-cbc-aes-blowfish-serpent",
            ] {
                let v = copy(&d, name);
                let info = d.ok(&["info", &v, "--password-stdin"], "aaaaaaaaaaaa\n");
                let mode = info
                    .lines()
                    .find_map(|l| l.strip_prefix("Mode "))
                    .and_then(|m| m.split_whitespace().next())
                    .unwrap_or_else(|| panic!("a mode in {info}"))
                    .to_owned();
                let (row, _) = attach(&d, &v, "aaaaaaaaaaaa", &[]);
                let status = d.ok(&["status", &v], "");
                let want = format!("  cipher mode:     {mode}");
                assert!(
                    status.lines().any(|l| l == want),
                    "{name}: {want:?} in\n{status}"
                );
                d.ok(&["dismount", &device(&row)], "");
            }
        }

        #[test]
        fn read_write_is_asked_for_and_warned_about_and_what_is_written_reads_back() {
            let d = Daemon::start();
            for name in [
                "tc_2-ripemd160-lrw-serpent-twofish-aes",
                "tc_2-ripemd160-cbc-aes",
                "tc_1-sha1-cbc-cast5",
                "tc_2-ripemd160-cbc-serpent-twofish-aes",
                "tc_2-ripemd160-cbc-aes-blowfish-serpent",
            ] {
                let v = copy(&d, name);
                let (row, stderr) = attach(&d, &v, "aaaaaaaaaaaa", &["--read-write"]);
                assert_eq!(
                    stderr,
                    format!(
                        "tcctl: warning: {v} is a volume of TrueCrypt before 5.0, attached \
                         read-write as asked. TrueCrypt 7.1a called its modes deprecated: move \
                         its files to a new volume.\n"
                    )
                );
                assert_eq!(row["read_only"], false, "{name}");
                let pattern: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
                let dev = std::fs::File::options()
                    .write(true)
                    .open(device(&row))
                    .expect("device");
                dev.write_all_at(&pattern, 8192).expect("write");
                dev.sync_all().expect("sync");
                drop(dev);
                d.ok(&["dismount", &device(&row)], "");
                // On disk it is ciphertext; mounted again it reads back.
                let raw = std::fs::read(&v).expect("image");
                assert_ne!(&raw[512 + 8192..512 + 8192 + 4096], &pattern[..], "{name}");
                let (row, _) = attach(&d, &v, "aaaaaaaaaaaa", &[]);
                let dev = File::open(device(&row)).expect("device");
                let mut back = vec![0u8; 4096];
                dev.read_exact_at(&mut back, 8192).expect("read");
                assert_eq!(back, pattern, "{name}");
                drop(dev);
                if name.contains("-lrw-")
                    || name == "tc_2-ripemd160-cbc-aes"
                    || name.contains("cast5")
                {
                    let uuid = blkid_uuid(std::path::Path::new(&device(&row)));
                    assert_eq!(uuid, "DEAD-BABE", "{name}: the filesystem untouched");
                }
                d.ok(&["dismount", &device(&row)], "");
            }
        }

        /// TrueCrypt 5's XTS volumes (header version 3) have one header
        /// too: a backup of its "header group" would hold its data, and
        /// no embedded backup is there to restore from, however large the
        /// host; said so, with the right password.
        #[test]
        fn a_truecrypt_5_volume_has_no_header_group_to_back_up_or_restore() {
            let d = Daemon::start();
            let v = copy(&d, "tc_3-sha512-xts-aes");
            let hdr = d.path("v.hdr");
            let pw = "aaaaaaaaaaaa\n";
            let (code, msg) = d.fails(
                &[
                    "backup-header",
                    &v,
                    tcd_tests::s(&hdr),
                    "--hash",
                    "sha512",
                    "--password-stdin",
                ],
                pw,
            );
            assert_eq!(code, 7, "{msg}");
            assert!(
                msg.contains(
                    "a volume of TrueCrypt before 6.0 (header version 3) has one header and no \
                     header group to back up or restore"
                ),
                "{msg}"
            );
            assert!(!hdr.exists(), "no backup file is left");
            // Grown past two header groups: the search for an embedded
            // backup finds none, and the volume's one header says why.
            std::fs::File::options()
                .write(true)
                .open(&v)
                .and_then(|f| f.set_len(1 << 20))
                .expect("grow");
            let (code, msg) = d.fails(
                &[
                    "restore-header",
                    &v,
                    "--embedded",
                    "-q",
                    "--hash",
                    "sha512",
                    "--password-stdin",
                ],
                pw,
            );
            assert_eq!(code, 7, "{msg}");
            assert!(msg.contains("(header version 3) has one header"), "{msg}");
        }

        #[test]
        fn create_and_password_change_refuse_the_legacy_modes() {
            let d = Daemon::start();
            let new = d.path("new.tc");
            let new = tcd_tests::s(&new);
            let (code, msg) = d.fails(
                &[
                    "create",
                    new,
                    "--size",
                    "1M",
                    "--quick",
                    "--password-stdin",
                    "--hash",
                    "sha1",
                ],
                "secret words\n",
            );
            assert_eq!(code, 7, "{msg}");
            assert_eq!(
                msg,
                "tcctl: SHA-1 is the hash of TrueCrypt before 5.0 (deprecated since TrueCrypt 5): \
                 tcd opens such volumes but never makes new headers with it\n"
            );
            let (code, msg) = d.fails(
                &[
                    "create",
                    new,
                    "--size",
                    "1M",
                    "--password-stdin",
                    "--encryption",
                    "Blowfish",
                ],
                "secret words\n",
            );
            assert_eq!(code, 64, "{msg}");
            assert!(
                msg.contains("invalid value 'Blowfish' for '--encryption <ENCRYPTION>'"),
                "{msg}"
            );
            let v = copy(&d, "tc_2-ripemd160-lrw-aes");
            let (code, msg) = d.fails(
                &["change-password", &v, "--password-stdin"],
                "aaaaaaaaaaaa\nsecret words\n",
            );
            assert_eq!(code, 7, "{msg}");
            assert!(
                msg.contains("LRW is a mode of TrueCrypt before 5.0"),
                "{msg}"
            );
            // Grown past a header group's size, so that the client can
            // read what a backup takes: the daemon refuses.
            let big = copy(&d, "tc_2-ripemd160-lrw-twofish");
            let f = std::fs::File::options()
                .write(true)
                .open(&big)
                .expect("copy");
            f.set_len(1 << 20).expect("grow");
            drop(f);
            let hdr = d.path("v.hdr");
            let (code, msg) = d.fails(
                &[
                    "backup-header",
                    &big,
                    tcd_tests::s(&hdr),
                    "--password-stdin",
                ],
                "aaaaaaaaaaaa\n",
            );
            assert_eq!(code, 7, "{msg}");
            assert!(msg.contains("has one header and no header group"), "{msg}");
            // Its one header has no embedded backup to restore from: said
            // so, before anything is asked (no terminal here to confirm
            // on, nothing on standard input).
            let (code, msg) = d.fails(
                &["restore-header", &v, "--embedded", "--password-stdin"],
                "",
            );
            assert_eq!(code, 7, "{msg}");
            assert!(
                msg.contains(
                    "too few for a volume with backup headers (262144 at least): it holds no \
                     embedded backup header to restore from (a volume of TrueCrypt before 6.0 \
                     has one header)"
                ),
                "{msg}"
            );
            let before =
                std::fs::read(tcrypt_images().join("tc_2-ripemd160-lrw-aes")).expect("image");
            assert_eq!(
                std::fs::read(&v).expect("copy"),
                before,
                "the header is untouched"
            );
        }
    }
}
