//! Argon2id (RFC 9106, version 0x13) with one lane, as VeraCrypt uses it,
//! written here rather than taken from the `argon2` crate for two reasons
//! the crate cannot serve:
//!
//! - a search that is cancelled (its caller left, or another trial opened
//!   the header) stops within milliseconds, not after every pass over up
//!   to 1 GiB of memory: the fill looks at the cancel flag every
//!   [`CANCEL_CHECK_BLOCKS`] blocks;
//! - the work memory is its own anonymous mapping, unmapped when the
//!   derivation ends, so the daemon (which locks all its memory) gives it
//!   back to the system at once instead of keeping it in the allocator.
//!
//! The unit tests check it against the `argon2` crate; the self-test
//! against known answers of the reference implementation.

use crate::error::{Error, Result};
use blake2::{Blake2b512, Digest};
use std::sync::atomic::{AtomicBool, Ordering};
use tcd_backend_kit::simd::Level;
use zeroize::Zeroize;

/// Words (u64) in one 1 KiB block.
const WORDS: usize = 128;
/// Argon2's slices per pass.
const SYNC_POINTS: usize = 4;
/// Blocks between two looks at the cancel flag: 1 MiB of memory, about a
/// millisecond of work.
const CANCEL_CHECK_BLOCKS: usize = 1024;
/// Argon2's type number for Argon2id and the version.
const TYPE_ID: u32 = 2;
const VERSION: u32 = 0x13;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Block([u64; WORDS]);

impl Block {
    const ZERO: Block = Block([0; WORDS]);

    fn load(bytes: &[u8; 1024]) -> Block {
        let mut b = Block::ZERO;
        for (w, c) in b.0.iter_mut().zip(bytes.chunks_exact(8)) {
            let mut le = [0u8; 8];
            le.copy_from_slice(c);
            *w = u64::from_le_bytes(le);
        }
        b
    }

    fn xor_with(&mut self, other: &Block) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a ^= *b;
        }
    }
}

