//! The legacy modes against published LRW answers and an independent CBC.

use super::*;
use aes::{Aes128, Aes192, Aes256};
use cipher::{BlockCipherDecrypt, BlockCipherEncrypt, KeyInit};

/// A RustCrypto AES as raw blocks: the reference the modes are checked on.
struct Ref<C>(C);

impl<C> RawBlocks for Ref<C>
where
    C: BlockCipherEncrypt + BlockCipherDecrypt + Send + Sync,
    C: cipher::BlockSizeUser<BlockSize = cipher::consts::U16>,
{
    fn block_bytes(&self) -> usize {
        16
    }
    fn encrypt(&self, data: &mut [u8]) -> Result<()> {
        for b in data.chunks_exact_mut(16) {
            self.0.encrypt_block(b.try_into().expect("16 bytes"));
        }
        Ok(())
    }
    fn decrypt(&self, data: &mut [u8]) -> Result<()> {
        for b in data.chunks_exact_mut(16) {
            self.0.decrypt_block(b.try_into().expect("16 bytes"));
        }
        Ok(())
    }
}

fn aes(key: &[u8]) -> Box<dyn RawBlocks> {
    match key.len() {
        16 => Box::new(Ref(Aes128::new_from_slice(key).expect("key"))),
        24 => Box::new(Ref(Aes192::new_from_slice(key).expect("key"))),
        _ => Box::new(Ref(Aes256::new_from_slice(key).expect("key"))),
    }
}

impl RawBlocks for Box<dyn RawBlocks> {
    fn block_bytes(&self) -> usize {
        (**self).block_bytes()
    }
    fn encrypt(&self, data: &mut [u8]) -> Result<()> {
        (**self).encrypt(data)
    }
    fn decrypt(&self, data: &mut [u8]) -> Result<()> {
        (**self).decrypt(data)
    }
}

fn unhex(s: &str) -> Vec<u8> {
    hex::decode(s).expect("hex")
}

#[test]
fn lrw_aes_gives_the_published_answers() {
    let text = include_str!("testdata/lrw_aes.txt");
    let mut checked = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let f: Vec<Vec<u8>> = line.split_whitespace().map(unhex).collect();
        let (key, k2, index, plain, want) = (&f[0], &f[1], &f[2], &f[3], &f[4]);
        let tweak = lrw::TweakKey::new(k2[..].try_into().expect("16 bytes"));
        let index = u128::from_be_bytes(index[..].try_into().expect("16 bytes"));
        let cipher = aes(key);
        let mut data = plain.clone();
        tweak
            .crypt(&cipher, &mut data, index, true)
            .expect("encrypt");
        assert_eq!(hex::encode(&data), hex::encode(want), "{line}");
        tweak
            .crypt(&cipher, &mut data, index, false)
            .expect("decrypt");
        assert_eq!(&data, plain);
        checked += 1;
    }
    assert_eq!(checked, 7);
}

#[test]
fn lrw_over_a_run_of_blocks_equals_block_by_block() {
    let tweak = lrw::TweakKey::new(&[0xa5; 16]);
    let cipher = aes(&[7; 32]);
    let plain: Vec<u8> = (0..1024u32).map(|i| (i * 7) as u8).collect();
    let mut run = plain.clone();
    let first = lrw::sector_index(5) + 30;
    tweak.crypt(&cipher, &mut run, first, true).expect("run");
    for (i, block) in plain.chunks(16).enumerate() {
        let mut one = block.to_vec();
        tweak
            .crypt(&cipher, &mut one, first + i as u128, true)
            .expect("one");
        assert_eq!(one, run[i * 16..i * 16 + 16], "block {i}");
    }
}

#[test]
fn cbc_without_whitening_is_the_cbc_crate() {
    use ::cbc::cipher::{BlockModeEncrypt, KeyIvInit};
    let key = [0x42u8; 32];
    let iv = [0x17u8; 16];
    let plain: Vec<u8> = (0..512u32).map(|i| (i * 13 + 1) as u8).collect();
    let mut ours = plain.clone();
    cbc::encrypt(&[aes(&key)], &mut ours, &iv, &[0; 8]).expect("ours");
    let mut theirs = plain.clone();
    let mut enc = ::cbc::Encryptor::<Aes256>::new(&key.into(), &iv.into());
    for block in theirs.chunks_exact_mut(16) {
        let block: &mut [u8; 16] = block.try_into().expect("16 bytes");
        enc.encrypt_block(block.into());
    }
    assert_eq!(ours, theirs);
    cbc::decrypt(&[aes(&key)], &mut ours, &iv, &[0; 8]).expect("decrypt");
    assert_eq!(ours, plain);
}

