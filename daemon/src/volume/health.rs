//! A mounted volume's health: what went wrong between the filesystem and
//! the host since the mount. The data path records each failure here as it
//! happens (host reads, writes and flushes; the FUSE connection cut), the
//! daemon's sweep adds what no request sees (a container deleted or
//! truncated while idle, a filesystem the kernel made read-only), and the
//! service shows it as the volume's `Health` and `Problems`.

use std::sync::{Mutex, MutexGuard, OnceLock};

/// Failures of one kind: how many, and the last one's words.
#[derive(Debug, Default, Clone)]
struct Tally {
    count: u64,
    last: String,
}

impl Tally {
    /// Counts one; whether it is the first.
    fn add(&mut self, why: &str) -> bool {
        self.count += 1;
        if self.last != why {
            self.last = why.to_owned();
        }
        self.count == 1
    }

    fn line(&self, one: &str, many: &str, what: &str) -> Option<String> {
        (self.count > 0).then(|| {
            let noun = if self.count == 1 { one } else { many };
            format!("{} {noun} {what} failed: {}", self.count, self.last)
        })
    }
}

#[derive(Debug, Default)]
struct State {
    reads: Tally,
    writes: Tally,
    flushes: Tally,
    /// The container's size when found smaller than the volume needs.
    shrunk_to: Option<u64>,
    deleted: bool,
    fuse_cut: bool,
    fs_read_only: bool,
    /// Errors the filesystem counted since the mount.
    fs_errors: u64,
    /// Writes into a protected hidden volume, refused.
    hidden_refused: u64,
    /// The daemon is taking the volume down: the end of its FUSE session
    /// is expected then.
    closing: bool,
    /// The problems last announced to clients.
    announced: Vec<String>,
    /// Mounted for writing: a container that goes away takes writes with
    /// it (a read-only volume's loses nothing).
    writable: bool,
}

/// The health of one mounted volume, shared by its data path and its views.
pub struct Health {
    state: Mutex<State>,
    /// Called when a new kind of problem appears (so clients hear of it at
    /// once, not at the next sweep). Never called with the state locked.
    on_change: OnceLock<Box<dyn Fn() + Send + Sync>>,
}

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health")
            .field("problems", &self.problems())
            .finish()
    }
}

impl Health {
    /// The health of a volume opened for writing or not.
    pub fn new(writable: bool) -> Health {
        Health {
            state: Mutex::new(State {
                writable,
                ..State::default()
            }),
            on_change: OnceLock::new(),
        }
    }

    /// The volume turned read-only before any write (a legacy volume
    /// mounted without asking for read-write).
    pub fn now_read_only(&self) {
        self.lock().writable = false;
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sets what to call when a new kind of problem appears.
    pub fn on_change(&self, f: impl Fn() + Send + Sync + 'static) {
        let _ = self.on_change.set(Box::new(f));
    }

    /// Applies `f`, and tells the watcher when it reports something new.
    fn record(&self, f: impl FnOnce(&mut State) -> bool) {
        let new = f(&mut self.lock());
        if new && let Some(tell) = self.on_change.get() {
            tell();
        }
    }

    pub fn read_failed(&self, why: &str) {
        self.record(|s| s.reads.add(why));
    }

    pub fn write_failed(&self, why: &str) {
        self.record(|s| s.writes.add(why));
    }

    pub fn flush_failed(&self, why: &str) {
        self.record(|s| s.flushes.add(why));
    }

    /// Hidden-volume protection refused a write (the volume is read-only
    /// from then on): what the outer volume's user wrote is lost.
    pub fn hidden_write_refused(&self) {
        self.record(|s| {
            s.hidden_refused += 1;
            s.hidden_refused == 1
        });
    }

    /// The container is `size` bytes now, less than the volume needs.
    pub fn host_shrunk(&self, size: u64) {
        self.record(|s| s.shrunk_to.replace(size).is_none_or(|was| was != size));
    }

    /// The container has no name left (its link count is zero).
    pub fn host_deleted(&self) {
        self.record(|s| !std::mem::replace(&mut s.deleted, true));
    }

    /// The FUSE session serving the volume ended; a problem unless the
    /// daemon is dismounting it.
    pub fn fuse_ended(&self) {
        self.record(|s| !s.closing && !std::mem::replace(&mut s.fuse_cut, true));
    }

    /// The kernel turned the filesystem read-only (after errors).
    pub fn fs_remounted_read_only(&self) {
        self.record(|s| !std::mem::replace(&mut s.fs_read_only, true));
    }

    /// The filesystem counted `n` errors since the mount.
    pub fn fs_errors(&self, n: u64) {
        self.record(|s| {
            let first = s.fs_errors == 0 && n > 0;
            s.fs_errors = s.fs_errors.max(n);
            first
        });
    }

    /// The daemon starts taking the volume down.
    pub fn closing(&self) {
        self.lock().closing = true;
    }

    /// What went wrong, in words, each kind once (empty: nothing).
    pub fn problems(&self) -> Vec<String> {
        let s = self.lock();
        let mut out = Vec::new();
        if s.fuse_cut {
            out.push(
                "the FUSE connection serving the volume was cut (aborted, or unmounted \
                 outside tcd): writes still in the kernel were lost"
                    .to_owned(),
            );
        }
        if s.deleted {
            out.push("the container was deleted while mounted: writes to it are refused".into());
        }
        if let Some(size) = s.shrunk_to {
            out.push(format!(
                "the container was truncated to {size} bytes while mounted: writes past its end are refused"
            ));
        }
        if s.hidden_refused > 0 {
            let (writes, were) = match s.hidden_refused {
                1 => ("write", "was"),
                _ => ("writes", "were"),
            };
            out.push(format!(
                "{} {writes} into the protected hidden volume {were} refused: the volume has \
                 been read-only since, and what was written after that is lost (the hidden \
                 volume is intact)",
                s.hidden_refused
            ));
        }
        out.extend(s.writes.line("write", "writes", "to the host"));
        out.extend(s.flushes.line("flush", "flushes", "of the host"));
        out.extend(s.reads.line("read", "reads", "from the host"));
        if s.fs_read_only {
            out.push("the filesystem was remounted read-only by the kernel after errors".into());
        }
        if s.fs_errors > 0 {
            out.push(format!(
                "the filesystem counted {} error{} since the mount (see the kernel log; check it with fsck after dismounting)",
                s.fs_errors,
                if s.fs_errors == 1 { "" } else { "s" }
            ));
        }
        out
    }

    pub fn is_ok(&self) -> bool {
        self.problems().is_empty()
    }

    /// "ok", or "failed" once anything went wrong.
    pub fn status(&self) -> &'static str {
        if self.is_ok() { "ok" } else { "failed" }
    }

