//! `org.tcd.Volume1`: one object per mounted volume under
//! `/org/tcd/Tcd1/volumes/<N>`, announced through the ObjectManager at
//! `/org/tcd/Tcd1`. Read-only properties; no key material.

use crate::mounts::Mounted;
use zbus::zvariant::OwnedObjectPath;

pub const MANAGER_PATH: &str = "/org/tcd/Tcd1";
pub const VOLUMES_PATH: &str = "/org/tcd/Tcd1/volumes";

pub fn object_path(id: u32) -> OwnedObjectPath {
    // Digits only: always a valid object path.
    OwnedObjectPath::try_from(format!("{VOLUMES_PATH}/{id}"))
        .unwrap_or_else(|_| OwnedObjectPath::try_from(VOLUMES_PATH).unwrap_or_default())
}

pub struct VolumeObject {
    m: Mounted,
}

impl VolumeObject {
    pub fn new(m: Mounted) -> Self {
        VolumeObject { m }
    }

    /// Takes the volume's new state (the caller emits the change).
    pub fn set(&mut self, m: Mounted) {
        self.m = m;
    }
}

#[zbus::interface(name = "org.tcd.Volume1")]
impl VolumeObject {
    /// The container file or device, as the client named it.
    #[zbus(property)]
    fn host(&self) -> String {
        self.m.host_name.clone()
    }
    /// The block device with the decrypted volume (`/dev/loopN`).
    #[zbus(property)]
    fn device(&self) -> String {
        self.m.device.display().to_string()
    }
    /// Where the filesystem is mounted; empty with filesystem "none".
    #[zbus(property)]
    fn mount_point(&self) -> String {
        self.m
            .mount_point
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    }
    #[zbus(property)]
    fn filesystem(&self) -> String {
        self.m.filesystem.clone().unwrap_or_default()
    }
    /// "TrueCrypt" or "VeraCrypt".
    #[zbus(property)]
    fn format(&self) -> String {
        self.m.info.format.name().to_owned()
    }
    /// The encryption algorithm as TrueCrypt names it ("AES-Twofish-Serpent").
    #[zbus(property)]
    fn encryption(&self) -> String {
        self.m.info.chain.name.to_owned()
    }
    #[zbus(property)]
    fn hash(&self) -> String {
        self.m.info.prf.name().to_owned()
    }
    #[zbus(property)]
    fn read_only(&self) -> bool {
        self.m.read_only
    }
    #[zbus(property)]
    fn hidden(&self) -> bool {
        self.m.info.hidden
    }
    #[zbus(property)]
    fn protects_hidden(&self) -> bool {
        self.m.protects_hidden
    }
    /// Bytes of the decrypted volume.
    #[zbus(property)]
    fn size(&self) -> u64 {
        self.m.info.data_size
    }
    #[zbus(property)]
    fn sector_size(&self) -> u32 {
        self.m.info.sector_size
    }
    /// The backend serving each layer, in order of application.
    #[zbus(property)]
    fn backends(&self) -> Vec<String> {
        self.m.info.backends.clone()
    }
    /// The uid of the user who mounted it.
    #[zbus(property)]
    fn owner(&self) -> u32 {
        self.m.owner
    }
    /// "ok", or "failed" once anything went wrong between the filesystem
    /// and the host since the mount (see `Problems`).
    #[zbus(property)]
    fn health(&self) -> String {
        self.m.health.status().to_owned()
    }
    /// What went wrong, in words, one line per kind (empty while "ok").
    #[zbus(property)]
    fn problems(&self) -> Vec<String> {
        self.m.health.problems()
    }
    /// "mounted", or "detaching": dismounted by force while processes
    /// still used it, and gone once they let go.
    #[zbus(property)]
    fn state(&self) -> String {
        self.m.state.name().to_owned()
    }
}
