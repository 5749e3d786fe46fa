//! The filesystem mount options a caller may give (`--fs-options`): the
//! daemon mounts by this rule, and `tcctl` checks it before it asks for a
//! password.

/// The filesystem mount options a caller may ask for: an allow-list, never
/// free-form text, since the daemon mounts as root. nosuid and nodev are
/// always on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FsOptions {
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub umask: Option<u32>,
    pub fmask: Option<u32>,
    pub dmask: Option<u32>,
    pub noatime: bool,
    pub noexec: bool,
}

/// Filesystems without owners of their own, whose owner and modes are
/// mount options.
pub fn without_owners(fs_type: &str) -> bool {
    matches!(fs_type, "vfat" | "exfat" | "ntfs" | "ntfs3")
}

/// The mask of files and folders no caller asked about: the owner's
/// alone.
pub const PRIVATE_MASK: u32 = 0o077;

impl FsOptions {
    /// What `parse` takes, for its error.
    pub const ALLOWED: &'static str =
        "uid=, gid=, umask=, fmask=, dmask= (FAT, exFAT, NTFS), noatime, noexec, nodev, nosuid";

    /// Comma-separated words of the allow-list.
    pub fn parse(text: &str) -> Result<FsOptions, String> {
        let mut o = FsOptions::default();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let refuse = || {
                format!(
                    "fs options: \"{word}\" is not allowed; only {}",
                    Self::ALLOWED
                )
            };
            let id = |v: &str| v.parse::<u32>().map_err(|_| refuse());
            let mask = |v: &str| {
                u32::from_str_radix(v, 8)
                    .ok()
                    .filter(|m| *m <= 0o777)
                    .ok_or_else(refuse)
            };
            match word.split_once('=') {
                Some(("uid", v)) => o.uid = Some(id(v)?),
                Some(("gid", v)) => o.gid = Some(id(v)?),
                Some(("umask", v)) => o.umask = Some(mask(v)?),
                Some(("fmask", v)) => o.fmask = Some(mask(v)?),
                Some(("dmask", v)) => o.dmask = Some(mask(v)?),
                None if word == "noatime" => o.noatime = true,
                None if word == "noexec" => o.noexec = true,
                None if word == "nodev" || word == "nosuid" => {}
                _ => return Err(refuse()),
            }
        }
        Ok(o)
    }

    /// Whether an owner or a mode is asked for.
    pub fn sets_owners(&self) -> bool {
        self.uid.is_some()
            || self.gid.is_some()
            || self.umask.is_some()
            || self.fmask.is_some()
            || self.dmask.is_some()
    }

    /// The masks of files and of folders: each as asked (`fmask=`,
    /// `dmask=`), else `umask=`, else private. A mask left unsaid must not
    /// fall to a driver's default, which may be 0 (anyone writes).
    pub fn masks(&self) -> (u32, u32) {
        let or_private = |m: Option<u32>| m.or(self.umask).unwrap_or(PRIVATE_MASK);
        (or_private(self.fmask), or_private(self.dmask))
    }

    /// The owner and mode options of a filesystem without owners:
    /// `owner` unless the caller chose, and both masks, always.
    pub fn ownership(&self, owner: (u32, u32)) -> Vec<String> {
        let (fmask, dmask) = self.masks();
        vec![
            format!("uid={}", self.uid.unwrap_or(owner.0)),
            format!("gid={}", self.gid.unwrap_or(owner.1)),
            format!("fmask={fmask:03o}"),
            format!("dmask={dmask:03o}"),
        ]
    }

    /// Refuses owners and modes on a filesystem that keeps its own.
    pub fn check_for(&self, fs_type: &str) -> Result<(), String> {
        if self.sets_owners() && !without_owners(fs_type) {
            return Err(format!(
                "fs options: uid=, gid= and the masks apply to FAT, exFAT and NTFS, not {fs_type}"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fs_options_take_the_allow_list_only() {
        let o = FsOptions::parse("uid=5, gid=6,umask=027,noatime,nodev,,noexec").expect("allowed");
        assert_eq!(
            o.ownership((1, 2)),
            ["uid=5", "gid=6", "fmask=027", "dmask=027"].map(String::from)
        );
        assert!(o.noatime && o.noexec);
        assert_eq!(
            FsOptions::default().ownership((1, 2)),
            ["uid=1", "gid=2", "fmask=077", "dmask=077"].map(String::from)
        );
        // One mask alone leaves the other private, never open.
        for (text, masks) in [
            ("fmask=177", (0o177, 0o077)),
            ("dmask=022", (0o077, 0o022)),
            ("umask=022,fmask=133", (0o133, 0o022)),
        ] {
            assert_eq!(FsOptions::parse(text).expect("ok").masks(), masks, "{text}");
        }
        for bad in [
            "suid",
            "dev",
            "uid=-1",
            "umask=1000",
            "context=x",
            "uid=1,exec",
        ] {
            assert!(FsOptions::parse(bad).is_err(), "{bad}");
        }
        assert!(o.check_for("ext4").is_err());
        assert!(o.check_for("vfat").is_ok());
        assert!(
            FsOptions::parse("noatime")
                .expect("ok")
                .check_for("ext4")
                .is_ok()
        );
    }
}
