//! FUSE over io_uring: the kernel hands the volume file's requests to ring
//! entries the daemon registered, one queue per processor, and takes each
//! reply together with the wait for the next request in one command
//! (`FUSE_IO_URING_CMD_COMMIT_AND_FETCH`), so a request costs no read or
//! write on `/dev/fuse` and no wake-up of a thread that another processor
//! queued it for. The classic session stays up beside the queues for the
//! few requests the kernel still sends there (interrupts, forgets) and to
//! see the connection end.

pub(super) mod abi;
mod queue;

use super::fuse::VolumeFile;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;

/// The kernel's switch for FUSE over io_uring (it only lets FUSE servers
/// ask for it); present when the kernel is built with it.
const SWITCH: &str = "/sys/module/fuse/parameters/enable_uring";

/// Ring entries (requests in flight) of all queues together.
const ENTRIES: usize = 16;

/// A queue's thread, waiting to be told the connection to serve.
struct Waiting {
    start: mpsc::Sender<Option<queue::Start>>,
    thread: JoinHandle<()>,
}

/// The queues' rings, made before the kernel is asked for io_uring.
pub struct Prepared {
    queues: Vec<Waiting>,
}

/// Queues serving a connection, until it ends.
pub struct Running {
    threads: Vec<JoinHandle<()>>,
}

/// Turns the kernel's switch on if it is off; whether it is on.
fn switch_on() -> bool {
    match std::fs::read_to_string(SWITCH) {
        Ok(v) if v.trim() == "Y" => true,
        Ok(_) => match std::fs::write(SWITCH, "Y") {
            Ok(()) => {
                tracing::info!("turned on FUSE over io_uring ({SWITCH})");
                true
            }
            Err(e) => {
                tracing::info!("FUSE over io_uring stays off: cannot write {SWITCH}: {e}");
                false
            }
        },
        Err(_) => false,
    }
}

/// How many queues the kernel makes: one per possible processor.
fn possible_cpus(list: &str) -> Option<usize> {
    let mut n = 0;
    for part in list.trim().split(',') {
        n += match part.split_once('-') {
            Some((a, b)) => b.parse::<usize>().ok()?.checked_sub(a.parse().ok()?)? + 1,
            None => {
                part.parse::<usize>().ok()?;
                1
            }
        };
    }
    (n > 0).then_some(n)
}

/// Makes one ring per queue, each on its own thread, or `None` where the
/// kernel has no FUSE over io_uring or this process no io_uring.
pub fn prepare(file: Arc<VolumeFile>) -> Option<Prepared> {
    if !switch_on() {
        return None;
    }
    let cpus = std::fs::read_to_string(Path::new("/sys/devices/system/cpu/possible")).ok()?;
    let count = possible_cpus(&cpus)?;
    let depth = (ENTRIES / count).clamp(2, 32);
    let (ready_tx, ready_rx) = mpsc::channel();
    let mut queues = Vec::with_capacity(count);
    for qid in 0..count {
        let (start, start_rx) = mpsc::channel();
        let ready = ready_tx.clone();
        let file = Arc::clone(&file);
        let spawned = std::thread::Builder::new()
            .name(format!("tcd-fuse-q{qid}"))
            .spawn(move || queue::run(qid as u16, depth, file, ready, start_rx));
        match spawned {
            Ok(thread) => queues.push(Waiting { start, thread }),
            Err(e) => {
                tracing::warn!("cannot start a FUSE queue thread: {e}");
                Prepared { queues }.abandon();
                return None;
            }
        }
    }
    drop(ready_tx);
    let prepared = Prepared { queues };
    let made: Vec<std::io::Result<()>> = ready_rx.iter().take(count).collect();
    match made.into_iter().find(|r| r.is_err()) {
        None => Some(prepared),
        Some(e) => {
            tracing::info!("FUSE requests go through /dev/fuse: no io_uring here ({e:?})");
            prepared.abandon();
            None
        }
    }
}

impl Prepared {
    /// Registers every queue's entries on the connection of `fd` (whose
    /// FUSE_INIT agreed to io_uring), each payload buffer `payload` bytes.
    /// If the kernel refuses an entry, it goes back to `/dev/fuse` and the
    /// queues end with the connection.
    pub fn start(self, fd: BorrowedFd<'_>, payload: usize) -> std::io::Result<Running> {
        let mut fds: Vec<OwnedFd> = Vec::with_capacity(self.queues.len());
        for _ in &self.queues {
            fds.push(fd.try_clone_to_owned()?);
        }
        let mut threads = Vec::with_capacity(self.queues.len());
        for (q, fd) in self.queues.into_iter().zip(fds) {
            let _ = q.start.send(Some(queue::Start { fd, payload }));
            threads.push(q.thread);
        }
        Ok(Running { threads })
    }

    /// Ends the threads without serving.
    pub fn abandon(self) {
        for q in self.queues {
            let _ = q.start.send(None);
            let _ = q.thread.join();
        }
    }
}

impl Running {
    /// Waits for every queue to end (the connection is gone).
    pub fn join(self) {
        for t in self.threads {
            let _ = t.join();
        }
    }

    /// The number of queues.
    pub fn queues(&self) -> usize {
        self.threads.len()
    }
}

#[cfg(test)]
mod tests {
    use super::possible_cpus;

    #[test]
    fn queues_are_counted_as_the_kernel_counts_possible_processors() {
        assert_eq!(possible_cpus("0-1\n"), Some(2));
        assert_eq!(possible_cpus("0"), Some(1));
        assert_eq!(possible_cpus("0-3,6-7"), Some(6));
        assert_eq!(possible_cpus("0,2,4"), Some(3));
        assert_eq!(possible_cpus(""), None);
        assert_eq!(possible_cpus("3-1"), None);
    }
}
