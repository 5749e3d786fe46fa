use super::*;
use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
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
        let theirs = reference(&key);
        let mut enc = data.clone();
        let mut dec = data.clone();
        for (e, d) in enc.chunks_exact_mut(16).zip(dec.chunks_exact_mut(16)) {
            theirs.encrypt_block(e.try_into().unwrap());
            theirs.decrypt_block(d.try_into().unwrap());
        }
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
    for _ in 0..16 {
        let mut key = [0u8; 64];
        rng.fill_bytes(&mut key);
        let unit = 16 * rng.random_range(1..=64usize);
        let units = rng.random_range(1..=20usize);
        let first: u64 = rng.random();
        let mut data = vec![0u8; unit * units];
        rng.fill_bytes(&mut data);
        let k1: [u8; 32] = key[..32].try_into().unwrap();
        let k2: [u8; 32] = key[32..].try_into().unwrap();
        let ours = Xts::new(Kuznyechik::new(&k1), Kuznyechik::new(&k2));
        let mut a = data.clone();
        ours.encrypt(&mut a, first, unit);
        // Reference: XTS by hand over the reference crate, block by block.
        let (dk, tk) = (reference(&k1), reference(&k2));
        let mut b = data.clone();
        for (u, chunk) in b.chunks_exact_mut(unit).enumerate() {
            let mut t = u128::from(first.wrapping_add(u as u64))
                .to_le_bytes()
                .into();
            tk.encrypt_block(&mut t);
            let mut t = u128::from_le_bytes(t.into());
            for blk in chunk.chunks_exact_mut(16) {
                let x = u128::from_le_bytes(blk.try_into().unwrap()) ^ t;
                let mut x = x.to_le_bytes().into();
                dk.encrypt_block(&mut x);
                let x = u128::from_le_bytes(x.into()) ^ t;
                blk.copy_from_slice(&x.to_le_bytes());
                t = tcd_backend_kit::xts::mul_alpha(t);
            }
        }
        assert_eq!(a, b);
        ours.decrypt(&mut a, first, unit);
        assert_eq!(a, data);
    }
}
