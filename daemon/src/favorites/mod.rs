//! Favorite volumes, as TrueCrypt 7 had them: a container or device with
//! its mount settings, kept per user (`<state>/favorites/<uid>.toml`,
//! written by the daemon for that user) and for the system
//! (`/etc/tcd/favorites.toml`, administrators'). The daemon also learns
//! the PRF and encryption each last opened with, so the next mount tries
//! those first instead of the whole search. That it keeps in its own
//! state folder (`<state>/favorites/opened/<uid or "system">.toml`), so a
//! user's mount of a system favorite never rewrites the administrators'
//! file.
//!
//! Every favorite of an owner ends up in one `ListFavorites` reply: the
//! count, each favorite's strings and lists, and each file's bytes are
//! bounded well below the bus's message limits, on adding and on reading.

pub(crate) mod auto;

use crate::error::{Error, Result};
use crate::mounts::AutoDismount;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tcd_proto::contract::options::VolumeFormat;

/// At most this many favorites per owner (a store, not a database).
pub const MAX_PER_OWNER: usize = 64;
/// Longest name of a favorite.
pub const MAX_NAME: usize = 128;
/// Longest path a favorite keeps (its host, mount point, each keyfile).
pub const MAX_PATH: usize = 4096;
/// Keyfiles of one favorite, and their paths' bytes together.
pub const MAX_KEYFILES: usize = 64;
pub const MAX_KEYFILE_PATH_BYTES: usize = 16 << 10;
/// Bytes of one owner's favorites file. 64 favorites with a few paths
/// each fit; a `ListFavorites` reply stays far below the bus's message
/// limit (32 MiB by default), past which the bus drops the daemon.
pub const MAX_FILE_BYTES: u64 = 256 << 10;

pub use tcd_proto::contract::favorite::Favorite;

/// What the daemon makes of a favorite's settings, and the rules a caller's
/// favorite must keep.
pub trait Rules {
    fn auto_dismount(&self) -> AutoDismount;
    /// Checks what a caller may not get wrong; `system` for the system
    /// list (only there may the daemon read files for it).
    fn validate(&self, system: bool) -> Result<()>;
}

impl Rules for Favorite {
    fn auto_dismount(&self) -> AutoDismount {
        AutoDismount {
            on_logout: self.dismount_on_logout,
            before_sleep: self.dismount_before_sleep,
            idle_seconds: self.dismount_idle_seconds,
            force: self.force_dismount,
        }
    }

    fn validate(&self, system: bool) -> Result<()> {
        let name = truncated(&self.name);
        let bad = |why: String| Err(Error::InvalidArgument(format!("favorite {name:?}: {why}")));
        let too_large = |why: String| Err(Error::TooLarge(format!("favorite {name:?}: {why}")));
        if self.name.len() > MAX_NAME {
            return too_large(format!("a name of more than {MAX_NAME} bytes"));
        }
        for p in [&self.host]
            .into_iter()
            .chain(&self.mount_point)
            .chain(&self.keyfiles)
            .chain(&self.protect_hidden_keyfiles)
            .chain(&self.password_file)
        {
            if p.len() > MAX_PATH {
                return too_large(format!("a path of more than {MAX_PATH} bytes"));
            }
        }
        for list in [&self.keyfiles, &self.protect_hidden_keyfiles] {
            if list.len() > MAX_KEYFILES {
                return too_large(format!("more than {MAX_KEYFILES} keyfiles"));
            }
            if list.iter().map(String::len).sum::<usize>() > MAX_KEYFILE_PATH_BYTES {
                return too_large(format!(
                    "keyfile paths of more than {} KiB together",
                    MAX_KEYFILE_PATH_BYTES >> 10
                ));
            }
        }
        for (what, v) in [
            ("hash", &self.hash),
            ("encryption", &self.encryption),
            ("backend", &self.backend),
            ("filesystem", &self.filesystem),
        ] {
            if v.as_ref().is_some_and(|s| s.len() > 128) {
                return too_large(format!("{what} of more than 128 bytes"));
            }
        }
        if self.slot.is_some_and(|s| !(1..=64).contains(&s)) {
            return bad("slot: 1 to 64".into());
        }
        if self.name.is_empty() || self.name.chars().any(char::is_control) {
            return bad(format!(
                "a name of 1 to {MAX_NAME} printable characters is needed"
            ));
        }
        if !self.host.starts_with('/') {
            return bad(format!(
                "the volume {:?} is not an absolute path",
                self.host
            ));
        }
        if self.host.starts_with("/dev/") && !tcd_proto::devices::is_stable(&self.host) {
            return bad(format!(
                "{} may name another disk tomorrow: name the device by a /dev/disk/by-id or by-partuuid link",
                self.host
            ));
        }
        for p in self
            .mount_point
            .iter()
            .chain(&self.keyfiles)
            .chain(&self.protect_hidden_keyfiles)
            .chain(&self.password_file)
        {
            if !p.starts_with('/') {
                return bad(format!("{p:?} is not an absolute path"));
            }
        }
        protection_rules(self, system)?;
        if self.format == Some(VolumeFormat::TrueCrypt) && self.pim > 0 {
            return bad("TrueCrypt volumes have no PIM".into());
        }
        if self.password_file.is_some() && !system {
            return bad("only a system favorite may name a password file".into());
        }
        if let Some(f) = &self.filesystem
            && !matches!(f.as_str(), "auto" | "none")
        {
            return bad(format!(
                "filesystem must be \"auto\" or \"none\", not {f:?}"
            ));
        }
        Ok(())
    }
}

