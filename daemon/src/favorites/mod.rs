//! Favorite volumes, as TrueCrypt 7 had them: a container or device with
//! its mount settings, kept per user (`<state>/favorites/<uid>.toml`,
//! written by the daemon for that user) and for the system
//! (`/etc/tcd/favorites.toml`, administrators'). Each favorite also keeps
//! the PRF and encryption it last opened with, so the next mount tries
//! those first instead of the whole search.

pub mod auto;

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// At most this many favorites per owner (a store, not a database).
pub const MAX_PER_OWNER: usize = 256;

/// When a mounted volume is dismounted without being asked, as
/// TrueCrypt's preferences offer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AutoDismount {
    /// When the owner's last session ends (logind's UserRemoved).
    pub on_logout: bool,
    /// Before the machine sleeps (logind's PrepareForSleep).
    pub before_sleep: bool,
    /// After this long with no read or write (0: never).
    pub idle_seconds: u32,
    /// Even when files on it are open (a lazy unmount).
    pub force: bool,
}

/// One favorite.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Favorite {
    /// Its label, unique among one owner's favorites.
    pub name: String,
    /// A container file (absolute path) or a device by a stable name
    /// (`/dev/disk/by-id/…`, `/dev/disk/by-partuuid/…`).
    pub host: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_point: Option<String>,
    #[serde(default)]
    pub readonly: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// "auto" (mount what blkid finds) or "none" (block device only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filesystem: Option<String>,
    #[serde(default)]
    pub discard: bool,
    /// Keyfile paths, read by whoever mounts (the client for a user's
    /// mount; the daemon for a system favorite it mounts itself).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keyfiles: Vec<String>,
    #[serde(default)]
    pub pim: u32,
    /// Ask for the hidden volume's password and protect it.
    #[serde(default)]
    pub protect_hidden: bool,
    /// System favorites: mounted by the daemon at start and when the
    /// device appears. User favorites: by `tcctl favorites mount --auto`
    /// when the user's session starts.
    #[serde(default)]
    pub auto_mount: bool,
    #[serde(default)]
    pub dismount_on_logout: bool,
    #[serde(default)]
    pub dismount_before_sleep: bool,
    /// Seconds with no I/O before an automatic dismount (0: never).
    #[serde(default)]
    pub dismount_idle_seconds: u32,
    /// Automatic dismounts go ahead even with files open.
    #[serde(default)]
    pub force_dismount: bool,
    /// The PRF and encryption it last opened with (kept by the daemon).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encryption: Option<String>,
    /// System favorites only: a root-only file holding the password, for
    /// mounts without anyone to ask (like crypttab's key file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_file: Option<String>,
}

impl Favorite {
    pub fn auto_dismount(&self) -> AutoDismount {
        AutoDismount {
            on_logout: self.dismount_on_logout,
            before_sleep: self.dismount_before_sleep,
            idle_seconds: self.dismount_idle_seconds,
            force: self.force_dismount,
        }
    }

    /// Checks what a caller may not get wrong; `system` for the system
    /// list (only there may the daemon read files for it).
    pub fn validate(&self, system: bool) -> Result<()> {
        let bad = |why: String| {
            Err(Error::InvalidArgument(format!(
                "favorite {:?}: {why}",
                self.name
            )))
        };
        if self.name.is_empty() || self.name.len() > 128 || self.name.chars().any(char::is_control)
        {
            return bad("a name of 1 to 128 printable characters is needed".into());
        }
        if !self.host.starts_with('/') || self.host.len() > 4096 {
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
            .chain(&self.password_file)
        {
            if !p.starts_with('/') || p.len() > 4096 {
                return bad(format!("{p:?} is not an absolute path"));
            }
        }
        if self.keyfiles.len() > 256 {
            return bad("more than 256 keyfiles".into());
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
        for (what, v) in [
            ("hash", &self.hash),
            ("encryption", &self.encryption),
            ("backend", &self.backend),
        ] {
            if v.as_ref().is_some_and(|s| s.len() > 128) {
                return bad(format!("{what} too long"));
            }
        }
        Ok(())
    }
}

/// The file's shape: `[[favorite]]` tables.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    favorite: Vec<Favorite>,
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

    /// The owner's favorites (none when the file is missing).
    pub fn list(&self, owner: Owner) -> Result<Vec<Favorite>> {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.read(owner)
    }

    pub fn get(&self, owner: Owner, name: &str) -> Result<Option<Favorite>> {
        Ok(self.list(owner)?.into_iter().find(|f| f.name == name))
    }

    fn read(&self, owner: Owner) -> Result<Vec<Favorite>> {
        let path = self.path(owner);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(Error::Io {
                    what: format!("cannot read {}", path.display()),
                    source: e,
                });
            }
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
        let file: File = toml::from_str(&text).map_err(|e| {
            Error::InvalidArgument(format!("{}: {}", path.display(), e.to_string().trim_end()))
        })?;
        let system = owner == Owner::System;
        for f in &file.favorite {
            f.validate(system)?;
        }
        Ok(file.favorite)
    }

    fn write(&self, owner: Owner, list: Vec<Favorite>) -> Result<()> {
        let path = self.path(owner);
        let io = |what: String| move |e| Error::Io { what, source: e };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io(format!("cannot make {}", dir.display())))?;
        }
        let text = toml::to_string(&File { favorite: list })
            .map_err(|e| Error::InvalidArgument(format!("cannot write favorites: {e}")))?;
        let tmp = path.with_extension("toml.new");
        {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode_private()
                .open(&tmp)
                .map_err(io(format!("cannot write {}", tmp.display())))?;
            f.write_all(text.as_bytes())
                .and_then(|()| f.sync_all())
                .map_err(io(format!("cannot write {}", tmp.display())))?;
        }
        std::fs::rename(&tmp, &path).map_err(io(format!("cannot replace {}", path.display())))
    }

    /// Adds `fav`, replacing one of the same name.
    pub fn add(&self, owner: Owner, fav: Favorite) -> Result<()> {
        fav.validate(owner == Owner::System)?;
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut list = self.read(owner)?;
        if let Some(old) = list.iter_mut().find(|f| f.name == fav.name) {
            *old = fav;
        } else if list.len() >= MAX_PER_OWNER {
            return Err(Error::InvalidArgument(format!(
                "at most {MAX_PER_OWNER} favorites each"
            )));
        } else {
            list.push(fav);
        }
        self.write(owner, list)
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
        Ok(true)
    }

    /// Remembers the PRF and encryption `name` last opened with.
    pub fn record_opened(
        &self,
        owner: Owner,
        name: &str,
        hash: &str,
        encryption: &str,
    ) -> Result<()> {
        let _g = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let mut list = self.read(owner)?;
        let Some(f) = list.iter_mut().find(|f| f.name == name) else {
            return Ok(());
        };
        if f.hash.as_deref() == Some(hash) && f.encryption.as_deref() == Some(encryption) {
            return Ok(());
        }
        f.hash = Some(hash.to_owned());
        f.encryption = Some(encryption.to_owned());
        self.write(owner, list)
    }
}

/// `OpenOptions` for a file only its owner reads (favorites name files and
/// mount points; that is the user's business).
trait PrivateMode {
    fn mode_private(&mut self) -> &mut Self;
}

impl PrivateMode for std::fs::OpenOptions {
    fn mode_private(&mut self) -> &mut Self {
        std::os::unix::fs::OpenOptionsExt::mode(self, 0o600)
    }
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
}
