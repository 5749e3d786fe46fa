//! A mounted volume as clients see it: the properties of its
//! `org.tcd.Volume1` object, and what `HeaderInfo` says of a volume.

use serde::{Deserialize, Serialize};
use zvariant::{DeserializeDict, SerializeDict, Type};

/// Whether a volume is in use or on its way out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
#[zvariant(signature = "s")]
#[serde(rename_all = "lowercase")]
pub enum VolumeState {
    #[default]
    Mounted,
    /// Dismounted by force while processes still used it; gone once they
    /// let go.
    Detaching,
}

impl VolumeState {
    pub fn name(self) -> &'static str {
        match self {
            VolumeState::Mounted => "mounted",
            VolumeState::Detaching => "detaching",
        }
    }
}

/// A volume's health: "ok", or "failed" once anything went wrong between
/// its filesystem and its host.
pub const HEALTH_OK: &str = "ok";
pub const HEALTH_FAILED: &str = "failed";

/// The properties of a `Volume1` object (`GetAll` deserializes into it;
/// keys a newer daemon adds are ignored).
#[derive(Debug, Clone, Default, PartialEq, SerializeDict, DeserializeDict, Type)]
#[zvariant(signature = "a{sv}", rename_all = "PascalCase")]
pub struct VolumeView {
    /// The container file or device, as the client named it.
    pub host: Option<String>,
    /// The block device with the decrypted volume (`/dev/loopN`).
    pub device: Option<String>,
    /// Where the filesystem is mounted; empty with filesystem "none".
    pub mount_point: Option<String>,
    pub filesystem: Option<String>,
    /// "TrueCrypt" or "VeraCrypt".
    pub format: Option<String>,
    /// As TrueCrypt names it ("AES-Twofish-Serpent").
    pub encryption: Option<String>,
    pub hash: Option<String>,
    pub read_only: Option<bool>,
    pub hidden: Option<bool>,
    pub protects_hidden: Option<bool>,
    /// Bytes of the decrypted volume.
    pub size: Option<u64>,
    pub sector_size: Option<u32>,
    /// The backend serving each layer, in order of application.
    pub backends: Option<Vec<String>>,
    /// The uid of the user who mounted it.
    pub owner: Option<u32>,
    /// [`HEALTH_OK`] or [`HEALTH_FAILED`].
    pub health: Option<String>,
    /// What went wrong, one line per kind (empty while "ok").
    pub problems: Option<Vec<String>>,
    pub state: Option<VolumeState>,
    /// The primary header did not open; the backup header did.
    pub used_backup_header: Option<bool>,
    /// Opened as system encryption (the header in the drive's first track).
    pub system_encryption: Option<bool>,
    /// VeraCrypt's slot (1 to 64), kept from the mount to the dismount; 0
    /// while detaching. Absent from daemons before slots were kept.
    pub slot: Option<u32>,
    /// Discards (TRIM) pass through to the host.
    pub discard: Option<bool>,
    /// Seconds with no I/O before an automatic dismount; 0: never.
    pub dismount_idle: Option<u64>,
    /// Bits of the master key: 512 (two 256-bit XTS keys) per layer.
    /// Absent from daemons before it was said.
    pub key_bits: Option<u32>,
    /// Where the data area starts in the host, in bytes. Absent from
    /// daemons before it was said.
    pub data_offset: Option<u64>,
}

/// One row of the `ListVolumes` reply, `(osssssssbbbtss)`: object, host,
/// device, mount point, filesystem, format, encryption, PRF, read-only,
/// hidden, protects hidden, size, backends ("," between layers), state.
/// The same facts as [`VolumeView`], for clients of the first interface
/// version.
pub type VolumeRow = (
    zvariant::OwnedObjectPath,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    bool,
    bool,
    bool,
    u64,
    String,
    String,
);

impl VolumeView {
    /// The `ListVolumes` row of the volume at `path`.
    pub fn row(&self, path: zvariant::OwnedObjectPath) -> VolumeRow {
        let s = |v: &Option<String>| v.clone().unwrap_or_default();
        (
            path,
            s(&self.host),
            s(&self.device),
            s(&self.mount_point),
            s(&self.filesystem),
            s(&self.format),
            s(&self.encryption),
            s(&self.hash),
            self.read_only.unwrap_or_default(),
            self.hidden.unwrap_or_default(),
            self.protects_hidden.unwrap_or_default(),
            self.size.unwrap_or_default(),
            self.backends.clone().unwrap_or_default().join(","),
            self.state.unwrap_or_default().name().to_owned(),
        )
    }
}

/// What `HeaderInfo` says of a volume's header.
#[derive(Debug, Clone, Default, PartialEq, SerializeDict, DeserializeDict, Type)]
#[zvariant(signature = "a{sv}")]
pub struct HeaderInfo {
    /// "TrueCrypt" or "VeraCrypt".
    pub format: Option<String>,
    pub header_version: Option<u32>,
    pub encryption: Option<String>,
    pub hash: Option<String>,
    /// The password opened the hidden volume.
    pub hidden: Option<bool>,
    /// The primary header did not open; the backup header did.
    pub used_backup_header: Option<bool>,
    /// Where the data area starts in the host, in bytes.
    pub data_offset: Option<u64>,
    pub size: Option<u64>,
    pub sector_size: Option<u32>,
    /// The master key repeats itself (a volume made by a broken tool).
    pub weak_keys: Option<bool>,
    /// The backends that would serve each layer, "," between them.
    pub backends: Option<String>,
    /// The PIM that opened it (0: the format's default).
    pub pim: Option<u32>,
    /// PBKDF2 iterations of the header key (absent for Argon2id).
    pub iterations: Option<u32>,
    /// Argon2id's memory in KiB, its `m_cost` (absent for PBKDF2).
    pub argon2_memory_kib: Option<u32>,
    /// Argon2id's passes over that memory, its `t_cost` (absent for PBKDF2).
    pub argon2_passes: Option<u32>,
    /// Bits of the master key: 512 (two 256-bit XTS keys) per layer.
    pub key_bits: Option<u32>,
    /// The block mode, as cryptsetup names it ("xts-plain64").
    pub mode: Option<String>,
    /// A system encryption header (from the drive's first track).
    pub system_encryption: Option<bool>,
    /// The header's minimum program version ("VeraCrypt 1.0b"): the
    /// earliest release that opens it, not the one that made it.
    pub minimum_version: Option<String>,
    /// The end of this (outer) volume's data area, where a hidden volume
    /// ends, holds data: a hidden volume is there already, or the outer
    /// filesystem reached it. Absent for a hidden or system volume.
    pub end_in_use: Option<bool>,
}