/// Argon2's BlaMka mix of four words.
#[inline(always)]
fn gb(v: &mut [u64; WORDS], a: usize, b: usize, c: usize, d: usize) {
    #[inline(always)]
    fn fblamka(x: u64, y: u64) -> u64 {
        let m = 0xFFFF_FFFFu64;
        x.wrapping_add(y)
            .wrapping_add(2u64.wrapping_mul((x & m).wrapping_mul(y & m)))
    }
    v[a] = fblamka(v[a], v[b]);
    v[d] = (v[d] ^ v[a]).rotate_right(32);
    v[c] = fblamka(v[c], v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(24);
    v[a] = fblamka(v[a], v[b]);
    v[d] = (v[d] ^ v[a]).rotate_right(16);
    v[c] = fblamka(v[c], v[d]);
    v[b] = (v[b] ^ v[c]).rotate_right(63);
}

/// The BLAKE2 round on the 16 words at the given indices.
#[inline(always)]
fn permute(v: &mut [u64; WORDS], i: [usize; 16]) {
    gb(v, i[0], i[4], i[8], i[12]);
    gb(v, i[1], i[5], i[9], i[13]);
    gb(v, i[2], i[6], i[10], i[14]);
    gb(v, i[3], i[7], i[11], i[15]);
    gb(v, i[0], i[5], i[10], i[15]);
    gb(v, i[1], i[6], i[11], i[12]);
    gb(v, i[2], i[7], i[8], i[13]);
    gb(v, i[3], i[4], i[9], i[14]);
}

/// Argon2's compression G(x, y).
#[inline(always)]
fn compress(x: &Block, y: &Block) -> Block {
    let mut r = *x;
    r.xor_with(y);
    let mut q = r;
    for row in 0..8 {
        let b = row * 16;
        permute(
            &mut q.0,
            [
                b,
                b + 1,
                b + 2,
                b + 3,
                b + 4,
                b + 5,
                b + 6,
                b + 7,
                b + 8,
                b + 9,
                b + 10,
                b + 11,
                b + 12,
                b + 13,
                b + 14,
                b + 15,
            ],
        );
    }
    for col in 0..8 {
        let b = col * 2;
        permute(
            &mut q.0,
            [
                b,
                b + 1,
                b + 16,
                b + 17,
                b + 32,
                b + 33,
                b + 48,
                b + 49,
                b + 64,
                b + 65,
                b + 80,
                b + 81,
                b + 96,
                b + 97,
                b + 112,
                b + 113,
            ],
        );
    }
    q.xor_with(&r);
    q
}

/// Argon2's variable-length hash H' for the lengths used here (a block,
/// 1024 bytes, and the 192-byte header key): longer than 64 bytes and a
/// multiple of 32, so every step is a full BLAKE2b-512.
fn blake2b_long(inputs: &[&[u8]], out: &mut [u8]) -> Result<()> {
    let len = u32::try_from(out.len()).map_err(|_| Error::Kdf("Argon2 output length".into()))?;
    if out.len() <= 64 || !out.len().is_multiple_of(32) {
        return Err(Error::Kdf("Argon2 output length".into()));
    }
    let mut h = Blake2b512::new();
    h.update(len.to_le_bytes());
    for i in inputs {
        h.update(i);
    }
    let mut v = h.finalize();
    let mut rest = &mut out[..];
    while rest.len() > 64 {
        let (head, tail) = rest.split_at_mut(32);
        head.copy_from_slice(&v[..32]);
        rest = tail;
        v = Blake2b512::digest(v);
    }
    rest.copy_from_slice(&v[..]);
    v.as_mut_slice().zeroize();
    Ok(())
}

/// Work memory: an anonymous private mapping of `len` blocks, zero-filled
/// by the kernel, wiped and unmapped on drop.
struct Memory {
    ptr: std::ptr::NonNull<Block>,
    len: usize,
    /// Blocks from the start that may have been written (the rest were
    /// never touched: wiping them would only fault them in).
    touched: usize,
}

impl Memory {
    fn new(len: usize) -> Option<Memory> {
        let bytes = len.checked_mul(size_of::<Block>())?;
        if bytes == 0 {
            return None;
        }
        // SAFETY: a fresh anonymous private mapping; no address hint, no
        // descriptor. The result is checked against MAP_FAILED.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        // Page-aligned, so aligned for Block.
        std::ptr::NonNull::new(p.cast::<Block>()).map(|ptr| Memory {
            ptr,
            len,
            touched: len,
        })
    }

    fn blocks(&mut self) -> &mut [Block] {
        // SAFETY: the mapping holds `len` blocks, is readable and writable,
        // zero-filled (a valid Block is any bits), and lives as long as
        // `self`; the &mut borrow of `self` makes this slice unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        let touched = self.touched.min(self.len);
        for b in &mut self.blocks()[..touched] {
            b.0.zeroize();
        }
        // SAFETY: unmaps exactly the mapping made in `new`, once; no
        // reference into it outlives `self`.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len * size_of::<Block>());
        }
    }
}

// SAFETY: Memory owns its mapping outright (like a Box<[Block]>).
unsafe impl Send for Memory {}

/// Argon2id with one lane: `memory_kib` KiB, `passes` passes, no secret and
/// no associated data, output the length of `out` (1024 or 192 here:
/// longer than 64 bytes and a multiple of 32). Stops with
/// [`Error::Cancelled`] soon after `cancel` is set.
pub fn hash(
    password: &[u8],
    salt: &[u8],
    memory_kib: u32,
    passes: u32,
    cancel: &AtomicBool,
    out: &mut [u8],
) -> Result<()> {
    hash_with(
        Fill::best(),
        password,
        salt,
        memory_kib,
        passes,
        cancel,
        out,
    )
}

/// The two builds of the memory fill: one compiled for AVX2, taken where
/// the processor has it and `TCD_SIMD` allows it, and the baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fill {
    Avx2,
    Baseline,
}

impl Fill {
    /// The build derivations take on this processor.
    pub fn best() -> Fill {
        let level = tcd_backend_kit::simd::cap();
        if level >= Level::Avx2 && tcd_backend_kit::simd::supported(Level::Avx2) {
            Fill::Avx2
        } else {
            Fill::Baseline
        }
    }

    /// Every build this processor runs, for the self-test.
    pub fn all() -> Vec<Fill> {
        let mut all = vec![Fill::Baseline];
        if tcd_backend_kit::simd::supported(Level::Avx2) {
            all.insert(0, Fill::Avx2);
        }
        all
    }

