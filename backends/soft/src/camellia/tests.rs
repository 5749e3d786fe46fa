use super::*;
use crate::reference_tests::{blockwise, xts_by_hand, xts_cases};
use cipher::KeyInit;
use rand::{Rng, RngCore, SeedableRng};

fn unhex<const L: usize>(s: &str) -> [u8; L] {
    hex::decode(s).unwrap().try_into().unwrap()
}

fn reference(key: &[u8; 32]) -> camellia::Camellia256 {
    camellia::Camellia256::new_from_slice(key).unwrap()
}

fn every_path(key: &[u8; 32]) -> Vec<Camellia256> {
    let ours: Vec<_> = CamelliaPath::ALL
        .into_iter()
        .filter_map(|p| Camellia256::with_path(key, p))
        .collect();
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        assert_eq!(ours.len(), 2, "the AVX2 path runs on this CPU");
    }
    ours
}

#[test]
fn camellia_rfc3713_256_bit_vector_on_every_path() {
    let key = unhex::<32>("0123456789abcdeffedcba987654321000112233445566778899aabbccddeeff");
    let plain = unhex::<16>("0123456789abcdeffedcba9876543210");
    let cipher = unhex::<16>("9acc237dff16d76c20ef7c919e3a7509");
    for c in every_path(&key) {
        // Alone (a padded batch on the AVX2 path) and as one of 33 blocks.
        let mut one = plain;
        c.encrypt_blocks(&mut one);
        assert_eq!(one, cipher, "{:?}", c.path());
        c.decrypt_blocks(&mut one);
        assert_eq!(one, plain, "{:?}", c.path());
        let mut many = plain.repeat(33);
        c.encrypt_blocks(&mut many);
        assert_eq!(many, cipher.repeat(33), "{:?}", c.path());
    }
}

#[test]
fn camellia_sboxes_are_rotations_of_sbox1_and_permutations() {
    for s in 0..4 {
        let mut seen = [false; 256];
        for x in 0..=255u8 {
            seen[usize::from(sbox(s, x))] = true;
        }
        assert!(seen.iter().all(|&b| b), "S-box {} is a permutation", s + 1);
    }
    assert_eq!(SBOX1[0], 0x70);
    assert_eq!(sbox(1, 0), 0xe0);
    assert_eq!(sbox(2, 0), 0x38);
    assert_eq!(sbox(3, 1), SBOX1[2]);
}

#[test]
fn camellia_sboxes_as_affine_maps_around_inversion_match_the_tables() {
    for s in 0..4 {
        for x in 0..=255u8 {
            assert_eq!(
                affine::model(s, x),
                sbox(s, x),
                "S-box {} at {x:#04x}",
                s + 1
            );
        }
    }
}

#[test]
fn camellia_matches_reference_crate_for_random_keys_and_lengths() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xca3e_1117);
    // Every block count 1..=100 (every remainder of a 32-block batch), then
    // random ones; a fresh random key each time.
    let counts = (1..=100usize).chain((0..10).map(|_| rng.random_range(1..=1000usize)));
    let counts: Vec<usize> = counts.collect();
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
            let mut c = data.clone();
            ours.decrypt_blocks(&mut c);
            assert_eq!(c, dec, "decrypt, {n} blocks, {:?}", ours.path());
        }
    }
}

#[test]
fn camellia_xts_matches_block_by_block_xts_over_reference_crate() {
    use tcd_backend_kit::{Xts, XtsCipher};
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xca3e);
    for case in xts_cases(&mut rng) {
        let b = xts_by_hand(&reference(&case.k1), &reference(&case.k2), &case);
        for path in CamelliaPath::ALL {
            let (Some(c1), Some(c2)) = (
                Camellia256::with_path(&case.k1, path),
                Camellia256::with_path(&case.k2, path),
            ) else {
                continue;
            };
            let ours = Xts::new(c1, c2);
            let mut a = case.data.clone();
            ours.encrypt(&mut a, case.first, case.unit);
            assert_eq!(a, b, "{path:?}");
            ours.decrypt(&mut a, case.first, case.unit);
            assert_eq!(a, case.data, "{path:?}");
        }
    }
}
