//! Every XTS volume of the real TrueCrypt and VeraCrypt corpus opens with
//! its password, keyfiles and PIM through the volume library, and its first
//! decrypted sector is the FAT boot sector with the serial the corpus
//! promises (DEAD-BABE outer, CAFE-BABE hidden). Wrong credentials, damaged
//! headers, hidden-volume protection, keyfile folders and cancellation
//! behave as a TrueCrypt user expects.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use tcd::Error;
use tcd::engine::{Chain, Engine};
use tcd::volume::header::Location;
use tcd::volume::kdf::{Format, Prf};
use tcd::volume::keyfile::read_keyfiles;
use tcd::volume::maintain;
use tcd::volume::opened::OpenVolume;
use tcd::volume::unlock::{Credentials, SearchOptions, Target};
use tcd_tests::{engine, fat_serial, tcrypt_images};

const OUTER: &[u8] = b"aaaaaaaaaaaa";
const HIDDEN: &[u8] = b"bbbbbbbbbbbb";
const PW72: &[u8] = b"aaaaaaaaaaaabbbbbbbbbbbbccccccccccccddddddddddddeeeeeeeeeeeeffffffffffff";
const PIM_PW: &[u8] = b"cccccccccccccccccccc";
const DEAD_BABE: u32 = 0xDEAD_BABE;
const CAFE_BABE: u32 = 0xCAFE_BABE;

/// What the corpus README says opens an image.
struct Case {
    format: Format,
    prf: Prf,
    chain: String,
    password: &'static [u8],
    keyfiles: bool,
    pim: u32,
    hidden: bool,
}

fn case(name: &str) -> Case {
    let (kind, rest) = name.split_once('-').expect("kind-prf-xts-chain");
    let (prf, rest) = rest.split_once("-xts-").expect("an XTS image");
    let hidden = rest.ends_with("-hidden");
    let pim = kind
        .strip_prefix("vcpim_1_")
        .map(|p| p.parse().expect("PIM in the name"))
        .unwrap_or(0);
    let password: &[u8] = match kind {
        "vck_1_nopw" => b"",
        "vck_1_pw72" => PW72,
        _ if pim != 0 => PIM_PW,
        _ => OUTER,
    };
    Case {
        format: if kind.starts_with("tc") {
            Format::TrueCrypt
        } else {
            Format::VeraCrypt
        },
        prf: Prf::by_name(prf).unwrap_or_else(|| panic!("{name}: unknown PRF {prf}")),
        chain: rest.trim_end_matches("-hidden").to_owned(),
        password,
        keyfiles: kind.starts_with("tck") || kind.starts_with("vck"),
        pim,
        hidden,
    }
}

fn xts_images() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tcrypt_images())
        .expect("corpus folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("-xts-") && !n.starts_with("sys_"))
        .collect();
    names.sort();
    names
}

fn keyfiles() -> Vec<Vec<u8>> {
    ["keyfile1", "keyfile2"]
        .iter()
        .map(|k| std::fs::read(tcrypt_images().join(k)).expect("keyfile"))
        .collect()
}

fn narrowed(format: Format, prf: Prf) -> SearchOptions {
    let mut o = SearchOptions::new();
    o.format = Some(format);
    o.prf = Some(prf);
    o
}

fn first_sector(v: &OpenVolume) -> Vec<u8> {
    let mut s = vec![0u8; 512];
    v.read_at(&mut s, 0).expect("read the first sector");
    s
}

fn open(
    e: &Engine,
    path: &Path,
    creds: Credentials<'_>,
    target: Target,
    opts: &SearchOptions,
) -> Result<OpenVolume, Error> {
    let host = File::open(path).expect("image");
    OpenVolume::open(e, host, creds, target, opts, &AtomicBool::new(false), true)
}

/// The chain a corpus name means: TrueCrypt's name, or for VeraCrypt's own
/// cascades the ciphers in order of application.
fn chain_matches(chain: &Chain, corpus: &str) -> bool {
    chain.name.eq_ignore_ascii_case(corpus) || chain.ciphers.join("-").eq_ignore_ascii_case(corpus)
}

