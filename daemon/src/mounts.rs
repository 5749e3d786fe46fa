//! The table of mounted volumes: mounting (open, serve, attach, mount the
//! filesystem), dismounting in order, and cleaning up after a killed
//! daemon. No D-Bus here: the service layer calls this.

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::mount::fswatch::FsWatch;
use crate::mount::holders::{self, Holder};
use crate::mount::host_key::HostKey;
pub use crate::mount::mountpoint::FsOptions;
use crate::mount::mountpoint::{self, Options as MountOptions};
use crate::mount::overlay::{self, Overlay};
use crate::mount::{self, BlockExport, FuseLoop};
use crate::volume::health::Health;
use crate::volume::opened::{HostTimes, OpenVolume, VolumeInfo};
use crate::volume::unlock::{Credentials, SearchOptions, Target};
use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// What the filesystem step does.
#[derive(Debug, Clone, PartialEq, Eq, Copy)]
pub enum Filesystem {
    /// Stop at the block device (for mkfs, fsck, dd).
    None,
    /// Mount what `blkid` finds.
    Auto,
}

/// A mount request, as the service layer assembles it.
pub struct MountRequest<'a> {
    /// The host (container file or device), opened by the caller.
    pub host: File,
    /// The name the caller knows the host by. Kept only where it is true
    /// (a `/dev` name of the same device, such as a favorite's stable
    /// name); otherwise the volume is shown by the descriptor's own path.
    /// Never opened as the caller's.
    pub host_name: String,
    pub creds: Credentials<'a>,
    /// The hidden volume's credentials, to protect it while the outer
    /// volume is mounted.
    pub protect_hidden: Option<Credentials<'a>>,
    pub search: SearchOptions,
    pub read_only: bool,
    /// Read-write asked for in so many words (a TrueCrypt 4 volume is
    /// read-only otherwise).
    pub read_write_asked: bool,
    pub filesystem: Filesystem,
    /// Where to mount; `None`: `/run/media/<user>/tcd<N>`, or with a
    /// slot `/run/media/<user>/veracrypt<slot>`.
    pub mount_point: Option<PathBuf>,
    /// VeraCrypt's slot asked for (refused while one of the owner's
    /// volumes holds it); without one the lowest free slot is given.
    /// Without a mount point it also names the default one.
    pub slot: Option<u32>,
    /// The caller's filesystem options (checked against the allow-list).
    pub fs_options: FsOptions,
    pub allow_non_empty: bool,
    pub discard: bool,
    /// A container file's access and modification times to put back
    /// when the volume closes.
    pub host_times: Option<HostTimes>,
    /// The caller, who owns FAT files and the default mount point.
    pub owner: (u32, u32),
    /// The favorite this mount is of, if any.
    pub favorite: Option<String>,
    pub auto_dismount: AutoDismount,
}

/// When a mounted volume is dismounted without being asked, as
/// TrueCrypt's preferences offer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AutoDismount {
    /// When the owner's last session ends (logind's UserRemoved).
    pub on_logout: bool,
    /// Before the machine sleeps (logind's PrepareForSleep).
    pub before_sleep: bool,
    /// After this long with no read or write (0: never).
    pub idle_seconds: u32,
    /// Even when files on it are open (a lazy unmount).
    pub force: bool,
}

/// What applying a policy did to the mounted volumes.
#[derive(Debug, Default)]
pub struct Applied {
    /// Volumes now served by other backends.
    pub moved: Vec<Mounted>,
    /// Volumes that keep their old backends until dismounted, and why.
    pub kept: Vec<String>,
    /// The policy differs from the one before (else nobody is told).
    pub changed: bool,
}

/// What a caller may see of a mounted volume.
#[derive(Debug, Clone)]
pub struct Mounted {
    pub id: u32,
    pub host_name: String,
    pub device: PathBuf,
    pub mount_point: Option<PathBuf>,
    pub filesystem: Option<String>,
    pub read_only: bool,
    pub protects_hidden: bool,
    pub info: VolumeInfo,
    pub owner: u32,
    /// The favorite it was mounted as.
    pub favorite: Option<String>,
    pub auto_dismount: AutoDismount,
    /// VeraCrypt's slot, 1 to [`MAX_SLOT`], unique among the owner's
    /// volumes and kept until the dismount; 0 once detaching.
    pub slot: u32,
    /// Discards (TRIM) pass through to the host.
    pub discard: bool,
    /// The host's device number when the host is a block device (to
    /// dismount when that device goes away).
    pub host_device: Option<u64>,
    /// What went wrong since the mount; live, shared with the data path.
    pub health: Arc<Health>,
    /// In service, or on its way out after a forced dismount.
    pub state: VolumeState,
    /// While detaching: the processes that still hold it (as last seen).
    pub holders: Vec<Holder>,
}

/// Whether a volume is in service or being detached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VolumeState {
    #[default]
    Mounted,
    /// Dismounted by force while processes still used it: off its mount
    /// point (a lazy unmount) and read-only where the filesystem allowed,
    /// served until they let go, then taken down.
    Detaching,
}

impl VolumeState {
    /// The state as the API names it.
    pub fn contract(self) -> tcd_proto::contract::VolumeState {
        match self {
            VolumeState::Mounted => tcd_proto::contract::VolumeState::Mounted,
            VolumeState::Detaching => tcd_proto::contract::VolumeState::Detaching,
        }
    }

    /// The name shown by D-Bus and tcctl.
    pub fn name(self) -> &'static str {
        match self {
            VolumeState::Mounted => "mounted",
            VolumeState::Detaching => "detaching",
        }
    }
}

struct Entry {
    view: Mounted,
    host_id: HostKey,
    volume: Arc<OpenVolume>,
    /// The mounted filesystem's error state to watch, if one is mounted.
    health_watch: Option<FsWatch>,
    /// What serves and mounts the volume, behind the volume's own lock:
    /// a dismount holds it, and nothing else of the table.
    parts: Arc<Mutex<Parts>>,
    /// While detaching: what to look for to name its holders, and the
    /// daemon's own helpers to leave out.
    holding: Option<(holders::Target, Vec<u32>)>,
}

/// The kernel-side pieces of a mounted volume, taken down in reverse.
struct Parts {
    export: Option<Box<dyn BlockExport>>,
    /// The driver process of a filesystem the kernel lacks.
    userfs: Option<mount::userfs::UserFs>,
    /// The filesystem mounted on the mount point, held by descriptor.
    fs: Option<mount::mountpoint::MountedFs>,
    /// A default mount point the daemon made, removed at dismount.
    made_mount_point: bool,
    /// The slot asked at mount: a default mount point is `veracrypt<slot>`
    /// for it, also when the filesystem is mounted again later.
    slot_asked: Option<u32>,
    /// The driver process's filesystem was made read-only after its
    /// volume became so (see [`MountTable::seal_drivers_read_only`]).
    driver_sealed: bool,
}

/// What a filesystem is mounted with: the volume's ID and name, the
/// mount point (checked) or none for a default one, and its owner's.
struct FsRequest<'a> {
    id: u32,
    host_name: &'a str,
    mount_point: Option<mountpoint::Target>,
    owner: (u32, u32),
    slot: Option<u32>,
    discard: bool,
    fs_options: FsOptions,
}

/// Filesystem types users' volumes are mounted with (as udisks2 allows):
/// the kernel parses a filesystem image its owner wrote, so only the
/// filesystems people keep data on, whose parsers are the most used and
/// fuzzed. The policy may add others.
pub const FILESYSTEMS: &[&str] = &[
    "ext2", "ext3", "ext4", "btrfs", "xfs", "vfat", "exfat", "ntfs", "ntfs3",
];