    /// Whether data written to the volume may not have reached the host:
    /// a failed write or flush, the FUSE connection cut, the container
    /// gone or cut short, or the filesystem's own errors.
    pub fn writes_lost(&self) -> bool {
        let s = self.lock();
        s.writes.count > 0
            || s.hidden_refused > 0
            || s.flushes.count > 0
            || s.fs_read_only
            || s.fs_errors > 0
            || (s.writable && (s.fuse_cut || s.deleted || s.shrunk_to.is_some()))
    }

    /// The problems, if they differ from those last announced (and marks
    /// them announced).
    pub fn unannounced(&self) -> Option<Vec<String>> {
        let now = self.problems();
        let mut s = self.lock();
        if s.announced == now {
            return None;
        }
        s.announced = now.clone();
        Some(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[test]
    fn a_new_kind_of_problem_is_told_once_and_counts_stay_current() {
        let h = Health::new(true);
        let told = Arc::new(AtomicU32::new(0));
        let t = Arc::clone(&told);
        h.on_change(move || {
            t.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(h.status(), "ok");
        assert!(!h.writes_lost());
        for _ in 0..3 {
            h.write_failed("No space left on device (os error 28)");
        }
        assert_eq!(told.load(Ordering::Relaxed), 1);
        assert_eq!(h.status(), "failed");
        assert!(h.writes_lost());
        assert_eq!(
            h.problems(),
            ["3 writes to the host failed: No space left on device (os error 28)"]
        );
        assert!(h.unannounced().is_some());
        assert!(h.unannounced().is_none());
        h.write_failed("No space left on device (os error 28)");
        assert!(h.unannounced().is_some(), "the count changed");
        h.host_deleted();
        h.host_deleted();
        assert_eq!(told.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn the_end_of_fuse_is_a_problem_only_outside_a_dismount() {
        let h = Health::new(true);
        h.fuse_ended();
        assert!(h.problems()[0].contains("FUSE connection"));
        let h = Health::new(true);
        h.closing();
        h.fuse_ended();
        assert!(h.is_ok());
    }

    #[test]
    fn failed_reads_alone_lose_no_writes() {
        let h = Health::new(true);
        h.read_failed("Input/output error (os error 5)");
        assert_eq!(h.status(), "failed");
        assert_eq!(
            h.problems(),
            ["1 read from the host failed: Input/output error (os error 5)"]
        );
        assert!(!h.writes_lost());
        let h = Health::new(false);
        h.host_deleted();
        assert_eq!(h.status(), "failed");
        assert!(!h.writes_lost(), "a read-only volume wrote nothing");
    }
}
