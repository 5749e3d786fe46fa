//! The keyfile pool of TrueCrypt 7 and VeraCrypt.
//!
//! The pool has 64 bytes (TrueCrypt; VeraCrypt when the password has at
//! most 64 bytes) or 128 bytes (VeraCrypt, longer password). Each keyfile,
//! in the order given, runs a fresh CRC-32 register (reflected polynomial
//! 0xEDB88320, initial value 0xFFFFFFFF, no final XOR) over its first
//! [`MAX_READ`] bytes; after every byte the register's four bytes, most
//! significant first, are added (mod 256) into the pool at a write cursor
//! that wraps at the pool size. The cursor starts at 0 for every keyfile
//! (VeraCrypt `src/Volume/Keyfile.cpp` `Keyfile::Apply`: `poolPos = 0` per
//! keyfile; `src/Common/Keyfiles.c` `KeyFileProcess`: `writePos = 0`; the
//! same in TrueCrypt 7.1a). The pool is then added byte-wise into the
//! password padded with zeros to the pool size, so the result is pool-size
//! long when the password was shorter.

use super::kdf::Format;
use crate::error::{Error, Result};
use zeroize::{Zeroize, Zeroizing};

/// Bytes of each keyfile that count.
pub const MAX_READ: usize = tcd_proto::keyfiles::MAX_READ;

/// Pool size when the password has at most 64 bytes (and always in
/// TrueCrypt).
pub const POOL_SMALL: usize = 64;

/// VeraCrypt's pool size for passwords longer than 64 bytes.
pub const POOL_LARGE: usize = 128;

/// The longest password `format` takes, in bytes.
pub fn max_password_len(format: Format) -> usize {
    match format {
        Format::TrueCrypt => 64,
        Format::VeraCrypt => 128,
    }
}

/// The pool size used for a password of `password_len` bytes.
pub fn pool_size(password_len: usize, format: Format) -> usize {
    match format {
        Format::TrueCrypt => POOL_SMALL,
        Format::VeraCrypt if password_len <= POOL_SMALL => POOL_SMALL,
        Format::VeraCrypt => POOL_LARGE,
    }
}

/// Checks a password's length against the format's limit.
pub fn check_password_len(password: &[u8], format: Format) -> Result<()> {
    let max = max_password_len(format);
    if password.len() > max {
        return Err(Error::PasswordTooLong {
            len: password.len(),
            max,
            format: format.name(),
        });
    }
    Ok(())
}

/// Mixes keyfile contents (in the order given) into a password.
///
/// No keyfiles: the password unchanged (still checked against the format's
/// limit; never cut). An empty keyfile is an error, as in VeraCrypt
/// (`InsufficientData`), since it would silently add nothing.
pub fn apply(password: &[u8], keyfiles: &[&[u8]], format: Format) -> Result<Zeroizing<Vec<u8>>> {
    check_password_len(password, format)?;
    if keyfiles.is_empty() {
        return Ok(Zeroizing::new(password.to_vec()));
    }
    let size = pool_size(password.len(), format);
    let mut pool = Zeroizing::new([0u8; POOL_LARGE]);
    for (index, keyfile) in keyfiles.iter().enumerate() {
        if keyfile.is_empty() {
            return Err(Error::Keyfile {
                path: format!("number {}", index + 1),
                problem: "empty (a keyfile holds at least one byte)".into(),
            });
        }
        mix_keyfile(&mut pool[..size], keyfile);
    }
    let mut mixed = Zeroizing::new(vec![0u8; size]);
    mixed[..password.len()].copy_from_slice(password);
    for (m, p) in mixed.iter_mut().zip(pool.iter()) {
        *m = m.wrapping_add(*p);
    }
    Ok(mixed)
}

/// Reads keyfiles as a user names them: the files TrueCrypt's rule makes
/// of the list ([`tcd_proto::keyfiles::files`]: a folder stands for the
/// regular files directly in it, not hidden ones, in byte order of their
/// names; an empty folder is an error), each with its first [`MAX_READ`]
/// bytes.
pub fn read_keyfiles(paths: &[std::path::PathBuf]) -> Result<Vec<Zeroizing<Vec<u8>>>> {
    let fail = |p: &std::path::Path, problem: String| Error::Keyfile {
        path: p.display().to_string(),
        problem,
    };
    let files = tcd_proto::keyfiles::files(paths).map_err(|e| fail(&e.path, e.problem))?;
    files
        .iter()
        .map(|f| read_one(f).map_err(|e| fail(f, e.to_string())))
        .collect()
}