/// A favorite's hidden-volume settings agree with the rest.
fn protection_rules(f: &Favorite, system: bool) -> Result<()> {
    let bad = |why: &str| {
        Err(Error::InvalidArgument(format!(
            "favorite {:?}: {why}",
            truncated(&f.name)
        )))
    };
    let hidden_settings = f.protect_hidden_pim.is_some() || !f.protect_hidden_keyfiles.is_empty();
    if hidden_settings && !f.protect_hidden {
        return bad("a hidden volume's PIM or keyfiles need protect_hidden");
    }
    if f.system_encryption && f.protect_hidden {
        return bad("system encryption has no hidden volume to protect");
    }
    if f.format == Some(VolumeFormat::TrueCrypt) && f.protect_hidden_pim.is_some_and(|p| p > 0) {
        return bad("TrueCrypt volumes have no PIM");
    }
    // The daemon's own mount has no one to give the hidden volume's
    // password; mounting unprotected would let writes destroy it.
    if system && f.auto_mount && f.protect_hidden {
        return bad(
            "the daemon mounts an auto-mount system favorite with no one to give its hidden \
             volume's password: protect_hidden cannot be kept with auto_mount",
        );
    }
    Ok(())
}

/// At most the first 64 characters of `s`, for a message.
fn truncated(s: &str) -> String {
    match s.char_indices().nth(64) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// The file's shape: `[[favorite]]` tables.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    favorite: Vec<Favorite>,
}

/// What the daemon learned of one favorite when it opened it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Learned {
    hash: String,
    encryption: String,
}

/// The learned file's shape: an `[opened]` table by favorite name.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LearnedFile {
    #[serde(default)]
    opened: BTreeMap<String, Learned>,
}

/// Whose favorites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Owner {
    System,
    User(u32),
}

/// Every favorite, on disk; read at each use (administrators edit the
/// system file by hand), written whole through a temporary file.
pub struct Favorites {
    user_dir: PathBuf,
    system_file: PathBuf,
    /// Serialises read-modify-write of the files.
    lock: Mutex<()>,
}

impl Favorites {
    /// Users' favorites under `state_dir/favorites`, the system's in
    /// `system_file`.
    pub fn new(state_dir: &Path, system_file: &Path) -> Favorites {
        Favorites {
            user_dir: state_dir.join("favorites"),
            system_file: system_file.to_path_buf(),
            lock: Mutex::new(()),
        }
    }

    fn path(&self, owner: Owner) -> PathBuf {
        match owner {
            Owner::System => self.system_file.clone(),
            Owner::User(uid) => self.user_dir.join(format!("{uid}.toml")),
        }
    }

    /// Where the daemon keeps what it learned of the owner's favorites:
    /// its own state folder, for the system's as for users'.
    fn learned_path(&self, owner: Owner) -> PathBuf {
        let dir = self.user_dir.join("opened");
        match owner {
            Owner::System => dir.join("system.toml"),
            Owner::User(uid) => dir.join(format!("{uid}.toml")),
        }
    }

    /// The owner's favorites (none when the file is missing), each with
    /// the PRF and encryption it last opened with when the daemon knows.
    pub fn list(&self, owner: Owner) -> Result<Vec<Favorite>> {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut list = self.read(owner)?;
        let learned = self.read_learned(owner);
        for f in &mut list {
            if let Some(l) = learned.opened.get(&f.name) {
                f.hash = Some(l.hash.clone());
                f.encryption = Some(l.encryption.clone());
            }
        }
        Ok(list)
    }

