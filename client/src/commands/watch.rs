//! `tcctl watch`: the daemon's reports on the user's volumes as they come.

use super::Context;
use crate::bus::{Client, Failure, VolumeEvent};
use crate::notify;

/// `tcctl watch`: reports the daemon's automatic dismounts of the user's
/// volumes and their failures (a notification with --notify). When the
/// daemon goes (its stop's dismounts reported first), it is waited for
/// and watched again once it is back: the session's watcher outlives a
/// restart, as `udisksctl monitor` outlives udisksd's.
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
    report(ctx, me, events);
    loop {
        eprintln!("tcctl: the daemon went away: watching again once it is back");
        let c = super::wait_for_daemon(ctx.at);
        if let Ok(events) = c.volume_events() {
            eprintln!("tcctl: the daemon is back");
            report(ctx, me, events);
        }
    }
}

/// Says each event about `me`'s volumes (everyone's for root) until the
/// connection ends.
fn report(ctx: Context<'_>, me: u32, events: impl Iterator<Item = VolumeEvent>) {
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
}
