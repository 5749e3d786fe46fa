//! Keeping the daemon's secrets in its memory only: no core dump, no
//! ptrace by other users, no swap.
//!
//! Like cryptsetup, the daemon locks all of its memory rather than chasing
//! every buffer a key passes through (the D-Bus message a password arrives
//! in, a backend's key schedule, the page a header is decrypted in).
//! `MCL_ONFAULT` locks pages as they are touched, so idle thread stacks
//! and reserved heap do not become resident. Locked memory goes back to
//! the system only when unmapped, so the allocator is set up for that
//! first ([`crate::memory`]).

use crate::error::{Error, Result};

/// What [`harden`] achieved, for the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hardened {
    pub no_core: bool,
    pub memory_locked: bool,
}

/// Makes the process undumpable, its core size 0, and its memory locked.
/// Locking may fail without privilege (a development run as a user);
/// that is reported, not fatal. The rest must succeed.
pub fn harden() -> Result<Hardened> {
    if let Err(setting) = crate::memory::tune_allocator() {
        tracing::warn!("the allocator refused {setting}: memory freed after load may stay locked");
    }
    let zero = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: setrlimit reads one live rlimit; prctl with integer
    // arguments; mlockall with flags only.
    let (core, dumpable, locked) = unsafe {
        (
            libc::setrlimit(libc::RLIMIT_CORE, &zero),
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0),
            libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE | libc::MCL_ONFAULT),
        )
    };
    if core != 0 || dumpable != 0 {
        return Err(Error::Io {
            what: "cannot forbid core dumps".into(),
            source: std::io::Error::last_os_error(),
        });
    }
    Ok(Hardened {
        no_core: true,
        memory_locked: locked == 0,
    })
}