/// Every mounted volume of the daemon.
pub struct MountTable {
    engine: Arc<Engine>,
    /// Told the id of a volume that hidden-volume protection made
    /// read-only.
    read_only_events: Mutex<Option<std::sync::mpsc::Sender<u32>>>,
    /// Told the id of a volume with a new kind of problem.
    health_events: Mutex<Option<std::sync::mpsc::Sender<u32>>>,
    runtime: PathBuf,
    /// Held only to read or change the map, never across a system call
    /// that can block. Shared with the threads that finish detaching
    /// volumes.
    entries: Arc<Mutex<BTreeMap<u32, Entry>>>,
    /// Told the id of a detaching volume once it is gone.
    gone_events: Arc<Mutex<Option<std::sync::mpsc::Sender<u32>>>>,
    /// Hosts between their search and their entry (being mounted), with
    /// the owner and slot a mount holds for them.
    mounting: Mutex<Vec<(HostKey, Option<SlotHeld>)>>,
    /// The next volume id: ids are never used twice in a daemon's life, so
    /// an id checked is the volume acted on.
    next_id: AtomicU32,
    /// Filesystem types the policy adds to [`FILESYSTEMS`].
    extra_filesystems: Mutex<Vec<String>>,
    /// How volume files reach the kernel.
    transport: mount::Transport,
}

impl MountTable {
    /// A table whose FUSE folders live under `runtime` (created, private).
    pub fn new(engine: Arc<Engine>, runtime: &Path) -> Result<MountTable> {
        std::fs::create_dir_all(runtime.join("fuse")).map_err(|e| Error::Io {
            what: format!("cannot make {}", runtime.display()),
            source: e,
        })?;
        // As the kernel names a loop device's backing file (no link, no
        // relative part): a device is detached only while it serves ours.
        let runtime = runtime.canonicalize().map_err(|e| Error::Io {
            what: format!("cannot resolve {}", runtime.display()),
            source: e,
        })?;
        Ok(MountTable {
            engine,
            read_only_events: Mutex::new(None),
            health_events: Mutex::new(None),
            runtime,
            entries: Arc::new(Mutex::new(BTreeMap::new())),
            gone_events: Arc::new(Mutex::new(None)),
            mounting: Mutex::new(Vec::new()),
            next_id: AtomicU32::new(1),
            extra_filesystems: Mutex::new(Vec::new()),
            transport: mount::Transport::Auto,
        })
    }

    /// The table, serving volume files through `transport`.
    pub fn with_transport(mut self, transport: mount::Transport) -> MountTable {
        self.transport = transport;
        self
    }

    fn serving(&self) -> mount::Serving {
        mount::Serving {
            threads: self.engine.threads(),
            transport: self.transport,
        }
    }

    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u32, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets the filesystem types the policy allows beyond [`FILESYSTEMS`].
    pub fn allow_filesystems(&self, extra: Vec<String>) {
        *self
            .extra_filesystems
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = extra;
    }

    /// Refuses a filesystem type outside the allow-list.
    fn check_filesystem(&self, fs_type: &str, volume: &str) -> Result<()> {
        let extra = self
            .extra_filesystems
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if FILESYSTEMS.contains(&fs_type) || extra.iter().any(|f| f == fs_type) {
            return Ok(());
        }
        let allowed: Vec<&str> = FILESYSTEMS
            .iter()
            .copied()
            .chain(extra.iter().map(String::as_str))
            .collect();
        Err(Error::FilesystemNotAllowed {
            volume: volume.to_owned(),
            fs_type: fs_type.to_owned(),
            allowed: allowed.join(", "),
        })
    }