    /// The build's name in the self-test's table.
    pub fn name(self) -> &'static str {
        match self {
            Fill::Avx2 => "AVX2",
            Fill::Baseline => "SSE2",
        }
    }
}

/// [`hash`] through the memory fill `fill` (which this processor must run).
pub fn hash_with(
    fill: Fill,
    password: &[u8],
    salt: &[u8],
    memory_kib: u32,
    passes: u32,
    cancel: &AtomicBool,
    out: &mut [u8],
) -> Result<()> {
    if passes == 0 {
        return Err(Error::Kdf("Argon2 needs at least one pass".into()));
    }
    let out_len = u32::try_from(out.len()).map_err(|_| Error::Kdf("Argon2 output".into()))?;
    let pwd_len = u32::try_from(password.len()).map_err(|_| Error::Kdf("Argon2 input".into()))?;
    let salt_len = u32::try_from(salt.len()).map_err(|_| Error::Kdf("Argon2 input".into()))?;
    // One lane: at least 8 blocks, a whole number of segments.
    let segment = (memory_kib.max(2 * SYNC_POINTS as u32) as usize) / SYNC_POINTS;
    let lane = segment * SYNC_POINTS;

    let mut h0 = Blake2b512::new();
    for word in [1u32, out_len, memory_kib, passes, VERSION, TYPE_ID, pwd_len] {
        h0.update(word.to_le_bytes());
    }
    h0.update(password);
    h0.update(salt_len.to_le_bytes());
    h0.update(salt);
    h0.update(0u32.to_le_bytes());
    h0.update(0u32.to_le_bytes());
    let mut h0 = h0.finalize();

    let mut memory = Memory::new(lane).ok_or_else(|| {
        Error::Kdf(format!(
            "cannot map {} MiB of memory for Argon2id",
            lane / 1024
        ))
    })?;
    let mut bytes = [0u8; 1024];
    let blocks = memory.blocks();
    for (i, b) in blocks.iter_mut().take(2).enumerate() {
        let i = i as u32;
        let r = blake2b_long(&[&h0, &i.to_le_bytes(), &0u32.to_le_bytes()], &mut bytes);
        if let Err(e) = r {
            h0.as_mut_slice().zeroize();
            bytes.zeroize();
            return Err(e);
        }
        *b = Block::load(&bytes);
    }
    h0.as_mut_slice().zeroize();
    bytes.zeroize();

    let mut touched = lane;
    let filled = fill_dispatch(fill, blocks, segment, passes as usize, cancel, &mut touched);
    let mut last = blocks[lane - 1];
    memory.touched = touched;
    if let Err(e) = filled {
        last.0.zeroize();
        return Err(e);
    }

    for (c, w) in bytes.chunks_exact_mut(8).zip(last.0.iter()) {
        c.copy_from_slice(&w.to_le_bytes());
    }
    last.0.zeroize();
    let r = blake2b_long(&[&bytes], out);
    bytes.zeroize();
    r
}

fn fill_dispatch(
    build: Fill,
    blocks: &mut [Block],
    segment: usize,
    passes: usize,
    cancel: &AtomicBool,
    touched: &mut usize,
) -> Result<()> {
    #[cfg(target_arch = "x86_64")]
    if build == Fill::Avx2 && std::arch::is_x86_feature_detected!("avx2") {
        #[target_feature(enable = "avx2")]
        unsafe fn fill_avx2(
            blocks: &mut [Block],
            segment: usize,
            passes: usize,
            cancel: &AtomicBool,
            touched: &mut usize,
        ) -> Result<()> {
            fill(blocks, segment, passes, cancel, touched)
        }
        // SAFETY: the processor has AVX2 (checked just above).
        return unsafe { fill_avx2(blocks, segment, passes, cancel, touched) };
    }
    fill(blocks, segment, passes, cancel, touched)
}