fn read_one(path: &std::path::Path) -> std::io::Result<Zeroizing<Vec<u8>>> {
    use std::io::Read;
    let mut data = Zeroizing::new(Vec::new());
    std::fs::File::open(path)?
        .take(MAX_READ as u64)
        .read_to_end(&mut data)?;
    Ok(data)
}

/// Adds one keyfile's CRC stream into `pool` (whose length is a multiple
/// of 4), the write cursor starting at 0.
fn mix_keyfile(pool: &mut [u8], keyfile: &[u8]) {
    let mut crc = Crc32::new();
    let mut pos = 0;
    for &byte in keyfile.iter().take(MAX_READ) {
        let mut value = crc.update(byte).to_be_bytes();
        for b in value {
            pool[pos] = pool[pos].wrapping_add(b);
            pos += 1;
        }
        if pos >= pool.len() {
            pos = 0;
        }
        value.zeroize();
    }
    crc.0.zeroize();
}

/// The standard reflected CRC-32 register (polynomial 0xEDB88320), read
/// as it runs: no final XOR.
struct Crc32(u32);

const CRC_TABLE: [u32; 256] = crc_table();

const fn crc_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        table[i] = c;
        i += 1;
    }
    table
}

impl Crc32 {
    fn new() -> Self {
        Crc32(0xFFFF_FFFF)
    }

    #[inline]
    fn update(&mut self, byte: u8) -> u32 {
        self.0 = CRC_TABLE[((self.0 ^ u32::from(byte)) & 0xFF) as usize] ^ (self.0 >> 8);
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A straightforward model of the pool, written from the description
    /// (bit-by-bit CRC, modulo cursor) to compare against.
    fn model(password: &[u8], keyfiles: &[&[u8]], pool_len: usize) -> Vec<u8> {
        let mut pool = vec![0u8; pool_len];
        for kf in keyfiles {
            let mut crc: u32 = 0xFFFF_FFFF;
            let mut cursor = 0usize;
            for &b in kf.iter().take(MAX_READ) {
                crc ^= u32::from(b);
                for _ in 0..8 {
                    crc = if crc & 1 == 1 {
                        (crc >> 1) ^ 0xEDB8_8320
                    } else {
                        crc >> 1
                    };
                }
                for shift in [24, 16, 8, 0] {
                    pool[cursor % pool_len] =
                        pool[cursor % pool_len].wrapping_add((crc >> shift) as u8);
                    cursor += 1;
                }
            }
        }
        let mut out = vec![0u8; pool_len];
        out[..password.len()].copy_from_slice(password);
        for (o, p) in out.iter_mut().zip(&pool) {
            *o = o.wrapping_add(*p);
        }
        out
    }

    #[test]
    fn crc_register_is_standard_crc32_before_final_xor() {
        // CRC-32 ("123456789") = 0xCBF43926 (the standard check value); the
        // register before the final XOR is its complement.
        let mut crc = Crc32::new();
        let mut last = 0;
        for &b in b"123456789" {
            last = crc.update(b);
        }
        assert_eq!(last ^ 0xFFFF_FFFF, 0xCBF4_3926);
    }

    #[test]
    fn single_byte_keyfile_crafted() {
        // Keyfile "a" (0x61): register after one byte = !CRC32("a") =
        // !0xE8B7BE43 = 0x174841BC, added at pool[0..4].
        let out = apply(b"", &[b"a"], Format::VeraCrypt).unwrap();
        let mut expected = [0u8; 64];
        expected[..4].copy_from_slice(&[0x17, 0x48, 0x41, 0xBC]);
        assert_eq!(&out[..], &expected[..]);
        // With a password: byte-wise addition mod 256 into the padded password.
        let out = apply(&[0xF0, 1, 2, 3, 4], &[b"a"], Format::TrueCrypt).unwrap();
        assert_eq!(
            &out[..5],
            &[0xF0u8.wrapping_add(0x17), 1 + 0x48, 2 + 0x41, 3 + 0xBC, 4]
        );
        assert_eq!(out.len(), 64);
    }

    #[test]
    fn pool_64_wraps_and_matches_model() {
        let kf1: Vec<u8> = (0..37u32).map(|i| (i * 7 + 3) as u8).collect(); // 148 writes: wraps twice
        let kf2: Vec<u8> = (0..5u8).collect();
        let out = apply(b"secret", &[&kf1, &kf2], Format::VeraCrypt).unwrap();
        assert_eq!(out.len(), 64);
        assert_eq!(&out[..], &model(b"secret", &[&kf1, &kf2], 64)[..]);
        // TrueCrypt: same pool for the same password.
        let tc = apply(b"secret", &[&kf1, &kf2], Format::TrueCrypt).unwrap();
        assert_eq!(&tc[..], &out[..]);
    }

    #[test]
    fn pool_128_for_long_veracrypt_passwords() {
        let pw = [b'x'; 65];
        let kf: Vec<u8> = (0..50u8).collect(); // 200 writes: wraps once at 128
        let out = apply(&pw, &[&kf], Format::VeraCrypt).unwrap();
        assert_eq!(out.len(), 128);
        assert_eq!(&out[..], &model(&pw, &[&kf], 128)[..]);
        // 64 bytes exactly still uses the 64-byte pool.
        let out = apply(&[b'x'; 64], &[&kf], Format::VeraCrypt).unwrap();
        assert_eq!(out.len(), 64);
        assert_eq!(&out[..], &model(&[b'x'; 64], &[&kf], 64)[..]);
        // A 128-byte password stays 128 bytes long.
        let out = apply(&[b'y'; 128], &[&kf], Format::VeraCrypt).unwrap();
        assert_eq!(out.len(), 128);
    }

    #[test]
    fn cursor_restarts_for_each_keyfile() {
        // Keyfile 1 of 3 bytes writes pool[0..12]; keyfile 2 (one byte)
        // then adds at pool[0..4] again, not at pool[12..16].
        let a = apply(b"", &[b"abc", b"z"], Format::VeraCrypt).unwrap();
        let only_abc = apply(b"", &[b"abc"], Format::VeraCrypt).unwrap();
        let only_z = apply(b"", &[b"z"], Format::VeraCrypt).unwrap();
        for i in 0..64 {
            assert_eq!(a[i], only_abc[i].wrapping_add(only_z[i]), "byte {i}");
        }
        assert_ne!(a[0], only_abc[0]);
        assert_eq!(a[12..16], only_abc[12..16]);
        // Keyfile order does not matter for the sum, but the CRC restart does:
        // "abcz" as one keyfile differs.
        let joined = apply(b"", &[b"abcz"], Format::VeraCrypt).unwrap();
        assert_ne!(&joined[..], &a[..]);
    }

    #[test]
    fn only_the_first_mebibyte_counts() {
        let mut big = vec![0u8; MAX_READ + 1000];
        for (i, b) in big.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(31).wrapping_add((i >> 8) as u8);
        }
        let cut = apply(b"pw", &[&big[..MAX_READ]], Format::VeraCrypt).unwrap();
        let full = apply(b"pw", &[&big], Format::VeraCrypt).unwrap();
        assert_eq!(&cut[..], &full[..]);
        assert_eq!(&full[..], &model(b"pw", &[&big], 64)[..]);
        // One byte fewer changes the pool.
        let shorter = apply(b"pw", &[&big[..MAX_READ - 1]], Format::VeraCrypt).unwrap();
        assert_ne!(&shorter[..], &full[..]);
    }

