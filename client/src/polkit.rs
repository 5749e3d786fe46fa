//! What polkit would answer for this process, asked before a window offers
//! a change the daemon would refuse (the daemon asks again for real).

use crate::bus::{Failure, exit};
use std::collections::HashMap;
use zbus::zvariant::Value;

/// polkit's answer for an action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    Yes,
    /// After the user authenticates (an administrator's password).
    AfterAuthentication,
    No,
}

/// This process's start time in clock ticks (`/proc/self/stat` field 22),
/// which with the pid names the process to polkit.
fn start_time() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name, which may hold spaces: state is 3.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(19)?.parse().ok()
}

/// Asks polkit on the system bus, without interaction, whether this
/// process may do `action`.
pub fn check(action: &str) -> Result<Permission, Failure> {
    let failed = |e: String| Failure {
        code: exit::FAILED,
        message: format!("cannot ask polkit: {e}"),
    };
    let conn = zbus::blocking::Connection::system().map_err(|e| failed(e.to_string()))?;
    let mut subject: HashMap<&str, Value<'_>> = HashMap::new();
    subject.insert("pid", Value::U32(std::process::id()));
    subject.insert("start-time", Value::U64(start_time().unwrap_or(0)));
    let details: HashMap<&str, &str> = HashMap::new();
    let reply = conn
        .call_method(
            Some("org.freedesktop.PolicyKit1"),
            "/org/freedesktop/PolicyKit1/Authority",
            Some("org.freedesktop.PolicyKit1.Authority"),
            "CheckAuthorization",
            &(("unix-process", subject), action, details, 0u32, ""),
        )
        .map_err(|e| failed(e.to_string()))?;
    let (authorized, challenge, _): (bool, bool, HashMap<String, String>) = reply
        .body()
        .deserialize()
        .map_err(|e| failed(e.to_string()))?;
    Ok(match (authorized, challenge) {
        (true, _) => Permission::Yes,
        (false, true) => Permission::AfterAuthentication,
        (false, false) => Permission::No,
    })
}
