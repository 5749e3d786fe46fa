//! The administrator's backend policy (`/etc/tcd/policy.toml`) as a type
//! with its TOML form: which backends may serve ciphers, in which order,
//! TrueCrypt's "accelerate AES with the processor" switch, the extra
//! filesystem types users may mount, and the bounds on header searches
//! (`[limits]`). The daemon reads and applies it; a client writes it.

use serde::{Deserialize, Serialize};

/// A policy text that does not parse: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyError {
    /// 1-based.
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for PolicyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for PolicyError {}

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
    pub const ALL: [Acceleration; 2] = [Acceleration::Auto, Acceleration::Disabled];
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
    /// The PKCS #11 library clients read token keyfiles with when the
    /// user names none (an absolute path). The daemon never loads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_library: Option<String>,
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

/// What the policy needs to know of a backend to judge it.
pub trait Candidate {
    fn name(&self) -> &str;
    fn uses_cpu_crypto(&self) -> bool;
}

impl<T: Candidate> Candidate for std::sync::Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn uses_cpu_crypto(&self) -> bool {
        (**self).uses_cpu_crypto()
    }
}

impl Policy {
    /// Parses policy text.
    pub fn parse(text: &str) -> Result<Policy, PolicyError> {
        let policy: Policy = toml::from_str(text).map_err(|e| {
            let (line, column) = e
                .span()
                .map_or((1, 1), |span| line_and_column(text, span.start));
            PolicyError {
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
                return Err(PolicyError {
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
                return Err(PolicyError {
                    line,
                    column,
                    message: format!("{fs:?} is not a filesystem type"),
                });
            }
        }
        if let Some(lib) = &policy.token_library
            && !lib.starts_with('/')
        {
            let at = text.find("token_library").unwrap_or(0);
            let (line, column) = line_and_column(text, at);
            return Err(PolicyError {
                line,
                column,
                message: format!("token_library {lib:?} is not an absolute path"),
            });
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
                return Err(PolicyError {
                    line,
                    column,
                    message: format!("{key} must be at least {min}"),
                });
            }
        }
        Ok(policy)
    }

    /// The policy as TOML, as it is written to its file.
    pub fn to_text(&self) -> String {
        let body = toml::to_string(self).unwrap_or_default();
        format!("# tcd backend policy (see /usr/share/doc/tcd/docs/POLICY.md)\n{body}")
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
        let p = Policy::parse("").unwrap();
        assert_eq!(p, Policy::default());
        assert!(p.allows(&B("aesni", true)) && p.allows(&B("soft", false)));
    }

    #[test]
    fn disabled_acceleration_refuses_processor_crypto_whatever_is_allowed() {
        let p = Policy::parse(
            "hardware_acceleration = \"disabled\"\nallowed = [\"aesni\", \"soft\"]\n",
        )
        .unwrap();
        assert!(!p.allows(&B("aesni", true)));
        assert!(p.allows(&B("soft", false)));
        assert!(!p.allows(&B("other", false)), "not in the allowed list");
    }

    #[test]
    fn preference_comes_first_then_processor_crypto_then_name() {
        let p = Policy::parse("prefer = [\"soft\"]").unwrap();
        let mut v = vec![B("zeta", false), B("aesni", true), B("soft", false)];
        p.order(&mut v);
        let names: Vec<_> = v.iter().map(|b| b.0).collect();
        assert_eq!(names, ["soft", "aesni", "zeta"]);
    }

    #[test]
    fn errors_name_their_line_and_column() {
        let at = |text: &str| {
            let e = Policy::parse(text).unwrap_err();
            (e.line, e.column)
        };
        assert_eq!(
            at("allowed = [\"soft\"]\nhardware_acceleration = \"sometimes\"\n"),
            (2, 25)
        );
        assert_eq!(at("\n\ncolour = 1\n"), (3, 1));
        assert_eq!(at("prefer = [\"a b\"]"), (1, 12));
        let e = Policy::parse("filesystems = [\"ext4\", \"../x\"]\n").unwrap_err();
        assert!(
            e.message.contains("\"../x\" is not a filesystem type"),
            "{e}"
        );
        let e = Policy::parse("[limits]\nsearches = 0\n").unwrap_err();
        assert!(e.line == 2 && e.message.contains("searches"), "{e}");
        assert!(Policy::parse("[limits]\nmax_memory = 1\n").is_err());
        let e = Policy::parse("token_library = \"libsofthsm2.so\"\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 1));
        assert!(e.message.contains("not an absolute path"), "{e}");
    }

    #[test]
    fn the_shipped_example_parses_as_the_default() {
        let text = include_str!("../../../dist/etc/policy.toml");
        assert_eq!(Policy::parse(text).unwrap(), Policy::default());
    }

    #[test]
    fn text_round_trips() {
        let p = Policy {
            hardware_acceleration: Acceleration::Disabled,
            allowed: Some(vec!["soft".into()]),
            prefer: vec!["soft".into()],
            filesystems: vec!["squashfs".into()],
            token_library: Some("/usr/lib/softhsm/libsofthsm2.so".into()),
            limits: Limits {
                max_pim: 100,
                searches: 3,
                ..Limits::default()
            },
        };
        assert_eq!(Policy::parse(&p.to_text()).unwrap(), p);
    }
}
