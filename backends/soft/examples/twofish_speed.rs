//! Single-thread Twofish-256 throughput: this crate against the `twofish`
//! crate, on 1 MiB of blocks and through XTS with 512-byte units.
//!
//! `cargo run --release -p tcd-backend-soft --example twofish_speed`

use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use std::time::{Duration, Instant};
use tcd_backend_kit::{BlockCipher, Xts, XtsCipher};
use tcd_backend_soft::twofish::{Path, Twofish256};

/// The `twofish` crate as a BlockCipher, one block per call.
struct Reference(twofish::Twofish);

impl Reference {
    fn new(key: &[u8; 32]) -> Self {
        match twofish::Twofish::new_from_slice(key) {
            Ok(c) => Reference(c),
            Err(_) => unreachable!("32-byte keys are valid"),
        }
    }
}

impl BlockCipher for Reference {
    fn encrypt_blocks(&self, blocks: &mut [u8]) {
        let (blocks, _) = blocks.as_chunks_mut::<16>();
        for b in blocks {
            self.0.encrypt_block(b.into());
        }
    }
    fn decrypt_blocks(&self, blocks: &mut [u8]) {
        let (blocks, _) = blocks.as_chunks_mut::<16>();
        for b in blocks {
            self.0.decrypt_block(b.into());
        }
    }
}

const MIB: usize = 1 << 20;

/// Best MB/s (10^6 bytes per second) of `rounds` timed passes over `buf`.
fn best(buf: &mut [u8], rounds: usize, mut f: impl FnMut(&mut [u8])) -> f64 {
    f(buf); // warm up
    let mut best = Duration::MAX;
    for _ in 0..rounds {
        let t = Instant::now();
        f(buf);
        best = best.min(t.elapsed());
    }
    buf.len() as f64 / best.as_secs_f64() / 1e6
}

/// A row: name, block cipher, XTS over it, timed passes.
type Entry = (String, Box<dyn BlockCipher>, Box<dyn XtsCipher>, usize);

fn main() {
    let key: [u8; 32] = core::array::from_fn(|i| i as u8 * 7 + 1);
    let key2: [u8; 32] = core::array::from_fn(|i| i as u8 * 13 + 5);
    let mut buf: Vec<u8> = (0..MIB).map(|i| (i * 31 % 251) as u8).collect();

    let theirs = Reference::new(&key);
    let theirs_xts = Xts::new(Reference::new(&key), Reference::new(&key2));
    let mut ciphers: Vec<Entry> = Vec::new();
    for path in Path::ALL {
        let (Some(c), Some(k1), Some(k2)) = (
            Twofish256::with_path(&key, path),
            Twofish256::with_path(&key, path),
            Twofish256::with_path(&key2, path),
        ) else {
            println!("{:>14}: not available on this CPU", format!("tcd {path:?}"));
            continue;
        };
        ciphers.push((
            format!("tcd {path:?}"),
            Box::new(c),
            Box::new(Xts::new(k1, k2)),
            20,
        ));
    }
    ciphers.push((
        "twofish crate".into(),
        Box::new(theirs),
        Box::new(theirs_xts),
        3,
    ));

    println!("Twofish-256, 1 MiB buffer, single thread, best of several passes");
    for (name, c, x, rounds) in &ciphers {
        let rounds = *rounds;
        let e = best(&mut buf, rounds, |b| c.encrypt_blocks(b));
        let d = best(&mut buf, rounds, |b| c.decrypt_blocks(b));
        let xe = best(&mut buf, rounds, |b| x.encrypt(b, 0, 512));
        let xd = best(&mut buf, rounds, |b| x.decrypt(b, 0, 512));
        println!(
            "{name:>14}: blocks enc {e:7.1} dec {d:7.1} | XTS 512-byte units enc {xe:7.1} dec {xd:7.1} MB/s"
        );
    }
}
