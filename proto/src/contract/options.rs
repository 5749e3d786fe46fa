//! The options of each method (`a{sv}` on the wire). Every field is
//! optional: what is left out takes the default the field's comment gives.

use super::secret::{Secret, SecretList};
use serde::{Deserialize, Serialize};
use zvariant::{DeserializeDict, SerializeDict, Type};

/// A volume format, as options name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[zvariant(signature = "s")]
#[serde(rename_all = "lowercase")]
pub enum VolumeFormat {
    TrueCrypt,
    VeraCrypt,
}

impl VolumeFormat {
    pub const ALL: [VolumeFormat; 2] = [VolumeFormat::TrueCrypt, VolumeFormat::VeraCrypt];
    /// The option value ("truecrypt", "veracrypt").
    pub fn key(self) -> &'static str {
        match self {
            VolumeFormat::TrueCrypt => "truecrypt",
            VolumeFormat::VeraCrypt => "veracrypt",
        }
    }
}

/// What a mount does with the volume's filesystem.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
#[zvariant(signature = "s")]
#[serde(rename_all = "lowercase")]
pub enum MountFilesystem {
    /// Mount what blkid finds.
    #[default]
    #[serde(alias = "")]
    Auto,
    /// Attach the block device only.
    None,
}

/// The filesystem `Create` makes inside a new volume.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
#[zvariant(signature = "s")]
#[serde(rename_all = "lowercase")]
pub enum NewFilesystem {
    /// No filesystem: the volume's data area stays as filled.
    #[default]
    None,
    Ext4,
    #[serde(alias = "vfat")]
    Fat,
    Exfat,
    Btrfs,
    Xfs,
    Ntfs,
    /// VeraCrypt's older Linux choices, for volumes older systems mount.
    Ext3,
    Ext2,
}

/// `bytes` in MiB, or in KiB below a MiB (rounded down), as the minimum
/// sizes are said.
fn whole_units(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// `bytes` as the size a volume has: in KiB below a MiB, else in MiB with
/// the fraction a whole MiB count would hide (`2.75 MiB`).
fn exact_units(bytes: u64) -> String {
    if bytes < 1 << 20 {
        return format!("{} KiB", bytes >> 10);
    }
    let mib = format!("{:.2}", bytes as f64 / f64::from(1u32 << 20));
    format!("{} MiB", mib.trim_end_matches('0').trim_end_matches('.'))
}

/// A header group: the volume header's 64 KiB slot, then the hidden
/// volume header's (TrueCrypt 6 and later, VeraCrypt).
pub const HEADER_GROUP_BYTES: u64 = 131_072;

/// What a header backup file holds: one header group, as `backup-header`
/// writes it and `restore-header` takes it.
pub const BACKUP_FILE_BYTES: u64 = HEADER_GROUP_BYTES;

/// What a new volume's headers take of its host: a header group at the
/// start and its backup at the end.
pub const NEW_VOLUME_HEADER_BYTES: u64 = 2 * HEADER_GROUP_BYTES;

/// The smallest volume TrueCrypt ever made (37 sectors of 512 bytes, before
/// 6.0); its driver, and VeraCrypt's, refuse anything smaller, and so do
/// the daemon and `tcctl` (before a password is asked).
pub const MIN_VOLUME_BYTES: u64 = 37 * 512;

/// The smallest host with an embedded backup header: two header groups.
pub const MIN_WITH_BACKUP_BYTES: u64 = 2 * HEADER_GROUP_BYTES;

/// Why a host of `size` bytes, under [`MIN_WITH_BACKUP_BYTES`], has no
/// embedded backup header to restore from: said by the daemon and by
/// `tcctl` before it asks anything.
pub fn no_embedded_backup(size: u64) -> String {
    format!(
        "the host has {size} bytes, too few for a volume with backup headers \
         ({MIN_WITH_BACKUP_BYTES} at least): it holds no embedded backup header to restore \
         from (a volume of TrueCrypt before 6.0 has one header)"
    )
}

impl NewFilesystem {
    /// The smallest data area its mkfs takes: what each mkfs says its
    /// least is (btrfs-progs: 114294784 bytes per device), or the least it
    /// was seen to take on a file (e2fsprogs 104 KiB, mkfs.vfat -I 50 KiB,
    /// mkfs.exfat 3 MiB, mkfs.ntfs 1088 KiB), rounded up.
    pub fn least_data(self) -> u64 {
        match self {
            NewFilesystem::Xfs => 300 << 20,
            NewFilesystem::Btrfs => 109 << 20,
            NewFilesystem::Exfat => 3 << 20,
            NewFilesystem::Ntfs => 1152 << 10,
            NewFilesystem::Ext4 | NewFilesystem::Ext3 | NewFilesystem::Ext2 => 128 << 10,
            NewFilesystem::Fat => 64 << 10,
            NewFilesystem::None => 0,
        }
    }

    /// Why its mkfs would refuse a data area of `bytes`, if it would:
    /// said before any password is asked or header written.
    pub fn refuses(self, bytes: u64) -> Option<String> {
        let least = self.least_data();
        (bytes < least).then(|| {
            format!(
                "{} needs a volume of at least {} of data ({} here): its mkfs refuses less",
                self.key(),
                if least.is_multiple_of(1 << 20) {
                    whole_units(least)
                } else {
                    format!("{} KiB", least >> 10)
                },
                exact_units(bytes)
            )
        })
    }

    pub const ALL: [NewFilesystem; 9] = [
        NewFilesystem::None,
        NewFilesystem::Ext4,
        NewFilesystem::Fat,
        NewFilesystem::Exfat,
        NewFilesystem::Btrfs,
        NewFilesystem::Xfs,
        NewFilesystem::Ntfs,
        NewFilesystem::Ext3,
        NewFilesystem::Ext2,
    ];
    pub fn key(self) -> &'static str {
        match self {
            NewFilesystem::None => "none",
            NewFilesystem::Ext4 => "ext4",
            NewFilesystem::Fat => "fat",
            NewFilesystem::Exfat => "exfat",
            NewFilesystem::Btrfs => "btrfs",
            NewFilesystem::Xfs => "xfs",
            NewFilesystem::Ntfs => "ntfs",
            NewFilesystem::Ext3 => "ext3",
            NewFilesystem::Ext2 => "ext2",
        }
    }
}

