//! One queue of FUSE over io_uring: a ring on a thread of its own, its
//! entries' buffers, and the answer to each request that lands in one.

use super::abi::{self, InHeader, Out, op};
use crate::mount::fuse::{TTL, VolumeFile};
use fuser::Errno;
use io_uring::{IoUring, cqueue, opcode, squeue, types};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};

/// The connection to serve, and the size of a request's payload.
pub struct Start {
    pub fd: OwnedFd,
    pub payload: usize,
}

type Ring = IoUring<squeue::Entry128, cqueue::Entry>;

/// A ring entry's memory, the kernel's between a command's submission and
/// its completion, ours between a completion and the next submission.
struct Slot {
    header: Box<[u8]>,
    payload: Box<[u8]>,
    /// `iov[0]` the header, `iov[1]` the payload, read at registration.
    iov: Box<[libc::iovec; 2]>,
}

impl Slot {
    fn new(payload: usize) -> Slot {
        let mut header = vec![0u8; abi::HEADER_LEN].into_boxed_slice();
        let mut payload = vec![0u8; payload].into_boxed_slice();
        let iov = Box::new([
            libc::iovec {
                iov_base: header.as_mut_ptr().cast(),
                iov_len: header.len(),
            },
            libc::iovec {
                iov_base: payload.as_mut_ptr().cast(),
                iov_len: payload.len(),
            },
        ]);
        Slot {
            header,
            payload,
            iov,
        }
    }
}

