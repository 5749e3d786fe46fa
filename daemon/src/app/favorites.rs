//! Favorites as callers use them: their own list and the system's.

use super::{App, Caller};
use crate::error::{Error, Result};
use crate::favorites::{Favorite, Owner};

impl App {
    /// The caller's favorite `name` (or the system's, when asked or when
    /// the caller has none of that name).
    pub fn find_favorite(
        &self,
        caller: &Caller,
        name: &str,
        system: bool,
    ) -> Result<(Owner, Favorite)> {
        super::input::bounded("the favorite name", name)?;
        let mut owners = vec![Owner::System];
        if !system {
            owners.insert(0, Owner::User(caller.uid));
        }
        for owner in owners {
            if let Some(f) = self.favorites.get(owner, name)? {
                return Ok((owner, f));
            }
        }
        Err(Error::NotFound(format!("no favorite {name}")))
    }

    /// The caller's favorites and the system's, as (favorite, system).
    /// A system favorite's keyfile (its hidden volume's too) and password
    /// file paths only for `administrator` (they name root's secrets, and
    /// where they are is root's business).
    pub fn list_favorites(
        &self,
        caller: &Caller,
        administrator: bool,
    ) -> Result<Vec<(Favorite, bool)>> {
        let mine = self.favorites.list(Owner::User(caller.uid))?;
        let system = self.favorites.list(Owner::System)?;
        let mut out: Vec<(Favorite, bool)> = mine.into_iter().map(|f| (f, false)).collect();
        for mut f in system {
            if !administrator {
                f.keyfiles = Vec::new();
                f.protect_hidden_keyfiles = Vec::new();
                f.password_file = None;
            }
            out.push((f, true));
        }
        Ok(out)
    }

    /// Whether any system favorite names where its secrets are (only then
    /// is it worth asking whether the caller is an administrator).
    pub fn system_favorites_name_secrets(&self) -> Result<bool> {
        Ok(self.favorites.list(Owner::System)?.iter().any(|f| {
            !f.keyfiles.is_empty()
                || !f.protect_hidden_keyfiles.is_empty()
                || f.password_file.is_some()
        }))
    }

    /// Adds (or replaces) a favorite in `owner`'s list.
    pub fn add_favorite(&self, owner: Owner, mut fav: Favorite) -> Result<()> {
        // A hash and encryption given are kept by their own names, as the
        // daemon records those it learns.
        if let Some(h) = fav.hash.take() {
            fav.hash = Some(super::mount::prf_named(&h)?.name().to_owned());
        }
        if let Some(c) = fav.encryption.take() {
            fav.encryption = Some(super::mount::chain_named(&c)?.name.to_owned());
        }
        // A system favorite's secrets are read as its automatic mount will
        // read them: a missing or unsafe file is said now, not at boot.
        if owner == Owner::System && (fav.password_file.is_some() || !fav.keyfiles.is_empty()) {
            crate::favorites::auto::system_credentials(&fav)?;
        }
        self.favorites.add(owner, fav)
    }

    /// Removes a favorite; whether there was one.
    pub fn remove_favorite(&self, owner: Owner, name: &str) -> Result<bool> {
        super::input::bounded("the favorite name", name)?;
        self.favorites.remove(owner, name)
    }

    /// Marks a system favorite as being mounted by the daemon; `None` if
    /// an attempt is already under way (one at a time each).
    pub fn begin_system_mount(&self, name: &str) -> Option<SystemMount<'_>> {
        let mut m = self.mounting.lock().unwrap_or_else(|p| p.into_inner());
        if m.iter().any(|n| n == name) {
            return None;
        }
        m.push(name.to_owned());
        Some(SystemMount {
            app: self,
            name: name.to_owned(),
        })
    }
}

/// A system favorite's mount under way; ended when dropped.
pub struct SystemMount<'a> {
    app: &'a App,
    name: String,
}

impl Drop for SystemMount<'_> {
    fn drop(&mut self) {
        self.app
            .mounting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|n| *n != self.name);
    }
}
