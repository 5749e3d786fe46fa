//! Mounting: a call's options made into a plan (checked before any key is
//! derived), and one loop that tries each candidate password (cached
//! ones, then the one given) with each search (a favorite's last PRF and
//! encryption first) until one opens the volume. Plain mounts, cached
//! passwords, favorites and the daemon's own mounts of system favorites all
//! go through it.

use super::input::{self, bounded, bounded_keyfiles, bounded_search, bounded_secret};
use super::{App, Caller};
use crate::cache::Cached;
use crate::engine::Chain;
use crate::engine::trials::{SearchBounds, SearchSlot};
use crate::error::{Error, Result};
use crate::favorites::{Favorite, Owner, Rules};
use crate::mounts::AutoDismount;
use crate::mounts::{Filesystem, FsOptions, MountRequest, Mounted};
use crate::volume::kdf::{Format, Prf};
use crate::volume::opened::HostTimes;
use crate::volume::unlock;
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use tcd_proto::contract::options::{MountFilesystem, VolumeFormat};
use tcd_proto::contract::{MountOptions, SearchOptions, Secret, SecretList};

/// A `Mount` call as the application takes it.
pub struct MountCall {
    /// The container or device, opened by the caller with its own rights.
    pub host: File,
    pub host_name: String,
    pub password: Secret,
    pub keyfiles: SecretList,
    pub options: MountOptions,
}

/// How the volume is mounted once it opens.
#[derive(Debug, Clone)]
pub struct Settings {
    pub read_only: bool,
    /// Read-write asked for in so many words: a TrueCrypt 4 volume
    /// mounts read-only otherwise.
    pub read_write_asked: bool,
    pub filesystem: Filesystem,
    pub mount_point: Option<PathBuf>,
    pub slot: Option<u32>,
    pub fs_options: FsOptions,
    pub allow_non_empty: bool,
    pub discard: bool,
    pub preserve_timestamps: bool,
    pub auto_dismount: AutoDismount,
}

/// A mount checked and ready to search: nothing of it has touched a key.
pub struct MountPlan {
    host: File,
    host_name: String,
    /// Candidate credentials, in the order tried.
    candidates: Vec<Cached>,
    /// Keep the candidate that opened in the cache.
    cache: bool,
    hidden: Option<Cached>,
    searches: Vec<unlock::SearchOptions>,
    settings: Settings,
    owner: Caller,
    favorite: Option<(Owner, Favorite)>,
    /// The container's times when the call came, before any read.
    host_times: Option<HostTimes>,
    /// Holds the caller's share of header searches while the plan lives.
    _slot: Option<SearchSlot>,
}

/// Credentials as they came over the wire.
pub fn credentials(password: Secret, keyfiles: SecretList, pim: u32) -> Cached {
    Cached {
        password: password.0,
        keyfiles: keyfiles.0.into_iter().map(|k| k.0).collect(),
        pim,
    }
}

impl MountCall {
    /// The bounds on what the call carries, checked before anything else.
    pub fn check(&self) -> Result<()> {
        let o = &self.options;
        bounded("the host name", &self.host_name)?;
        bounded_keyfiles("keyfiles", &self.keyfiles)?;
        if let Some(p) = &o.protect_hidden_password {
            bounded_secret("option protect_hidden_password", p)?;
        }
        if let Some(k) = &o.protect_hidden_keyfiles {
            bounded_keyfiles("option protect_hidden_keyfiles", k)?;
        }
        if o.slot.is_some_and(|s| !(1..=64).contains(&s)) {
            return Err(Error::InvalidArgument("option slot: 1 to 64".into()));
        }
        for (what, v) in [
            ("option mount_point", &o.mount_point),
            ("option favorite", &o.favorite),
            ("option fs_options", &o.fs_options),
        ] {
            if let Some(v) = v {
                bounded(what, v)?;
            }
        }
        bounded_search(&o.search())
    }
}

impl MountPlan {
    /// Sends the progress of the plan's searches to `sink`.
    pub fn report_to(&mut self, sink: unlock::ProgressSink) {
        for s in &mut self.searches {
            s.progress = Some(sink.clone());
        }
    }
}

