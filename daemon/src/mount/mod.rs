//! Serving an open volume to the kernel and mounting its filesystem.
//!
//! The data path is user space: the volume is served as a file from FUSE
//! ([`fuse`]), a loop device is attached to that file, and the filesystem
//! inside is mounted from the loop device. [`BlockExport`] is the one seam:
//! ublk or NBD can serve the block device instead where a kernel has them.

pub(crate) mod fswatch;
pub(crate) mod fuse;
pub mod grow;
pub(crate) mod holders;
pub(crate) mod host_key;
pub(crate) mod in_use;
pub(crate) mod loopdev;
pub mod mountpoint;
pub(crate) mod overlay;
mod readahead;
pub(crate) mod session;
pub(crate) mod tools;
pub(crate) mod uring;
pub(crate) mod userfs;

use crate::error::{Error, Result};

use crate::volume::opened::OpenVolume;
use overlay::Overlay;
pub use session::Transport;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// How a volume file is served: the session's threads and the transport.
#[derive(Clone, Copy, Debug)]
pub struct Serving {
    pub threads: usize,
    pub transport: Transport,
}

/// A block device that presents a decrypted volume.
pub trait BlockExport: Send + Sync {
    /// The block device node (`/dev/loopN`).
    fn device(&self) -> &Path;
    /// Refuses every write from now on, at the device (the kernel fails
    /// it with `EPERM`) and behind it: for a read-only volume once its
    /// filesystem is mounted (any journal replayed).
    fn seal(&self) -> Result<()>;
    /// Takes the device down (after everything above it is unmounted).
    fn close(self: Box<Self>) -> Result<()>;
    /// Takes the device down once the kernel lets go of it, however long
    /// that takes: after a lazy unmount, the filesystem keeps the device
    /// open until its last user leaves. Blocks; run it on a thread of its
    /// own.
    fn close_when_released(self: Box<Self>) -> Result<()>;
}

/// FUSE file plus loop device.
pub struct FuseLoop {
    session: Option<session::Served>,
    folder: PathBuf,
    device: PathBuf,
    /// Opens of the volume file not yet released (answered).
    opens: fuse::Opens,
    /// A read-only volume's writes in memory, cleared when it stops.
    overlay: Option<Arc<Overlay>>,
}

impl FuseLoop {
    /// Serves `volume` under `folder` (created, private to root) and attaches
    /// a loop device with the volume's sector size.
    /// `discard`: let discards (TRIM) through to the host.
    pub fn start(
        volume: Arc<OpenVolume>,
        folder: &Path,
        serving: Serving,
        discard: bool,
    ) -> Result<FuseLoop> {
        Self::start_with_overlay(volume, folder, serving, discard, None)
    }

    /// [`FuseLoop::start`], taking a read-only volume's writes into
    /// `overlay` (in memory), with a writable loop device over them: a
    /// filesystem mounted read-only can replay its journal there.
    pub fn start_with_overlay(
        volume: Arc<OpenVolume>,
        folder: &Path,
        serving: Serving,
        discard: bool,
        overlay: Option<Arc<Overlay>>,
    ) -> Result<FuseLoop> {
        let io = |what: &str| {
            let what = what.to_owned();
            move |source| Error::Io { what, source }
        };
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(folder)
            .map_err(io("cannot make the volume's FUSE folder"))?;
        let read_only = volume.is_read_only() && overlay.is_none();
        let sector = volume.info().sector_size;
        let opens = fuse::Opens::default();
        let session = match session::serve(
            volume,
            folder,
            serving,
            discard,
            overlay.clone(),
            opens.clone(),
        ) {
            Ok(s) => {
                tracing::info!("{} served through {}", folder.display(), s.transport());
                s
            }
            Err(e) => {
                let _ = std::fs::remove_dir(folder);
                return Err(Error::Io {
                    what: "cannot serve the volume through FUSE".into(),
                    source: e,
                });
            }
        };
        raise_fuse_read_ahead(folder);
        let file = folder.join(fuse::FILE_NAME);
        match loopdev::attach(&file, sector, read_only, discard) {
            Ok(device) => Ok(FuseLoop {
                session: Some(session),
                folder: folder.to_path_buf(),
                device,
                opens,
                overlay,
            }),
            Err(e) => {
                session.umount_and_join();
                let _ = std::fs::remove_dir(folder);
                Err(e)
            }
        }
    }
}