    #[test]
    fn no_keyfiles_leaves_the_password() {
        let out = apply(b"aaaaaaaaaaaa", &[], Format::TrueCrypt).unwrap();
        assert_eq!(&out[..], b"aaaaaaaaaaaa");
        let out = apply(b"", &[], Format::VeraCrypt).unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn too_long_passwords_are_refused_not_cut() {
        assert!(matches!(
            apply(&[b'a'; 65], &[], Format::TrueCrypt),
            Err(Error::PasswordTooLong {
                len: 65,
                max: 64,
                ..
            })
        ));
        assert!(matches!(
            apply(&[b'a'; 65], &[b"k"], Format::TrueCrypt),
            Err(Error::PasswordTooLong {
                len: 65,
                max: 64,
                ..
            })
        ));
        assert!(matches!(
            apply(&[b'a'; 129], &[b"k"], Format::VeraCrypt),
            Err(Error::PasswordTooLong {
                len: 129,
                max: 128,
                ..
            })
        ));
        assert!(apply(&[b'a'; 64], &[], Format::TrueCrypt).is_ok());
        assert!(apply(&[b'a'; 128], &[], Format::VeraCrypt).is_ok());
    }

    #[test]
    fn empty_keyfile_is_an_error() {
        assert!(matches!(
            apply(b"pw", &[b"k", b""], Format::VeraCrypt),
            Err(Error::Keyfile { .. })
        ));
    }
}
