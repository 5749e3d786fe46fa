use super::*;
use crate::reference_tests::{blockwise, xts_by_hand, xts_cases};
use cipher::{BlockCipherEncrypt, KeyInit};
use rand::{Rng, RngCore, SeedableRng};

const VECTORS: &str = include_str!("testdata/gost_r_34_12_2015.txt");

fn unhex<const L: usize>(s: &str) -> [u8; L] {
    hex::decode(s).unwrap().try_into().unwrap()
}

fn lines<'a>(tag: &'a str) -> impl Iterator<Item = Vec<&'a str>> + 'a {
    VECTORS
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(move |f| f.first() == Some(&tag))
}

fn reference(key: &[u8; 32]) -> ::kuznyechik::Kuznyechik {
    ::kuznyechik::Kuznyechik::new_from_slice(key).unwrap()
}

fn every_path(key: &[u8; 32]) -> Vec<Kuznyechik> {
    let ours: Vec<_> = Path::ALL
        .into_iter()
        .filter_map(|p| Kuznyechik::with_path(key, p))
        .collect();
    #[cfg(target_arch = "x86_64")]
    assert_eq!(ours.len(), 2, "x86-64 runs the SSE2 and portable paths");
    ours
}

#[test]
fn kuznyechik_transforms_match_the_standards_examples() {
    let mut n = 0;
    for f in lines("S") {
        let x: [u8; 16] = unhex(f[1]);
        assert_eq!(x.map(|b| PI[usize::from(b)]), unhex::<16>(f[2]));
        n += 1;
    }
    for f in lines("R") {
        let mut x: [u8; 16] = unhex(f[1]);
        r_step(&mut x);
        assert_eq!(x, unhex::<16>(f[2]));
        r_inv_step(&mut x);
        assert_eq!(x, unhex::<16>(f[1]));
        n += 1;
    }
    for f in lines("L") {
        let x: [u8; 16] = unhex(f[1]);
        assert_eq!(l_map(x), unhex::<16>(f[2]));
        assert_eq!(l_inv_map(unhex(f[2])), x);
        n += 1;
    }
    assert_eq!(n, 6);
}

#[test]
fn kuznyechik_round_keys_match_the_standard() {
    let key: [u8; 32] = unhex(lines("KEY").next().unwrap()[1]);
    let k = expand(&key);
    let mut n = 0;
    for f in lines("K") {
        let i: usize = f[1].parse().unwrap();
        assert_eq!(k[i - 1], unhex::<16>(f[2]), "K{i}");
        n += 1;
    }
    assert_eq!(n, 10);
}

#[test]
fn kuznyechik_known_answer_on_every_path() {
    let key: [u8; 32] = unhex(lines("KEY").next().unwrap()[1]);
    let f = lines("ENC").next().unwrap();
    let (pt, ct): ([u8; 16], [u8; 16]) = (unhex(f[1]), unhex(f[2]));
    for c in every_path(&key) {
        // Alone, and in a run long enough for the interleaved groups.
        for n in [1, LANES + 1] {
            let mut b: Vec<u8> = pt.repeat(n);
            c.encrypt_blocks(&mut b);
            assert_eq!(b, ct.repeat(n), "{:?}, {n} blocks", c.path());
            c.decrypt_blocks(&mut b);
            assert_eq!(b, pt.repeat(n), "{:?}, {n} blocks", c.path());
        }
    }
    // The reference crate agrees with the standard.
    let mut r = pt.into();
    reference(&key).encrypt_block(&mut r);
    assert_eq!(r[..], ct[..]);
}

#[test]
fn kuznyechik_matches_reference_crate_for_random_keys_and_lengths() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x6057_3412);
    // Every block count 1..=40 (all remainders of the grouping), then
    // random ones; a fresh random key each time.
    let counts: Vec<usize> = (1..=40usize)
        .chain((0..20).map(|_| rng.random_range(1..=700usize)))
        .collect();
    for n in counts {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        let mut data = vec![0u8; 16 * n];
        rng.fill_bytes(&mut data);
        let (enc, dec) = blockwise(&reference(&key), &data);
        for ours in every_path(&key) {
            let mut a = data.clone();
            ours.encrypt_blocks(&mut a);
            assert_eq!(a, enc, "encrypt, {n} blocks, {:?}", ours.path());
            let mut b = data.clone();
            ours.decrypt_blocks(&mut b);
            assert_eq!(b, dec, "decrypt, {n} blocks, {:?}", ours.path());
        }
    }
}

#[test]
fn kuznyechik_runs_sse2_on_x86_64_at_every_simd_cap() {
    // No path is wider than the baseline, so no `TCD_SIMD` value changes it.
    #[cfg(target_arch = "x86_64")]
    assert_eq!(Path::best(), Path::Sse2);
    assert_eq!(Path::Sse2.level(), Level::Sse2);
}

#[test]
fn kuznyechik_xts_matches_block_by_block_xts_over_reference_crate() {
    use tcd_backend_kit::{Xts, XtsCipher};
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x3412);
    for case in xts_cases(&mut rng) {
        let ours = Xts::new(Kuznyechik::new(&case.k1), Kuznyechik::new(&case.k2));
        let mut a = case.data.clone();
        ours.encrypt(&mut a, case.first, case.unit);
        let b = xts_by_hand(&reference(&case.k1), &reference(&case.k2), &case);
        assert_eq!(a, b);
        ours.decrypt(&mut a, case.first, case.unit);
        assert_eq!(a, case.data);
    }
}