/// What narrows a header search: `HeaderInfo`, `BackupHeaders`,
/// `RestoreHeaders`, `RestoreEmbeddedHeader` and the current credentials of
/// `ChangePassword`.
#[derive(Debug, Clone, Default, PartialEq, SerializeDict, DeserializeDict, Type)]
#[zvariant(signature = "a{sv}", deny_unknown_fields)]
pub struct SearchOptions {
    /// The PRF ("SHA-512", "sha512", ...); every one when absent.
    pub hash: Option<String>,
    /// The encryption ("AES-Twofish-Serpent", ...); every one when absent.
    pub encryption: Option<String>,
    /// Try only this format.
    pub format: Option<VolumeFormat>,
    /// The backend every cipher must come from (it must be allowed).
    pub backend: Option<String>,
    /// VeraCrypt's PIM (0 or absent: the default iterations).
    pub pim: Option<u32>,
    /// The volume's header comes from these bytes (a header backup file:
    /// the volume's header at 0, a hidden volume's at 64 KiB), not from the
    /// host; only `HeaderInfo` and `Mount` take it. With
    /// `system_encryption`, the system header at 0: for a partition, the
    /// 512 bytes at byte 31744 of its drive, read by the caller.
    pub detached_header: Option<Secret>,
    /// System encryption without its boot loader: the header at byte
    /// 31744 of the drive or disk image given, or, for a partition, in
    /// `detached_header`; the boot loader's iteration counts; only
    /// `HeaderInfo` and `Mount` take it.
    pub system_encryption: Option<bool>,
    /// Open by the backup headers only (VeraCrypt's `headerbak`): at the
    /// end of the host, whatever the primary ones say; only `HeaderInfo`
    /// and `Mount` take it.
    pub backup_header: Option<bool>,
    /// Open only a hidden volume, by its own headers (cryptsetup's
    /// `--tcrypt-hidden`): the outer volume's password does not open the
    /// outer volume then.
    pub hidden_only: Option<bool>,
    /// Restore a backup file's header even when its keys read the
    /// volume's data as noise (a volume with no filesystem, its data
    /// random, its own headers not opening): only `RestoreHeaders` takes
    /// it.
    pub skip_data_check: Option<bool>,
}

