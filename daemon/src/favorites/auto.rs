//! Mounting favorites: the last PRF and encryption tried first, and the
//! daemon's own mounts of system favorites (at start, when their device
//! appears) with the credentials their administrator gave them.

use super::Favorite;
use crate::error::{Error, Result};
use crate::mounts::{Filesystem, MountRequest, MountTable, Mounted};
use crate::volume::kdf::Prf;
use crate::volume::unlock::{Credentials, SearchOptions};
use std::fs::File;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use zeroize::Zeroizing;

/// The searches to run for `fav`, in order: first only the PRF and
/// encryption it last opened with (one trial instead of dozens), then
/// `search` as asked. One search when the favorite has no record or the
/// caller already narrowed it.
pub fn searches(fav: Option<&Favorite>, search: &SearchOptions) -> Vec<SearchOptions> {
    let mut out = Vec::new();
    if let Some(f) = fav
        && search.prf.is_none()
        && search.chain.is_none()
        && let (Some(h), Some(c)) = (&f.hash, &f.encryption)
        && let (Some(prf), Some(chain)) = (Prf::by_name(h), crate::engine::Chain::by_name(c))
    {
        let mut quick = search.clone();
        quick.prf = Some(prf);
        quick.chain = Some(chain);
        out.push(quick);
    }
    out.push(search.clone());
    out
}

/// Where a favorite's volume is now: its file, or the device its stable
/// name points to (`None` when the device is absent).
pub fn locate(fav: &Favorite) -> Option<PathBuf> {
    tcd_proto::devices::locate(&fav.host)
}

/// The device number `fav` is on now, if it is a present device.
pub fn device_number(fav: &Favorite) -> Option<u64> {
    if !fav.host.starts_with("/dev/") {
        return None;
    }
    let p = locate(fav)?;
    let m = std::fs::metadata(p).ok()?;
    std::os::unix::fs::FileTypeExt::is_block_device(&m.file_type()).then(|| m.rdev())
}

/// Reads a file the daemon acts on for nobody in particular: it must be
/// root's and private, so no user can plant or read it.
fn read_root_private(path: &Path, what: &str) -> Result<Zeroizing<Vec<u8>>> {
    let io = |e| Error::Io {
        what: format!("cannot read the {what} {}", path.display()),
        source: e,
    };
    let f = File::open(path).map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if meta.uid() != 0 || meta.permissions().mode() & 0o077 != 0 {
        return Err(Error::InvalidArgument(format!(
            "the {what} {} must be root's and readable by no one else",
            path.display()
        )));
    }
    let mut bytes = Zeroizing::new(Vec::new());
    std::io::Read::read_to_end(&mut std::io::Read::take(f, 1 << 20), &mut bytes).map_err(io)?;
    Ok(bytes)
}

/// Mounts system favorite `fav` as root, with its password file and
/// keyfiles; the PRF and encryption that opened it are returned for the
/// record.
pub fn mount_system(table: &MountTable, fav: &Favorite, cancel: &AtomicBool) -> Result<Mounted> {
    if fav.password_file.is_none() && fav.keyfiles.is_empty() {
        return Err(Error::InvalidArgument(format!(
            "favorite {:?} has no password file or keyfiles for mounting without a user",
            fav.name
        )));
    }
    let host_path =
        locate(fav).ok_or_else(|| Error::NotMounted(format!("{} is not present", fav.host)))?;
    let mut password = match &fav.password_file {
        Some(p) => read_root_private(Path::new(p), "password file")?,
        None => Zeroizing::new(Vec::new()),
    };
    // A password file ends with a newline, as `echo` writes it.
    while password.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        password.pop();
    }
    let keyfiles = crate::volume::keyfile::read_keyfiles(
        &fav.keyfiles.iter().map(PathBuf::from).collect::<Vec<_>>(),
    )?;
    let kf: Vec<&[u8]> = keyfiles.iter().map(|k| &k[..]).collect();
    let mut base = SearchOptions::new();
    base.backend = fav.backend.clone();
    let mut last = Error::NotUnlocked {
        untried: Vec::new(),
    };
    for search in searches(Some(fav), &base) {
        let host = std::fs::OpenOptions::new()
            .read(true)
            .write(!fav.readonly)
            .open(&host_path)
            .map_err(|e| Error::Io {
                what: format!("cannot open {}", host_path.display()),
                source: e,
            })?;
        let req = MountRequest {
            host,
            host_name: fav.host.clone(),
            creds: Credentials {
                password: &password,
                keyfiles: &kf,
                pim: fav.pim,
            },
            protect_hidden: None,
            search,
            read_only: fav.readonly,
            filesystem: filesystem_of(fav),
            mount_point: fav.mount_point.as_ref().map(PathBuf::from),
            allow_non_empty: false,
            discard: fav.discard,
            owner: (0, 0),
            favorite: Some(fav.name.clone()),
            auto_dismount: fav.auto_dismount(),
        };
        match table.mount(req, cancel) {
            Ok(m) => return Ok(m),
            Err(e @ Error::NotUnlocked { .. }) => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

pub fn filesystem_of(fav: &Favorite) -> Filesystem {
    match fav.filesystem.as_deref() {
        Some("none") => Filesystem::None,
        _ => Filesystem::Auto,
    }
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
        assert_eq!(searches(Some(&f), &SearchOptions::new()).len(), 1);
        f.hash = Some("SHA-512".into());
        f.encryption = Some("Serpent-AES".into());
        let s = searches(Some(&f), &SearchOptions::new());
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].prf, Prf::by_name("SHA-512"));
        assert_eq!(s[0].chain.map(|c| c.name), Some("Serpent-AES"));
        assert!(s[1].prf.is_none() && s[1].chain.is_none());
        // A caller who narrowed the search is obeyed as asked.
        let mut narrowed = SearchOptions::new();
        narrowed.prf = Prf::by_name("SHA-256");
        assert_eq!(searches(Some(&f), &narrowed).len(), 1);
    }
}
