//! The decrypted data area of an open volume as one file in a FUSE
//! filesystem, as VeraCrypt serves it where the kernel has no dm-crypt: the
//! loop device reads and writes that file, and every request decrypts or
//! encrypts through the engine.

use super::overlay::Overlay;
use super::readahead::{ReadAhead, Source};
use crate::error::Error;
use crate::volume::opened::{OpenVolume, UNIT};
use fuser::{
    Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, InitFlags,
    KernelConfig, LockOwner, MountOption, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory,
    ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, SessionACL, WriteFlags,
};
use std::ffi::OsStr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// The name of the one file, in the FUSE folder.
pub const FILE_NAME: &str = "volume";
const FILE_INO: INodeNo = INodeNo(2);
/// The largest request the kernel sends us, and its read-ahead: large
/// requests keep the cipher at full width and the threads busy.
const MAX_REQUEST: u32 = 1 << 20;
/// Requests in flight from the loop device at once: its queue depth.
const MAX_BACKGROUND: u16 = 128;
const TTL: Duration = Duration::from_secs(3600);

/// Opens of the volume file whose release the session has not answered
/// yet: the FUSE folder is unmounted only once none is left, so that no
/// reply goes to a connection already gone.
#[derive(Clone, Default)]
pub struct Opens(Arc<(Mutex<u64>, std::sync::Condvar)>);

impl Opens {
    fn add(&self) {
        *self.0.0.lock().unwrap_or_else(|p| p.into_inner()) += 1;
    }

    fn released(&self) {
        let mut n = self.0.0.lock().unwrap_or_else(|p| p.into_inner());
        *n = n.saturating_sub(1);
        self.0.1.notify_all();
    }

    /// Waits (up to `limit`) until every open has been released.
    pub fn wait_released(&self, limit: Duration) {
        let n = self.0.0.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self.0.1.wait_timeout_while(n, limit, |n| *n > 0);
    }
}

/// The FUSE side of a mounted volume.
pub struct VolumeFile {
    volume: Arc<OpenVolume>,
    ahead: ReadAhead<Plain>,
    /// Serialises the read-modify-write of requests that are not whole
    /// sectors (the loop device never sends them; other readers may).
    partial: Mutex<()>,
    /// Discards (TRIM) reach the host; off unless the mount allows them,
    /// since they show which blocks hold data.
    discard: bool,
    /// A read-only volume's writes, kept in memory (see [`Overlay`]).
    overlay: Option<Arc<Overlay>>,
    created: SystemTime,
    opens: Opens,
}

impl VolumeFile {
    pub fn new(
        volume: Arc<OpenVolume>,
        discard: bool,
        overlay: Option<Arc<Overlay>>,
        opens: Opens,
    ) -> Self {
        VolumeFile {
            opens,
            ahead: ReadAhead::new(Arc::new(Plain(Arc::clone(&volume), overlay.clone()))),
            volume,
            partial: Mutex::new(()),
            discard,
            overlay,
            created: SystemTime::now(),
        }
    }

    /// Whether writes are refused: a read-only volume, unless an overlay
    /// takes them.
    fn read_only(&self) -> bool {
        match &self.overlay {
            Some(o) => o.is_sealed(),
            None => self.volume.is_read_only(),
        }
    }

    fn attr(&self, ino: INodeNo) -> Option<FileAttr> {
        let (kind, size, perm, nlink) = match ino {
            INodeNo::ROOT => (FileType::Directory, 0, 0o700, 2),
            FILE_INO => (
                FileType::RegularFile,
                self.volume.size(),
                if self.read_only() { 0o400 } else { 0o600 },
                1,
            ),
            _ => return None,
        };
        Some(FileAttr {
            ino,
            size,
            blocks: size.div_ceil(512),
            atime: self.created,
            mtime: self.created,
            ctime: self.created,
            crtime: self.created,
            kind,
            perm,
            nlink,
            uid: 0,
            gid: 0,
            rdev: 0,
            flags: 0,
            blksize: self.volume.info().sector_size,
        })
    }

