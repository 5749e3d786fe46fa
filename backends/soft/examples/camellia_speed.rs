//! Single-thread Camellia-256 speed on 1 MiB, per path, next to the `serpent`
//! crate in the same run: raw blocks (ECB) and XTS with 512-byte units.
//!
//! cargo run --release -p tcd-backend-soft --example camellia_speed

use std::hint::black_box;
use std::time::{Duration, Instant};

use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use tcd_backend_kit::{BlockCipher, Xts, XtsCipher};
use tcd_backend_soft::camellia::{Camellia256, CamelliaPath};

const MIB: usize = 1 << 20;

/// The `camellia` crate as a BlockCipher, one block at a time.
struct Reference(camellia::Camellia256);

impl BlockCipher for Reference {
    fn encrypt_blocks(&self, blocks: &mut [u8]) {
        for b in blocks.as_chunks_mut::<16>().0 {
            self.0.encrypt_block(b.into());
        }
    }
    fn decrypt_blocks(&self, blocks: &mut [u8]) {
        for b in blocks.as_chunks_mut::<16>().0 {
            self.0.decrypt_block(b.into());
        }
    }
}

/// Best MB/s over several timed rounds of at least 150 ms each.
fn measure(buf: &mut [u8], mut f: impl FnMut(&mut [u8])) -> f64 {
    f(buf);
    let mut best = 0f64;
    for _ in 0..5 {
        let start = Instant::now();
        let mut bytes = 0usize;
        while start.elapsed() < Duration::from_millis(150) {
            f(black_box(&mut *buf));
            bytes += buf.len();
        }
        let mbs = bytes as f64 / start.elapsed().as_secs_f64() / 1e6;
        best = best.max(mbs);
    }
    best
}

fn report<C: BlockCipher>(name: &str, c1: C, c2: C, x1: C) {
    let mut buf = vec![0x5au8; MIB];
    let enc = measure(&mut buf, |b| c1.encrypt_blocks(b));
    let dec = measure(&mut buf, |b| c1.decrypt_blocks(b));
    let xts = Xts::new(c2, x1);
    let xenc = measure(&mut buf, |b| xts.encrypt(b, 1234, 512));
    let xdec = measure(&mut buf, |b| xts.decrypt(b, 1234, 512));
    println!(
        "{name:<16} blocks enc {enc:8.1}  dec {dec:8.1}   XTS/512 enc {xenc:8.1}  dec {xdec:8.1}  MB/s"
    );
}

fn main() {
    let k1 = [0x11u8; 32];
    let k2 = [0x22u8; 32];
    let reference = |k: &[u8; 32]| {
        Reference(camellia::Camellia256::new_from_slice(k).unwrap_or_else(|_| unreachable!()))
    };
    println!("default path: {:?}", Camellia256::new(&k1).path());
    report(
        "camellia crate",
        reference(&k1),
        reference(&k1),
        reference(&k2),
    );
    for path in CamelliaPath::ALL {
        let (Some(a), Some(b), Some(c)) = (
            Camellia256::with_path(&k1, path),
            Camellia256::with_path(&k1, path),
            Camellia256::with_path(&k2, path),
        ) else {
            println!("{:<16} not available on this CPU", format!("{path:?}"));
            continue;
        };
        report(&format!("{path:?}"), a, b, c);
    }
}
