//! Cipher engine throughput: per backend and per cipher or cascade, encrypt
//! and decrypt MB/s on 1 MiB buffers of 512-byte units (and 4096-byte units
//! for comparison), on one thread and on all, through the loaded C ABI
//! exactly as a mounted volume uses it; and `openssl speed -evp
//! aes-256-xts` taken in the same run for scale.
//!
//! "all" splits one request over every core; "conc" runs one request per
//! core at once (each on its own buffer), as concurrent I/O does.
//!
//! Every SIMD level this processor runs gets its rows: the benchmark runs
//! itself once per level with `TCD_SIMD` set (the backends read it at key
//! setup), every algorithm at the widest level and the single ciphers that
//! have SIMD paths (AES, Serpent, Twofish) at the narrower ones.
//!
//! Run: `cargo build --release --workspace && cargo bench -p tcd-tests --bench xts`
//! (`TCD_BENCH_SECONDS` sets the time per figure, default 1: the best of
//! five rounds. `TCD_BENCH_ALGORITHMS`, names separated by commas, keeps
//! those algorithms alone, at every level and in 512-byte units only.)

use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};
use tcd::engine::{self, Engine, VolumeCipher, chain::CHAINS};

const MIB: usize = 1 << 20;

fn seconds() -> Duration {
    let s: f64 = std::env::var("TCD_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    Duration::from_secs_f64(s)
}

/// MB/s (10^6 bytes) of `f` over `buf`: the best of five rounds, each
/// repeating `f` for a fifth of the measuring time. The machines are shared;
/// the best round is the one least disturbed by other tenants.
fn measure(buf: &mut [u8], mut f: impl FnMut(&mut [u8])) -> f64 {
    f(buf); // warm up
    let budget = seconds() / 5;
    (0..5)
        .map(|_| {
            let start = Instant::now();
            let mut bytes = 0usize;
            while start.elapsed() < budget {
                f(black_box(&mut *buf));
                bytes += buf.len();
            }
            bytes as f64 / start.elapsed().as_secs_f64() / 1e6
        })
        .fold(0.0, f64::max)
}

fn engine(order: &[&str], threads: usize) -> Engine {
    let dir = tcd_tests::build_dir();
    let loaded = order
        .iter()
        .map(|b| {
            engine::loader::load(&dir.join(format!("libtcd_backend_{b}.so"))).unwrap_or_else(|e| {
                panic!("{e} (build with `cargo build --release --workspace` first)")
            })
        })
        .collect();
    Engine::new(loaded, threads).expect("engine")
}

/// MB/s of `threads` callers at once, each encrypting its own 1 MiB buffer
/// with `c` (as a daemon's FUSE threads do): the best of five rounds.
fn measure_concurrent(c: &VolumeCipher, threads: usize) -> f64 {
    let budget = seconds() / 5;
    (0..5)
        .map(|_| {
            let start = Instant::now();
            let total: usize = std::thread::scope(|s| {
                let workers: Vec<_> = (0..threads)
                    .map(|_| {
                        s.spawn(|| {
                            let mut buf = vec![0x5au8; MIB];
                            let mut bytes = 0usize;
                            while start.elapsed() < budget {
                                c.encrypt(black_box(&mut buf), 256).expect("encrypt");
                                bytes += MIB;
                            }
                            bytes
                        })
                    })
                    .collect();
                workers.into_iter().map(|w| w.join().unwrap_or(0)).sum()
            });
            total as f64 / start.elapsed().as_secs_f64() / 1e6
        })
        .fold(0.0, f64::max)
}

fn row(label: &str, level: &str, one: &VolumeCipher, all: &VolumeCipher, unit: u32) {
    let mut buf = vec![0x5au8; MIB];
    let e1 = measure(&mut buf, |b| one.encrypt(b, 256).expect("encrypt"));
    let d1 = measure(&mut buf, |b| one.decrypt(b, 256).expect("decrypt"));
    let en = measure(&mut buf, |b| all.encrypt(b, 256).expect("encrypt"));
    let dn = measure(&mut buf, |b| all.decrypt(b, 256).expect("decrypt"));
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cc = measure_concurrent(all, threads);
    let backends = one.backends().join("+");
    println!(
        "{label:<22} {backends:<18} {level:<6} {unit:>5} {e1:>9.0} {d1:>9.0} {en:>9.0} {dn:>9.0} {:>6.2} {cc:>9.0} {:>6.2}",
        (en + dn) / (e1 + d1),
        cc / e1
    );
}

fn openssl(threads: usize) -> Option<f64> {
    let mut cmd = Command::new("openssl");
    cmd.args([
        "speed",
        "-evp",
        "aes-256-xts",
        "-bytes",
        "1048576",
        "-seconds",
        "2",
    ]);
    if threads > 1 {
        cmd.args(["-multi", &threads.to_string()]);
    }
    let out = cmd.output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "AES-256-XTS    6189775.90k" or, with -multi, "evp  ...k"
    let line = text.lines().rev().find(|l| l.trim_end().ends_with('k'))?;
    let k: f64 = line
        .split_whitespace()
        .last()?
        .trim_end_matches('k')
        .parse()
        .ok()?;
    Some(k * 1000.0 / 1e6)
}

/// Set in the child runs, one per SIMD level.
const CHILD: &str = "TCD_BENCH_CHILD";

/// The `TCD_SIMD` levels this processor runs, widest first.
fn levels() -> Vec<&'static str> {
    let mut out = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            out.push("avx512");
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            out.push("avx2");
        }
    }
    out.push("sse2");
    out
}

