//! Fuzzing the header parser and the open path with hostile input: random
//! bytes, mutations of a valid header, and well-formed headers (right magic
//! and CRCs) whose fields are random, sealed under a known password so the
//! open path has to deal with them. Nothing may panic; every refusal is a
//! named error. `TCD_FUZZ_ROUNDS` scales the run (default 1: about two
//! seconds; CI runs the default, a longer soak is `TCD_FUZZ_ROUNDS=100`).

use rand::{Rng, RngCore, SeedableRng, rngs::StdRng};
use std::io::Write;
use std::sync::atomic::AtomicBool;
use tcd::Error;
use tcd::engine::{Chain, Engine};
use tcd::volume::header::{ENCRYPTED_BYTES, Header, MASTER_KEY_BYTES};
use tcd::volume::kdf::{Format, Prf};
use tcd::volume::opened::OpenVolume;
use tcd::volume::unlock::{Credentials, SearchOptions, Target};
use tcd_tests::engine;
use zeroize::Zeroizing;

fn rounds() -> u64 {
    std::env::var("TCD_FUZZ_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

fn valid(rng: &mut StdRng, version: u16) -> Header {
    let mut keys = Zeroizing::new([0u8; MASTER_KEY_BYTES]);
    rng.fill_bytes(&mut keys[..]);
    Header {
        format: Format::TrueCrypt,
        version,
        min_program_version: 0x0700,
        hidden_volume_size: 0,
        volume_size: 1 << 20,
        data_offset: 131072,
        data_size: 1 << 20,
        flags: 0,
        sector_size: 512,
        master_keys: keys,
    }
}

#[test]
fn the_parser_survives_random_and_mutated_headers() {
    let mut rng = StdRng::seed_from_u64(0xf022);
    let mut accepted_random = 0;
    for _ in 0..200_000 * rounds() {
        let mut plain = [0u8; ENCRYPTED_BYTES];
        rng.fill_bytes(&mut plain);
        if rng.random_bool(0.5) {
            plain[..4].copy_from_slice(b"TRUE");
        }
        if Header::parse(&plain, Format::TrueCrypt).is_ok() {
            accepted_random += 1;
        }
    }
    // Two CRC-32s stand between random bytes and a header.
    assert_eq!(accepted_random, 0);

    for _ in 0..100_000 * rounds() {
        let h = valid(&mut rng, 5);
        let original = h.serialize();
        let mut plain = *original;
        // One to four random bytes changed anywhere.
        for _ in 0..rng.random_range(1..=4) {
            let i = rng.random_range(0..ENCRYPTED_BYTES);
            plain[i] = rng.random();
        }
        let parsed = Header::parse(&plain, Format::TrueCrypt);
        if plain != *original {
            assert!(parsed.is_err(), "a changed version-5 header was accepted");
        } else {
            assert!(parsed.is_ok());
        }
    }
}

/// A TrueCrypt SHA-512 AES volume image whose header fields are `h`.
fn sealed_image(e: &Engine, h: &Header, password: &[u8], size: usize, rng: &mut StdRng) -> Vec<u8> {
    let mut image = vec![0u8; size];
    rng.fill_bytes(&mut image);
    let mut key = [0u8; 192];
    pbkdf2::pbkdf2_hmac::<sha2::Sha512>(password, &image[..64], 1000, &mut key);
    let mut body = h.serialize();
    e.volume_cipher_units(Chain::by_name("AES").expect("AES"), &key, None, 448)
        .expect("header cipher")
        .encrypt(&mut body[..], 0)
        .expect("encrypt");
    image[64..512].copy_from_slice(&body[..]);
    image
}

#[test]
fn opening_survives_well_formed_headers_with_hostile_fields() {
    let e = engine(&["aesni", "soft"]);
    let mut rng = StdRng::seed_from_u64(0x0be7);
    let mut opts = SearchOptions::new();
    opts.format = Some(Format::TrueCrypt);
    opts.prf = Some(Prf::Sha512);
    opts.chain = Chain::by_name("AES");
    let creds = Credentials {
        password: b"fuzz",
        keyfiles: &[],
        pim: 0,
    };
    let (mut opened, mut refused) = (0, 0);
    for round in 0..150 * rounds() {
        let version = rng.random_range(3..=5);
        let mut h = valid(&mut rng, version);
        let size = 512 * rng.random_range(1..=1024usize);
        let pick = |rng: &mut StdRng| -> u64 {
            match rng.random_range(0..5) {
                0 => 0,
                1 => u64::MAX - rng.random_range(0..1024),
                2 => rng.random_range(0..size as u64 * 2),
                3 => 512 * rng.random_range(0..size as u64 / 256),
                _ => rng.random(),
            }
        };
        h.data_offset = pick(&mut rng);
        h.data_size = pick(&mut rng);
        h.volume_size = pick(&mut rng);
        h.hidden_volume_size = pick(&mut rng);
        h.sector_size = [512, 1024, 4096, 0, 3, 8192, u32::MAX][rng.random_range(0..7)];
        h.flags = rng.random();
        let image = sealed_image(&e, &h, b"fuzz", size.max(512), &mut rng);
        let mut file = tempfile::tempfile().expect("temp file");
        file.write_all(&image).expect("write image");
        match OpenVolume::open(
            &e,
            file,
            creds,
            Target::Any,
            &opts,
            &AtomicBool::new(false),
            true,
        ) {
            Ok(v) => {
                // Whatever it accepted, reading its whole extent stays in
                // the file.
                let info = v.info().clone();
                assert!(info.data_offset >= 512, "round {round}: {info:?}");
                assert!(info.data_offset + info.data_size <= image.len() as u64);
                let mut buf = vec![0u8; info.data_size.min(64 * 1024) as usize / 512 * 512];
                v.read_at(&mut buf, 0).expect("read inside the volume");
                let mut one = [0u8; 512];
                assert!(
                    v.read_at(&mut one, info.data_size).is_err(),
                    "read past the end"
                );
                opened += 1;
            }
            Err(Error::NotUnlocked { .. } | Error::InvalidArgument(_) | Error::NotAVolume(_)) => {
                refused += 1
            }
            Err(other) => panic!("round {round}: unexpected error {other}"),
        }
    }
    assert!(
        opened > 0 && refused > 0,
        "opened {opened}, refused {refused}"
    );
}
