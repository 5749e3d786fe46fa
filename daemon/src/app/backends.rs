//! The cipher backends and the policy that chooses them, as callers see
//! them, and a new policy applied at once.

use super::App;
use crate::error::Result;
use tcd_proto::contract::rows::{BackendRow, PolicyReply};

/// Whether the processor has AES instructions (TrueCrypt's "hardware
/// acceleration for AES").
pub fn cpu_has_aes() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("aes")
    }
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("aes")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// What applying a new policy did: the volumes now on other backends,
/// and a note for each volume that keeps its old backends until
/// dismounted.
pub struct PolicyApplied {
    pub moved: Vec<crate::mounts::Mounted>,
    pub kept: Vec<String>,
    /// The policy in force differs from the one before.
    pub changed: bool,
}

/// The longest policy text taken.
pub const MAX_POLICY_BYTES: usize = 64 * 1024;

impl App {
    /// Every backend file found, loaded or not.
    pub fn backend_rows(&self) -> Vec<BackendRow> {
        let policy = self.backends.policy();
        self.backends
            .catalog
            .found
            .iter()
            .map(|f| {
                let file = f.file.display().to_string();
                match &f.described {
                    Ok(d) => BackendRow {
                        name: d.name.clone(),
                        description: d.description.clone(),
                        version: d.version.clone(),
                        file,
                        sha256: f.sha256.clone(),
                        uses_cpu_crypto: d.uses_cpu_crypto,
                        available: d.available,
                        allowed: policy.allows(f),
                        loaded: f.is_loaded(),
                        ciphers: d.ciphers.clone(),
                        skipped: String::new(),
                    },
                    Err(why) => BackendRow {
                        file,
                        sha256: f.sha256.clone(),
                        skipped: why.clone(),
                        ..Default::default()
                    },
                }
            })
            .collect()
    }

    /// The policy in force and where it lives.
    pub fn policy_reply(&self) -> PolicyReply {
        let p = self.backends.policy();
        PolicyReply {
            text: p.to_text(),
            file: self.backends.policy_path().display().to_string(),
            hardware_acceleration: p.hardware_acceleration.name().to_owned(),
            all_allowed: p.allowed.is_none(),
            allowed: p.allowed.clone().unwrap_or_default(),
            prefer: p.prefer.clone(),
        }
    }

    /// Replaces the policy and applies it at once: mounted volumes move to
    /// allowed backends without a dismount. (Blocks: volumes are keyed
    /// again.)
    pub fn set_policy(&self, text: &str) -> Result<PolicyApplied> {
        if text.len() > MAX_POLICY_BYTES {
            return Err(crate::Error::InvalidArgument(
                "a policy of more than 64 KiB".into(),
            ));
        }
        let applied = self.backends.set(text, &self.table)?;
        Ok(PolicyApplied {
            moved: applied.moved,
            kept: applied.kept,
            changed: applied.changed,
        })
    }
}
