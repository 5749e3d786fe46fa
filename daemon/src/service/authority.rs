//! Who may do what: polkit decides every privileged call by action (see
//! `dist/polkit/org.tcd.policy`), for the caller the bus or the socket
//! names, never one the message claims. Root is always allowed. Without a
//! reachable polkit, only root is.

use super::errors::ServiceError;
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use zbus::zvariant::Value;

/// The caller of one D-Bus call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub uid: u32,
    pub gid: u32,
    /// The caller's process, from the socket or the bus.
    pub pid: Option<u32>,
    /// Its unique name on the system bus, when the call came that way.
    pub system_bus_name: Option<String>,
}

/// The privileged things a caller may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Mount, create, inspect or change a container file the caller opened.
    UseFile,
    /// The same on a block device.
    UseDevice,
    /// See, dismount or change another user's volume.
    ManageOthers,
    /// Change the backend policy.
    SetPolicy,
    /// Add or remove system favorites (mounted by the daemon as root).
    ManageSystemFavorites,
}

impl Action {
    pub fn id(self) -> &'static str {
        match self {
            Action::UseFile => "org.tcd.use-file",
            Action::UseDevice => "org.tcd.use-device",
            Action::ManageOthers => "org.tcd.manage-others",
            Action::SetPolicy => "org.tcd.set-policy",
            Action::ManageSystemFavorites => "org.tcd.manage-system-favorites",
        }
    }

    /// The action for using `host`: a block device needs its own right.
    pub fn for_host(host: &File) -> Action {
        match host.metadata() {
            Ok(m) if m.file_type().is_block_device() => Action::UseDevice,
            _ => Action::UseFile,
        }
    }
}

/// polkit's Authority on the system bus, if there is one.
pub struct Authority {
    polkit: Option<zbus::Connection>,
}

const POLKIT: &str = "org.freedesktop.PolicyKit1";

impl Authority {
    /// No polkit: only root may do privileged things.
    pub fn root_only() -> Authority {
        Authority { polkit: None }
    }

    /// polkit on the system bus, if it answers (or can be started there).
    pub async fn connect() -> Authority {
        let Ok(conn) = zbus::Connection::system().await else {
            return Authority::root_only();
        };
        let Ok(dbus) = zbus::fdo::DBusProxy::new(&conn).await else {
            return Authority::root_only();
        };
        let Ok(name) = zbus::names::BusName::try_from(POLKIT) else {
            return Authority::root_only();
        };
        let owned = dbus.name_has_owner(name).await.unwrap_or(false);
        let activatable = dbus
            .list_activatable_names()
            .await
            .map(|n| n.iter().any(|n| n.as_str() == POLKIT))
            .unwrap_or(false);
        if owned || activatable {
            tracing::info!("polkit decides what callers may do");
            Authority { polkit: Some(conn) }
        } else {
            tracing::info!("no polkit on the system bus: only root may use tcd");
            Authority::root_only()
        }
    }

    /// Allows `action` for `caller`, or says why not.
    pub async fn check(&self, caller: &Caller, action: Action) -> Result<(), ServiceError> {
        if caller.uid == 0 {
            return Ok(());
        }
        let Some(conn) = &self.polkit else {
            return Err(ServiceError::denied(format!(
                "{}: only root may do this here (no polkit)",
                action.id()
            )));
        };
        let subject: (&str, HashMap<&str, Value<'_>>) = match (&caller.system_bus_name, caller.pid)
        {
            (Some(name), _) => (
                "system-bus-name",
                HashMap::from([("name", Value::from(name.as_str()))]),
            ),
            (None, Some(pid)) => (
                "unix-process",
                HashMap::from([
                    ("pid", Value::from(pid)),
                    ("start-time", Value::from(start_time(pid).unwrap_or(0))),
                    ("uid", Value::from(caller.uid as i32)),
                ]),
            ),
            (None, None) => {
                return Err(ServiceError::denied("the caller's process is unknown"));
            }
        };
        let details: HashMap<&str, &str> = HashMap::new();
        // Flags 0: no interaction (the daemon has no agent to ask).
        let reply = conn
            .call_method(
                Some(POLKIT),
                "/org/freedesktop/PolicyKit1/Authority",
                Some("org.freedesktop.PolicyKit1.Authority"),
                "CheckAuthorization",
                &(subject, action.id(), details, 0u32, ""),
            )
            .await
            .map_err(|e| ServiceError::denied(format!("polkit: {e}")))?;
        let (authorized, challenge, _): (bool, bool, HashMap<String, String>) = reply
            .body()
            .deserialize()
            .map_err(|e| ServiceError::denied(format!("polkit: {e}")))?;
        if authorized {
            Ok(())
        } else {
            Err(ServiceError::denied(format!(
                "not authorized for {}{}",
                action.id(),
                if challenge {
                    " (an administrator must authenticate)"
                } else {
                    ""
                }
            )))
        }
    }
}

/// The start time of `pid` (field 22 of /proc/PID/stat), which polkit
/// uses to tell a process from a later one with the same pid.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; count after its ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// The group a user's mounts and new filesystems get: the user's primary
/// group from the password database, never whatever group the caller's
/// process lists first (which may be a shared group). A uid the database
/// does not know gets the overflow group (65534, "nogroup"), which is no
/// one's.
pub fn primary_gid(uid: u32) -> u32 {
    const NOGROUP: u32 = 65534;
    let mut buf = vec![0u8; 4096];
    loop {
        // SAFETY: all-zero is a valid passwd (null pointers, zero ids).
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: `pw`, `buf` (with its true length) and `found` are live
        // for the call; getpwuid_r writes only within them.
        let rc = unsafe {
            libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut found)
        };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        return if rc == 0 && !found.is_null() {
            pw.pw_gid
        } else {
            NOGROUP
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_primary_group_comes_from_the_password_database() {
        assert_eq!(primary_gid(0), 0, "root's primary group is root");
        let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
        for line in passwd.lines() {
            let f: Vec<&str> = line.split(':').collect();
            if let [_, _, uid, gid, ..] = f[..] {
                assert_eq!(
                    primary_gid(uid.parse().unwrap()),
                    gid.parse::<u32>().unwrap(),
                    "{line}"
                );
            }
        }
        assert_eq!(primary_gid(4_000_000_000), 65534, "an unknown uid");
    }
}
