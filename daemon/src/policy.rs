//! The administrator's backend policy (`/etc/tcd/policy.toml`): which
//! backends may serve ciphers, in which order, and TrueCrypt's "accelerate
//! AES with the processor" switch. A backend the policy does not allow is
//! never loaded into the daemon.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

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
}

/// What the policy needs to know of a backend to judge it.
pub trait Candidate {
    fn name(&self) -> &str;
    fn uses_cpu_crypto(&self) -> bool;
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
        Ok(policy)
    }

    /// Reads the policy file; a missing file is the default policy. The
    /// file, like a backend, must be owned by root (or the daemon's user)
    /// and writable by no one else: whoever can write it decides which
    /// code handles every key.
    pub fn load(path: &Path) -> Result<Policy> {
        let trusted = std::fs::metadata(path).map(|m| crate::engine::loader::check_meta(&m));
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

    pub fn allows(&self, b: &impl Candidate) -> bool {
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
        };
        assert_eq!(Policy::parse(&p.to_text(), "t").unwrap(), p);
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
