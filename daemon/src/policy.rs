//! The administrator's backend policy (`/etc/tcd/policy.toml`, its type
//! in [`tcd_proto::contract::policy`]): read from a file the daemon trusts,
//! and turned into the key-derivation bounds of a caller. A backend the
//! policy does not allow is never loaded into the daemon.

use crate::engine::catalog::{Found, Selection};
use crate::engine::loader::LoadedBackend;
use crate::error::{Error, Result};
use crate::volume::kdf::KdfLimits;
use std::path::Path;
use std::sync::Arc;
pub use tcd_proto::contract::policy::{Acceleration, Candidate, Limits, Policy};

/// Parses policy text; `source_name` names it in errors (a file path).
pub fn parse(text: &str, source_name: &str) -> Result<Policy> {
    Policy::parse(text).map_err(|e| Error::Policy {
        source_name: source_name.to_owned(),
        line: e.line,
        column: e.column,
        message: e.message,
    })
}

/// The policy file once `text` (which parsed as `policy`) is set: the
/// policy's own rendering (what `tcctl policy set --allow` and the
/// desktop application send) changes the settings of the file `now` in
/// place; any other text is a file an administrator wrote (`tcctl policy
/// set --file`) and is written as it is, comments included.
pub fn new_file(now: &str, text: &str, policy: &Policy) -> String {
    if text == policy.to_text() {
        edit(now, policy)
    } else {
        text.to_owned()
    }
}

/// The policy file's text with `policy`'s settings in it: the file's
/// comments, commented-out examples and layout stay, settings change in
/// place, settings the policy no longer has go, new ones are added. A
/// file that is empty or does not parse is written afresh.
pub fn edit(file: &str, policy: &Policy) -> String {
    let fresh = policy.to_text();
    let (Ok(mut doc), Ok(new)) = (
        file.parse::<toml_edit::DocumentMut>(),
        fresh.parse::<toml_edit::DocumentMut>(),
    ) else {
        return fresh;
    };
    if file.trim().is_empty() {
        return fresh;
    }
    merge(doc.as_table_mut(), new.as_table());
    doc.to_string()
}

/// Makes `old` hold `new`'s keys and values, keeping `old`'s decoration.
fn merge(old: &mut toml_edit::Table, new: &toml_edit::Table) {
    let gone: Vec<String> = old
        .iter()
        .filter(|(k, _)| !new.contains_key(k))
        .map(|(k, _)| k.to_owned())
        .collect();
    for k in gone {
        old.remove(&k);
    }
    for (k, item) in new.iter() {
        match (old.get_mut(k), item) {
            (Some(toml_edit::Item::Table(o)), toml_edit::Item::Table(n)) => merge(o, n),
            (Some(toml_edit::Item::Value(o)), toml_edit::Item::Value(n)) => {
                if o.to_string().trim() != n.to_string().trim() {
                    let decor = o.decor().clone();
                    *o = n.clone();
                    *o.decor_mut() = decor;
                }
            }
            (Some(o), n) => *o = n.clone(),
            (None, n) => {
                old.insert(k, n.clone());
            }
        }
    }
}

/// The key-derivation bounds for a caller: VeraCrypt's whole range for an
/// administrator, the policy's for anyone else.
pub fn kdf_limits(limits: &Limits, admin: bool) -> KdfLimits {
    if admin {
        return KdfLimits::default();
    }
    KdfLimits {
        argon2_max_memory_kib: limits.argon2_max_memory_mib.saturating_mul(1024),
        max_pim: limits.max_pim,
        argon2_max_pim: limits.argon2_max_pim,
    }
}

/// Reads the policy file; a missing file is the default policy. The
/// file, like a backend, must be owned by root (or the daemon's user)
/// and writable by no one else: whoever can write it decides which
/// code handles every key.
pub fn load(path: &Path) -> Result<Policy> {
    let trusted = std::fs::metadata(path).map(|m| crate::trust::check_meta(&m));
    if let Ok(Err(problem)) = trusted {
        return Err(Error::Policy {
            source_name: path.display().to_string(),
            line: 1,
            column: 1,
            message: format!("not trusted: {problem}"),
        });
    }
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, &path.display().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Policy::default()),
        Err(e) => Err(Error::Io {
            what: format!("cannot read the policy {}", path.display()),
            source: e,
        }),
    }
}

/// The engine's catalog asks the policy which backends to load and in
/// which order.
impl Selection for Policy {
    fn allows(&self, backend: &Found) -> bool {
        Policy::allows(self, backend)
    }
    fn order(&self, backends: &mut [Arc<LoadedBackend>]) {
        Policy::order(self, backends)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_keeps_the_files_comments_and_changes_the_setting() {
        let shipped = include_str!("../../dist/etc/policy.toml");
        let mut p = parse(shipped, "shipped").expect("parses");
        p.hardware_acceleration = tcd_proto::contract::policy::Acceleration::Disabled;
        let off = edit(shipped, &p);
        assert_eq!(
            off,
            shipped.replace(
                "hardware_acceleration = \"auto\"",
                "hardware_acceleration = \"disabled\""
            )
        );
        p.hardware_acceleration = tcd_proto::contract::policy::Acceleration::Auto;
        p.allowed = Some(vec!["soft".into()]);
        let soft = edit(&off, &p);
        assert!(
            soft.contains("# allowed = [\"aesni\", \"soft\"]\n"),
            "{soft}"
        );
        assert!(soft.contains("allowed = [\"soft\"]\n"), "{soft}");
        assert_eq!(parse(&soft, "edited").expect("parses"), p);
        p.allowed = None;
        assert_eq!(edit(&soft, &p), shipped);
        assert_eq!(edit("", &p), p.to_text());
    }

    #[test]
    fn errors_name_the_file_their_line_and_column() {
        let text = "allowed = [\"soft\"]\nhardware_acceleration = \"sometimes\"\n";
        match parse(text, "/etc/tcd/policy.toml") {
            Err(Error::Policy {
                source_name,
                line,
                column,
                ..
            }) => {
                assert_eq!((line, column), (2, 25));
                assert_eq!(source_name, "/etc/tcd/policy.toml");
            }
            other => panic!("{other:?}"),
        }
        let e = parse("filesystems = [\"ext4\", \"../x\"]\n", "t").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
    }

    #[test]
    fn a_policy_file_others_may_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        std::fs::write(&path, "hardware_acceleration = \"auto\"\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(load(&path).unwrap(), Policy::default());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        match load(&path) {
            Err(Error::Policy { message, .. }) => assert!(message.contains("not trusted")),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            load(&dir.path().join("absent.toml")).unwrap(),
            Policy::default()
        );
    }

    #[test]
    fn limits_default_bound_users_and_not_root() {
        let p = parse("[limits]\nmax_pim = 500\n", "t").unwrap();
        let user = kdf_limits(&p.limits, false);
        assert_eq!(user.max_pim, 500);
        assert_eq!(user.argon2_max_memory_kib, 1024 * 1024);
        assert_eq!(kdf_limits(&p.limits, true), KdfLimits::default());
        // VeraCrypt's defaults pass the default bounds.
        let d = kdf_limits(&Limits::default(), false);
        assert!(d.pbkdf2_allowed(0).is_ok() && d.pbkdf2_allowed(485).is_ok());
        assert!(d.argon2_allowed(0).is_ok() && d.argon2_allowed(12).is_ok());
        assert!(d.request_allowed(None, 2_147_468).is_err());
    }
}
