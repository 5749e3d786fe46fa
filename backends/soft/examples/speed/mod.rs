//! What the cipher speed examples share: a RustCrypto cipher as a
//! `BlockCipher` for the reference row, the timing, and the report line.

use std::hint::black_box;
use std::time::{Duration, Instant};

use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, BlockSizeUser, consts::U16};
use tcd_backend_kit::{BlockCipher, Xts, XtsCipher};

const MIB: usize = 1 << 20;

/// A RustCrypto cipher as a BlockCipher, one block at a time.
pub struct Reference<C>(pub C);

impl<C> BlockCipher for Reference<C>
where
    C: BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U16> + Send + Sync,
{
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

/// One line: raw blocks with `c1`, XTS with `c2` and the tweak cipher `x1`.
pub fn report<C: BlockCipher>(name: &str, c1: C, c2: C, x1: C) {
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
