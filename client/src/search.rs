//! A header search as the user sees it: the daemon's `SearchProgress`
//! on a terminal while it runs (without one, a line when it runs long),
//! and after a wrong password how long it took and what narrows it.

use crate::bus::{Client, Failure, exit};
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Runs `call` (a method that searches for the header) on `c`, showing
/// the daemon's progress on standard error when it is a terminal (else
/// a line when the search runs long).
pub fn run<T>(c: &Client, call: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    run_for(c, "", call)
}

/// As [`run`], each progress line led by `name` (the volume tried) when
/// it is not empty: `/dev/loop3: trying ...`.
pub fn run_for<T>(
    c: &Client,
    name: &str,
    call: impl FnOnce() -> Result<T, Failure>,
) -> Result<T, Failure> {
    run_hinted(c, name, |_| crate::cli::narrowing_hint(), call)
}

/// As [`run`], for the volume in `host` (shown as `shown`): after a wrong
/// password, a host that holds an unencrypted filesystem is said to
/// instead of what narrows the search.
pub fn run_on<T>(
    c: &Client,
    host: &std::fs::File,
    shown: &std::path::Path,
    call: impl FnOnce() -> Result<T, Failure>,
) -> Result<T, Failure> {
    run_hinted(
        c,
        "",
        |_| plain_hint(host, shown).or_else(crate::cli::narrowing_hint),
        call,
    )
}

/// A header backup given as the volume: the daemon's words for it, and
/// the way to read it with its volume (for commands that take --header).
pub fn backup_as_volume(mut f: Failure, shown: &std::path::Path) -> Failure {
    if f.code == exit::INVALID_ARGUMENT
        && f.message
            .ends_with(tcd_proto::contract::errors::BACKUP_AS_VOLUME)
    {
        f.message = format!(
            "{}: name its volume, and give {} with --header (as cryptsetup takes it)",
            f.message,
            shown.display()
        );
    }
    f
}

/// What a host that holds an unencrypted filesystem (no password opens
/// it) is told after a wrong password: what it holds, by its signature;
/// a whole drive searched without --system-encryption, that option.
pub fn plain_hint(host: &std::fs::File, shown: &std::path::Path) -> Option<String> {
    if let Some(what) = crate::host::plain_signature(host) {
        return Some(format!(
            "{} holds an unencrypted {what}, no TrueCrypt or VeraCrypt volume: mount(8) or \
             udisksctl mounts it as it is",
            shown.display()
        ));
    }
    // A whole drive searched as a volume: a system drive's header is in
    // its first track, searched only when asked for.
    if crate::host::partition_table(host) && !crate::cli::asks_system() {
        let drive = format!(
            "{} begins with a partition table: a drive encrypted as a system drive opens with \
             --system-encryption (cryptsetup's --tcrypt-system)",
            shown.display()
        );
        return Some(match crate::cli::narrowing_hint() {
            Some(narrower) => format!("{drive}; {narrower}"),
            None => drive,
        });
    }
    None
}

/// As [`run_for`], with `hint` saying what narrows the search after a
/// wrong password (the options this command line lacks, or a favorite's
/// settings), given the daemon's message.
pub fn run_hinted<T>(
    c: &Client,
    name: &str,
    hint: impl FnOnce(&str) -> Option<String>,
    call: impl FnOnce() -> Result<T, Failure>,
) -> Result<T, Failure> {
    let start = Instant::now();
    let r = if std::io::stderr().is_terminal() {
        shown(c, name.to_owned(), call)
    } else {
        noted(c, name, call)
    };
    r.map_err(|mut f| {
        if f.code == exit::WRONG_PASSWORD {
            let took = duration(start.elapsed().as_secs());
            f.message = match hint(&f.message) {
                Some(hint) => format!("{} (searched for {took}; {hint})", f.message),
                None => format!("{} (searched for {took})", f.message),
            };
        }
        f
    })
}

/// `call` with each progress report on one line of standard error,
/// redrawn every second (its estimate counting down), cleared when it
/// ends.
fn shown<T>(
    c: &Client,
    name: String,
    call: impl FnOnce() -> Result<T, Failure>,
) -> Result<T, Failure> {
    // Open while the call runs: no line is written after it is cleared.
    let line = Arc::new(Mutex::new(Line {
        open: true,
        last: None,
        name,
    }));
    let (seen, ticks) = (Arc::clone(&line), Arc::clone(&line));
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_secs(1));
            let l = ticks.lock().unwrap_or_else(|p| p.into_inner());
            if !l.open {
                break;
            }
            l.draw();
        }
    });
    let r = reported(
        c,
        move |report| {
            let mut l = seen.lock().unwrap_or_else(|p| p.into_inner());
            l.last = Some(report);
            l.draw();
        },
        call,
    );
    let mut l = line.lock().unwrap_or_else(|p| p.into_inner());
    l.open = false;
    eprint!("\r\x1b[K");
    r
}

/// The progress line of [`shown`].
struct Line {
    open: bool,
    last: Option<Report>,
    /// The volume tried, or empty.
    name: String,
}

