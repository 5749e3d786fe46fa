//! This thread's signal mask: the signals held while a prompt reads the
//! terminal, or while a thread waits for them to clean up.

/// The set of `signals`.
pub fn set_of(signals: &[libc::c_int]) -> libc::sigset_t {
    let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given; sigaddset then
    // adds valid signal numbers to that initialised set.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        for &s in signals {
            libc::sigaddset(set.as_mut_ptr(), s);
        }
        set.assume_init()
    }
}

/// Blocks `set` in this thread; the mask before, or None if it could
/// not be changed.
pub fn block(set: &libc::sigset_t) -> Option<libc::sigset_t> {
    let mut old = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: pthread_sigmask reads the initialised set and writes this
    // thread's old mask into `old`, which is read only on success.
    unsafe {
        (libc::pthread_sigmask(libc::SIG_BLOCK, set, old.as_mut_ptr()) == 0)
            .then(|| old.assume_init())
    }
}

/// Takes the pending signals of `set` without waiting, then puts `old`
/// back as this thread's mask.
pub fn drain_and_restore(set: &libc::sigset_t, old: &libc::sigset_t) {
    let now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: both sets are initialised; sigtimedwait only takes a pending
    // signal of `set` (returning -1 when none is), and pthread_sigmask
    // reads `old`.
    unsafe {
        while libc::sigtimedwait(set, std::ptr::null_mut(), &now) > 0 {}
        libc::pthread_sigmask(libc::SIG_SETMASK, old, std::ptr::null_mut());
    }
}