    pub fn get(&self, owner: Owner, name: &str) -> Result<Option<Favorite>> {
        Ok(self.list(owner)?.into_iter().find(|f| f.name == name))
    }

    fn read(&self, owner: Owner) -> Result<Vec<Favorite>> {
        let path = self.path(owner);
        let Some(text) = read_bounded(&path)? else {
            return Ok(Vec::new());
        };
        if owner == Owner::System {
            // The daemon mounts system favorites with the files they name:
            // only root may have written the list.
            let meta = std::fs::metadata(&path).map_err(|e| Error::Io {
                what: format!("cannot inspect {}", path.display()),
                source: e,
            })?;
            if meta.uid() != 0 || meta.permissions().mode() & 0o022 != 0 {
                return Err(Error::InvalidArgument(format!(
                    "{} must be root's and writable by no one else",
                    path.display()
                )));
            }
        }
        let mut file: File = toml::from_str(&text).map_err(|e| {
            Error::InvalidArgument(format!("{}: {}", path.display(), e.to_string().trim_end()))
        })?;
        if file.favorite.len() > MAX_PER_OWNER {
            return Err(Error::TooLarge(format!(
                "{} holds {} favorites, more than the {MAX_PER_OWNER} allowed",
                path.display(),
                file.favorite.len()
            )));
        }
        read_only_by_default(&text, &mut file.favorite);
        let system = owner == Owner::System;
        for f in &file.favorite {
            f.validate(system)?;
        }
        Ok(file.favorite)
    }

    /// What the daemon learned of the owner's favorites; nothing when the
    /// record is missing or unusable (it only orders the search).
    fn read_learned(&self, owner: Owner) -> LearnedFile {
        let path = self.learned_path(owner);
        let parsed = read_bounded(&path).and_then(|text| match text {
            None => Ok(LearnedFile::default()),
            Some(t) => toml::from_str(&t)
                .map_err(|e| Error::InvalidArgument(e.to_string().trim_end().to_owned())),
        });
        parsed.unwrap_or_else(|e| {
            tracing::warn!("ignoring {}: {e}", path.display());
            LearnedFile::default()
        })
    }

    fn write_learned(&self, owner: Owner, learned: &LearnedFile) -> Result<()> {
        let text = toml::to_string(learned)
            .map_err(|e| Error::InvalidArgument(format!("cannot write favorites: {e}")))?;
        write_private(&self.learned_path(owner), &text)
    }

    /// Forgets what was learned of `name` (replaced or removed: it may be
    /// another volume next time).
    fn forget(&self, owner: Owner, name: &str) -> Result<()> {
        let mut learned = self.read_learned(owner);
        if learned.opened.remove(name).is_none() {
            return Ok(());
        }
        self.write_learned(owner, &learned)
    }

    fn write(&self, owner: Owner, list: Vec<Favorite>) -> Result<()> {
        let text = toml::to_string(&File { favorite: list })
            .map_err(|e| Error::InvalidArgument(format!("cannot write favorites: {e}")))?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(Error::TooLarge(format!(
                "favorites of more than {} KiB together: remove some or shorten their paths",
                MAX_FILE_BYTES >> 10
            )));
        }
        write_private(&self.path(owner), &text)
    }

    /// Adds `fav`, replacing one of the same name.
    pub fn add(&self, owner: Owner, fav: Favorite) -> Result<()> {
        fav.validate(owner == Owner::System)?;
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut list = self.read(owner)?;
        let name = fav.name.clone();
        if let Some(old) = list.iter_mut().find(|f| f.name == fav.name) {
            *old = fav;
        } else if list.len() >= MAX_PER_OWNER {
            return Err(Error::TooLarge(format!(
                "at most {MAX_PER_OWNER} favorites each"
            )));
        } else {
            list.push(fav);
        }
        self.write(owner, list)?;
        self.forget(owner, &name)
    }

    /// Removes the favorite `name`; whether there was one.
    pub fn remove(&self, owner: Owner, name: &str) -> Result<bool> {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut list = self.read(owner)?;
        let before = list.len();
        list.retain(|f| f.name != name);
        if list.len() == before {
            return Ok(false);
        }
        self.write(owner, list)?;
        self.forget(owner, name)?;
        Ok(true)
    }

    /// Remembers the PRF and encryption `name` last opened with, in the
    /// daemon's state folder (never in the favorites file itself).
    pub fn record_opened(
        &self,
        owner: Owner,
        name: &str,
        hash: &str,
        encryption: &str,
    ) -> Result<()> {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let list = self.read(owner)?;
        if !list.iter().any(|f| f.name == name) {
            return Ok(());
        }
        let mut learned = self.read_learned(owner);
        let new = Learned {
            hash: hash.to_owned(),
            encryption: encryption.to_owned(),
        };
        if learned.opened.get(name) == Some(&new) {
            return Ok(());
        }
        learned.opened.insert(name.to_owned(), new);
        // Only the favorites there are now: the record stays as bounded
        // as the list.
        learned
            .opened
            .retain(|n, _| list.iter().any(|f| &f.name == n));
        self.write_learned(owner, &learned)
    }
}