#[test]
fn whitening_is_the_last_step_of_encryption() {
    let key = [0x42u8; 32];
    let iv = [0x17u8; 16];
    let w = [1u8, 2, 3, 4, 5, 6, 7, 8];
    let plain = vec![0x33u8; 64];
    let mut plainly = plain.clone();
    cbc::encrypt(&[aes(&key)], &mut plainly, &iv, &[0; 8]).expect("plain");
    let mut whitened = plain.clone();
    cbc::encrypt(&[aes(&key)], &mut whitened, &iv, &w).expect("whitened");
    for (i, (a, b)) in plainly.iter().zip(&whitened).enumerate() {
        assert_eq!(a ^ w[i % 8], *b);
    }
}

#[test]
fn outer_cbc_chains_the_whole_cascade_per_block() {
    // Two layers, one CBC: block by block through both ciphers.
    let (k1, k2) = ([1u8; 32], [2u8; 32]);
    let iv = [9u8; 16];
    let plain: Vec<u8> = (0..64u8).collect();
    let mut ours = plain.clone();
    cbc::encrypt(&[aes(&k1), aes(&k2)], &mut ours, &iv, &[0; 8]).expect("ours");
    let mut prev = iv.to_vec();
    let mut want = plain.clone();
    for block in want.chunks_exact_mut(16) {
        xor(block, &prev);
        aes(&k1).encrypt(block).expect("k1");
        aes(&k2).encrypt(block).expect("k2");
        prev = block.to_vec();
    }
    assert_eq!(ours, want);
    cbc::decrypt(&[aes(&k1), aes(&k2)], &mut ours, &iv, &[0; 8]).expect("decrypt");
    assert_eq!(ours, plain);
}

#[test]
fn sector_ivs_follow_truecrypts_rule() {
    let seed: [u8; 32] = core::array::from_fn(|i| i as u8);
    let s = cbc::sector_iv(&seed, 0x0102, 16);
    // IV: seed XOR the sector number, little-endian, in both halves.
    assert_eq!(s.iv[0], 0x02);
    assert_eq!(s.iv[1], 1 ^ 0x01);
    assert_eq!(s.iv[8], 8 ^ 0x02);
    // Whitening: CRC-32s of the seed's second half XOR the sector.
    let mut w = [0u8; 16];
    for (i, b) in w.iter_mut().enumerate() {
        *b = seed[16 + i] ^ 0x0102u64.to_le_bytes()[i % 8];
    }
    let crc = |k: usize| crc32fast::hash(&w[4 * k..4 * k + 4]);
    assert_eq!(s.whitening[..4], (crc(0) ^ crc(3)).to_le_bytes());
    assert_eq!(s.whitening[4..], (crc(1) ^ crc(2)).to_le_bytes());
}

#[test]
fn every_legacy_mode_decrypts_what_it_encrypts() {
    let master: Vec<u8> = (0..=255u8).collect();
    for mode in [Mode::Lrw, Mode::Cbc, Mode::OuterCbc] {
        let layers = vec![aes(&master[32..64]), aes(&master[64..96])];
        let c = LegacyCipher::new(mode, layers, &master).expect("keyed");
        let plain: Vec<u8> = (0..2048u32).map(|i| (i * 31) as u8).collect();
        let mut data = plain.clone();
        c.crypt_sectors(&mut data, 7, true).expect("encrypt");
        assert_ne!(data, plain);
        // Sector by sector gives the same bytes as the run.
        let mut one = plain[512..1024].to_vec();
        c.crypt_sectors(&mut one, 8, true).expect("one");
        assert_eq!(one, data[512..1024], "{mode:?}");
        c.crypt_sectors(&mut data, 7, false).expect("decrypt");
        assert_eq!(data, plain, "{mode:?}");
    }
}