use std::os::unix::fs::DirBuilderExt;

impl BlockExport for FuseLoop {
    fn device(&self) -> &Path {
        &self.device
    }

    fn seal(&self) -> Result<()> {
        if let Some(o) = &self.overlay {
            o.seal();
        }
        loopdev::set_read_only(&self.device, true).map_err(|e| Error::Io {
            what: format!("cannot make {} read-only", self.device.display()),
            source: e,
        })
    }

    fn close(self: Box<Self>) -> Result<()> {
        let file = self.folder.join(fuse::FILE_NAME);
        loopdev::detach_from(&self.device, &file)?;
        // The kernel lets go of the backing file after the detach returns
        // (and after any prober such as blkid closes the device): until
        // then the FUSE folder is busy.
        loopdev::wait_released(&self.device, &file, std::time::Duration::from_secs(10));
        (*self).stop_fuse()
    }

    fn close_when_released(self: Box<Self>) -> Result<()> {
        // Busy, the device is only marked to go when its last user closes
        // it (autoclear); nothing else of the daemon waits meanwhile.
        let file = self.folder.join(fuse::FILE_NAME);
        loopdev::detach_from(&self.device, &file)?;
        while loopdev::backed_by(&self.device, &file) {
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
        (*self).stop_fuse()
    }
}

impl FuseLoop {
    /// Unmounts the FUSE folder and ends its session, once the loop device
    /// has let go of the file.
    fn stop_fuse(mut self) -> Result<()> {
        // The kernel's release of the file reaches the session after the
        // loop device let go; unmounting before it is answered would end
        // the session with a reply still to send.
        self.opens.wait_released(std::time::Duration::from_secs(10));
        if let Some(s) = self.session.take() {
            let mut tries = 0;
            loop {
                match mountpoint::unmount(&self.folder, false) {
                    Ok(()) => break,
                    Err(Error::Busy(_)) if tries < 50 => {
                        tries += 1;
                        std::thread::sleep(std::time::Duration::from_millis(100));
                    }
                    Err(e) => {
                        // Nothing of ours uses it any more: let the kernel
                        // finish the unmount when the last user lets go.
                        tracing::warn!("FUSE folder still busy ({e}); detaching it lazily");
                        mountpoint::unmount(&self.folder, true)?;
                        break;
                    }
                }
            }
            // The session ends once its mount is gone.
            s.join();
        }
        if let Some(o) = self.overlay.take() {
            o.clear();
        }
        let _ = std::fs::remove_dir(&self.folder);
        Ok(())
    }
}

impl Drop for FuseLoop {
    fn drop(&mut self) {
        // Closed without `close` (an error path): take it all down anyway.
        if let Some(s) = self.session.take() {
            let _ = loopdev::detach_from(&self.device, &self.folder.join(fuse::FILE_NAME));
            s.umount_and_join();
            let _ = std::fs::remove_dir(&self.folder);
        }
        if let Some(o) = self.overlay.take() {
            o.clear();
        }
    }
}

/// FUSE may only lower its read-ahead below the kernel's default of
/// 128 KiB, so the loop device would read the volume file 128 KiB at a time,
/// on one core. Root raises it afterwards, as for any other disk. A
/// failure only costs speed.
fn raise_fuse_read_ahead(folder: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(folder) else {
        return;
    };
    let dev = meta.dev();
    let knob = format!(
        "/sys/class/bdi/{}:{}/read_ahead_kb",
        libc::major(dev),
        libc::minor(dev)
    );
    if let Err(e) = std::fs::write(&knob, "1024") {
        tracing::debug!("cannot raise {knob}: {e}");
    }
}

/// The filesystem type `blkid` finds on `device`, if any.
pub fn detect_filesystem(device: &Path) -> Result<Option<String>> {
    match tools::output(
        "blkid",
        [
            "-p".as_ref(),
            "-o".as_ref(),
            "value".as_ref(),
            "-s".as_ref(),
            "TYPE".as_ref(),
            device.as_os_str(),
        ],
    ) {
        Ok(t) if !t.is_empty() => Ok(Some(t)),
        Ok(_) => Ok(None),
        // blkid exits 2 when it finds nothing.
        Err(Error::ToolFailed { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}
