//! Volumes this project makes: every cipher, PRF, sector size and format
//! round-trips; a container with a hidden volume shows no plaintext or
//! repeated sector; a credential change survives a crash at any point;
//! header backups restore. (Other implementations open them: see
//! `tcplay_interop.rs`.)

use std::collections::HashSet;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use tcd::Error;
use tcd::engine::{Chain, Engine, chain::CHAINS};
use tcd::volume::create::{self, CreateOptions, Fill};
use tcd::volume::header::Location;
use tcd::volume::kdf::{Format, Prf};
use tcd::volume::maintain::{self, Rekey};
use tcd::volume::opened::OpenVolume;
use tcd::volume::unlock::{Credentials, SearchOptions, Target};
use tcd_tests::creds;
use tcd_tests::{engine, new_host as host, open_rw as rw};

const MIB: u64 = 1 << 20;

/// VeraCrypt's PIM 1 keeps PBKDF2 short in tests that do not measure it.
fn fast(password: &[u8], format: Format) -> Credentials<'_> {
    Credentials {
        password,
        keyfiles: &[],
        pim: if format == Format::VeraCrypt { 1 } else { 0 },
    }
}

fn narrowed(format: Format, prf: Prf, chain: &'static Chain) -> SearchOptions {
    let mut o = SearchOptions::new();
    o.format = Some(format);
    o.prf = Some(prf);
    o.chain = Some(chain);
    o
}

fn make(
    e: &Engine,
    path: &Path,
    size: u64,
    c: Credentials<'_>,
    opts: &CreateOptions,
) -> create::Created {
    let f = host(path, size);
    create::create(e, &f, c, opts, &mut |_, _| {}, &AtomicBool::new(false))
        .unwrap_or_else(|err| panic!("create {}: {err}", opts.chain.name))
}

fn open_rw(
    e: &Engine,
    path: &Path,
    c: Credentials<'_>,
    o: &SearchOptions,
) -> Result<OpenVolume, Error> {
    OpenVolume::open(
        e,
        rw(path),
        c,
        Target::Any,
        o,
        &AtomicBool::new(false),
        false,
    )
}

/// Writes a pattern over the whole volume, reopens it and reads it back.
fn round_trip(e: &Engine, path: &Path, c: Credentials<'_>, o: &SearchOptions, seed: u8) {
    let v = open_rw(e, path, c, o).expect("the new volume opens");
    let size = v.size() as usize;
    let pattern: Vec<u8> = (0..size)
        .map(|i| (i / 512) as u8 ^ seed ^ (i as u8))
        .collect();
    let mut buf = pattern.clone();
    v.write_at(&mut buf, 0).expect("write");
    v.sync().expect("sync");
    drop(v);
    let v = open_rw(e, path, c, o).expect("reopens");
    let mut back = vec![0u8; size];
    v.read_at(&mut back, 0).expect("read");
    assert!(back == pattern, "data survives a reopen");
}

#[test]
fn every_chain_and_format_round_trips() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let mut n = 0;
    for chain in CHAINS {
        for format in [Format::VeraCrypt, Format::TrueCrypt] {
            if format == Format::TrueCrypt && !chain.truecrypt {
                continue;
            }
            let path = dir.path().join(format!("{}-{}", chain.name, format.name()));
            let opts = CreateOptions {
                format,
                chain,
                ..CreateOptions::new()
            };
            let c = fast(b"round trip", format);
            let made = make(&e, &path, MIB, c, &opts);
            assert_eq!(made.data_offset, 131072);
            assert_eq!(made.data_size, MIB - 262144);
            let o = narrowed(format, Prf::Sha512, chain);
            round_trip(&e, &path, c, &o, n as u8);
            let v = open_rw(&e, &path, c, &SearchOptions::new()).expect("full search opens it");
            let info = v.info();
            assert_eq!(
                (info.format, info.chain.name, info.prf),
                (format, chain.name, Prf::Sha512)
            );
            assert_eq!(info.header_version, 5);
            assert!(!info.weak_keys);
            n += 1;
        }
    }
    assert_eq!(
        n,
        CHAINS.len() + 8,
        "every chain in VeraCrypt, TrueCrypt's also in TrueCrypt"
    );
}

