//! Single-thread Camellia-256 speed on 1 MiB, per path, next to the `camellia`
//! crate in the same run: raw blocks (ECB) and XTS with 512-byte units.
//!
//! cargo run --release -p tcd-backend-soft --example camellia_speed

mod speed;

use cipher::KeyInit;
use speed::{Reference, report};
use tcd_backend_soft::camellia::{Camellia256, CamelliaPath};

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
