//! Sequential read-ahead for the FUSE volume file.
//!
//! A sequential reader (the filesystem's read-ahead through the loop
//! device) waits for each large read before it asks for the next, so without
//! help the cores take turns: one reads and decrypts a request, then the
//! kernel copies it on to the reader while the cipher idles. When reads run
//! sequentially, a worker reads and decrypts the next request of the same
//! size meanwhile, and the next read takes its buffer without a copy. One
//! window at most, so plaintext is held no longer than needed.

use fuser::Errno;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Where the plaintext comes from: `len` bytes at `offset`, clipped to the
/// end of the volume.
pub trait Source: Send + Sync + 'static {
    fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>, Errno>;

    /// As [`Source::read`] into `out`, its length the request's; the bytes
    /// read.
    fn read_into(&self, offset: u64, out: &mut [u8]) -> Result<usize, Errno> {
        let data = self.read(offset, out.len() as u64)?;
        let n = data.len().min(out.len());
        out[..n].copy_from_slice(&data[..n]);
        Ok(n)
    }
}

/// A read made ahead of time, or being made.
struct Window {
    offset: u64,
    len: u64,
    /// Tells this window from an earlier one over the same bytes that a
    /// write has since dropped.
    ticket: u64,
    /// `None` while the worker is still reading.
    data: Option<Result<Vec<u8>, Errno>>,
}

#[derive(Default)]
struct State {
    /// Where the last read ended: a read starting there is sequential.
    last_end: Option<u64>,
    next_ticket: u64,
    window: Option<Window>,
    /// A window's buffer, copied out and given back for the next one.
    spare: Option<Vec<u8>>,
}

type Shared = Arc<(Mutex<State>, Condvar)>;

struct Job {
    offset: u64,
    len: u64,
    ticket: u64,
}

pub struct ReadAhead<S: Source> {
    source: Arc<S>,
    shared: Shared,
    jobs: Option<Sender<Job>>,
    worker: Option<JoinHandle<()>>,
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared.0.lock().unwrap_or_else(|p| p.into_inner())
}

impl<S: Source> ReadAhead<S> {
    pub fn new(source: Arc<S>) -> Self {
        let shared: Shared = Arc::default();
        let (tx, rx) = mpsc::channel::<Job>();
        let worker = {
            let source = Arc::clone(&source);
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("tcd-readahead".into())
                .spawn(move || {
                    for job in rx {
                        // Skip work that a later read or a write has
                        // already made useless.
                        let wanted = |state: &State| {
                            state
                                .window
                                .as_ref()
                                .is_some_and(|w| w.ticket == job.ticket && w.data.is_none())
                        };
                        if !wanted(&lock(&shared)) {
                            continue;
                        }
                        // Into the buffer the last window's reader gave
                        // back, if any: no new pages to fault in and lock.
                        let mut buf = lock(&shared).spare.take().unwrap_or_default();
                        buf.resize(job.len as usize, 0);
                        let data = source.read_into(job.offset, &mut buf).map(|n| {
                            buf.truncate(n);
                            buf
                        });
                        let mut state = lock(&shared);
                        if wanted(&state)
                            && let Some(w) = state.window.as_mut()
                        {
                            w.data = Some(data);
                        }
                        drop(state);
                        shared.1.notify_all();
                    }
                })
                .ok()
        };
        ReadAhead {
            source,
            shared,
            // Without a worker thread, reads are simply not made ahead.
            jobs: worker.as_ref().map(|_| tx),
            worker,
        }
    }

    /// `len` bytes at `offset`, from the window when it holds exactly
    /// those, else read now.
    pub fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>, Errno> {
        match self.take_window(offset, len) {
            Some(data) => Ok(data),
            None => self.source.read(offset, len),
        }
    }

    /// As [`ReadAhead::read`], into `out` (a request's reply buffer): a
    /// read not made ahead lands there without a copy.
    pub fn read_into(&self, offset: u64, out: &mut [u8]) -> Result<usize, Errno> {
        match self.take_window(offset, out.len() as u64) {
            Some(data) => {
                let n = data.len().min(out.len());
                out[..n].copy_from_slice(&data[..n]);
                lock(&self.shared).spare = Some(data);
                Ok(n)
            }
            None => self.source.read_into(offset, out),
        }
    }

    /// The window's bytes when it holds exactly `len` bytes at `offset`
    /// (waiting for the worker if it is still reading them); on a
    /// sequential read, starts reading the next request ahead.
    fn take_window(&self, offset: u64, len: u64) -> Option<Vec<u8>> {
        let mut state = lock(&self.shared);
        let sequential = state.last_end == Some(offset);
        state.last_end = offset.checked_add(len);
        loop {
            let hit = state
                .window
                .as_ref()
                .is_some_and(|w| w.offset == offset && w.len == len);
            if !hit {
                break;
            }
            if state.window.as_ref().is_some_and(|w| w.data.is_none()) {
                state = self.shared.1.wait(state).unwrap_or_else(|p| p.into_inner());
                continue;
            }
            if let Some(Window {
                data: Some(Ok(data)),
                ..
            }) = state.window.take()
            {
                self.schedule(&mut state, offset, len);
                return Some(data);
            }
            // The worker failed: read again and report that error.
            break;
        }
        if sequential {
            self.schedule(&mut state, offset, len);
        }
        None
    }