    /// Marks `host_id` as being mounted; `None` if it is mounted or being
    /// mounted already.
    fn reserve(&self, host_id: HostKey) -> Option<Reserved<'_>> {
        let t = self.lock();
        let mut m = self.mounting.lock().unwrap_or_else(|p| p.into_inner());
        if t.values().any(|e| e.host_id.overlaps(&host_id))
            || m.iter().any(|(h, _)| h.overlaps(&host_id))
        {
            return None;
        }
        m.push((host_id, None));
        Some(Reserved {
            table: self,
            host_id,
        })
    }

    /// Holds a slot of `owner` for the host `reserved` holds: `wanted`, or
    /// the lowest free one. Decided under the table's lock, so two mounts
    /// at once never get the same slot.
    fn reserve_slot(
        &self,
        reserved: &Reserved<'_>,
        owner: u32,
        wanted: Option<u32>,
    ) -> Result<u32> {
        let t = self.lock();
        let mut m = self.mounting.lock().unwrap_or_else(|p| p.into_inner());
        let taken: Vec<u32> = t
            .values()
            .filter(|e| e.view.owner == owner)
            .map(|e| e.view.slot)
            .chain(
                m.iter()
                    .filter_map(|(_, s)| s.filter(|s| s.0 == owner).map(|s| s.1)),
            )
            .collect();
        let slot = match wanted {
            Some(n) if taken.contains(&n) => return Err(slot_taken(n)),
            Some(n) => n,
            None => (1..=MAX_SLOT).find(|n| !taken.contains(n)).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "all {MAX_SLOT} slots are taken: dismount a volume first"
                ))
            })?,
        };
        if let Some(r) = m.iter_mut().find(|(h, _)| *h == reserved.host_id) {
            r.1 = Some((owner, slot));
        }
        Ok(slot)
    }

    /// Refuses a host mounted already, or still detaching (naming what
    /// holds it).
    /// Mounted under another name (renamed since, or a link's name) is
    /// said with that name and its device to its owner and root, who can
    /// dismount it by them.
    fn check_not_mounted(&self, host_id: &HostKey, host_name: &str, caller: u32) -> Result<()> {
        let holding = {
            let t = self.lock();
            match t.values().find(|e| e.host_id.overlaps(host_id)) {
                None => return Ok(()),
                Some(e) if e.view.state == VolumeState::Detaching => e.holding.clone(),
                Some(e)
                    if e.view.host_name != host_name && (caller == 0 || caller == e.view.owner) =>
                {
                    return Err(Error::AlreadyMounted(format!(
                        "{host_name} (as {}, {})",
                        e.view.host_name,
                        e.view.device.display()
                    )));
                }
                Some(_) => return Err(Error::AlreadyMounted(host_name.to_owned())),
            }
        };
        // Scanned without the table's lock: /proc may be slow.
        let holders = holding
            .map(|(target, except)| holders::scan(target, &except))
            .unwrap_or_default();
        Err(Error::Detaching {
            volume: host_name.to_owned(),
            holders,
        })
    }

    /// As [`MountTable::is_mounted`], with the refusal in words: a
    /// detaching volume names what holds it.
    pub fn check_host(&self, host: &File, host_name: &str, caller: u32) -> Result<()> {
        match host.metadata() {
            Ok(m) => self.check_not_mounted(&HostKey::of(&m), host_name, caller),
            Err(_) => Ok(()),
        }
    }

    /// Takes down what a killed daemon left under the runtime folder: loop
    /// devices over its FUSE files, then the FUSE mounts themselves.
    pub fn clean_up_stale(&self) -> Vec<String> {
        let fuse = self.runtime.join("fuse");
        let mut done = Vec::new();
        if let Ok(loops) = mount::loopdev::attached_under(&fuse) {
            for (dev, file) in loops {
                // A filesystem still mounted from it goes first.
                for target in mounts_of(&dev) {
                    match mountpoint::unmount_stale(&target, &dev) {
                        Ok(()) => done.push(format!("unmounted {}", target.display())),
                        Err(e) => tracing::warn!("left {}: {e}", target.display()),
                    }
                }
                if mount::loopdev::detach_from(&dev, &file).is_ok() {
                    done.push(format!("detached {}", dev.display()));
                }
            }
        }
        // A driver's staging mount, if the daemon died between its mount
        // and the bind.
        if let Ok(dirs) = std::fs::read_dir(self.runtime.join("fs")) {
            for d in dirs.flatten() {
                let p = d.path();
                if mountpoint::unmount(&p, true).is_ok() {
                    done.push(format!("unmounted {}", p.display()));
                }
                let _ = std::fs::remove_dir(&p);
            }
        }
        if let Ok(dirs) = std::fs::read_dir(&fuse) {
            for d in dirs.flatten() {
                let p = d.path();
                if mountpoint::unmount(&p, true).is_ok() {
                    done.push(format!("unmounted {}", p.display()));
                }
                let _ = std::fs::remove_dir(&p);
            }
        }
        done
    }

    /// Opens and mounts a volume. The search stops when `cancel` is set.
    pub fn mount(&self, req: MountRequest<'_>, cancel: &AtomicBool) -> Result<Mounted> {
        let meta = req.host.metadata().map_err(|e| Error::Io {
            what: "cannot inspect the volume".into(),
            source: e,
        })?;
        let host_id = HostKey::of(&meta);
        let host_device =
            std::os::unix::fs::FileTypeExt::is_block_device(&meta.file_type()).then(|| meta.rdev());
        let host_name = host_name(&req.host, &req.host_name, host_device);
        self.check_not_mounted(&host_id, &host_name, req.owner.0)?;
        // Check the mount point before the (slow) password search.
        if let Some(slot) = req.slot {
            self.check_slot(req.owner.0, slot)?;
        }
        let given = match &req.mount_point {
            Some(p) if req.filesystem == Filesystem::Auto => Some(check_given_mount_point(
                p,
                req.allow_non_empty,
                req.owner.0,
            )?),
            _ => None,
        };
        let mut volume = match req.protect_hidden {
            Some(hidden) => OpenVolume::open_protected(
                &self.engine,
                req.host,
                req.creds,
                hidden,
                &req.search,
                cancel,
                req.read_only,
            )?,
            None => OpenVolume::open(
                &self.engine,
                req.host,
                req.creds,
                Target::Any,
                &req.search,
                cancel,
                req.read_only,
            )?,
        };
        if req.search.detached.is_some() {
            volume.check_detached_fit()?;
        }
        if let Some(times) = req.host_times {
            volume.restore_times_at_close(times);
        }
        legacy_read_only(&volume, req.read_write_asked);
        let volume = Arc::new(volume);
        // Two mounts of one host may search at once (a call and a device
        // event); only the first to get here mounts it. No lock of the
        // table is held while it is served and mounted.
        let reserved = self
            .reserve(host_id)
            .ok_or_else(|| Error::AlreadyMounted(host_name.clone()))?;
        let slot = self.reserve_slot(&reserved, req.owner.0, req.slot)?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if let Some(tx) = self
            .read_only_events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            let tx = Mutex::new(tx);
            volume.on_read_only(move || {
                let _ = tx.lock().map(|t| t.send(id));
            });
        }
        if let Some(tx) = self
            .health_events
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            let tx = Mutex::new(tx);
            volume.health().on_change(move || {
                let _ = tx.lock().map(|t| t.send(id));
            });
        }
        let folder = self.runtime.join("fuse").join(id.to_string());
        // A read-only filesystem is served over an overlay in memory, so a
        // journal left by an unclean stop is replayed there and never
        // written to the container; once it is mounted, the device is
        // made read-only (`BlockExport::seal`). A bare block device is
        // attached read-only.
        let overlay = (req.filesystem == Filesystem::Auto && volume.is_read_only())
            .then(|| Arc::new(Overlay::new(overlay::LIMIT)));
        let export: Box<dyn BlockExport> = Box::new(FuseLoop::start_with_overlay(
            Arc::clone(&volume),
            &folder,
            self.serving(),
            req.discard,
            overlay.clone(),
        )?);
        let mut parts = Parts {
            export: None,
            userfs: None,
            fs: None,
            made_mount_point: false,
            slot_asked: req.slot,
            driver_sealed: false,
        };
        let mut fs_type = None;
        if req.filesystem == Filesystem::Auto {
            let asked = FsRequest {
                id,
                host_name: &host_name,
                mount_point: given,
                owner: req.owner,
                slot: req.slot,
                discard: req.discard,
                fs_options: req.fs_options,
            };
            match self.mount_filesystem(
                asked,
                export.as_ref(),
                &volume,
                overlay.as_deref(),
                &mut parts,
            ) {
                Ok(found) => fs_type = Some(found),
                Err(e) => {
                    let _ = export.close();
                    return Err(e);
                }
            }
        }
        let view = Mounted {
            id,
            host_name,
            device: export.device().to_path_buf(),
            mount_point: parts.fs.as_ref().map(|f| f.path()),
            filesystem: fs_type,
            read_only: volume.is_read_only(),
            protects_hidden: volume.protects_hidden_volume(),
            info: volume.info().clone(),
            owner: req.owner.0,
            favorite: req.favorite,
            auto_dismount: req.auto_dismount,
            slot,
            discard: req.discard,
            host_device,
            health: Arc::clone(volume.health()),
            state: VolumeState::Mounted,
            holders: Vec::new(),
        };
        let health_watch = match (&parts.fs, &view.filesystem) {
            (Some(fs), Some(fs_type)) => Some(FsWatch::new(
                fs.mount_id(),
                &view.device,
                fs_type,
                view.read_only,
            )),
            _ => None,
        };
        parts.export = Some(export);
        self.lock().insert(
            id,
            Entry {
                view: view.clone(),
                host_id,
                volume,
                health_watch,
                parts: Arc::new(Mutex::new(parts)),
                holding: None,
            },
        );
        if let Some(o) = overlay.as_ref().filter(|o| o.bytes() > 0) {
            tracing::info!(
                id,
                kib = o.bytes() >> 10,
                "the filesystem's journal was replayed into memory: the read-only view shows every fsync'ed write; the container is unchanged"
            );
        }
        tracing::info!(id, device = %view.device.display(), "volume mounted");
        Ok(view)
    }

    /// Mounts the filesystem of volume `id`, attached as a block device
    /// only (udisks' `mount` after `unlock`), for its owner `owner`: at
    /// `mount_point` (the owner's own folder), else at a default one.
    pub fn mount_attached(
        &self,
        id: u32,
        owner: (u32, u32),
        mount_point: Option<&Path>,
        allow_non_empty: bool,
        fs_options: FsOptions,
    ) -> Result<Mounted> {
        let (view, volume, parts) = {
            let t = self.lock();
            let e = t.get(&id).ok_or(Error::NotMounted(id.to_string()))?;
            (e.view.clone(), Arc::clone(&e.volume), Arc::clone(&e.parts))
        };
        let not_attached_only = |what: &str| {
            Error::InvalidArgument(format!(
                "{} is {what}: only a volume attached as a block device has a filesystem to mount",
                view.host_name
            ))
        };
        if view.state == VolumeState::Detaching {
            return Err(not_attached_only("being dismounted"));
        }
        // A dismount under way holds it: told within moments, as a second one is.
        let mut parts = lock_parts_or_busy(&parts, id)?;
        if parts.fs.is_some() {
            return Err(Error::AlreadyMounted(format!(
                "the filesystem of {}",
                view.host_name
            )));
        }
        // Mounted by hand from its device: a second mount would share it
        // unseen (udisks refuses a device mounted already, too).
        if let Some(at) = mounted_by_hand(&parts) {
            return Err(Error::AlreadyMounted(format!(
                "the filesystem of {} ({at}, outside tcd)",
                view.host_name
            )));
        }
        let given = mount_point
            .map(|p| check_given_mount_point(p, allow_non_empty, owner.0))
            .transpose()?;
        let asked = FsRequest {
            id,
            host_name: &view.host_name,
            mount_point: given,
            owner,
            slot: parts.slot_asked,
            discard: view.discard,
            fs_options,
        };
        let export = parts
            .export
            .take()
            .ok_or_else(|| not_attached_only("not served"))?;
        let found = self.mount_filesystem(asked, export.as_ref(), &volume, None, &mut parts);
        parts.export = Some(export);
        let found = found?;
        let mount_point = parts.fs.as_ref().map(|f| f.path());
        let health_watch = parts
            .fs
            .as_ref()
            .map(|fs| FsWatch::new(fs.mount_id(), &view.device, &found, view.read_only));
        let mut t = self.lock();
        let e = t.get_mut(&id).ok_or(Error::NotMounted(id.to_string()))?;
        e.view.mount_point = mount_point;
        e.view.filesystem = Some(found);
        e.health_watch = health_watch;
        Ok(e.view.clone())
    }

    /// Unmounts the filesystem of volume `id` and leaves the volume
    /// attached as its block device, as one attached with filesystem
    /// "none" is (udisks' `unmount` before `lock`). A busy filesystem is
    /// [`Error::Held`] naming its holders, nothing changed, unless
    /// `force`: then it is unmounted lazily (off its mount point at once)
    /// and its users keep it until they let go. Only this volume's lock
    /// is held meanwhile.
    pub fn unmount_attached(&self, id: u32, force: bool) -> Result<Mounted> {
        let (host_name, parts) = {
            let t = self.lock();
            let e = t.get(&id).ok_or(Error::NotMounted(id.to_string()))?;
            (e.view.host_name.clone(), Arc::clone(&e.parts))
        };
        // A dismount under way holds it: told within moments, as a second one is.
        let mut parts = lock_parts_or_busy(&parts, id)?;
        // It may have gone (or be detaching, its filesystem off already)
        // while this call waited for its lock.
        if !self.lock().contains_key(&id) {
            return Err(Error::NotMounted(id.to_string()));
        }
        let Some(fs) = parts.fs.take() else {
            return Err(match mounted_by_hand(&parts) {
                Some(at) => Error::NotFound(format!(
                    "the filesystem of {host_name} is not mounted by tcd: {at} outside tcd \
                     (umount(8) unmounts it)"
                )),
                None => Error::NotMounted(format!("the filesystem of {host_name}")),
            });
        };
        fs.sync();
        let mut lazy = false;
        let unmounted = match fs.unmount(false) {
            Err(Error::Busy(_)) if force => {
                lazy = true;
                fs.unmount(true)
            }
            // Who holds it, as dismount says.
            Err(Error::Busy(what)) => Err(held(&parts, &fs, what, true)),
            other => other,
        };
        if let Err(e) = unmounted {
            parts.fs = Some(fs);
            return Err(e);
        }
        if parts.made_mount_point {
            fs.remove_dir();
            parts.made_mount_point = false;
        }
        drop(fs);
        // A driver process writes what it holds as it stops; lazily
        // unmounted, it goes with the last user, waited for off this call.
        match parts.userfs.take() {
            Some(u) if lazy => {
                let _ = std::thread::Builder::new()
                    .name(format!("tcd-userfs-{id}"))
                    .spawn(move || u.wait_gone_unbounded());
            }
            Some(u) => u.wait_gone(),
            None => {}
        }
        let mut t = self.lock();
        let e = t.get_mut(&id).ok_or(Error::NotMounted(id.to_string()))?;
        // As a volume attached alone: no mount point, no filesystem, its
        // slot kept.
        e.view.mount_point = None;
        e.view.filesystem = None;
        e.health_watch = None;
        tracing::info!(id, "filesystem unmounted; volume still attached");
        Ok(e.view.clone())
    }

    /// Mounts the filesystem on a volume's block device: at the folder
    /// asked (checked already), else at a default mount point made for it.
    /// Its type, once mounted; on failure, a mount point made is removed.
    fn mount_filesystem(
        &self,
        asked: FsRequest<'_>,
        export: &dyn BlockExport,
        volume: &OpenVolume,
        overlay: Option<&Overlay>,
        parts: &mut Parts,
    ) -> Result<String> {
        let mut made_at: Option<PathBuf> = None;
        let result = (|| -> Result<String> {
            let found = mount::detect_filesystem(export.device())?
                .ok_or_else(|| Error::NoFilesystem(asked.host_name.to_owned()))?;
            self.check_filesystem(&found, asked.host_name)?;
            if let Some(o) = overlay
                && !overlay::replays_journal(&found)
            {
                o.seal();
            }
            let target = match asked.mount_point {
                Some(t) => t,
                None => {
                    let p = self.make_default_mount_point(asked.owner, asked.slot)?;
                    parts.made_mount_point = true;
                    made_at = Some(p.clone());
                    mountpoint::check(&p, false)?
                }
            };
            let options = MountOptions {
                fs_type: found.clone(),
                read_only: volume.is_read_only(),
                owner: Some(asked.owner),
                discard: asked.discard,
                fs: asked.fs_options,
            };
            if mount::userfs::needed(&found) {
                let staging = self.runtime.join("fs").join(asked.id.to_string());
                let (driver, fs) =
                    mount::userfs::mount(export.device(), &target, &options, &staging)?;
                parts.userfs = Some(driver);
                parts.fs = Some(fs);
            } else {
                let options = MountOptions {
                    fs_type: mount::userfs::kernel_type(&found),
                    ..options
                };
                let mounted = mountpoint::mount(export.device(), &target, &options);
                if let Some(o) = overlay
                    && o.exceeded()
                {
                    if let Ok(fs) = mounted {
                        let _ = fs.unmount(true);
                    }
                    return Err(Error::JournalNeedsReplay {
                        fs_type: found,
                        why: format!(
                            "the replay needs more than the {} MiB of memory a read-only mount may use",
                            o.limit() >> 20
                        ),
                    });
                }
                parts.fs = Some(mounted?);
            }
            // The kernel mounted it (and replayed any journal into the
            // overlay): from now on a write to the device fails at once,
            // as on a loop device attached read-only, instead of landing
            // in memory and going at the dismount.
            if volume.is_read_only()
                && overlay.is_some()
                && let Err(e) = export.seal()
            {
                if let Some(fs) = parts.fs.take() {
                    let _ = fs.unmount(true);
                }
                if let Some(u) = parts.userfs.take() {
                    u.wait_gone();
                }
                return Err(e);
            }
            Ok(found)
        })();
        if result.is_err() {
            parts.made_mount_point = false;
            if let Some(p) = made_at {
                let _ = std::fs::remove_dir(p);
            }
        }
        result
    }

    /// Flushes, unmounts the filesystem, detaches the loop device, stops
    /// FUSE and drops the keys, in that order. A busy filesystem is
    /// [`Error::Busy`] unless `force`: then it is detached (see
    /// [`MountTable::detach`]) and the view returned is
    /// [`VolumeState::Detaching`], naming what holds it; so is the answer
    /// to a dismount of a volume already detaching. Only this volume's
    /// lock is held meanwhile: other volumes mount and dismount as usual.
    pub fn dismount(&self, id: u32, force: bool) -> Result<Mounted> {
        self.dismount_naming(id, force, true)
    }

    /// [`MountTable::dismount`] without force and without naming what
    /// holds a busy filesystem: for a retry nobody is told of, which need
    /// not read every process's open files.
    pub fn try_dismount_quietly(&self, id: u32) -> Result<Mounted> {
        self.dismount_naming(id, false, false)
    }

    fn dismount_naming(&self, id: u32, force: bool, name_holders: bool) -> Result<Mounted> {
        let parts = {
            let t = self.lock();
            let e = t.get(&id).ok_or(Error::NotMounted(id.to_string()))?;
            if e.view.state == VolumeState::Detaching {
                let mut view = e.view.clone();
                let holding = e.holding.clone();
                drop(t);
                if let Some((target, except)) = holding {
                    view.holders = holders::scan(target, &except);
                }
                return Ok(view);
            }
            Arc::clone(&e.parts)
        };
        // A second dismount of the same volume is told so within moments.
        let mut parts = lock_parts_or_busy(&parts, id)?;
        // It may have gone while this call waited for its lock.
        if !self.lock().contains_key(&id) {
            return Err(Error::NotMounted(id.to_string()));
        }
        // A block device alone (no filesystem of ours on it) that someone
        // else mounted, stacked a device on or holds open: the detach
        // would wait for them.
        let unmounting = parts.fs.is_some();
        if !unmounting && let Some(r) = self.unless_device_free(id, &mut parts, force) {
            return r;
        }
        if let Some(fs) = &parts.fs {
            // Mounted elsewhere too (a bind mount of its mount point, its
            // device mounted by hand): unmounting ours would leave the
            // other writable and the volume detaching behind the caller.
            if !force && let Some(e) = mounted_elsewhere(&parts, fs, name_holders) {
                return Err(e);
            }
            fs.sync();
            match fs.unmount(false) {
                Ok(()) => {}
                Err(Error::Busy(_)) if force => return self.detach(id, &mut parts),
                // Who holds it, as --force would say.
                Err(Error::Busy(what)) => return Err(held(&parts, fs, what, name_holders)),
                Err(e) => return Err(e),
            }
            if parts.made_mount_point {
                fs.remove_dir();
            }
            parts.fs = None;
            // A driver process writes what it holds as it stops.
            if let Some(u) = parts.userfs.take() {
                u.wait_gone();
            }
            // Our filesystem is off it; whoever else holds the device
            // (mounted it too, say) is waited for off this call.
            if let Some(r) = self.unless_device_free(id, &mut parts, true) {
                return r;
            }
        }
        let entry = self
            .lock()
            .remove(&id)
            .ok_or(Error::NotMounted(id.to_string()))?;
        let _ = entry.volume.sync();
        // The FUSE session ends now by the daemon's hand, not by a fault.
        entry.volume.health().closing();
        if let Some(export) = parts.export.take() {
            export.close()?;
        }
        tracing::info!(id, "volume dismounted");
        // The last reference to the volume (and its keys) goes here.
        Ok(entry.view)
    }

    /// The forced dismount of a filesystem in use: made read-only (what
    /// was written is on the volume, and nothing more is written; a file
    /// open for writing keeps it writable), unmounted lazily (off its
    /// mount point, so nobody new reaches it), and marked detaching. A
    /// thread of its own waits until the last user leaves, then detaches
    /// the loop device, stops FUSE, drops the keys and removes the volume
    /// from the table; it holds no lock meanwhile.
    fn detach(&self, id: u32, parts: &mut Parts) -> Result<Mounted> {
        let Some(fs) = parts.fs.take() else {
            return Err(Error::NotMounted(id.to_string()));
        };
        let (target, except) = match holding(parts, &fs) {
            Some((t, except)) => (Some(t), except),
            None => (None, Vec::new()),
        };
        if let Some(watch) = self.lock().get(&id).and_then(|e| e.health_watch.as_ref()) {
            watch.made_read_only();
        }
        if let Err(e) = fs.remount_read_only() {
            tracing::warn!(id, "volume stays writable while in use: {e}");
        }
        if let Err(e) = fs.unmount(true) {
            parts.fs = Some(fs);
            return Err(e);
        }
        if parts.made_mount_point {
            fs.remove_dir();
        }
        drop(fs);
        let held = target
            .map(|t| holders::scan(t, &except))
            .unwrap_or_default();
        self.leave_detaching(id, parts, target.map(|t| (t, except)), held)
    }

    /// `None` when the volume's block device is free (nobody but the
    /// daemon uses it). Else, unless `force`, [`Error::Held`] naming what
    /// holds it (its mount points, the devices stacked on it, the
    /// processes), nothing changed; with `force`, the volume is left
    /// detaching (see [`MountTable::leave_detaching`]).
    fn unless_device_free(
        &self,
        id: u32,
        parts: &mut Parts,
        force: bool,
    ) -> Option<Result<Mounted>> {
        let device = parts.export.as_ref()?.device().to_path_buf();
        let used = holders::device_use(&device);
        if used.is_empty() {
            return None;
        }
        let what = used.describe(&device);
        if !force {
            return Some(Err(Error::Held {
                what,
                holders: used.processes,
            }));
        }
        tracing::info!(
            id,
            "{what} is in use; the volume is detached when it is let go"
        );
        let holding = used.target.map(|t| (t, Vec::new()));
        Some(self.leave_detaching(id, parts, holding, used.processes))
    }

    /// Marks volume `id` detaching (held by `held`; `holding`: what to scan
    /// to name its holders again) and starts the thread that detaches its
    /// block device once the kernel lets go of it, stops FUSE, drops the
    /// keys and removes it from the table, holding no lock meanwhile.
    fn leave_detaching(
        &self,
        id: u32,
        parts: &mut Parts,
        holding: Option<(holders::Target, Vec<u32>)>,
        held: Vec<Holder>,
    ) -> Result<Mounted> {
        let view = {
            let mut t = self.lock();
            let e = t.get_mut(&id).ok_or(Error::NotMounted(id.to_string()))?;
            e.view.state = VolumeState::Detaching;
            // Off its mount point: the folder and the slot are free for
            // another volume.
            e.view.mount_point = None;
            e.view.slot = 0;
            e.view.holders = held;
            e.holding = holding;
            e.view.clone()
        };
        tracing::info!(id, holders = %holders::describe(&view.holders), "volume detached; in use");
        let export = parts.export.take();
        let userfs = parts.userfs.take();
        let entries = Arc::clone(&self.entries);
        let gone = Arc::clone(&self.gone_events);
        let health = Arc::clone(&view.health);
        let finish = move || {
            // A driver serving the filesystem goes when its last user does.
            if let Some(u) = userfs {
                u.wait_gone_unbounded();
            }
            // The FUSE session ends on purpose: not a cut connection.
            health.closing();
            if let Some(export) = export
                && let Err(e) = export.close_when_released()
            {
                tracing::warn!(id, "detached volume: {e}");
            }
            let entry = entries
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
            if let Some(e) = &entry {
                let _ = e.volume.sync();
            }
            tracing::info!(id, "volume dismounted");
            if let Some(tx) = gone.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                let _ = tx.send(id);
            }
            // The last reference to the volume (and its keys) goes here.
            drop(entry);
        };
        if let Err(e) = std::thread::Builder::new()
            .name(format!("tcd-detach-{id}"))
            .spawn(finish)
        {
            tracing::error!(id, "cannot start the detached volume's teardown: {e}");
        }
        Ok(view)
    }

    /// Dismounts everything; the first error is returned after trying all.
    pub fn dismount_all(&self, force: bool) -> Result<Vec<Mounted>> {
        let ids: Vec<u32> = self.lock().keys().copied().collect();
        let mut done = Vec::new();
        let mut first_error = None;
        for id in ids {
            match self.dismount(id, force) {
                Ok(v) => done.push(v),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(done),
        }
    }

    /// At exit, after [`MountTable::dismount_all`]: the volumes still
    /// detaching (held by a process after a forced dismount) are let go
    /// lazily. Their loop devices are detached as the kernel detaches a
    /// busy one, once its last user closes it, and their FUSE mounts go
    /// from the mount table; so no dead mount or loop device is left behind
    /// (with the daemon gone they serve nothing either way).
    pub fn let_go_at_exit(&self) {
        let left: Vec<(u32, PathBuf)> = self
            .lock()
            .iter()
            .map(|(id, e)| (*id, e.view.device.clone()))
            .collect();
        for (id, device) in left {
            let folder = self.runtime.join("fuse").join(id.to_string());
            let file = folder.join(mount::fuse::FILE_NAME);
            if let Err(e) = mount::loopdev::detach_from(&device, &file) {
                tracing::warn!(id, "detaching volume's {} at exit: {e}", device.display());
            }
            match mountpoint::unmount(&folder, true) {
                Ok(()) => tracing::info!(id, "detaching volume let go at exit"),
                Err(e) => tracing::warn!(id, "detaching volume at exit: {e}"),
            }
            let _ = std::fs::remove_dir(&folder);
        }
    }

    /// Where to send the id of a detaching volume once it is gone.
    pub fn watch_gone(&self, to: std::sync::mpsc::Sender<u32>) {
        *self.gone_events.lock().unwrap_or_else(|p| p.into_inner()) = Some(to);
    }

    /// Where to send the id of a volume that became read-only.
    pub fn watch_read_only(&self, to: std::sync::mpsc::Sender<u32>) {
        *self
            .read_only_events
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(to);
    }

    /// Records that volume `id` is read-only now; its new view.
    pub fn mark_read_only(&self, id: u32) -> Option<Mounted> {
        let mut t = self.lock();
        let e = t.get_mut(&id)?;
        e.view.read_only = e.volume.is_read_only();
        Some(e.view.clone())
    }

    /// Moves every mounted volume to the engine's backends as they now
    /// stand (after a policy change), without dismounting.
    pub fn rebind_all(&self) -> Applied {
        let mut applied = Applied::default();
        for e in self.lock().values_mut() {
            match e.volume.rebind(&self.engine) {
                Ok(None) => {}
                Ok(Some(now)) => {
                    tracing::info!(volume = e.view.id, backends = %now.join(","), "volume moved to other backends");
                    e.view.info.backends = now;
                    applied.moved.push(e.view.clone());
                }
                Err(err) => {
                    let note = format!(
                        "volume {} ({}) keeps {} until dismounted: {err}",
                        e.view.id,
                        e.view.host_name,
                        e.view.info.backends.join(",")
                    );
                    tracing::warn!("{note}");
                    applied.kept.push(note);
                }
            }
        }
        applied
    }

    /// Each mounted volume with how long it has had no I/O and the mark of
    /// its last I/O (see [`OpenVolume::last_io`]); none that is detaching
    /// already.
    pub fn idle_times(&self) -> Vec<(Mounted, std::time::Duration, u64)> {
        self.lock()
            .values()
            .filter(|e| e.view.state == VolumeState::Mounted)
            .map(|e| (e.view.clone(), e.volume.idle_for(), e.volume.last_io()))
            .collect()
    }

    /// The mark of volume `id`'s last I/O, if it is in the table.
    pub fn last_io(&self, id: u32) -> Option<u64> {
        self.lock().get(&id).map(|e| e.volume.last_io())
    }

    pub fn list(&self) -> Vec<Mounted> {
        self.lock().values().map(|e| e.view.clone()).collect()
    }

    pub fn get(&self, id: u32) -> Option<Mounted> {
        self.lock().get(&id).map(|e| e.view.clone())
    }

    /// The mounted volume whose host, mount point or device is `name`;
    /// `uid`'s own first, where names meet.
    pub fn find(&self, name: &str, uid: u32) -> Option<Mounted> {
        let t = self.lock();
        let mut found = t.values().filter(|e| {
            e.view.host_name == name
                || e.view.device == Path::new(name)
                || e.view.mount_point.as_deref() == Some(Path::new(name))
        });
        let first = found.next()?;
        // A volume in service before one detaching from the same place.
        let chosen = std::iter::once(first)
            .chain(found)
            .max_by_key(|e| {
                (
                    e.view.owner == uid,
                    e.view.state == VolumeState::Mounted,
                    std::cmp::Reverse(e.view.id),
                )
            })
            .unwrap_or(first);
        Some(chosen.view.clone())
    }

    /// Makes the default mount point: `veracrypt<slot>` for a slot, else
    /// the lowest `tcd<N>` (from 1) that no mounted volume uses and that
    /// no folder holds yet; making the folder decides, so two mounts at
    /// once never get the same one.
    fn make_default_mount_point(&self, owner: (u32, u32), slot: Option<u32>) -> Result<PathBuf> {
        if let Some(s) = slot {
            return default_mount_point(owner, &default_name(s), true);
        }
        let taken: Vec<PathBuf> = self
            .lock()
            .values()
            .filter_map(|e| e.view.mount_point.clone())
            .collect();
        let mut last = None;
        for n in 1..=MAX_DEFAULT_MOUNT_POINTS {
            let name = format!("tcd{n}");
            if taken.contains(&default_mount_point_path(owner.0, &name)) {
                continue;
            }
            match default_mount_point(owner, &name, false) {
                Err(Error::Io { source, what })
                    if source.kind() == std::io::ErrorKind::AlreadyExists =>
                {
                    last = Some(Error::Io { source, what });
                }
                other => return other,
            }
        }
        Err(last.unwrap_or_else(|| Error::MountPoint {
            path: default_mount_point_path(owner.0, "tcd*")
                .display()
                .to_string(),
            problem: "no free folder name".to_owned(),
        }))
    }

    /// Refuses a slot one of `uid`'s volumes holds (said before the
    /// search; [`MountTable::reserve_slot`] decides).
    fn check_slot(&self, uid: u32, slot: u32) -> Result<()> {
        let taken = self
            .lock()
            .values()
            .any(|e| e.view.owner == uid && e.view.slot == slot);
        match taken {
            true => Err(slot_taken(slot)),
            false => Ok(()),
        }
    }

    /// Holds `host` as being mounted until the guard goes, so nothing
    /// mounts it while its size changes; `AlreadyMounted` if it is.
    pub fn hold(&self, host: &File) -> Result<impl Drop + '_> {
        let meta = host.metadata().map_err(|e| Error::Io {
            what: "cannot inspect the volume".into(),
            source: e,
        })?;
        self.reserve(HostKey::of(&meta))
            .ok_or_else(|| Error::AlreadyMounted("the volume".into()))
    }

    /// Grows the filesystem inside `volume` (just expanded, not mounted)
    /// through a FUSE folder of the table's own.
    pub fn grow_filesystem(&self, volume: OpenVolume) -> Result<mount::grow::Grown> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let folder = self.runtime.join("fuse").join(format!("grow-{id}"));
        mount::grow::grow(Arc::new(volume), &folder, self.serving())
    }

    /// Whether `host` (an open file) is mounted, or a device sharing
    /// sectors with it (a drive and its own partition).
    pub fn is_mounted(&self, host: &File) -> bool {
        self.mounted_over(host).is_some()
    }

    /// The mounted volume whose host is `host` or lies over or under it
    /// (a loop device and its file, a partition and its disk).
    pub fn mounted_over(&self, host: &File) -> Option<Mounted> {
        let id = HostKey::of(&host.metadata().ok()?);
        self.lock()
            .values()
            .find(|e| e.host_id.overlaps(&id))
            .map(|e| e.view.clone())
    }

    /// [`Error::AlreadyMounted`] naming the volume mounted over `host`
    /// and where tcd serves it; `Ok` if none is.
    pub fn refuse_mounted(&self, host: &File) -> Result<()> {
        let Some(m) = self.mounted_over(host) else {
            return Ok(());
        };
        let on = m
            .mount_point
            .as_ref()
            .map(|p| format!(" on {}", p.display()))
            .unwrap_or_default();
        Err(Error::AlreadyMounted(format!(
            "{} (tcd serves it as {}{on})",
            m.host_name,
            m.device.display()
        )))
    }
}

