//! A command run on a pseudo-terminal of its own, as a user in a terminal
//! runs it: the terminal is its controlling terminal (so `/dev/tty` opens)
//! and, unless told otherwise, its standard input, output and error.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// A running command and the terminal's other end.
pub struct Pty {
    pub child: Child,
    master: File,
    output: Receiver<Vec<u8>>,
    seen: Vec<u8>,
}

impl Pty {
    /// Starts `command` on a new terminal: its standard output and error,
    /// and its standard input unless `stdin` is given.
    pub fn spawn(command: Command, stdin: Option<Stdio>) -> Pty {
        Self::start(command, stdin, None, None)
    }

    /// As [`Pty::spawn`] with the terminal's input, `stderr` as standard
    /// error when given, and the terminal given to user `owner` when given
    /// (a command run as that user opens it again as `/dev/tty`).
    pub fn spawn_as(command: Command, stderr: Option<Stdio>, owner: Option<u32>) -> Pty {
        Self::start(command, None, stderr, owner)
    }

    fn start(
        mut command: Command,
        stdin: Option<Stdio>,
        stderr: Option<Stdio>,
        owner: Option<u32>,
    ) -> Pty {
        let (master, slave) = open_pty();
        if let Some(uid) = owner {
            // SAFETY: fchown on a descriptor we own; -1 keeps the group.
            let r = unsafe { libc::fchown(slave.as_raw_fd(), uid, u32::MAX) };
            assert_eq!(r, 0, "fchown: {}", std::io::Error::last_os_error());
        }
        let stdio = |f: &OwnedFd| Stdio::from(f.try_clone().expect("dup the terminal"));
        command
            .stdin(stdin.unwrap_or_else(|| stdio(&slave)))
            .stdout(stdio(&slave))
            .stderr(stderr.unwrap_or_else(|| stdio(&slave)));
        let fd = slave.as_raw_fd();
        // SAFETY: between fork and exec only async-signal-safe calls run:
        // setsid and ioctl are, and they touch no memory of the parent.
        unsafe {
            command.pre_exec(move || {
                if libc::setsid() == -1 || libc::ioctl(fd, libc::TIOCSCTTY, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("start the command on a terminal");
        drop(slave);
        let mut reader = master.try_clone().expect("dup the terminal");
        let (tx, output) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // EIO once the last holder of the terminal is gone.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Pty {
            child,
            master,
            output,
            seen: Vec::new(),
        }
    }

    /// Everything the command wrote to the terminal so far.
    pub fn text(&mut self) -> String {
        while let Ok(b) = self.output.try_recv() {
            self.seen.extend(b);
        }
        String::from_utf8_lossy(&self.seen).into_owned()
    }

    /// Waits (up to `limit`) until the terminal shows `what`.
    pub fn expect(&mut self, what: &str, limit: Duration) {
        self.expect_times(what, 1, limit);
    }

    /// Waits (up to `limit`) until the terminal has shown `what` `times`
    /// times in all: a question asked again.
    pub fn expect_times(&mut self, what: &str, times: usize, limit: Duration) {
        let deadline = Instant::now() + limit;
        while self.text().matches(what).count() < times {
            assert!(
                Instant::now() < deadline,
                "the terminal never showed {what:?}; it shows:\n{}",
                self.text()
            );
            if let Ok(b) = self.output.recv_timeout(Duration::from_millis(50)) {
                self.seen.extend(b);
            }
        }
    }

    /// Types `line` and Enter.
    pub fn type_line(&mut self, line: &str) {
        self.master
            .write_all(format!("{line}\n").as_bytes())
            .expect("type on the terminal");
    }

    /// Waits for `question` (up to `limit`), then types `line` and Enter,
    /// a moment later: a password prompt turns echo off after it shows.
    pub fn answer(&mut self, question: &str, line: &str, limit: Duration) {
        self.expect(question, limit);
        std::thread::sleep(Duration::from_millis(300));
        self.type_line(line);
    }

    /// Waits for the command to end (up to `limit`); its exit code and all
    /// it wrote.
    pub fn finish(mut self, limit: Duration) -> (i32, String) {
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("still running after {limit:?}:\n{}", self.text());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        // What it wrote last may still be on its way through the reader.
        std::thread::sleep(Duration::from_millis(100));
        (status.code().unwrap_or(-1), self.text())
    }
}

/// A new pseudo-terminal's two ends.
fn open_pty() -> (File, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty writes two descriptors into the integers given; the
    // name, termios and window size pointers may be null.
    let r = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(r, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned by nothing
    // else.
    unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}
