//! Every backend, through the loaded C ABI, against the RustCrypto reference
//! crates (`xts-mode` over `aes`, `twofish`, `serpent`, `camellia`,
//! `kuznyechik`), over random keys,
//! data, unit numbers, unit sizes and lengths; the backends against each
//! other; and every cascade against composing the references by hand.

use cipher::KeyInit;
use rand::{Rng, RngCore, SeedableRng, rngs::StdRng};
use std::sync::Arc;
use tcd::Error;
use tcd::engine::{self, Chain, Engine, LoadedBackend, XtsKey, chain::CHAINS};
use tcd_tests::backend_lib;
use tcd_tests::engine_with_threads;
use xts_mode::{Xts128, get_tweak_default};

/// An engine over `order` with a worker per core, as the daemon runs.
fn engine(order: &[&str]) -> Engine {
    engine_with_threads(order, 0)
}

fn load(name: &str) -> Arc<LoadedBackend> {
    Arc::new(engine::loader::load(&backend_lib(name)).expect("backend loads"))
}

/// XTS with the reference crates, one block at a time.
fn reference(cipher: &str, key: &[u8], data: &mut [u8], first: u64, unit: usize, encrypt: bool) {
    fn run<
        C: cipher::BlockCipherEncrypt
            + cipher::BlockCipherDecrypt
            + cipher::BlockSizeUser<BlockSize = cipher::consts::U16>,
    >(
        xts: Xts128<C>,
        data: &mut [u8],
        first: u64,
        unit: usize,
        encrypt: bool,
    ) {
        if encrypt {
            xts.encrypt_area(data, unit, first.into(), get_tweak_default);
        } else {
            xts.decrypt_area(data, unit, first.into(), get_tweak_default);
        }
    }
    let (k1, k2) = key.split_at(32);
    match cipher {
        "AES" => run(
            Xts128::new(
                aes::Aes256::new_from_slice(k1).unwrap(),
                aes::Aes256::new_from_slice(k2).unwrap(),
            ),
            data,
            first,
            unit,
            encrypt,
        ),
        "Twofish" => run(
            Xts128::new(
                twofish::Twofish::new_from_slice(k1).unwrap(),
                twofish::Twofish::new_from_slice(k2).unwrap(),
            ),
            data,
            first,
            unit,
            encrypt,
        ),
        "Serpent" => run(
            Xts128::new(
                serpent::Serpent::new_from_slice(k1).unwrap(),
                serpent::Serpent::new_from_slice(k2).unwrap(),
            ),
            data,
            first,
            unit,
            encrypt,
        ),
        "Camellia" => run(
            Xts128::new(
                camellia::Camellia256::new_from_slice(k1).unwrap(),
                camellia::Camellia256::new_from_slice(k2).unwrap(),
            ),
            data,
            first,
            unit,
            encrypt,
        ),
        "Kuznyechik" => run(
            Xts128::new(
                kuznyechik::Kuznyechik::new_from_slice(k1).unwrap(),
                kuznyechik::Kuznyechik::new_from_slice(k2).unwrap(),
            ),
            data,
            first,
            unit,
            encrypt,
        ),
        other => panic!("no reference for {other}"),
    }
}

fn random_case(rng: &mut StdRng, max_bytes: usize) -> (Vec<u8>, u64, usize) {
    let unit = 16 * rng.random_range(1..=256usize);
    let units = rng.random_range(1..=(max_bytes / unit).max(1));
    let first = match rng.random_range(0..4) {
        0 => rng.random_range(0..1024),
        1 => u64::MAX - units as u64 + 1,
        2 => u64::from(u32::MAX) - 3,
        _ => rng.random(),
    };
    let mut data = vec![0u8; unit * units];
    rng.fill_bytes(&mut data);
    (data, first, unit)
}

#[test]
fn every_backend_cipher_matches_the_reference() {
    let mut rng = StdRng::seed_from_u64(0x7cd);
    for backend in ["aesni", "soft"] {
        let b = load(backend);
        assert!(b.info.available, "{backend} must be available on this CPU");
        // The XTS ciphers (the 64-bit legacy ones are raw blocks only,
        // checked in backend_kat.rs).
        for c in b.info.ciphers.iter().filter(|c| c.has_xts()) {
            // The reference Twofish crawls (2 MB/s): fewer bytes for it.
            let (cases, max) = if c.name == "Twofish" {
                (24, 16 * 1024)
            } else {
                (48, 64 * 1024)
            };
            for _ in 0..cases {
                let mut key = [0u8; 64];
                rng.fill_bytes(&mut key);
                let (plain, first, unit) = random_case(&mut rng, max);
                let k = XtsKey::new(&b, &c.name, &key).expect("context");
                let mut ours = plain.clone();
                k.encrypt(&mut ours, first, unit as u32).expect("encrypt");
                let mut theirs = plain.clone();
                reference(&c.name, &key, &mut theirs, first, unit, true);
                assert!(
                    ours == theirs,
                    "{backend} {}: unit {unit}, {} bytes, first {first}",
                    c.name,
                    plain.len()
                );
                k.decrypt(&mut ours, first, unit as u32).expect("decrypt");
                assert!(ours == plain, "{backend} {} round trip", c.name);
            }
        }
    }
}

#[test]
fn every_forced_simd_level_matches_the_reference() {
    // TCD_SIMD is read at key setup: each level in a child process of its
    // own, since the environment is process-wide.
    tcd_tests::rerun_under_each_simd_level(&[
        "every_backend_cipher_matches_the_reference",
        "aes_backends_agree_on_large_buffers",
        "cascades_match_the_references_composed_by_hand",
    ]);
}

