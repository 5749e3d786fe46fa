//! The D-Bus service: `org.tcd.Manager1` and one `org.tcd.Volume1` object
//! per mounted volume, on a peer-to-peer D-Bus socket (no bus daemon
//! needed). The engine underneath ([`crate::mounts`]) knows nothing of
//! D-Bus.

pub mod authority;
pub mod automation;
pub mod context;
pub mod decode;
pub mod errors;
pub mod favorites;
pub mod health;
pub mod manager;
pub mod objects;
pub mod volume;

use crate::app::App;
use crate::backends::Backends;
use crate::error::{Error, Result};
use crate::mounts::MountTable;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Who is on the other end of a connection or call.
pub type Peer = authority::Caller;

/// What every connection shares: the application, and who is listening.
pub struct Shared {
    pub app: Arc<App>,
    /// polkit, once serving on a bus found it; else root only.
    authority: std::sync::OnceLock<authority::Authority>,
    /// Every live peer-to-peer client connection, to announce volumes to;
    /// they leave the list when their client hangs up.
    conns: Mutex<Vec<(u64, zbus::Connection)>>,
    /// The message bus, when serving on one: volumes are announced there
    /// only to the clients allowed to see them.
    bus: std::sync::OnceLock<Arc<objects::BusView>>,
    next_conn: std::sync::atomic::AtomicU64,
}

impl std::ops::Deref for Shared {
    type Target = App;
    fn deref(&self) -> &App {
        &self.app
    }
}

impl Shared {
    pub fn new(
        table: MountTable,
        backends: Backends,
        favorites: crate::favorites::Favorites,
        runtime: &Path,
    ) -> Arc<Shared> {
        let shared = Arc::new(Shared {
            app: Arc::new(App::new(table, backends, favorites, runtime)),
            authority: std::sync::OnceLock::new(),
            conns: Mutex::new(Vec::new()),
            bus: std::sync::OnceLock::new(),
            next_conn: std::sync::atomic::AtomicU64::new(0),
        });
        // Volumes that hidden-volume protection made read-only: update
        // their objects and tell clients.
        let (tx, rx) = std::sync::mpsc::channel::<u32>();
        shared.table.watch_read_only(tx);
        let weak = Arc::downgrade(&shared);
        std::thread::spawn(move || {
            for id in rx {
                let Some(shared) = weak.upgrade() else {
                    break;
                };
                if let Some(m) = shared.table.mark_read_only(id) {
                    shared.announce_changed(&[m]);
                }
                shared.table.seal_drivers_read_only();
            }
        });
        health::watch(&shared);
        // Detaching volumes whose last user let go: their objects go.
        let (tx, rx) = std::sync::mpsc::channel::<u32>();
        shared.table.watch_gone(tx);
        let weak = Arc::downgrade(&shared);
        std::thread::spawn(move || {
            for id in rx {
                let Some(shared) = weak.upgrade() else {
                    break;
                };
                shared.unpublish_blocking(id);
            }
        });
        shared
    }

    fn add_connection(&self, conn: zbus::Connection) -> u64 {
        let id = self
            .next_conn
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((id, conn));
        id
    }

    /// Who decides what callers may do.
    pub fn authority(&self) -> &authority::Authority {
        self.authority.get_or_init(authority::Authority::root_only)
    }

