//! What the ciphers' differential tests share: a reference crate's answers
//! block by block, and XTS computed by hand over it.

use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, BlockSizeUser, consts::U16};
use rand::Rng;

/// `data` encrypted and decrypted by `c` one block at a time.
pub fn blockwise<C>(c: &C, data: &[u8]) -> (Vec<u8>, Vec<u8>)
where
    C: BlockCipherEncrypt + BlockCipherDecrypt + BlockSizeUser<BlockSize = U16>,
{
    let mut enc = data.to_vec();
    let mut dec = data.to_vec();
    for (e, d) in enc
        .as_chunks_mut::<16>()
        .0
        .iter_mut()
        .zip(dec.as_chunks_mut::<16>().0)
    {
        c.encrypt_block(e.into());
        c.decrypt_block(d.into());
    }
    (enc, dec)
}

/// One random XTS case: the two keys, the data unit size, the first unit's
/// number and the data.
pub struct XtsCase {
    pub k1: [u8; 32],
    pub k2: [u8; 32],
    pub unit: usize,
    pub first: u64,
    pub data: Vec<u8>,
}

/// Sixteen random cases: units of 16 to 1024 bytes, 1 to 20 of them.
pub fn xts_cases(rng: &mut impl Rng) -> Vec<XtsCase> {
    (0..16)
        .map(|_| {
            let mut k1 = [0u8; 32];
            let mut k2 = [0u8; 32];
            rng.fill_bytes(&mut k1);
            rng.fill_bytes(&mut k2);
            let unit = 16 * rng.random_range(1..=64usize);
            let units = rng.random_range(1..=20usize);
            let first: u64 = rng.random();
            let mut data = vec![0u8; unit * units];
            rng.fill_bytes(&mut data);
            XtsCase {
                k1,
                k2,
                unit,
                first,
                data,
            }
        })
        .collect()
}

/// XTS encryption of `case` by hand over the reference ciphers `dk` (the
/// data key's) and `tk` (the tweak key's), block by block.
pub fn xts_by_hand<C: BlockCipherEncrypt + BlockSizeUser<BlockSize = U16>>(
    dk: &C,
    tk: &C,
    case: &XtsCase,
) -> Vec<u8> {
    let mut out = case.data.clone();
    for (u, chunk) in out.chunks_exact_mut(case.unit).enumerate() {
        let mut t = u128::from(case.first.wrapping_add(u as u64))
            .to_le_bytes()
            .into();
        tk.encrypt_block(&mut t);
        let mut t = u128::from_le_bytes(t.into());
        for blk in chunk.as_chunks_mut::<16>().0 {
            let mut x = (u128::from_le_bytes(*blk) ^ t).to_le_bytes().into();
            dk.encrypt_block(&mut x);
            *blk = (u128::from_le_bytes(x.into()) ^ t).to_le_bytes();
            t = tcd_backend_kit::xts::mul_alpha(t);
        }
    }
    out
}
