//! A copy-on-write layer in memory over a read-only volume.
//!
//! A journaling filesystem left dirty by an unclean stop (a daemon killed
//! during fsync'ed writes) shows its last fsync'ed files only after its
//! journal is replayed, and the kernel replays a journal only onto a
//! writable device. A read-only mount must never write the container, so
//! the FUSE file of a read-only volume takes writes into this overlay:
//! whole 512-byte sectors in memory, read back over the volume's own
//! bytes, never written to the host. The loop device over it is writable
//! while the filesystem is mounted read-only, and the kernel replays its
//! journal into RAM during that mount.
//!
//! The overlay holds decrypted data: it is bounded ([`LIMIT`]), zeroized
//! when a sector is overwritten or the overlay is cleared or dropped, and
//! cleared when the volume is dismounted. Once sealed it refuses every
//! write, as a read-only file: at once for a filesystem that has no
//! journal to replay, and for every filesystem once it is mounted, when
//! the loop device is made read-only too, so nothing written afterwards
//! is kept in memory and lost at the dismount.

use crate::volume::opened::UNIT;
use fuser::Errno;
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use zeroize::Zeroize;

/// The most a replay may write into memory. ext4's largest default journal
/// (mke2fs, on filesystems of 128 GiB and more) is 1 GiB, but a replay
/// writes each block once however often the journal holds it, and what
/// an fsync-heavy workload leaves is far less; the figure stays well
/// below what the daemon may lock.
pub const LIMIT: u64 = 256 << 20;

const SECTOR: usize = UNIT as usize;

type Sector = Box<[u8; SECTOR]>;

/// Filesystems whose read-only mount replays a journal or log when the
/// device is writable (and only then): ext3 and ext4 (jbd2), XFS (its
/// log), btrfs (its log tree). Other filesystems get a sealed overlay.
pub fn replays_journal(fs_type: &str) -> bool {
    matches!(fs_type, "ext3" | "ext4" | "xfs" | "btrfs")
}

/// Sectors written over a read-only volume, kept in memory.
pub struct Overlay {
    /// Sector number (offset / 512) to its bytes.
    sectors: Mutex<BTreeMap<u64, Sector>>,
    limit: u64,
    sealed: AtomicBool,
    /// A write was refused because the overlay was full.
    exceeded: AtomicBool,
}

impl Overlay {
    /// An empty overlay that holds at most `limit` bytes.
    pub fn new(limit: u64) -> Overlay {
        Overlay {
            sectors: Mutex::default(),
            limit,
            sealed: AtomicBool::new(false),
            exceeded: AtomicBool::new(false),
        }
    }

    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Sector>> {
        self.sectors.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Refuses every write from now on.
    pub fn seal(&self) {
        self.sealed.store(true, Ordering::Relaxed);
    }

    pub fn is_sealed(&self) -> bool {
        self.sealed.load(Ordering::Relaxed)
    }

    /// Whether a write was refused for want of room.
    pub fn exceeded(&self) -> bool {
        self.exceeded.load(Ordering::Relaxed)
    }

    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The bytes held.
    pub fn bytes(&self) -> u64 {
        self.map().len() as u64 * UNIT
    }

    /// Lays what the overlay holds over `buf`, the volume's bytes from
    /// `offset` (any alignment).
    pub fn apply(&self, offset: u64, buf: &mut [u8]) {
        let Some(end) = offset.checked_add(buf.len() as u64) else {
            return;
        };
        if buf.is_empty() {
            return;
        }
        let map = self.map();
        if map.is_empty() {
            return;
        }
        for (&n, sector) in map.range(offset / UNIT..end.div_ceil(UNIT)) {
            let at = n * UNIT;
            let from = at.max(offset);
            let to = (at + UNIT).min(end);
            buf[(from - offset) as usize..(to - offset) as usize]
                .copy_from_slice(&sector[(from - at) as usize..(to - at) as usize]);
        }
    }

    /// Takes `data` at `offset`. A sector the write covers only in part
    /// and the overlay does not hold yet is first read with `base`
    /// (`base(sector offset, buffer of one sector)`: the volume's bytes),
    /// outside the overlay's lock. Refused with `EROFS` once sealed, and
    /// with `ENOSPC` when it would take the overlay past its limit (then
    /// nothing of it is kept).
    pub fn write(
        &self,
        offset: u64,
        data: &[u8],
        base: impl Fn(u64, &mut [u8]) -> Result<(), Errno>,
    ) -> Result<(), Errno> {
        if self.is_sealed() {
            return Err(Errno::EROFS);
        }
        if data.is_empty() {
            return Ok(());
        }
        let end = offset.checked_add(data.len() as u64).ok_or(Errno::EINVAL)?;
        let first = offset / UNIT;
        let last = (end - 1) / UNIT;
        // The sectors written in part: at most the first and the last.
        let partial: Vec<u64> = [first, last]
            .into_iter()
            .filter(|&n| offset > n * UNIT || end < (n + 1) * UNIT)
            .fold(Vec::new(), |mut v, n| {
                if !v.contains(&n) {
                    v.push(n);
                }
                v
            });
        let held: Vec<u64> = {
            let map = self.map();
            partial
                .iter()
                .copied()
                .filter(|n| !map.contains_key(n))
                .collect()
        };
        let mut read = Vec::with_capacity(held.len());
        for n in held {
            let mut sector: Sector = Box::new([0u8; SECTOR]);
            if let Err(e) = base(n * UNIT, &mut sector[..]) {
                sector.zeroize();
                return Err(e);
            }
            read.push((n, sector));
        }
        let mut map = self.map();
        let new = (first..=last).filter(|n| !map.contains_key(n)).count() as u64;
        if (map.len() as u64 + new).saturating_mul(UNIT) > self.limit {
            drop(map);
            for (_, mut s) in read {
                s.zeroize();
            }
            if !self.exceeded.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    limit_mib = self.limit >> 20,
                    "a read-only volume's replay needs more memory than allowed; writes refused"
                );
            }
            return Err(Errno::ENOSPC);
        }
        // Sectors read meanwhile by another writer's request are kept as
        // that request left them.
        for (n, mut s) in read {
            match map.entry(n) {
                std::collections::btree_map::Entry::Occupied(_) => s.zeroize(),
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(s);
                }
            }
        }
        for n in first..=last {
            let at = n * UNIT;
            let from = at.max(offset);
            let to = (at + UNIT).min(end);
            let src = &data[(from - offset) as usize..(to - offset) as usize];
            let dst = &mut map.entry(n).or_insert_with(|| Box::new([0u8; SECTOR]))
                [(from - at) as usize..(to - at) as usize];
            dst.copy_from_slice(src);
        }
        Ok(())
    }

    /// Zeroizes and frees every sector held.
    pub fn clear(&self) {
        let mut map = self.map();
        for s in map.values_mut() {
            s.zeroize();
        }
        map.clear();
    }
}