#[test]
fn every_xts_volume_in_the_corpus_opens_and_shows_its_filesystem() {
    let e = engine(&["aesni", "soft"]);
    let kf = keyfiles();
    let kf: Vec<&[u8]> = kf.iter().map(Vec::as_slice).collect();
    let images = xts_images();
    assert!(images.len() >= 60, "corpus has {} XTS images", images.len());
    let mut opened = 0;
    for name in &images {
        let c = case(name);
        let path = tcrypt_images().join(name);
        let creds = Credentials {
            password: c.password,
            keyfiles: if c.keyfiles { &kf } else { &[] },
            pim: c.pim,
        };
        let opts = narrowed(c.format, c.prf);
        let v = open(&e, &path, creds, Target::Outer, &opts)
            .unwrap_or_else(|err| panic!("{name}: {err}"));
        let info = v.info();
        assert_eq!(fat_serial(&first_sector(&v)), Some(DEAD_BABE), "{name}");
        assert_eq!(info.format, c.format, "{name}");
        assert_eq!(info.prf, c.prf, "{name}");
        assert!(
            chain_matches(info.chain, &c.chain),
            "{name}: opened as {}",
            info.chain.name
        );
        assert!(!info.hidden && !info.used_backup_header, "{name}");
        opened += 1;
        if c.hidden {
            let creds = Credentials {
                password: HIDDEN,
                ..creds
            };
            let v = open(&e, &path, creds, Target::Any, &opts)
                .unwrap_or_else(|err| panic!("{name} hidden: {err}"));
            assert_eq!(
                fat_serial(&first_sector(&v)),
                Some(CAFE_BABE),
                "{name} hidden"
            );
            assert!(v.info().hidden, "{name}: reported as hidden");
            opened += 1;
        }
    }
    eprintln!("{opened} volumes of {} images opened", images.len());
}

#[test]
fn a_full_search_finds_prf_and_chain_by_itself() {
    let e = engine(&["aesni", "soft"]);
    // A TrueCrypt cascade and a VeraCrypt one, nothing narrowed.
    for (name, chain) in [
        ("tc_5-sha512-xts-serpent-twofish-aes", "Serpent-Twofish-AES"),
        ("vc_1-sha512-xts-camellia", "Camellia"),
    ] {
        let creds = Credentials {
            password: OUTER,
            keyfiles: &[],
            pim: 0,
        };
        let v = open(
            &e,
            &tcrypt_images().join(name),
            creds,
            Target::Any,
            &SearchOptions::new(),
        )
        .unwrap_or_else(|err| panic!("{name}: {err}"));
        assert_eq!(v.info().chain.name, chain);
        assert_eq!(fat_serial(&first_sector(&v)), Some(DEAD_BABE), "{name}");
    }
}

#[test]
fn wrong_password_missing_keyfile_and_no_volume_give_one_error() {
    let e = engine(&["aesni", "soft"]);
    let opts = narrowed(Format::TrueCrypt, Prf::Sha512);
    let wrong = Credentials {
        password: b"aaaaaaaaaaab",
        keyfiles: &[],
        pim: 0,
    };
    let right_without_keyfiles = Credentials {
        password: OUTER,
        keyfiles: &[],
        pim: 0,
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let noise = dir.path().join("noise");
    let mut bytes = vec![0u8; 1 << 20];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut bytes);
    std::fs::write(&noise, &bytes).expect("write noise");

    let mut messages = Vec::new();
    for (what, path, creds) in [
        (
            "wrong password",
            tcrypt_images().join("tc_5-sha512-xts-aes"),
            wrong,
        ),
        (
            "missing keyfiles",
            tcrypt_images().join("tck_5-sha512-xts-aes"),
            right_without_keyfiles,
        ),
        ("not a volume", noise.clone(), right_without_keyfiles),
    ] {
        match open(&e, &path, creds, Target::Any, &opts) {
            Err(err @ Error::NotUnlocked { .. }) => messages.push(err.to_string()),
            Err(other) => panic!("{what}: {other}"),
            Ok(_) => panic!("{what}: opened"),
        }
    }
    assert!(messages.iter().all(|m| m == &messages[0]), "{messages:?}");
    assert!(messages[0].starts_with("wrong password or keyfile, or not a volume"));

    // A file smaller than any volume is said to be (nothing was searched);
    // one of the smallest volume's size is no volume. Neither crashes.
    for len in [0usize, 100, 511, 512, 4096, 18943, 18944] {
        let short = dir.path().join(format!("short{len}"));
        std::fs::write(&short, &bytes[..len]).expect("write");
        let r = open(&e, &short, wrong, Target::Any, &opts);
        if len < 18944 {
            assert!(
                matches!(&r, Err(Error::NotAVolume(m)) if m.contains("smaller than any")),
                "{len}-byte file"
            );
        } else {
            assert!(
                matches!(r, Err(Error::NotUnlocked { .. })),
                "{len}-byte file"
            );
        }
    }
}

