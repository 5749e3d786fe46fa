//! The administrator's backend policy (`/etc/tcd/policy.toml`): which
//! backends may serve ciphers, in which order, and TrueCrypt's "accelerate
//! AES with the processor" switch. A backend the policy does not allow is
//! never loaded into the daemon. It also bounds the key-derivation work a
//! caller who is not an administrator may ask for (`[limits]`).

use crate::engine::catalog::{Candidate, Selection};
use crate::engine::loader::LoadedBackend;
use crate::error::{Error, Result};
use crate::volume::kdf::KdfLimits;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;

/// TrueCrypt's checkbox: `auto` uses processor crypto instructions where the
/// CPU has them, `disabled` keeps every key in software.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Acceleration {
    #[default]
    Auto,
    Disabled,
}

impl Acceleration {
    pub fn name(self) -> &'static str {
        match self {
            Acceleration::Auto => "auto",
            Acceleration::Disabled => "disabled",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    #[serde(default)]
    pub hardware_acceleration: Acceleration,
    /// Backend names that may be used; absent: every backend found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<Vec<String>>,
    /// Backend names in order of preference; those not named follow, the
    /// ones using processor crypto first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefer: Vec<String>,
    /// Filesystem types users' volumes may be mounted with, beyond the
    /// built-in list (ext2/3/4, btrfs, xfs, vfat, exfat, ntfs, ntfs3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filesystems: Vec<String>,
    /// Bounds on header searches.
    #[serde(default)]
    pub limits: Limits,
}

/// What header searches may cost. The PIM and memory bounds apply to
/// callers who are not administrators (uid 0); the concurrency bounds to
/// every caller but uid 0 (the daemon's own automatic mounts included
/// under their owner).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// The largest PIM with a PBKDF2 PRF. VeraCrypt's default iteration
    /// count is that of PIM 485; 2000 is four times its work.
    pub max_pim: u32,
    /// The largest PIM with Argon2id. VeraCrypt's default is PIM 12 (416
    /// MiB, 6 passes); 31 is its largest memory (1 GiB) at 13 passes.
    pub argon2_max_pim: u32,
    /// The most memory one Argon2id trial may take, in MiB (VeraCrypt's
    /// largest is 1024).
    pub argon2_max_memory_mib: u32,
    /// Header searches (mount, header information, password change,
    /// header backup and restore) one user may run at once.
    pub searches_per_user: u32,
    /// Header searches the daemon runs at once for all users.
    pub searches: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pim: 2000,
            argon2_max_pim: 31,
            argon2_max_memory_mib: 1024,
            searches_per_user: 2,
            searches: 8,
        }
    }
}

impl Limits {
    /// The key-derivation bounds for a caller: VeraCrypt's whole range for
    /// an administrator, the policy's for anyone else.
    pub fn kdf(&self, admin: bool) -> KdfLimits {
        if admin {
            return KdfLimits::default();
        }
        KdfLimits {
            argon2_max_memory_kib: self.argon2_max_memory_mib.saturating_mul(1024),
            max_pim: self.max_pim,
            argon2_max_pim: self.argon2_max_pim,
        }
    }
}

impl Policy {
    /// Parses policy text; `source_name` names it in errors (a file path).
    pub fn parse(text: &str, source_name: &str) -> Result<Policy> {
        let policy: Policy = toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map_or((1, 1), |span| line_and_column(text, span.start));
            Error::Policy {
                source_name: source_name.to_owned(),
                line,
                column,
                message: e.message().trim().to_owned(),
            }
        })?;
        for name in policy.allowed.iter().flatten().chain(&policy.prefer) {
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                let at = text.find(name.as_str()).unwrap_or(0);
                let (line, column) = line_and_column(text, at);
                return Err(Error::Policy {
                    source_name: source_name.to_owned(),
                    line,
                    column,
                    message: format!("{name:?} is not a backend name"),
                });
            }
        }
        for fs in &policy.filesystems {
            if fs.is_empty()
                || !fs
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.')
            {
                let at = text.find(fs.as_str()).unwrap_or(0);
                let (line, column) = line_and_column(text, at);
                return Err(Error::Policy {
                    source_name: source_name.to_owned(),
                    line,
                    column,
                    message: format!("{fs:?} is not a filesystem type"),
                });
            }
        }
        let l = &policy.limits;
        for (key, value, min) in [
            ("max_pim", l.max_pim, 0),
            ("argon2_max_pim", l.argon2_max_pim, 0),
            ("argon2_max_memory_mib", l.argon2_max_memory_mib, 64),
            ("searches_per_user", l.searches_per_user, 1),
            ("searches", l.searches, 1),
        ] {
            if value < min {
                let at = text.find(key).unwrap_or(0);
                let (line, column) = line_and_column(text, at);
                return Err(Error::Policy {
                    source_name: source_name.to_owned(),
                    line,
                    column,
                    message: format!("{key} must be at least {min}"),
                });
            }
        }
        Ok(policy)
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
            Ok(text) => Policy::parse(&text, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Policy::default()),
            Err(e) => Err(Error::Io {
                what: format!("cannot read the policy {}", path.display()),
                source: e,
            }),
        }
    }

    /// The policy as TOML, as it is written to its file.
    pub fn to_text(&self) -> String {
        let body = toml::to_string(self).unwrap_or_default();
        format!("# tcd backend policy (see docs/POLICY.md)\n{body}")
    }

    pub fn allows(&self, b: &(impl Candidate + ?Sized)) -> bool {
        if self.hardware_acceleration == Acceleration::Disabled && b.uses_cpu_crypto() {
            return false;
        }
        self.allowed
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == b.name()))
    }

    /// Sorts allowed backends into the order of preference.
    pub fn order<T: Candidate>(&self, backends: &mut [T]) {
        let rank = |b: &T| {
            self.prefer
                .iter()
                .position(|n| n == b.name())
                .unwrap_or(usize::MAX)
        };
        backends.sort_by(|a, b| {
            rank(a)
                .cmp(&rank(b))
                .then_with(|| b.uses_cpu_crypto().cmp(&a.uses_cpu_crypto()))
                .then_with(|| a.name().cmp(b.name()))
        });
    }
}