/// The text of `path` (`None` when it is missing), refused by name when
/// it is larger than [`MAX_FILE_BYTES`]: such a file was not written by
/// this daemon, and its favorites would not fit in a reply.
/// A system-encryption favorite whose file says nothing of `readonly` is
/// read-only, as `AddFavorite` makes it: written to while Windows
/// hibernates, a system drive is corrupted when Windows resumes.
fn read_only_by_default(text: &str, list: &mut [Favorite]) {
    let Ok(raw) = toml::from_str::<toml::Table>(text) else {
        return;
    };
    let Some(toml::Value::Array(tables)) = raw.get("favorite") else {
        return;
    };
    for (f, t) in list.iter_mut().zip(tables) {
        if f.system_encryption && t.get("readonly").is_none() {
            f.readonly = true;
        }
    }
}

fn read_bounded(path: &Path) -> Result<Option<String>> {
    use std::io::Read;
    let io = |e| Error::Io {
        what: format!("cannot read {}", path.display()),
        source: e,
    };
    let f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e)),
    };
    let mut bytes = Vec::new();
    f.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Error::TooLarge(format!(
            "{} is larger than the {} KiB a favorites file may have: an administrator must shorten or remove it",
            path.display(),
            MAX_FILE_BYTES >> 10
        )));
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| Error::InvalidArgument(format!("{} is not UTF-8 text", path.display())))
}

