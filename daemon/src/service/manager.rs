//! `org.tcd.Manager1` at `/org/tcd/Tcd1`: mount, dismount, list, header
//! information, create, backends. One instance per client connection, so it
//! knows who is calling (the socket's peer credentials).

use super::authority::Action;
use super::errors::ServiceError;
use super::volume::object_path;
use super::{Peer, Shared};
use crate::cache::Cached;
use crate::engine::Chain;
use crate::engine::trials::{SearchBounds, SearchSlot};
use crate::favorites::{Favorite, Owner};
use crate::mount::{self, BlockExport, FuseLoop};
use crate::mounts::{AutoDismount, Filesystem, MountRequest, Mounted};
use crate::volume::create::{self, CreateOptions, Fill};
use crate::volume::kdf::{Format, Prf};
use crate::volume::maintain;
use crate::volume::opened::OpenVolume;
use crate::volume::unlock::{Credentials, SearchOptions, Target};
use std::collections::HashMap;
use std::fs::File;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{OwnedFd, OwnedObjectPath, OwnedValue, Value};
use zeroize::Zeroizing;

type Options = HashMap<String, OwnedValue>;
type Result<T> = std::result::Result<T, ServiceError>;

/// One row of `ListVolumes`: object, host, device, mount point, filesystem,
/// format, encryption, PRF, read-only, hidden, protects hidden, size,
/// backends (","-joined, one per layer), state ("mounted", "detaching").
pub type VolumeRow = (
    OwnedObjectPath,
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

pub use tcd_proto::dbus::{BackendRow, CipherBenchRow, KdfBenchRow};

pub struct Manager {
    pub(super) shared: Arc<Shared>,
    /// The client on a peer-to-peer socket; `None` on a bus, where each
    /// call's sender is asked of the bus.
    pub(super) peer: Option<Peer>,
    /// A duplicate of the client's socket, to notice the client leaving.
    pub(super) socket: Option<Arc<std::os::fd::OwnedFd>>,
    /// Serving on the system bus, where polkit knows callers by bus name.
    pub(super) on_system_bus: bool,
}

/// Set once the client of `socket` has gone away (or `done` is dropped):
/// a long search for a client that left stops instead of holding the cores.
/// On a message bus the caller is its unique name, watched by `bus_watch`.
struct Departure {
    cancel: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    /// Waits for the bus to say the caller's name has gone; dropped
    /// (cancelled) with the departure.
    bus_watch: Option<zbus::Task<()>>,
}

impl Departure {
    fn watch(socket: Option<&Arc<std::os::fd::OwnedFd>>) -> Departure {
        let cancel = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let Some(socket) = socket else {
            return Departure {
                cancel,
                done,
                bus_watch: None,
            };
        };
        let (c, d, fd) = (Arc::clone(&cancel), Arc::clone(&done), Arc::clone(socket));
        std::thread::spawn(move || {
            use std::os::fd::AsRawFd;
            use std::sync::atomic::Ordering;
            while !d.load(Ordering::Relaxed) {
                let mut p = libc::pollfd {
                    fd: fd.as_raw_fd(),
                    events: libc::POLLRDHUP,
                    revents: 0,
                };
                // SAFETY: one live pollfd, count 1; poll only writes revents.
                let n = unsafe { libc::poll(&mut p, 1, 100) };
                // A client that leaves after its reply is not a departure.
                if n > 0
                    && p.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0
                    && !d.load(Ordering::Relaxed)
                {
                    tracing::info!("client went away: cancelling its request");
                    c.store(true, Ordering::Relaxed);
                    break;
                }
            }
        });
        Departure {
            cancel,
            done,
            bus_watch: None,
        }
    }

    /// Watches the caller of a call on a message bus: the bus announces
    /// `NameOwnerChanged` with no new owner when a unique name leaves.
    async fn watch_bus(conn: &zbus::Connection, sender: &zbus::names::UniqueName<'_>) -> Departure {
        let mut d = Departure::watch(None);
        let name = sender.to_owned();
        let stream = async {
            let proxy = zbus::fdo::DBusProxy::new(conn).await?;
            let stream = proxy
                .receive_name_owner_changed_with_args(&[(0, name.as_str())])
                .await?;
            // Gone before the match was in place?
            let here = proxy
                .name_has_owner(zbus::names::BusName::Unique(name.clone()))
                .await?;
            zbus::Result::Ok((stream, here))
        };
        match stream.await {
            Err(e) => tracing::warn!("cannot watch the caller {name} on the bus: {e}"),
            Ok((_, false)) => {
                tracing::info!("client {name} went away: cancelling its request");
                d.cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            Ok((mut stream, true)) => {
                let (c, done) = (Arc::clone(&d.cancel), Arc::clone(&d.done));
                let task = conn.executor().spawn(
                    async move {
                        use futures_lite::StreamExt;
                        while let Some(signal) = stream.next().await {
                            let gone = signal.args().is_ok_and(|a| a.new_owner().is_none());
                            if gone {
                                if !done.load(std::sync::atomic::Ordering::Relaxed) {
                                    tracing::info!(
                                        "client {name} went away: cancelling its request"
                                    );
                                    c.store(true, std::sync::atomic::Ordering::Relaxed);
                                }
                                break;
                            }
                        }
                    },
                    "tcd-departure",
                );
                d.bus_watch = Some(task);
            }
        }
        d
    }
}

impl Drop for Departure {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

fn bad(what: &str) -> ServiceError {
    ServiceError::InvalidArgument(what.to_owned())
}

fn value<'a>(o: &'a Options, key: &str) -> Option<&'a Value<'static>> {
    o.get(key).map(|v| &**v)
}

fn opt_str(o: &Options, key: &str) -> Result<Option<String>> {
    match value(o, key) {
        None => Ok(None),
        Some(Value::Str(s)) => {
            bounded(&format!("option {key}"), s.as_str())?;
            Ok(Some(s.to_string()))
        }
        Some(_) => Err(bad(&format!("option {key} must be a string"))),
    }
}

fn opt_bool(o: &Options, key: &str) -> Result<bool> {
    match value(o, key) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(bad(&format!("option {key} must be a boolean"))),
    }
}

fn opt_u32(o: &Options, key: &str) -> Result<u32> {
    match value(o, key) {
        None => Ok(0),
        Some(Value::U32(n)) => Ok(*n),
        Some(_) => Err(bad(&format!("option {key} must be a u32"))),
    }
}

fn opt_u64(o: &Options, key: &str) -> Result<Option<u64>> {
    match value(o, key) {
        None => Ok(None),
        Some(Value::U64(n)) => Ok(Some(*n)),
        Some(_) => Err(bad(&format!("option {key} must be a u64"))),
    }
}

/// A password option, bounded like a string.
fn opt_bytes(o: &Options, key: &str) -> Result<Option<Zeroizing<Vec<u8>>>> {
    match value(o, key) {
        None => Ok(None),
        Some(v) => {
            let b = Vec::<u8>::try_from(v.try_clone().map_err(|_| bad(key))?)
                .map(Zeroizing::new)
                .map_err(|_| bad(&format!("option {key} must be bytes")))?;
            if b.len() > MAX_STRING {
                return Err(bad(&format!(
                    "option {key} of {} bytes (at most {MAX_STRING})",
                    b.len()
                )));
            }
            Ok(Some(b))
        }
    }
}

/// A keyfile list option, bounded like the call's own keyfiles.
fn opt_byte_lists(o: &Options, key: &str) -> Result<Vec<Zeroizing<Vec<u8>>>> {
    match value(o, key) {
        None => Ok(Vec::new()),
        Some(v) => {
            let l = Vec::<Vec<u8>>::try_from(v.try_clone().map_err(|_| bad(key))?)
                .map_err(|_| bad(&format!("option {key} must be a list of byte strings")))?;
            let l: Vec<Zeroizing<Vec<u8>>> = l.into_iter().map(Zeroizing::new).collect();
            if l.len() > MAX_KEYFILES || l.iter().any(|f| f.len() > MAX_KEYFILE_BYTES) {
                return Err(bad(&format!(
                    "option {key}: at most {MAX_KEYFILES} keyfiles of at most 1 MiB each"
                )));
            }
            Ok(l)
        }
    }
}

/// `--hash`, `--encryption`, `--backend`, format narrowing.
/// The search options of a call; a forced backend must exist and be
/// allowed by the policy.
fn search_options(o: &Options, backends: &crate::backends::Backends) -> Result<SearchOptions> {
    let mut s = SearchOptions::new();
    if let Some(h) = opt_str(o, "hash")? {
        s.prf = Some(Prf::by_name(&h).ok_or_else(|| bad(&format!("unknown hash {h}")))?);
    }
    if let Some(c) = opt_str(o, "encryption")? {
        s.chain =
            Some(Chain::by_name(&c).ok_or_else(|| {
                ServiceError::UnsupportedCipher(format!("unknown encryption {c}"))
            })?);
    }
    match opt_str(o, "format")?.as_deref() {
        None | Some("") => {}
        Some("truecrypt") => s.format = Some(Format::TrueCrypt),
        Some("veracrypt") => s.format = Some(Format::VeraCrypt),
        Some(f) => return Err(bad(&format!("unknown format {f}"))),
    }
    s.backend = opt_str(o, "backend")?.filter(|b| !b.is_empty());
    if let Some(name) = &s.backend {
        backends.check_forced(name)?;
    }
    Ok(s)
}

/// A password and keyfile contents, wiped on drop.
struct Secret {
    password: Zeroizing<Vec<u8>>,
    keyfiles: Vec<Zeroizing<Vec<u8>>>,
}

impl Secret {
    fn new(password: Vec<u8>, keyfiles: Vec<Vec<u8>>) -> Self {
        Secret {
            password: Zeroizing::new(password),
            keyfiles: keyfiles.into_iter().map(Zeroizing::new).collect(),
        }
    }
    fn keyfile_refs(&self) -> Vec<&[u8]> {
        keyfile_refs(&self.keyfiles)
    }
}

/// Longest string argument or option the daemon takes (a path or a
/// name); longer ones are refused rather than carried around.
const MAX_STRING: usize = 4096;
/// Keyfiles per call, and bytes of each (TrueCrypt reads the first MiB).
const MAX_KEYFILES: usize = 256;
const MAX_KEYFILE_BYTES: usize = 1 << 20;

/// The caller's descriptor of a container: a regular file or a block
/// device, nothing else (a directory, pipe or socket is refused by name).
fn host_file(fd: OwnedFd) -> Result<File> {
    use std::os::unix::fs::FileTypeExt;
    let file = File::from(std::os::fd::OwnedFd::from(fd));
    let kind = file
        .metadata()
        .map_err(|e| bad(&format!("the descriptor cannot be inspected: {e}")))?
        .file_type();
    let what = if kind.is_file() || kind.is_block_device() {
        return Ok(file);
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a pipe"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() {
        "a character device"
    } else {
        "not a file"
    };
    Err(bad(&format!(
        "the descriptor is {what}, not a container file or block device"
    )))
}

/// Refuses a string longer than [`MAX_STRING`].
/// The descriptor a client sent is the favorite's own volume (its file,
/// or the device its stable name points to now).
fn same_volume(host: &File, fav: &Favorite) -> Result<()> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let wrong = || {
        bad(&format!(
            "the volume given is not favorite {}'s {}",
            fav.name, fav.host
        ))
    };
    let given = host.metadata().map_err(|_| wrong())?;
    let path = crate::favorites::auto::locate(fav)
        .ok_or_else(|| ServiceError::NotFound(format!("{} is not present", fav.host)))?;
    let want = std::fs::metadata(&path).map_err(|_| wrong())?;
    let same = if want.file_type().is_block_device() {
        given.file_type().is_block_device() && given.rdev() == want.rdev()
    } else {
        given.dev() == want.dev() && given.ino() == want.ino()
    };
    if same { Ok(()) } else { Err(wrong()) }
}