/// `Mount`: the search, then how and where to mount.
#[derive(Debug, Clone, Default, PartialEq, SerializeDict, DeserializeDict, Type)]
#[zvariant(signature = "a{sv}", deny_unknown_fields)]
pub struct MountOptions {
    pub hash: Option<String>,
    pub encryption: Option<String>,
    pub format: Option<VolumeFormat>,
    pub backend: Option<String>,
    pub pim: Option<u32>,
    pub detached_header: Option<Secret>,
    /// As [`SearchOptions::system_encryption`]; such a volume mounts
    /// read-only unless `readonly` is false.
    pub system_encryption: Option<bool>,
    /// Mount read-only.
    pub readonly: Option<bool>,
    /// "auto" (default) or "none".
    pub filesystem: Option<MountFilesystem>,
    /// Where to mount; a folder under the caller's media folder when absent.
    pub mount_point: Option<String>,
    /// Mount over a folder that is not empty.
    pub allow_non_empty: Option<bool>,
    /// Pass TRIM/discard through to the host.
    pub discard: Option<bool>,
    /// Put a container file's access and modification times back at
    /// dismount (TrueCrypt's default; absent: true).
    pub preserve_timestamps: Option<bool>,
    /// The hidden volume's password, to protect it from the outer's writes.
    pub protect_hidden_password: Option<Secret>,
    pub protect_hidden_keyfiles: Option<SecretList>,
    pub protect_hidden_pim: Option<u32>,
    /// Keep the password in the daemon's cache after it opened the volume.
    pub cache: Option<bool>,
    /// Try the caller's cached passwords first.
    pub use_cache: Option<bool>,
    pub dismount_on_logout: Option<bool>,
    pub dismount_before_sleep: Option<bool>,
    /// Seconds without I/O before an automatic dismount (0: never).
    pub dismount_idle_seconds: Option<u32>,
    /// Automatic dismounts go ahead with files open.
    pub force_dismount: Option<bool>,
    /// The caller's favorite this volume is (its settings then apply).
    pub favorite: Option<String>,
    /// With `favorite`: the system's favorite of that name.
    pub favorite_system: Option<bool>,
    /// Open the volume by its backup header only (VeraCrypt's `headerbak`).
    pub backup_header: Option<bool>,
    /// Open only a hidden volume (cryptsetup's `--tcrypt-hidden`).
    pub hidden_only: Option<bool>,
    /// Without `mount_point`: mount on `/run/media/<user>/veracrypt<slot>`
    /// (1 to 64), refused while another volume is mounted there.
    pub slot: Option<u32>,
    /// Filesystem options, comma-separated, from an allow-list: `uid=`,
    /// `gid=` (a user's own only), `umask=`, `fmask=`, `dmask=` (FAT,
    /// exFAT, NTFS; a mask not given is 077; FAT through fusefat takes
    /// `umask=` only), `noatime`, `noexec`.
    pub fs_options: Option<String>,
}

impl MountOptions {
    /// The search part.
    pub fn search(&self) -> SearchOptions {
        SearchOptions {
            hash: self.hash.clone(),
            encryption: self.encryption.clone(),
            format: self.format,
            backend: self.backend.clone(),
            pim: self.pim,
            detached_header: self.detached_header.clone(),
            system_encryption: self.system_encryption,
            backup_header: self.backup_header,
            hidden_only: self.hidden_only,
            skip_data_check: None,
        }
    }

    /// Takes over the search part.
    pub fn with_search(mut self, s: SearchOptions) -> Self {
        self.hash = s.hash;
        self.encryption = s.encryption;
        self.format = s.format;
        self.backend = s.backend;
        self.pim = s.pim;
        self.detached_header = s.detached_header;
        self.system_encryption = s.system_encryption;
        self.backup_header = s.backup_header;
        self.hidden_only = s.hidden_only;
        self
    }
}