#[test]
fn every_prf_round_trips() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let aes = Chain::by_name("AES").expect("AES");
    for format in [Format::VeraCrypt, Format::TrueCrypt] {
        // SHA-1 opens TrueCrypt 4's volumes only; creating with it is
        // refused (real_volumes.rs).
        for &prf in Prf::all(format).iter().filter(|p| !p.legacy_only()) {
            let path = dir.path().join(format!("{}-{}", prf.name(), format.name()));
            let opts = CreateOptions {
                format,
                prf,
                ..CreateOptions::new()
            };
            let c = fast(b"every prf", format);
            make(&e, &path, MIB, c, &opts);
            let mut o = SearchOptions::new();
            o.format = Some(format);
            o.chain = Some(aes);
            let v = open_rw(&e, &path, c, &o).unwrap_or_else(|err| panic!("{}: {err}", prf.name()));
            assert_eq!(v.info().prf, prf);
        }
    }
}

#[test]
fn default_options_make_what_veracrypt_proposes() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("default");
    // The default PIM: 500,000 iterations of SHA-512.
    let c = creds(b"a default volume");
    make(&e, &path, MIB, c, &CreateOptions::new());
    let mut o = SearchOptions::new();
    o.prf = Some(Prf::Sha512);
    let v = open_rw(&e, &path, c, &o).expect("opens");
    let info = v.info();
    assert_eq!(info.format, Format::VeraCrypt);
    assert_eq!(info.chain.name, "AES");
    assert_eq!(info.sector_size, 512);
    // A PIM of 1 does not open a default-PIM volume.
    assert!(open_rw(&e, &path, fast(b"a default volume", Format::VeraCrypt), &o).is_err());
}

#[test]
fn sector_size_sets_the_presented_block_size() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    for sector in [512u32, 1024, 2048, 4096] {
        let path = dir.path().join(format!("s{sector}"));
        let opts = CreateOptions {
            sector_size: Some(sector),
            ..CreateOptions::new()
        };
        let c = fast(b"sectors", Format::VeraCrypt);
        let made = make(&e, &path, MIB + 1000, c, &opts);
        assert_eq!(made.data_size % u64::from(sector), 0);
        let o = narrowed(Format::VeraCrypt, Prf::Sha512, opts.chain);
        let v = open_rw(&e, &path, c, &o).expect("opens");
        assert_eq!(v.info().sector_size, sector);
        drop(v);
        round_trip(&e, &path, c, &o, sector as u8);
    }
    let bad = CreateOptions {
        sector_size: Some(3000),
        ..CreateOptions::new()
    };
    let f = host(&dir.path().join("bad"), MIB);
    assert!(matches!(
        create::create(
            &e,
            &f,
            creds(b"x"),
            &bad,
            &mut |_, _| {},
            &AtomicBool::new(false)
        ),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn bad_requests_are_refused_with_named_errors() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let no = AtomicBool::new(false);
    // TrueCrypt takes 64 bytes of password; tcplay would cut a longer one.
    let f = host(&dir.path().join("long"), MIB);
    let tc = CreateOptions {
        format: Format::TrueCrypt,
        ..CreateOptions::new()
    };
    let long = [b'x'; 65];
    assert!(matches!(
        create::create(&e, &f, creds(&long), &tc, &mut |_, _| {}, &no),
        Err(Error::PasswordTooLong {
            len: 65,
            max: 64,
            ..
        })
    ));
    // TrueCrypt has neither Argon2id nor Camellia.
    let argon = CreateOptions {
        prf: Prf::Argon2id,
        ..tc.clone()
    };
    assert!(matches!(
        create::create(&e, &f, creds(b"x"), &argon, &mut |_, _| {}, &no),
        Err(Error::PrfNotInFormat { .. })
    ));
    let camellia = CreateOptions {
        chain: Chain::by_name("Camellia").expect("chain"),
        ..tc.clone()
    };
    assert!(matches!(
        create::create(&e, &f, creds(b"x"), &camellia, &mut |_, _| {}, &no),
        Err(Error::InvalidArgument(_))
    ));
    // Too small for two header groups and a filesystem.
    let small = host(&dir.path().join("small"), 262144 + 4096);
    assert!(matches!(
        create::create(
            &e,
            &small,
            creds(b"x"),
            &CreateOptions::new(),
            &mut |_, _| {},
            &no
        ),
        Err(Error::VolumeTooSmall { .. })
    ));
    // Nothing was written to the refused host.
    let mut all = vec![1u8; MIB as usize];
    f.read_exact_at(&mut all, 0).expect("read");
    assert!(all.iter().all(|&b| b == 0));
}

#[test]
fn full_fill_reports_progress_and_leaves_no_plaintext() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("full");
    let f = host(&path, 3 * MIB);
    let mut seen = Vec::new();
    let c = fast(b"progress", Format::VeraCrypt);
    let made = create::create(
        &e,
        &f,
        c,
        &CreateOptions::new(),
        &mut |done, total| seen.push((done, total)),
        &AtomicBool::new(false),
    )
    .expect("create");
    assert!(!seen.is_empty());
    assert!(
        seen.windows(2).all(|w| w[0].0 < w[1].0),
        "progress only grows"
    );
    assert_eq!(seen.last().copied(), Some((made.data_size, made.data_size)));
    assert_distinct_random_sectors(&path);
}