fn bounded(what: &str, s: &str) -> Result<()> {
    if s.len() > MAX_STRING {
        return Err(bad(&format!(
            "{what} of {} bytes (at most {MAX_STRING})",
            s.len()
        )));
    }
    Ok(())
}

/// Refuses more keyfiles, or larger ones, than a client sends.
fn bounded_keyfiles(k: &[Vec<u8>]) -> Result<()> {
    if k.len() > MAX_KEYFILES || k.iter().any(|f| f.len() > MAX_KEYFILE_BYTES) {
        return Err(bad(&format!(
            "at most {MAX_KEYFILES} keyfiles of at most 1 MiB each"
        )));
    }
    Ok(())
}

fn keyfile_refs(k: &[Zeroizing<Vec<u8>>]) -> Vec<&[u8]> {
    k.iter().map(|k| k.as_slice()).collect()
}

pub fn row(m: &Mounted) -> VolumeRow {
    let show = |p: &Option<std::path::PathBuf>| {
        p.as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default()
    };
    (
        object_path(m.id),
        m.host_name.clone(),
        m.device.display().to_string(),
        show(&m.mount_point),
        m.filesystem.clone().unwrap_or_default(),
        m.info.format.name().to_owned(),
        m.info.chain.name.to_owned(),
        m.info.prf.name().to_owned(),
        m.read_only,
        m.info.hidden,
        m.protects_hidden,
        m.info.data_size,
        m.info.backends.join(","),
        m.state.name().to_owned(),
    )
}

/// The processes holding a detaching volume, as (pid, command), for
/// `caller`: another user's processes are shown to root alone, the others
/// see (0, "") for each.
fn holders_for(caller: &Peer, m: &Mounted) -> Vec<(u32, String)> {
    m.holders
        .iter()
        .map(|h| {
            if caller.uid == 0 || caller.uid == h.uid {
                (h.pid, h.command.clone())
            } else {
                (0, String::new())
            }
        })
        .collect()
}

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

impl Manager {
    /// Notices the caller of this call leaving: its socket, or on a bus its
    /// unique name.
    async fn departure(
        &self,
        header: &zbus::message::Header<'_>,
        conn: &zbus::Connection,
    ) -> Departure {
        match (&self.socket, header.sender()) {
            (None, Some(sender)) if self.peer.is_none() => Departure::watch_bus(conn, sender).await,
            (socket, _) => Departure::watch(socket.as_ref()),
        }
    }

    /// Whether the caller of this call has left: its departure was seen,
    /// or asked now (the bus still knows its name; its socket is open).
    async fn caller_left(
        &self,
        departure: &Departure,
        header: &zbus::message::Header<'_>,
        conn: &zbus::Connection,
    ) -> bool {
        if departure.cancel.load(Ordering::Relaxed) {
            return true;
        }
        if let Some(socket) = &self.socket {
            use std::os::fd::AsRawFd;
            let mut p = libc::pollfd {
                fd: socket.as_raw_fd(),
                events: libc::POLLRDHUP,
                revents: 0,
            };
            // SAFETY: one live pollfd, count 1, no wait; poll only writes
            // revents.
            let n = unsafe { libc::poll(&mut p, 1, 0) };
            return n > 0 && p.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0;
        }
        match (self.peer.is_none(), header.sender()) {
            (true, Some(sender)) => {
                let name = zbus::names::BusName::Unique(sender.to_owned());
                match zbus::fdo::DBusProxy::new(conn).await {
                    Ok(dbus) => dbus.name_has_owner(name).await.is_ok_and(|here| !here),
                    Err(_) => false,
                }
            }
            _ => false,
        }
    }

