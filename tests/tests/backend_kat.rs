//! Known answers through the loaded C ABI: the IEEE 1619-2007 XTS-AES-256
//! vectors (Annex B, 10 to 14) on every backend that serves AES. (Twofish
//! and Serpent known answers through the ABI come from real TrueCrypt
//! volumes, in `real_volumes.rs`.)

use std::sync::Arc;
use tcd::engine::{BlockKey, XtsKey, loader};
use tcd_tests::backend_lib;

struct Vector {
    name: String,
    key: Vec<u8>,
    unit: u64,
    pt: Vec<u8>,
    ct: Vec<u8>,
}

fn vectors() -> Vec<Vector> {
    let text = include_str!("../../backends/aesni/src/xts/testdata/ieee1619_xts_aes256.txt");
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let field = |k: &str| {
            block
                .lines()
                .find_map(|l| {
                    l.strip_prefix(k)
                        .and_then(|r| r.trim_start().strip_prefix('='))
                })
                .map(|v| v.trim().to_owned())
        };
        let Some(name) = field("vector") else {
            continue;
        };
        let key = [
            hex::decode(field("key1").expect("key1")).expect("hex"),
            hex::decode(field("key2").expect("key2")).expect("hex"),
        ]
        .concat();
        out.push(Vector {
            name,
            key,
            unit: u64::from_str_radix(&field("unit").expect("unit"), 16).expect("unit hex"),
            pt: hex::decode(field("pt").expect("pt")).expect("hex"),
            ct: hex::decode(field("ct").expect("ct")).expect("hex"),
        });
    }
    out
}

#[test]
fn ieee1619_vectors_on_every_aes_backend() {
    let vs = vectors();
    assert_eq!(vs.len(), 5, "vectors 10 to 14");
    for backend in ["aesni", "soft"] {
        let b = Arc::new(loader::load(&backend_lib(backend)).expect("loads"));
        for v in &vs {
            assert_eq!(v.pt.len(), 512);
            let k = XtsKey::new(&b, "AES", &v.key).expect("context");
            let mut data = v.pt.clone();
            k.encrypt(&mut data, v.unit, 512).expect("encrypt");
            assert_eq!(
                hex::encode(&data),
                hex::encode(&v.ct),
                "{backend}: vector {}",
                v.name
            );
            k.decrypt(&mut data, v.unit, 512).expect("decrypt");
            assert_eq!(data, v.pt, "{backend}: vector {} decrypts", v.name);
            // The same unit inside a longer run, at its place.
            let mut run = vec![0u8; 512 * 3];
            run[512..1024].copy_from_slice(&v.pt);
            k.encrypt(&mut run, v.unit - 1, 512).expect("encrypt run");
            assert_eq!(
                &run[512..1024],
                &v.ct[..],
                "{backend}: vector {} in a run",
                v.name
            );
        }
    }
}

#[test]
fn ieee1619_vectors_on_every_forced_simd_level() {
    tcd_tests::rerun_under_each_simd_level(&["ieee1619_vectors_on_every_aes_backend"]);
}

/// TrueCrypt 4's 64-bit block ciphers through the ABI's block functions
/// (version 2) of the software backend: published answers, one block each,
/// then a run of blocks (ECB) decrypted back.
#[test]
fn legacy_block_ciphers_give_the_published_answers() {
    let text = include_str!("../../backends/soft/testdata/legacy_blocks.txt");
    let b = Arc::new(loader::load(&backend_lib("soft")).expect("loads"));
    assert!(b.info.has_blocks);
    let mut seen = std::collections::BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [cipher, key, pt, ct] = f[..] else {
            panic!("malformed: {line}");
        };
        let cipher = cipher.replace('_', " ");
        let k = BlockKey::new(&b, &cipher, &hex::decode(key).expect("hex")).expect("context");
        assert_eq!(k.block_bytes(), 8, "{cipher}");
        let mut data = hex::decode(pt).expect("hex");
        k.encrypt(&mut data).expect("encrypt");
        assert_eq!(hex::encode(&data), ct, "{cipher} key {key}");
        let mut run = [data.clone(), data.clone(), data].concat();
        k.decrypt(&mut run).expect("decrypt");
        assert_eq!(hex::encode(&run), pt.repeat(3), "{cipher}");
        // A length that is not whole blocks is refused, not read past.
        assert!(k.encrypt(&mut [0u8; 12]).is_err(), "{cipher}");
        *seen.entry(cipher).or_insert(0) += 1;
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        BlockKey::new(&b, "Blowfish", &[0u8; 16]).is_err(),
        "key length checked"
    );
}

/// The 16-byte ciphers' raw blocks are the same ciphers as their XTS:
/// FIPS-197's AES-256 answer through the block functions.
#[test]
fn aes_raw_blocks_give_the_fips_197_answer() {
    let b = Arc::new(loader::load(&backend_lib("soft")).expect("loads"));
    let key: Vec<u8> = (0..32u8).collect();
    let k = BlockKey::new(&b, "AES", &key).expect("context");
    let mut block = hex::decode("00112233445566778899aabbccddeeff").expect("hex");
    k.encrypt(&mut block).expect("encrypt");
    assert_eq!(hex::encode(&block), "8ea2b7ca516745bfeafc49904b496089");
    // The AES-NI backend fuses XTS with AES and offers no raw blocks.
    let aesni = loader::load(&backend_lib("aesni")).expect("loads");
    assert!(!aesni.info.has_blocks);
}
