//! A header search as the user sees it: the daemon's `SearchProgress`
//! on a terminal while it runs, and after a wrong password how long it
//! took and what narrows it.

use crate::bus::{Client, Failure, exit};
use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Runs `call` (a method that searches for the header) on `c`, showing
/// the daemon's progress on standard error when it is a terminal.
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
        call()
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
/// cleared when it ends.
fn shown<T>(
    c: &Client,
    name: String,
    call: impl FnOnce() -> Result<T, Failure>,
) -> Result<T, Failure> {
    // Open while the call runs: no line is written after it is cleared.
    let open = Arc::new(Mutex::new(true));
    let lines = Arc::clone(&open);
    let r = reported(
        c,
        move |line, _| {
            let still = lines.lock().unwrap_or_else(|p| p.into_inner());
            if *still {
                let mut err = std::io::stderr().lock();
                let _ = match name.as_str() {
                    "" => write!(err, "\r\x1b[K{line}"),
                    name => write!(err, "\r\x1b[K{name}: t{}", &line[1..]),
                };
                let _ = err.flush();
            }
        },
        call,
    );
    let mut still = open.lock().unwrap_or_else(|p| p.into_inner());
    *still = false;
    eprint!("\r\x1b[K");
    r
}

/// Runs `call` (a method that searches for the header) on `c`; `on`
/// gets each of the daemon's `SearchProgress` reports in words ("Trying
/// VeraCrypt sha512 on the normal headers: 40 % done, up to about 3 s
/// left")
/// and the fraction done.
pub fn reported<T>(
    c: &Client,
    on: impl Fn(String, f64) + Send + 'static,
    call: impl FnOnce() -> Result<T, Failure>,
) -> Result<T, Failure> {
    c.with_signals(
        "SearchProgress",
        move |m| {
            if let Ok(p) = m.body().deserialize::<(String, String, String, f64, i64)>() {
                on(describe(&p), p.3.clamp(0.0, 1.0));
            }
        },
        call,
    )
}

/// One progress report in words.
fn describe((format, hash, headers, done, left): &(String, String, String, f64, i64)) -> String {
    let mut line = format!(
        "Trying {format} {hash} on the {headers} headers: {:.0} % done",
        (done * 100.0).clamp(0.0, 100.0)
    );
    if let Ok(left) = u64::try_from(*left) {
        // The whole search's: a header found ends it sooner.
        line.push_str(&format!(", up to about {} left", duration(left)));
    }
    line
}

/// Seconds as "1 min 12 s" or "8 s".
fn duration(secs: u64) -> String {
    match (secs / 60, secs % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}