impl App {
    /// The library's search options for `o`, with the PRF, encryption and
    /// format names checked and a forced backend allowed by the policy.
    pub fn search_of(&self, o: &SearchOptions) -> Result<unlock::SearchOptions> {
        bounded_search(o)?;
        let mut s = unlock::SearchOptions::new();
        if let Some(h) = &o.hash {
            s.prf = Some(prf_named(h)?);
        }
        if let Some(c) = &o.encryption {
            s.chain = Some(chain_named(c)?);
        }
        s.format = o.format.map(format_of);
        s.detached = o
            .detached_header
            .as_ref()
            .map(|h| unlock::DetachedHeader(std::sync::Arc::new(h.0.clone())));
        s.system = flag(o.system_encryption);
        s.backup_only = flag(o.backup_header);
        s.hidden_only = flag(o.hidden_only);
        if s.hidden_only && s.system {
            return Err(Error::InvalidArgument(
                "options hidden_only and system_encryption: a system drive has no hidden volume to open"
                    .into(),
            ));
        }
        s.backend = o.backend.clone().filter(|b| !b.is_empty());
        if let Some(name) = &s.backend {
            self.backends.check_forced(name)?;
        }
        Ok(s)
    }

    /// Bounds a header search of `caller`'s by the policy before any work:
    /// the PIMs asked for (above the caller's limits: `OverLimit`) and the
    /// searches running (`Busy`). The slot lasts as long as it is held.
    pub fn search_slot(
        &self,
        caller: &Caller,
        search: &mut unlock::SearchOptions,
        pims: &[u32],
    ) -> Result<SearchSlot> {
        let limits = self.backends.policy().limits;
        let admin = caller.is_root();
        search.limits = crate::policy::kdf_limits(&limits, admin);
        search.caller = caller.uid;
        for &pim in pims {
            search.limits.request_allowed(search.prf, pim)?;
        }
        let bounds = (!admin).then_some(SearchBounds {
            per_caller: limits.searches_per_user,
            total: limits.searches,
        });
        self.table
            .engine()
            .trials()
            .begin_search(caller.uid, bounds)
            .map_err(Error::AtCapacity)
    }

    /// Checks a `Mount` call and plans it: the favorite's settings applied,
    /// "already mounted" said before any key is derived, the search slot
    /// taken.
    pub fn plan_mount(&self, caller: &Caller, call: MountCall) -> Result<MountPlan> {
        call.check()?;
        let o = &call.options;
        let mut search = self.search_of(&o.search())?;
        // System encryption first: its header is read from the drive's first
        // track, as a detached one, which is not what a caller gave.
        if search.system && (search.backup_only || o.protect_hidden_password.is_some()) {
            return Err(Error::InvalidArgument(
                "option system_encryption: a system drive has no backup header or hidden volume to open or protect"
                    .into(),
            ));
        }
        if search.backup_only && search.detached.is_some() {
            return Err(Error::InvalidArgument(
                "options backup_header and detached_header: a header file has no backup headers"
                    .into(),
            ));
        }
        if search.hidden_only && o.protect_hidden_password.is_some() {
            return Err(Error::InvalidArgument(
                "options hidden_only and protect_hidden_password: the protection is for the outer volume"
                    .into(),
            ));
        }
        let mut settings = settings_of(o)?;
        check_owners(caller, &settings.fs_options)?;
        let (mut cache, mut use_cache) = (flag(o.cache), flag(o.use_cache));
        let favorite = match o.favorite.as_deref().filter(|n| !n.is_empty()) {
            None => None,
            Some(name) => {
                let (owner, fav) = self.find_favorite(caller, name, flag(o.favorite_system))?;
                same_volume(&call.host, &fav)?;
                let hidden = o.protect_hidden_password.is_some();
                self.apply_favorite(&fav, &mut settings, &mut search, hidden)?;
                // A favorite's password is never mixed with another's.
                (cache, use_cache) = (false, false);
                Some((owner, fav))
            }
        };
        // A volume mounted already is said so at once: no search slot
        // taken (a user at the bound would hear "busy"), no key derived.
        self.table
            .check_host(&call.host, &call.host_name, caller.uid)?;
        let pim = o.pim.unwrap_or(0);
        let hidden = o.protect_hidden_password.clone().map(|p| {
            credentials(
                p,
                o.protect_hidden_keyfiles.clone().unwrap_or_default(),
                o.protect_hidden_pim.unwrap_or(0),
            )
        });
        let mut pims = vec![pim];
        pims.extend(hidden.as_ref().map(|h| h.pim));
        let slot = self.search_slot(caller, &mut search, &pims)?;
        let given = credentials(call.password, call.keyfiles, pim);
        let mut candidates = if use_cache {
            self.cache.for_user(caller.uid)
        } else {
            Vec::new()
        };
        // Cached passwords first (the caller's own), then the one given,
        // if one was.
        if !use_cache || !given.password.is_empty() || !given.keyfiles.is_empty() {
            candidates.push(given);
        }
        let host_times = settings
            .preserve_timestamps
            .then(|| HostTimes::for_caller(&call.host, caller.uid))
            .flatten();
        Ok(MountPlan {
            host_times,
            host: call.host,
            host_name: call.host_name,
            candidates,
            cache,
            hidden,
            searches: searches(favorite.as_ref().map(|(_, f)| f), &search),
            settings,
            owner: *caller,
            favorite,
            _slot: Some(slot),
        })
    }

