//! A favorite volume, one vocabulary for every side: the daemon's
//! favorites files (TOML), the `a{sv}` of `ListFavorites` and
//! `AddFavorite` (keys as in the file), and what `tcctl` prints.

use super::options::VolumeFormat;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use zvariant::{OwnedValue, Value};

/// A favorite as an `a{sv}`.
pub type Dict = HashMap<String, OwnedValue>;

/// One favorite.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Favorite {
    /// Its label, unique among one owner's favorites.
    pub name: String,
    /// A container file (absolute path) or a device by a stable name
    /// (`/dev/disk/by-id/…`, `/dev/disk/by-partuuid/…`).
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_point: Option<String>,
    /// VeraCrypt's slot (1 to 64) it mounts in; without a mount point, its
    /// default mount point is that slot's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<u32>,
    /// Read-only. A system-encryption favorite added without this key
    /// is read-only; `false` given in so many words mounts it read-write.
    #[serde(default)]
    pub readonly: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// "auto" (mount what blkid finds) or "none" (block device only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<String>,
    #[serde(default)]
    pub discard: bool,
    /// Keyfile paths, read by whoever mounts (the client for a user's
    /// mount; the daemon for a system favorite it mounts itself).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keyfiles: Vec<String>,
    #[serde(default)]
    pub pim: u32,
    /// Only this format is tried ("veracrypt" or "truecrypt", VeraCrypt's
    /// TrueCrypt mode); absent: both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<VolumeFormat>,
    /// A drive or partition under TrueCrypt's or VeraCrypt's system
    /// encryption, opened by its system header.
    #[serde(default)]
    pub system_encryption: bool,
    /// Ask for the hidden volume's password and protect it.
    #[serde(default)]
    pub protect_hidden: bool,
    /// The hidden volume's PIM, with `protect_hidden`; absent: the
    /// favorite's `pim`, as before the hidden volume had its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protect_hidden_pim: Option<u32>,
    /// The hidden volume's keyfile paths, with `protect_hidden`; read by
    /// the client that mounts, as `keyfiles` are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub protect_hidden_keyfiles: Vec<String>,
    /// System favorites: mounted by the daemon at start and when the
    /// device appears. User favorites: by `tcctl favorites mount --auto`
    /// when the user's session starts.
    #[serde(default)]
    pub auto_mount: bool,
    #[serde(default)]
    pub dismount_on_logout: bool,
    #[serde(default)]
    pub dismount_before_sleep: bool,
    /// Seconds with no I/O before an automatic dismount (0: never).
    #[serde(default)]
    pub dismount_idle_seconds: u32,
    /// Automatic dismounts go ahead even with files open.
    #[serde(default)]
    pub force_dismount: bool,
    /// The PRF and encryption it last opened with (kept by the daemon).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<String>,
    /// System favorites only: a root-only file holding the password, for
    /// mounts without anyone to ask (like crypttab's key file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_file: Option<String>,
}

/// A favorite as D-Bus sends it.
pub fn to_dict(f: &Favorite) -> Dict {
    let mut d = Dict::new();
    let Ok(toml::Value::Table(t)) = toml::Value::try_from(f) else {
        return d;
    };
    for (k, v) in t {
        let value: Option<Value<'static>> = match v {
            toml::Value::String(s) => Some(Value::from(s)),
            toml::Value::Boolean(b) => Some(Value::from(b)),
            toml::Value::Integer(i) => u32::try_from(i).ok().map(Value::from),
            toml::Value::Array(a) => Some(Value::from(
                a.into_iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect::<Vec<String>>(),
            )),
            _ => None,
        };
        if let Some(v) = value.and_then(|v| OwnedValue::try_from(v).ok()) {
            d.insert(k, v);
        }
    }
    d
}

/// Each key of a favorite and its D-Bus type.
pub const KEYS: &[(&str, &str)] = &[
    ("name", "s"),
    ("host", "s"),
    ("mount_point", "s"),
    ("slot", "u"),
    ("readonly", "b"),
    ("backend", "s"),
    ("filesystem", "s"),
    ("discard", "b"),
    ("keyfiles", "as"),
    ("pim", "u"),
    ("format", "s"),
    ("system_encryption", "b"),
    ("protect_hidden", "b"),
    ("protect_hidden_pim", "u"),
    ("protect_hidden_keyfiles", "as"),
    ("auto_mount", "b"),
    ("dismount_on_logout", "b"),
    ("dismount_before_sleep", "b"),
    ("dismount_idle_seconds", "u"),
    ("force_dismount", "b"),
    ("hash", "s"),
    ("encryption", "s"),
    ("password_file", "s"),
];

