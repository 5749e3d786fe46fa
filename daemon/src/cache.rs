//! TrueCrypt's "cache passwords and keyfiles in memory": off unless a mount
//! asks for it, kept per user (a user's cached password is tried only for
//! that user's mounts), in the daemon's locked memory, wiped on request
//! and when the daemon stops.

use crate::volume::unlock::Credentials;
use std::sync::Mutex;
use zeroize::Zeroizing;

/// At most this many entries per user; the oldest goes first.
const PER_USER: usize = 16;

/// One cached password with its keyfiles and PIM.
#[derive(Clone)]
pub struct Cached {
    pub password: Zeroizing<Vec<u8>>,
    pub keyfiles: Vec<Zeroizing<Vec<u8>>>,
    pub pim: u32,
}

impl Cached {
    /// The keyfiles as the slices `Credentials` borrows.
    pub fn keyfile_refs(&self) -> Vec<&[u8]> {
        self.keyfiles.iter().map(|k| k.as_slice()).collect()
    }

    /// These credentials for a header search, with `keyfiles` from
    /// [`Cached::keyfile_refs`].
    pub fn credentials<'a>(&'a self, keyfiles: &'a [&'a [u8]]) -> Credentials<'a> {
        Credentials {
            password: &self.password,
            keyfiles,
            pim: self.pim,
        }
    }

    fn same(&self, other: &Cached) -> bool {
        self.pim == other.pim
            && self.password[..] == other.password[..]
            && self.keyfiles.len() == other.keyfiles.len()
            && self
                .keyfiles
                .iter()
                .zip(&other.keyfiles)
                .all(|(a, b)| a[..] == b[..])
    }
}

impl std::fmt::Debug for Cached {
    /// Never the secret itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cached(..)")
    }
}

#[derive(Default)]
pub struct PasswordCache {
    entries: Mutex<Vec<(u32, Cached)>>,
}

impl PasswordCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(u32, Cached)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Remembers `entry` for `uid` (once).
    pub fn add(&self, uid: u32, entry: Cached) {
        let mut e = self.lock();
        if e.iter().any(|(u, c)| *u == uid && c.same(&entry)) {
            return;
        }
        if e.iter().filter(|(u, _)| *u == uid).count() >= PER_USER
            && let Some(oldest) = e.iter().position(|(u, _)| *u == uid)
        {
            e.remove(oldest);
        }
        e.push((uid, entry));
    }

    /// `uid`'s entries, newest first.
    pub fn for_user(&self, uid: u32) -> Vec<Cached> {
        self.lock()
            .iter()
            .rev()
            .filter(|(u, _)| *u == uid)
            .map(|(_, c)| c.clone())
            .collect()
    }

    /// Wipes `uid`'s entries, or everyone's; returns how many went.
    /// (Dropping a `Cached` zeroes it.)
    pub fn wipe(&self, uid: Option<u32>) -> usize {
        let mut e = self.lock();
        let before = e.len();
        e.retain(|(u, _)| uid.is_some_and(|w| w != *u));
        before - e.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(p: &str, pim: u32) -> Cached {
        Cached {
            password: Zeroizing::new(p.as_bytes().to_vec()),
            keyfiles: Vec::new(),
            pim,
        }
    }

    #[test]
    fn entries_are_per_user_deduplicated_bounded_and_wiped() {
        let cache = PasswordCache::default();
        cache.add(1000, c("a", 0));
        cache.add(1000, c("a", 0));
        cache.add(1000, c("a", 5));
        cache.add(1001, c("b", 0));
        assert_eq!(cache.for_user(1000).len(), 2);
        assert_eq!(cache.for_user(1001).len(), 1);
        assert!(cache.for_user(1002).is_empty());
        for i in 0..40 {
            cache.add(1000, c(&format!("p{i}"), 0));
        }
        let mine = cache.for_user(1000);
        assert_eq!(mine.len(), PER_USER);
        assert_eq!(&mine[0].password[..], b"p39", "newest first");
        assert_eq!(cache.wipe(Some(1001)), 1);
        assert_eq!(cache.for_user(1000).len(), PER_USER, "others' stay");
        assert_eq!(cache.wipe(None), PER_USER);
        assert!(cache.for_user(1000).is_empty());
    }
}
