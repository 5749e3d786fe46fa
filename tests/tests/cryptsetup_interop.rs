//! cryptsetup, a third implementation, reads the TrueCrypt-format volumes
//! made here: `cryptsetup tcryptDump` shows the header we wrote, and the
//! master key it dumps decrypts the data area exactly as we do.
//!
//! On a kernel without AF_ALG (this machine's), cryptsetup decrypts headers
//! with OpenSSL, which has AES but not Twofish or Serpent, and it gives up
//! at the first cipher it cannot run: so these checks name the hash and the
//! AES chain (`--hash`, `--cipher`). Needs `cryptsetup` (cryptsetup-bin).

use std::fs::OpenOptions;
use std::sync::atomic::AtomicBool;
use tcd::engine::Chain;
use tcd::volume::create::{self, CreateOptions};
use tcd::volume::kdf::{Format, Prf};
use tcd::volume::opened::OpenVolume;
use tcd::volume::unlock::{Credentials, SearchOptions, Target};
use tcd_tests::cryptsetup::{master_key, tcrypt_dump};
use tcd_tests::engine;

fn field<'a>(dump: &'a str, name: &str) -> &'a str {
    dump.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {name} in {dump}"))
}

#[test]
fn cryptsetup_reads_truecrypt_volumes_made_here() {
    let e = engine(&["aesni", "soft"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let no = AtomicBool::new(false);
    for (prf, hash, sector) in [
        (Prf::Sha512, "sha512", 512u32),
        (Prf::Ripemd160, "ripemd160", 4096),
        (Prf::Whirlpool, "whirlpool", 512),
    ] {
        let path = dir.path().join(hash);
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .expect("host");
        f.set_len(2 << 20).expect("size");
        let opts = CreateOptions {
            format: Format::TrueCrypt,
            prf,
            sector_size: Some(sector),
            ..CreateOptions::new()
        };
        let c = Credentials {
            password: b"checked by cryptsetup",
            keyfiles: &[],
            pim: 0,
        };
        let made = create::create(&e, &f, c, &opts, &mut |_, _| {}, &no).expect("create");

        let dump = tcrypt_dump(&path, c.password, hash, false);
        assert_eq!(field(&dump, "PBKDF2 hash"), hash);
        assert_eq!(field(&dump, "Cipher chain"), "aes");
        assert_eq!(field(&dump, "Cipher mode"), "xts-plain64");
        assert_eq!(field(&dump, "Version"), "5");
        assert_eq!(field(&dump, "Sector size"), sector.to_string());
        assert_eq!(field(&dump, "MK offset"), made.data_offset.to_string());

        // The master key cryptsetup finds decrypts the host as we do.
        let mk = master_key(&tcrypt_dump(&path, c.password, hash, true));
        assert_eq!(mk.len(), 64);
        let v = OpenVolume::open(&e, f, c, Target::Any, &SearchOptions::new(), &no, false)
            .expect("open");
        let mut plain: Vec<u8> = (0..8192).map(|i| (i % 251) as u8).collect();
        let expected = plain.clone();
        v.write_at(&mut plain, 4096).expect("write");
        let mut host = vec![0u8; 8192];
        let at = made.data_offset + 4096;
        std::os::unix::fs::FileExt::read_exact_at(
            &std::fs::File::open(&path).expect("host"),
            &mut host,
            at,
        )
        .expect("read host");
        e.volume_cipher(Chain::by_name("AES").expect("AES"), &mk, None)
            .expect("cipher")
            .decrypt(&mut host, at / 512)
            .expect("decrypt");
        assert!(
            host == expected,
            "{hash}: cryptsetup's master key decrypts our data"
        );
    }
}