impl Drop for Overlay {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The volume under the overlay: byte `i` is `i % 251`.
    fn volume(offset: u64, buf: &mut [u8]) -> Result<(), Errno> {
        for (i, b) in buf.iter_mut().enumerate() {
            *b = ((offset + i as u64) % 251) as u8;
        }
        Ok(())
    }

    fn read(o: &Overlay, offset: u64, len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        volume(offset, &mut buf).unwrap();
        o.apply(offset, &mut buf);
        buf
    }

    #[test]
    fn an_empty_overlay_shows_the_volume() {
        let o = Overlay::new(LIMIT);
        let mut expected = vec![0u8; 3000];
        volume(100, &mut expected).unwrap();
        assert_eq!(read(&o, 100, 3000), expected);
        assert_eq!(o.bytes(), 0);
    }

    #[test]
    fn whole_sectors_are_read_back_over_the_volume() {
        let o = Overlay::new(LIMIT);
        o.write(1024, &[7u8; 1024], |_, _| {
            panic!("no base read for whole sectors")
        })
        .unwrap();
        assert_eq!(o.bytes(), 1024);
        let got = read(&o, 512, 2048);
        let mut expected = vec![0u8; 2048];
        volume(512, &mut expected).unwrap();
        expected[512..1536].fill(7);
        assert_eq!(got, expected);
        // Overwritten in place, no sector added.
        o.write(1024, &[9u8; 512], |_, _| panic!()).unwrap();
        assert_eq!(o.bytes(), 1024);
        assert_eq!(read(&o, 1024, 512), vec![9u8; 512]);
    }

    #[test]
    fn partial_sectors_keep_the_volume_bytes_around_them() {
        let o = Overlay::new(LIMIT);
        // From the middle of sector 1 to the middle of sector 3.
        o.write(700, &[0xaa; 1000], volume).unwrap();
        assert_eq!(o.bytes(), 3 * 512);
        let got = read(&o, 0, 4096);
        let mut expected = vec![0u8; 4096];
        volume(0, &mut expected).unwrap();
        expected[700..1700].fill(0xaa);
        assert_eq!(got, expected);
        // A second partial write into a held sector reads nothing more and
        // keeps the first write.
        o.write(1700, &[0xbb; 10], |_, _| panic!("sector 3 is held"))
            .unwrap();
        expected[1700..1710].fill(0xbb);
        assert_eq!(read(&o, 0, 4096), expected);
        // Unaligned reads see the right slice.
        assert_eq!(read(&o, 699, 3), expected[699..702].to_vec());
        // Inside one sector.
        o.write(3000, &[1, 2, 3], volume).unwrap();
        expected[3000..3003].copy_from_slice(&[1, 2, 3]);
        assert_eq!(read(&o, 0, 4096), expected);
    }

    #[test]
    fn a_write_past_the_bound_is_refused_whole_and_said() {
        let o = Overlay::new(4 * 512);
        o.write(0, &[1u8; 3 * 512], volume).unwrap();
        assert!(!o.exceeded());
        // Two new sectors where one is left: refused, nothing kept.
        assert_eq!(o.write(3 * 512, &[2u8; 1024], volume), Err(Errno::ENOSPC));
        assert!(o.exceeded());
        assert_eq!(o.bytes(), 3 * 512);
        let mut expected = vec![0u8; 1024];
        volume(3 * 512, &mut expected).unwrap();
        assert_eq!(read(&o, 3 * 512, 1024), expected);
        // Overwriting held sectors needs no room.
        o.write(0, &[3u8; 3 * 512], volume).unwrap();
        o.write(3 * 512, &[4u8; 512], volume).unwrap();
        assert_eq!(o.bytes(), 4 * 512);
    }

    #[test]
    fn a_failed_base_read_keeps_nothing() {
        let o = Overlay::new(LIMIT);
        assert_eq!(
            o.write(10, &[1u8; 10], |_, _| Err(Errno::EIO)),
            Err(Errno::EIO)
        );
        assert_eq!(o.bytes(), 0);
    }

    #[test]
    fn sealed_refuses_and_clear_empties() {
        let o = Overlay::new(LIMIT);
        o.write(0, &[5u8; 512], volume).unwrap();
        o.clear();
        assert_eq!(o.bytes(), 0);
        let mut expected = vec![0u8; 512];
        volume(0, &mut expected).unwrap();
        assert_eq!(read(&o, 0, 512), expected);
        o.seal();
        assert_eq!(o.write(0, &[5u8; 512], volume), Err(Errno::EROFS));
        assert_eq!(o.bytes(), 0);
    }
}
