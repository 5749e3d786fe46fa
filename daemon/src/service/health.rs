//! Telling clients about volume health: a volume whose `Health` or
//! `Problems` changed gets `PropertiesChanged`, and the manager sends
//! `HealthChanged(volume, host, owner, health, problems)` to those who may
//! see the volume. Changes come from the data path as they happen (a new
//! kind of problem) and from a sweep every few seconds, which also looks at
//! what no request sees (a container deleted while idle, a filesystem the
//! kernel made read-only) and keeps the counts current. The sweep also
//! finds filesystems unmounted outside tcd: those volumes are attached
//! from then on, and their `State`, `MountPoint` and `Filesystem` change;
//! and it makes a driver process's filesystem read-only once hidden-volume
//! protection refused a write under it.

use super::{Shared, volume};
use crate::mounts::Mounted;
use std::sync::Arc;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

/// How often the sweep looks when nothing reported a problem.
const SWEEP: Duration = Duration::from_secs(2);

/// Starts the thread that watches every volume's health for `shared`'s
/// life.
pub fn watch(shared: &Arc<Shared>) {
    let (tx, rx) = std::sync::mpsc::channel::<u32>();
    shared.table.watch_health(tx);
    let weak = Arc::downgrade(shared);
    let started = std::thread::Builder::new()
        .name("tcd-health".into())
        .spawn(move || {
            // Until the table (which holds the sender) is gone.
            while let Ok(_) | Err(RecvTimeoutError::Timeout) = rx.recv_timeout(SWEEP) {
                // Several reports at once make one announcement.
                while rx.try_recv().is_ok() {}
                let Some(shared) = weak.upgrade() else {
                    break;
                };
                shared.table.check_health();
                shared.table.seal_drivers_read_only();
                // `umount MOUNTPOINT` typed outside tcd: attached now.
                let unmounted = shared.table.filesystems_unmounted_outside();
                if !unmounted.is_empty() {
                    zbus::block_on(shared.announce_changed_async(&unmounted));
                }
                for m in shared.table.health_changes() {
                    let problems = m.health.problems();
                    if problems.is_empty() {
                        continue;
                    }
                    tracing::warn!(
                        id = m.id,
                        volume = %m.host_name,
                        "volume failed: {}",
                        problems.join("; ")
                    );
                    zbus::block_on(announce(&shared, &m));
                }
            }
        });
    if let Err(e) = started {
        tracing::error!("cannot watch volume health: {e}");
    }
}

/// `PropertiesChanged` of the volume's `Health` and `Problems`, and the
/// manager's `HealthChanged`, to every client that may see the volume.
async fn announce(shared: &Shared, m: &Mounted) {
    let status = m.health.status();
    let problems = m.health.problems();
    if let Some(bus) = shared.bus.get() {
        bus.health_changed(shared, m, status, &problems).await;
    }
    let path = volume::object_path(m.id);
    for conn in shared.connections() {
        if let Ok(iface) = conn
            .object_server()
            .interface::<_, volume::VolumeObject>(path.clone())
            .await
        {
            let object = iface.get().await;
            let _ = object.health_changed(iface.signal_emitter()).await;
            let _ = object.problems_changed(iface.signal_emitter()).await;
        }
        let _ = conn
            .emit_signal(
                None::<&str>,
                volume::MANAGER_PATH,
                "org.tcd.Manager1",
                "HealthChanged",
                &(&path, &m.host_name, m.owner, status, &problems),
            )
            .await;
    }
}
