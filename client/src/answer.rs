//! A line typed on the controlling terminal, read a key at a time: Ctrl-C
//! and Ctrl-D at a question are answers (interrupted, ended), as they are
//! at a password prompt, not a signal that ends `tcctl` without a word.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;

/// What was typed at a question.
pub enum Typed {
    Line(String),
    /// Ctrl-C.
    Interrupted,
    /// Ctrl-D on an empty line, or the terminal gone.
    Ended,
}

const CTRL_C: u8 = 0x03;
const CTRL_D: u8 = 0x04;
const CTRL_U: u8 = 0x15;
const BACKSPACE: u8 = 0x08;
const DELETE: u8 = 0x7f;

/// The terminal's settings before the question, put back however it ends.
struct Restore {
    fd: i32,
    saved: libc::termios,
}

impl Drop for Restore {
    fn drop(&mut self) {
        // SAFETY: tcsetattr reads the termios saved from this descriptor,
        // which the caller keeps open for as long as this guard lives.
        unsafe { libc::tcsetattr(self.fd, libc::TCSANOW, &self.saved) };
    }
}

/// Writes `question` to `tty` and reads the line typed after it, echoing
/// what is typed; Backspace and Ctrl-U edit it, as the terminal's own line
/// editing does.
pub fn ask(tty: &File, question: &str) -> std::io::Result<Typed> {
    let fd = tty.as_raw_fd();
    let mut saved = std::mem::MaybeUninit::<libc::termios>::uninit();
    // SAFETY: tcgetattr fills the termios it is given, or fails and leaves
    // it unread.
    if unsafe { libc::tcgetattr(fd, saved.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: tcgetattr succeeded, so it filled `saved`.
    let saved = unsafe { saved.assume_init() };
    let mut raw = saved;
    raw.c_lflag &= !(libc::ICANON | libc::ISIG | libc::ECHO);
    raw.c_cc[libc::VMIN] = 1;
    raw.c_cc[libc::VTIME] = 0;
    // SAFETY: tcsetattr reads the termios given, derived from this
    // descriptor's own.
    if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let _restore = Restore { fd, saved };
    let (mut input, mut echo) = (tty, tty);
    // Asked only once the terminal reads keys as keys: a Ctrl-C typed the
    // moment the question shows is an answer, not a signal.
    echo.write_all(question.as_bytes())?;
    let mut line = Vec::new();
    loop {
        let mut key = [0u8; 1];
        match input.read(&mut key) {
            Ok(0) => return Ok(Typed::Ended),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        match key[0] {
            b'\r' | b'\n' => {
                echo.write_all(b"\n")?;
                return Ok(Typed::Line(String::from_utf8_lossy(&line).into_owned()));
            }
            CTRL_C => {
                echo.write_all(b"^C\n")?;
                return Ok(Typed::Interrupted);
            }
            CTRL_D if line.is_empty() => {
                echo.write_all(b"\n")?;
                return Ok(Typed::Ended);
            }
            DELETE | BACKSPACE => {
                if erase_last(&mut line) {
                    echo.write_all(b"\x08 \x08")?;
                }
            }
            CTRL_U => {
                while erase_last(&mut line) {
                    echo.write_all(b"\x08 \x08")?;
                }
            }
            // Other control keys edit nothing here.
            k if k < 0x20 => {}
            k => {
                line.push(k);
                echo.write_all(&key)?;
            }
        }
    }
}

/// Takes the last character (all of its UTF-8 bytes) off `line`.
fn erase_last(line: &mut Vec<u8>) -> bool {
    let Some(mut at) = line.len().checked_sub(1) else {
        return false;
    };
    // Continuation bytes (10xxxxxx) belong to the character before them.
    while at > 0 && line[at] & 0xc0 == 0x80 {
        at -= 1;
    }
    line.truncate(at);
    true
}

#[cfg(test)]
mod tests {
    use super::erase_last;

    #[test]
    fn erasing_takes_whole_characters() {
        let mut line = "aé".as_bytes().to_vec();
        assert!(erase_last(&mut line));
        assert_eq!(line, b"a");
        assert!(erase_last(&mut line));
        assert!(line.is_empty());
        assert!(!erase_last(&mut line));
    }
}
