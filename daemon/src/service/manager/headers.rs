//! Header maintenance, creating volumes, favorites and the benchmark for
//! `Manager1`: the searches run off the executor, stopped when their
//! caller leaves.

use super::super::authority::{Action, Caller as Peer};
use super::super::decode::{self, Dict};
use super::super::objects::to_caller;
use super::{Hdr, Manager, Result};
use crate::app::headers::Opening;
use crate::app::{App, Caller, input};
use crate::volume::unlock::{Progress, ProgressSink};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use tcd_proto::contract::rows::BenchReport;
use tcd_proto::contract::{Secret, SecretList};
use zbus::object_server::SignalEmitter;
use zbus::zvariant::OwnedFd;

/// A sink for a search's progress, and what sends its news to the caller
/// as `SearchProgress` signals until the sink (and every clone) is gone.
pub(super) fn progress_to(
    emitter: SignalEmitter<'_>,
) -> (ProgressSink, impl std::future::Future<Output = ()> + '_) {
    // A few reports wait; more are dropped rather than slow the search.
    let (tx, rx) = async_channel::bounded::<Progress>(4);
    let sink = ProgressSink(Arc::new(move |p| {
        let _ = tx.try_send(p);
    }));
    let forward = async move {
        while let Ok(p) = rx.recv().await {
            let headers = if p.backup { "backup" } else { "primary" };
            let left = p
                .left
                .map_or(-1, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
            let _ = Manager::search_progress(
                &emitter,
                p.format.name(),
                p.prf.name(),
                headers,
                p.done,
                left,
            )
            .await;
        }
    };
    (sink, forward)
}

/// A fill's progress into `tx`: at most every 1 %, to keep the bus quiet;
/// one the channel has no room for is skipped, but never the end.
fn every_percent(tx: async_channel::Sender<(u64, u64)>) -> impl FnMut(u64, u64) {
    let mut last = 0u64;
    move |done, total| {
        if done == total {
            let _ = tx.send_blocking((done, total));
        } else if done - last >= total / 100 {
            last = done;
            let _ = tx.try_send((done, total));
        }
    }
}

/// A host whose headers a call is about to write: its name, and a
/// descriptor of its own to tell its size once written.
pub(super) struct Writing {
    file: std::fs::File,
    host: String,
}

impl Writing {
    pub(super) fn of(host: &std::fs::File) -> Result<Writing> {
        Ok(Writing {
            file: input::dup(host)?,
            host: crate::mounts::path_of(host),
        })
    }

    /// Named by the file it is to replace, when it is a new container
    /// `tcctl create` made beside one (`names::replacement_name`).
    pub(super) fn named_as_replaced(mut self) -> Writing {
        let path = std::path::Path::new(&self.host);
        let replaced = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(tcd_proto::contract::names::replaced_name)
            .map(|n| path.with_file_name(n).display().to_string());
        if let Some(name) = replaced {
            self.host = name;
        }
        self
    }
}

impl Manager {
    /// Tells who may see it that `method` wrote the headers of `w`
    /// (`detail`: as `HeadersWritten` says it).
    pub(super) async fn written(
        &self,
        w: Writing,
        method: &'static str,
        detail: String,
        header: &Hdr<'_>,
        conn: &zbus::Connection,
    ) {
        let Ok(peer) = self.ctx.caller(header, conn).await else {
            return;
        };
        let size = std::io::Seek::seek(&mut &w.file, std::io::SeekFrom::End(0)).unwrap_or(0);
        let written = super::super::Written {
            host: w.host,
            owner: peer.uid,
            method,
            size,
            detail,
        };
        self.ctx.shared.announce_written(&written).await;
    }

    /// Expands the volume of `opening`: its search as any other, then the
    /// fill's progress as `ExpandProgress`.
    pub(super) async fn run_expand(
        &self,
        opening: Opening,
        x: tcd_proto::contract::ExpandOptions,
        emitter: SignalEmitter<'_>,
        header: &Hdr<'_>,
        conn: &zbus::Connection,
    ) -> Result<crate::app::expand::Expanded> {
        let fill_emitter = to_caller(emitter.clone(), header);
        let (tx, rx) = async_channel::bounded::<(u64, u64)>(4);
        let work = self.run_search(
            opening,
            emitter,
            header,
            conn,
            move |app, peer, o, cancel| {
                let mut progress = every_percent(tx);
                app.expand(&peer, o, x, &mut progress, cancel)
            },
        );
        let forward = async {
            while let Ok((done, total)) = rx.recv().await {
                let _ = Self::expand_progress(&fill_emitter, done, total).await;
            }
        };
        let (result, ()) = futures_lite::future::zip(work, forward).await;
        result
    }

    /// A volume and its credentials from a call, the caller allowed to
    /// use it.
    pub(super) async fn opening(
        &self,
        host: OwnedFd,
        password: Secret,
        keyfiles: SecretList,
        options: &Dict,
        header: &Hdr<'_>,
        conn: &zbus::Connection,
    ) -> Result<Opening> {
        input::bounded_keyfiles("keyfiles", &keyfiles)?;
        let options = decode::options(options)?;
        let host = input::host_file(host.into())?;
        let peer = self.ctx.caller(header, conn).await?;
        self.ctx.authorise(&peer, Action::for_host(&host)).await?;
        Ok(Opening {
            host,
            password,
            keyfiles,
            options,
            progress: None,
        })
    }

    /// Runs `work` on `opening` off the executor for the caller,
    /// cancelled when they leave, its progress sent to them.
    pub(super) async fn run_search<T, F>(
        &self,
        mut opening: Opening,
        emitter: SignalEmitter<'_>,
        header: &Hdr<'_>,
        conn: &zbus::Connection,
        work: F,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Arc<App>, Caller, Opening, &AtomicBool) -> crate::Result<T> + Send + 'static,
    {
        let peer = self.ctx.caller(header, conn).await?;
        let (sink, forward) = progress_to(to_caller(emitter, header));
        opening.progress = Some(sink);
        let departure = self.ctx.departure(header, conn).await;
        let (app, cancel) = (self.ctx.app(), departure.cancel());
        let work = blocking::unblock(move || work(app, peer.app(), opening, &cancel));
        let (done, ()) = futures_lite::future::zip(work, forward).await;
        drop(departure);
        Ok(done?)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) async fn restore(
        &self,
        host: OwnedFd,
        backup: Option<std::fs::File>,
        password: Secret,
        keyfiles: SecretList,
        options: &Dict,
        emitter: SignalEmitter<'_>,
        header: &Hdr<'_>,
        conn: &zbus::Connection,
    ) -> Result<String> {
        let opening = self
            .opening(host, password, keyfiles, options, header, conn)
            .await?;
        let writing = Writing::of(&opening.host)?;
        let (method, from) = match &backup {
            Some(b) => ("RestoreHeaders", crate::mounts::path_of(b)),
            None => ("RestoreEmbeddedHeader", String::new()),
        };
        let used = self
            .run_search(
                opening,
                emitter,
                header,
                conn,
                move |app, peer, o, cancel| {
                    app.restore_headers(&peer, o, backup, cancel)
                        .map(str::to_owned)
                },
            )
            .await?;
        self.written(writing, method, from, header, conn).await;
        Ok(used)
    }

    pub(super) async fn create_volume(
        &self,
        call: crate::app::create::CreateCall,
        emitter: SignalEmitter<'_>,
        header: &Hdr<'_>,
        conn: &zbus::Connection,
    ) -> Result<()> {
        let peer = self.ctx.caller(header, conn).await?;
        let emitter = to_caller(emitter, header);
        self.ctx
            .authorise(&peer, Action::for_host(&call.host))
            .await?;
        let (tx, rx) = async_channel::bounded::<(u64, u64)>(4);
        // A client that goes away stops the fill; the headers are written
        // last, so what is left opens as nothing.
        let departure = self.ctx.departure(header, conn).await;
        let (app, cancel) = (self.ctx.app(), departure.cancel());
        let work = blocking::unblock(move || {
            let mut progress = every_percent(tx);
            app.create(&peer.app(), call, &mut progress, &cancel)
        });
        let forward = async {
            while let Ok((done, total)) = rx.recv().await {
                let _ = Self::create_progress(&emitter, done, total).await;
            }
        };
        let (result, ()) = futures_lite::future::zip(work, forward).await;
        drop(departure);
        Ok(result?)
    }

    pub(super) async fn favorites_of(
        &self,
        peer: &Peer,
    ) -> Result<Vec<(String, bool, super::super::favorites::Dict)>> {
        let shared = &self.ctx.shared;
        // Where a system favorite's keyfiles and password file are is for
        // administrators only; polkit is asked only when there is any.
        let administrator =
            shared.system_favorites_name_secrets()? && self.ctx.is_administrator(peer).await;
        Ok(shared
            .list_favorites(&peer.app(), administrator)?
            .into_iter()
            .map(|(f, system)| {
                let d = super::super::favorites::to_dict(&f);
                (f.name, system, d)
            })
            .collect())
    }

    pub(super) async fn run_benchmark(
        &self,
        buffer_bytes: u64,
        emitter: SignalEmitter<'_>,
        header: &Hdr<'_>,
        conn: &zbus::Connection,
    ) -> Result<BenchReport> {
        let peer = self.ctx.caller(header, conn).await?;
        let emitter = to_caller(emitter, header);
        let departure = self.ctx.departure(header, conn).await;
        let (app, cancel) = (self.ctx.app(), departure.cancel());
        let (tx, rx) = async_channel::unbounded();
        let work = blocking::unblock(move || {
            app.benchmark(&peer.app(), buffer_bytes, &cancel, |done, total| {
                let _ = tx.try_send((done, total));
            })
        });
        let forward = async {
            while let Ok((done, total)) = rx.recv().await {
                let _ = Self::benchmark_progress(&emitter, done, total).await;
            }
        };
        let (report, ()) = futures_lite::future::zip(work, forward).await;
        drop(departure);
        Ok(report?)
    }
}
