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
}

/// Bytes of one cipher key; every TrueCrypt and VeraCrypt cipher is 256-bit.
pub const CIPHER_KEY_BYTES: usize = 32;

const fn c(name: &'static str, ciphers: &'static [&'static str], truecrypt: bool) -> Chain {
    Chain {
        name,
        ciphers,
        truecrypt,
    }
}

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
        2 * CIPHER_KEY_BYTES * self.ciphers.len()
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
        for chain in CHAINS {
            let mut rev: Vec<&str> = chain.name.split('-').collect();
            rev.reverse();
            assert_eq!(rev, chain.ciphers, "{}", chain.name);
        }
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