/// The thread of queue `qid`: makes its ring, says whether it could, then
/// serves the connection it is given until the connection ends.
pub fn run(
    qid: u16,
    depth: usize,
    file: Arc<VolumeFile>,
    ready: Sender<std::io::Result<()>>,
    start: Receiver<Option<Start>>,
) {
    // One thread submits, and the kernel's work for the ring (copying a
    // request into an entry) runs when it waits.
    let ring = IoUring::<squeue::Entry128, cqueue::Entry>::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .build(2 * depth as u32);
    let mut ring = match ring {
        Ok(r) => {
            let _ = ready.send(Ok(()));
            r
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    drop(ready);
    let Ok(Some(start)) = start.recv() else {
        return;
    };
    // Not pinned to the queue's processor, as libfuse does: on two cores,
    // random 4 KiB reads ran at 189,000-199,000 per second unpinned against
    // 164,000-167,000 pinned (the loop device's worker and fio share them).
    let mut slots: Vec<Slot> = (0..depth).map(|_| Slot::new(start.payload)).collect();
    let fd = start.fd.as_raw_fd();
    let clean = serve(&mut ring, fd, qid, &mut slots, &file);
    drop(ring);
    if !clean {
        // An entry the kernel may still hold: its memory must outlive it.
        std::mem::forget(slots);
    }
}

/// The command for slot `i`: its registration, or its reply and the wait
/// for the next request.
fn command(fd: i32, qid: u16, i: usize, slot: &Slot, commit: Option<u64>) -> squeue::Entry128 {
    let (op, id) = match commit {
        None => (abi::CMD_REGISTER, 0),
        Some(id) => (abi::CMD_COMMIT_AND_FETCH, id),
    };
    let sqe = opcode::UringCmd80::new(types::Fd(fd), op)
        .cmd(abi::cmd_req(qid, id))
        .addr(Some(slot.iov.as_ptr() as u64))
        .build()
        .user_data(i as u64);
    with_iov_count(sqe)
}

/// Sets the entry's `len` (the iovec count the registration reads), which
/// the crate's builder leaves zero.
fn with_iov_count(sqe: squeue::Entry128) -> squeue::Entry128 {
    // SAFETY: `Entry128` is `repr(C)`: a `struct io_uring_sqe` (64 bytes,
    // integer fields and unions of integers) then 64 bytes of command, so
    // every bit pattern is valid; `len` is the `u32` at offset 24.
    let mut raw: [u8; 128] = unsafe { std::mem::transmute(sqe) };
    raw[24..28].copy_from_slice(&2u32.to_le_bytes());
    // SAFETY: as above, the same bytes with only `len` changed.
    unsafe { std::mem::transmute::<[u8; 128], squeue::Entry128>(raw) }
}

/// Serves until every entry has come back with an error (the connection
/// ended). Whether no entry is left with the kernel.
fn serve(ring: &mut Ring, fd: i32, qid: u16, slots: &mut [Slot], file: &VolumeFile) -> bool {
    let mut outstanding = 0usize;
    for (i, slot) in slots.iter().enumerate() {
        let sqe = command(fd, qid, i, slot, None);
        // SAFETY: the slot's buffers and iovecs live in `slots`, which
        // outlives the ring (dropped first, or forgotten if an entry may
        // still be the kernel's).
        if unsafe { ring.submission().push(&sqe) }.is_err() {
            return outstanding == 0;
        }
        outstanding += 1;
    }
    let mut released = 0usize;
    while outstanding > 0 {
        if let Err(e) = ring.submit_and_wait(1)
            && e.raw_os_error() != Some(libc::EINTR)
        {
            tracing::warn!("FUSE queue {qid} stopped: {e}");
            return false;
        }
        let done: Vec<(usize, i32)> = ring
            .completion()
            .map(|c| (c.user_data() as usize, c.result()))
            .collect();
        for (i, result) in done {
            outstanding -= 1;
            let Some(slot) = slots.get_mut(i) else {
                continue;
            };
            if result < 0 {
                ended(qid, i, result);
                continue;
            }
            let (commit, release) = answer(slot, file);
            released += usize::from(release);
            let sqe = command(fd, qid, i, slot, Some(commit));
            // SAFETY: as at registration.
            if unsafe { ring.submission().push(&sqe) }.is_ok() {
                outstanding += 1;
            }
        }
        if released > 0 {
            // A release counts once its reply is on its way: the dismount
            // waits for it.
            let _ = ring.submit();
            for _ in 0..std::mem::take(&mut released) {
                file.released();
            }
        }
    }
    true
}

/// Says why entry `i` of queue `qid` came back with `result`: the
/// connection's end is expected; anything else means the kernel refused
/// the entry and serves the volume through `/dev/fuse` instead, which the
/// log must say, since the volume was announced as served through io_uring.
fn ended(qid: u16, i: usize, result: i32) {
    let e = std::io::Error::from_raw_os_error(-result);
    if [libc::ENOTCONN, libc::ECONNABORTED, libc::ECANCELED].contains(&-result) {
        tracing::debug!("FUSE queue {qid} entry {i} ended: {e}");
    } else {
        tracing::warn!(
            "FUSE queue {qid} entry {i} refused by the kernel ({e}): requests go through /dev/fuse"
        );
    }
}

/// Answers the request in `slot`: the id to commit it under, and whether
/// it released the file.
fn answer(slot: &mut Slot, file: &VolumeFile) -> (u64, bool) {
    let header = InHeader::parse(&slot.header);
    let (commit, in_len) = abi::ring_entry(&slot.header);
    let in_len = in_len.min(slot.payload.len());
    let op_in: [u8; 128] = slot.header[abi::OP_IN..abi::OP_IN + 128]
        .try_into()
        .unwrap_or([0; 128]);
    let result = dispatch(header, &op_in, &mut slot.payload, in_len, file);
    match result {
        Ok(n) => abi::put_reply(&mut slot.header, header.unique, 0, n),
        Err(e) => abi::put_reply(&mut slot.header, header.unique, e.code(), 0),
    }
    (commit, header.opcode == op::RELEASE)
}

/// Copies a reply into the payload; its length.
fn reply(payload: &mut [u8], bytes: &[u8]) -> Result<usize, Errno> {
    let to = payload.get_mut(..bytes.len()).ok_or(Errno::EIO)?;
    to.copy_from_slice(bytes);
    Ok(bytes.len())
}

/// What the request asks of the volume file, answered into `payload`
/// (which holds the request's own payload of `in_len` bytes).
fn dispatch(
    h: InHeader,
    op_in: &[u8],
    payload: &mut [u8],
    in_len: usize,
    file: &VolumeFile,
) -> Result<usize, Errno> {
    let offset = abi::u64_at(op_in, 8);
    let size = abi::u32_at(op_in, 16);
    let mut out = Out::default();
    match h.opcode {
        op::LOOKUP => {
            let name = &payload[..in_len];
            let name = name.split(|b| *b == 0).next().unwrap_or_default();
            out.entry(&file.lookup(h.nodeid, name)?, TTL);
        }
        op::GETATTR => {
            out.attr_out(&file.getattr(h.nodeid)?, TTL);
        }
        op::OPEN => {
            file.open(h.nodeid, abi::u32_at(op_in, 0) as i32)?;
            // fh 0, FOPEN_DIRECT_IO (see the classic session's open).
            out.u64(0).u32(1).u32(0);
        }
        op::OPENDIR => {
            out.u64(0).u32(0).u32(0);
        }
        op::READ => {
            let n = (size as usize).min(payload.len());
            return file.read_into(h.nodeid, offset, &mut payload[..n]);
        }
        op::WRITE => {
            let len = (size as usize).min(in_len);
            out.u32(file.write(h.nodeid, offset, &mut payload[..len])?)
                .u32(0);
        }
        op::FALLOCATE => {
            let (length, mode) = (abi::u64_at(op_in, 16), abi::u32_at(op_in, 24));
            file.fallocate(h.nodeid, offset, length, mode as i32)?;
        }
        op::FSYNC | op::FLUSH => file.sync()?,
        op::RELEASE | op::RELEASEDIR => {}
        op::STATFS => {
            out.u64(file.blocks()).u64(0).u64(0).u64(1).u64(0);
            out.u32(512).u32(255).u32(512).u32(0);
            out.0.resize(80, 0);
        }
        op::READDIR => {
            for (i, (ino, kind, name)) in file.entries(h.nodeid, offset)?.into_iter().enumerate() {
                if out.0.len() + abi::dirent_len(name) > size as usize {
                    break;
                }
                out.dirent(ino, offset + i as u64 + 1, kind, name);
            }
        }
        _ => return Err(Errno::ENOSYS),
    }
    reply(payload, &out.0)
}