/// The passes over the memory (RFC 9106 section 3.4, one lane). On a
/// cancel during the first pass, `touched` is how far it got.
#[inline(always)]
fn fill(
    blocks: &mut [Block],
    segment: usize,
    passes: usize,
    cancel: &AtomicBool,
    touched: &mut usize,
) -> Result<()> {
    let lane = segment * SYNC_POINTS;
    let zero = Block::ZERO;
    let mut work = 0usize;
    for pass in 0..passes {
        for slice in 0..SYNC_POINTS {
            // Argon2id: data-independent addresses in the first half of
            // the first pass, data-dependent ones after.
            let independent = pass == 0 && slice < SYNC_POINTS / 2;
            let mut address = Block::ZERO;
            let mut input = Block::ZERO;
            if independent {
                input.0[..6].copy_from_slice(&[
                    pass as u64,
                    0,
                    slice as u64,
                    lane as u64,
                    passes as u64,
                    u64::from(TYPE_ID),
                ]);
            }
            let next_address = |address: &mut Block, input: &mut Block| {
                input.0[6] += 1;
                *address = compress(&zero, input);
                *address = compress(&zero, address);
            };
            let first = if pass == 0 && slice == 0 {
                if independent {
                    next_address(&mut address, &mut input);
                }
                2
            } else {
                0
            };
            let mut cur = slice * segment + first;
            let mut prev = if cur == 0 { lane - 1 } else { cur - 1 };
            for index in first..segment {
                let rand = if independent {
                    if index % WORDS == 0 {
                        next_address(&mut address, &mut input);
                    }
                    address.0[index % WORDS]
                } else {
                    blocks[prev].0[0]
                };
                let area = if pass == 0 {
                    slice * segment + index - 1
                } else {
                    lane - segment + index - 1
                };
                let mut map = rand & 0xFFFF_FFFF;
                map = (map * map) >> 32;
                let relative = area - 1 - ((area as u64 * map) >> 32) as usize;
                let start = if pass != 0 && slice != SYNC_POINTS - 1 {
                    (slice + 1) * segment
                } else {
                    0
                };
                let reference = (start + relative) % lane;
                let result = compress(&blocks[prev], &blocks[reference]);
                if pass == 0 {
                    blocks[cur] = result;
                } else {
                    blocks[cur].xor_with(&result);
                }
                prev = cur;
                cur += 1;
                work += 1;
                if work.is_multiple_of(CANCEL_CHECK_BLOCKS) && cancel.load(Ordering::Relaxed) {
                    if pass == 0 {
                        *touched = cur;
                    }
                    return Err(Error::Cancelled);
                }
            }
            address.0.zeroize();
            input.0.zeroize();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn reference(pwd: &[u8], salt: &[u8], m: u32, t: u32, len: usize) -> Vec<u8> {
        let params = argon2::Params::new(m, t, 1, Some(len)).expect("params");
        let a = argon2::Argon2::new(argon2::Algorithm::Argon2id, argon2::Version::V0x13, params);
        let mut out = vec![0u8; len];
        a.hash_password_into(pwd, salt, &mut out).expect("argon2");
        out
    }

    #[test]
    fn matches_the_argon2_crate() {
        let never = AtomicBool::new(false);
        for (pwd, m, t, len) in [
            (&b"password"[..], 8u32, 1u32, 192usize),
            (&b""[..], 9, 2, 192),
            (&b"x"[..], 64, 3, 1024),
            (&[0xA5; 128][..], 1000, 1, 192),
            (&b"VeraCrypt"[..], 4096, 4, 192),
            (&b"odd memory"[..], 1027, 2, 96),
        ] {
            let salt = [0x42u8; 64];
            let mut out = vec![0u8; len];
            hash(pwd, &salt, m, t, &never, &mut out).expect("argon2id");
            assert_eq!(
                out,
                reference(pwd, &salt, m, t, len),
                "m={m} t={t} len={len}"
            );
        }
    }

    #[test]
    fn cancel_stops_a_gibibyte_derivation_within_milliseconds() {
        let cancel = AtomicBool::new(false);
        let mut out = [0u8; 192];
        let (r, stopped_after) = std::thread::scope(|s| {
            let worker = s.spawn(|| hash(b"pw", &[1; 64], 1024 * 1024, 1000, &cancel, &mut out));
            std::thread::sleep(Duration::from_millis(300));
            let asked = Instant::now();
            cancel.store(true, Ordering::Relaxed);
            let r = worker.join().expect("argon2 thread");
            (r, asked.elapsed())
        });
        assert!(matches!(r, Err(Error::Cancelled)), "{r:?}");
        // The wipe of what was touched and the unmap are included.
        assert!(stopped_after < Duration::from_secs(1), "{stopped_after:?}");
    }
}