#[test]
fn passwords_longer_than_the_format_allows_are_refused_not_cut() {
    let e = engine(&["aesni", "soft"]);
    let path = tcrypt_images().join("tc_5-sha512-xts-aes");
    let long = [b'a'; 129];
    for (format, len, max) in [(Some(Format::TrueCrypt), 65, 64), (None, 129, 128)] {
        let mut opts = SearchOptions::new();
        opts.format = format;
        opts.prf = Some(Prf::Sha512);
        let creds = Credentials {
            password: &long[..len],
            keyfiles: &[],
            pim: 0,
        };
        match open(&e, &path, creds, Target::Any, &opts) {
            Err(Error::PasswordTooLong { len: l, max: m, .. }) => assert_eq!((l, m), (len, max)),
            other => panic!("{len} bytes: {:?}", other.map(|v| v.info().clone())),
        }
    }
}

fn copy_of(name: &str, dir: &Path) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(tcrypt_images().join(name), &to).expect("copy image");
    to
}

#[test]
fn a_damaged_primary_header_falls_back_to_the_backup_and_can_be_restored() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = copy_of("vc_1-sha512-xts-aes", dir.path());
    let mut opts = narrowed(Format::VeraCrypt, Prf::Sha512);
    opts.chain = Chain::by_name("AES");
    let creds = Credentials {
        password: OUTER,
        keyfiles: &[],
        pim: 0,
    };
    let host = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .expect("open copy");
    std::os::unix::fs::FileExt::write_all_at(&host, &[0u8; 512], 0).expect("damage");

    let v = open(&e, &path, creds, Target::Any, &opts).expect("opens from the backup");
    assert!(v.info().used_backup_header);
    assert_eq!(v.info().location, Location::Backup);
    assert_eq!(fat_serial(&first_sector(&v)), Some(DEAD_BABE));

    let mut primary_only = opts.clone();
    primary_only.try_backup = false;
    assert!(open(&e, &path, creds, Target::Any, &primary_only).is_err());
    let restored =
        maintain::restore_from_embedded(&e, &host, creds, &opts, &AtomicBool::new(false))
            .expect("restore");
    assert_eq!(restored, Location::Backup);
    let v = open(&e, &path, creds, Target::Any, &primary_only).expect("primary restored");
    assert!(!v.info().used_backup_header);
    assert_eq!(fat_serial(&first_sector(&v)), Some(DEAD_BABE));
}

