//! Single-thread Serpent-256 speed on 1 MiB, per path, next to the `serpent`
//! crate in the same run: raw blocks (ECB) and XTS with 512-byte units.
//!
//! cargo run --release -p tcd-backend-soft --example serpent_speed

mod speed;

use cipher::KeyInit;
use speed::{Reference, report};
use tcd_backend_soft::serpent::{Serpent256, SerpentPath};

fn main() {
    let k1 = [0x11u8; 32];
    let k2 = [0x22u8; 32];
    let reference = |k: &[u8; 32]| {
        Reference(serpent::Serpent::new_from_slice(k).unwrap_or_else(|_| unreachable!()))
    };
    println!("default path: {:?}", Serpent256::new(&k1).path());
    report(
        "serpent crate",
        reference(&k1),
        reference(&k1),
        reference(&k2),
    );
    for path in SerpentPath::ALL {
        let (Some(a), Some(b), Some(c)) = (
            Serpent256::with_path(&k1, path),
            Serpent256::with_path(&k1, path),
            Serpent256::with_path(&k2, path),
        ) else {
            println!("{:<16} not available on this CPU", format!("{path:?}"));
            continue;
        };
        report(&format!("{path:?}"), a, b, c);
    }
}
