//! VeraCrypt's Expand Volume on a dismounted volume: the headers (see
//! `volume::expand`), then the filesystem inside.

use super::headers::Opening;
use super::{App, Caller};
use crate::error::{Error, Result};
use crate::mount::grow::{self, Grown};
use crate::volume::expand::{self, Expansion, Step};
use crate::volume::opened::{HostTimes, OpenVolume};
use crate::volume::unlock::Target;
use std::sync::atomic::AtomicBool;
use tcd_proto::contract::ExpandOptions;

/// What an expansion did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expanded {
    /// The data area's new size in bytes.
    pub size: u64,
    pub filesystem: Grown,
    /// The backup header opened it (both were written anew).
    pub by_backup: bool,
    /// Both headers said this size already: an expansion left unfinished
    /// was finished, these bytes at the data area's end never written.
    pub finished: Option<u64>,
    /// The new space was encrypted (not left as it was).
    pub filled: bool,
}

impl App {
    /// Grows the volume `o` opens to `x.size` (a device: its own size),
    /// then its filesystem. `progress(done, total)` follows the fill.
    pub fn expand(
        &self,
        caller: &Caller,
        o: Opening,
        x: ExpandOptions,
        progress: &mut dyn FnMut(u64, u64),
        cancel: &AtomicBool,
    ) -> Result<Expanded> {
        if x.holds_hidden == Some(true) {
            return Err(Error::InvalidArgument(
                tcd_proto::contract::options::HOLDS_HIDDEN.into(),
            ));
        }
        super::input::refuse_read_only(&o.host, "expanding it")?;
        let mut c = self.check_opening(caller, &o, false)?;
        let _held = self.table.hold(&o.host)?;
        // Grown under a loop device or a filesystem mounted outside tcd,
        // it would change beneath them: refused as a restore is.
        let _claim = crate::mount::in_use::claim(&o.host)?;
        // Put back at the end, as VeraCrypt's expander does: the container's
        // times do not tell when its volume was last used (a file the
        // caller owns: see `HostTimes::for_caller`).
        let times = HostTimes::for_caller(&o.host, caller.uid);
        let kf = c.creds.keyfile_refs();
        let creds = c.creds.credentials(&kf);
        let engine = self.table.engine();
        let to = Expansion {
            new_size: x.size,
            fill: x.no_random_fill != Some(true),
        };
        let plan = expand::plan(engine, &o.host, creds, &to, &c.search, cancel)?;
        // Opened again from here on: the search knows what opens it.
        c.search.format = Some(plan.format);
        c.search.prf = Some(plan.prf);
        c.search.chain = Some(plan.chain);
        if x.filesystem_as_is != Some(true) {
            refuse_ungrowable(
                engine,
                &o.host,
                creds,
                &c.search,
                cancel,
                plan.new_data_size,
            )?;
        }
        expand::apply(
            engine,
            &o.host,
            creds,
            &plan,
            to.fill,
            &c.search,
            Step::Primary,
            progress,
            cancel,
        )?;
        let filesystem = self.grow_filesystem(&o.host, creds, &c.search, cancel);
        if let Some(t) = times
            && let Err(e) = t.put_back(&o.host)
        {
            tracing::warn!("cannot put the container's timestamps back: {e}");
        }
        Ok(Expanded {
            size: plan.new_data_size,
            filesystem,
            by_backup: plan.by_backup,
            finished: plan.unfinished,
            filled: to.fill,
        })
    }
}

impl App {
    /// Grows the filesystem inside the expanded volume. The volume has
    /// grown either way; a filesystem left as it was is said, not an
    /// error.
    fn grow_filesystem(
        &self,
        host: &std::fs::File,
        creds: crate::volume::unlock::Credentials<'_>,
        search: &crate::volume::unlock::SearchOptions,
        cancel: &AtomicBool,
    ) -> Grown {
        let engine = self.table.engine();
        host.try_clone()
            .map_err(|e| Error::Io {
                what: "cannot reopen the volume".into(),
                source: e,
            })
            .and_then(|host| {
                OpenVolume::open(engine, host, creds, Target::Any, search, cancel, false)
            })
            .and_then(|v| self.table.grow_filesystem(v))
            .unwrap_or_else(|e| Grown {
                filesystem: String::new(),
                grown: false,
                note: format!("the filesystem was not grown: {e}"),
            })
    }
}

/// A filesystem the daemon cannot grow (FAT, exFAT, btrfs under 256 MiB
/// once grown to `new_size`) refuses the expansion before anything is
/// written: the new space would lie unused, and a container never shrinks
/// again. `filesystem_as_is` goes ahead.
fn refuse_ungrowable(
    engine: &crate::engine::Engine,
    host: &std::fs::File,
    creds: crate::volume::unlock::Credentials<'_>,
    search: &crate::volume::unlock::SearchOptions,
    cancel: &AtomicBool,
    new_size: u64,
) -> Result<()> {
    let host = host.try_clone().map_err(|e| Error::Io {
        what: "cannot reopen the volume".into(),
        source: e,
    })?;
    let v = OpenVolume::open(engine, host, creds, Target::Any, search, cancel, true)?;
    let mut boot = [0u8; 512];
    if v.size() < boot.len() as u64 {
        return Ok(());
    }
    v.read_at(&mut boot, 0)?;
    // Whole sectors only: the one holding btrfs's magic.
    let mut sector = [0u8; 512];
    let at = grow::BTRFS_MAGIC_AT - grow::BTRFS_MAGIC_AT % 512;
    if v.size() >= at + 512 {
        v.read_at(&mut sector, at)?;
    }
    let magic = (grow::BTRFS_MAGIC_AT - at) as usize;
    if sector[magic..magic + 8] == grow::BTRFS_MAGIC && new_size < grow::BTRFS_SMALLEST {
        return Err(Error::InvalidArgument(format!(
            "the volume's btrfs filesystem is grown to 256 MiB or more only, and the volume \
             would hold {new_size} bytes: nothing was written; expand it to 256 MiB or more, \
             or expand with option filesystem_as_is"
        )));
    }
    let Some(name) = grow::ungrowable(&boot) else {
        return Ok(());
    };
    Err(Error::InvalidArgument(format!(
        "the volume's {name} filesystem cannot be grown here, so the new space would lie \
         unused (a container never shrinks): nothing was written; copy its files into a new, \
         larger volume, or expand with option filesystem_as_is and grow {name} elsewhere"
    )))
}
