//! Known answers (FIPS-197, IEEE 1619-2007), differential tests against the
//! `xts-mode` crate over `aes`, round trips and concurrent use, on every path
//! this processor supports.

use super::keys::Schedule;
use super::{AesXts, Path, cpu_supported};
use aes::Aes256;
use cipher::KeyInit;
use rand::{Rng, RngCore, SeedableRng};
use std::sync::Arc;
use tcd_backend_kit::XtsCipher;

const FIPS197: &str = include_str!("testdata/fips197_aes256.txt");
const IEEE1619: &str = include_str!("testdata/ieee1619_xts_aes256.txt");

/// `name = hex` records separated by blank lines; `#` starts a comment.
fn records(text: &str) -> Vec<Vec<(String, String)>> {
    let mut out = vec![Vec::new()];
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        if line.is_empty() {
            if out.last().is_some_and(|r| !r.is_empty()) {
                out.push(Vec::new());
            }
            continue;
        }
        let (name, value) = line.split_once('=').expect("name = value");
        out.last_mut()
            .unwrap()
            .push((name.trim().to_owned(), value.trim().to_owned()));
    }
    out.retain(|r| !r.is_empty());
    out
}

fn field(record: &[(String, String)], name: &str) -> Vec<u8> {
    let value = &record.iter().find(|(n, _)| n == name).expect(name).1;
    hex::decode(value).expect("hex")
}

/// Every path this processor runs, the plain AES-NI one included.
fn paths() -> Vec<Path> {
    assert!(cpu_supported(), "these tests need AES-NI");
    let paths: Vec<Path> = Path::ALL.into_iter().filter(|p| p.supported()).collect();
    assert!(paths.contains(&Path::AesNi));
    paths
}

fn context(key: &[u8; 64], path: Path) -> AesXts {
    let ctx = AesXts::with_path(key, path).expect("supported path");
    assert_eq!(ctx.path(), path);
    ctx
}

fn reference(key: &[u8; 64], data: &mut [u8], first_unit: u64, unit_size: usize, encrypt: bool) {
    let xts = xts_mode::Xts128::new(
        Aes256::new_from_slice(&key[..32]).unwrap(),
        Aes256::new_from_slice(&key[32..]).unwrap(),
    );
    if encrypt {
        xts.encrypt_area(
            data,
            unit_size,
            first_unit.into(),
            xts_mode::get_tweak_default,
        );
    } else {
        xts.decrypt_area(
            data,
            unit_size,
            first_unit.into(),
            xts_mode::get_tweak_default,
        );
    }
}

#[test]
fn fips197_aes256_known_answer() {
    assert!(cpu_supported());
    let r = &records(FIPS197)[0];
    let key: [u8; 32] = field(r, "key").try_into().unwrap();
    let pt: [u8; 16] = field(r, "plaintext").try_into().unwrap();
    let ct: [u8; 16] = field(r, "ciphertext").try_into().unwrap();
    // SAFETY: the processor has AES-NI and SSE2 (asserted above).
    let schedule = unsafe { Schedule::new(&key) };
    let mut block = pt;
    // SAFETY: as above.
    unsafe { schedule.encrypt_block(&mut block) };
    assert_eq!(block, ct);
    // SAFETY: as above.
    unsafe { schedule.decrypt_block(&mut block) };
    assert_eq!(block, pt);
}

#[test]
fn ieee1619_xts_aes256_vectors_10_to_14() {
    let vectors = records(IEEE1619);
    assert_eq!(vectors.len(), 5);
    for path in paths() {
        for v in &vectors {
            let name = &v[0].1;
            let mut key = [0u8; 64];
            key[..32].copy_from_slice(&field(v, "key1"));
            key[32..].copy_from_slice(&field(v, "key2"));
            let unit =
                u64::from_str_radix(&v.iter().find(|(n, _)| n == "unit").unwrap().1, 16).unwrap();
            let pt = field(v, "pt");
            let ct = field(v, "ct");
            assert_eq!((pt.len(), ct.len()), (512, 512));
            let ctx = context(&key, path);

            let mut buf = pt.clone();
            ctx.encrypt(&mut buf, unit, 512);
            assert_eq!(buf, ct, "vector {name} encrypt, {path:?}");
            ctx.decrypt(&mut buf, unit, 512);
            assert_eq!(buf, pt, "vector {name} decrypt, {path:?}");

            // The same unit in every position of a tweak batch.
            for before in 0..20usize {
                let mut long = vec![0u8; 512 * (before + 3)];
                long[512 * before..512 * (before + 1)].copy_from_slice(&pt);
                let first = unit - before as u64;
                ctx.encrypt(&mut long, first, 512);
                assert_eq!(
                    &long[512 * before..512 * (before + 1)],
                    &ct[..],
                    "{name} at {before}"
                );
                ctx.decrypt(&mut long, first, 512);
                assert_eq!(&long[512 * before..512 * (before + 1)], &pt[..]);
            }
        }
    }
}

