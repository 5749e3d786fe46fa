//! Encryption algorithms as TrueCrypt and VeraCrypt name them: one cipher or
//! a cascade, each layer a full XTS pass with its own key pair.
//!
//! TrueCrypt names a cascade in the reverse of its order of application:
//! "AES-Twofish-Serpent" encrypts with Serpent first, then Twofish, then AES.
//! (cryptsetup and tcplay name the same chain "serpent-twofish-aes".) The
//! master key holds the primary keys of the layers in order of application,
//! then their XTS secondary (tweak) keys in the same order.

/// An encryption algorithm: its user-facing name and its ciphers in the
/// order they are applied when encrypting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chain {
    pub name: &'static str,
    pub ciphers: &'static [&'static str],
    /// Formats that can carry it.
    pub truecrypt: bool,
    /// How the ciphers encrypt a sector.
    pub mode: Mode,
}

/// The mode of operation. Every volume since TrueCrypt 5 is XTS; the
/// others are TrueCrypt 4's (header versions 1 and 2), opened but never
/// created (see `engine::legacy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Xts,
    /// LRW over 16-byte blocks, each layer a full pass.
    Lrw,
    /// TrueCrypt's CBC with a per-sector IV and whitening, each layer a
    /// full pass ("inner" CBC; one layer, or the Blowfish cascades).
    Cbc,
    /// One CBC around the whole cascade, block by block ("outer" CBC).
    OuterCbc,
}

impl Mode {
    /// As `tcctl info` shows it.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Xts => "XTS",
            Mode::Lrw => "LRW",
            Mode::Cbc => "CBC",
            Mode::OuterCbc => "outer CBC",
        }
    }

    /// TrueCrypt 4's modes, which TrueCrypt 7.1a called deprecated.
    pub fn is_legacy(self) -> bool {
        self != Mode::Xts
    }
}

/// Bytes of one cipher key; every TrueCrypt and VeraCrypt cipher is 256-bit.
pub const CIPHER_KEY_BYTES: usize = 32;