impl Drop for MountTable {
    fn drop(&mut self) {
        let _ = self.dismount_all(true);
    }
}

/// Volume health: the faults no request of the data path sees.
impl MountTable {
    /// Where to send the id of a volume with a new kind of problem.
    pub fn watch_health(&self, to: std::sync::mpsc::Sender<u32>) {
        *self.health_events.lock().unwrap_or_else(|p| p.into_inner()) = Some(to);
    }

    /// Looks at every volume's host (deleted, truncated) and filesystem
    /// (turned read-only by the kernel, errors counted) and records what
    /// it finds in the volume's health. No lock of the table is held
    /// meanwhile (a host on a hung network filesystem may block).
    pub fn check_health(&self) {
        let volumes: Vec<(Arc<OpenVolume>, Option<FsWatch>)> = self
            .lock()
            .values()
            .map(|e| (Arc::clone(&e.volume), e.health_watch.clone()))
            .collect();
        if volumes.is_empty() {
            return;
        }
        let table = tcd_proto::mount_table::now();
        for (volume, watch) in volumes {
            volume.check_host();
            if let Some(w) = watch {
                w.check(&table, volume.health());
            }
        }
    }

    /// The volumes whose filesystem was unmounted outside tcd (`umount
    /// MOUNTPOINT`), each now left attached as its block device, as after
    /// [`MountTable::unmount_attached`]: their views, to announce. A volume
    /// whose parts are locked (a dismount or unmount under way) is left to
    /// that call.
    pub fn filesystems_unmounted_outside(&self) -> Vec<Mounted> {
        let watched: Vec<(u32, Arc<Mutex<Parts>>)> = self
            .lock()
            .iter()
            .filter(|(_, e)| e.health_watch.is_some())
            .map(|(id, e)| (*id, Arc::clone(&e.parts)))
            .collect();
        let mut gone = Vec::new();
        for (id, parts) in watched {
            let Some(mut parts) = try_lock_parts(&parts) else {
                continue;
            };
            if !parts.fs.as_ref().is_some_and(|fs| fs.is_gone()) {
                continue;
            }
            if let Some(fs) = parts.fs.take()
                && std::mem::take(&mut parts.made_mount_point)
            {
                fs.remove_dir();
            }
            // A driver process ends with its filesystem.
            if let Some(u) = parts.userfs.take() {
                u.wait_gone();
            }
            let mut t = self.lock();
            if let Some(e) = t.get_mut(&id) {
                e.view.mount_point = None;
                e.view.filesystem = None;
                e.health_watch = None;
                tracing::warn!(
                    id,
                    volume = %e.view.host_name,
                    "its filesystem was unmounted outside tcd; the volume stays attached"
                );
                gone.push(e.view.clone());
            }
        }
        gone
    }

