//! `tcctl watch`: the daemon's reports on the user's volumes as they come.

use super::Context;
use crate::bus::{Client, Failure, VolumeEvent, exit};
use crate::notify;

/// `tcctl watch`: reports the daemon's automatic dismounts of the user's
/// volumes and their failures (a notification with --notify), until the
/// daemon goes.
pub fn watch(ctx: Context<'_>) -> Result<(), Failure> {
    use std::os::unix::fs::MetadataExt;
    let me = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(u32::MAX);
    let c = Client::connect(ctx.at)?;
    let events = c.volume_events()?;
    // People are told what to expect; the session's autostart, writing to
    // the journal, is not.
    if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        println!(
            "Watching the tcd daemon for automatic dismounts and health changes of {}. \
             Press Ctrl+C to exit.",
            if me == 0 {
                "every volume"
            } else {
                "your volumes"
            }
        );
    }
    for event in events {
        let (owner, summary, body, urgent) = match event {
            VolumeEvent::AutoDismounted {
                host,
                owner,
                reason,
                error,
            } if error.is_empty() => (
                owner,
                format!("Dismounted {host} ({reason})"),
                String::new(),
                false,
            ),
            VolumeEvent::AutoDismounted {
                host,
                owner,
                reason,
                error,
            } => (
                owner,
                format!("Could not dismount {host} ({reason}): {error}"),
                String::new(),
                true,
            ),
            VolumeEvent::HealthChanged {
                host,
                owner,
                health,
                problems,
            } => (
                owner,
                format!("Volume {host} {health}"),
                problems.join("; "),
                health != "ok",
            ),
        };
        if me != 0 && owner != me {
            continue;
        }
        if body.is_empty() {
            println!("{summary}");
        } else {
            println!("{summary}: {body}");
        }
        if ctx.notify {
            notify::send(&summary, &body, urgent);
        }
    }
    Err(Failure {
        code: exit::NO_DAEMON,
        message: "the daemon went away".into(),
    })
}
