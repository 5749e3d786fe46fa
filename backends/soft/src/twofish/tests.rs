use super::*;
use crate::reference_tests::{xts_by_hand, xts_cases};
use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use rand::{Rng, RngCore, SeedableRng};

const KAT: &str = include_str!("testdata/twofish256_kat.txt");

fn unhex<const L: usize>(s: &str) -> [u8; L] {
    hex::decode(s).unwrap().try_into().unwrap()
}

fn lines<'a>(tag: &'a str) -> impl Iterator<Item = Vec<&'a str>> + 'a {
    KAT.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(move |f| f.first() == Some(&tag))
}

fn reference(key: &[u8; 32]) -> twofish::Twofish {
    twofish::Twofish::new_from_slice(key).unwrap()
}

#[test]
fn twofish_q_permutations_match_the_paper() {
    // First entries of q0 and q1 as printed in the paper's tables.
    assert_eq!(Q[0][..4], [0xA9, 0x67, 0xB3, 0xE8]);
    assert_eq!(Q[1][..4], [0x75, 0xF3, 0xC6, 0xF4]);
    for q in &Q {
        let mut seen = [false; 256];
        for &v in q.iter() {
            seen[usize::from(v)] = true;
        }
        assert!(seen.iter().all(|&s| s), "q is a permutation");
    }
}

#[test]
fn twofish_g_reads_rotated_registers() {
    // g_rot on a word held rotated by 0, 8, 16 or 24 bits is g of the word,
    // with the register rotated by 16 more.
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x6_2071);
    let mut key = [0u8; 32];
    rng.fill_bytes(&mut key);
    let c = Twofish256::new_portable(&key);
    let s = &c.ks.s;
    for _ in 0..1000 {
        let v: u32 = rng.random();
        let [b0, b1, b2, b3] = v.to_le_bytes().map(usize::from);
        let g = s[0][b0] ^ s[1][b1] ^ s[2][b2] ^ s[3][b3];
        for off in 0..4 {
            let x = v.rotate_left(8 * off as u32);
            assert_eq!(g_rot(s, x, off), (g, x.rotate_left(16)), "off {off}");
        }
    }
}

#[test]
fn twofish_known_answers() {
    let mut n = 0;
    for f in lines("KAT") {
        let key: [u8; 32] = unhex(f[1]);
        let pt: [u8; 16] = unhex(f[2]);
        let ct: [u8; 16] = unhex(f[3]);
        let c = Twofish256::new(&key);
        let mut b = pt;
        c.encrypt_blocks(&mut b);
        assert_eq!(b, ct, "key {}", f[1]);
        c.decrypt_blocks(&mut b);
        assert_eq!(b, pt);
        // The reference crate agrees with the published values.
        let mut r = pt.into();
        reference(&key).encrypt_block(&mut r);
        assert_eq!(r[..], ct[..]);
        n += 1;
    }
    assert_eq!(n, 5);
}

#[test]
fn twofish_iterated_49_steps() {
    let expected: Vec<(usize, [u8; 16])> = lines("ITER")
        .map(|f| (f[1].parse().unwrap(), unhex(f[2])))
        .collect();
    assert_eq!(expected.len(), 7);
    let mut key = [0u8; 32];
    let mut pt = [0u8; 16];
    let mut checked = 0;
    for step in 1..=49 {
        let c = Twofish256::new(&key);
        let mut ct = pt;
        c.encrypt_blocks(&mut ct);
        let mut back = ct;
        c.decrypt_blocks(&mut back);
        assert_eq!(back, pt);
        for (s, want) in &expected {
            if *s == step {
                assert_eq!(&ct, want, "step {step}");
                checked += 1;
            }
        }
        let old_key_head: [u8; 16] = key[..16].try_into().unwrap();
        key[..16].copy_from_slice(&pt);
        key[16..].copy_from_slice(&old_key_head);
        pt = ct;
    }
    assert_eq!(checked, expected.len());
}

#[test]
fn twofish_matches_reference_crate_for_random_keys_and_lengths() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x7f15_2560);
    // Every block count 1..=300 (all remainders of every grouping), then
    // random ones; a fresh random key each time.
    let counts = (1..=300usize).chain((0..20).map(|_| rng.random_range(1..=2000usize)));
    let counts: Vec<usize> = counts.collect();
    for n in counts {
        let mut key = [0u8; 32];
        rng.fill_bytes(&mut key);
        let mut data = vec![0u8; 16 * n];
        rng.fill_bytes(&mut data);

        let paths = Path::ALL.into_iter();
        for ours in paths.filter_map(|p| Twofish256::with_path(&key, p)) {
            let theirs = reference(&key);
            let mut a = data.clone();
            ours.encrypt_blocks(&mut a);
            let mut b = data.clone();
            for blk in b.chunks_exact_mut(16) {
                theirs.encrypt_block(blk.try_into().unwrap());
            }
            assert_eq!(a, b, "encrypt, {n} blocks, {:?}", ours.path());

            let mut c = data.clone();
            ours.decrypt_blocks(&mut c);
            let mut d = data.clone();
            for blk in d.chunks_exact_mut(16) {
                theirs.decrypt_block(blk.try_into().unwrap());
            }
            assert_eq!(c, d, "decrypt, {n} blocks");

            ours.decrypt_blocks(&mut a);
            assert_eq!(a, data, "round trip, {n} blocks");
        }
    }
}

#[test]
fn twofish_xts_matches_block_by_block_xts_over_reference_crate() {
    use tcd_backend_kit::{Xts, XtsCipher};
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x7f15);
    for case in xts_cases(&mut rng) {
        let ours = Xts::new(Twofish256::new(&case.k1), Twofish256::new(&case.k2));
        let mut a = case.data.clone();
        ours.encrypt(&mut a, case.first, case.unit);
        let b = xts_by_hand(&reference(&case.k1), &reference(&case.k2), &case);
        assert_eq!(a, b);
        ours.decrypt(&mut a, case.first, case.unit);
        assert_eq!(a, case.data);
    }
}