#[test]
fn aes_backends_agree_on_large_buffers() {
    let ni = load("aesni");
    let soft = load("soft");
    let mut rng = StdRng::seed_from_u64(11);
    for unit in [512u32, 4096] {
        let mut key = [0u8; 64];
        rng.fill_bytes(&mut key);
        let mut plain = vec![0u8; 4 << 20];
        rng.fill_bytes(&mut plain);
        let first = rng.random_range(0..1u64 << 40);
        let a = XtsKey::new(&ni, "AES", &key).expect("aesni");
        let s = XtsKey::new(&soft, "AES", &key).expect("soft");
        let mut x = plain.clone();
        let mut y = plain.clone();
        a.encrypt(&mut x, first, unit).expect("aesni encrypt");
        s.encrypt(&mut y, first, unit).expect("soft encrypt");
        assert!(x == y, "aesni and soft differ at unit size {unit}");
        a.decrypt(&mut y, first, unit).expect("aesni decrypt");
        assert!(y == plain, "soft ciphertext decrypts with aesni");
    }
}

#[test]
fn cascades_match_the_references_composed_by_hand() {
    let mut rng = StdRng::seed_from_u64(42);
    for order in [&["aesni", "soft"][..], &["soft"][..]] {
        let e = engine(order);
        for chain in CHAINS {
            // Small requests run on the calling thread, large ones across the
            // pool: cover both.
            for len in [512usize, 16 * 1024, 320 * 1024] {
                let mut master = vec![0u8; chain.key_bytes()];
                rng.fill_bytes(&mut master);
                let mut plain = vec![0u8; len];
                rng.fill_bytes(&mut plain);
                let first = rng.random_range(0..1u64 << 50);
                let vc = e
                    .volume_cipher(chain, &master, None)
                    .expect("volume cipher");

                let mut expected = plain.clone();
                let mut key = [0u8; 64];
                for (i, cipher) in chain.ciphers.iter().enumerate() {
                    chain.layer_key(&master, i, &mut key);
                    reference(cipher, &key, &mut expected, first, 512, true);
                }
                let mut ours = plain.clone();
                vc.encrypt(&mut ours, first).expect("encrypt");
                assert!(
                    ours == expected,
                    "{} on {:?}, {len} bytes",
                    chain.name,
                    vc.backends()
                );
                vc.decrypt(&mut ours, first).expect("decrypt");
                assert!(ours == plain, "{} round trip", chain.name);
            }
        }
    }
}

#[test]
fn aes_goes_to_the_preferred_backend() {
    let e = engine(&["aesni", "soft"]);
    let chain = Chain::by_name("AES-Twofish-Serpent").expect("chain");
    let vc = e.volume_cipher(chain, &[7u8; 192], None).expect("cipher");
    // In the name's order: AES, the aesni layer, first.
    assert_eq!(vc.backends(), ["aesni", "soft", "soft"]);
    let vc = e
        .volume_cipher(chain, &[7u8; 192], Some("soft"))
        .expect("cipher");
    assert_eq!(vc.backends(), ["soft", "soft", "soft"]);
    assert!(matches!(
        e.volume_cipher(chain, &[7u8; 192], Some("aesni")),
        Err(Error::NoSuchCipher { .. })
    ));
    assert!(matches!(
        e.volume_cipher(chain, &[7u8; 100], None),
        Err(Error::KeyLength { .. })
    ));
}

#[test]
fn one_context_serves_many_threads_at_once() {
    let e = Arc::new(engine(&["aesni", "soft"]));
    for name in ["AES", "Serpent-Twofish-AES"] {
        let chain = Chain::by_name(name).expect("chain");
        let master = vec![3u8; chain.key_bytes()];
        let vc = Arc::new(e.volume_cipher(chain, &master, None).expect("cipher"));
        let mut plain = vec![0u8; 256 * 1024];
        StdRng::seed_from_u64(5).fill_bytes(&mut plain);
        let mut expected = plain.clone();
        vc.encrypt(&mut expected, 1000).expect("encrypt");
        std::thread::scope(|s| {
            for _ in 0..4 {
                let (vc, plain, expected) = (Arc::clone(&vc), plain.clone(), expected.clone());
                s.spawn(move || {
                    for _ in 0..8 {
                        let mut d = plain.clone();
                        vc.encrypt(&mut d, 1000).expect("encrypt");
                        assert!(d == expected);
                        vc.decrypt(&mut d, 1000).expect("decrypt");
                        assert!(d == plain);
                    }
                });
            }
        });
    }
}

#[test]
fn backends_refuse_arguments_outside_the_contract() {
    for backend in ["aesni", "soft"] {
        let b = load(backend);
        let k = XtsKey::new(&b, "AES", &[1u8; 64]).expect("context");
        let mut data = vec![0u8; 1024];
        for (len, first, unit) in [
            (1024usize, 0u64, 0u32),
            (1024, 0, 24),
            (1000, 0, 512),
            (1024, u64::MAX, 512),
        ] {
            let r = k.encrypt(&mut data[..len], first, unit);
            assert!(
                matches!(r, Err(Error::BackendCall { status: 1, .. })),
                "{backend}: len {len} first {first} unit {unit}: {r:?}"
            );
        }
        // Nothing was touched by the refused calls.
        assert!(data.iter().all(|&x| x == 0));
        // The last unit number itself is fine.
        k.encrypt(&mut data[..512], u64::MAX, 512)
            .expect("last unit");
        assert!(matches!(
            XtsKey::new(&b, "AES", &[1u8; 63]),
            Err(Error::KeyLength { .. })
        ));
    }
}
