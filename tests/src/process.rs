//! Child processes a test starts and must not leave behind.

use std::process::Child;
use std::time::{Duration, Instant};

/// Waits for `child` at most `limit`; its exit code, or None if it was
/// still running (it is killed then).
pub fn wait_at_most(child: &mut Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(st) = child.try_wait().expect("wait") {
            return Some(st.code().unwrap_or(-1));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