/// Every 512-byte sector of the host is neither all zeros nor a repeat of
/// another: nothing tells headers, free space and data apart.
fn assert_distinct_random_sectors(path: &Path) {
    let bytes = std::fs::read(path).expect("read host");
    let mut seen = HashSet::new();
    for (i, s) in bytes.chunks(512).enumerate() {
        assert!(s.iter().any(|&b| b != 0), "sector {i} is all zeros");
        assert!(seen.insert(s.to_vec()), "sector {i} repeats an earlier one");
    }
}

#[test]
fn a_hidden_volume_hides_and_is_protected() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("outer");
    let no = AtomicBool::new(false);
    let outer = fast(b"outer password", Format::VeraCrypt);
    let hidden = fast(b"hidden password", Format::VeraCrypt);
    let opts = CreateOptions::new();
    let outer_made = make(&e, &path, 4 * MIB, outer, &opts);
    let hidden_opts = CreateOptions {
        chain: Chain::by_name("Serpent-Twofish-AES").expect("chain"),
        prf: Prf::Whirlpool,
        ..CreateOptions::new()
    };
    let h = create::create_hidden(
        &e,
        &rw(&path),
        outer,
        hidden,
        MIB,
        &hidden_opts,
        &mut |_, _| {},
        &no,
    )
    .expect("hidden volume");
    assert_eq!(h.data_size, MIB);
    let outer_end = outer_made.data_offset + outer_made.data_size;
    assert_eq!(
        h.data_offset + h.data_size,
        outer_end - create::HIDDEN_END_RESERVE
    );
    assert_distinct_random_sectors(&path);

    let o = SearchOptions::new();
    let hv = open_rw(&e, &path, hidden, &o).expect("hidden opens");
    assert!(hv.info().hidden);
    assert_eq!(hv.info().chain.name, "Serpent-Twofish-AES");
    assert_eq!(
        (hv.info().data_offset, hv.info().data_size),
        (h.data_offset, h.data_size)
    );
    drop(hv);
    round_trip(&e, &path, hidden, &o, 7);
    let ov = open_rw(&e, &path, outer, &o).expect("outer opens");
    assert!(!ov.info().hidden);
    assert_eq!(ov.info().data_size, outer_made.data_size);
    drop(ov);

    let protected = OpenVolume::open_protected(&e, rw(&path), outer, hidden, &o, &no, false)
        .expect("protected");
    let mut block = vec![9u8; 4096];
    protected
        .write_at(&mut block, 0)
        .expect("outside the hidden volume");
    let last = outer_made.data_size - 4096;
    assert!(matches!(
        protected.write_at(&mut block, last - h.data_size),
        Err(Error::HiddenVolumeProtected)
    ));

    // A backup of the headers is the same size with or without a hidden
    // volume, and restores the hidden header too.
    let backup = maintain::backup_headers(&e, &rw(&path), hidden, &o, &no).expect("backup");
    assert_eq!(backup.len(), maintain::BACKUP_FILE_BYTES);
    let f = rw(&path);
    f.write_all_at(&[0u8; 512], 65536)
        .expect("damage the hidden header");
    let mut primary_only = o.clone();
    primary_only.try_backup = false;
    assert!(open_rw(&e, &path, hidden, &primary_only).is_err());
    let restored =
        maintain::restore_from_file(&e, &f, &backup, hidden, &o, true, &no).expect("restore");
    assert_eq!(restored, Location::HiddenPrimary);
    assert!(
        open_rw(&e, &path, hidden, &primary_only)
            .expect("hidden restored")
            .info()
            .hidden
    );
}

