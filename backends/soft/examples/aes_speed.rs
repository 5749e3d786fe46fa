//! Single-thread AES-256 throughput: the bitsliced cipher on each path this
//! CPU has, next to the `aes` crate (AES-NI when present) in the same run.
//!
//! cargo run --release -p tcd-backend-soft --example aes_speed [-- SECONDS]

use std::hint::black_box;
use std::time::{Duration, Instant};

use aes::cipher::{Array, BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};
use tcd_backend_kit::{BlockCipher, Xts, XtsCipher};
use tcd_backend_soft::aes::{Aes256, Path};

const MIB: usize = 1 << 20;

/// The `aes` crate as a BlockCipher, using its multi-block entry points.
struct Reference(aes::Aes256);
impl BlockCipher for Reference {
    fn encrypt_blocks(&self, blocks: &mut [u8]) {
        let (b, _) = blocks.as_chunks_mut::<16>();
        let b: &mut [Array<u8, _>] = Array::cast_slice_from_core_mut(b);
        self.0.encrypt_blocks(b);
    }
    fn decrypt_blocks(&self, blocks: &mut [u8]) {
        let (b, _) = blocks.as_chunks_mut::<16>();
        let b: &mut [Array<u8, _>] = Array::cast_slice_from_core_mut(b);
        self.0.decrypt_blocks(b);
    }
}

/// MB/s (10^6 bytes per second) of `f` over `buf`, best of several runs.
fn rate(secs: f64, buf: &mut [u8], mut f: impl FnMut(&mut [u8])) -> f64 {
    let mut best = f64::MAX;
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let mut runs = 0;
    while runs < 3 || Instant::now() < deadline {
        let t = Instant::now();
        f(black_box(&mut *buf));
        best = best.min(t.elapsed().as_secs_f64());
        runs += 1;
    }
    buf.len() as f64 / best / 1e6
}

fn row(name: &str, secs: f64, block: &dyn BlockCipher, xts: &dyn XtsCipher) {
    let mut buf = vec![0x5au8; MIB];
    let enc = rate(secs, &mut buf, |b| block.encrypt_blocks(b));
    let dec = rate(secs, &mut buf, |b| block.decrypt_blocks(b));
    let xenc = rate(secs, &mut buf, |b| xts.encrypt(b, 1000, 512));
    let xdec = rate(secs, &mut buf, |b| xts.decrypt(b, 1000, 512));
    println!("{name:<28} {enc:>9.1} {dec:>9.1} {xenc:>9.1} {xdec:>9.1}");
}

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let (k1, k2) = ([0x11u8; 32], [0x22u8; 32]);
    println!("single thread, 1 MiB buffers, XTS with 512-byte units; MB/s");
    println!(
        "{:<28} {:>9} {:>9} {:>9} {:>9}",
        "cipher", "encrypt", "decrypt", "xts-enc", "xts-dec"
    );
    for path in Path::ALL {
        let (Some(a), Some(b), Some(c)) = (
            Aes256::with_path(&k1, path),
            Aes256::with_path(&k1, path),
            Aes256::with_path(&k2, path),
        ) else {
            println!(
                "{:<28} (not available on this CPU)",
                format!("bitsliced {path:?}")
            );
            continue;
        };
        row(&format!("bitsliced {path:?}"), secs, &a, &Xts::new(b, c));
    }
    let r = || Reference(aes::Aes256::new(&k1.into()));
    let xr = Xts::new(r(), Reference(aes::Aes256::new(&k2.into())));
    row("aes crate (AES-NI if any)", secs, &r(), &xr);
}
