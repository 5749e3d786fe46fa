//! What every D-Bus object of the service shares for a call: the daemon's
//! state, who is calling (the socket's peer, or the bus's word for the
//! sender), whether they are allowed, and whether they are still there.

use super::authority::Action;
use super::errors::ServiceError;
use super::{Peer, Shared};
use crate::app::{App, Caller};
use crate::favorites::Owner;
use crate::mounts::Mounted;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tcd_proto::contract::ErrorKind;

type Result<T> = std::result::Result<T, ServiceError>;

/// One client connection's view of the service (on a message bus, one for
/// every caller: each call's sender is asked of the bus).
#[derive(Clone)]
pub struct Ctx {
    pub(super) shared: Arc<Shared>,
    /// The client on a peer-to-peer socket; `None` on a bus.
    pub(super) peer: Option<Peer>,
    /// A duplicate of the client's socket, to notice the client leaving.
    pub(super) socket: Option<Arc<std::os::fd::OwnedFd>>,
    /// Serving on the system bus, where polkit knows callers by bus name.
    pub(super) on_system_bus: bool,
}

impl Peer {
    /// The caller as the application knows it.
    pub fn app(&self) -> Caller {
        Caller {
            uid: self.uid,
            gid: self.gid,
        }
    }
}

/// Set once the client of `socket` has gone away (or `done` is dropped):
/// a long search for a client that left stops instead of holding the cores.
/// On a message bus the caller is its unique name, watched by `bus_watch`.
pub struct Departure {
    cancel: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    /// Waits for the bus to say the caller's name has gone; dropped
    /// (cancelled) with the departure.
    bus_watch: Option<zbus::Task<()>>,
}

impl Departure {
    pub fn watch(socket: Option<&Arc<std::os::fd::OwnedFd>>) -> Departure {
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

impl Departure {
    /// The flag a blocking operation watches.
    pub fn cancel(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.cancel)
    }
}

impl Ctx {
    pub fn app(&self) -> Arc<App> {
        Arc::clone(&self.shared.app)
    }

    /// Asks polkit (or, without it, allows root only).
    pub async fn authorise(&self, peer: &Peer, action: Action) -> Result<()> {
        self.shared.authority().check(peer, action).await
    }

    /// Notices the caller of this call leaving: its socket, or on a bus its
    /// unique name.
    pub async fn departure(
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
    pub async fn caller_left(
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
    pub async fn undo_mount(&self, m: &Mounted) {
        tracing::warn!(
            id = m.id,
            "the caller left before its mount was answered: dismounting the volume"
        );
        let app = self.app();
        let id = m.id;
        // Forced if need be: nothing of the caller's may be using it.
        let done = blocking::unblock(move || {
            app.table
                .dismount(id, false)
                .or_else(|_| app.table.dismount(id, true))
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

    /// Who is calling: the socket's peer, or the bus's word for the sender.
    pub async fn caller(
        &self,
        header: &zbus::message::Header<'_>,
        conn: &zbus::Connection,
    ) -> Result<Peer> {
        if let Some(p) = &self.peer {
            return Ok(p.clone());
        }
        let sender = header
            .sender()
            .ok_or_else(|| ServiceError::denied("a call without a sender"))?;
        let creds = zbus::fdo::DBusProxy::new(conn)
            .await?
            .get_connection_credentials(sender.clone().into())
            .await
            .map_err(|e| ServiceError::denied(format!("cannot identify the caller: {e}")))?;
        let uid = creds
            .unix_user_id()
            .ok_or_else(|| ServiceError::denied("the bus does not know the caller's user"))?;
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
    pub async fn may_manage(&self, peer: &Peer, m: &Mounted, name: &str) -> Result<()> {
        if peer.uid == 0 || peer.uid == m.owner {
            return Ok(());
        }
        self.shared
            .authority()
            .check(peer, Action::ManageOthers)
            .await
            .map_err(|e| match e {
                e if e.kind() == Some(ErrorKind::PermissionDenied) => App::not_mounted(name).into(),
                other => other,
            })
    }

    /// Root, or whom polkit lets manage system favorites or others'
    /// volumes.
    pub async fn is_administrator(&self, peer: &Peer) -> bool {
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
    pub async fn favorites_owner(&self, peer: &Peer, system: bool) -> Result<Owner> {
        if !system {
            return Ok(Owner::User(peer.uid));
        }
        self.shared
            .authority()
            .check(peer, Action::ManageSystemFavorites)
            .await?;
        Ok(Owner::System)
    }
}
