//! Where the daemon is (`--socket`, `$TCD_SOCKET`, `--session`,
//! `--system`, as `tcctl` reads them), and calls made off the main loop:
//! each on a worker thread with a connection of its own, its result handed
//! back to the main loop.

use gtk::{gio, glib};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tcd_client::bus::{Client, Failure, Where, exit};
use tcd_client::follow::Change;

const USAGE: &str = "usage: tcd-gtk [--socket PATH | --session | --system]";

#[derive(Debug, Clone, Default)]
pub struct Target {
    socket: Option<PathBuf>,
    session: bool,
    system: bool,
}

impl Target {
    /// The command line; `None` after `--help` was answered.
    pub fn from_args(
        args: impl Iterator<Item = std::ffi::OsString>,
    ) -> Result<Option<Target>, String> {
        let mut t = Target {
            socket: std::env::var_os("TCD_SOCKET")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
            ..Target::default()
        };
        let mut args = args.peekable();
        while let Some(a) = args.next() {
            let a = a.to_string_lossy().into_owned();
            match a.as_str() {
                "--session" => t.session = true,
                "--system" => t.system = true,
                "--socket" => {
                    let p = args
                        .next()
                        .ok_or(format!("--socket needs a path\n{USAGE}"))?;
                    t.socket = Some(PathBuf::from(p));
                }
                "-h" | "--help" => {
                    println!("{USAGE}");
                    return Ok(None);
                }
                _ => match a.strip_prefix("--socket=") {
                    Some(p) => t.socket = Some(PathBuf::from(p)),
                    None => return Err(format!("unknown argument {a}\n{USAGE}")),
                },
            }
        }
        Ok(Some(t))
    }

    fn at(&self) -> Where<'_> {
        match (&self.socket, self.session, self.system) {
            (_, true, _) => Where::Session,
            (_, _, true) => Where::System,
            (Some(p), _, _) => Where::Socket(p),
            _ => Where::Default,
        }
    }

    pub fn connect(&self) -> Result<Client, Failure> {
        Client::connect(self.at())
    }
}

/// A way to stop a call in progress: its connection is closed, and the
/// daemon stops the work it did for it.
/// What closes a call's connection, once.
type Closer = Box<dyn FnOnce() + Send>;

#[derive(Clone, Default)]
pub struct Cancel(Arc<Mutex<Option<Closer>>>);

impl Cancel {
    pub fn cancel(&self) {
        let close = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(close) = close {
            close();
        }
    }
}

/// Runs `work` on a worker thread with a connection of its own; `done`
/// gets the result on the main loop.
pub fn run<T: Send + 'static>(
    target: &Target,
    work: impl FnOnce(&Client) -> Result<T, Failure> + Send + 'static,
    done: impl FnOnce(Result<T, Failure>) + 'static,
) -> Cancel {
    let cancel = Cancel::default();
    let slot = cancel.clone();
    let target = target.clone();
    let handle = gio::spawn_blocking(move || {
        let c = target.connect()?;
        *slot.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(Box::new(c.closer()));
        work(&c)
    });
    glib::spawn_future_local(async move {
        let r = handle.await.unwrap_or_else(|_| {
            Err(Failure {
                code: exit::FAILED,
                message: crate::i18n::tr("the call ended abnormally"),
            })
        });
        done(r);
    });
    cancel
}

/// Follows the daemon's signals: `on` gets each change on the main loop.
/// A lost daemon is looked for again every two seconds; each new
/// connection starts with a `Change::Volumes`.
pub fn follow(target: &Target, on: impl Fn(Change) + 'static) {
    let (tx, rx) = async_channel::unbounded();
    let target = target.clone();
    std::thread::spawn(move || {
        loop {
            if let Ok(c) = target.connect()
                && let Ok(changes) = c.changes()
            {
                if tx.send_blocking(Change::Volumes).is_err() {
                    return;
                }
                for change in changes {
                    if tx.send_blocking(change).is_err() {
                        return;
                    }
                }
            }
            std::thread::sleep(std::time::Duration::from_secs(2));
            if tx.send_blocking(Change::Volumes).is_err() {
                return;
            }
        }
    });
    glib::spawn_future_local(async move {
        while let Ok(change) = rx.recv().await {
            on(change);
        }
    });
}
