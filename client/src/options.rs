//! The option dictionaries (`a{sv}`) of the daemon's methods, built from
//! the command line.

use crate::cli::{
    AutoDismount, CreateArgs, FavoriteAddArgs, Format, Hash, MountArgs, Search, wire_name,
};
use crate::input::absolute;
use std::collections::HashMap;
use zbus::zvariant::Value;

pub type Options = HashMap<&'static str, Value<'static>>;

/// Which candidates a header search tries (and the PIM).
pub fn search(s: &Search, pim: u32) -> Options {
    let mut o = HashMap::new();
    if let Some(h) = s.hash {
        o.insert("hash", Value::from(wire_name(h)));
    }
    if let Some(e) = s.encryption {
        o.insert("encryption", Value::from(wire_name(e)));
    }
    if let Some(f) = s.format {
        o.insert("format", Value::from(wire_name(f)));
    }
    if let Some(b) = &s.backend {
        o.insert("backend", Value::from(b.clone()));
    }
    if pim != 0 {
        o.insert("pim", Value::from(pim));
    }
    o
}

/// As `Mount` options and favorite keys (the same names).
fn auto_dismount(a: &AutoDismount) -> [(&'static str, Value<'static>); 4] {
    [
        ("dismount_on_logout", Value::from(a.dismount_on_logout)),
        (
            "dismount_before_sleep",
            Value::from(a.dismount_before_sleep),
        ),
        (
            "dismount_idle_seconds",
            Value::from(a.dismount_idle.unwrap_or(0)),
        ),
        ("force_dismount", Value::from(a.force_dismount)),
    ]
}

/// `Mount`'s options, less the hidden volume's password.
pub fn mount(a: &MountArgs) -> Options {
    let mut o = search(&a.search, a.secrets.pim);
    o.insert("readonly", Value::from(a.readonly));
    o.insert("filesystem", Value::from(wire_name(a.filesystem)));
    o.insert("allow_non_empty", Value::from(a.allow_non_empty));
    o.insert("discard", Value::from(a.discard));
    o.insert("cache", Value::from(a.cache));
    o.insert("use_cache", Value::from(a.cached));
    o.extend(auto_dismount(&a.auto_dismount));
    if let Some(m) = &a.mount_point {
        o.insert("mount_point", Value::from(absolute(m)));
    }
    o
}

/// The password that protects a hidden volume during a mount.
pub fn protect_hidden(o: &mut Options, password: &[u8]) {
    o.insert("protect_hidden_password", Value::from(password.to_vec()));
}

/// `Create`'s options for the new volume.
pub fn create(a: &CreateArgs) -> Options {
    let mut o = HashMap::new();
    o.insert("format", Value::from(wire_name(a.format)));
    o.insert("encryption", Value::from(wire_name(a.encryption)));
    o.insert("hash", Value::from(wire_name(a.hash)));
    o.insert("filesystem", Value::from(wire_name(a.filesystem)));
    o.insert("quick", Value::from(a.quick));
    if a.sector_size != 0 {
        o.insert("sector_size", Value::from(a.sector_size));
    }
    if a.secrets.pim != 0 {
        o.insert("pim", Value::from(a.secrets.pim));
    }
    o
}

/// `Create`'s options for a hidden volume: its size and the outer
/// volume's credentials.
pub fn create_hidden(
    o: &mut Options,
    size: u64,
    outer_password: &[u8],
    outer_pim: u32,
    outer_keyfiles: Vec<Vec<u8>>,
) {
    o.insert("outer_password", Value::from(outer_password.to_vec()));
    o.insert("hidden_size", Value::from(size));
    if outer_pim != 0 {
        o.insert("outer_pim", Value::from(outer_pim));
    }
    if !outer_keyfiles.is_empty() {
        o.insert("outer_keyfiles", Value::from(outer_keyfiles));
    }
}

/// `ChangePassword`'s options for the new credentials.
pub fn new_credentials(pim: u32, hash: Option<Hash>, format: Option<Format>) -> Options {
    let mut n = HashMap::new();
    if pim != 0 {
        n.insert("pim", Value::from(pim));
    }
    if let Some(h) = hash {
        n.insert("hash", Value::from(wire_name(h)));
    }
    if let Some(f) = format {
        n.insert("format", Value::from(wire_name(f)));
    }
    n
}

/// A favorite as `AddFavorite` takes it, kept under `host`.
pub fn favorite(a: &FavoriteAddArgs, host: &str) -> Options {
    let mut d: Options = HashMap::new();
    d.insert("name", Value::from(a.name.clone()));
    d.insert("host", Value::from(host.to_owned()));
    let strings = [
        ("mount_point", a.mount_point.as_deref().map(absolute)),
        ("backend", a.backend.clone()),
        ("filesystem", a.filesystem.map(wire_name)),
        ("password_file", a.password_file.as_deref().map(absolute)),
    ];
    for (k, v) in strings {
        if let Some(v) = v {
            d.insert(k, Value::from(v));
        }
    }
    for (k, v) in [
        ("readonly", a.readonly),
        ("discard", a.discard),
        ("protect_hidden", a.protect_hidden),
        ("auto_mount", a.auto_mount),
    ] {
        d.insert(k, Value::from(v));
    }
    d.insert("pim", Value::from(a.pim));
    d.extend(auto_dismount(&a.auto_dismount));
    if !a.keyfiles.is_empty() {
        let k: Vec<String> = a.keyfiles.iter().map(|p| absolute(p)).collect();
        d.insert("keyfiles", Value::from(k));
    }
    d
}

/// `Mount`'s options for a favorite (the daemon adds its settings).
pub fn favorite_mount(name: &str, system: bool, pim: u32, hidden: Option<&[u8]>) -> Options {
    let mut o: Options = HashMap::new();
    o.insert("favorite", Value::from(name.to_owned()));
    o.insert("favorite_system", Value::from(system));
    o.insert("pim", Value::from(pim));
    if let Some(h) = hidden {
        protect_hidden(&mut o, h);
    }
    o
}
