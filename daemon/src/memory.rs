//! Giving memory back after load, although the daemon locks all of it.
//!
//! glibc's allocator gives freed memory inside its heaps back to the
//! system with `madvise(MADV_DONTNEED)`, which the kernel refuses on locked
//! pages (see [`crate::hardening`]); only unmapping (`munmap`, or the main
//! heap's `brk` shrinking at its top) gives locked memory back. Left to
//! its defaults, glibc then keeps every peak: after the first large block
//! is freed it raises its mmap threshold to that block's size (up to
//! 32 MiB), so FUSE's 16 MiB request buffers of the next mounts are carved
//! from its heaps, and each thread that meets contention gets an arena of
//! its own (up to eight per core, each reserving 64 MiB of address space
//! that counts as locked). A daemon went from 51 MB to 432 MB resident,
//! all locked, after a storm of searches and mounts. So:
//!
//! - blocks of [`MMAP_THRESHOLD`] and more get a mapping of their own,
//!   unmapped when freed (a fixed threshold: glibc no longer raises it);
//! - one arena, the main heap, whose top `brk` can shrink even though
//!   locked (the daemon's threads allocate rarely: per request, not per
//!   byte, and glibc's per-thread caches serve small blocks without it);
//! - [`give_back`] after a search or a dismount trims that heap.
//!
//! Argon2id's work memory is a mapping of its own already
//! (`volume/argon2id.rs`), unmapped as each derivation ends.

/// The smallest block that gets its own mapping: above a FUSE request's
/// buffer (1 MiB and a little), so the data path reuses heap memory, and
/// below FUSE's 16 MiB receive buffers and large D-Bus messages.
pub const MMAP_THRESHOLD: usize = 2 << 20;

/// Sets the allocator up as above; before any thread starts (arenas are
/// made as threads first allocate). Says which setting glibc refused.
pub fn tune_allocator() -> Result<(), &'static str> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt takes two integers and changes only the
        // allocator's parameters; no thread allocates concurrently yet.
        let (threshold, arenas) = unsafe {
            (
                libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int),
                libc::mallopt(libc::M_ARENA_MAX, 1),
            )
        };
        // mallopt returns 1 on success, 0 on error.
        if threshold != 1 {
            return Err("M_MMAP_THRESHOLD");
        }
        if arenas != 1 {
            return Err("M_ARENA_MAX");
        }
    }
    Ok(())
}

/// Returns the free memory at the top of the heap to the system (after a
/// search or a dismount, when the daemon may go idle).
pub fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes a size and only releases free heap memory;
    // glibc locks its arenas itself.
    unsafe {
        libc::malloc_trim(0);
    }
}
