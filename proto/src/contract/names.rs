//! Where the daemon is and what its interfaces are called.

/// The daemon's well-known name on a message bus.
pub const BUS_NAME: &str = "org.tcd.Tcd1";
/// The daemon's own peer-to-peer socket (root's clients need no bus).
pub const DEFAULT_SOCKET: &str = "/run/tcd/tcd.sock";
/// The manager object; also the ObjectManager root.
pub const MANAGER_PATH: &str = "/org/tcd/Tcd1";
/// Volume objects are `VOLUMES_PATH/<id>`.
pub const VOLUMES_PATH: &str = "/org/tcd/Tcd1/volumes";
pub const MANAGER_INTERFACE: &str = "org.tcd.Manager1";
pub const VOLUME_INTERFACE: &str = "org.tcd.Volume1";
/// The prefix of every error name the daemon replies with.
pub const ERROR_PREFIX: &str = "org.tcd.Error";
/// The interface version `Manager1.Version` reports.
pub const VERSION: u32 = 1;

/// The volume object path of volume `id`.
pub fn volume_path(id: u32) -> String {
    format!("{VOLUMES_PATH}/{id}")
}

/// The id in a volume object path, if it is one.
pub fn volume_id(path: &str) -> Option<u32> {
    path.strip_prefix(VOLUMES_PATH)?
        .strip_prefix('/')?
        .parse()
        .ok()
}
