//! PBKDF2 speed per PRF, and one Argon2id derivation.
//!
//! `cargo run --release -p tcd --example kdf_speed [iterations]`
//!
//! Prints iterations per second (one HMAC per iteration) for each PRF and
//! the time a VeraCrypt default derivation (500,000 iterations; 655,331 for
//! RIPEMD-160) would take on one core.

use std::sync::atomic::AtomicBool;
use std::time::Instant;
use tcd::volume::kdf::{Format, HEADER_KEY_BYTES, KdfLimits, Prf, derive_header_key};

fn main() {
    let pim: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    // PIM p runs 15000 + 1000 p iterations for each of the output blocks.
    let cancel = AtomicBool::new(false);
    let salt = [0x5au8; 64];
    let limits = KdfLimits::default();
    println!(
        "PIM {pim}: {} iterations per output block",
        15_000 + 1_000 * pim
    );
    for prf in [
        Prf::Sha512,
        Prf::Sha256,
        Prf::Whirlpool,
        Prf::Blake2s,
        Prf::Streebog,
        Prf::Ripemd160,
    ] {
        let iterations = prf.iterations(Format::VeraCrypt, pim).unwrap_or(0);
        let default = prf.iterations(Format::VeraCrypt, 0).unwrap_or(0);
        // 192 bytes = this many PBKDF2 output blocks, each `iterations` HMACs.
        let out_len = match prf {
            Prf::Sha512 | Prf::Whirlpool | Prf::Streebog => 64,
            Prf::Sha256 | Prf::Blake2s => 32,
            Prf::Ripemd160 | Prf::Sha1 => 20,
            Prf::Argon2id => 1,
        };
        let blocks = HEADER_KEY_BYTES.div_ceil(out_len) as u64;
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let mut out = [0u8; HEADER_KEY_BYTES];
            let t = Instant::now();
            derive_header_key(
                prf,
                Format::VeraCrypt,
                pim,
                b"password",
                &salt,
                &limits,
                &cancel,
                &mut out,
            )
            .expect("derivation");
            best = best.min(t.elapsed().as_secs_f64());
        }
        let hmacs = blocks * u64::from(iterations);
        let rate = hmacs as f64 / best;
        println!(
            "{:<12} {:>10.0} iterations/s  ({} blocks x {} in {:.3} s; VeraCrypt default {} x {}: {:.2} s)",
            prf.name(),
            rate,
            blocks,
            iterations,
            best,
            blocks,
            default,
            (blocks * u64::from(default)) as f64 / rate,
        );
    }
    let mut out = [0u8; HEADER_KEY_BYTES];
    for pim in [1u32, 0] {
        let t = Instant::now();
        derive_header_key(
            Prf::Argon2id,
            Format::VeraCrypt,
            pim,
            b"password",
            &salt,
            &limits,
            &cancel,
            &mut out,
        )
        .expect("argon2id");
        let cost = Prf::Argon2id.argon2_cost(pim).expect("cost");
        println!(
            "Argon2id PIM {pim}: {} MiB x {} passes in {:.2} s",
            cost.memory_kib / 1024,
            cost.passes,
            t.elapsed().as_secs_f64()
        );
    }
}
