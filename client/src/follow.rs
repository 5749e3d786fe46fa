//! Following the daemon for a window: each signal it sends as the change a
//! list of volumes cares about.

use crate::bus::{Client, Failure};
use tcd_proto::contract::names::MANAGER_INTERFACE;
use zbus::zvariant::OwnedObjectPath;

/// What a signal means to a list of volumes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A volume came, went or changed: read the list again.
    Volumes,
    /// The daemon dismounted a volume itself (`error` empty), or tried to.
    AutoDismounted {
        host: String,
        reason: String,
        error: String,
    },
}

impl Client {
    /// Every change, as it comes, until the connection ends.
    pub fn changes(&self) -> Result<impl Iterator<Item = Change>, Failure> {
        Ok(self.signals()?.filter_map(|m| {
            let header = m.header();
            let auto = header.interface().is_some_and(|i| i == MANAGER_INTERFACE)
                && header.member().is_some_and(|n| n == "AutoDismounted");
            if !auto {
                return Some(Change::Volumes);
            }
            let (_, host, _, reason, error): (OwnedObjectPath, String, u32, String, String) =
                m.body().deserialize().ok()?;
            Some(Change::AutoDismounted {
                host,
                reason,
                error,
            })
        }))
    }
}
