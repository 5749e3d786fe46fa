//! Mounts and dismounts nobody called for: system favorites at start and
//! when their device appears, dismounts when a device goes, when its
//! owner logs out, before sleep and after idle time. Each is announced
//! like a called one (the volume object comes and goes) and an automatic
//! dismount also by the `AutoDismounted` signal, which the user's session
//! turns into a notification (the daemon shows nothing itself).

use super::Shared;
use crate::events::{logind, uevent};
use crate::favorites::{Owner, auto};
use crate::mounts::Mounted;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Starts the automatic parts that need no bus: system favorites now,
/// device events, idle dismounts.
pub fn start(shared: &Arc<Shared>) {
    let s = Arc::clone(shared);
    std::thread::spawn(move || mount_present(&s, None));
    match uevent::Listener::open() {
        Ok(listener) => {
            let s = Arc::clone(shared);
            std::thread::spawn(move || {
                loop {
                    match listener.next() {
                        Ok(change) => on_device(&s, change),
                        Err(e) => {
                            tracing::error!("device events stopped: {e}");
                            break;
                        }
                    }
                }
            });
        }
        Err(e) => tracing::warn!("no device events, so no mounts when devices appear: {e}"),
    }
    let s = Arc::clone(shared);
    std::thread::spawn(move || idle_dismounts(&s));
}

/// Each second, dismounts the volumes idle for their time. One that could
/// not be dismounted (files open) is tried again at every check, quietly,
/// until it goes or is used again: its holder may leave at any moment and
/// nothing else would wake the check. Only the table's map lock is taken,
/// and only briefly, by [`crate::mounts::MountTable::dismount`].
fn idle_dismounts(s: &Arc<Shared>) {
    // Volumes refused, by the mark of their last I/O as it was right after
    // the attempt (whose own flush may count as I/O): another mark means
    // somebody used the volume, and its idle time starts again.
    let mut refused: std::collections::HashMap<u32, u64> = std::collections::HashMap::new();
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let volumes = s.table.idle_times();
        refused.retain(|id, _| volumes.iter().any(|(m, ..)| m.id == *id));
        for (m, idle, last_io) in volumes {
            let limit = Duration::from_secs(u64::from(m.auto_dismount.idle_seconds));
            if limit.is_zero() {
                continue;
            }
            let retry = refused.get(&m.id) == Some(&last_io);
            if !retry {
                refused.remove(&m.id);
                if idle < limit {
                    continue;
                }
            }
            // Told once: a retry that fails again says nothing.
            if !dismount_telling(s, m.clone(), "idle", false, !retry)
                && let Some(mark) = s.table.last_io(m.id)
            {
                refused.insert(m.id, mark);
            }
        }
    }
}

/// Dismounts volumes when logind says their owner left or the machine is
/// about to sleep (holding a delay lock so the dismount comes first).
pub fn watch_logind(shared: &Arc<Shared>, conn: &zbus::blocking::Connection) {
    let lock = Arc::new(Mutex::new(logind::delay_sleep(conn)));
    let s = Arc::clone(shared);
    let c = conn.clone();
    logind::watch(conn, move |event| match event {
        logind::Event::LoggedOut(uid) => {
            tracing::info!(uid, "logind: user logged out");
            for m in s.table.list() {
                if m.owner == uid && m.auto_dismount.on_logout {
                    dismount(&s, m, "logout", false);
                }
            }
        }
        logind::Event::Sleep(true) => {
            tracing::info!("logind: preparing for sleep");
            for m in s.table.list() {
                if m.auto_dismount.before_sleep {
                    dismount(&s, m, "sleep", false);
                }
            }
            // Sleep may go ahead now.
            drop(lock.lock().unwrap_or_else(|p| p.into_inner()).take());
        }
        logind::Event::Sleep(false) => {
            *lock.lock().unwrap_or_else(|p| p.into_inner()) = logind::delay_sleep(&c);
        }
    });
}

