//! Making volumes: a new volume over all of a host (or a hidden one inside
//! an existing volume), and a filesystem in it, made through the mount
//! table like any mount, so that nothing else can mount the volume while
//! mkfs runs.

use super::mount::{chain_named, credentials, format_of, prf_named};
use super::{App, Caller};
use crate::error::{Error, Result};
use crate::mount;
use crate::mounts::{Filesystem, MountRequest};
use crate::volume::create::{self, Fill};
use crate::volume::unlock::{Credentials, SearchOptions};
use std::fs::File;
use std::sync::atomic::AtomicBool;
use tcd_proto::contract::options::NewFilesystem;
use tcd_proto::contract::{CreateOptions, Secret, SecretList};

/// A `Create` call as the application takes it.
pub struct CreateCall {
    pub host: File,
    pub password: Secret,
    pub keyfiles: SecretList,
    pub options: CreateOptions,
}

/// The mkfs tool and its arguments for a filesystem choice.
fn mkfs_tool(choice: NewFilesystem) -> Option<(&'static str, &'static [&'static str])> {
    match choice {
        NewFilesystem::None => None,
        NewFilesystem::Ext4 => Some(("mkfs.ext4", &["-q", "-F"][..])),
        NewFilesystem::Ext3 => Some(("mkfs.ext3", &["-q", "-F"][..])),
        NewFilesystem::Ext2 => Some(("mkfs.ext2", &["-q", "-F"][..])),
        // -I: the new volume is a whole device of ours; mkfs.vfat would
        // otherwise refuse it when its unfilled (--quick) data decrypts to
        // bytes that blkid takes for a partition table.
        NewFilesystem::Fat => Some(("mkfs.vfat", &["-I"][..])),
        NewFilesystem::Exfat => Some(("mkfs.exfat", &[][..])),
        NewFilesystem::Btrfs => Some(("mkfs.btrfs", &["-q", "-f"][..])),
        NewFilesystem::Xfs => Some(("mkfs.xfs", &["-q", "-f"][..])),
        // --fast: no zeroing of the (already encrypted) volume; -F: the
        // device is no partition, and mkfs.ntfs would ask.
        NewFilesystem::Ntfs => Some(("mkfs.ntfs", &["-q", "-F", "--fast"][..])),
    }
}

fn make_filesystem(
    tool: (&str, &[&str]),
    device: &std::path::Path,
    root_owner: Option<(u32, u32)>,
) -> Result<()> {
    let mut args: Vec<&std::ffi::OsStr> = tool.1.iter().map(|a| a.as_ref()).collect();
    let owner = root_owner.map(|(u, g)| format!("root_owner={u}:{g}"));
    if let (Some(owner), "mkfs.ext4" | "mkfs.ext3" | "mkfs.ext2") = (&owner, tool.0) {
        args.push("-E".as_ref());
        args.push(owner.as_ref());
    }
    args.push(device.as_os_str());
    mount::tools::run_for(tool.0, args, mount::tools::MKFS_LIMIT).map(|_| ())
}

impl App {
    /// The library's options for a `Create` call, checked against the
    /// caller's bounds.
    fn create_options(&self, caller: &Caller, o: &CreateOptions) -> Result<create::CreateOptions> {
        super::input::bounded_search(&tcd_proto::contract::SearchOptions {
            hash: o.hash.clone(),
            encryption: o.encryption.clone(),
            backend: o.backend.clone(),
            ..Default::default()
        })?;
        if let Some(k) = &o.outer_keyfiles {
            super::input::bounded_keyfiles("option outer_keyfiles", k)?;
        }
        let mut c = create::CreateOptions::new();
        if let Some(f) = o.format {
            c.format = format_of(f);
        }
        if let Some(name) = &o.encryption {
            c.chain = chain_named(name)?;
        }
        if let Some(name) = &o.hash {
            c.prf = prf_named(name)?;
        }
        if let Some(name) = &o.outer_hash {
            super::input::bounded("option outer_hash", name)?;
            c.outer_prf = Some(prf_named(name)?);
        }
        c.sector_size = o.sector_size.filter(|&s| s != 0);
        if o.quick.unwrap_or(false) {
            c.fill = Fill::Quick;
        }
        c.backend = o.backend.clone();
        let limits = crate::policy::kdf_limits(&self.backends.policy().limits, caller.is_root());
        limits.request_allowed(Some(c.prf), o.pim.unwrap_or(0))?;
        if o.hidden_size.is_some() {
            limits.request_allowed(None, o.outer_pim.unwrap_or(0))?;
        }
        c.limits = limits;
        Ok(c)
    }

    /// Makes the volume; `progress(done, total)` follows the fill.
    pub fn create(
        &self,
        caller: &Caller,
        call: CreateCall,
        progress: &mut dyn FnMut(u64, u64),
        cancel: &AtomicBool,
    ) -> Result<()> {
        super::input::bounded_keyfiles("keyfiles", &call.keyfiles)?;
        super::input::refuse_read_only(&call.host, "making a volume on it")?;
        let o = &call.options;
        let copts = self.create_options(caller, o)?;
        self.table.refuse_mounted(&call.host)?;
        // Mounted or attached outside tcd: not written over. A device
        // stays claimed until the volume is made.
        let _claim = crate::mount::in_use::claim(&call.host)?;
        // A filesystem that cannot be made is said before any header is
        // written.
        let fs = o.filesystem.unwrap_or_default();
        if let Some((tool, _)) = mkfs_tool(fs) {
            crate::mount::tools::find(tool)?;
            use tcd_proto::contract::options::NEW_VOLUME_HEADER_BYTES;
            let data = match o.hidden_size {
                Some(size) => size,
                None => {
                    // A host too small for the headers is said as such,
                    // not as too small for the filesystem.
                    let size = crate::volume::unlock::host_size(&call.host)?;
                    let min = NEW_VOLUME_HEADER_BYTES + 32 * 1024;
                    if size < min {
                        return Err(Error::VolumeTooSmall { size, min });
                    }
                    size - NEW_VOLUME_HEADER_BYTES
                }
            };
            if let Some(why) = fs.refuses(data) {
                return Err(Error::InvalidArgument(why));
            }
        }
        let given = credentials(
            call.password.clone(),
            call.keyfiles.clone(),
            o.pim.unwrap_or(0),
        );
        let kf = given.keyfile_refs();
        let creds = given.credentials(&kf);
        let engine = self.table.engine();
        let made = match o.hidden_size {
            Some(size) => {
                let outer = o.outer_password.clone().ok_or_else(|| {
                    Error::InvalidArgument("a hidden volume needs the outer password".into())
                })?;
                let outer = credentials(
                    outer,
                    o.outer_keyfiles.clone().unwrap_or_default(),
                    o.outer_pim.unwrap_or(0),
                );
                let okf = outer.keyfile_refs();
                let outer = outer.credentials(&okf);
                create::create_hidden(
                    engine, &call.host, outer, creds, size, &copts, progress, cancel,
                )?
            }
            None => create::create(engine, &call.host, creds, &copts, progress, cancel)?,
        };
        if let Some(tool) = mkfs_tool(o.filesystem.unwrap_or_default()) {
            self.format_new(caller, &call.host, creds, &copts, tool, cancel)?;
        }
        tracing::info!(
            offset = made.data_offset,
            size = made.data_size,
            "volume created"
        );
        Ok(())
    }

    /// Mounts the new volume as a block device only (through the mount
    /// table, so no other call can mount it meanwhile), makes the
    /// filesystem, and dismounts it. The new filesystem's root belongs to
    /// its creator (ext4; FAT and exFAT get their owner at mount).
    fn format_new(
        &self,
        caller: &Caller,
        host: &File,
        creds: Credentials<'_>,
        copts: &create::CreateOptions,
        tool: (&str, &[&str]),
        cancel: &AtomicBool,
    ) -> Result<()> {
        let mut search = SearchOptions::new();
        search.format = Some(copts.format);
        search.prf = Some(copts.prf);
        search.chain = Some(copts.chain);
        search.backend = copts.backend.clone();
        search.limits = copts.limits;
        search.caller = caller.uid;
        let req = MountRequest {
            host: super::input::dup(host)?,
            host_name: "the new volume".into(),
            creds,
            protect_hidden: None,
            search,
            read_only: false,
            read_write_asked: true,
            filesystem: Filesystem::None,
            mount_point: None,
            slot: None,
            fs_options: Default::default(),
            allow_non_empty: false,
            discard: false,
            // Making the filesystem is part of making the file.
            host_times: None,
            owner: (caller.uid, caller.gid),
            favorite: None,
            auto_dismount: Default::default(),
        };
        let m = self.table.mount(req, cancel)?;
        let root_owner = (!caller.is_root()).then_some((caller.uid, caller.gid));
        let made = make_filesystem(tool, &m.device, root_owner);
        let closed = self.table.dismount(m.id, false);
        made?;
        closed.map(|_| ())
    }
}