    /// A volume that became read-only (hidden-volume protection refused a
    /// write) under a filesystem served by a driver process (fusefat):
    /// the driver keeps a write the device refused as done and reports no
    /// error, so its filesystem is made read-only itself, and every later
    /// write fails (EROFS) instead of being lost unseen. While a file is
    /// open for writing the kernel refuses; tried again at each sweep. A
    /// volume whose parts are locked (a dismount under way) is skipped.
    pub fn seal_drivers_read_only(&self) {
        let due: Vec<(u32, Arc<Mutex<Parts>>)> = self
            .lock()
            .iter()
            .filter(|(_, e)| e.view.protects_hidden && e.volume.is_read_only())
            .map(|(id, e)| (*id, Arc::clone(&e.parts)))
            .collect();
        for (id, parts) in due {
            let Some(mut parts) = try_lock_parts(&parts) else {
                continue;
            };
            if parts.driver_sealed || parts.userfs.is_none() {
                continue;
            }
            let Some(fs) = parts.fs.as_ref() else {
                continue;
            };
            match fs.remount_read_only() {
                Ok(()) => {
                    parts.driver_sealed = true;
                    tracing::warn!(id, "its filesystem is read-only now: writes fail at once");
                }
                Err(e) => tracing::debug!(id, "filesystem not yet read-only: {e}"),
            }
        }
    }