fn on_device(shared: &Arc<Shared>, change: uevent::Change) {
    match change {
        uevent::Change::Present { name, device } => {
            tracing::debug!(name, "block device present");
            mount_present(shared, Some(device));
            // udev makes its /dev/disk links after the kernel's event: a
            // favorite named by one is looked for again shortly after.
            let s = Arc::clone(shared);
            std::thread::spawn(move || {
                for wait in [2, 5] {
                    std::thread::sleep(Duration::from_secs(wait));
                    mount_present(&s, Some(device));
                }
            });
        }
        uevent::Change::Lost => {
            tracing::warn!("device events were lost: looking at every favorite again");
            mount_present(shared, None);
            for m in shared.table.list() {
                if let Some(dev) = m.host_device
                    && !device_present(dev)
                {
                    dismount(shared, m, "device removed", true);
                }
            }
        }
        uevent::Change::Gone { name, device } => {
            for m in shared.table.list() {
                if m.host_device == Some(device) {
                    tracing::info!(id = m.id, name, "the volume's device went away");
                    dismount(shared, m, "device removed", true);
                }
            }
        }
    }
}

/// Whether a block device of that number is present with a medium.
fn device_present(dev: u64) -> bool {
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/size"))
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .is_some_and(|n| n > 0)
}

/// Mounts the system favorites marked for it that are present and not
/// mounted; with `device`, only the one on that device.
fn mount_present(shared: &Arc<Shared>, device: Option<u64>) {
    let favorites = match shared.favorites.list(Owner::System) {
        Ok(f) => f,
        Err(e) => {
            tracing::error!("system favorites: {e}");
            return;
        }
    };
    for fav in favorites.into_iter().filter(|f| f.auto_mount) {
        if device.is_some() && auto::device_number(&fav) != device {
            continue;
        }
        let mounted = shared
            .table
            .list()
            .iter()
            .any(|m| m.favorite.as_deref() == Some(&fav.name) && m.owner == 0);
        if mounted || auto::locate(&fav).is_none_or(|p| !p.exists()) {
            continue;
        }
        // One attempt at a time per favorite (a retry may come while the
        // first still searches).
        let Some(_attempt) = shared.begin_system_mount(&fav.name) else {
            continue;
        };
        let never = AtomicBool::new(false);
        match shared.mount_system_favorite(&fav, &never) {
            Ok(m) => {
                tracing::info!(favorite = fav.name, id = m.id, "system favorite mounted");
                if let Err(e) = shared.favorites.record_opened(
                    Owner::System,
                    &fav.name,
                    m.info.prf.name(),
                    m.info.chain.name,
                ) {
                    tracing::warn!("cannot record how {} opened: {e}", fav.name);
                }
                shared.publish_blocking(&m);
            }
            Err(e) => tracing::error!(favorite = fav.name, "cannot mount system favorite: {e}"),
        }
    }
}

/// Dismounts `m` for `reason`, tells clients, and says so in the log;
/// whether it is dismounted.
fn dismount(shared: &Arc<Shared>, m: Mounted, reason: &str, force: bool) -> bool {
    dismount_telling(shared, m, reason, force, true)
}

/// [`dismount`]; a failure is told to clients and logged as a warning only
/// when `tell_failure` (a retry already told is a debug line).
fn dismount_telling(
    shared: &Arc<Shared>,
    m: Mounted,
    reason: &str,
    force: bool,
    tell_failure: bool,
) -> bool {
    let force = force || m.auto_dismount.force;
    let done = if force || tell_failure {
        shared.table.dismount(m.id, force)
    } else {
        shared.table.try_dismount_quietly(m.id)
    };
    match done {
        // Announced while its object still exists, so that a client can
        // tell this removal from a dismount somebody asked for.
        Ok(done) => {
            tracing::info!(id = m.id, reason, "volume dismounted automatically");
            shared.announce_auto_dismount(&m, reason, "");
            zbus::block_on(shared.dismounted(&done));
            true
        }
        // Already gone by another way: nothing to say.
        Err(crate::Error::NotMounted(_)) => true,
        Err(e) if tell_failure => {
            tracing::warn!(id = m.id, reason, "automatic dismount failed: {e}");
            shared.announce_auto_dismount(&m, reason, &e.to_string());
            false
        }
        Err(e) => {
            tracing::debug!(id = m.id, reason, "automatic dismount failed again: {e}");
            false
        }
    }
}
