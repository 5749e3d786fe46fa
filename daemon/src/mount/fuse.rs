//! The decrypted data area of an open volume as one file in a FUSE
//! filesystem, as VeraCrypt serves it where the kernel has no dm-crypt: the
//! loop device reads and writes that file, and every request decrypts or
//! encrypts through the engine.

use super::overlay::Overlay;
use super::readahead::{ReadAhead, Source};
use crate::error::Error;
use crate::volume::opened::{OpenVolume, UNIT};
use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, InitFlags,
    KernelConfig, LockOwner, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, WriteFlags,
};
use std::ffi::OsStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// The name of the one file, in the FUSE folder.
pub const FILE_NAME: &str = "volume";
const FILE_INO: INodeNo = INodeNo(2);
/// The largest request the kernel sends us, and its read-ahead: large
/// requests keep the cipher at full width and the threads busy.
pub(super) const MAX_REQUEST: u32 = 1 << 20;
/// Requests in flight from the loop device at once: its queue depth.
const MAX_BACKGROUND: u16 = 128;
pub(super) const TTL: Duration = Duration::from_secs(3600);

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

    /// Writes `data` at `offset`; whole sectors are encrypted in place, so
    /// `data` holds ciphertext afterwards.
    fn write_bytes(&self, offset: u64, data: &mut [u8]) -> Result<u32, Errno> {
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
            let written = self.volume.write_at(data, offset).map_err(errno);
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
    fn read_into(&self, offset: u64, out: &mut [u8]) -> Result<usize, Errno> {
        let Some((start, aligned_end, end)) = span(&self.0, offset, out.len() as u64) else {
            return Ok(0);
        };
        if start != offset || aligned_end != end {
            // Part of a sector: through a buffer of whole ones.
            let data = self.read(offset, out.len() as u64)?;
            out[..data.len()].copy_from_slice(&data);
            return Ok(data.len());
        }
        let n = (end - offset) as usize;
        self.0.read_at(&mut out[..n], offset).map_err(errno)?;
        if let Some(overlay) = &self.1 {
            overlay.apply(offset, &mut out[..n]);
        }
        Ok(n)
    }

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

/// The requests of the volume file, whichever transport brings them: the
/// classic `/dev/fuse` session ([`Fuser`]) or the io_uring queues
/// ([`super::uring`]).
impl VolumeFile {
    pub(super) fn lookup(&self, parent: u64, name: &[u8]) -> Result<FileAttr, Errno> {
        match self.attr(FILE_INO) {
            Some(attr) if parent == INodeNo::ROOT.0 && name == FILE_NAME.as_bytes() => Ok(attr),
            _ => Err(Errno::ENOENT),
        }
    }

    pub(super) fn getattr(&self, ino: u64) -> Result<FileAttr, Errno> {
        self.attr(INodeNo(ino)).ok_or(Errno::ENOENT)
    }

    pub(super) fn open(&self, ino: u64, flags: i32) -> Result<(), Errno> {
        if INodeNo(ino) != FILE_INO {
            return Err(Errno::EISDIR);
        }
        let writing = flags & libc::O_ACCMODE != libc::O_RDONLY;
        if writing && self.read_only() {
            return Err(Errno::EROFS);
        }
        self.opens.add();
        Ok(())
    }

    /// Counted once the reply is out: the dismount waits for it.
    pub(super) fn released(&self) {
        self.opens.released();
    }

    pub(super) fn read(&self, ino: u64, offset: u64, size: u32) -> Result<Vec<u8>, Errno> {
        if INodeNo(ino) != FILE_INO {
            return Err(Errno::EISDIR);
        }
        tracing::trace!(offset, size, "read");
        self.ahead.read(offset, u64::from(size))
    }

    /// As [`VolumeFile::read`], into a request's reply buffer.
    pub(super) fn read_into(&self, ino: u64, offset: u64, out: &mut [u8]) -> Result<usize, Errno> {
        if INodeNo(ino) != FILE_INO {
            return Err(Errno::EISDIR);
        }
        tracing::trace!(offset, size = out.len(), "read");
        self.ahead.read_into(offset, out)
    }

    pub(super) fn write(&self, ino: u64, offset: u64, data: &mut [u8]) -> Result<u32, Errno> {
        if INodeNo(ino) != FILE_INO {
            return Err(Errno::EISDIR);
        }
        tracing::trace!(offset, size = data.len(), "write");
        self.write_bytes(offset, data)
    }

    /// The loop device turns discards into hole punches of this file.
    /// Zeroing a range is refused, so the kernel writes zeros instead
    /// (a hole would read back as garbage, not zeros).
    pub(super) fn fallocate(
        &self,
        ino: u64,
        offset: u64,
        length: u64,
        mode: i32,
    ) -> Result<(), Errno> {
        if INodeNo(ino) != FILE_INO {
            return Err(Errno::EISDIR);
        }
        let punch = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        if !self.discard || mode != punch {
            return Err(Errno::EOPNOTSUPP);
        }
        tracing::trace!(offset, length, "discard");
        // Only whole sectors inside the volume.
        let start = offset.div_ceil(UNIT) * UNIT;
        let end = offset.saturating_add(length).min(self.volume.size()) / UNIT * UNIT;
        if start >= end {
            return Ok(());
        }
        let result = self.volume.discard(start, end - start).map_err(errno);
        self.ahead.written(start, end - start);
        result
    }

    /// Unlike the FUSE service of TrueCrypt and VeraCrypt, flush and fsync
    /// reach the host file.
    pub(super) fn sync(&self) -> Result<(), Errno> {
        self.volume.sync().map_err(errno)
    }

    /// The folder's entries from `offset` on: (inode, kind, name).
    pub(super) fn entries(
        &self,
        ino: u64,
        offset: u64,
    ) -> Result<Vec<(u64, FileType, &'static str)>, Errno> {
        if INodeNo(ino) != INodeNo::ROOT {
            return Err(Errno::ENOTDIR);
        }
        let entries = [
            (INodeNo::ROOT.0, FileType::Directory, "."),
            (INodeNo::ROOT.0, FileType::Directory, ".."),
            (FILE_INO.0, FileType::RegularFile, FILE_NAME),
        ];
        Ok(entries.into_iter().skip(offset as usize).collect())
    }

    /// The file's size in 512-byte blocks, for statfs.
    pub(super) fn blocks(&self) -> u64 {
        self.volume.size() / 512
    }

    /// The session ended: the daemon's own dismount, or the connection cut
    /// under it (`/sys/fs/fuse/connections/N/abort`, an unmount from
    /// outside), which loses what the kernel still had to write.
    pub(super) fn ended(&self) {
        self.volume.health().fuse_ended();
    }
}

/// The volume file on the classic `/dev/fuse` session of `fuser`.
pub(super) struct Fuser {
    file: Arc<VolumeFile>,
    /// Ask the kernel for io_uring queues (the rings are ready).
    want_uring: bool,
    /// Whether the kernel offered them and they were asked for.
    uring: Arc<AtomicBool>,
}

impl Fuser {
    /// `want_uring`: ask the kernel for io_uring queues; whether it agreed
    /// is set in `uring`.
    pub(super) fn new(file: Arc<VolumeFile>, want_uring: bool, uring: Arc<AtomicBool>) -> Fuser {
        Fuser {
            file,
            want_uring,
            uring,
        }
    }
}

fn reply_empty(result: Result<(), Errno>, reply: ReplyEmpty) {
    match result {
        Ok(()) => reply.ok(),
        Err(e) => reply.error(e),
    }
}

impl Filesystem for Fuser {
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
        if self.want_uring {
            let offered = config
                .add_capabilities(InitFlags::FUSE_OVER_IO_URING)
                .is_ok();
            self.uring.store(offered, Ordering::SeqCst);
        }
        Ok(())
    }

    fn destroy(&mut self) {
        self.file.ended();
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        match self.file.lookup(parent.0, name.as_encoded_bytes()) {
            Ok(attr) => reply.entry(&TTL, &attr, fuser::Generation(0)),
            Err(e) => reply.error(e),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.file.getattr(ino.0) {
            Ok(attr) => reply.attr(&TTL, &attr),
            Err(e) => reply.error(e),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        match self.file.open(ino.0, flags.0) {
            Ok(()) => reply.opened(FileHandle(0), FopenFlags::FOPEN_DIRECT_IO),
            Err(e) => reply.error(e),
        }
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
        reply.ok();
        self.file.released();
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
        match self.file.read(ino.0, offset, size) {
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
        // The session's buffer is shared: encrypt a copy.
        match self.file.write(ino.0, offset, &mut data.to_vec()) {
            Ok(n) => reply.written(n),
            Err(e) => reply.error(e),
        }
    }

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
        reply_empty(self.file.fallocate(ino.0, offset, length, mode), reply);
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply_empty(self.file.sync(), reply);
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply_empty(self.file.sync(), reply);
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        match self.file.entries(ino.0, offset) {
            Ok(entries) => {
                for (i, (ino, kind, name)) in entries.into_iter().enumerate() {
                    if reply.add(INodeNo(ino), offset + i as u64 + 1, kind, name) {
                        break;
                    }
                }
                reply.ok();
            }
            Err(e) => reply.error(e),
        }
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        reply.statfs(self.file.blocks(), 0, 0, 1, 0, 512, 255, 512);
    }
}
