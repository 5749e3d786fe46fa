//! The loader refuses what is not a trustworthy tcd backend of this ABI
//! version, with an error naming the file, and never crashes on it. A
//! backend written in C against the shipped header loads and works.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use tcd::Error;
use tcd::engine::{self, XtsKey, loader};
use tcd::error::BackendProblem;
use tcd_tests::{backend_lib, build_c_backend};

fn problem_of(r: Result<engine::LoadedBackend, Error>) -> (PathBuf, BackendProblem) {
    match r {
        Err(Error::Backend { path, problem }) => (path, problem),
        Err(Error::BackendDir { path, problem }) => (path, problem),
        Err(other) => panic!("unexpected error {other}"),
        Ok(b) => panic!("loaded {:?} where a refusal was expected", b.info),
    }
}

fn tempdir() -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("tcd-loader-")
        .tempdir()
        .expect("temp dir");
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    d
}

#[test]
fn a_c_backend_built_against_the_header_loads_and_runs() {
    let dir = tempdir();
    let lib = build_c_backend(dir.path(), "libtcd_backend_ctest.so", &[]);
    let b = std::sync::Arc::new(loader::load(&lib).expect("C backend loads"));
    assert_eq!(b.info.name, "c-test");
    assert!(b.info.available);
    assert!(!b.info.uses_cpu_crypto);
    assert_eq!(b.info.ciphers.len(), 1);
    assert_eq!(b.info.ciphers[0].name, "Test-XOR");
    assert_eq!(b.info.ciphers[0].key_bytes, 32);

    let key: Vec<u8> = (0..64u8).collect();
    let k = XtsKey::new(&b, "Test-XOR", &key).expect("context");
    let mut data = vec![0u8; 1024];
    k.encrypt(&mut data, 7, 512).expect("encrypt");
    let expected: Vec<u8> = (0..1024)
        .map(|i| key[i % 64] ^ (7 + (i / 512) as u8))
        .collect();
    assert_eq!(data, expected);
    k.decrypt(&mut data, 7, 512).expect("decrypt");
    assert!(data.iter().all(|&b| b == 0));
    // Arguments the contract forbids come back as errors, not crashes.
    assert!(matches!(
        k.encrypt(&mut data[..100], 0, 512),
        Err(Error::BackendCall { status: 1, .. })
    ));
    assert!(matches!(
        XtsKey::new(&b, "Test-XOR", &key[..10]),
        Err(Error::KeyLength { .. })
    ));
    assert!(matches!(
        XtsKey::new(&b, "AES", &key),
        Err(Error::NoSuchCipher { .. })
    ));
}

#[test]
fn broken_c_backends_are_refused_by_name() {
    let dir = tempdir();
    type Check = fn(&BackendProblem) -> bool;
    let cases: &[(&str, Check)] = &[
        ("WRONG_ABI", |p| {
            matches!(
                p,
                BackendProblem::AbiVersion {
                    found: 3,
                    expected: 2
                }
            )
        }),
        ("NO_ENTRY", |p| matches!(p, BackendProblem::NoEntry)),
        ("NULL_DESC", |p| matches!(p, BackendProblem::NullDescriptor)),
        (
            "BAD_BLOCK",
            |p| matches!(p, BackendProblem::Malformed(m) if m.contains("block")),
        ),
        (
            "MISSING_FN",
            |p| matches!(p, BackendProblem::Malformed(m) if m.contains("xts_free")),
        ),
        (
            "HALF_BLOCKS",
            |p| matches!(p, BackendProblem::Malformed(m) if m.contains("block_free")),
        ),
    ];
    for (define, check) in cases {
        let lib = build_c_backend(
            dir.path(),
            &format!("libtcd_backend_{define}.so"),
            &[define],
        );
        let (path, problem) = problem_of(loader::load(&lib));
        assert_eq!(path, lib, "{define}: the error names the file");
        assert!(check(&problem), "{define}: got {problem}");
        let msg = Error::Backend { path, problem }.to_string();
        assert!(
            msg.contains(&format!("libtcd_backend_{define}.so")),
            "{msg}"
        );
    }
}