    /// Takes down a volume mounted for a caller that left before its
    /// answer (never announced: no one else knew of it).
    async fn undo_mount(&self, m: &Mounted) {
        tracing::warn!(
            id = m.id,
            "the caller left before its mount was answered: dismounting the volume"
        );
        let shared = Arc::clone(&self.shared);
        let id = m.id;
        // Forced if need be: nothing of the caller's may be using it.
        let done = blocking::unblock(move || {
            shared
                .table
                .dismount(id, false)
                .or_else(|_| shared.table.dismount(id, true))
        })
        .await;
        match done {
            Ok(_) => tracing::info!(id, "volume of a departed caller dismounted"),
            Err(e) => {
                // It stays: shown, so that it can be dismounted by hand.
                tracing::error!(id, "cannot dismount the volume of a departed caller: {e}");
                self.shared.publish(m).await;
            }
        }
    }

    /// Bounds a header search of `peer`'s by the policy before any work:
    /// the PIMs asked for (above the caller's limits: `LimitExceeded`) and
    /// the searches running (`Busy`). The slot lasts as long as it is held.
    fn search_slot(
        &self,
        peer: &Peer,
        search: &mut SearchOptions,
        pims: &[u32],
    ) -> Result<SearchSlot> {
        let limits = self.shared.backends.policy().limits;
        let admin = peer.uid == 0;
        search.limits = limits.kdf(admin);
        search.caller = peer.uid;
        for &pim in pims {
            search.limits.request_allowed(search.prf, pim)?;
        }
        let bounds = (!admin).then_some(SearchBounds {
            per_caller: limits.searches_per_user,
            total: limits.searches,
        });
        self.shared
            .table
            .engine()
            .trials()
            .begin_search(peer.uid, bounds)
            .map_err(ServiceError::Busy)
    }

    async fn restore(
        &self,
        host: OwnedFd,
        backup: Option<OwnedFd>,
        secret: Secret,
        options: Options,
        peer: &Peer,
        departure: Departure,
    ) -> Result<String> {
        let mut search = search_options(&options, &self.shared.backends)?;
        let pim = opt_u32(&options, "pim")?;
        // Both descriptors are checked before polkit is asked (cheaper).
        let host = host_file(host)?;
        let backup = backup.map(host_file).transpose()?;
        self.shared
            .authority()
            .check(peer, Action::for_host(&host))
            .await?;
        let _slot = self.search_slot(peer, &mut search, &[pim])?;
        if self.shared.table.is_mounted(&host) {
            return Err(ServiceError::AlreadyMounted(
                "dismount the volume before restoring its header".into(),
            ));
        }
        let engine = Arc::clone(self.shared.table.engine());
        let cancel = Arc::clone(&departure.cancel);
        let location = blocking::unblock(move || {
            let kf = secret.keyfile_refs();
            let creds = Credentials {
                password: &secret.password,
                keyfiles: &kf,
                pim,
            };
            let no = &*cancel;
            match backup {
                None => maintain::restore_from_embedded(&engine, &host, creds, &search, no),
                Some(f) => {
                    let mut bytes = Zeroizing::new(Vec::new());
                    std::io::Read::read_to_end(
                        &mut std::io::Read::take(f, maintain::BACKUP_FILE_BYTES as u64 + 1),
                        &mut bytes,
                    )
                    .map_err(|e| crate::Error::Io {
                        what: "cannot read the header backup".into(),
                        source: e,
                    })?;
                    maintain::restore_from_file(&engine, &host, &bytes, creds, &search, no)
                }
            }
        })
        .await?;
        drop(departure);
        Ok(location.describe().to_owned())
    }

    /// Who is calling: the socket's peer, or the bus's word for the sender.
    pub(super) async fn caller(
        &self,
        header: &zbus::message::Header<'_>,
        conn: &zbus::Connection,
    ) -> Result<Peer> {
        if let Some(p) = &self.peer {
            return Ok(p.clone());
        }
        let sender = header
            .sender()
            .ok_or_else(|| ServiceError::PermissionDenied("a call without a sender".into()))?;
        let creds = zbus::fdo::DBusProxy::new(conn)
            .await?
            .get_connection_credentials(sender.clone().into())
            .await
            .map_err(|e| {
                ServiceError::PermissionDenied(format!("cannot identify the caller: {e}"))
            })?;
        let uid = creds.unix_user_id().ok_or_else(|| {
            ServiceError::PermissionDenied("the bus does not know the caller's user".into())
        })?;
        Ok(Peer {
            uid,
            gid: super::authority::primary_gid(uid),
            pid: creds.process_id(),
            system_bus_name: self.on_system_bus.then(|| sender.to_string()),
        })
    }

    /// A user manages their own volumes; another user's only with the
    /// `manage-others` right (administrators). To anyone else, another
    /// user's volume is not there: the error is the one for `name` naming
    /// no volume, so a user cannot probe what others have mounted.
    async fn may_manage(&self, peer: &Peer, m: &Mounted, name: &str) -> Result<()> {
        if peer.uid == 0 || peer.uid == m.owner {
            return Ok(());
        }
        self.shared
            .authority()
            .check(peer, Action::ManageOthers)
            .await
            .map_err(|e| match e {
                ServiceError::PermissionDenied(_) => not_mounted(name),
                other => other,
            })
    }

    /// Root, or whom polkit lets manage system favorites or others'
    /// volumes.
    async fn is_administrator(&self, peer: &Peer) -> bool {
        let authority = self.shared.authority();
        peer.uid == 0
            || authority
                .check(peer, Action::ManageSystemFavorites)
                .await
                .is_ok()
            || authority.check(peer, Action::ManageOthers).await.is_ok()
    }

    /// Whose list a change goes to: the caller's, or the system's for
    /// those polkit lets manage it.
    async fn favorites_owner(&self, peer: &Peer, system: bool) -> Result<Owner> {
        if !system {
            return Ok(Owner::User(peer.uid));
        }
        self.shared
            .authority()
            .check(peer, Action::ManageSystemFavorites)
            .await?;
        Ok(Owner::System)
    }

    /// The caller's favorite `name` (or the system's, when asked or when
    /// the caller has none of that name).
    fn find_favorite(&self, peer: &Peer, name: &str, system: bool) -> Result<(Owner, Favorite)> {
        bounded("the favorite name", name)?;
        let mut owners = vec![Owner::System];
        if !system {
            owners.insert(0, Owner::User(peer.uid));
        }
        for owner in owners {
            if let Some(f) = self.shared.favorites.get(owner, name)? {
                return Ok((owner, f));
            }
        }
        Err(ServiceError::NotFound(format!("no favorite {name}")))
    }

    /// The volume `name` (object path, host, device or mount point) names;
    /// the caller's own first where several have that name.
    fn resolve(&self, name: &str, uid: u32) -> Result<Mounted> {
        let table = &self.shared.table;
        let by_path = name
            .strip_prefix(super::volume::VOLUMES_PATH)
            .and_then(|n| n.strip_prefix('/'))
            .and_then(|n| n.parse().ok())
            .and_then(|id| table.get(id));
        by_path
            .or_else(|| table.find(name, uid))
            .ok_or_else(|| not_mounted(name))
    }
}

