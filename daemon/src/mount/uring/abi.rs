//! The bytes of the FUSE protocol that travel through the io_uring
//! transport: the request and reply headers, the per-operation arguments
//! the volume file answers, and the ring entry's own header. Little-endian
//! fields at fixed offsets, as `<linux/fuse.h>` lays them out.

use fuser::{FileAttr, FileType};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `struct fuse_uring_req_header`: the request header (`in_out`, 128
/// bytes), the operation's own header (`op_in`, 128 bytes), then
/// `struct fuse_uring_ent_in_out`.
pub const HEADER_LEN: usize = 288;
pub const OP_IN: usize = 128;
const ENT_COMMIT_ID: usize = 264;
const ENT_PAYLOAD_SZ: usize = 272;

/// `cmd_op` of the two commands the transport sends.
pub const CMD_REGISTER: u32 = 1;
pub const CMD_COMMIT_AND_FETCH: u32 = 2;

/// Operation codes (`enum fuse_opcode`).
pub mod op {
    pub const LOOKUP: u32 = 1;
    pub const GETATTR: u32 = 3;
    pub const OPEN: u32 = 14;
    pub const READ: u32 = 15;
    pub const WRITE: u32 = 16;
    pub const STATFS: u32 = 17;
    pub const RELEASE: u32 = 18;
    pub const FSYNC: u32 = 20;
    pub const FLUSH: u32 = 25;
    pub const OPENDIR: u32 = 27;
    pub const READDIR: u32 = 28;
    pub const RELEASEDIR: u32 = 29;
    pub const FALLOCATE: u32 = 43;
}

pub fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

pub fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// What a request's `struct fuse_in_header` says.
#[derive(Debug, Clone, Copy)]
pub struct InHeader {
    pub opcode: u32,
    pub unique: u64,
    pub nodeid: u64,
}

impl InHeader {
    pub fn parse(header: &[u8]) -> InHeader {
        InHeader {
            opcode: u32_at(header, 4),
            unique: u64_at(header, 8),
            nodeid: u64_at(header, 16),
        }
    }
}

/// The request id to commit the reply under, and the payload's length.
pub fn ring_entry(header: &[u8]) -> (u64, usize) {
    (
        u64_at(header, ENT_COMMIT_ID),
        u32_at(header, ENT_PAYLOAD_SZ) as usize,
    )
}

/// Writes the reply's `struct fuse_out_header` and the payload's length.
pub fn put_reply(header: &mut [u8], unique: u64, error: i32, payload_len: usize) {
    let len = 16 + payload_len as u32;
    header[0..4].copy_from_slice(&len.to_le_bytes());
    header[4..8].copy_from_slice(&(-error).to_le_bytes());
    header[8..16].copy_from_slice(&unique.to_le_bytes());
    header[ENT_PAYLOAD_SZ..ENT_PAYLOAD_SZ + 4].copy_from_slice(&(payload_len as u32).to_le_bytes());
}

/// `struct fuse_uring_cmd_req` for queue `qid`, committing `commit_id`.
pub fn cmd_req(qid: u16, commit_id: u64) -> [u8; 80] {
    let mut cmd = [0u8; 80];
    cmd[8..16].copy_from_slice(&commit_id.to_le_bytes());
    cmd[16..18].copy_from_slice(&qid.to_le_bytes());
    cmd
}

/// Appends little-endian fields.
#[derive(Default)]
pub struct Out(pub Vec<u8>);

impl Out {
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// A validity time as seconds and nanoseconds.
    fn valid(&mut self, ttl: Duration) -> (u64, u32) {
        (ttl.as_secs(), ttl.subsec_nanos())
    }

    /// `struct fuse_attr`.
    pub fn attr(&mut self, a: &FileAttr) -> &mut Self {
        let time = |t: SystemTime| {
            let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
            (d.as_secs(), d.subsec_nanos())
        };
        let (at, an) = time(a.atime);
        let (mt, mn) = time(a.mtime);
        let (ct, cn) = time(a.ctime);
        let kind = match a.kind {
            FileType::Directory => libc::S_IFDIR,
            _ => libc::S_IFREG,
        };
        self.u64(a.ino.0).u64(a.size).u64(a.blocks);
        self.u64(at).u64(mt).u64(ct).u32(an).u32(mn).u32(cn);
        self.u32(kind | u32::from(a.perm)).u32(a.nlink);
        self.u32(a.uid)
            .u32(a.gid)
            .u32(a.rdev)
            .u32(a.blksize)
            .u32(a.flags)
    }

    /// `struct fuse_entry_out`.
    pub fn entry(&mut self, a: &FileAttr, ttl: Duration) -> &mut Self {
        let (s, n) = self.valid(ttl);
        self.u64(a.ino.0).u64(0).u64(s).u64(s).u32(n).u32(n).attr(a)
    }

    /// `struct fuse_attr_out`.
    pub fn attr_out(&mut self, a: &FileAttr, ttl: Duration) -> &mut Self {
        let (s, n) = self.valid(ttl);
        self.u64(s).u32(n).u32(0).attr(a)
    }

    /// `struct fuse_dirent`, padded to 8 bytes.
    pub fn dirent(&mut self, ino: u64, next: u64, kind: FileType, name: &str) -> &mut Self {
        let kind = match kind {
            FileType::Directory => libc::DT_DIR,
            _ => libc::DT_REG,
        };
        self.u64(ino)
            .u64(next)
            .u32(name.len() as u32)
            .u32(u32::from(kind));
        self.0.extend_from_slice(name.as_bytes());
        self.0.resize(self.0.len().next_multiple_of(8), 0);
        self
    }
}

/// The byte length of one `fuse_dirent` naming `name`.
pub fn dirent_len(name: &str) -> usize {
    (24 + name.len()).next_multiple_of(8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuser::INodeNo;

    fn attr() -> FileAttr {
        FileAttr {
            ino: INodeNo(2),
            size: 1 << 20,
            blocks: 2048,
            atime: UNIX_EPOCH,
            mtime: UNIX_EPOCH,
            ctime: UNIX_EPOCH,
            crtime: UNIX_EPOCH,
            kind: FileType::RegularFile,
            perm: 0o600,
            nlink: 1,
            uid: 0,
            gid: 0,
            rdev: 0,
            blksize: 512,
            flags: 0,
        }
    }

    #[test]
    fn replies_have_the_kernel_s_sizes() {
        // sizeof(struct fuse_attr) 88, fuse_entry_out 128, fuse_attr_out 104.
        assert_eq!(Out::default().attr(&attr()).0.len(), 88);
        assert_eq!(Out::default().entry(&attr(), Duration::ZERO).0.len(), 128);
        assert_eq!(
            Out::default().attr_out(&attr(), Duration::ZERO).0.len(),
            104
        );
        let mut d = Out::default();
        d.dirent(2, 3, FileType::RegularFile, "volume");
        assert_eq!(d.0.len(), dirent_len("volume"));
        assert_eq!(d.0.len(), 32);
    }

    #[test]
    fn a_reply_header_carries_the_negated_error_and_the_payload_length() {
        let mut h = [0u8; HEADER_LEN];
        put_reply(&mut h, 42, libc::EIO, 8);
        assert_eq!(u32_at(&h, 0), 24);
        assert_eq!(u32_at(&h, 4) as i32, -libc::EIO);
        assert_eq!(u64_at(&h, 8), 42);
        assert_eq!(ring_entry(&h).1, 8);
    }
}