/// The new side of `ChangePassword`.
#[derive(Debug, Clone, Default, PartialEq, SerializeDict, DeserializeDict, Type)]
#[zvariant(signature = "a{sv}", deny_unknown_fields)]
pub struct NewCredentials {
    /// The new PIM (0: the default iterations); the PIM that opened the
    /// volume when absent (none for a conversion to TrueCrypt).
    pub pim: Option<u32>,
    /// A new PRF; the current one when absent.
    pub hash: Option<String>,
    /// Rewrite the header in this format; the current one when absent.
    pub format: Option<VolumeFormat>,
}

/// Why a volume that holds a hidden volume is not expanded (VeraCrypt
/// refuses it too).
pub const HOLDS_HIDDEN: &str = "a volume that holds a hidden volume cannot be expanded: the \
     hidden volume would lose its backup header at the end of the host, and the grown outer \
     filesystem would write over it";

/// A line of `Expand`'s note: the backup header opened the volume, its
/// primary did not; both now hold the new size.
pub const EXPANDED_BY_BACKUP: &str = "its primary header did not open it (damaged, or an \
     expansion was interrupted) and its backup header did; both headers now hold the new size";

/// A line of `Expand`'s note: both headers held the size asked for
/// already and the last `tail` bytes of the data area had never been
/// written (an expansion stopped before its end, its primary header then
/// restored from the backup): they were encrypted (`filled`) or left as
/// they were, and the filesystem grown as after any expansion.
pub fn expansion_finished(tail: u64, filled: bool) -> String {
    let done = match filled {
        true => "were encrypted",
        false => "were left as they were",
    };
    format!(
        "its headers held this size already: an expansion left unfinished was finished (the \
         last {tail} bytes of its data area, never written, {done})"
    )
}

/// `Expand`.
#[derive(Debug, Clone, Default, PartialEq, SerializeDict, DeserializeDict, Type)]
#[zvariant(signature = "a{sv}", deny_unknown_fields)]
pub struct ExpandOptions {
    /// The container's new size in bytes; absent for a device, which the
    /// volume grows to fill.
    pub size: Option<u64>,
    /// Leave the new space as it is instead of encrypting it.
    pub no_random_fill: Option<bool>,
    /// The owner says the volume holds a hidden volume: refused.
    pub holds_hidden: Option<bool>,
    /// Expand even a volume whose filesystem the daemon cannot grow (FAT,
    /// exFAT): it keeps its size. Absent, such a volume is refused before
    /// anything is written.
    pub filesystem_as_is: Option<bool>,
}

/// `Create`.
#[derive(Debug, Clone, Default, PartialEq, SerializeDict, DeserializeDict, Type)]
#[zvariant(signature = "a{sv}", deny_unknown_fields)]
pub struct CreateOptions {
    /// VeraCrypt when absent.
    pub format: Option<VolumeFormat>,
    /// AES when absent.
    pub encryption: Option<String>,
    /// SHA-512 when absent.
    pub hash: Option<String>,
    pub pim: Option<u32>,
    /// 512 when absent (4096 for a device with 4 KiB sectors).
    pub sector_size: Option<u32>,
    /// Skip filling the data area with random data.
    pub quick: Option<bool>,
    pub backend: Option<String>,
    /// None when absent.
    pub filesystem: Option<NewFilesystem>,
    /// Make a hidden volume of this many bytes inside the existing one.
    pub hidden_size: Option<u64>,
    /// The outer volume's credentials, for a hidden volume.
    pub outer_password: Option<Secret>,
    pub outer_keyfiles: Option<SecretList>,
    pub outer_pim: Option<u32>,
    /// The outer volume's hash (PRF): its search tries only that one.
    pub outer_hash: Option<String>,
}