fn differential(path: Path, seed: u64, runs: usize, max_unit_blocks: usize) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for run in 0..runs {
        let mut key = [0u8; 64];
        rng.fill_bytes(&mut key);
        let unit_size = 16 * rng.random_range(1..=max_unit_blocks);
        let units = rng.random_range(1..=40usize);
        let first: u64 = match run % 4 {
            0 => u64::MAX - (units as u64 - 1),
            1 => u64::MAX - 64 - rng.random_range(0..64u64),
            2 => rng.random_range(0..1000),
            _ => rng.random::<u64>() >> rng.random_range(0..64),
        };
        let first = first.min(u64::MAX - (units as u64 - 1));
        let mut data = vec![0u8; unit_size * units];
        rng.fill_bytes(&mut data);
        let ctx = context(&key, path);

        let mut ours = data.clone();
        ctx.encrypt(&mut ours, first, unit_size);
        let mut theirs = data.clone();
        reference(&key, &mut theirs, first, unit_size, true);
        assert!(
            ours == theirs,
            "{path:?} encrypt: unit size {unit_size}, {units} units from {first}"
        );

        // Decrypt independently of our encryption too.
        let mut back = theirs.clone();
        ctx.decrypt(&mut back, first, unit_size);
        assert!(
            back == data,
            "{path:?} decrypt: unit size {unit_size}, {units} units from {first}"
        );
        let mut theirs_back = ours;
        reference(&key, &mut theirs_back, first, unit_size, false);
        assert!(theirs_back == data);
    }
}

#[test]
fn matches_xts_mode_aesni_path() {
    differential(Path::AesNi, 1, 200, 512);
}

#[test]
fn matches_xts_mode_vaes256_path() {
    if Path::Vaes256.supported() {
        differential(Path::Vaes256, 2, 200, 512);
    }
}

#[test]
fn matches_xts_mode_vaes512_path() {
    if Path::Vaes512.supported() {
        differential(Path::Vaes512, 3, 200, 512);
    }
}

#[test]
fn matches_xts_mode_for_every_small_unit_size() {
    // Unit sizes 16..=4096 one by one: every tail length of every path.
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    let mut key = [0u8; 64];
    rng.fill_bytes(&mut key);
    for path in paths() {
        let ctx = context(&key, path);
        for blocks in 1..=256usize {
            let unit_size = 16 * blocks;
            let units = 1 + blocks % 19;
            let first = if blocks % 3 == 0 {
                u64::MAX - units as u64 + 1
            } else {
                rng.random()
            };
            let first = first.min(u64::MAX - units as u64 + 1);
            let mut data = vec![0u8; unit_size * units];
            rng.fill_bytes(&mut data);
            let mut ours = data.clone();
            ctx.encrypt(&mut ours, first, unit_size);
            let mut theirs = data.clone();
            reference(&key, &mut theirs, first, unit_size, true);
            assert!(
                ours == theirs,
                "{path:?}: unit size {unit_size}, {units} units from {first}"
            );
            ctx.decrypt(&mut ours, first, unit_size);
            assert!(ours == data, "{path:?}: unit size {unit_size} round trip");
        }
    }
}

#[test]
fn matches_xts_mode_for_large_units() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for path in paths() {
        for unit_size in [4096 + 16, 8192, 16 * 1021, 65536] {
            let mut key = [0u8; 64];
            rng.fill_bytes(&mut key);
            let ctx = context(&key, path);
            let units = 3;
            let first = rng.random::<u32>().into();
            let mut data = vec![0u8; unit_size * units];
            rng.fill_bytes(&mut data);
            let mut ours = data.clone();
            ctx.encrypt(&mut ours, first, unit_size);
            let mut theirs = data.clone();
            reference(&key, &mut theirs, first, unit_size, true);
            assert!(ours == theirs, "{path:?}: unit size {unit_size}");
            ctx.decrypt(&mut ours, first, unit_size);
            assert!(ours == data);
        }
    }
}

#[test]
fn all_paths_agree_and_round_trip() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(6);
    let paths = paths();
    for _ in 0..50 {
        let mut key = [0u8; 64];
        rng.fill_bytes(&mut key);
        let unit_size = 16 * rng.random_range(1..=64usize);
        let units = rng.random_range(1..=100usize);
        let first: u64 = rng.random::<u64>() % (u64::MAX - units as u64);
        let mut data = vec![0u8; unit_size * units];
        rng.fill_bytes(&mut data);
        let mut expect: Option<Vec<u8>> = None;
        for &path in &paths {
            let ctx = context(&key, path);
            let mut buf = data.clone();
            ctx.encrypt(&mut buf, first, unit_size);
            assert_ne!(buf, data);
            if let Some(e) = &expect {
                assert!(*e == buf, "{path:?} disagrees");
            }
            expect = Some(buf.clone());
            ctx.decrypt(&mut buf, first, unit_size);
            assert!(buf == data, "{path:?} round trip");
        }
    }
    // Empty input is a no-op.
    let ctx = AesXts::new(&[7u8; 64]);
    ctx.encrypt(&mut [], 0, 512);
    ctx.decrypt(&mut [], 0, 512);
}

#[test]
fn two_threads_share_one_context() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(8);
    for path in paths() {
        let mut key = [0u8; 64];
        rng.fill_bytes(&mut key);
        let ctx = Arc::new(context(&key, path));
        let mut jobs = Vec::new();
        for t in 0..2u64 {
            let mut data = vec![0u8; 512 * 64];
            rng.fill_bytes(&mut data);
            let mut expect = data.clone();
            reference(&key, &mut expect, 1000 * t, 512, true);
            jobs.push((t, data, expect));
        }
        std::thread::scope(|s| {
            for (t, data, expect) in &jobs {
                let ctx = Arc::clone(&ctx);
                s.spawn(move || {
                    for _ in 0..200 {
                        let mut buf = data.clone();
                        ctx.encrypt(&mut buf, 1000 * t, 512);
                        assert!(buf == *expect, "{path:?} thread {t}");
                        ctx.decrypt(&mut buf, 1000 * t, 512);
                        assert!(buf == *data, "{path:?} thread {t} round trip");
                    }
                });
            }
        });
    }
}

#[test]
fn context_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<AesXts>();
}