#[test]
fn a_version_1_backend_loads_offers_no_raw_blocks_and_still_opens_and_creates_volumes() {
    use std::sync::atomic::AtomicBool;
    use tcd::volume::create::{self, CreateOptions, Fill};
    use tcd::volume::opened::OpenVolume;
    use tcd::volume::unlock::{SearchOptions, Target};
    let dir = tempdir();
    // Its one cipher is called Serpent (and is not Serpent): enough to
    // make and open a volume on this backend alone.
    let lib = build_c_backend(
        dir.path(),
        "libtcd_backend_v1.so",
        &["ABI_V1", "AS_SERPENT"],
    );
    let b = loader::load(&lib).expect("a version-1 backend loads");
    assert_eq!(b.info.abi_version, 1);
    assert!(!b.info.has_blocks, "version 1 has no block functions");
    let b = std::sync::Arc::new(b);
    assert!(matches!(
        engine::BlockKey::new(&b, "Serpent", &[0u8; 32]),
        Err(Error::NoSuchCipher { .. })
    ));
    let e = engine::Engine::with_shared(vec![b], 2).expect("engine");

    let path = dir.path().join("volume");
    let f = std::fs::File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .expect("volume file");
    f.set_len(1 << 20).expect("size");
    let mut opts = CreateOptions::new();
    opts.chain = engine::Chain::by_name("Serpent").expect("chain");
    opts.fill = Fill::Quick;
    let pw = tcd_tests::creds(b"a v1 password");
    let no = AtomicBool::new(false);
    create::create(&e, &f, pw, &opts, &mut |_, _| {}, &no).expect("created on v1");
    let mut search = SearchOptions::new();
    search.prf = Some(opts.prf);
    let v = OpenVolume::open(&e, f, pw, Target::Outer, &search, &no, true).expect("opens");
    assert_eq!(v.info().chain.name, "Serpent");
    assert_eq!(v.backends(), ["c-test"]);

    // A TrueCrypt 4 volume needs raw blocks: a version-1 backend has none.
    let legacy = tcd_tests::tcrypt_images().join("tc_2-ripemd160-lrw-serpent");
    let host = std::fs::File::open(legacy).expect("image");
    let mut search = SearchOptions::new();
    search.prf = Some(tcd::volume::kdf::Prf::Ripemd160);
    let err = OpenVolume::open(
        &e,
        host,
        tcd_tests::creds(b"aaaaaaaaaaaa"),
        Target::Outer,
        &search,
        &no,
        true,
    )
    .expect_err("no backend for the legacy modes");
    assert!(
        err.to_string()
            .contains("no allowed backend serves raw block ciphers"),
        "{err}"
    );
}

#[test]
fn an_unavailable_backend_loads_but_is_never_called() {
    let dir = tempdir();
    let lib = build_c_backend(dir.path(), "libtcd_backend_unavail.so", &["UNAVAILABLE"]);
    let b = std::sync::Arc::new(loader::load(&lib).expect("loads"));
    assert!(!b.info.available);
    let key = [0u8; 64];
    assert!(matches!(
        XtsKey::new(&b, "Test-XOR", &key),
        Err(Error::BackendUnavailable { .. })
    ));
}

#[test]
fn files_that_are_not_backends_are_refused() {
    let dir = tempdir();
    // Truncated copies of a real backend: the linker would map segments the
    // file does not hold and fault; the loader must refuse first.
    let real = std::fs::read(backend_lib("soft")).expect("read soft backend");
    for cut in [16, 100, 4096, 64 * 1024] {
        let truncated = dir.path().join(format!("libtcd_backend_truncated{cut}.so"));
        std::fs::write(&truncated, &real[..cut]).expect("write");
        let (_, p) = problem_of(loader::load(&truncated));
        assert!(
            matches!(p, BackendProblem::NotALibrary(_)),
            "truncated at {cut}: {p}"
        );
    }
    // Text.
    let text = dir.path().join("libtcd_backend_text.so");
    std::fs::write(&text, b"this is not an ELF file\n").expect("write");
    let (_, p) = problem_of(loader::load(&text));
    assert!(matches!(p, BackendProblem::NotALibrary(_)), "text: {p}");
    // A real shared library that is no backend.
    let zlib = [
        "/lib/x86_64-linux-gnu/libz.so.1",
        "/usr/lib/x86_64-linux-gnu/libz.so.1",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists())
    .expect("zlib is on every Debian");
    // (Its name is a symbolic link, which the loader refuses: use the file.)
    let zlib = Path::new(zlib).canonicalize().expect("resolve zlib");
    let (_, p) = problem_of(loader::load(&zlib));
    assert!(matches!(p, BackendProblem::NoEntry), "zlib: {p}");
    // A folder.
    let (_, p) = problem_of(loader::load(dir.path()));
    assert!(matches!(p, BackendProblem::NotAFile), "folder: {p}");
}