#[test]
fn a_quick_formatted_outer_volume_refuses_a_hidden_one() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("quick");
    let outer = fast(b"outer", Format::VeraCrypt);
    let quick = CreateOptions {
        fill: Fill::Quick,
        ..CreateOptions::new()
    };
    make(&e, &path, 2 * MIB, outer, &quick);
    let before = std::fs::read(&path).expect("read");
    let r = create::create_hidden(
        &e,
        &rw(&path),
        outer,
        fast(b"hidden", Format::VeraCrypt),
        256 * 1024,
        &CreateOptions::new(),
        &mut |_, _| {},
        &AtomicBool::new(false),
    );
    assert!(matches!(r, Err(Error::OuterNotFilled { .. })), "{r:?}");
    assert!(
        std::fs::read(&path).expect("read") == before,
        "nothing written"
    );
    // A hidden volume larger than the outer one is refused too.
    let full = dir.path().join("full");
    make(&e, &full, 2 * MIB, outer, &CreateOptions::new());
    let r = create::create_hidden(
        &e,
        &rw(&full),
        outer,
        fast(b"hidden", Format::VeraCrypt),
        2 * MIB,
        &CreateOptions::new(),
        &mut |_, _| {},
        &AtomicBool::new(false),
    );
    assert!(matches!(r, Err(Error::HiddenDoesNotFit { .. })), "{r:?}");
}

/// A hidden volume's password must differ from its outer volume's; and a
/// container whose two headers open with one password (the hidden one's
/// changed to the outer's afterwards) opens as the outer volume, every
/// time, as TrueCrypt tries the volume's header before the hidden one's.
#[test]
fn one_password_for_both_volumes_is_refused_and_opens_the_outer_one() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let no = AtomicBool::new(false);
    let path = dir.path().join("both");
    let outer = fast(b"one password for both", Format::VeraCrypt);
    make(&e, &path, 2 * MIB, outer, &CreateOptions::new());
    let before = std::fs::read(&path).expect("read");
    let hide = |hidden| {
        let opts = CreateOptions::new();
        create::create_hidden(
            &e,
            &rw(&path),
            outer,
            hidden,
            MIB / 4,
            &opts,
            &mut |_, _| {},
            &no,
        )
    };
    let r = hide(outer);
    assert!(
        matches!(&r, Err(Error::InvalidArgument(m)) if m.contains("must differ from the outer")),
        "{r:?}"
    );
    assert!(
        std::fs::read(&path).expect("read") == before,
        "nothing written"
    );
    let hidden = fast(b"the hidden one's own", Format::VeraCrypt);
    hide(hidden).expect("hidden volume");
    let rekey = Rekey {
        creds: outer,
        prf: None,
        format: None,
    };
    let o = SearchOptions::new();
    maintain::change_credentials(&e, &rw(&path), hidden, Target::Hidden, &rekey, &o, &no)
        .expect("the hidden volume's password changed to the outer's");
    // Both headers' keys are derived side by side: the outer one wins
    // whichever finishes first.
    let both = narrowed(Format::VeraCrypt, Prf::Sha512, CreateOptions::new().chain);
    for round in 0..12 {
        let v = open_rw(&e, &path, outer, &both).expect("opens");
        assert!(!v.info().hidden, "round {round}: the hidden volume opened");
    }
    let v = OpenVolume::open(&e, rw(&path), outer, Target::Hidden, &both, &no, false);
    assert!(v.expect("its own header still opens").info().hidden);
}