impl Line {
    fn draw(&self) {
        let (true, Some(report)) = (self.open, &self.last) else {
            return;
        };
        let line = report.words();
        let mut err = std::io::stderr().lock();
        let _ = match self.name.as_str() {
            "" => write!(err, "\r\x1b[K{line}"),
            name => write!(err, "\r\x1b[K{name}: t{}", &line[1..]),
        };
        let _ = err.flush();
    }
}

/// Without a terminal, when a search still runs after this long, one
/// line says so: a script's log shows why it waits.
const FIRST_NOTE: Duration = Duration::from_secs(10);
/// And again after each of these, while it still runs.
const NEXT_NOTE: Duration = Duration::from_secs(60);

/// How far a search shown by [`noted`] has come, and whether it ended.
struct Note {
    done: bool,
    /// The daemon's last report, if any yet.
    last: Option<Report>,
}

/// `call` without a terminal: no progress drawn, but a line on standard
/// error when it still runs after [`FIRST_NOTE`], and after each
/// [`NEXT_NOTE`] from then on.
fn noted<T>(
    c: &Client,
    name: &str,
    call: impl FnOnce() -> Result<T, Failure>,
) -> Result<T, Failure> {
    let note = Arc::new((
        Mutex::new(Note {
            done: false,
            last: None,
        }),
        Condvar::new(),
    ));
    let (seen, watch) = (Arc::clone(&note), Arc::clone(&note));
    let lead = match name {
        "" => String::new(),
        name => format!("{name}: "),
    };
    let start = Instant::now();
    std::thread::spawn(move || {
        let (lock, ended) = &*watch;
        let mut next = start + FIRST_NOTE;
        let mut n = lock.lock().unwrap_or_else(|p| p.into_inner());
        // Said under the lock: nothing is said once the call has ended.
        while !n.done {
            let now = Instant::now();
            if now >= next {
                // What a terminal's line shows: a slow hash or PIM is
                // seen for what it is, not taken for a hang.
                let so_far = duration(start.elapsed().as_secs());
                match &n.last {
                    None => {
                        eprintln!("tcctl: {lead}still searching for the header ({so_far} so far)")
                    }
                    Some(report) => eprintln!(
                        "tcctl: {lead}still searching for the header after {so_far}: {}",
                        report.words()
                    ),
                }
                next += NEXT_NOTE;
                continue;
            }
            n = match ended.wait_timeout(n, next - now) {
                Ok((n, _)) => n,
                Err(p) => p.into_inner().0,
            };
        }
    });
    let r = reported(
        c,
        move |report| {
            seen.0.lock().unwrap_or_else(|p| p.into_inner()).last = Some(report);
        },
        call,
    );
    let (lock, ended) = &*note;
    lock.lock().unwrap_or_else(|p| p.into_inner()).done = true;
    ended.notify_all();
    r
}

/// Runs `call` (a method that searches for the header) on `c`; `on`
/// gets each of the daemon's `SearchProgress` reports.
pub fn reported<T>(
    c: &Client,
    on: impl Fn(Report) + Send + 'static,
    call: impl FnOnce() -> Result<T, Failure>,
) -> Result<T, Failure> {
    c.with_signals(
        "SearchProgress",
        move |m| {
            if let Ok((format, hash, headers, done, left)) =
                m.body().deserialize::<(String, String, String, f64, i64)>()
            {
                on(Report {
                    format,
                    hash,
                    headers,
                    done,
                    left,
                    came: Instant::now(),
                });
            }
        },
        call,
    )
}

/// One of the daemon's `SearchProgress` reports, and when it came.
pub struct Report {
    format: String,
    hash: String,
    headers: String,
    /// The share of the search done, 0 to 1.
    done: f64,
    /// The daemon's estimate of the whole search's time left, in seconds;
    /// negative when it has none yet.
    left: i64,
    came: Instant,
}

impl Report {
    /// In words ("Trying VeraCrypt SHA-512 on the primary headers: 40 %
    /// done, about 3 s left"), the estimate counted down from when
    /// the report came: one slow trial (Argon2id at a high PIM) brings no
    /// news for minutes, and a figure that stands still reads as a hang.
    pub fn words(&self) -> String {
        let mut line = format!(
            "Trying {} {} on the {} headers: {:.0} % done",
            self.format,
            self.hash,
            self.headers,
            (self.done * 100.0).clamp(0.0, 100.0)
        );
        if let Ok(left) = u64::try_from(self.left) {
            // The whole search's: a header found ends it sooner.
            match left.saturating_sub(self.came.elapsed().as_secs()) {
                0 if left > 0 => line.push_str(", taking longer than estimated"),
                now => line.push_str(&format!(", about {} left", duration(now))),
            }
        }
        line
    }

    /// The share of the search done, 0 to 1.
    pub fn done(&self) -> f64 {
        self.done.clamp(0.0, 1.0)
    }
}

/// Seconds as "1 min 12 s" or "8 s".
fn duration(secs: u64) -> String {
    match (secs / 60, secs % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}