/// `Volume1.Dismount`.
#[derive(Debug, Clone, Default, PartialEq, SerializeDict, DeserializeDict, Type)]
#[zvariant(signature = "a{sv}", deny_unknown_fields)]
pub struct DismountOptions {
    /// Dismount even with files open (the volume detaches: gone once the
    /// last user lets go).
    pub force: Option<bool>,
}

/// `Volume1.Mount`: the filesystem of a volume attached as a block device
/// only, mounted for its owner.
#[derive(Debug, Clone, Default, PartialEq, SerializeDict, DeserializeDict, Type)]
#[zvariant(signature = "a{sv}", deny_unknown_fields)]
pub struct FilesystemMountOptions {
    /// Where to mount (a folder of the caller's); a folder under the
    /// caller's media folder when absent.
    pub mount_point: Option<String>,
    /// Mount over a folder that is not empty.
    pub allow_non_empty: Option<bool>,
    /// As [`MountOptions::fs_options`].
    pub fs_options: Option<String>,
}

/// `Volume1.Unmount`: the filesystem of a volume unmounted, the volume
/// left attached as its block device.
#[derive(Debug, Clone, Default, PartialEq, SerializeDict, DeserializeDict, Type)]
#[zvariant(signature = "a{sv}", deny_unknown_fields)]
pub struct FilesystemUnmountOptions {
    /// Unmount even with files open (lazily: off its mount point at once,
    /// its users keep it until they let go).
    pub force: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use zvariant::serialized::Context;
    use zvariant::{LE, to_bytes};

    fn round_trip<T>(v: &T) -> T
    where
        T: Serialize + for<'d> Deserialize<'d> + Type,
    {
        let ctx = Context::new_dbus(LE, 0);
        let bytes = to_bytes(ctx, v).expect("serialize");
        bytes.deserialize().expect("deserialize").0
    }

    #[test]
    fn options_travel_as_dictionaries_and_keep_their_values() {
        assert_eq!(MountOptions::SIGNATURE.to_string(), "a{sv}");
        let o = MountOptions {
            hash: Some("sha512".into()),
            format: Some(VolumeFormat::VeraCrypt),
            pim: Some(7),
            filesystem: Some(MountFilesystem::None),
            protect_hidden_password: Some(Secret::new(b"inner".to_vec())),
            protect_hidden_keyfiles: Some(SecretList::new(vec![b"k1".to_vec(), vec![]])),
            readonly: Some(true),
            ..Default::default()
        };
        assert_eq!(round_trip(&o), o);
        let c = CreateOptions {
            hidden_size: Some(1 << 30),
            filesystem: Some(NewFilesystem::Exfat),
            ..Default::default()
        };
        assert_eq!(round_trip(&c), c);
    }

    #[test]
    fn unknown_keys_and_values_are_refused_by_name() {
        use std::collections::HashMap;
        use zvariant::Value;
        let ctx = Context::new_dbus(LE, 0);
        let mut d: HashMap<&str, Value<'_>> = HashMap::new();
        d.insert("hash", Value::from("sha512"));
        d.insert("readonyl", Value::from(true));
        let bytes = to_bytes(ctx, &d).expect("serialize");
        let e = bytes
            .deserialize::<MountOptions>()
            .expect_err("unknown key");
        assert!(e.to_string().contains("readonyl"), "{e}");
        let mut d: HashMap<&str, Value<'_>> = HashMap::new();
        d.insert("format", Value::from("tc"));
        let bytes = to_bytes(ctx, &d).expect("serialize");
        let e = bytes.deserialize::<SearchOptions>().expect_err("bad value");
        assert!(e.to_string().contains("veracrypt"), "{e}");
        let mut d: HashMap<&str, Value<'_>> = HashMap::new();
        d.insert("pim", Value::from("485"));
        let bytes = to_bytes(ctx, &d).expect("serialize");
        assert!(
            bytes.deserialize::<SearchOptions>().is_err(),
            "a PIM as a string"
        );
    }

    #[test]
    fn secrets_are_not_printed() {
        let o = MountOptions {
            protect_hidden_password: Some(Secret::new(b"hunter2".to_vec())),
            ..Default::default()
        };
        assert!(!format!("{o:?}").contains("hunter2"));
    }
}
