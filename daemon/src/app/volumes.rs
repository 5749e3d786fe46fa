//! Mounted volumes: finding one by a name a user knows, dismounting, and
//! listing.

use super::{App, Caller};
use crate::error::{Error, Result};
use crate::mount::holders::Holder;
use crate::mounts::Mounted;
use std::sync::Arc;
use tcd_proto::contract::names;

/// A dismount done: the volume as it is now (gone, or detaching while
/// processes still hold it).
pub struct Dismounted {
    pub volume: Mounted,
}

impl Dismounted {
    /// The processes (pid, command) still holding a detaching volume, as
    /// `caller` may see them: another user's processes are shown to root
    /// alone, the others see (0, "") for each.
    pub fn holders_for(&self, caller: &Caller) -> Vec<(u32, String)> {
        self.volume
            .holders
            .iter()
            .map(|h| {
                let h = visible(h.clone(), caller);
                (h.pid, h.command)
            })
            .collect()
    }
}

/// A holder as `caller` may see it: another user's process is shown to
/// root alone; the others see pid 0 and no command.
fn visible(h: Holder, caller: &Caller) -> Holder {
    if caller.is_root() || caller.uid == h.uid {
        h
    } else {
        Holder {
            pid: 0,
            command: String::new(),
            ..h
        }
    }
}

/// The error of a dismount that took down a volume whose writes did not
/// all reach the host (the dismount itself is done), if any.
pub fn lost_writes(m: &Mounted) -> Option<String> {
    m.health.writes_lost().then(|| {
        format!(
            "{} was dismounted, but writes to it were lost: {}",
            m.host_name,
            m.health.problems().join("; ")
        )
    })
}

fn not_mounted(name: &str) -> Error {
    Error::NotMounted(name.to_owned())
}

impl App {
    /// The volume `name` (object path, host, device or mount point) names;
    /// the caller's own first where several have that name.
    pub fn resolve(&self, name: &str, caller: &Caller) -> Result<Mounted> {
        super::input::bounded("the volume name", name)?;
        names::volume_id(name)
            .and_then(|id| self.table.get(id))
            .or_else(|| self.table.find(name, caller.uid))
            .ok_or_else(|| not_mounted(name))
    }

    /// The error for `name` naming no volume the caller may see: another
    /// user's volume is "not mounted" to those who may not manage it.
    pub fn not_mounted(name: &str) -> Error {
        not_mounted(name)
    }

    /// Dismounts volume `id` (blocks on the unmount). The volume is gone or
    /// detaching either way; writes that were lost are the error. A busy
    /// volume's holders are named as `caller` may see them.
    pub fn dismount(
        &self,
        id: u32,
        force: bool,
        caller: &Caller,
    ) -> (Result<Dismounted>, Option<Mounted>) {
        match self.table.dismount(id, force) {
            Err(Error::Held { what, holders }) => {
                let holders = holders.into_iter().map(|h| visible(h, caller)).collect();
                (Err(Error::Held { what, holders }), None)
            }
            Err(e) => (Err(e), None),
            Ok(m) => {
                let result = match lost_writes(&m) {
                    Some(lost) => Err(Error::WritesLost(lost)),
                    None => Ok(Dismounted { volume: m.clone() }),
                };
                (result, Some(m))
            }
        }
    }

    /// Mounts the filesystem of volume `id`, attached as a block device
    /// only (udisks' `mount` after `unlock`). Its owner's alone: the
    /// files inside are theirs.
    pub fn mount_filesystem(
        &self,
        id: u32,
        caller: &Caller,
        o: &tcd_proto::contract::FilesystemMountOptions,
    ) -> Result<Mounted> {
        // Bounded as `Mount`'s options are, before any work.
        for (what, v) in [
            ("option mount_point", &o.mount_point),
            ("option fs_options", &o.fs_options),
        ] {
            if let Some(v) = v {
                super::input::bounded(what, v)?;
            }
        }
        self.owned_volume(id, caller, "mounts")?;
        let fs = crate::mounts::FsOptions::parse(o.fs_options.as_deref().unwrap_or(""))
            .map_err(Error::InvalidArgument)?;
        super::mount::check_owners(caller, &fs)?;
        let at = o.mount_point.as_deref().filter(|p| !p.is_empty());
        self.table.mount_attached(
            id,
            (caller.uid, caller.gid),
            at.map(std::path::Path::new),
            o.allow_non_empty.unwrap_or(false),
            fs,
        )
    }

    /// Unmounts the filesystem of volume `id` and leaves it attached as a
    /// block device (udisks' `unmount` before `lock`); the reverse of
    /// [`App::mount_filesystem`], its owner's alone as that is. A busy
    /// filesystem's holders are named as `caller` may see them.
    pub fn unmount_filesystem(&self, id: u32, caller: &Caller, force: bool) -> Result<Mounted> {
        self.owned_volume(id, caller, "unmounts")?;
        match self.table.unmount_attached(id, force) {
            Err(Error::Held { what, holders }) => {
                let holders = holders.into_iter().map(|h| visible(h, caller)).collect();
                Err(Error::Held { what, holders })
            }
            other => other,
        }
    }

    /// Volume `id`, when `caller` attached it: its filesystem is theirs
    /// alone to `verb` ("mounts", "unmounts").
    fn owned_volume(&self, id: u32, caller: &Caller, verb: &str) -> Result<Mounted> {
        let m = self
            .table
            .get(id)
            .ok_or(Error::NotMounted(id.to_string()))?;
        if m.owner != caller.uid {
            return Err(Error::PermissionDenied(format!(
                "only the user who attached {} {verb} its filesystem",
                m.host_name
            )));
        }
        Ok(m)
    }

    /// The volumes `caller` may dismount with `DismountAll`: everyone's for
    /// root, their own otherwise.
    pub fn dismountable(&self, caller: &Caller) -> Vec<Mounted> {
        self.table
            .list()
            .into_iter()
            .filter(|m| caller.is_root() || m.owner == caller.uid)
            .collect()
    }

    /// Every mounted volume, with fresh health (a container deleted a
    /// moment ago), but a host on a hung network filesystem holds up no
    /// listing: the sweep reports it later.
    pub fn list_fresh(self: &Arc<Self>) -> Vec<Mounted> {
        let (done, checked) = std::sync::mpsc::channel();
        let app = Arc::clone(self);
        std::thread::spawn(move || {
            app.table.check_health();
            let _ = done.send(());
        });
        let _ = checked.recv_timeout(std::time::Duration::from_secs(1));
        self.table.list()
    }
}
