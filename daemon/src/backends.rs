//! The backends the daemon may use: the folder's catalog judged by the
//! policy, applied to the engine and to every mounted volume at once when
//! the policy changes.

use crate::engine::catalog::Catalog;
use crate::error::{Error, Result};
use crate::mounts::{Applied, MountTable};
use crate::policy::{Acceleration, Candidate, Policy};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub struct Backends {
    pub catalog: Catalog,
    policy_path: PathBuf,
    /// The last good policy.
    policy: Mutex<Policy>,
}

impl Backends {
    /// Describes the backends of `dir` and reads the policy at
    /// `policy_path`. Skipped backends are logged.
    pub fn discover(dir: &Path, prober: &Path, policy_path: &Path) -> Result<Backends> {
        let policy = crate::policy::load(policy_path)?;
        let catalog = Catalog::discover(dir, prober)?;
        for f in &catalog.found {
            match &f.described {
                Err(why) => tracing::warn!(file = %f.file.display(), "backend skipped: {why}"),
                Ok(d) if !d.available => tracing::info!(
                    backend = %d.name,
                    "backend not available on this processor"
                ),
                Ok(d) if !policy.allows(f) => {
                    tracing::info!(backend = %d.name, "backend not allowed by the policy: not loaded")
                }
                Ok(_) => {}
            }
        }
        Ok(Backends {
            catalog,
            policy_path: policy_path.to_path_buf(),
            policy: Mutex::new(policy),
        })
    }

    pub fn policy(&self) -> Policy {
        self.policy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn policy_path(&self) -> &Path {
        &self.policy_path
    }

    /// Loads what the current policy allows into `table`'s engine.
    pub fn install(&self, table: &MountTable) -> Result<Applied> {
        self.apply(self.policy(), table)
    }

    /// Validates `text`, writes it to the policy file and applies it.
    pub fn set(&self, text: &str, table: &MountTable) -> Result<Applied> {
        let policy = crate::policy::parse(text, "the new policy")?;
        // Refuse a policy that leaves nothing to serve ciphers before it
        // reaches the file.
        self.selectable(&policy)?;
        let now = std::fs::read_to_string(&self.policy_path).unwrap_or_default();
        write_atomically(
            &self.policy_path,
            &crate::policy::new_file(&now, text, &policy),
        )?;
        self.apply(policy, table)
    }

    /// Reads the policy file again (SIGHUP). On an error the last good
    /// policy stays.
    pub fn reload(&self, table: &MountTable) -> Result<Applied> {
        let policy = crate::policy::load(&self.policy_path)?;
        self.selectable(&policy)?;
        self.apply(policy, table)
    }

    /// A backend asked for by name must exist and be allowed.
    pub fn check_forced(&self, name: &str) -> Result<()> {
        match self.catalog.by_name(name) {
            None => Err(Error::InvalidArgument(format!("no backend named {name}"))),
            Some(f) if !self.policy().allows(f) => Err(Error::BackendNotAllowed(name.to_owned())),
            Some(_) => Ok(()),
        }
    }

    fn selectable(&self, policy: &Policy) -> Result<()> {
        // A preference for a backend the policy keeps out would never be
        // followed: said, not left to be found out.
        for name in &policy.prefer {
            match self.catalog.by_name(name) {
                None => {
                    return Err(Error::InvalidArgument(format!(
                        "the policy prefers {name}, and there is no backend of that name"
                    )));
                }
                Some(f) if !policy.allows(f) => {
                    let why = if policy.hardware_acceleration == Acceleration::Disabled
                        && f.uses_cpu_crypto()
                    {
                        ": hardware_acceleration = \"disabled\" keeps out backends that use \
                         processor crypto instructions"
                    } else {
                        ""
                    };
                    return Err(Error::InvalidArgument(format!(
                        "the policy prefers {name}, which it does not allow{why}"
                    )));
                }
                Some(_) => {}
            }
        }
        let any = self
            .catalog
            .found
            .iter()
            .any(|f| f.described.as_ref().is_ok_and(|d| d.available) && policy.allows(f));
        if any {
            Ok(())
        } else {
            Err(Error::InvalidArgument(
                "the policy allows no usable backend: refused".into(),
            ))
        }
    }

    fn apply(&self, policy: Policy, table: &MountTable) -> Result<Applied> {
        let (chosen, failed) = self.catalog.select(&policy);
        for e in &failed {
            tracing::warn!("backend refused: {e}");
        }
        if chosen.is_empty() {
            return Err(Error::InvalidArgument(
                "no backend the policy allows could be loaded".into(),
            ));
        }
        tracing::info!(
            acceleration = policy.hardware_acceleration.name(),
            backends = %chosen.iter().map(|b| b.name()).collect::<Vec<_>>().join(","),
            "policy applied"
        );
        table.engine().set_backends(chosen);
        table.allow_filesystems(policy.filesystems.clone());
        let before = std::mem::replace(
            &mut *self.policy.lock().unwrap_or_else(|p| p.into_inner()),
            policy.clone(),
        );
        Ok(Applied {
            changed: before != policy,
            ..table.rebind_all()
        })
    }
}

/// Replaces `path` with `text` so a reader sees the old file or the new
/// one, never half of it.
fn write_atomically(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let io = |what: &str| {
        let what = format!("{what} {}", path.display());
        move |e| Error::Io { what, source: e }
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io("cannot make the folder of"))?;
    let tmp = dir.join(format!(
        ".{}.new",
        path.file_name()
            .map_or("policy".into(), |n| n.to_string_lossy())
    ));
    let mut f = std::fs::File::create(&tmp).map_err(io("cannot write"))?;
    f.write_all(text.as_bytes()).map_err(io("cannot write"))?;
    f.sync_all().map_err(io("cannot write"))?;
    std::fs::rename(&tmp, path).map_err(io("cannot replace"))?;
    Ok(())
}