const fn c(name: &'static str, ciphers: &'static [&'static str], truecrypt: bool) -> Chain {
    Chain {
        name,
        ciphers,
        truecrypt,
        mode: Mode::Xts,
    }
}

const fn legacy(name: &'static str, ciphers: &'static [&'static str], mode: Mode) -> Chain {
    Chain {
        name,
        ciphers,
        truecrypt: true,
        mode,
    }
}

/// TrueCrypt 4's algorithms (header versions 1 and 2): tried only when a
/// TrueCrypt header decrypts under none of [`CHAINS`], and never offered
/// for new volumes. Single ciphers and the Blowfish cascades run CBC per
/// layer; the other cascades run one outer CBC (cryptsetup's `cbci`).
pub const LEGACY_CHAINS: &[Chain] = &[
    legacy("AES", &["AES"], Mode::Lrw),
    legacy("Serpent", &["Serpent"], Mode::Lrw),
    legacy("Twofish", &["Twofish"], Mode::Lrw),
    legacy("AES-Twofish", &["Twofish", "AES"], Mode::Lrw),
    legacy(
        "AES-Twofish-Serpent",
        &["Serpent", "Twofish", "AES"],
        Mode::Lrw,
    ),
    legacy("Serpent-AES", &["AES", "Serpent"], Mode::Lrw),
    legacy(
        "Serpent-Twofish-AES",
        &["AES", "Twofish", "Serpent"],
        Mode::Lrw,
    ),
    legacy("Twofish-Serpent", &["Serpent", "Twofish"], Mode::Lrw),
    legacy("AES", &["AES"], Mode::Cbc),
    legacy("Serpent", &["Serpent"], Mode::Cbc),
    legacy("Twofish", &["Twofish"], Mode::Cbc),
    legacy("Blowfish", &["Blowfish"], Mode::Cbc),
    legacy("CAST5", &["CAST5"], Mode::Cbc),
    legacy("Triple DES", &["Triple DES"], Mode::Cbc),
    legacy("AES-Blowfish", &["Blowfish", "AES"], Mode::Cbc),
    legacy(
        "AES-Blowfish-Serpent",
        &["Serpent", "Blowfish", "AES"],
        Mode::Cbc,
    ),
    legacy("AES-Twofish", &["Twofish", "AES"], Mode::OuterCbc),
    legacy(
        "AES-Twofish-Serpent",
        &["Serpent", "Twofish", "AES"],
        Mode::OuterCbc,
    ),
    legacy("Serpent-AES", &["AES", "Serpent"], Mode::OuterCbc),
    legacy(
        "Serpent-Twofish-AES",
        &["AES", "Twofish", "Serpent"],
        Mode::OuterCbc,
    ),
    legacy("Twofish-Serpent", &["Serpent", "Twofish"], Mode::OuterCbc),
];

/// Bytes of one key of `cipher` in a legacy master key: TrueCrypt 4's
/// Blowfish took 448 bits, CAST5 128, Triple DES 192, the rest 256.
pub fn legacy_key_bytes(cipher: &str) -> usize {
    match cipher {
        "Blowfish" => 56,
        "CAST5" => 16,
        "Triple DES" => 24,
        _ => CIPHER_KEY_BYTES,
    }
}

/// Where a legacy master key's cipher keys start: after the 32 bytes of
/// LRW tweak key or CBC IV seed and whitening seed.
pub const LEGACY_KEYS_AT: usize = 32;

/// TrueCrypt 7's algorithms (VeraCrypt reads them all too), then those only
/// VeraCrypt has.
pub const CHAINS: &[Chain] = &[
    c("AES", &["AES"], true),
    c("Serpent", &["Serpent"], true),
    c("Twofish", &["Twofish"], true),
    c("AES-Twofish", &["Twofish", "AES"], true),
    c("AES-Twofish-Serpent", &["Serpent", "Twofish", "AES"], true),
    c("Serpent-AES", &["AES", "Serpent"], true),
    c("Serpent-Twofish-AES", &["AES", "Twofish", "Serpent"], true),
    c("Twofish-Serpent", &["Serpent", "Twofish"], true),
    // VeraCrypt only.
    c("Camellia", &["Camellia"], false),
    c("Kuznyechik", &["Kuznyechik"], false),
    c("Camellia-Kuznyechik", &["Kuznyechik", "Camellia"], false),
    c("Camellia-Serpent", &["Serpent", "Camellia"], false),
    c("Kuznyechik-AES", &["AES", "Kuznyechik"], false),
    c(
        "Kuznyechik-Serpent-Camellia",
        &["Camellia", "Serpent", "Kuznyechik"],
        false,
    ),
    c("Kuznyechik-Twofish", &["Twofish", "Kuznyechik"], false),
];

impl Chain {
    /// Finds an algorithm by its TrueCrypt/VeraCrypt name, any case.
    pub fn by_name(name: &str) -> Option<&'static Chain> {
        CHAINS.iter().find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// Master-key bytes the chain uses.
    pub fn key_bytes(&self) -> usize {
        match self.mode {
            Mode::Xts => 2 * CIPHER_KEY_BYTES * self.ciphers.len(),
            _ => {
                LEGACY_KEYS_AT
                    + self
                        .ciphers
                        .iter()
                        .map(|c| legacy_key_bytes(c))
                        .sum::<usize>()
            }
        }
    }

    /// The name with the mode where it is not XTS (`AES-Twofish (outer
    /// CBC, legacy)`), as a mounted volume's encryption shows it.
    pub fn display_name(&self) -> String {
        match self.mode {
            Mode::Xts => self.name.to_owned(),
            mode => format!("{} ({}, legacy)", self.name, mode.name()),
        }
    }

    /// The mode as cryptsetup names it (`tcctl info`, `tcctl dump`).
    pub fn cryptsetup_mode(&self) -> &'static str {
        match self.mode {
            Mode::Xts => "xts-plain64",
            Mode::Lrw => "lrw-benbi",
            Mode::OuterCbc => "cbci-tcrypt",
            // cryptsetup's name for the Blowfish cascades.
            Mode::Cbc if self.ciphers.len() > 1 => "cbc-tcrypt",
            Mode::Cbc => "cbc-tcw",
        }
    }

    /// The XTS key (primary then secondary) of layer `i` out of the master
    /// key, written into `out` (64 bytes).
    pub fn layer_key(&self, master: &[u8], i: usize, out: &mut [u8]) {
        let n = self.ciphers.len();
        let k = CIPHER_KEY_BYTES;
        out[..k].copy_from_slice(&master[i * k..(i + 1) * k]);
        out[k..2 * k].copy_from_slice(&master[(n + i) * k..(n + i + 1) * k]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_application_order_reversed() {
        for chain in CHAINS.iter().chain(LEGACY_CHAINS) {
            let mut rev: Vec<&str> = chain.name.split('-').collect();
            rev.reverse();
            assert_eq!(rev, chain.ciphers, "{}", chain.name);
        }
    }

    #[test]
    fn legacy_keys_fit_the_header_and_are_never_found_by_name_for_creating() {
        for chain in LEGACY_CHAINS {
            assert!(chain.key_bytes() <= 256, "{}", chain.name);
            assert!(chain.mode.is_legacy());
        }
        // AES-Blowfish-Serpent: 32 + 32 + 56 + 32, as cryptsetup lays it out.
        let c = LEGACY_CHAINS
            .iter()
            .find(|c| c.name == "AES-Blowfish-Serpent");
        assert_eq!(c.map(|c| c.key_bytes()), Some(152));
        assert!(Chain::by_name("Blowfish").is_none());
        assert_eq!(Chain::by_name("AES").map(|c| c.mode), Some(Mode::Xts));
    }

    #[test]
    fn layer_keys_put_primaries_first() {
        let chain = Chain::by_name("aes-twofish-serpent").expect("known");
        let master: Vec<u8> = (0..192u8).collect();
        let mut k = [0u8; 64];
        chain.layer_key(&master, 0, &mut k); // Serpent
        assert_eq!(k[0], 0);
        assert_eq!(k[32], 96);
        chain.layer_key(&master, 2, &mut k); // AES
        assert_eq!(k[0], 64);
        assert_eq!(k[32], 160);
    }
}