    /// A favorite's own settings win over the call's.
    fn apply_favorite(
        &self,
        fav: &Favorite,
        settings: &mut Settings,
        search: &mut unlock::SearchOptions,
        protect_hidden: bool,
    ) -> Result<()> {
        // The favorite's format narrows the search; system encryption
        // opens the system header (the drive's first track of a partition
        // comes from the caller as a detached header).
        if search.format.is_none() {
            search.format = fav.format.map(format_of);
        }
        if fav.system_encryption {
            if search.backup_only || protect_hidden {
                return Err(Error::InvalidArgument(format!(
                    "favorite {:?}: a system drive has no backup header or hidden volume to open or protect",
                    fav.name
                )));
            }
            search.system = true;
        }
        settings.read_only |= fav.readonly;
        if settings.mount_point.is_none() {
            settings.mount_point = fav.mount_point.as_ref().map(PathBuf::from);
        }
        if settings.slot.is_none() {
            settings.slot = fav.slot;
        }
        if fav.filesystem.is_some() {
            settings.filesystem = filesystem_of(fav);
        }
        settings.discard |= fav.discard;
        if search.backend.is_none() && fav.backend.is_some() {
            search.backend = fav.backend.clone();
            if let Some(b) = &search.backend {
                self.backends.check_forced(b)?;
            }
        }
        let a = fav.auto_dismount();
        let mine = settings.auto_dismount;
        settings.auto_dismount = AutoDismount {
            on_logout: mine.on_logout || a.on_logout,
            before_sleep: mine.before_sleep || a.before_sleep,
            idle_seconds: if a.idle_seconds > 0 {
                a.idle_seconds
            } else {
                mine.idle_seconds
            },
            force: mine.force || a.force,
        };
        Ok(())
    }

