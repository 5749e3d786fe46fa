//! A volume file served to the kernel: the classic `fuser` session, and
//! the io_uring queues beside it where the kernel takes them.

use super::fuse::{self, Opens};
use super::overlay::Overlay;
use super::uring;
use crate::volume::opened::OpenVolume;
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// How the kernel's requests reach the volume file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// io_uring queues where the kernel offers them, else `/dev/fuse`.
    Auto,
    /// Only `/dev/fuse`, read by the session's threads.
    Classic,
}

/// A served volume file: the `fuser` session and, when the kernel took
/// them, the io_uring queues.
pub struct Served {
    pub session: fuser::BackgroundSession,
    pub rings: Option<uring::Running>,
}

impl Served {
    /// Which transport carries the requests.
    pub fn transport(&self) -> String {
        match &self.rings {
            Some(r) => format!("io_uring ({} queues)", r.queues()),
            None => "/dev/fuse".into(),
        }
    }

    /// Waits for the session and the queues to end (after the unmount).
    pub fn join(self) {
        let _ = self.session.join();
        if let Some(r) = self.rings {
            r.join();
        }
    }

    /// Unmounts, then waits as [`Served::join`].
    pub fn umount_and_join(self) {
        let _ = self.session.umount_and_join();
        if let Some(r) = self.rings {
            r.join();
        }
    }
}

/// Serves `volume` as `dir/volume` until the returned session is dropped
/// or unmounted. Only root may open it.
pub fn serve(
    volume: Arc<OpenVolume>,
    dir: &Path,
    serving: super::Serving,
    discard: bool,
    overlay: Option<Arc<Overlay>>,
    opens: Opens,
) -> std::io::Result<Served> {
    use fuser::{Config, MountOption, SessionACL};
    let mut options = vec![
        MountOption::FSName("tcd".into()),
        MountOption::Subtype("tcd".into()),
        MountOption::NoDev,
        MountOption::NoSuid,
        MountOption::NoExec,
    ];
    if volume.is_read_only() && overlay.is_none() {
        options.push(MountOption::RO);
    }
    let mut config = Config::default();
    config.mount_options = options;
    config.acl = SessionACL::Owner;
    config.n_threads = Some(serving.threads.max(1));
    config.clone_fd = true;
    let file = Arc::new(fuse::VolumeFile::new(volume, discard, overlay, opens));
    // The rings come first: once the kernel has agreed to io_uring, it
    // holds every request until all queues are registered, so it is asked
    // for only when they can be.
    let rings = match serving.transport {
        Transport::Auto => uring::prepare(Arc::clone(&file)),
        Transport::Classic => None,
    };
    let uring = Arc::new(AtomicBool::new(false));
    let fuser = fuse::Fuser::new(file, rings.is_some(), Arc::clone(&uring));
    let session = fuser::Session::new(fuser, dir, &config)?;
    let rings = match rings {
        Some(r) if uring.load(Ordering::SeqCst) => {
            Some(r.start(session.as_fd(), fuse::MAX_REQUEST as usize)?)
        }
        Some(r) => {
            r.abandon();
            None
        }
        None => None,
    };
    Ok(Served {
        session: session.spawn()?,
        rings,
    })
}