    /// After [`MountTable::check_health`]: the volumes whose problems
    /// changed since they were last announced.
    pub fn health_changes(&self) -> Vec<Mounted> {
        self.lock()
            .values()
            .filter(|e| e.view.health.unannounced().is_some())
            .map(|e| e.view.clone())
            .collect()
    }
}

/// The default mount point's name for a slot asked for: `veracrypt<slot>`
/// (VeraCrypt's numbering); without a slot it is the lowest free
/// `tcd<N>` (see `make_default_mount_point`).
fn default_name(slot: u32) -> String {
    format!("veracrypt{slot}")
}

/// A slot held for a mount under way: (owner, slot).
type SlotHeld = (u32, u32);

/// VeraCrypt's slots are numbered 1 to 64.
pub const MAX_SLOT: u32 = 64;

/// A mount point the caller named, checked (see [`mountpoint::check`]):
/// a user mounts only on a folder of their own; root anywhere it passes.
fn check_given_mount_point(
    path: &Path,
    allow_non_empty: bool,
    owner_uid: u32,
) -> Result<mountpoint::Target> {
    let t = mountpoint::check(path, allow_non_empty)?;
    if owner_uid != 0 && t.owner() != Some(owner_uid) {
        return Err(Error::MountPoint {
            path: path.display().to_string(),
            problem: "is not the caller's own folder".into(),
        });
    }
    Ok(t)
}

