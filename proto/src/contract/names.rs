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

/// The name `tcctl create` gives the new container it makes beside the
/// file `name` it replaces; it takes `name` once the volume is made.
pub fn replacement_name(name: &str, pid: u32) -> String {
    format!(".{name}.tcd-new-{pid}")
}

/// The file name a container made as [`replacement_name`] takes, if
/// `file_name` is one.
pub fn replaced_name(file_name: &str) -> Option<&str> {
    let (name, pid) = file_name.strip_prefix('.')?.rsplit_once(".tcd-new-")?;
    (!name.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then_some(name)
}

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

#[cfg(test)]
mod tests {
    use super::{replaced_name, replacement_name};

    #[test]
    fn a_replacement_takes_the_name_of_the_file_it_replaces() {
        assert_eq!(replacement_name("v.hc", 42), ".v.hc.tcd-new-42");
        assert_eq!(replaced_name(".v.hc.tcd-new-42"), Some("v.hc"));
        assert_eq!(replaced_name(".a.tcd-new-1.tcd-new-7"), Some("a.tcd-new-1"));
        for not in [
            "v.hc",
            ".v.hc",
            ".v.hc.tcd-new-",
            ".v.hc.tcd-new-4x",
            "..tcd-new-3",
        ] {
            assert_eq!(replaced_name(not), None, "{not}");
        }
    }
}