    /// Runs a plan: each candidate with each search until one opens the
    /// volume. Stops when `caller_left` is set, or when another call mounts
    /// the same host meanwhile (that answer, "already mounted", needs no
    /// key).
    pub fn run_mount(&self, plan: MountPlan, caller_left: &AtomicBool) -> Result<Mounted> {
        let watched = input::dup(&plan.host)?;
        let stop = AtomicBool::new(caller_left.load(Ordering::Relaxed));
        let mounted_meanwhile = AtomicBool::new(false);
        let finished = AtomicBool::new(false);
        let result = std::thread::scope(|s| {
            s.spawn(|| {
                while !finished.load(Ordering::Relaxed) {
                    if caller_left.load(Ordering::Relaxed) {
                        stop.store(true, Ordering::Relaxed);
                    } else if self.table.is_mounted(&watched) {
                        mounted_meanwhile.store(true, Ordering::Relaxed);
                        stop.store(true, Ordering::Relaxed);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            });
            let r = self.try_candidates(&plan, &stop);
            finished.store(true, Ordering::Relaxed);
            r
        });
        match result {
            Err(Error::Cancelled)
                if mounted_meanwhile.load(Ordering::Relaxed)
                    && !caller_left.load(Ordering::Relaxed) =>
            {
                Err(Error::AlreadyMounted(plan.host_name))
            }
            other => other,
        }
    }

    /// The one candidate loop.
    fn try_candidates(&self, plan: &MountPlan, stop: &AtomicBool) -> Result<Mounted> {
        let mut last = Error::NotUnlocked {
            untried: Vec::new(),
        };
        let hidden_kf = plan
            .hidden
            .as_ref()
            .map(Cached::keyfile_refs)
            .unwrap_or_default();
        for c in &plan.candidates {
            let kf = c.keyfile_refs();
            for search in &plan.searches {
                let s = &plan.settings;
                let req = MountRequest {
                    host: input::dup(&plan.host)?,
                    host_name: plan.host_name.clone(),
                    creds: c.credentials(&kf),
                    protect_hidden: plan.hidden.as_ref().map(|h| h.credentials(&hidden_kf)),
                    search: search.clone(),
                    read_only: s.read_only,
                    read_write_asked: s.read_write_asked,
                    filesystem: s.filesystem,
                    mount_point: s.mount_point.clone(),
                    slot: s.slot,
                    fs_options: s.fs_options,
                    allow_non_empty: s.allow_non_empty,
                    discard: s.discard,
                    host_times: plan.host_times,
                    owner: (plan.owner.uid, plan.owner.gid),
                    favorite: plan.favorite.as_ref().map(|(_, f)| f.name.clone()),
                    auto_dismount: s.auto_dismount,
                };
                match self.table.mount(req, stop) {
                    Ok(m) => {
                        self.opened(plan, c, &m);
                        return Ok(m);
                    }
                    Err(e @ Error::NotUnlocked { .. }) => last = e,
                    Err(e) => return Err(e),
                }
            }
        }
        Err(last)
    }

    /// After a mount: the password cached if asked, and a favorite's PRF
    /// and encryption remembered for its next mount.
    fn opened(&self, plan: &MountPlan, c: &Cached, m: &Mounted) {
        if plan.cache {
            self.cache.add(plan.owner.uid, c.clone());
        }
        if let Some((owner, f)) = &plan.favorite
            && let Err(e) =
                self.favorites
                    .record_opened(*owner, &f.name, m.info.prf.name(), m.info.chain.name)
        {
            tracing::warn!("cannot record how favorite {} opened: {e}", f.name);
        }
    }

    /// Mounts a system favorite for nobody in particular (at start, when
    /// its device appears), with the credentials its administrator gave.
    pub fn mount_system_favorite(&self, fav: &Favorite, cancel: &AtomicBool) -> Result<Mounted> {
        let host_path = crate::favorites::auto::locate(fav)
            .ok_or_else(|| Error::NotMounted(format!("{} is not present", fav.host)))?;
        let given = crate::favorites::auto::system_credentials(fav)?;
        let mut search = unlock::SearchOptions::new();
        search.backend = fav.backend.clone();
        search.format = fav.format.map(format_of);
        search.system = fav.system_encryption;
        if fav.system_encryption {
            search.detached = crate::favorites::auto::system_header(&host_path)?
                .map(|h| unlock::DetachedHeader(std::sync::Arc::new(h)));
        }
        let host = crate::favorites::auto::open_host(&host_path, !fav.readonly)?;
        let plan = MountPlan {
            host_times: HostTimes::of(&host),
            host,
            host_name: fav.host.clone(),
            candidates: vec![given],
            cache: false,
            hidden: None,
            searches: searches(Some(fav), &search),
            settings: Settings {
                read_only: fav.readonly,
                read_write_asked: false,
                filesystem: filesystem_of(fav),
                mount_point: fav.mount_point.as_ref().map(PathBuf::from),
                slot: None,
                fs_options: FsOptions::default(),
                allow_non_empty: false,
                discard: fav.discard,
                preserve_timestamps: true,
                auto_dismount: fav.auto_dismount(),
            },
            owner: Caller::DAEMON,
            favorite: None,
            _slot: None,
        };
        self.try_candidates(&plan, cancel)
    }
}

fn flag(b: Option<bool>) -> bool {
    b.unwrap_or(false)
}

/// A user may give files only to themself; root to anyone.
pub(super) fn check_owners(caller: &Caller, fs: &FsOptions) -> Result<()> {
    let foreign =
        fs.uid.is_some_and(|u| u != caller.uid) || fs.gid.is_some_and(|g| g != caller.gid);
    if foreign && !caller.is_root() {
        return Err(Error::PermissionDenied(
            "fs options: uid= and gid= may only name your own user and group".into(),
        ));
    }
    Ok(())
}

fn settings_of(o: &MountOptions) -> Result<Settings> {
    Ok(Settings {
        // A Windows system written to while Windows hibernates is
        // corrupted when it resumes: read-write only when asked for.
        read_only: o.readonly.unwrap_or(flag(o.system_encryption)),
        read_write_asked: o.readonly == Some(false),
        filesystem: match o.filesystem.unwrap_or_default() {
            MountFilesystem::Auto => Filesystem::Auto,
            MountFilesystem::None => Filesystem::None,
        },
        mount_point: o
            .mount_point
            .clone()
            .filter(|s| !s.is_empty())
            .map(PathBuf::from),
        slot: o.slot,
        fs_options: FsOptions::parse(o.fs_options.as_deref().unwrap_or(""))
            .map_err(Error::InvalidArgument)?,
        allow_non_empty: flag(o.allow_non_empty),
        discard: flag(o.discard),
        preserve_timestamps: o.preserve_timestamps.unwrap_or(true),
        auto_dismount: AutoDismount {
            on_logout: flag(o.dismount_on_logout),
            before_sleep: flag(o.dismount_before_sleep),
            idle_seconds: o.dismount_idle_seconds.unwrap_or(0),
            force: flag(o.force_dismount),
        },
    })
}

/// The filesystem choice a favorite makes.
pub fn filesystem_of(fav: &Favorite) -> Filesystem {
    match fav.filesystem.as_deref() {
        Some("none") => Filesystem::None,
        _ => Filesystem::Auto,
    }
}

/// The searches to run for `fav`, in order: first only the PRF and
/// encryption it last opened with (one trial instead of dozens), then
/// `search` as asked. One search when the favorite has no record or the
/// caller already narrowed it.
pub fn searches(
    fav: Option<&Favorite>,
    search: &unlock::SearchOptions,
) -> Vec<unlock::SearchOptions> {
    let mut out = Vec::new();
    if let Some(f) = fav {
        // What the favorite knows (given, or learned at its last mount) is
        // tried first; what the call asks for is kept.
        let mut quick = search.clone();
        if quick.prf.is_none() {
            quick.prf = f.hash.as_deref().and_then(Prf::by_name);
        }
        if quick.chain.is_none() {
            quick.chain = f.encryption.as_deref().and_then(Chain::by_name);
        }
        if quick.prf != search.prf || quick.chain != search.chain {
            out.push(quick);
        }
    }
    out.push(search.clone());
    out
}

/// A PRF by any of its names, or an error naming the valid ones.
pub fn prf_named(name: &str) -> Result<Prf> {
    Prf::by_name(name).ok_or_else(|| Error::InvalidArgument(format!("unknown hash {name}")))
}

/// An encryption by name.
pub fn chain_named(name: &str) -> Result<&'static Chain> {
    Chain::by_name(name).ok_or_else(|| Error::UnknownChain(name.to_owned()))
}

pub fn format_of(f: VolumeFormat) -> Format {
    match f {
        VolumeFormat::TrueCrypt => Format::TrueCrypt,
        VolumeFormat::VeraCrypt => Format::VeraCrypt,
    }
}

/// The descriptor a client sent is the favorite's own volume (its file, or
/// the device its stable name points to now).
fn same_volume(host: &File, fav: &Favorite) -> Result<()> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let wrong = || {
        Error::InvalidArgument(format!(
            "the volume given is not favorite {}'s {}",
            fav.name, fav.host
        ))
    };
    let given = host.metadata().map_err(|_| wrong())?;
    let path = crate::favorites::auto::locate(fav)
        .ok_or_else(|| Error::NotFound(format!("{} is not present", fav.host)))?;
    let want = std::fs::metadata(&path).map_err(|_| wrong())?;
    let same = if want.file_type().is_block_device() {
        given.file_type().is_block_device() && given.rdev() == want.rdev()
    } else {
        given.dev() == want.dev() && given.ino() == want.ino()
    };
    if same { Ok(()) } else { Err(wrong()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_favorite_tries_its_own_prf_and_cipher_first() {
        let mut f = Favorite {
            name: "a".into(),
            host: "/v".into(),
            ..Default::default()
        };
        assert_eq!(searches(Some(&f), &unlock::SearchOptions::new()).len(), 1);
        f.hash = Some("SHA-512".into());
        f.encryption = Some("Serpent-AES".into());
        let s = searches(Some(&f), &unlock::SearchOptions::new());
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].prf, Prf::by_name("SHA-512"));
        assert_eq!(s[0].chain.map(|c| c.name), Some("Serpent-AES"));
        assert!(s[1].prf.is_none() && s[1].chain.is_none());
        // A caller who narrowed the search is obeyed as asked: the
        // favorite fills in only what the caller left open.
        let mut narrowed = unlock::SearchOptions::new();
        narrowed.prf = Prf::by_name("SHA-256");
        let s = searches(Some(&f), &narrowed);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].prf, Prf::by_name("SHA-256"));
        assert_eq!(s[0].chain.map(|c| c.name), Some("Serpent-AES"));
        assert_eq!(s[1].prf, Prf::by_name("SHA-256"));
        assert!(s[1].chain.is_none());
        narrowed.chain = Chain::by_name("AES");
        assert_eq!(searches(Some(&f), &narrowed).len(), 1);
        // A favorite that knows only its hash narrows by that alone.
        f.encryption = None;
        let s = searches(Some(&f), &unlock::SearchOptions::new());
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].prf, Prf::by_name("SHA-512"));
        assert!(s[0].chain.is_none());
    }
}
