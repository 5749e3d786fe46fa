use super::*;
use aes::cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use rand::{Rng, RngCore, SeedableRng};

const FIPS197: &str = include_str!("testdata/fips197_aes256.txt");
const SBOX_TABLE: &str = include_str!("testdata/fips197_sbox.txt");

const ALL_PATHS: [Path; 3] = Path::ALL;

/// Every path this CPU can run (the portable one always).
fn ciphers(key: &[u8; 32]) -> Vec<Aes256> {
    let found: Vec<Aes256> = ALL_PATHS
        .iter()
        .filter_map(|&p| Aes256::with_path(key, p))
        .collect();
    assert!(found.iter().any(|c| c.path() == Path::Portable));
    found
}

/// Values of `name = hex` lines, in order.
fn field(name: &str) -> Vec<Vec<u8>> {
    FIPS197
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| k.trim() == name)
        .map(|(_, v)| hex::decode(v.split_whitespace().collect::<String>()).unwrap())
        .collect()
}

fn sbox_table() -> Vec<u8> {
    let t: Vec<u8> = SBOX_TABLE
        .lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(|l| l.split_whitespace())
        .map(|h| u8::from_str_radix(h, 16).unwrap())
        .collect();
    assert_eq!(t.len(), 256);
    t
}

/// Runs a circuit on 32 bytes at once, as 32-bit planes.
fn circuit(f: fn([u32; 8]) -> [u32; 8], bytes: &[u8]) -> Vec<u8> {
    let mut planes = [0u32; 8];
    for (i, p) in planes.iter_mut().enumerate() {
        for (t, b) in bytes.iter().enumerate() {
            *p |= u32::from((b >> i) & 1) << t;
        }
    }
    let out = f(planes);
    (0..bytes.len())
        .map(|t| (0..8).map(|i| (((out[i] >> t) & 1) as u8) << i).sum())
        .collect()
}

#[test]
fn aes_sbox_circuit_matches_fips197_table() {
    let table = sbox_table();
    let all: Vec<u8> = (0..=255).collect();
    for chunk in all.chunks(32) {
        let out = circuit(sbox::sub_bytes, chunk);
        for (&x, y) in chunk.iter().zip(out) {
            assert_eq!(y ^ 0x63, table[x as usize], "S-box({x:#04x})");
        }
        let masked: Vec<u8> = chunk.iter().map(|&y| y ^ 0x63).collect();
        let inv = circuit(sbox::inv_sub_bytes, &masked);
        for (&y, x) in chunk.iter().zip(inv) {
            assert_eq!(table[x as usize], y, "inverse S-box({y:#04x})");
        }
    }
}

#[test]
fn aes_fips197_a3_key_expansion() {
    let key: [u8; 32] = field("expansion_key")[0].as_slice().try_into().unwrap();
    let expected: Vec<u8> = field("w").concat();
    assert_eq!(expected.len(), 240);
    assert_eq!(expand_key(&key).concat(), expected);
}

#[test]
fn aes_fips197_c3_both_directions_on_every_path() {
    let key: [u8; 32] = field("key")[0].as_slice().try_into().unwrap();
    let pt = &field("plaintext")[0];
    let ct = &field("ciphertext")[0];
    for c in ciphers(&key) {
        let mut b = pt.clone();
        c.encrypt_blocks(&mut b);
        assert_eq!(&b, ct, "{:?}", c.path());
        c.decrypt_blocks(&mut b);
        assert_eq!(&b, pt, "{:?}", c.path());
        // The same block in every position of a batch and of a tail.
        let mut many = pt.repeat(45);
        c.encrypt_blocks(&mut many);
        assert_eq!(many, ct.repeat(45), "{:?}", c.path());
        c.decrypt_blocks(&mut many);
        assert_eq!(many, pt.repeat(45), "{:?}", c.path());
    }
}

#[test]
fn aes_default_path_is_the_widest_available() {
    let c = Aes256::new(&[7; 32]);
    let widest = ALL_PATHS.iter().find(|p| p.available()).copied();
    assert_eq!(Some(c.path()), widest);
}

#[test]
fn aes_matches_aes_crate_for_random_keys_and_lengths() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x05ee_dae5);
    for round in 0..48 {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        let blocks = rng.random_range(1..=600usize);
        let mut data = vec![0u8; blocks * 16];
        rng.fill_bytes(&mut data);

        let reference = aes::Aes256::new(&key.into());
        let mut expected = data.clone();
        for b in expected.chunks_exact_mut(16) {
            reference.encrypt_block(b.try_into().unwrap());
        }
        // Decryption of random data, checked separately from the round trip.
        let mut expected_dec = data.clone();
        for b in expected_dec.chunks_exact_mut(16) {
            reference.decrypt_block(b.try_into().unwrap());
        }

        for c in ciphers(&key) {
            let mut enc = data.clone();
            c.encrypt_blocks(&mut enc);
            assert_eq!(enc, expected, "encrypt, {:?}, round {round}", c.path());
            let mut dec = data.clone();
            c.decrypt_blocks(&mut dec);
            assert_eq!(dec, expected_dec, "decrypt, {:?}, round {round}", c.path());
        }
    }
}

#[test]
fn aes_round_trip_every_path() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    for _ in 0..16 {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        let mut data = vec![0u8; 16 * rng.random_range(1..=300usize)];
        rng.fill_bytes(&mut data);
        for c in ciphers(&key) {
            let mut x = data.clone();
            c.encrypt_blocks(&mut x);
            assert_ne!(x, data);
            c.decrypt_blocks(&mut x);
            assert_eq!(x, data, "{:?}", c.path());
        }
    }
}

#[test]
fn aes_empty_input_is_a_no_op() {
    for c in ciphers(&[1; 32]) {
        let mut nothing: [u8; 0] = [];
        c.encrypt_blocks(&mut nothing);
        c.decrypt_blocks(&mut nothing);
    }
}
