//! `org.tcd.Volume1`: one object per mounted volume under
//! `/org/tcd/Tcd1/volumes/<N>`, announced through the ObjectManager at
//! `/org/tcd/Tcd1`: its properties (no key material) and what is done to
//! the volume itself (`Dismount`, and `Mount` and `Unmount` of an
//! attached volume's filesystem).

use super::context::Ctx;
use super::decode::{self, Dict};
use super::errors::ServiceError;
use crate::mounts::Mounted;
use tcd_proto::contract::{
    DismountOptions, FilesystemMountOptions, FilesystemUnmountOptions, VolumeView,
};
use zbus::zvariant::OwnedObjectPath;

pub use tcd_proto::contract::names::{MANAGER_PATH, VOLUMES_PATH};

/// The contract's view of a mounted volume: what its properties say.
pub fn view(m: &Mounted) -> VolumeView {
    VolumeView {
        host: Some(m.host_name.clone()),
        device: Some(m.device.display().to_string()),
        mount_point: Some(
            m.mount_point
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        ),
        filesystem: Some(m.filesystem.clone().unwrap_or_default()),
        format: Some(m.info.format.name().to_owned()),
        encryption: Some(m.info.chain.display_name()),
        hash: Some(m.info.prf.name().to_owned()),
        read_only: Some(m.read_only),
        hidden: Some(m.info.hidden),
        protects_hidden: Some(m.protects_hidden),
        size: Some(m.info.data_size),
        sector_size: Some(m.info.sector_size),
        backends: Some(m.info.backends.clone()),
        owner: Some(m.owner),
        health: Some(m.health.status().to_owned()),
        problems: Some(m.health.problems()),
        state: Some(m.state.contract()),
        used_backup_header: Some(m.info.used_backup_header),
        system_encryption: Some(m.info.system),
        slot: Some(m.slot),
        discard: Some(m.discard),
        dismount_idle: Some(u64::from(m.auto_dismount.idle_seconds)),
        key_bits: Some(key_bits(m)),
        data_offset: Some(m.info.data_offset),
    }
}

/// Bits of the volume's master key, all layers' XTS keys.
fn key_bits(m: &Mounted) -> u32 {
    u32::try_from(m.info.chain.key_bytes() * 8).unwrap_or(u32::MAX)
}

pub fn object_path(id: u32) -> OwnedObjectPath {
    // Digits only: always a valid object path.
    OwnedObjectPath::try_from(format!("{VOLUMES_PATH}/{id}"))
        .unwrap_or_else(|_| OwnedObjectPath::try_from(VOLUMES_PATH).unwrap_or_default())
}

pub struct VolumeObject {
    m: Mounted,
    /// The caller's side of the service; on a peer-to-peer connection,
    /// found at the manager's object when a method is called.
    ctx: Option<Ctx>,
}

impl VolumeObject {
    pub fn new(m: Mounted, ctx: Option<Ctx>) -> Self {
        VolumeObject { m, ctx }
    }

    /// Takes the volume's new state (the caller emits the change).
    pub fn set(&mut self, m: Mounted) {
        self.m = m;
    }

    /// The caller's side of the service: this object's, or on a
    /// peer-to-peer connection the manager's.
    async fn context(&self, conn: &zbus::Connection) -> zbus::Result<Ctx> {
        if let Some(c) = &self.ctx {
            return Ok(c.clone());
        }
        let manager = conn
            .object_server()
            .interface::<_, super::manager::Manager>(MANAGER_PATH)
            .await?;
        let object = manager.get().await;
        Ok(object.ctx.clone())
    }
}