    /// How many client connections are live (for tests and logs).
    pub fn connection_count(&self) -> usize {
        self.conns.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Tells every client that volumes changed (moved to other backends,
    /// became read-only, are detaching, or had their filesystem mounted):
    /// their `Backends`, `ReadOnly`, `State`, `MountPoint`, `Slot` and
    /// `Filesystem` properties.
    pub async fn announce_changed_async(&self, changed: &[crate::mounts::Mounted]) {
        if let Some(bus) = self.bus.get() {
            for m in changed {
                bus.changed(self, m).await;
            }
        }
        for conn in self.connections() {
            for m in changed {
                let Ok(iface) = conn
                    .object_server()
                    .interface::<_, volume::VolumeObject>(volume::object_path(m.id))
                    .await
                else {
                    continue;
                };
                iface.get_mut().await.set(m.clone());
                let object = iface.get().await;
                let _ = object.backends_changed(iface.signal_emitter()).await;
                let _ = object.read_only_changed(iface.signal_emitter()).await;
                let _ = object.state_changed(iface.signal_emitter()).await;
                let _ = object.mount_point_changed(iface.signal_emitter()).await;
                let _ = object.slot_changed(iface.signal_emitter()).await;
                let _ = object.filesystem_changed(iface.signal_emitter()).await;
            }
        }
    }

    /// Tells every client that the backend policy was replaced
    /// (`SetPolicy` or SIGHUP): the manager's `PolicyChanged`.
    pub async fn announce_policy_async(&self) {
        if let Some(bus) = self.bus.get() {
            bus.policy_changed().await;
        }
        self.manager_signal_on_socket("PolicyChanged", &()).await;
    }

    /// Sends the manager's signal `member` to every client on the socket
    /// (each has its own object server on a peer-to-peer socket).
    async fn manager_signal_on_socket<B>(&self, member: &str, body: &B)
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        for conn in self.connections() {
            let _ = conn
                .emit_signal(
                    None::<&str>,
                    volume::MANAGER_PATH,
                    "org.tcd.Manager1",
                    member,
                    body,
                )
                .await;
        }
    }

    /// Tells the clients that may see `w.host` (its writer's own, root's
    /// and administrators') that a call wrote its headers: the manager's
    /// `HeadersWritten`.
    pub async fn announce_written(&self, w: &Written) {
        if let Some(bus) = self.bus.get() {
            bus.headers_written(self, w).await;
        }
        // On the socket every client is root.
        self.manager_signal_on_socket("HeadersWritten", &w.body())
            .await;
    }

    /// As [`Shared::announce_policy_async`], from a plain thread.
    pub fn announce_policy(&self) {
        zbus::block_on(self.announce_policy_async());
    }

    /// As [`Shared::announce_changed_async`], from a plain thread.
    pub fn announce_changed(&self, changed: &[crate::mounts::Mounted]) {
        zbus::block_on(self.announce_changed_async(changed));
    }

    /// Shows a new volume object to every connected client (each has its
    /// own object server on a peer-to-peer socket).
    pub async fn publish(&self, m: &crate::mounts::Mounted) {
        if let Some(bus) = self.bus.get() {
            bus.added(self, m).await;
        }
        for conn in self.connections() {
            let _ = conn
                .object_server()
                .at(
                    volume::object_path(m.id),
                    volume::VolumeObject::new(m.clone(), None),
                )
                .await;
        }
    }

    /// After a dismount: the volume's object goes, or, for a volume left
    /// detaching, its `State` changes.
    pub async fn dismounted(&self, m: &crate::mounts::Mounted) {
        match m.state {
            crate::mounts::VolumeState::Detaching => {
                self.announce_changed_async(std::slice::from_ref(m)).await
            }
            crate::mounts::VolumeState::Mounted => self.unpublish(m.id).await,
        }
    }

    /// Takes a dismounted volume's object from every client.
    pub async fn unpublish(&self, id: u32) {
        if let Some(bus) = self.bus.get() {
            bus.removed(self, id).await;
        }
        for conn in self.connections() {
            let _ = conn
                .object_server()
                .remove::<volume::VolumeObject, _>(volume::object_path(id))
                .await;
        }
    }

    /// As [`Shared::publish`], from a plain thread (a mount nobody called).
    pub fn publish_blocking(&self, m: &crate::mounts::Mounted) {
        zbus::block_on(self.publish(m));
    }

    /// As [`Shared::unpublish`], from a plain thread.
    pub fn unpublish_blocking(&self, id: u32) {
        zbus::block_on(self.unpublish(id));
    }

    /// `AutoDismounted(volume, host, owner, reason, error)` to every client
    /// allowed to see the volume (`error` empty when it worked).
    pub fn announce_auto_dismount(&self, m: &crate::mounts::Mounted, reason: &str, error: &str) {
        let path = volume::object_path(m.id);
        zbus::block_on(async {
            if let Some(bus) = self.bus.get() {
                bus.auto_dismounted(self, m, reason, error).await;
            }
            for conn in self.connections() {
                let _ = conn
                    .emit_signal(
                        None::<&str>,
                        volume::MANAGER_PATH,
                        "org.tcd.Manager1",
                        "AutoDismounted",
                        &(&path, &m.host_name, m.owner, reason, error),
                    )
                    .await;
            }
        });
    }

    fn connections(&self) -> Vec<zbus::Connection> {
        self.conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(_, c)| c.clone())
            .collect()
    }
}

