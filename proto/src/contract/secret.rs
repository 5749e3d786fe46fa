//! Secrets inside options: passwords and keyfile contents that travel as
//! `ay` / `aay`, wiped when dropped and never printed.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use zeroize::Zeroizing;
use zvariant::{Signature, Type};

/// Bytes of a password or keyfile (`ay`).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(pub Zeroizing<Vec<u8>>);

/// Keyfile contents (`aay`).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SecretList(pub Vec<Secret>);

impl Secret {
    pub fn new(bytes: Vec<u8>) -> Self {
        Secret(Zeroizing::new(bytes))
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl SecretList {
    pub fn new(list: Vec<Vec<u8>>) -> Self {
        SecretList(list.into_iter().map(Secret::new).collect())
    }
    /// Each secret as a slice, in order.
    pub fn slices(&self) -> Vec<&[u8]> {
        self.0.iter().map(Secret::as_bytes).collect()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Secret({} bytes)", self.0.len())
    }
}

impl std::fmt::Debug for SecretList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretList({} items)", self.0.len())
    }
}

impl Type for Secret {
    const SIGNATURE: &'static Signature = <Vec<u8> as Type>::SIGNATURE;
}

impl Type for SecretList {
    const SIGNATURE: &'static Signature = <Vec<Vec<u8>> as Type>::SIGNATURE;
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<u8>::deserialize(d).map(Secret::new)
    }
}

impl Serialize for SecretList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for SecretList {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<Secret>::deserialize(d).map(SecretList)
    }
}
