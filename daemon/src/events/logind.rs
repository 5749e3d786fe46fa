//! logind's signals on the system bus: a user's last session ending
//! (`UserRemoved`) and the machine about to sleep (`PrepareForSleep`).
//! Only signals from the owner of `org.freedesktop.login1` count: anyone
//! on the bus may send a signal of that name.

use std::os::fd::OwnedFd;

const LOGIN1: &str = "org.freedesktop.login1";
const PATH: &str = "/org/freedesktop/login1";
const MANAGER: &str = "org.freedesktop.login1.Manager";

/// Something logind announced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The user's last session ended.
    LoggedOut(u32),
    /// The machine is about to sleep (`true`) or has woken (`false`).
    Sleep(bool),
}

/// Calls `on` for each logind event, on threads of its own, for as long
/// as the connection lives.
pub fn watch(conn: &zbus::blocking::Connection, on: impl Fn(Event) + Send + Sync + 'static) {
    let on = std::sync::Arc::new(on);
    for signal in ["UserRemoved", "PrepareForSleep"] {
        let proxy = match zbus::blocking::Proxy::new(conn, LOGIN1, PATH, MANAGER) {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!("cannot watch logind: {e}");
                return;
            }
        };
        let on = std::sync::Arc::clone(&on);
        std::thread::spawn(move || {
            // The proxy's stream follows the name's owner: a signal from
            // any other sender is dropped before it reaches us.
            let stream = match proxy.receive_signal(signal) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!("cannot watch logind's {signal}: {e}");
                    return;
                }
            };
            for msg in stream {
                let body = msg.body();
                let event = match signal {
                    "UserRemoved" => body
                        .deserialize::<(u32, zbus::zvariant::OwnedObjectPath)>()
                        .ok()
                        .map(|(uid, _)| Event::LoggedOut(uid)),
                    _ => body.deserialize::<bool>().ok().map(Event::Sleep),
                };
                match event {
                    Some(e) => on(e),
                    None => tracing::warn!("logind's {signal} with an unexpected body ignored"),
                }
            }
        });
    }
}

/// A delay lock on sleep: logind waits (up to its InhibitDelayMaxSec) for
/// it to be released, so volumes are dismounted before the machine sleeps.
/// `None` where logind is not there or refuses.
pub fn delay_sleep(conn: &zbus::blocking::Connection) -> Option<OwnedFd> {
    let reply = conn
        .call_method(
            Some(LOGIN1),
            PATH,
            Some(MANAGER),
            "Inhibit",
            &("sleep", "tcd", "Dismount encrypted volumes", "delay"),
        )
        .ok()?;
    let fd: zbus::zvariant::OwnedFd = reply.body().deserialize().ok()?;
    Some(fd.into())
}