#[test]
fn the_outer_volume_refuses_writes_into_its_protected_hidden_volume() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = copy_of("tc_5-sha512-xts-aes-hidden", dir.path());
    let opts = narrowed(Format::TrueCrypt, Prf::Sha512);
    let outer = Credentials {
        password: OUTER,
        keyfiles: &[],
        pim: 0,
    };
    let hidden = Credentials {
        password: HIDDEN,
        ..outer
    };
    let rw = || {
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .expect("open copy")
    };
    let h = open(&e, &path, hidden, Target::Hidden, &opts).expect("hidden opens");
    let (h_start, h_size) = (h.info().data_offset, h.info().data_size);
    let mut before = vec![0u8; h_size as usize];
    h.read_at(&mut before, 0).expect("read hidden");
    drop(h);

    let v = OpenVolume::open_protected(
        &e,
        rw(),
        outer,
        hidden,
        &opts,
        &AtomicBool::new(false),
        false,
    )
    .expect("outer opens with protection");
    assert!(v.protects_hidden_volume());
    let outer_start = v.info().data_offset;
    // A write below the hidden volume goes through.
    let mut data = vec![0x42u8; 512];
    v.write_at(&mut data, 4096)
        .expect("write outside the hidden volume");
    // One that reaches into it is refused, and so is everything after.
    let into = h_start - outer_start - 512;
    let mut data = vec![0x42u8; 1024];
    assert!(matches!(
        v.write_at(&mut data, into),
        Err(Error::HiddenVolumeProtected)
    ));
    assert!(v.is_read_only());
    let mut data = vec![0x42u8; 512];
    assert!(matches!(v.write_at(&mut data, 4096), Err(Error::ReadOnly)));
    drop(v);

    let h = open(&e, &path, hidden, Target::Hidden, &opts).expect("hidden still opens");
    let mut after = vec![0u8; h_size as usize];
    h.read_at(&mut after, 0).expect("read hidden");
    assert!(before == after, "the hidden volume is untouched");
    assert_eq!(fat_serial(&after[..512]), Some(CAFE_BABE));
    // The accepted write is there in the outer volume.
    let o = open(&e, &path, outer, Target::Outer, &opts).expect("outer opens");
    let mut s = vec![0u8; 512];
    o.read_at(&mut s, 4096).expect("read");
    assert!(s.iter().all(|&b| b == 0x42));
}

#[test]
fn a_keyfile_folder_stands_for_the_files_in_it() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = dir.path().join("keys");
    std::fs::create_dir(&folder).expect("mkdir");
    for k in ["keyfile1", "keyfile2"] {
        std::fs::copy(tcrypt_images().join(k), folder.join(k)).expect("copy keyfile");
    }
    // Hidden files and subfolders are not keyfiles.
    std::fs::write(folder.join(".hidden"), b"not a keyfile").expect("write");
    std::fs::create_dir(folder.join("sub")).expect("mkdir");
    std::fs::write(folder.join("sub/x"), b"not a keyfile").expect("write");

    let contents = read_keyfiles(std::slice::from_ref(&folder)).expect("read keyfiles");
    assert_eq!(contents.len(), 2);
    let kf: Vec<&[u8]> = contents.iter().map(|k| k.as_slice()).collect();
    let creds = Credentials {
        password: OUTER,
        keyfiles: &kf,
        pim: 0,
    };
    let opts = narrowed(Format::TrueCrypt, Prf::Sha512);
    let v = open(
        &e,
        &tcrypt_images().join("tck_5-sha512-xts-aes"),
        creds,
        Target::Any,
        &opts,
    )
    .expect("opens with the folder");
    assert_eq!(fat_serial(&first_sector(&v)), Some(DEAD_BABE));

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    assert!(matches!(
        read_keyfiles(&[empty]),
        Err(Error::Keyfile { .. })
    ));
    assert!(matches!(
        read_keyfiles(&[dir.path().join("missing")]),
        Err(Error::Keyfile { .. })
    ));
}

#[test]
fn a_cancelled_search_stops_promptly() {
    let e = engine(&["aesni", "soft"]);
    let path = tcrypt_images().join("vc_1-sha512-xts-aes");
    let cancel = AtomicBool::new(false);
    let creds = Credentials {
        password: b"not the password",
        keyfiles: &[],
        // Every VeraCrypt PRF, at few iterations.
        pim: 1,
    };
    let started = std::time::Instant::now();
    let result = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(300));
            cancel.store(true, Ordering::Relaxed);
        });
        let host = File::open(&path).expect("image");
        OpenVolume::open(
            &e,
            host,
            creds,
            Target::Any,
            &SearchOptions::new(),
            &cancel,
            true,
        )
    });
    let took = started.elapsed();
    assert!(
        matches!(result, Err(Error::Cancelled)),
        "{:?}",
        result.map(|v| v.info().clone())
    );
    // A full search of a wrong password takes minutes; cancelled, seconds.
    eprintln!("cancelled search returned after {took:?}");
}

