//! What a desktop dialog fills in, turned into the same calls and option
//! structs `tcctl` sends: the host and keyfiles opened with the user's own
//! rights, descriptors and bytes handed over, never paths.

use crate::bus::{Client, Failure};
use crate::cli::{Encryption, Hash, wire_name};
use crate::input::{absolute, read_keyfiles};
use clap::ValueEnum;
use std::path::PathBuf;
use tcd_proto::contract::options::{MountFilesystem, VolumeFormat};
use tcd_proto::contract::{MountOptions, SearchOptions, Secret};
use zbus::zvariant::OwnedObjectPath;

/// The Mount dialog.
#[derive(Debug, Default, Clone)]
pub struct MountForm {
    pub volume: PathBuf,
    pub keyfiles: Vec<PathBuf>,
    /// 0: the format's default.
    pub pim: u32,
    pub truecrypt: bool,
    /// None: every one (Auto).
    pub hash: Option<String>,
    pub encryption: Option<String>,
    pub readonly: bool,
    pub mount_point: Option<PathBuf>,
    pub block_device_only: bool,
    pub cache: bool,
    pub dismount_idle_minutes: u32,
}

/// The hashes (PRFs) a search may be narrowed to, as the daemon names them.
pub fn hashes() -> Vec<String> {
    Hash::value_variants()
        .iter()
        // SHA-1 (TrueCrypt before 5.0) is taken but not offered.
        .filter(|h| h.to_possible_value().is_some_and(|v| !v.is_hide_set()))
        .map(|h| wire_name(*h))
        .collect()
}

/// The encryption algorithms and cascades, as the daemon names them.
pub fn encryptions() -> Vec<String> {
    Encryption::value_variants()
        .iter()
        .map(|e| wire_name(*e))
        .collect()
}

impl MountForm {
    /// `Mount`'s options; the hidden volume's password, when it is to be
    /// protected, goes in as a secret.
    pub fn options(&self, protect_hidden: Option<&[u8]>) -> MountOptions {
        let nonzero = |n: u32| (n != 0).then_some(n);
        MountOptions {
            // Unticked, the daemon decides (read-only for volumes of
            // TrueCrypt before 5.0).
            readonly: self.readonly.then_some(true),
            filesystem: Some(if self.block_device_only {
                MountFilesystem::None
            } else {
                MountFilesystem::Auto
            }),
            cache: Some(self.cache),
            dismount_idle_seconds: Some(self.dismount_idle_minutes.saturating_mul(60)),
            mount_point: self.mount_point.as_deref().map(absolute),
            protect_hidden_password: protect_hidden.map(|p| Secret::new(p.to_vec())),
            ..Default::default()
        }
        .with_search(SearchOptions {
            hash: self.hash.clone(),
            encryption: self.encryption.clone(),
            format: self.truecrypt.then_some(VolumeFormat::TrueCrypt),
            pim: nonzero(self.pim),
            ..Default::default()
        })
    }

    /// Mounts: the host opened with the caller's rights (for writing unless
    /// read-only), the keyfiles read, then `Mount`.
    pub fn mount(
        &self,
        c: &Client,
        password: &[u8],
        protect_hidden: Option<&[u8]>,
    ) -> Result<OwnedObjectPath, Failure> {
        let host = crate::host::open(&self.volume, !self.readonly)?;
        let keyfiles = read_keyfiles(&self.keyfiles)?;
        let options = self.options(protect_hidden);
        c.mount(&host, &absolute(&self.volume), password, &keyfiles, options)
    }
}

/// The policy in force with hardware acceleration on or off and the
/// backends allowed (`None`: all), the rest as it is.
pub fn policy_with(
    now: &crate::bus::PolicyView,
    acceleration: bool,
    allowed: Option<Vec<String>>,
) -> Result<String, Failure> {
    use tcd_proto::contract::policy::{Acceleration, Policy};
    let mut policy = Policy::parse(&now.text)
        .map_err(|e| Failure::invalid(format!("the daemon's policy does not parse: {e}")))?;
    policy.hardware_acceleration = if acceleration {
        Acceleration::Auto
    } else {
        Acceleration::Disabled
    };
    policy.allowed = allowed;
    Ok(policy.to_text())
}

/// `Benchmark`, with `progress(done, total)` as the daemon reports it.
pub fn benchmark(
    c: &Client,
    buffer_bytes: u64,
    progress: impl Fn(u32, u32) + Send + 'static,
) -> Result<crate::bus::Bench, Failure> {
    c.with_signals(
        "BenchmarkProgress",
        move |m| {
            if let Ok((done, total)) = m.body().deserialize::<(u32, u32)>() {
                progress(done, total);
            }
        },
        || c.benchmark(buffer_bytes, false),
    )
}

/// The filesystems a new volume may get, as the daemon names them.
pub fn filesystems() -> Vec<String> {
    crate::cli::NewFilesystem::value_variants()
        .iter()
        .map(|f| wire_name(*f))
        .collect()
}

/// The Volume Creation Wizard: a new container file.
#[derive(Debug, Default, Clone)]
pub struct CreateForm {
    pub volume: PathBuf,
    pub size: u64,
    pub truecrypt: bool,
    pub encryption: String,
    pub hash: String,
    pub filesystem: String,
    pub quick: bool,
    pub pim: u32,
    pub keyfiles: Vec<PathBuf>,
}

impl CreateForm {
    /// Makes the container (a new file of the user's, never one that
    /// exists) and has the daemon write the volume into it, with
    /// `progress(done, total)` in bytes; a failed or cancelled creation
    /// leaves no file behind.
    pub fn create(
        &self,
        c: &Client,
        password: &[u8],
        progress: impl Fn(u64, u64) + Send + 'static,
    ) -> Result<(), Failure> {
        let keyfiles = read_keyfiles(&self.keyfiles)?;
        crate::input::judge_new_password(password, !keyfiles.is_empty(), false)?;
        let shown = self.volume.display();
        let host = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&self.volume)
            .and_then(|f| f.set_len(self.size).map(|()| f))
            .map_err(|e| Failure::invalid(format!("{shown}: {e}")))?;
        let options = tcd_proto::contract::CreateOptions {
            format: Some(if self.truecrypt {
                VolumeFormat::TrueCrypt
            } else {
                VolumeFormat::VeraCrypt
            }),
            encryption: Some(self.encryption.clone()),
            hash: Some(self.hash.clone()),
            filesystem: tcd_proto::contract::options::NewFilesystem::ALL
                .into_iter()
                .find(|f| f.key() == self.filesystem),
            quick: Some(self.quick),
            pim: (self.pim != 0).then_some(self.pim),
            ..Default::default()
        };
        let made = c.with_signals(
            "CreateProgress",
            move |m| {
                if let Ok((done, total)) = m.body().deserialize::<(u64, u64)>() {
                    progress(done, total);
                }
            },
            || c.create(&host, password, &keyfiles, options),
        );
        if made.is_err() {
            let _ = std::fs::remove_file(&self.volume);
        }
        made
    }
}