/// Writes `text` to `path` through a temporary file only root reads
/// (favorites name files and mount points: that is the user's business);
/// folders it makes on the way (the state folder of a daemon started
/// by hand) are root's only too, mode 0700 as the unit's StateDirectoryMode.
fn write_private(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let io = |what: String| move |e| Error::Io { what, source: e };
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io(format!("cannot make {}", dir.display())))?;
    }
    let tmp = path.with_extension("toml.new");
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io(format!("cannot write {}", tmp.display())))?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(io(format!("cannot write {}", tmp.display())))?;
    }
    std::fs::rename(&tmp, path).map_err(io(format!("cannot replace {}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fav(name: &str, host: &str) -> Favorite {
        Favorite {
            name: name.into(),
            host: host.into(),
            ..Default::default()
        }
    }

    #[test]
    fn per_user_lists_are_apart_and_survive_a_new_store() {
        let dir = tempfile::tempdir().unwrap();
        let sys = dir.path().join("system.toml");
        let s = Favorites::new(dir.path(), &sys);
        s.add(Owner::User(1000), fav("work", "/home/a/work.hc"))
            .unwrap();
        s.add(Owner::User(1001), fav("work", "/home/b/other.tc"))
            .unwrap();
        s.record_opened(Owner::User(1000), "work", "SHA-512", "AES")
            .unwrap();
        let again = Favorites::new(dir.path(), &sys);
        let a = again.list(Owner::User(1000)).unwrap();
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].host, "/home/a/work.hc");
        assert_eq!(a[0].hash.as_deref(), Some("SHA-512"));
        assert_eq!(
            again.list(Owner::User(1001)).unwrap()[0].host,
            "/home/b/other.tc"
        );
        assert!(again.remove(Owner::User(1000), "work").unwrap());
        assert!(!again.remove(Owner::User(1000), "work").unwrap());
        assert_eq!(again.list(Owner::User(1001)).unwrap().len(), 1);
        let mode = std::fs::metadata(dir.path().join("favorites/1001.toml"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o077,
            0,
            "a user's favorites are readable by root only"
        );
    }

    #[test]
    fn unstable_device_names_and_user_password_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let s = Favorites::new(dir.path(), &dir.path().join("system.toml"));
        let e = s.add(Owner::User(5), fav("usb", "/dev/sdb1")).unwrap_err();
        assert!(e.to_string().contains("by-id"), "{e}");
        s.add(Owner::User(5), fav("usb", "/dev/disk/by-partuuid/1234-01"))
            .unwrap();
        let mut f = fav("k", "/srv/v.hc");
        f.password_file = Some("/etc/shadow".into());
        assert!(s.add(Owner::User(5), f.clone()).is_err());
        assert!(s.add(Owner::System, f).is_ok());
    }

    #[test]
    fn a_hidden_volumes_settings_need_its_protection_and_someone_to_ask() {
        let dir = tempfile::tempdir().unwrap();
        let s = Favorites::new(dir.path(), &dir.path().join("system.toml"));
        let refused = |owner, f: &Favorite| s.add(owner, f.clone()).unwrap_err().to_string();
        let mut f = fav("h", "/srv/v.hc");
        f.protect_hidden_pim = Some(3);
        let e = refused(Owner::User(5), &f);
        assert!(e.contains("need protect_hidden"), "{e}");
        f.protect_hidden = true;
        f.protect_hidden_keyfiles = vec!["hidden.key".into()];
        let e = refused(Owner::User(5), &f);
        assert!(e.contains("\"hidden.key\" is not an absolute path"), "{e}");
        f.protect_hidden_keyfiles = vec!["/home/u/hidden.key".into()];
        s.add(Owner::User(5), f.clone()).unwrap();
        // Nobody is there to give the hidden volume's password when the
        // daemon mounts a system favorite itself.
        f.auto_mount = true;
        s.add(Owner::User(5), f.clone()).unwrap();
        let e = refused(Owner::System, &f);
        assert!(e.contains("cannot be kept with auto_mount"), "{e}");
        f.auto_mount = false;
        f.format = Some(VolumeFormat::TrueCrypt);
        let e = refused(Owner::System, &f);
        assert!(e.contains("TrueCrypt volumes have no PIM"), "{e}");
        assert_eq!(
            s.list(Owner::User(5)).unwrap()[0].protect_hidden_pim,
            Some(3)
        );
    }

    #[test]
    fn a_slot_past_veracrypts_64_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let s = Favorites::new(dir.path(), &dir.path().join("system.toml"));
        for (slot, ok) in [(0, false), (1, true), (64, true), (65, false)] {
            let mut f = fav(&format!("s{slot}"), "/srv/v.hc");
            f.slot = Some(slot);
            let added = s.add(Owner::User(5), f);
            assert_eq!(added.is_ok(), ok, "slot {slot}: {added:?}");
            if let Err(e) = added {
                assert!(e.to_string().ends_with("slot: 1 to 64"), "{e}");
            }
        }
    }

    #[test]
    fn what_the_daemon_learns_never_rewrites_the_system_file() {
        let dir = tempfile::tempdir().unwrap();
        let sys = dir.path().join("system.toml");
        let s = Favorites::new(&dir.path().join("state"), &sys);
        s.add(Owner::System, fav("srv", "/srv/v.hc")).unwrap();
        s.add(Owner::User(7), fav("mine", "/home/u/v.hc")).unwrap();
        let before = std::fs::read(&sys).unwrap();
        let mine = std::fs::read(dir.path().join("state/favorites/7.toml")).unwrap();
        s.record_opened(Owner::System, "srv", "SHA-512", "AES")
            .unwrap();
        s.record_opened(Owner::User(7), "mine", "Whirlpool", "Serpent")
            .unwrap();
        assert_eq!(std::fs::read(&sys).unwrap(), before);
        assert_eq!(
            std::fs::read(dir.path().join("state/favorites/7.toml")).unwrap(),
            mine
        );
        let srv = s.get(Owner::System, "srv").unwrap().unwrap();
        assert_eq!(srv.hash.as_deref(), Some("SHA-512"));
        assert_eq!(srv.encryption.as_deref(), Some("AES"));
        let m = s.get(Owner::User(7), "mine").unwrap().unwrap();
        assert_eq!(m.hash.as_deref(), Some("Whirlpool"));
        // A replaced favorite may be another volume: what was learned goes.
        s.add(Owner::System, fav("srv", "/srv/other.hc")).unwrap();
        assert_eq!(s.get(Owner::System, "srv").unwrap().unwrap().hash, None);
        // Nothing is learned for a favorite that is not there.
        s.record_opened(Owner::User(7), "gone", "SHA-512", "AES")
            .unwrap();
        assert!(s.get(Owner::User(7), "gone").unwrap().is_none());
    }

    #[test]
    fn favorites_are_bounded_on_adding_and_on_reading() {
        let dir = tempfile::tempdir().unwrap();
        let s = Favorites::new(dir.path(), &dir.path().join("system.toml"));
        let mut long = fav("long", "/v.hc");
        long.keyfiles = vec![format!("/{}", "k".repeat(4000)); MAX_KEYFILES];
        let e = s.add(Owner::User(9), long).unwrap_err();
        assert!(matches!(e, Error::TooLarge(_)), "{e}");
        let mut huge = fav("huge", &format!("/{}", "h".repeat(1 << 20)));
        let e = s.add(Owner::User(9), huge.clone()).unwrap_err();
        assert!(matches!(e, Error::TooLarge(_)), "{e}");
        huge.host = "/v.hc".into();
        huge.name = "n".repeat(1000);
        assert!(matches!(
            s.add(Owner::User(9), huge).unwrap_err(),
            Error::TooLarge(_)
        ));
        // Many favorites of long paths: refused before the file grows past
        // its bound, however they are spread.
        let mut refused = None;
        for i in 0..=MAX_PER_OWNER {
            let mut f = fav(&format!("f{i}"), &format!("/{}", "v".repeat(4000)));
            f.mount_point = Some(format!("/{}", "m".repeat(4000)));
            f.keyfiles = vec![format!("/{}", "k".repeat(4000)); 4];
            if let Err(e) = s.add(Owner::User(9), f) {
                refused = Some(e);
                break;
            }
        }
        assert!(matches!(refused, Some(Error::TooLarge(_))), "{refused:?}");
        let file = dir.path().join("favorites/9.toml");
        assert!(std::fs::metadata(&file).unwrap().len() <= MAX_FILE_BYTES);
        assert!(!s.list(Owner::User(9)).unwrap().is_empty());
        // A file past the bound (an older daemon's, or a hand's) is
        // refused by name, not read into a reply.
        let mut text = String::new();
        for i in 0..200 {
            text += &format!(
                "[[favorite]]\nname = \"x{i}\"\nhost = \"/v\"\nkeyfiles = [{}]\n",
                vec![format!("\"/{}\"", "k".repeat(1000)); 10].join(",")
            );
        }
        std::fs::write(&file, &text).unwrap();
        let e = s.list(Owner::User(9)).unwrap_err();
        assert!(matches!(e, Error::TooLarge(_)), "{e}");
        assert!(e.to_string().len() < 1000);
    }

    #[test]
    fn a_hand_edited_file_with_an_unknown_key_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let sys = dir.path().join("system.toml");
        std::fs::write(
            &sys,
            "[[favorite]]\nname = \"a\"\nhost = \"/v.hc\"\nautomount = true\n",
        )
        .unwrap();
        std::fs::set_permissions(&sys, std::fs::Permissions::from_mode(0o644)).unwrap();
        let s = Favorites::new(dir.path(), &sys);
        let e = s.list(Owner::System).unwrap_err().to_string();
        assert!(e.contains("automount"), "{e}");
    }

    #[test]
    fn a_hand_written_system_encryption_favorite_is_read_only_unless_it_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let sys = dir.path().join("system.toml");
        std::fs::write(
            &sys,
            "[[favorite]]\nname = \"a\"\nhost = \"/a.img\"\nsystem_encryption = true\n\n\
             [[favorite]]\nname = \"b\"\nhost = \"/b.img\"\nsystem_encryption = true\n\
             readonly = false\nformat = \"truecrypt\"\n\n\
             [[favorite]]\nname = \"c\"\nhost = \"/c.hc\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&sys, std::fs::Permissions::from_mode(0o644)).unwrap();
        let s = Favorites::new(dir.path(), &sys);
        let list = s.list(Owner::System).unwrap();
        let got: Vec<(bool, bool, Option<VolumeFormat>)> = list
            .iter()
            .map(|f| (f.system_encryption, f.readonly, f.format))
            .collect();
        assert_eq!(
            got,
            [
                (true, true, None),
                (true, false, Some(VolumeFormat::TrueCrypt)),
                (false, false, None)
            ]
        );
        // A wrong format is refused by name.
        std::fs::write(
            &sys,
            "[[favorite]]\nname = \"a\"\nhost = \"/a.img\"\nformat = \"luks\"\n",
        )
        .unwrap();
        let e = s.list(Owner::System).unwrap_err().to_string();
        assert!(e.contains("luks"), "{e}");
    }
}
