//! Desktop notifications on the user's session bus, for commands started
//! without a terminal (a launcher, a file manager, the session's autostart)
//! where an error on standard error would go unseen.

use crate::bus::{Failure, exit};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use zbus::zvariant::Value;

/// How long a notification stays up, in milliseconds.
const SHOWN_MS: i32 = 8000;

/// `--notify` given: a notification that cannot be shown is then said.
static ASKED: AtomicBool = AtomicBool::new(false);

/// Whether to notify: asked for, or nobody is watching a terminal.
pub fn wanted(asked: bool) -> bool {
    ASKED.store(asked, Ordering::SeqCst);
    asked || !(std::io::stdin().is_terminal() || std::io::stderr().is_terminal())
}

/// Shows a notification, best effort: a session without a notification
/// server must not turn a mount into a failure. Asked for with
/// `--notify`, one not shown is said on standard error; tried unasked
/// (no terminal), it is not, lest every script's error output fill up.
pub fn send(summary: &str, body: &str, urgent: bool) {
    if let Err(e) = try_send(summary, body, urgent)
        && ASKED.load(Ordering::SeqCst)
    {
        eprintln!("tcctl: warning: --notify: no notification shown: {e}");
    }
}

fn try_send(summary: &str, body: &str, urgent: bool) -> zbus::Result<()> {
    // A hung notification server must not hold the command.
    let conn = zbus::blocking::connection::Builder::session()?
        .method_timeout(Duration::from_secs(5))
        .build()?;
    let mut hints: HashMap<&str, Value> = HashMap::new();
    // The specification's urgency levels: 1 normal, 2 critical.
    hints.insert("urgency", Value::U8(if urgent { 2 } else { 1 }));
    hints.insert("desktop-entry", Value::from("tcd-mount"));
    conn.call_method(
        Some("org.freedesktop.Notifications"),
        "/org/freedesktop/Notifications",
        Some("org.freedesktop.Notifications"),
        "Notify",
        &(
            "tcd",
            0u32,
            "drive-harddisk-encrypted",
            summary,
            body,
            Vec::<&str>::new(),
            hints,
            SHOWN_MS,
        ),
    )?;
    Ok(())
}

/// Reports a command's outcome when `notify`: `Ok` carries the summary and
/// body of success; a failure is urgent, under `failed`. A prompt the user
/// cancelled is not reported: they know.
pub fn outcome(
    notify: bool,
    failed: &str,
    result: Result<(String, String), Failure>,
) -> Result<(), Failure> {
    if notify {
        match &result {
            Ok((summary, body)) => send(summary, body, false),
            Err(f) if f.code != exit::CANCELLED => send(failed, &f.message, true),
            Err(_) => {}
        }
    }
    result.map(|_| ())
}