#[test]
fn a_truecrypt_5_volume_changes_password_but_does_not_convert() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = copy_of("tc_3-sha512-xts-aes", dir.path());
    let host = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .expect("open copy");
    let opts = narrowed(Format::TrueCrypt, Prf::Sha512);
    let old = Credentials {
        password: OUTER,
        keyfiles: &[],
        pim: 0,
    };
    let new = Credentials {
        password: b"a new password",
        ..old
    };
    let no = AtomicBool::new(false);
    let convert = maintain::Rekey {
        creds: new,
        prf: None,
        format: Some(Format::VeraCrypt),
    };
    assert!(matches!(
        maintain::change_credentials(&e, &host, old, Target::Any, &convert, &opts, &no),
        Err(Error::InvalidArgument(_))
    ));
    let keep = maintain::Rekey {
        format: None,
        ..convert
    };
    maintain::change_credentials(&e, &host, old, Target::Any, &keep, &opts, &no).expect("change");
    let v = open(&e, &path, new, Target::Any, &opts).expect("new password opens");
    assert_eq!(v.info().header_version, 3);
    assert_eq!(fat_serial(&first_sector(&v)), Some(DEAD_BABE));
    assert!(open(&e, &path, old, Target::Any, &opts).is_err());
}

#[test]
fn a_search_reports_its_progress_at_each_change_and_a_few_times_a_second() {
    use std::sync::{Arc, Mutex};
    use tcd::volume::unlock::{Progress, ProgressSink, REPORT_EVERY};
    let e = engine(&["aesni", "soft"]);
    let reports: Arc<Mutex<Vec<(std::time::Instant, Progress)>>> = Arc::default();
    let mut o = SearchOptions::new();
    o.format = Some(Format::VeraCrypt);
    let seen = Arc::clone(&reports);
    o.progress = Some(ProgressSink(Arc::new(move |p| {
        seen.lock()
            .expect("reports")
            .push((std::time::Instant::now(), p))
    })));
    let creds = Credentials {
        password: b"not the password",
        keyfiles: &[],
        // Every VeraCrypt PRF, at few iterations.
        pim: 1,
    };
    let started = std::time::Instant::now();
    let r = open(
        &e,
        &tcrypt_images().join("tc_5-sha512-xts-aes"),
        creds,
        Target::Any,
        &o,
    );
    let took = started.elapsed();
    assert!(matches!(r, Err(Error::NotUnlocked { .. })));
    let reports = reports.lock().expect("reports").clone();
    let (first, last) = (reports[0].1, reports[reports.len() - 1].1);
    // The first says where it starts, with nothing done and no estimate.
    assert_eq!(
        (first.format, first.prf, first.backup),
        (Format::VeraCrypt, Prf::Sha512, false)
    );
    assert_eq!((first.done, first.left), (0.0, None));
    assert!(
        last.backup && last.left.is_some() && last.done > 0.0,
        "{last:?}"
    );
    // The backup headers only after every primary one; the share only grows.
    let turned = reports
        .iter()
        .position(|(_, p)| p.backup)
        .expect("backup reports");
    assert!(reports[turned..].iter().all(|(_, p)| p.backup));
    assert!(reports.windows(2).all(|w| w[0].1.done <= w[1].1.done));
    // A report comes at a change of PRF or headers, else REPORT_EVERY apart.
    let mut changes = 0;
    for w in reports.windows(2) {
        let ((t0, a), (t1, b)) = (w[0], w[1]);
        if (a.prf, a.backup) != (b.prf, b.backup) {
            changes += 1;
        } else {
            assert!(
                t1 - t0 >= REPORT_EVERY,
                "{a:?} then {b:?} {:?} apart",
                t1 - t0
            );
        }
    }
    let prfs = Prf::all(Format::VeraCrypt).len();
    assert!(changes < 2 * prfs, "{changes} changes");
    let timed = reports.len() - 1 - changes;
    assert!(
        timed as u128 <= took.as_millis() / REPORT_EVERY.as_millis() + 1,
        "{timed} reports in {took:?}"
    );
}