    /// Starts reading the request after `offset..offset + len`.
    fn schedule(&self, state: &mut State, offset: u64, len: u64) {
        let (Some(jobs), Some(next)) = (&self.jobs, offset.checked_add(len)) else {
            return;
        };
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        state.window = Some(Window {
            offset: next,
            len,
            ticket,
            data: None,
        });
        if jobs
            .send(Job {
                offset: next,
                len,
                ticket,
            })
            .is_err()
        {
            state.window = None;
        }
    }

    /// Called after `len` bytes at `offset` were written: a window over them
    /// may hold what was there before.
    pub fn written(&self, offset: u64, len: u64) {
        let mut state = lock(&self.shared);
        let end = offset.saturating_add(len);
        if state
            .window
            .as_ref()
            .is_some_and(|w| w.offset < end && offset < w.offset.saturating_add(w.len))
        {
            state.window = None;
        }
        drop(state);
        self.shared.1.notify_all();
    }
}

impl<S: Source> Drop for ReadAhead<S> {
    fn drop(&mut self) {
        self.jobs = None;
        lock(&self.shared).window = None;
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Who read `offset` from the source: (by the caller, by the worker).
    fn readers(source: &Fake, offset: u64) -> (usize, usize) {
        let reads = source.reads.lock().unwrap();
        let by = |ahead: bool| reads.iter().filter(|r| **r == (offset, ahead)).count();
        (by(false), by(true))
    }

    /// A volume of `size` bytes whose byte at `i` is `(i % 251) ^ key`,
    /// noting which thread read what.
    struct Fake {
        size: u64,
        key: Mutex<u8>,
        reads: Mutex<Vec<(u64, bool)>>,
    }

    impl Source for Fake {
        fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>, Errno> {
            let ahead = std::thread::current().name() == Some("tcd-readahead");
            self.reads.lock().unwrap().push((offset, ahead));
            let key = *self.key.lock().unwrap();
            let end = (offset + len).min(self.size);
            Ok((offset..end).map(|i| (i % 251) as u8 ^ key).collect())
        }
    }

    fn fake(size: u64) -> Arc<Fake> {
        Arc::new(Fake {
            size,
            key: Mutex::new(0),
            reads: Mutex::default(),
        })
    }

    fn expected(offset: u64, len: u64, size: u64, key: u8) -> Vec<u8> {
        (offset..(offset + len).min(size))
            .map(|i| (i % 251) as u8 ^ key)
            .collect()
    }

    #[test]
    fn sequential_reads_return_the_right_bytes_to_the_end() {
        let size = 10 * 4096 + 512;
        let source = fake(size);
        let ahead = ReadAhead::new(Arc::clone(&source));
        let mut offset = 0;
        while offset < size {
            assert_eq!(
                ahead.read(offset, 4096).unwrap(),
                expected(offset, 4096, size, 0)
            );
            offset += 4096;
        }
        // Random reads after that are served directly and correctly.
        for offset in [8192, 512, 40960, 0] {
            assert_eq!(
                ahead.read(offset, 1024).unwrap(),
                expected(offset, 1024, size, 0)
            );
        }
    }

    #[test]
    fn reads_into_a_reply_buffer_return_the_right_bytes_through_recycled_windows() {
        let size = 10 * 4096 + 512;
        let source = fake(size);
        let ahead = ReadAhead::new(Arc::clone(&source));
        let mut out = vec![0xee; 4096];
        let mut offset = 0;
        while offset < size {
            let n = ahead.read_into(offset, &mut out).unwrap();
            assert_eq!(out[..n], expected(offset, 4096, size, 0)[..]);
            offset += 4096;
        }
        assert_eq!(readers(&source, 8 * 4096), (0, 1), "read ahead, once");
    }

    #[test]
    fn a_write_drops_what_was_read_ahead_over_it() {
        let size = 1 << 20;
        let source = fake(size);
        let ahead = ReadAhead::new(Arc::clone(&source));
        ahead.read(0, 4096).unwrap();
        ahead.read(4096, 4096).unwrap();
        // 8192.. is being read ahead now, with the old contents.
        std::thread::sleep(std::time::Duration::from_millis(20));
        *source.key.lock().unwrap() = 0x5a;
        ahead.written(8192, 512);
        assert_eq!(
            ahead.read(8192, 4096).unwrap(),
            expected(8192, 4096, size, 0x5a)
        );
        assert_eq!(readers(&source, 8192).0, 1, "read again after the write");
        // A write elsewhere keeps the window, and the read is served from it.
        ahead.written(0, 4096);
        assert_eq!(
            ahead.read(12288, 4096).unwrap(),
            expected(12288, 4096, size, 0x5a)
        );
        assert_eq!(readers(&source, 12288), (0, 1));
    }
}