    fn write_bytes(&self, offset: u64, data: &[u8]) -> Result<u32, Errno> {
        let len = data.len() as u64;
        if offset
            .checked_add(len)
            .is_none_or(|end| end > self.volume.size())
        {
            // The file cannot grow: the volume has a fixed size.
            return Err(Errno::ENOSPC);
        }
        if let Some(overlay) = &self.overlay {
            // Never the volume: the overlay reads it for partial sectors.
            let written = overlay.write(offset, data, |at, buf| {
                self.volume.read_at(buf, at).map_err(errno)
            });
            self.ahead.written(offset, len);
            written?;
            return Ok(data.len() as u32);
        }
        if offset.is_multiple_of(UNIT) && len.is_multiple_of(UNIT) {
            let mut buf = data.to_vec();
            let written = self.volume.write_at(&mut buf, offset).map_err(errno);
            self.ahead.written(offset, len);
            written?;
            return Ok(data.len() as u32);
        }
        let _guard = self.partial.lock().unwrap_or_else(|p| p.into_inner());
        let Some((start, aligned_end, _)) = span(&self.volume, offset, len) else {
            return Ok(0);
        };
        let mut buf = vec![0u8; (aligned_end - start) as usize];
        self.volume.read_at(&mut buf, start).map_err(errno)?;
        let from = (offset - start) as usize;
        buf[from..from + data.len()].copy_from_slice(data);
        let written = self.volume.write_at(&mut buf, start).map_err(errno);
        self.ahead.written(start, aligned_end - start);
        written?;
        Ok(data.len() as u32)
    }
}

/// The sector-aligned span covering `len` bytes at `offset`, clipped to
/// the volume: (aligned start, aligned end, end).
fn span(volume: &OpenVolume, offset: u64, len: u64) -> Option<(u64, u64, u64)> {
    let size = volume.size();
    let end = offset.checked_add(len)?.min(size);
    if offset >= end {
        return None;
    }
    let start = offset / UNIT * UNIT;
    let aligned_end = end.div_ceil(UNIT) * UNIT;
    Some((start, aligned_end.min(size.div_ceil(UNIT) * UNIT), end))
}

/// Plaintext from the volume (under the overlay, if any), for reads and
/// read-ahead.
struct Plain(Arc<OpenVolume>, Option<Arc<Overlay>>);

impl Source for Plain {
    fn read(&self, offset: u64, len: u64) -> Result<Vec<u8>, Errno> {
        let Some((start, aligned_end, end)) = span(&self.0, offset, len) else {
            return Ok(Vec::new());
        };
        let mut buf = vec![0u8; (aligned_end - start) as usize];
        self.0.read_at(&mut buf, start).map_err(errno)?;
        let from = (offset - start) as usize;
        buf.truncate(from + (end - offset) as usize);
        buf.drain(..from);
        if let Some(overlay) = &self.1 {
            overlay.apply(offset, &mut buf);
        }
        Ok(buf)
    }
}

/// What the filesystem above sees for a failed request.
fn errno(e: Error) -> Errno {
    match e {
        Error::ReadOnly => Errno::EROFS,
        Error::HiddenVolumeProtected => Errno::EIO,
        Error::InvalidArgument(_) => Errno::EINVAL,
        Error::Io { source, .. } => source.raw_os_error().map_or(Errno::EIO, Errno::from_i32),
        other => {
            tracing::error!("volume request failed: {other}");
            Errno::EIO
        }
    }
}

