//! Mounting, dismounting and listing for `Manager1` (and `Volume1`'s
//! `Dismount`).

use super::super::authority::{Action, Caller as Peer};
use super::super::context::Ctx;
use super::super::errors::ServiceError;
use super::super::objects::to_caller;
use super::{Hdr, Manager, Result};
use crate::app::mount::MountCall;
use crate::app::volumes::Dismounted;
use tcd_proto::contract::VolumeRow;
use zbus::object_server::SignalEmitter;
use zbus::zvariant::OwnedObjectPath;

impl Manager {
    pub(super) async fn mount_volume(
        &self,
        call: MountCall,
        emitter: SignalEmitter<'_>,
        header: &Hdr<'_>,
        conn: &zbus::Connection,
    ) -> Result<OwnedObjectPath> {
        call.check()?;
        let peer = self.ctx.caller(header, conn).await?;
        self.ctx
            .authorise(&peer, Action::for_host(&call.host))
            .await?;
        let mut plan = self.ctx.shared.plan_mount(&peer.app(), call)?;
        let (sink, forward) = super::headers::progress_to(to_caller(emitter, header));
        plan.report_to(sink);
        let departure = self.ctx.departure(header, conn).await;
        let (app, cancel) = (self.ctx.app(), departure.cancel());
        let work = blocking::unblock(move || app.run_mount(plan, &cancel));
        let (mounted, ()) = futures_lite::future::zip(work, forward).await;
        let mounted = mounted.inspect_err(|e| {
            // Its caller is gone: the log is the only one left to tell.
            if departure
                .cancel()
                .load(std::sync::atomic::Ordering::Relaxed)
            {
                tracing::warn!("a mount whose caller left failed: {e}");
            }
        })?;
        // A caller that left while its volume was being mounted gets no
        // volume: nothing stays mounted for a client that is gone.
        if self.ctx.caller_left(&departure, header, conn).await {
            drop(departure);
            self.ctx.undo_mount(&mounted).await;
            return Err(ServiceError::new(
                tcd_proto::contract::ErrorKind::Cancelled,
                "the caller left before the mount was answered: the volume was dismounted",
            ));
        }
        drop(departure);
        self.ctx.shared.publish(&mounted).await;
        Ok(super::super::volume::object_path(mounted.id))
    }

    pub(super) async fn dismount_every(&self, peer: &Peer, force: bool) -> Result<u32> {
        let mut n = 0;
        let mut lost = Vec::new();
        // One volume in use does not keep the others mounted: each is
        // tried, and the first refusal is the answer, with the count.
        let mut refused: Option<crate::Error> = None;
        for m in self.ctx.shared.dismountable(&peer.app()) {
            // One dismounted by force already, still held: not counted
            // (the detach is tried again all the same).
            let counted = m.state != crate::mounts::VolumeState::Detaching;
            let (app, caller) = (self.ctx.app(), peer.app());
            let (result, done) =
                blocking::unblock(move || app.dismount(m.id, force, &caller)).await;
            if let Some(done) = &done {
                self.ctx.shared.dismounted(done).await;
                // Forced off its mount point but still held: on its way,
                // not dismounted (the client names it apart).
                let gone = done.state != crate::mounts::VolumeState::Detaching;
                n += u32::from(counted && gone);
            }
            match result {
                Err(crate::Error::WritesLost(why)) => lost.push(why),
                Err(e) => {
                    refused.get_or_insert(e);
                }
                Ok(_) => {}
            }
        }
        if let Some(e) = refused {
            let kind = e.kind();
            // Only what others there were is said: "0 other volumes" is noise.
            let others = match n {
                0 => String::new(),
                1 => "; 1 other volume dismounted".to_owned(),
                n => format!("; {n} other volumes dismounted"),
            };
            return Err(ServiceError::new(kind, format!("{e}{others}")));
        }
        if !lost.is_empty() {
            return Err(crate::Error::WritesLost(lost.join("\n")).into());
        }
        Ok(n)
    }

    pub(super) async fn volume_rows(&self, peer: &Peer) -> Result<Vec<VolumeRow>> {
        let app = self.ctx.app();
        let all = blocking::unblock(move || app.list_fresh()).await;
        // As the volume objects: another's volumes only for those polkit
        // lets manage them (asked only when there are any).
        let everyone = peer.uid == 0
            || (all.iter().any(|m| m.owner != peer.uid)
                && self.ctx.authorise(peer, Action::ManageOthers).await.is_ok());
        Ok(all
            .iter()
            .filter(|m| everyone || m.owner == peer.uid)
            .map(|m| super::super::volume::view(m).row(super::super::volume::object_path(m.id)))
            .collect())
    }
}

impl Ctx {
    /// Dismounts the volume `name` names, if the caller may manage it, and
    /// announces it. Returns the processes still holding a volume left
    /// detaching.
    pub async fn dismount_named(
        &self,
        peer: &Peer,
        name: &str,
        force: bool,
    ) -> Result<Vec<(u32, String)>> {
        let (result, done) = self.dismount_unannounced(peer, name, force).await?;
        if let Some(done) = &done {
            self.shared.dismounted(done).await;
        }
        // Dismounted (or detaching) either way; lost writes are the news.
        Ok(result?.holders_for(&peer.app()))
    }

    /// [`Ctx::dismount_named`] without the announcement, for a caller
    /// that must make it later: the dismount's result, and the volume as
    /// it is now when it was dismounted or left detaching.
    pub async fn dismount_unannounced(
        &self,
        peer: &Peer,
        name: &str,
        force: bool,
    ) -> Result<(crate::Result<Dismounted>, Option<crate::mounts::Mounted>)> {
        let m = self.shared.resolve(name, &peer.app())?;
        self.may_manage(peer, &m, name).await?;
        let (app, caller) = (self.app(), peer.app());
        Ok(blocking::unblock(move || app.dismount(m.id, force, &caller)).await)
    }
}
