//! Ctrl-C (or SIGTERM, SIGHUP) while `tcctl` makes or changes something
//! that would be left half done: what can be undone is, the user is told
//! where things stand, and `tcctl` exits as interrupted (128 + the signal).
//! The daemon sees its client go and stops its part.

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// From now on, those signals run `say` (which undoes what it can) and
/// print what it returns before `tcctl` exits. Called before any other
/// thread starts, so that every thread inherits the blocked signals and
/// only the waiting thread takes them.
pub fn on_interrupt(say: impl FnOnce() -> String + Send + 'static) {
    let set = crate::signals::set_of(&SIGNALS);
    if crate::signals::block(&set).is_none() {
        return;
    }
    let terminal = terminal_state();
    std::thread::spawn(move || {
        let mut signal: libc::c_int = 0;
        // SAFETY: sigwait reads the set and writes one int it is given.
        if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
            return;
        }
        let said = say();
        // A password prompt had turned echo off: the shell gets it back.
        if let Some(t) = &terminal {
            // SAFETY: tcsetattr reads the termios saved from this same
            // descriptor.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t) };
        }
        eprintln!("\ntcctl: interrupted: {said}");
        std::process::exit(128 + signal);
    });
}

/// The terminal's settings as they are now, if standard input is one.
fn terminal_state() -> Option<libc::termios> {
    let mut t = std::mem::MaybeUninit::<libc::termios>::uninit();
    // SAFETY: tcgetattr fills the termios it is given, or fails and leaves
    // it unread.
    unsafe { (libc::tcgetattr(libc::STDIN_FILENO, t.as_mut_ptr()) == 0).then(|| t.assume_init()) }
}