impl Filesystem for VolumeFile {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // Ask for large requests; the kernel may grant less.
        let _ = config.set_max_write(MAX_REQUEST);
        let _ = config.set_max_readahead(MAX_REQUEST);
        // The loop device submits its requests to the volume file
        // asynchronously (direct I/O): with asynchronous direct I/O here,
        // up to `MAX_BACKGROUND` of them reach the threads at once instead
        // of one per loop worker, which random I/O at a queue depth needs.
        if config.add_capabilities(InitFlags::FUSE_ASYNC_DIO).is_err() {
            tracing::debug!("the kernel has no asynchronous direct I/O for FUSE");
        }
        let _ = config.set_max_background(MAX_BACKGROUND);
        let _ = config.set_congestion_threshold(MAX_BACKGROUND);
        Ok(())
    }

    /// The session ended: the daemon's own dismount, or the connection cut
    /// under it (`/sys/fs/fuse/connections/N/abort`, an unmount from
    /// outside), which loses what the kernel still had to write.
    fn destroy(&mut self) {
        self.volume.health().fuse_ended();
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match (parent, self.attr(FILE_INO)) {
            (INodeNo::ROOT, Some(attr)) if name == FILE_NAME => {
                reply.entry(&TTL, &attr, fuser::Generation(0));
            }
            _ => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(attr) => reply.attr(&TTL, &attr),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        if ino != FILE_INO {
            return reply.error(Errno::EISDIR);
        }
        let writing = flags.0 & libc::O_ACCMODE != libc::O_RDONLY;
        if writing && self.read_only() {
            return reply.error(Errno::EROFS);
        }
        // Direct I/O: the loop device and the filesystem above keep their
        // own page cache; caching the decrypted file here too would cost a
        // copy per request and hold a second copy of the plaintext (writes
        // ran 2-4x faster without it).
        self.opens.add();
        reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO);
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        // Counted once the reply is out: the dismount waits for it.
        reply.ok();
        self.opens.released();
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        if ino != FILE_INO {
            return reply.error(Errno::EISDIR);
        }
        tracing::trace!(offset, size, "read");
        match self.ahead.read(offset, u64::from(size)) {
            Ok(data) => reply.data(&data),
            Err(e) => reply.error(e),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        if ino != FILE_INO {
            return reply.error(Errno::EISDIR);
        }
        tracing::trace!(offset, size = data.len(), "write");
        match self.write_bytes(offset, data) {
            Ok(n) => reply.written(n),
            Err(e) => reply.error(e),
        }
    }

    /// The loop device turns discards into hole punches of this file.
    /// Zeroing a range is refused, so the kernel writes zeros instead
    /// (a hole would read back as garbage, not zeros).
    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        if ino != FILE_INO {
            return reply.error(Errno::EISDIR);
        }
        let punch = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        if !self.discard || mode != punch {
            return reply.error(Errno::EOPNOTSUPP);
        }
        tracing::trace!(offset, length, "discard");
        // Only whole sectors inside the volume.
        let start = offset.div_ceil(UNIT) * UNIT;
        let end = offset.saturating_add(length).min(self.volume.size()) / UNIT * UNIT;
        if start >= end {
            return reply.ok();
        }
        let result = self.volume.discard(start, end - start).map_err(errno);
        self.ahead.written(start, end - start);
        match result {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(e),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // Unlike the FUSE service of TrueCrypt and VeraCrypt, flush and fsync
        // reach the host file.
        match self.volume.sync() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.volume.sync() {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(errno(e)),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        if ino != INodeNo::ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let entries = [
            (INodeNo::ROOT, FileType::Directory, "."),
            (INodeNo::ROOT, FileType::Directory, ".."),
            (FILE_INO, FileType::RegularFile, FILE_NAME),
        ];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, i as u64 + 1, *kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let blocks = self.volume.size() / 512;
        reply.statfs(blocks, 0, 0, 1, 0, 512, 255, 512);
    }
}

/// Serves `volume` as `dir/volume` until the returned session is dropped
/// or unmounted. Only root may open it.
pub fn serve(
    volume: Arc<OpenVolume>,
    dir: &Path,
    threads: usize,
    discard: bool,
    overlay: Option<Arc<Overlay>>,
    opens: Opens,
) -> std::io::Result<fuser::BackgroundSession> {
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
    config.n_threads = Some(threads.max(1));
    config.clone_fd = true;
    fuser::spawn_mount(
        VolumeFile::new(volume, discard, overlay, opens),
        dir,
        &config,
    )
}