/// How long a call waits for a volume's lock before saying it is busy:
/// the health sweep holds it for a stat of the mount point, a dismount
/// for its whole length.
const PARTS_LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(1500);

/// Volume `id`'s parts, locked. A dismount under way holds them, and the
/// caller is told so within moments rather than made to wait for it; a
/// sweep's brief look is waited out. A lock poisoned by a panicking call
/// is taken over: the parts stay whatever that call left.
fn lock_parts_or_busy(parts: &Mutex<Parts>, id: u32) -> Result<std::sync::MutexGuard<'_, Parts>> {
    let deadline = std::time::Instant::now() + PARTS_LOCK_PATIENCE;
    loop {
        match parts.try_lock() {
            Ok(p) => return Ok(p),
            Err(std::sync::TryLockError::Poisoned(p)) => return Ok(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(std::sync::TryLockError::WouldBlock) => {
                return Err(Error::Busy(format!("volume {id} (being dismounted)")));
            }
        }
    }
}

/// Volume `id`'s parts if nobody holds them now: for the sweeps, which
/// leave a volume in use to its call and look again next time.
fn try_lock_parts(parts: &Mutex<Parts>) -> Option<std::sync::MutexGuard<'_, Parts>> {
    match parts.try_lock() {
        Ok(p) => Some(p),
        Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

fn slot_taken(slot: u32) -> Error {
    Error::InvalidArgument(format!(
        "slot {slot} is taken: another of your volumes is mounted in it; choose another slot"
    ))
}

/// How many `tcd<N>` names a user's default mount points may take.
const MAX_DEFAULT_MOUNT_POINTS: u32 = 4096;

/// `/run/media/<user>/<name>`, as udisks places mount points (the uid
/// for a user without a name).
fn default_mount_point_path(uid: u32, name: &str) -> PathBuf {
    let user = user_name(uid).unwrap_or_else(|| uid.to_string());
    PathBuf::from(format!("/run/media/{user}/{name}"))
}

/// The login name of `uid`, from the password database; only names safe
/// as one path component.
fn user_name(uid: u32) -> Option<String> {
    let mut pwd: libc::passwd = zeroed_passwd();
    let mut buf = vec![0 as libc::c_char; 4096];
    let mut result: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: getpwuid_r writes into `pwd` and `buf`, both live and of the
    // sizes given, and sets `result` to `&pwd` or null.
    let rc = unsafe { libc::getpwuid_r(uid, &mut pwd, buf.as_mut_ptr(), buf.len(), &mut result) };
    if rc != 0 || result.is_null() || pwd.pw_name.is_null() {
        return None;
    }
    // SAFETY: on success pw_name points to a NUL-terminated string in `buf`.
    let name = unsafe { std::ffi::CStr::from_ptr(pwd.pw_name) }
        .to_str()
        .ok()?
        .to_owned();
    let safe = !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    safe.then_some(name)
}

fn zeroed_passwd() -> libc::passwd {
    // SAFETY: passwd is a plain C struct of pointers and integers, for
    // which all-zero bytes (null pointers, zero ids) are a valid value.
    unsafe { std::mem::zeroed() }
}

/// Makes `/run/media/<user>/<name>`, owned by the user; an existing
/// folder is taken only when `reuse` (else the error says AlreadyExists).
fn default_mount_point(owner: (u32, u32), name: &str, reuse: bool) -> Result<PathBuf> {
    let p = default_mount_point_path(owner.0, name);
    let io = |e| Error::Io {
        what: format!("cannot make the mount point {}", p.display()),
        source: e,
    };
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    match std::fs::create_dir(&p) {
        Ok(()) => {}
        Err(e) if reuse && e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io(e)),
    }
    std::os::unix::fs::chown(&p, Some(owner.0), Some(owner.1)).map_err(io)?;
    Ok(p)
}