/// The rows of one SIMD level (this process's `TCD_SIMD`).
fn rows(level: &str, widest: bool) {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let orders: [&[&str]; 2] = [&["aesni", "soft"], &["soft"]];
    let key = vec![0x42u8; 192];
    let only: Option<Vec<String>> = std::env::var("TCD_BENCH_ALGORITHMS")
        .ok()
        .map(|s| s.split(',').map(|n| n.trim().to_owned()).collect());
    for chain in CHAINS {
        let has_paths = matches!(chain.ciphers, ["AES"] | ["Serpent"] | ["Twofish"]);
        let wanted = match &only {
            Some(names) => names.iter().any(|n| n == chain.name),
            None => widest || has_paths,
        };
        if !wanted {
            continue;
        }
        for order in orders {
            let uses_aes = chain.ciphers.contains(&"AES");
            if !uses_aes && order.len() == 1 {
                continue; // the same backends as the first order
            }
            let one = engine(order, 1);
            let all = engine(order, threads);
            let units: &[u32] = if chain.ciphers.len() == 1 && only.is_none() {
                &[512, 4096]
            } else {
                &[512]
            };
            for &unit in units {
                let c1 = one
                    .volume_cipher_units(chain, &key, None, unit)
                    .expect("cipher");
                let cn = all
                    .volume_cipher_units(chain, &key, None, unit)
                    .expect("cipher");
                row(chain.name, level, &c1, &cn, unit);
            }
        }
    }
}

fn main() {
    if std::env::var_os(CHILD).is_some() {
        let level = std::env::var("TCD_SIMD").unwrap_or_default();
        let widest = std::env::var_os("TCD_BENCH_WIDEST").is_some();
        rows(&level, widest);
        return;
    }
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    println!("tcd XTS benchmark: 1 MiB buffers, MB/s = 10^6 bytes/s, {threads} threads for 'all'");
    println!(
        "{:<22} {:<18} {:<6} {:>5} {:>9} {:>9} {:>9} {:>9} {:>6} {:>9} {:>6}",
        "algorithm",
        "backends",
        "simd",
        "unit",
        "enc 1T",
        "dec 1T",
        "enc all",
        "dec all",
        "all/1T",
        "enc conc",
        "conc/1T"
    );
    let exe = std::env::current_exe().expect("benchmark executable");
    for (i, level) in levels().into_iter().enumerate() {
        let mut child = Command::new(&exe);
        child.env(CHILD, "1").env("TCD_SIMD", level);
        if i == 0 {
            child.env("TCD_BENCH_WIDEST", "1");
        }
        let status = child.status().expect("benchmark child runs");
        assert!(status.success(), "TCD_SIMD={level}: {status}");
    }
    match (openssl(1), openssl(threads)) {
        (Some(one), Some(all)) => println!(
            "{:<22} {:<18} {:<6} {:>5} {one:>9.0} {:>9} {all:>9.0} {:>9} {:>6.2}",
            "openssl aes-256-xts",
            "OpenSSL 3 EVP",
            "-",
            "1MiB",
            "-",
            "-",
            all / one
        ),
        _ => println!("openssl speed: not available"),
    }
}
