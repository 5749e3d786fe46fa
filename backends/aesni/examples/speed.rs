//! Single-thread XTS-AES-256 throughput of every path this processor runs.
//!
//! `cargo run --release -p tcd-backend-aesni --example speed [seconds]`
//!
//! Encrypts and decrypts a 1 MiB buffer in place, for 512-byte units
//! (TrueCrypt sectors) and 4096-byte units, and prints MB/s (10^6 bytes):
//! the best single pass, and the mean over all passes.

use std::hint::black_box;
use std::time::{Duration, Instant};
use tcd_backend_aesni::xts::{AesXts, Path};
use tcd_backend_kit::XtsCipher;

const BUF: usize = 1 << 20;

fn measure(secs: f64, mut f: impl FnMut(u64)) -> (f64, f64) {
    // Warm up, then time single passes for at least `secs`. The machine is
    // shared, so report the best pass (the speed when not preempted) and
    // the mean over all passes.
    for i in 0..4 {
        f(i);
    }
    let start = Instant::now();
    let mut passes = 0u64;
    let mut best = f64::MAX;
    while start.elapsed() < Duration::from_secs_f64(secs) {
        let t = Instant::now();
        f(passes);
        best = best.min(t.elapsed().as_secs_f64());
        passes += 1;
    }
    let mean = (passes * BUF as u64) as f64 / start.elapsed().as_secs_f64() / 1e6;
    (BUF as f64 / best / 1e6, mean)
}

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    if !tcd_backend_aesni::xts::cpu_supported() {
        println!("no AES-NI on this processor");
        return;
    }
    let key: [u8; 64] = core::array::from_fn(|i| (i as u8).wrapping_mul(37).wrapping_add(11));
    let mut buf = vec![0x5au8; BUF];
    let default = AesXts::new(&key).path();
    println!("default path: {default:?}");
    for unit in [512usize, 4096] {
        for path in Path::ALL {
            let Some(ctx) = AesXts::with_path(&key, path) else {
                println!("{path:?}: not supported here");
                continue;
            };
            let enc = measure(secs, |i| {
                ctx.encrypt(black_box(&mut buf), i * (BUF / unit) as u64, unit)
            });
            let dec = measure(secs, |i| {
                ctx.decrypt(black_box(&mut buf), i * (BUF / unit) as u64, unit)
            });
            println!(
                "{path:>8?} unit {unit:>4}: encrypt {:>6.0} MB/s (mean {:>6.0})   \
                 decrypt {:>6.0} MB/s (mean {:>6.0})",
                enc.0, enc.1, dec.0, dec.1
            );
        }
    }
}