/// Mount points of filesystems mounted from `device`.
fn mounts_of(device: &Path) -> Vec<PathBuf> {
    tcd_proto::mount_table::now()
        .into_iter()
        .filter(|m| m.source == device)
        .map(|m| m.point)
        .collect()
}

/// A host between its search and its entry in the table.
struct Reserved<'a> {
    table: &'a MountTable,
    host_id: HostKey,
}

impl Drop for Reserved<'_> {
    fn drop(&mut self) {
        self.table
            .mounting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(h, _)| *h != self.host_id);
    }
}

/// The name a volume is shown and found by: the caller's `given` name
/// where it is a `/dev` name of the same block device (a favorite's stable
/// name, resolved as favorites are; `/dev` is the system's), else the path
/// of the descriptor itself, as the kernel knows it. A caller cannot name
/// their volume after another's file.
fn host_name(host: &File, given: &str, device: Option<u64>) -> String {
    if let Some(rdev) = device
        && given.starts_with("/dev/")
        && !given.split('/').any(|c| c == "..")
        && tcd_proto::devices::locate(given)
            .and_then(|p| std::fs::metadata(p).ok())
            .is_some_and(|m| {
                std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()) && m.rdev() == rdev
            })
    {
        return given.to_owned();
    }
    path_of(host)
}

/// The path of the descriptor `host`, as the kernel knows it.
pub fn path_of(host: &File) -> String {
    std::fs::read_link(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(host)
    ))
    .map(|p| p.display().to_string())
    .unwrap_or_else(|_| "(unnamed volume)".to_owned())
}

/// The busy filesystem `fs` of `parts`, `what`, as [`Error::Held`]: with
/// its holders when `name_holders`, none named otherwise.
fn held(parts: &Parts, fs: &mountpoint::MountedFs, what: String, name_holders: bool) -> Error {
    let holders = holding(parts, fs)
        .filter(|_| name_holders)
        .map(|(t, except)| holders::scan(t, &except))
        .unwrap_or_default();
    Error::Held { what, holders }
}

/// "/dev/loop4 mounted on /mnt/x": where the volume's device of `parts`
/// is mounted other than by the daemon; none when it is not.
fn mounted_by_hand(parts: &Parts) -> Option<String> {
    let device = parts.export.as_ref()?.device();
    let rdev = std::fs::metadata(device).ok()?.rdev();
    let at = holders::mounts_from(rdev);
    let first = at.first()?;
    Some(format!(
        "{} mounted on {}",
        device.display(),
        first.display()
    ))
}

/// [`Error::Held`] naming the other mount points of the filesystem `fs`
/// of `parts` (same device number, another mount in the daemon's
/// namespace) and the processes using it; none when it is mounted only
/// where the daemon mounted it.
fn mounted_elsewhere(
    parts: &Parts,
    fs: &mountpoint::MountedFs,
    name_holders: bool,
) -> Option<Error> {
    let dev = fs.device()?;
    let wanted = format!("{}:{}", libc::major(dev), libc::minor(dev));
    let others: Vec<PathBuf> = tcd_proto::mount_table::now()
        .into_iter()
        .filter(|m| m.device == wanted && m.id != fs.mount_id())
        .map(|m| m.point)
        .collect();
    if others.is_empty() {
        return None;
    }
    let device = parts
        .export
        .as_ref()
        .map(|e| e.device().to_path_buf())
        .unwrap_or_else(|| fs.path());
    let used = holders::DeviceUse {
        mounts: others,
        ..Default::default()
    };
    Some(held(parts, fs, used.describe(&device), name_holders))
}

/// What holds the filesystem `fs` of `parts` is looked for by (its device
/// numbers), and the daemon's own helpers left out (a FUSE driver serving
/// it); none when it is no longer at its mount.
fn holding(parts: &Parts, fs: &mountpoint::MountedFs) -> Option<(holders::Target, Vec<u32>)> {
    let block = parts
        .export
        .as_ref()
        .and_then(|e| std::fs::metadata(e.device()).ok())
        .map(|m| m.rdev());
    let target = fs
        .device()
        .map(|fs_dev| holders::Target { fs_dev, block })?;
    let except = parts
        .userfs
        .as_ref()
        .and_then(|u| u.pid())
        .into_iter()
        .collect();
    Some((target, except))
}

/// TrueCrypt 4's volumes (LRW, CBC) mount read-only unless read-write was
/// asked for: TrueCrypt 7.1a called them deprecated and only ever
/// mounted them for moving files out.
fn legacy_read_only(volume: &OpenVolume, read_write_asked: bool) {
    let mode = volume.info().chain.mode;
    if !mode.is_legacy() || volume.is_read_only() {
        return;
    }
    if read_write_asked {
        tracing::warn!(
            mode = mode.name(),
            "a volume of TrueCrypt before 5.0 mounted read-write, as asked; TrueCrypt 7.1a \
             calls its modes deprecated"
        );
    } else {
        volume.make_read_only();
    }
}