#[test]
fn a_password_change_survives_a_crash_at_any_point() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let no = AtomicBool::new(false);
    let tc = CreateOptions {
        format: Format::TrueCrypt,
        prf: Prf::Ripemd160,
        ..CreateOptions::new()
    };
    let old = creds(b"old password");
    let new = creds(b"new password");
    let original = dir.path().join("original");
    make(&e, &original, MIB, old, &tc);
    // TrueCrypt's PRFs only: a wrong password then costs milliseconds, not
    // VeraCrypt's full minute.
    let mut o = SearchOptions::new();
    o.format = Some(Format::TrueCrypt);
    let rekey = Rekey {
        creds: new,
        prf: Some(Prf::Sha512),
        format: None,
    };
    let plan =
        maintain::plan_rekey(&e, &rw(&original), old, Target::Any, &rekey, &o, &no).expect("plan");
    assert_eq!(plan.len(), 2, "primary, then backup");
    assert_eq!(plan[0].offset, 0);
    assert!(plan[1].offset > plan[0].offset);

    // A crash before, inside and after each write.
    let mut states = Vec::new();
    for done in 0..=plan.len() {
        states.push((done, false));
        if done < plan.len() {
            states.push((done, true));
        }
    }
    for (done, torn) in states {
        let path = dir.path().join(format!("crash-{done}-{torn}"));
        std::fs::copy(&original, &path).expect("copy");
        let f = rw(&path);
        maintain::apply(&f, &plan[..done]).expect("apply");
        if torn {
            // Half of the next header reached the disk.
            let w = &plan[done];
            f.write_all_at(&w.bytes[..256], w.offset)
                .expect("torn write");
        }
        let opens_old = open_rw(&e, &path, old, &o).is_ok();
        let opens_new = open_rw(&e, &path, new, &o).is_ok();
        assert!(
            opens_old || opens_new,
            "crash after {done} writes (torn {torn}): nothing opens"
        );
        if done == plan.len() {
            assert!(
                opens_new && !opens_old,
                "the finished change opens only with the new password"
            );
        }
        if done == 0 {
            assert!(
                opens_old,
                "before the first write lands, the old password works"
            );
        }
    }

    // The change itself: data stays, the format stays TrueCrypt.
    round_trip(&e, &original, old, &o, 3);
    let v = open_rw(&e, &original, old, &o).expect("old");
    let mut before = vec![0u8; v.size() as usize];
    v.read_at(&mut before, 0).expect("read");
    drop(v);
    maintain::change_credentials(&e, &rw(&original), old, Target::Any, &rekey, &o, &no)
        .expect("change");
    let v = open_rw(&e, &original, new, &o).expect("new password opens");
    assert_eq!(v.info().format, Format::TrueCrypt);
    assert_eq!(v.info().prf, Prf::Sha512);
    let mut after = vec![0u8; v.size() as usize];
    v.read_at(&mut after, 0).expect("read");
    assert!(before == after, "the data is untouched");
    assert!(!v.info().used_backup_header);
    let mut backup_only = o.clone();
    backup_only.try_backup = true;
    // Both headers carry the new password: damage the primary and open again.
    rw(&original).write_all_at(&[0u8; 512], 0).expect("damage");
    let v = open_rw(&e, &original, new, &backup_only).expect("backup has the new password");
    assert!(v.info().used_backup_header);
}

#[test]
fn a_truecrypt_volume_converts_to_veracrypt_only_when_asked() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("tc");
    let no = AtomicBool::new(false);
    let tc = CreateOptions {
        format: Format::TrueCrypt,
        ..CreateOptions::new()
    };
    let c = creds(b"convert me");
    make(&e, &path, MIB, c, &tc);
    let to_vc = Rekey {
        creds: fast(b"convert me", Format::VeraCrypt),
        prf: None,
        format: Some(Format::VeraCrypt),
    };
    let o = SearchOptions::new();
    maintain::change_credentials(&e, &rw(&path), c, Target::Any, &to_vc, &o, &no).expect("convert");
    let v = open_rw(&e, &path, to_vc.creds, &o).expect("opens as VeraCrypt");
    assert_eq!(v.info().format, Format::VeraCrypt);
}

#[test]
fn header_backup_restores_a_wiped_volume_and_refuses_a_wrong_password() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("vol");
    let no = AtomicBool::new(false);
    let c = fast(b"back me up", Format::VeraCrypt);
    make(&e, &path, MIB, c, &CreateOptions::new());
    let o = SearchOptions::new();
    round_trip(&e, &path, c, &o, 1);
    let backup = maintain::backup_headers(&e, &rw(&path), c, &o, &no).expect("backup");
    assert_eq!(backup.len(), maintain::BACKUP_FILE_BYTES);

    // Both the primary and the embedded backup header are lost.
    let f = rw(&path);
    let size = f.metadata().expect("meta").len();
    let mut noise = vec![0u8; 512];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut noise);
    f.write_all_at(&noise, 0).expect("wipe");
    f.write_all_at(&noise, size - 131072).expect("wipe");
    assert!(open_rw(&e, &path, c, &o).is_err());

    let before = std::fs::read(&path).expect("read");
    let wrong = fast(b"not it", Format::VeraCrypt);
    assert!(matches!(
        maintain::restore_from_file(&e, &f, &backup, wrong, &o, true, &no),
        Err(Error::NotUnlocked { .. })
    ));
    assert!(matches!(
        maintain::restore_from_file(&e, &f, &backup[..1000], c, &o, true, &no),
        Err(Error::InvalidArgument(_))
    ));
    assert!(
        std::fs::read(&path).expect("read") == before,
        "refusals write nothing"
    );

    assert_eq!(
        maintain::restore_from_file(&e, &f, &backup, c, &o, true, &no).expect("restore"),
        Location::Primary
    );
    let mut primary_only = o.clone();
    primary_only.try_backup = false;
    open_rw(&e, &path, c, &primary_only).expect("primary restored");
    f.write_all_at(&noise, 0).expect("wipe again");
    let v = open_rw(&e, &path, c, &o).expect("the embedded backup was restored too");
    assert!(v.info().used_backup_header);
}