#[zbus::interface(name = "org.tcd.Volume1")]
impl VolumeObject {
    /// Dismounts this volume. Options: `force` (b: even with files open;
    /// the volume then detaches, and is gone once the last user lets go).
    /// Returns the processes (pid, command) still holding a volume left
    /// detaching; empty once it is gone.
    async fn dismount(
        &self,
        options: Dict,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<Vec<(u32, String)>, ServiceError> {
        let o: DismountOptions = decode::options(&options)?;
        let ctx = self.context(conn).await?;
        let peer = ctx.caller(&header, conn).await?;
        let path = object_path(self.m.id);
        let (result, done) = ctx
            .dismount_unannounced(&peer, path.as_str(), o.force.unwrap_or(false))
            .await?;
        // Announced once this call is answered, as `Mount`'s: a volume
        // left detaching has its object updated, and on a peer-to-peer
        // connection that is this object, busy with this call until then.
        if let Some(done) = done {
            let shared = std::sync::Arc::clone(&ctx.shared);
            conn.executor()
                .spawn(
                    async move { shared.dismounted(&done).await },
                    "tcd-dismounted",
                )
                .detach();
        }
        // Dismounted (or detaching) either way; lost writes are the news.
        Ok(result?.holders_for(&peer.app()))
    }

    /// Mounts the filesystem of this volume, attached as a block device
    /// only (udisks' `Filesystem.Mount` after `Unlock`); its owner's alone.
    /// Options: `mount_point` (s: a folder of the caller's; a new one under
    /// the caller's media folder when absent), `allow_non_empty` (b),
    /// `fs_options` (s, as `Mount`'s). Returns the mount point.
    async fn mount(
        &self,
        options: Dict,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<String, ServiceError> {
        let o: FilesystemMountOptions = decode::options(&options)?;
        let ctx = self.context(conn).await?;
        let peer = ctx.caller(&header, conn).await?;
        let (app, caller, id) = (ctx.app(), peer.app(), self.m.id);
        let m = blocking::unblock(move || app.mount_filesystem(id, &caller, &o)).await?;
        // Announced once this call is answered: this object is busy with
        // it until then, and the announcement updates it.
        let (shared, changed) = (std::sync::Arc::clone(&ctx.shared), m.clone());
        conn.executor()
            .spawn(
                async move { shared.announce_changed_async(&[changed]).await },
                "tcd-mounted-filesystem",
            )
            .detach();
        Ok(m.mount_point
            .map(|p| p.display().to_string())
            .unwrap_or_default())
    }

    /// Unmounts the filesystem of this volume and leaves it attached as
    /// its block device (udisks' `Filesystem.Unmount` before `Lock`); its
    /// owner's alone, as `Mount`. Options: `force` (b: a filesystem in use
    /// is unmounted lazily; without it, it is refused, naming who holds
    /// it).
    async fn unmount(
        &self,
        options: Dict,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<(), ServiceError> {
        let o: FilesystemUnmountOptions = decode::options(&options)?;
        let ctx = self.context(conn).await?;
        let peer = ctx.caller(&header, conn).await?;
        let (app, caller, id) = (ctx.app(), peer.app(), self.m.id);
        let force = o.force.unwrap_or(false);
        let m = blocking::unblock(move || app.unmount_filesystem(id, &caller, force)).await?;
        // Announced once this call is answered, as `Mount`'s: this object
        // is busy with it until then, and the announcement updates it.
        let shared = std::sync::Arc::clone(&ctx.shared);
        conn.executor()
            .spawn(
                async move { shared.announce_changed_async(&[m]).await },
                "tcd-unmounted-filesystem",
            )
            .detach();
        Ok(())
    }

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
    /// The encryption algorithm as TrueCrypt names it ("AES-Twofish-Serpent";
    /// a volume of TrueCrypt before 5.0 with its mode: "AES (LRW, legacy)").
    #[zbus(property)]
    fn encryption(&self) -> String {
        self.m.info.chain.display_name()
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
    /// The primary header did not open and the backup header did: the
    /// primary one is damaged (`RestoreEmbeddedHeader` repairs it).
    #[zbus(property)]
    fn used_backup_header(&self) -> bool {
        self.m.info.used_backup_header
    }
    /// Opened as system encryption: the header came from the drive's
    /// first track, the data units count from the drive's start.
    #[zbus(property)]
    fn system_encryption(&self) -> bool {
        self.m.info.system
    }
    /// VeraCrypt's slot (1 to 64), given at the mount and kept until the
    /// dismount; 0 once detaching.
    #[zbus(property)]
    fn slot(&self) -> u32 {
        self.m.slot
    }
    /// Discards (TRIM) pass through to the host (mounted with `discard`).
    #[zbus(property)]
    fn discard(&self) -> bool {
        self.m.discard
    }
    /// Dismounted after this many seconds with no read or write; 0: never.
    #[zbus(property)]
    fn dismount_idle(&self) -> u64 {
        u64::from(self.m.auto_dismount.idle_seconds)
    }
    /// Bits of the master key: 512 (two 256-bit XTS keys) per layer.
    #[zbus(property)]
    fn key_bits(&self) -> u32 {
        key_bits(&self.m)
    }
    /// Where the data area starts in the host, in bytes.
    #[zbus(property)]
    fn data_offset(&self) -> u64 {
        self.m.info.data_offset
    }
}