/// The engine's catalog asks the policy which backends to load and in
/// which order.
impl Selection for Policy {
    fn allows(&self, backend: &dyn Candidate) -> bool {
        Policy::allows(self, backend)
    }
    fn order(&self, backends: &mut [Arc<LoadedBackend>]) {
        Policy::order(self, backends)
    }
}

/// 1-based line and column (in characters) of byte `at` of `text`.
fn line_and_column(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct B(&'static str, bool);
    impl Candidate for B {
        fn name(&self) -> &str {
            self.0
        }
        fn uses_cpu_crypto(&self) -> bool {
            self.1
        }
    }

    #[test]
    fn empty_text_is_the_default_policy() {
        let p = Policy::parse("", "t").unwrap();
        assert_eq!(p, Policy::default());
        assert!(p.allows(&B("aesni", true)) && p.allows(&B("soft", false)));
    }

    #[test]
    fn disabled_acceleration_refuses_processor_crypto_whatever_is_allowed() {
        let p = Policy::parse(
            "hardware_acceleration = \"disabled\"\nallowed = [\"aesni\", \"soft\"]\n",
            "t",
        )
        .unwrap();
        assert!(!p.allows(&B("aesni", true)));
        assert!(p.allows(&B("soft", false)));
        assert!(!p.allows(&B("other", false)), "not in the allowed list");
    }

    #[test]
    fn preference_comes_first_then_processor_crypto_then_name() {
        let p = Policy::parse("prefer = [\"soft\"]", "t").unwrap();
        let mut v = vec![B("zeta", false), B("aesni", true), B("soft", false)];
        p.order(&mut v);
        let names: Vec<_> = v.iter().map(|b| b.0).collect();
        assert_eq!(names, ["soft", "aesni", "zeta"]);
    }

    #[test]
    fn errors_name_their_line_and_column() {
        let text = "allowed = [\"soft\"]\nhardware_acceleration = \"sometimes\"\n";
        match Policy::parse(text, "/etc/tcd/policy.toml") {
            Err(Error::Policy { line, column, .. }) => assert_eq!((line, column), (2, 25)),
            other => panic!("{other:?}"),
        }
        match Policy::parse("\n\ncolour = 1\n", "t") {
            Err(Error::Policy { line, column, .. }) => assert_eq!((line, column), (3, 1)),
            other => panic!("{other:?}"),
        }
        match Policy::parse("prefer = [\"a b\"]", "t") {
            Err(Error::Policy { line, column, .. }) => assert_eq!((line, column), (1, 12)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_shipped_example_parses_as_the_default() {
        let text = include_str!("../../dist/etc/policy.toml");
        assert_eq!(Policy::parse(text, "dist").unwrap(), Policy::default());
    }

    #[test]
    fn a_policy_file_others_may_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("policy.toml");
        std::fs::write(&path, "hardware_acceleration = \"auto\"\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(Policy::load(&path).unwrap(), Policy::default());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        match Policy::load(&path) {
            Err(Error::Policy { message, .. }) => assert!(message.contains("not trusted")),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            Policy::load(&dir.path().join("absent.toml")).unwrap(),
            Policy::default()
        );
    }

    #[test]
    fn text_round_trips() {
        let p = Policy {
            hardware_acceleration: Acceleration::Disabled,
            allowed: Some(vec!["soft".into()]),
            prefer: vec!["soft".into()],
            filesystems: vec!["squashfs".into()],
            limits: Limits {
                max_pim: 100,
                searches: 3,
                ..Limits::default()
            },
        };
        assert_eq!(Policy::parse(&p.to_text(), "t").unwrap(), p);
    }

    #[test]
    fn limits_default_bound_users_and_not_root() {
        let p = Policy::parse("[limits]\nmax_pim = 500\n", "t").unwrap();
        assert_eq!(p.limits.max_pim, 500);
        assert_eq!(p.limits.argon2_max_pim, Limits::default().argon2_max_pim);
        let user = p.limits.kdf(false);
        assert_eq!(user.max_pim, 500);
        assert_eq!(user.argon2_max_memory_kib, 1024 * 1024);
        assert_eq!(p.limits.kdf(true), KdfLimits::default());
        // VeraCrypt's defaults pass the default bounds.
        let d = Limits::default().kdf(false);
        assert!(d.pbkdf2_allowed(0).is_ok() && d.pbkdf2_allowed(485).is_ok());
        assert!(d.argon2_allowed(0).is_ok() && d.argon2_allowed(12).is_ok());
        assert!(d.request_allowed(None, 2_147_468).is_err());
        match Policy::parse("[limits]\nsearches = 0\n", "t") {
            Err(Error::Policy { line, message, .. }) => {
                assert_eq!(line, 2);
                assert!(message.contains("searches"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(Policy::parse("[limits]\nmax_memory = 1\n", "t").is_err());
    }

    #[test]
    fn a_filesystem_name_that_is_no_type_is_refused_with_its_place() {
        let e = Policy::parse("filesystems = [\"ext4\", \"../x\"]\n", "t").unwrap_err();
        assert!(
            e.to_string().contains("\"../x\" is not a filesystem type"),
            "{e}"
        );
        assert!(e.to_string().contains("line 1"), "{e}");
    }
}
