//! Expand Volume in the volume library: the data stays, the volume opens
//! at its new size with the same master key, and an interruption after any
//! write (or inside a header write) leaves a volume that opens at its old
//! or its new size with its data, and a backup header at the host's end
//! from the first write on. Hidden volumes are refused.

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use tcd::Error;
use tcd::engine::Engine;
use tcd::volume::create::{self, CreateOptions};
use tcd::volume::expand::{self, Expansion, STEPS, Step};
use tcd::volume::kdf::{Format, Prf};
use tcd::volume::opened::OpenVolume;
use tcd::volume::unlock::{Credentials, SearchOptions, Target};
use tcd_tests::{engine, new_host, open_rw as rw};

const MIB: u64 = 1 << 20;

/// VeraCrypt's PIM 1 keeps PBKDF2 short.
fn fast(password: &[u8]) -> Credentials<'_> {
    Credentials {
        password,
        keyfiles: &[],
        pim: 1,
    }
}

fn search() -> SearchOptions {
    let mut o = SearchOptions::new();
    o.format = Some(Format::VeraCrypt);
    o.prf = Some(Prf::Sha512);
    o
}

fn open(e: &Engine, path: &Path, c: Credentials<'_>) -> Result<OpenVolume, Error> {
    open_with(e, path, c, &search())
}

fn open_with(
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

/// The data area's size by the backup header alone (`-m headerbak`).
fn backup_size(e: &Engine, path: &Path) -> u64 {
    let mut o = search();
    o.backup_only = true;
    open_with(e, path, fast(b"pw"), &o)
        .expect("the backup header at the host's end opens")
        .size()
}

fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i / 512) as u8 ^ (i as u8)).collect()
}

/// A 2 MiB volume holding a pattern over its whole data area.
fn volume(e: &Engine, path: &Path) -> Vec<u8> {
    let f = new_host(path, 2 * MIB);
    create::create(
        e,
        &f,
        fast(b"pw"),
        &CreateOptions::new(),
        &mut |_, _| {},
        &AtomicBool::new(false),
    )
    .expect("create");
    let v = open(e, path, fast(b"pw")).expect("opens");
    let mut data = pattern(v.size() as usize);
    v.write_at(&mut data, 0).expect("write");
    v.sync().expect("sync");
    pattern(v.size() as usize)
}

fn reads(e: &Engine, path: &Path) -> (u64, Vec<u8>) {
    let v = open(e, path, fast(b"pw")).expect("the volume opens");
    let mut buf = vec![0u8; v.size() as usize];
    v.read_at(&mut buf, 0).expect("read");
    (v.size(), buf)
}

#[test]
fn a_volume_grows_keeping_its_data_and_survives_a_crash_at_each_write() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let original = dir.path().join("original");
    let data = volume(&e, &original);
    let old = data.len() as u64;
    let no = AtomicBool::new(false);
    let to = Expansion {
        new_size: Some(5 * MIB),
        fill: true,
    };
    let new = 5 * MIB - 256 * 1024;
    // A crash after each step, and one tearing each header write.
    for (i, step) in STEPS.iter().enumerate() {
        for torn in [false, true] {
            if torn && !matches!(step, Step::Backup | Step::Primary) {
                continue;
            }
            let path = dir.path().join(format!("crash-{i}-{torn}"));
            std::fs::copy(&original, &path).expect("copy");
            let f = rw(&path);
            let plan = expand::plan(&e, &f, fast(b"pw"), &to, &search(), &no).expect("plan");
            assert_eq!((plan.old_data_size, plan.new_data_size), (old, new));
            let until = if torn {
                i.checked_sub(1).map(|j| STEPS[j])
            } else {
                Some(*step)
            };
            if let Some(until) = until {
                expand::apply(
                    &e,
                    &f,
                    fast(b"pw"),
                    &plan,
                    true,
                    &search(),
                    until,
                    &mut |_, _| {},
                    &no,
                )
                .expect("apply");
            }
            if torn {
                // Half a write: the container may have grown around it.
                let at = if *step == Step::Primary {
                    0
                } else {
                    f.set_len(5 * MIB).expect("grown");
                    5 * MIB - 131072
                };
                f.write_all_at(&[0x5a; 256], at).expect("torn write");
            }
            let (size, got) = reads(&e, &path);
            let finished = *step == Step::Primary && !torn;
            let torn_primary = *step == Step::Primary && torn;
            let want = if finished || torn_primary { new } else { old };
            assert_eq!(size, want, "after {step:?} (torn {torn})");
            assert!(
                got[..data.len()] == data[..],
                "after {step:?} (torn {torn}): data lost"
            );
            if size == new {
                assert!(
                    got[data.len()..].iter().all(|&b| b == 0),
                    "the new space reads as zeros"
                );
            }
            // From the backup header's write on, the host's end holds one.
            if !(torn && *step == Step::Backup) {
                assert_eq!(backup_size(&e, &path), new, "after {step:?} (torn {torn})");
            }
        }
    }
    // A finished expansion: both headers say the new size.
    let f = rw(&original);
    let plan = expand::plan(&e, &f, fast(b"pw"), &to, &search(), &no).expect("plan");
    let mut seen = 0;
    expand::apply(
        &e,
        &f,
        fast(b"pw"),
        &plan,
        true,
        &search(),
        Step::Primary,
        &mut |d, t| {
            assert!(d <= t);
            seen = d;
        },
        &no,
    )
    .expect("expand");
    assert_eq!(seen, new - old);
    assert_eq!(std::fs::metadata(&original).expect("stat").len(), 5 * MIB);
    f.write_all_at(&[0u8; 512], 0).expect("damage the primary");
    let (size, got) = reads(&e, &original);
    assert_eq!(size, new, "the backup header says the new size");
    assert!(got[..data.len()] == data[..]);
}

#[test]
fn a_smaller_size_and_a_hidden_volume_are_refused() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("v");
    volume(&e, &path);
    let no = AtomicBool::new(false);
    let f = rw(&path);
    let same = Expansion {
        new_size: Some(2 * MIB),
        fill: true,
    };
    let r = expand::plan(&e, &f, fast(b"pw"), &same, &search(), &no);
    assert!(
        matches!(&r, Err(Error::InvalidArgument(m)) if m.contains("holds 2097152 bytes already")),
        "{r:?}"
    );
    // A hidden volume inside a fresh (randomly filled) outer volume.
    let outer = dir.path().join("outer");
    let f = new_host(&outer, 2 * MIB);
    create::create(
        &e,
        &f,
        fast(b"pw"),
        &CreateOptions::new(),
        &mut |_, _| {},
        &no,
    )
    .expect("create");
    create::create_hidden(
        &e,
        &f,
        fast(b"pw"),
        fast(b"hidden"),
        512 * 1024,
        &CreateOptions::new(),
        &mut |_, _| {},
        &no,
    )
    .expect("create the hidden volume");
    let to = Expansion {
        new_size: Some(4 * MIB),
        fill: true,
    };
    let r = expand::plan(&e, &f, fast(b"hidden"), &to, &search(), &no);
    assert!(
        matches!(&r, Err(Error::InvalidArgument(m)) if m == "a hidden volume cannot be expanded: it lies inside its outer volume"),
        "{r:?}"
    );
    assert_eq!(std::fs::metadata(&outer).expect("stat").len(), 2 * MIB);
}