fn not_mounted(name: &str) -> ServiceError {
    ServiceError::NotFound(format!("no mounted volume {name}"))
}

#[zbus::interface(name = "org.tcd.Manager1")]
impl Manager {
    /// Opens the volume in `host` (a descriptor the client opened with its
    /// own rights) and mounts it. Options: `hash`, `encryption`, `format`,
    /// `pim` (u), `readonly` (b), `filesystem` ("auto" or "none"),
    /// `mount_point`, `allow_non_empty` (b), `discard` (b), `backend`,
    /// `protect_hidden_password` (ay), `protect_hidden_keyfiles` (aay),
    /// `protect_hidden_pim` (u), `cache` (b), `use_cache` (b),
    /// `dismount_on_logout` (b), `dismount_before_sleep` (b),
    /// `dismount_idle_seconds` (u), `force_dismount` (b); `favorite` (the
    /// caller's favorite this volume is, whose settings then apply) and
    /// `favorite_system` (b: the system's favorite of that name).
    #[allow(clippy::too_many_arguments)]
    async fn mount(
        &self,
        host: OwnedFd,
        host_name: String,
        password: Vec<u8>,
        keyfiles: Vec<Vec<u8>>,
        options: Options,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<OwnedObjectPath> {
        bounded_keyfiles(&keyfiles)?;
        bounded("the host name", &host_name)?;
        let password = Zeroizing::new(password);
        let keyfiles: Vec<Zeroizing<Vec<u8>>> = keyfiles.into_iter().map(Zeroizing::new).collect();
        let search = search_options(&options, &self.shared.backends)?;
        let filesystem = match opt_str(&options, "filesystem")?.as_deref() {
            None | Some("") | Some("auto") => Filesystem::Auto,
            Some("none") => Filesystem::None,
            Some(f) => return Err(bad(&format!("unknown filesystem choice {f}"))),
        };
        let hidden_password = opt_bytes(&options, "protect_hidden_password")?;
        let hidden_keyfiles = opt_byte_lists(&options, "protect_hidden_keyfiles")?;
        let pim = opt_u32(&options, "pim")?;
        let hidden_pim = opt_u32(&options, "protect_hidden_pim")?;
        let read_only = opt_bool(&options, "readonly")?;
        let mount_point = opt_str(&options, "mount_point")?.filter(|s| !s.is_empty());
        let allow_non_empty = opt_bool(&options, "allow_non_empty")?;
        let discard = opt_bool(&options, "discard")?;
        let mut cache = opt_bool(&options, "cache")?;
        let mut use_cache = opt_bool(&options, "use_cache")?;
        let mut auto_dismount = AutoDismount {
            on_logout: opt_bool(&options, "dismount_on_logout")?,
            before_sleep: opt_bool(&options, "dismount_before_sleep")?,
            idle_seconds: opt_u32(&options, "dismount_idle_seconds")?,
            force: opt_bool(&options, "force_dismount")?,
        };
        let favorite_name = opt_str(&options, "favorite")?.filter(|s| !s.is_empty());
        let favorite_system = opt_bool(&options, "favorite_system")?;
        let shared = Arc::clone(&self.shared);
        let host = host_file(host)?;
        let peer = self.caller(&header, conn).await?;
        self.shared
            .authority()
            .check(&peer, Action::for_host(&host))
            .await?;
        // A favorite's own settings win; its password is never mixed with
        // another's (no cache either way).
        let mut search = search;
        let (mut read_only, mut mount_point, mut filesystem, mut discard) =
            (read_only, mount_point, filesystem, discard);
        let favorite = match &favorite_name {
            None => None,
            Some(name) => {
                let (owner, fav) = self.find_favorite(&peer, name, favorite_system)?;
                same_volume(&host, &fav)?;
                read_only |= fav.readonly;
                mount_point = mount_point.or_else(|| fav.mount_point.clone());
                if fav.filesystem.is_some() {
                    filesystem = crate::favorites::auto::filesystem_of(&fav);
                }
                discard |= fav.discard;
                if search.backend.is_none() && fav.backend.is_some() {
                    search.backend = fav.backend.clone();
                    if let Some(b) = &search.backend {
                        self.shared.backends.check_forced(b)?;
                    }
                }
                let a = fav.auto_dismount();
                auto_dismount = AutoDismount {
                    on_logout: auto_dismount.on_logout || a.on_logout,
                    before_sleep: auto_dismount.before_sleep || a.before_sleep,
                    idle_seconds: if a.idle_seconds > 0 {
                        a.idle_seconds
                    } else {
                        auto_dismount.idle_seconds
                    },
                    force: auto_dismount.force || a.force,
                };
                cache = false;
                use_cache = false;
                Some((owner, fav))
            }
        };
        // A volume mounted already is said so at once: no search slot
        // taken (a user at the bound would hear "busy"), no key derived.
        if self.shared.table.is_mounted(&host) {
            return Err(crate::Error::AlreadyMounted(host_name).into());
        }
        let mut pims = vec![pim];
        if hidden_password.is_some() {
            pims.push(hidden_pim);
        }
        let _slot = self.search_slot(&peer, &mut search, &pims)?;
        let searches = crate::favorites::auto::searches(favorite.as_ref().map(|(_, f)| f), &search);
        let departure = self.departure(&header, conn).await;
        let cancel = Arc::clone(&departure.cancel);
        let watched = host.try_clone().map_err(|e| crate::Error::Io {
            what: "cannot use the volume's descriptor".into(),
            source: e,
        })?;
        let given_name = host_name.clone();
        let mounted = blocking::unblock(move || {
            let (shared, caller_left) = (&shared, &*cancel);
            // The search also stops when another call mounts this host
            // meanwhile: that answer ("already mounted") needs no key.
            let stop = AtomicBool::new(caller_left.load(Ordering::Relaxed));
            let mounted_meanwhile = AtomicBool::new(false);
            let finished = AtomicBool::new(false);
            let result = std::thread::scope(|s| {
                s.spawn(|| {
                    while !finished.load(Ordering::Relaxed) {
                        if caller_left.load(Ordering::Relaxed) {
                            stop.store(true, Ordering::Relaxed);
                        } else if shared.table.is_mounted(&watched) {
                            mounted_meanwhile.store(true, Ordering::Relaxed);
                            stop.store(true, Ordering::Relaxed);
                        }
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                });
                let r = (|| -> crate::Result<Mounted> {
                    let given = Cached {
                        password,
                        keyfiles,
                        pim,
                    };
                    // Cached passwords first (the caller's own), then the one given,
                    // if one was.
                    let mut candidates = if use_cache {
                        shared.cache.for_user(peer.uid)
                    } else {
                        Vec::new()
                    };
                    let gave =
                        !use_cache || !given.password.is_empty() || !given.keyfiles.is_empty();
                    if gave {
                        candidates.push(given);
                    }
                    let hkf = keyfile_refs(&hidden_keyfiles);
                    let mut last = crate::Error::NotUnlocked {
                        untried: Vec::new(),
                    };
                    for (c, search) in candidates
                        .iter()
                        .flat_map(|c| searches.iter().map(move |s| (c, s)))
                    {
                        let host = host.try_clone().map_err(|e| crate::Error::Io {
                            what: "cannot use the volume's descriptor".into(),
                            source: e,
                        })?;
                        let kf = keyfile_refs(&c.keyfiles);
                        let creds = Credentials {
                            password: &c.password,
                            keyfiles: &kf,
                            pim: c.pim,
                        };
                        let hidden = hidden_password.as_ref().map(|p| Credentials {
                            password: p,
                            keyfiles: &hkf,
                            pim: hidden_pim,
                        });
                        let req = MountRequest {
                            host,
                            host_name: host_name.clone(),
                            creds,
                            protect_hidden: hidden,
                            search: search.clone(),
                            read_only,
                            filesystem,
                            mount_point: mount_point.clone().map(Into::into),
                            allow_non_empty,
                            discard,
                            owner: (peer.uid, peer.gid),
                            favorite: favorite.as_ref().map(|(_, f)| f.name.clone()),
                            auto_dismount,
                        };
                        match shared.table.mount(req, &stop) {
                            Ok(m) => {
                                if cache {
                                    shared.cache.add(peer.uid, c.clone());
                                }
                                if let Some((owner, f)) = &favorite
                                    && let Err(e) = shared.favorites.record_opened(
                                        *owner,
                                        &f.name,
                                        m.info.prf.name(),
                                        m.info.chain.name,
                                    )
                                {
                                    tracing::warn!(
                                        "cannot record how favorite {} opened: {e}",
                                        f.name
                                    );
                                }
                                return Ok(m);
                            }
                            Err(e @ crate::Error::NotUnlocked { .. }) => last = e,
                            Err(e) => return Err(e),
                        }
                    }
                    Err(last)
                })();
                finished.store(true, Ordering::Relaxed);
                r
            });
            match result {
                Err(crate::Error::Cancelled)
                    if mounted_meanwhile.load(Ordering::Relaxed)
                        && !caller_left.load(Ordering::Relaxed) =>
                {
                    Err(crate::Error::AlreadyMounted(given_name))
                }
                other => other,
            }
        })
        .await?;
        // A caller that left while its volume was being mounted gets no
        // volume: nothing stays mounted for a client that is gone.
        if self.caller_left(&departure, &header, conn).await {
            drop(departure);
            self.undo_mount(&mounted).await;
            return Err(ServiceError::Cancelled(
                "the caller left before the mount was answered: the volume was dismounted".into(),
            ));
        }
        drop(departure);
        let path = object_path(mounted.id);
        self.shared.publish(&mounted).await;
        Ok(path)
    }

    /// Dismounts the volume named by its object path, host name, device or
    /// mount point. Returns the processes (pid, command) that still hold a
    /// volume a forced dismount left detaching; empty once it is gone.
    async fn dismount(
        &self,
        volume: String,
        force: bool,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<Vec<(u32, String)>> {
        bounded("the volume name", &volume)?;
        let peer = self.caller(&header, conn).await?;
        let m = self.resolve(&volume, peer.uid)?;
        self.may_manage(&peer, &m, &volume).await?;
        let shared = Arc::clone(&self.shared);
        let done = blocking::unblock(move || shared.table.dismount(m.id, force)).await?;
        self.shared.dismounted(&done).await;
        // Dismounted (or detaching) either way; lost writes are the news.
        match super::health::lost_writes(&done) {
            Some(lost) => Err(ServiceError::WritesLost(lost)),
            None => Ok(holders_for(&peer, &done)),
        }
    }

    /// Dismounts every volume the caller may manage; returns how many.
    async fn dismount_all(
        &self,
        force: bool,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<u32> {
        let peer = self.caller(&header, conn).await?;
        let mut n = 0;
        let mut lost = Vec::new();
        for m in self.shared.table.list() {
            // Everyone's for root; a user's own otherwise.
            if peer.uid != 0 && m.owner != peer.uid {
                continue;
            }
            let shared = Arc::clone(&self.shared);
            let done = blocking::unblock(move || shared.table.dismount(m.id, force)).await?;
            self.shared.dismounted(&done).await;
            lost.extend(super::health::lost_writes(&done));
            n += 1;
        }
        if !lost.is_empty() {
            return Err(ServiceError::WritesLost(lost.join("\n")));
        }
        Ok(n)
    }

    /// The caller's mounted volumes (root and `manage-others`: every one).
    async fn list_volumes(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<Vec<VolumeRow>> {
        let peer = self.caller(&header, conn).await?;
        // Fresh health for the caller (a container deleted a moment ago),
        // not the last sweep's; but a host on a hung network filesystem
        // holds up no listing: the sweep reports it later.
        let (done, checked) = std::sync::mpsc::channel();
        let shared = Arc::clone(&self.shared);
        std::thread::spawn(move || {
            shared.table.check_health();
            let _ = done.send(());
        });
        let _ = blocking::unblock(move || checked.recv_timeout(std::time::Duration::from_secs(1)))
            .await;
        let all = self.shared.table.list();
        // As the volume objects: another's volumes only for those polkit
        // lets manage them (asked only when there are any).
        let everyone = peer.uid == 0
            || (all.iter().any(|m| m.owner != peer.uid)
                && self
                    .shared
                    .authority()
                    .check(&peer, Action::ManageOthers)
                    .await
                    .is_ok());
        Ok(all
            .iter()
            .filter(|m| everyone || m.owner == peer.uid)
            .map(row)
            .collect())
    }

    /// What a volume's header says, without mounting it. Same options as
    /// `Mount` for the search.
    async fn header_info(
        &self,
        host: OwnedFd,
        password: Vec<u8>,
        keyfiles: Vec<Vec<u8>>,
        options: Options,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<HashMap<String, OwnedValue>> {
        bounded_keyfiles(&keyfiles)?;
        let password = Zeroizing::new(password);
        let keyfiles: Vec<Zeroizing<Vec<u8>>> = keyfiles.into_iter().map(Zeroizing::new).collect();
        let mut search = search_options(&options, &self.shared.backends)?;
        let pim = opt_u32(&options, "pim")?;
        let host = host_file(host)?;
        let peer = self.caller(&header, conn).await?;
        self.shared
            .authority()
            .check(&peer, Action::for_host(&host))
            .await?;
        let _slot = self.search_slot(&peer, &mut search, &[pim])?;
        let engine = Arc::clone(self.shared.table.engine());
        let departure = self.departure(&header, conn).await;
        let cancel = Arc::clone(&departure.cancel);
        let info = blocking::unblock(move || {
            let kf = keyfile_refs(&keyfiles);
            let creds = Credentials {
                password: &password,
                keyfiles: &kf,
                pim,
            };
            OpenVolume::open(&engine, host, creds, Target::Any, &search, &cancel, true)
                .map(|v| v.info().clone())
        })
        .await?;
        let mut out = HashMap::new();
        let mut put = |k: &str, v: Value<'_>| {
            if let Ok(v) = v.try_into() {
                out.insert(k.to_owned(), v);
            }
        };
        put("format", Value::from(info.format.name()));
        put(
            "header_version",
            Value::from(u32::from(info.header_version)),
        );
        put("encryption", Value::from(info.chain.name));
        put("hash", Value::from(info.prf.name()));
        put("hidden", Value::from(info.hidden));
        put("used_backup_header", Value::from(info.used_backup_header));
        put("data_offset", Value::from(info.data_offset));
        put("size", Value::from(info.data_size));
        put("sector_size", Value::from(info.sector_size));
        put("weak_keys", Value::from(info.weak_keys));
        put("backends", Value::from(info.backends.join(",")));
        Ok(out)
    }

    /// Makes a volume over all of `host` (a file the client sized, or a
    /// device) and a filesystem inside. Options: `format` ("veracrypt",
    /// "truecrypt"), `encryption`, `hash`, `pim` (u), `sector_size` (u),
    /// `quick` (b), `filesystem` ("ext4", "fat", "exfat", "btrfs", "xfs",
    /// "none"), `hidden_size` (t) with `outer_password` (ay) and
    /// `outer_keyfiles` (aay) for a hidden volume inside an existing one.
    /// Emits `CreateProgress` while filling.
    #[allow(clippy::too_many_arguments)]
    async fn create(
        &self,
        host: OwnedFd,
        password: Vec<u8>,
        keyfiles: Vec<Vec<u8>>,
        options: Options,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<()> {
        bounded_keyfiles(&keyfiles)?;
        let password = Zeroizing::new(password);
        let keyfiles: Vec<Zeroizing<Vec<u8>>> = keyfiles.into_iter().map(Zeroizing::new).collect();
        let mut copts = CreateOptions::new();
        match opt_str(&options, "format")?.as_deref() {
            None | Some("") | Some("veracrypt") => {}
            Some("truecrypt") => copts.format = Format::TrueCrypt,
            Some(f) => return Err(bad(&format!("unknown format {f}"))),
        }
        if let Some(c) = opt_str(&options, "encryption")? {
            copts.chain = Chain::by_name(&c).ok_or_else(|| {
                ServiceError::UnsupportedCipher(format!("unknown encryption {c}"))
            })?;
        }
        if let Some(h) = opt_str(&options, "hash")? {
            copts.prf = Prf::by_name(&h).ok_or_else(|| bad(&format!("unknown hash {h}")))?;
        }
        let sector = opt_u32(&options, "sector_size")?;
        if sector != 0 {
            copts.sector_size = Some(sector);
        }
        if opt_bool(&options, "quick")? {
            copts.fill = Fill::Quick;
        }
        copts.backend = opt_str(&options, "backend")?;
        let pim = opt_u32(&options, "pim")?;
        let filesystem = opt_str(&options, "filesystem")?.unwrap_or_else(|| "none".into());
        let mkfs = mkfs_tool(&filesystem)?;
        let hidden_size = opt_u64(&options, "hidden_size")?;
        let outer_password = opt_bytes(&options, "outer_password")?;
        let outer_keyfiles = opt_byte_lists(&options, "outer_keyfiles")?;
        let outer_pim = opt_u32(&options, "outer_pim")?;
        let host = host_file(host)?;
        let peer = self.caller(&header, conn).await?;
        let emitter = super::objects::to_caller(emitter, &header);
        self.shared
            .authority()
            .check(&peer, Action::for_host(&host))
            .await?;
        // The new filesystem's root belongs to its creator (ext4; FAT and
        // exFAT get their owner at mount).
        let root_owner = (peer.uid != 0).then_some((peer.uid, peer.gid));
        if self.shared.table.is_mounted(&host) {
            return Err(ServiceError::AlreadyMounted("the volume is mounted".into()));
        }
        let limits = self.shared.backends.policy().limits.kdf(peer.uid == 0);
        limits.request_allowed(Some(copts.prf), pim)?;
        if hidden_size.is_some() {
            limits.request_allowed(None, outer_pim)?;
        }
        copts.limits = limits;
        let engine = Arc::clone(self.shared.table.engine());
        let runtime = self.shared.runtime.clone();
        let (tx, rx) = async_channel::bounded::<(u64, u64)>(4);
        // A client that goes away stops the fill; the headers are written
        // last, so what is left opens as nothing.
        let departure = self.departure(&header, conn).await;
        let cancel = Arc::clone(&departure.cancel);
        let work = blocking::unblock(move || -> crate::Result<()> {
            let kf = keyfile_refs(&keyfiles);
            let creds = Credentials {
                password: &password,
                keyfiles: &kf,
                pim,
            };
            let no = &*cancel;
            let mut last = 0u64;
            let mut progress = |done: u64, total: u64| {
                // At most every 1 % (and the end), to keep the bus quiet.
                if done == total || done - last >= total / 100 {
                    last = done;
                    let _ = tx.try_send((done, total));
                }
            };
            let made = match hidden_size {
                Some(size) => {
                    let outer = outer_password.as_ref().ok_or_else(|| {
                        crate::Error::InvalidArgument(
                            "a hidden volume needs the outer password".into(),
                        )
                    })?;
                    let okf = keyfile_refs(&outer_keyfiles);
                    let outer = Credentials {
                        password: outer,
                        keyfiles: &okf,
                        pim: outer_pim,
                    };
                    create::create_hidden(
                        &engine,
                        &host,
                        outer,
                        creds,
                        size,
                        &copts,
                        &mut progress,
                        no,
                    )?
                }
                None => create::create(&engine, &host, creds, &copts, &mut progress, no)?,
            };
            if let Some(tool) = mkfs {
                let mut search = SearchOptions::new();
                search.format = Some(copts.format);
                search.prf = Some(copts.prf);
                search.chain = Some(copts.chain);
                let host = host.try_clone().map_err(|e| crate::Error::Io {
                    what: "cannot reopen the volume".into(),
                    source: e,
                })?;
                let target = if hidden_size.is_some() {
                    Target::Hidden
                } else {
                    Target::Outer
                };
                let v = OpenVolume::open(&engine, host, creds, target, &search, no, false)?;
                let folder = runtime
                    .join("fuse")
                    .join(format!("create-{}", std::process::id()));
                let export = Box::new(FuseLoop::start(
                    Arc::new(v),
                    &folder,
                    engine.threads(),
                    false,
                )?);
                let r = make_filesystem(tool, export.device(), root_owner);
                export.close()?;
                r?;
            }
            tracing::info!(
                offset = made.data_offset,
                size = made.data_size,
                "volume created"
            );
            Ok(())
        });
        let forward = async {
            while let Ok((done, total)) = rx.recv().await {
                let _ = Self::create_progress(&emitter, done, total).await;
            }
        };
        let (result, ()) = futures_lite::future::zip(work, forward).await;
        result.map_err(Into::into)
    }

    /// Progress of `Create`'s data fill, in bytes.
    #[zbus(signal)]
    async fn create_progress(
        emitter: &SignalEmitter<'_>,
        done: u64,
        total: u64,
    ) -> zbus::Result<()>;

    /// Changes what opens a volume: new password, keyfiles, PIM, hash, or
    /// format (`new_format`: "truecrypt" or "veracrypt"; absent keeps it).
    /// `options` as for `HeaderInfo` select the volume; `new_options`:
    /// `pim` (u), `hash` (s), `format` (s). Works on a mounted volume too.
    #[allow(clippy::too_many_arguments)]
    async fn change_password(
        &self,
        host: OwnedFd,
        password: Vec<u8>,
        keyfiles: Vec<Vec<u8>>,
        options: Options,
        new_password: Vec<u8>,
        new_keyfiles: Vec<Vec<u8>>,
        new_options: Options,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<()> {
        bounded_keyfiles(&keyfiles)?;
        bounded_keyfiles(&new_keyfiles)?;
        let old = Secret::new(password, keyfiles);
        let new = Secret::new(new_password, new_keyfiles);
        let search = search_options(&options, &self.shared.backends)?;
        let pim = opt_u32(&options, "pim")?;
        let new_pim = opt_u32(&new_options, "pim")?;
        let new_prf = match opt_str(&new_options, "hash")? {
            Some(h) => Some(Prf::by_name(&h).ok_or_else(|| bad(&format!("unknown hash {h}")))?),
            None => None,
        };
        let new_format = match opt_str(&new_options, "format")?.as_deref() {
            None | Some("") => None,
            Some("truecrypt") => Some(Format::TrueCrypt),
            Some("veracrypt") => Some(Format::VeraCrypt),
            Some(f) => return Err(bad(&format!("unknown format {f}"))),
        };
        let host = host_file(host)?;
        let peer = self.caller(&header, conn).await?;
        self.shared
            .authority()
            .check(&peer, Action::for_host(&host))
            .await?;
        let mut search = search;
        let _slot = self.search_slot(&peer, &mut search, &[pim])?;
        search.limits.request_allowed(new_prf, new_pim)?;
        let engine = Arc::clone(self.shared.table.engine());
        let departure = self.departure(&header, conn).await;
        let cancel = Arc::clone(&departure.cancel);
        blocking::unblock(move || {
            let (okf, nkf) = (old.keyfile_refs(), new.keyfile_refs());
            let rekey = maintain::Rekey {
                creds: Credentials {
                    password: &new.password,
                    keyfiles: &nkf,
                    pim: new_pim,
                },
                prf: new_prf,
                format: new_format,
            };
            let creds = Credentials {
                password: &old.password,
                keyfiles: &okf,
                pim,
            };
            maintain::change_credentials(
                &engine,
                &host,
                creds,
                Target::Any,
                &rekey,
                &search,
                &cancel,
            )
        })
        .await?;
        drop(departure);
        Ok(())
    }

    /// Writes both header slots of the volume that the password opens to
    /// `backup` (a file the client opened for writing): 128 KiB, the same
    /// whether or not a hidden volume exists.
    #[allow(clippy::too_many_arguments)]
    async fn backup_headers(
        &self,
        host: OwnedFd,
        backup: OwnedFd,
        password: Vec<u8>,
        keyfiles: Vec<Vec<u8>>,
        options: Options,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<()> {
        bounded_keyfiles(&keyfiles)?;
        let secret = Secret::new(password, keyfiles);
        let mut search = search_options(&options, &self.shared.backends)?;
        let pim = opt_u32(&options, "pim")?;
        let (host, mut backup) = (host_file(host)?, host_file(backup)?);
        let peer = self.caller(&header, conn).await?;
        self.shared
            .authority()
            .check(&peer, Action::for_host(&host))
            .await?;
        let _slot = self.search_slot(&peer, &mut search, &[pim])?;
        let engine = Arc::clone(self.shared.table.engine());
        let departure = self.departure(&header, conn).await;
        let cancel = Arc::clone(&departure.cancel);
        blocking::unblock(move || {
            let kf = secret.keyfile_refs();
            let creds = Credentials {
                password: &secret.password,
                keyfiles: &kf,
                pim,
            };
            let bytes = maintain::backup_headers(&engine, &host, creds, &search, &cancel)?;
            std::io::Write::write_all(&mut backup, &bytes)
                .and_then(|()| backup.sync_all())
                .map_err(|e| crate::Error::Io {
                    what: "cannot write the header backup".into(),
                    source: e,
                })
        })
        .await?;
        drop(departure);
        Ok(())
    }

    /// Restores the header the password opens from `backup` (a header
    /// backup file's descriptor) to the volume's primary and backup
    /// places. Returns which header it restored.
    #[allow(clippy::too_many_arguments)]
    async fn restore_headers(
        &self,
        host: OwnedFd,
        backup: OwnedFd,
        password: Vec<u8>,
        keyfiles: Vec<Vec<u8>>,
        options: Options,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<String> {
        bounded_keyfiles(&keyfiles)?;
        let peer = self.caller(&header, conn).await?;
        let departure = self.departure(&header, conn).await;
        self.restore(
            host,
            Some(backup),
            Secret::new(password, keyfiles),
            options,
            &peer,
            departure,
        )
        .await
    }

    /// Copies the embedded backup header the password opens over the
    /// damaged primary one. Returns which header it used.
    async fn restore_embedded_header(
        &self,
        host: OwnedFd,
        password: Vec<u8>,
        keyfiles: Vec<Vec<u8>>,
        options: Options,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<String> {
        bounded_keyfiles(&keyfiles)?;
        let peer = self.caller(&header, conn).await?;
        let departure = self.departure(&header, conn).await;
        self.restore(
            host,
            None,
            Secret::new(password, keyfiles),
            options,
            &peer,
            departure,
        )
        .await
    }

    /// Every backend file found, loaded or not, and whether the processor
    /// has AES instructions.
    fn backends(&self) -> (bool, Vec<BackendRow>) {
        let policy = self.shared.backends.policy();
        let rows = self
            .shared
            .backends
            .catalog
            .found
            .iter()
            .map(|f| {
                let file = f.file.display().to_string();
                match &f.described {
                    Ok(d) => (
                        d.name.clone(),
                        d.description.clone(),
                        d.version.clone(),
                        file,
                        f.sha256.clone(),
                        d.uses_cpu_crypto,
                        d.available,
                        policy.allows(f),
                        f.is_loaded(),
                        d.ciphers.clone(),
                        String::new(),
                    ),
                    Err(why) => (
                        String::new(),
                        String::new(),
                        String::new(),
                        file,
                        f.sha256.clone(),
                        false,
                        false,
                        false,
                        false,
                        Vec::new(),
                        why.clone(),
                    ),
                }
            })
            .collect();
        (cpu_has_aes(), rows)
    }

    /// The backend policy: its text, its file, `hardware_acceleration`,
    /// whether every backend is allowed, the allowed names (when not), and
    /// the order of preference. Open to everyone.
    // A literal tuple: zbus makes its fields separate out arguments.
    fn policy(&self) -> (String, String, String, bool, Vec<String>, Vec<String>) {
        let p = self.shared.backends.policy();
        (
            p.to_text(),
            self.shared.backends.policy_path().display().to_string(),
            p.hardware_acceleration.name().to_owned(),
            p.allowed.is_none(),
            p.allowed.clone().unwrap_or_default(),
            p.prefer.clone(),
        )
    }

    /// Replaces the policy (root only) and applies it at once: mounted
    /// volumes move to allowed backends without a dismount. Returns a note
    /// for each volume that keeps its old backends until dismounted.
    async fn set_policy(
        &self,
        text: String,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<Vec<String>> {
        let peer = self.caller(&header, conn).await?;
        self.shared
            .authority()
            .check(&peer, Action::SetPolicy)
            .await?;
        if text.len() > 64 * 1024 {
            return Err(bad("a policy of more than 64 KiB"));
        }
        let shared = Arc::clone(&self.shared);
        let applied = blocking::unblock(move || {
            let applied = shared.backends.set(&text, &shared.table);
            (shared, applied)
        })
        .await;
        let (shared, applied) = applied;
        let applied = applied?;
        tracing::info!(uid = peer.uid, "policy changed over D-Bus");
        shared.announce_changed_async(&applied.moved).await;
        Ok(applied.kept)
    }

    /// The caller's favorites and the system's: (name, system, favorite).
    /// The favorite's keys are those of the favorites file.
    async fn list_favorites(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<Vec<(String, bool, super::favorites::Dict)>> {
        let peer = self.caller(&header, conn).await?;
        let mine = self.shared.favorites.list(Owner::User(peer.uid))?;
        let system = self.shared.favorites.list(Owner::System)?;
        // Where a system favorite's keyfiles and password file are is for
        // administrators only; polkit is asked only when there is any.
        let secret_paths = system
            .iter()
            .any(|f| !f.keyfiles.is_empty() || f.password_file.is_some());
        let administrator = secret_paths && self.is_administrator(&peer).await;
        let mut out = Vec::new();
        for (list, system) in [(mine, false), (system, true)] {
            for f in list {
                let d = super::favorites::listed(&f, system, administrator);
                out.push((f.name, system, d));
            }
        }
        Ok(out)
    }

    /// Adds a favorite (replacing one of the same name) to the caller's
    /// list, or with `system` to the system's (polkit
    /// `manage-system-favorites`).
    async fn add_favorite(
        &self,
        favorite: super::favorites::Dict,
        system: bool,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<()> {
        let peer = self.caller(&header, conn).await?;
        let fav = super::favorites::from_dict(&favorite)?;
        let owner = self.favorites_owner(&peer, system).await?;
        let shared = Arc::clone(&self.shared);
        blocking::unblock(move || shared.favorites.add(owner, fav)).await?;
        Ok(())
    }

    /// Removes a favorite; whether there was one.
    async fn remove_favorite(
        &self,
        name: String,
        system: bool,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<bool> {
        bounded("the favorite name", &name)?;
        let peer = self.caller(&header, conn).await?;
        let owner = self.favorites_owner(&peer, system).await?;
        let shared = Arc::clone(&self.shared);
        Ok(blocking::unblock(move || shared.favorites.remove(owner, &name)).await?)
    }

    /// A volume was dismounted without a call (`reason`: "idle", "logout",
    /// "sleep", "device removed"), or could not be (`error` non-empty).
    #[zbus(signal)]
    async fn auto_dismounted(
        emitter: &SignalEmitter<'_>,
        volume: zbus::zvariant::ObjectPath<'_>,
        host: &str,
        owner: u32,
        reason: &str,
        error: &str,
    ) -> zbus::Result<()>;

    /// Something went wrong with a volume (`health` "failed"), or what went
    /// wrong changed: `problems` says what, in words. Sent as the volume's
    /// `Health` and `Problems` properties change.
    #[zbus(signal)]
    async fn health_changed(
        emitter: &SignalEmitter<'_>,
        volume: zbus::zvariant::ObjectPath<'_>,
        host: &str,
        owner: u32,
        health: &str,
        problems: Vec<String>,
    ) -> zbus::Result<()>;

    /// Wipes the caller's cached passwords (root: everyone's); returns how
    /// many were wiped.
    async fn wipe_cache(
        &self,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<u32> {
        let peer = self.caller(&header, conn).await?;
        let n = self
            .shared
            .cache
            .wipe(if peer.uid == 0 { None } else { Some(peer.uid) });
        tracing::info!(uid = peer.uid, wiped = n, "password cache wiped");
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// TrueCrypt's benchmark, on the engine mounted volumes use: every
    /// encryption algorithm on each choice of allowed backends over a
    /// buffer of `buffer_bytes` (0: 100 MB) on all cores, and the header
    /// key derivation of each PRF. Returns the threads used, whether the
    /// processor has AES instructions, the cipher rows and the PRF rows.
    /// Emits `BenchmarkProgress`.
    async fn benchmark(
        &self,
        buffer_bytes: u64,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        #[zbus(header)] header: zbus::message::Header<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<(u32, bool, Vec<CipherBenchRow>, Vec<KdfBenchRow>)> {
        const DEFAULT: u64 = 100_000_000;
        // The buffer is locked memory: up to 1 GiB for root, a quarter of
        // that for others.
        const MAX_ROOT: u64 = 1 << 30;
        const MAX_USER: u64 = 256 << 20;
        let peer = self.caller(&header, conn).await?;
        let emitter = super::objects::to_caller(emitter, &header);
        let max = if peer.uid == 0 { MAX_ROOT } else { MAX_USER };
        let size = if buffer_bytes == 0 {
            DEFAULT
        } else {
            buffer_bytes
        };
        if size > max {
            return Err(bad(&format!(
                "a benchmark buffer of more than {} MiB",
                max >> 20
            )));
        }
        // One at a time: it takes every core.
        use std::sync::atomic::Ordering;
        if self.shared.benchmark_running.swap(true, Ordering::AcqRel) {
            return Err(ServiceError::Busy("a benchmark is already running".into()));
        }
        struct Done<'a>(&'a std::sync::atomic::AtomicBool);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.store(false, std::sync::atomic::Ordering::Release);
            }
        }
        let _done = Done(&self.shared.benchmark_running);
        let engine = Arc::clone(self.shared.table.engine());
        let departure = self.departure(&header, conn).await;
        let cancel = Arc::clone(&departure.cancel);
        let (tx, rx) = async_channel::unbounded();
        let work = blocking::unblock(move || {
            crate::benchmark::run(&engine, size, &cancel, |done, total| {
                let _ = tx.try_send((done, total));
            })
        });
        let forward = async {
            while let Ok((done, total)) = rx.recv().await {
                let _ = Self::benchmark_progress(&emitter, done, total).await;
            }
        };
        let (report, ()) = futures_lite::future::zip(work, forward).await;
        let report = report?;
        Ok((
            report.threads,
            cpu_has_aes(),
            report
                .ciphers
                .into_iter()
                .map(|r| {
                    (
                        r.encryption.to_owned(),
                        r.backends,
                        r.encrypt_mbs,
                        r.decrypt_mbs,
                        r.mean_mbs,
                        r.hardware_aes,
                    )
                })
                .collect(),
            report
                .kdfs
                .into_iter()
                .map(|k| {
                    (
                        k.prf.to_owned(),
                        k.iterations,
                        k.per_second,
                        k.trial_seconds,
                    )
                })
                .collect(),
        ))
    }

    /// Steps of `Benchmark` done, of `total`.
    #[zbus(signal)]
    async fn benchmark_progress(
        emitter: &SignalEmitter<'_>,
        done: u32,
        total: u32,
    ) -> zbus::Result<()>;

    /// The interface version.
    #[zbus(property)]
    fn version(&self) -> u32 {
        1
    }

    /// Client connections the daemon holds (on its own socket, the ones
    /// whose client has not hung up).
    #[zbus(property)]
    fn clients(&self) -> u32 {
        u32::try_from(self.shared.connection_count()).unwrap_or(u32::MAX)
    }
}

/// The mkfs tool and its arguments for a filesystem choice.
fn mkfs_tool(choice: &str) -> Result<Option<(&'static str, &'static [&'static str])>> {
    Ok(match choice {
        "none" => None,
        "ext4" => Some(("mkfs.ext4", &["-q", "-F"][..])),
        "fat" | "vfat" => Some(("mkfs.vfat", &[][..])),
        "exfat" => Some(("mkfs.exfat", &[][..])),
        "btrfs" => Some(("mkfs.btrfs", &["-q", "-f"][..])),
        "xfs" => Some(("mkfs.xfs", &["-q", "-f"][..])),
        other => return Err(bad(&format!("unknown filesystem {other}"))),
    })
}

fn make_filesystem(
    tool: (&str, &[&str]),
    device: &std::path::Path,
    root_owner: Option<(u32, u32)>,
) -> crate::Result<()> {
    let mut args: Vec<&std::ffi::OsStr> = tool.1.iter().map(|a| a.as_ref()).collect();
    let owner = root_owner.map(|(u, g)| format!("root_owner={u}:{g}"));
    if let (Some(owner), "mkfs.ext4") = (&owner, tool.0) {
        args.push("-E".as_ref());
        args.push(owner.as_ref());
    }
    args.push(device.as_os_str());
    mount::tools::run_for(tool.0, args, mount::tools::MKFS_LIMIT).map(|_| ())
}