/// A favorite from what a caller sent; unknown keys and wrong types are
/// named in the error (a sentence for `InvalidArgument`).
pub fn from_dict(d: &Dict) -> Result<Favorite, String> {
    let mut t = toml::Table::new();
    for (k, v) in d {
        let Some((_, want)) = KEYS.iter().find(|(name, _)| name == k) else {
            let known: Vec<&str> = KEYS.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "favorite key {k:?} is unknown (known: {})",
                known.join(", ")
            ));
        };
        let got = v.value_signature().to_string();
        // A desktop may send a count as any integer type.
        let integer = matches!(
            &**v,
            Value::U16(_) | Value::I32(_) | Value::U64(_) | Value::I64(_)
        );
        if got != *want && !(*want == "u" && integer) {
            return Err(format!(
                "favorite key {k} must be of type {want}, not {got}"
            ));
        }
        let value = match &**v {
            Value::Str(s) => toml::Value::String(s.to_string()),
            Value::Bool(b) => toml::Value::Boolean(*b),
            Value::U32(n) => toml::Value::Integer(i64::from(*n)),
            Value::I32(n) => toml::Value::Integer(i64::from(*n)),
            Value::U16(n) => toml::Value::Integer(i64::from(*n)),
            Value::U64(n) => toml::Value::Integer(
                i64::try_from(*n).map_err(|_| format!("favorite key {k}: too large"))?,
            ),
            Value::I64(n) => toml::Value::Integer(*n),
            Value::Array(_) => {
                let list: Vec<String> = v
                    .try_clone()
                    .ok()
                    .and_then(|v| Vec::<String>::try_from(v).ok())
                    .ok_or_else(|| format!("favorite key {k}: a list of strings is needed"))?;
                toml::Value::Array(list.into_iter().map(toml::Value::String).collect())
            }
            other => {
                return Err(format!(
                    "favorite key {k}: unexpected type {}",
                    other.value_signature()
                ));
            }
        };
        t.insert(k.clone(), value);
    }
    let mut f: Favorite = toml::Value::Table(t)
        .try_into()
        .map_err(|e: toml::de::Error| format!("favorite: {}", e.message()))?;
    // A system drive is read-only unless the caller says otherwise, as
    // a mount with system_encryption is.
    if f.system_encryption && !d.contains_key("readonly") {
        f.readonly = true;
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_favorite_survives_the_trip_through_a_dict() {
        let f = Favorite {
            name: "work".into(),
            host: "/dev/disk/by-partuuid/ab-01".into(),
            mount_point: Some("/media/work".into()),
            slot: Some(3),
            readonly: true,
            keyfiles: vec!["/k/1".into(), "/k/2".into()],
            pim: 485,
            format: Some(VolumeFormat::TrueCrypt),
            system_encryption: true,
            protect_hidden: true,
            protect_hidden_pim: Some(9),
            protect_hidden_keyfiles: vec!["/k/3".into()],
            auto_mount: true,
            dismount_idle_seconds: 600,
            hash: Some("SHA-512".into()),
            encryption: Some("AES".into()),
            backend: Some("soft".into()),
            filesystem: Some("auto".into()),
            password_file: Some("/etc/tcd/keys/work".into()),
            ..Default::default()
        };
        let d = to_dict(&f);
        assert_eq!(from_dict(&d).unwrap(), f);
        // Every field travels, under the names and types KEYS gives.
        let mut keys: Vec<&str> = d.keys().map(String::as_str).collect();
        keys.sort();
        let mut known: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
        known.sort();
        assert_eq!(keys, known);
        for (k, t) in KEYS {
            assert_eq!(d[*k].value_signature().to_string(), *t, "{k}");
        }
    }

    #[test]
    fn a_system_favorite_is_read_only_unless_said_otherwise() {
        let s = |v: &str| OwnedValue::try_from(Value::from(v.to_owned())).unwrap();
        let mut d = Dict::new();
        d.insert("name".into(), s("win"));
        d.insert("host".into(), s("/dev/disk/by-id/ata-x-part2"));
        d.insert("format".into(), s("truecrypt"));
        d.insert("system_encryption".into(), OwnedValue::from(true));
        let f = from_dict(&d).unwrap();
        assert!(f.readonly);
        assert_eq!(f.format, Some(VolumeFormat::TrueCrypt));
        d.insert("readonly".into(), OwnedValue::from(false));
        assert!(!from_dict(&d).unwrap().readonly);
        d.insert("format".into(), s("luks"));
        let e = from_dict(&d).unwrap_err();
        assert!(e.contains("luks"), "{e}");
    }

    #[test]
    fn unknown_keys_and_wrong_types_are_named() {
        let mut d = Dict::new();
        d.insert("name".into(), OwnedValue::from(1u32));
        d.insert(
            "host".into(),
            OwnedValue::try_from(Value::from("/v")).unwrap(),
        );
        let e = from_dict(&d).unwrap_err();
        assert!(e.contains("key name must be of type s"), "{e}");
        let mut d = Dict::new();
        d.insert(
            "name".into(),
            OwnedValue::try_from(Value::from("a")).unwrap(),
        );
        d.insert(
            "host".into(),
            OwnedValue::try_from(Value::from("/v")).unwrap(),
        );
        d.insert("automount".into(), OwnedValue::from(true));
        let e = from_dict(&d).unwrap_err();
        assert!(e.contains("\"automount\" is unknown"), "{e}");
    }
}