/// A volume whose headers a call wrote (`Create`, `Expand`,
/// `ChangePassword`, `RestoreHeaders`, `RestoreEmbeddedHeader`), as
/// `HeadersWritten` tells it.
pub struct Written {
    /// The container or device, as the daemon's descriptor names it.
    pub host: String,
    /// Who called: only they, root and administrators hear of it.
    pub owner: u32,
    /// The method that wrote.
    pub method: &'static str,
    /// The host's size in bytes once written.
    pub size: u64,
    /// `RestoreHeaders`: the backup file, as its descriptor names it;
    /// `Create`: "hidden" for a hidden volume inside an existing one;
    /// `ChangePassword`: the format the header was converted to; else
    /// empty.
    pub detail: String,
}

impl Written {
    fn body(&self) -> (&str, u32, &str, u64, &str) {
        (&self.host, self.owner, self.method, self.size, &self.detail)
    }
}

fn peer_of(stream: &UnixStream) -> Result<Peer> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: SO_PEERCRED writes at most `len` bytes into `cred`, a live
    // ucred; the descriptor is the open socket.
    let rc = unsafe {
        libc::getsockopt(
            std::os::fd::AsRawFd::as_raw_fd(stream),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(Error::Io {
            what: "cannot read the client's credentials".into(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(Peer {
        uid: cred.uid,
        gid: authority::primary_gid(cred.uid),
        pid: u32::try_from(cred.pid).ok(),
        system_bus_name: None,
    })
}

/// Listens on `socket` (replacing a stale socket file) and serves every
/// client on its own peer-to-peer connection. Only root may connect until
/// polkit decides for others.
pub fn listen(socket: &Path) -> Result<UnixListener> {
    let io = |what: String| move |source| Error::Io { what, source };
    if let Some(dir) = socket.parent() {
        std::fs::create_dir_all(dir).map_err(io(format!("cannot make {}", dir.display())))?;
    }
    if UnixStream::connect(socket).is_ok() {
        return Err(Error::InvalidArgument(format!(
            "another daemon is listening on {}",
            socket.display()
        )));
    }
    let _ = std::fs::remove_file(socket);
    let listener =
        UnixListener::bind(socket).map_err(io(format!("cannot listen on {}", socket.display())))?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
        .map_err(io(format!("cannot protect {}", socket.display())))?;
    Ok(listener)
}

/// Accepts clients until the listener fails.
pub fn serve(shared: Arc<Shared>, listener: UnixListener) -> Result<()> {
    let guid = zbus::Guid::generate();
    for stream in listener.incoming() {
        let stream = match stream {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("accept failed: {e}");
                continue;
            }
        };
        let shared = Arc::clone(&shared);
        let guid = guid.clone();
        // The handshake runs on its own thread: a client that connects and
        // says nothing must not stop the others.
        std::thread::spawn(move || {
            if let Err(e) = attach(&shared, stream, guid) {
                tracing::warn!("client connection failed: {e}");
            }
        });
    }
    Ok(())
}

fn attach(shared: &Arc<Shared>, stream: UnixStream, guid: zbus::Guid<'static>) -> zbus::Result<()> {
    let peer = peer_of(&stream).map_err(|e| zbus::Error::Failure(e.to_string()))?;
    if peer.uid != 0 {
        // Until polkit decides (the security issue), root only.
        return Err(zbus::Error::Failure(format!(
            "uid {} may not use tcd",
            peer.uid
        )));
    }
    let socket = stream
        .try_clone()
        .map(|s| Arc::new(std::os::fd::OwnedFd::from(s)))
        .map_err(|e| zbus::Error::Failure(e.to_string()))?;
    let watch = Arc::clone(&socket);
    let manager = manager::Manager {
        ctx: context::Ctx {
            shared: Arc::clone(shared),
            peer: Some(peer),
            socket: Some(socket),
            on_system_bus: false,
        },
    };
    let mut builder = zbus::blocking::connection::Builder::async_io_unix_stream(stream)
        .server(guid)?
        .p2p()
        .serve_at(volume::MANAGER_PATH, manager)?
        .serve_at(volume::MANAGER_PATH, zbus::fdo::ObjectManager)?;
    // The volumes mounted so far, in place before the client's first call.
    let first = shared.table.list();
    for m in &first {
        builder = builder.serve_at(
            volume::object_path(m.id),
            volume::VolumeObject::new(m.clone(), None),
        )?;
    }
    let conn = builder.build()?;
    let inner: zbus::Connection = conn.clone().into();
    let id = shared.add_connection(inner);
    // Volumes mounted or dismounted while this client was connecting
    // (announcements went only to the connections listed then): settled
    // now. `at` leaves objects already served alone.
    let now = shared.table.list();
    for m in &now {
        conn.object_server().at(
            volume::object_path(m.id),
            volume::VolumeObject::new(m.clone(), None),
        )?;
    }
    for gone in first.iter().filter(|m| !now.iter().any(|n| n.id == m.id)) {
        conn.object_server()
            .remove::<volume::VolumeObject, _>(volume::object_path(gone.id))?;
    }
    // Forget the connection when its client hangs up.
    let shared = Arc::clone(shared);
    std::thread::spawn(move || {
        use std::os::fd::AsRawFd;
        loop {
            let mut p = libc::pollfd {
                fd: watch.as_raw_fd(),
                events: libc::POLLRDHUP,
                revents: 0,
            };
            // SAFETY: one live pollfd, count 1; poll only writes revents.
            let n = unsafe { libc::poll(&mut p, 1, -1) };
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            if n != 0 {
                break;
            }
        }
        shared
            .conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(i, _)| *i != id);
    });
    Ok(())
}

/// Which message bus to serve on instead of a socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bus {
    System,
    Session,
}

/// The well-known name on a bus.
pub const BUS_NAME: &str = tcd_proto::contract::names::BUS_NAME;

/// The daemon on a message bus: the connection, and word of its end.
pub struct BusService {
    pub conn: zbus::blocking::Connection,
    /// Says why, once the bus connection is gone (the bus disconnected the
    /// daemon, or the bus itself went away).
    pub lost: std::sync::mpsc::Receiver<String>,
}

/// Serves the API on a message bus under [`BUS_NAME`]; the connection
/// lives as long as the returned value.
pub fn serve_bus(shared: Arc<Shared>, bus: Bus) -> Result<BusService> {
    let fail =
        |e: zbus::Error| Error::InvalidArgument(format!("cannot serve on the {bus:?} bus: {e}"));
    let builder = match bus {
        Bus::System => zbus::blocking::connection::Builder::system(),
        Bus::Session => zbus::blocking::connection::Builder::session(),
    }
    .map_err(fail)?;
    let _ = shared
        .authority
        .set(zbus::block_on(authority::Authority::connect()));
    let manager = manager::Manager {
        ctx: context::Ctx {
            shared: Arc::clone(&shared),
            peer: None,
            socket: None,
            on_system_bus: bus == Bus::System,
        },
    };
    // No zbus object server on this connection: it would answer every
    // object to every caller. The daemon's own dispatcher answers, and the
    // name is taken only once it listens.
    let conn = builder.build().map_err(fail)?;
    let objects = Arc::new(
        zbus::block_on(objects::BusObjects::new(
            Arc::clone(&shared),
            manager,
            conn.inner().clone(),
        ))
        .map_err(fail)?,
    );
    let _ = shared.bus.set(objects.view());
    let (ready_tx, ready) = std::sync::mpsc::channel();
    let (lost_tx, lost) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("tcd-bus".into())
        .spawn(move || {
            let why = zbus::block_on(objects.serve(ready_tx));
            let _ = lost_tx.send(why);
        })
        .map_err(|e| Error::Io {
            what: "cannot start the bus dispatcher".into(),
            source: e,
        })?;
    // The dispatcher drops `ready` unsent if it cannot listen.
    if ready.recv().is_err() {
        let why = lost.recv().unwrap_or_default();
        return Err(Error::InvalidArgument(format!(
            "cannot serve on the {bus:?} bus: {why}"
        )));
    }
    request_name(&conn).map_err(fail)?;
    if bus == Bus::System {
        automation::watch_logind(&shared, &conn);
    }
    Ok(BusService { conn, lost })
}

/// Takes [`BUS_NAME`] once the daemon's dispatcher listens: asked of the
/// bus itself, as zbus's own request would warn that no zbus object
/// server is set up (the daemon has none, on purpose). Refused when
/// another connection holds the name.
fn request_name(conn: &zbus::blocking::Connection) -> zbus::Result<()> {
    use zbus::fdo::{RequestNameFlags, RequestNameReply};
    let flags = RequestNameFlags::ReplaceExisting | RequestNameFlags::DoNotQueue;
    let reply: RequestNameReply = conn
        .call_method(
            Some("org.freedesktop.DBus"),
            "/org/freedesktop/DBus",
            Some("org.freedesktop.DBus"),
            "RequestName",
            &(BUS_NAME, flags),
        )?
        .body()
        .deserialize()?;
    match reply {
        RequestNameReply::PrimaryOwner | RequestNameReply::AlreadyOwner => Ok(()),
        RequestNameReply::Exists | RequestNameReply::InQueue => Err(zbus::Error::NameTaken),
    }
}