#[test]
fn untrusted_files_and_folders_are_refused() {
    let dir = tempdir();
    let lib = build_c_backend(dir.path(), "libtcd_backend_ok.so", &[]);

    std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    let (_, p) = problem_of(loader::load(&lib));
    assert_eq!(p, BackendProblem::Writable(0o666));
    std::fs::set_permissions(&lib, std::fs::Permissions::from_mode(0o755)).expect("chmod");

    std::os::unix::fs::chown(&lib, Some(65534), None).expect("chown (the tests run as root)");
    let (_, p) = problem_of(loader::load(&lib));
    assert_eq!(p, BackendProblem::NotRootOwned(65534));
    std::os::unix::fs::chown(&lib, Some(0), None).expect("chown back");

    let link = dir.path().join("libtcd_backend_link.so");
    std::os::unix::fs::symlink(&lib, &link).expect("symlink");
    let (_, p) = problem_of(loader::load(&link));
    assert!(matches!(p, BackendProblem::Open(_)), "symlink: {p}");
    std::fs::remove_file(&link).expect("rm link");

    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
        .expect("chmod dir");
    let (path, p) = problem_of(loader::load(&lib));
    assert_eq!(path, dir.path().canonicalize().expect("canon"));
    assert!(
        matches!(p, BackendProblem::Writable(_)),
        "world-writable folder: {p}"
    );
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
        .expect("chmod dir");
    loader::load(&lib).expect("loads once trusted again");
}

#[test]
fn a_folder_with_broken_backends_loads_the_good_ones() {
    let dir = tempdir();
    build_c_backend(dir.path(), "libtcd_backend_good.so", &[]);
    build_c_backend(dir.path(), "libtcd_backend_wrongabi.so", &["WRONG_ABI"]);
    std::fs::write(dir.path().join("libtcd_backend_junk.so"), b"junk").expect("write");
    std::fs::write(dir.path().join("README"), b"not a backend name, ignored").expect("write");
    let (good, bad) = engine::load_dir(dir.path()).expect("folder is trusted");
    assert_eq!(
        good.iter()
            .map(|b| b.info.name.as_str())
            .collect::<Vec<_>>(),
        ["c-test"]
    );
    assert_eq!(bad.len(), 2, "{bad:?}");
}

#[test]
fn each_load_gets_the_library_asked_for() {
    // Loading one backend, using it on the engine's threads, dropping it and
    // loading another reuses the descriptor number the first was loaded
    // through; the dynamic linker keeps a library resident while threads
    // hold its thread-local destructors, and must still not hand it back.
    let chain = engine::Chain::by_name("AES").expect("chain");
    for round in 0..8 {
        for name in ["aesni", "soft"] {
            let b = loader::load(&backend_lib(name)).expect("backend loads");
            assert_eq!(b.info.name, name, "round {round}");
            let want = if name == "soft" { 8 } else { 1 };
            assert_eq!(b.info.ciphers.len(), want, "{name} round {round}");
            let e = engine::Engine::new(vec![b], 2).expect("engine");
            let vc = e.volume_cipher(chain, &[9u8; 64], None).expect("cipher");
            let mut data = vec![0u8; 1 << 20];
            vc.encrypt(&mut data, 0).expect("encrypt");
        }
    }
}
