//! A structural check of a shared library before `dlopen`: the dynamic
//! linker maps segments without checking that the file holds them, so a
//! truncated library would fault (SIGBUS) inside the daemon instead of
//! failing to load. Reading the ELF and program headers first turns that
//! into a clear error.

use crate::error::BackendProblem;
use std::fs::File;
use std::os::unix::fs::FileExt;

const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const ET_DYN: u16 = 3;
#[cfg(target_arch = "x86_64")]
const HOST_MACHINE: u16 = 62;
#[cfg(target_arch = "aarch64")]
const HOST_MACHINE: u16 = 183;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const HOST_MACHINE: u16 = 0;

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Checks that `file` is a 64-bit little-endian shared object for this
/// machine whose loadable segments all lie within the file.
pub fn check(file: &File) -> Result<(), BackendProblem> {
    let bad = |m: &str| BackendProblem::NotALibrary(m.to_owned());
    let len = file
        .metadata()
        .map_err(|e| BackendProblem::Open(e.to_string()))?
        .len();
    let mut eh = [0u8; 64];
    file.read_exact_at(&mut eh, 0)
        .map_err(|_| bad("shorter than an ELF header"))?;
    if &eh[..4] != b"\x7fELF" {
        return Err(bad("no ELF signature"));
    }
    if eh[4] != 2 || eh[5] != 1 {
        return Err(bad("not a 64-bit little-endian ELF file"));
    }
    if u16_at(&eh, 16) != ET_DYN {
        return Err(bad("not a shared object"));
    }
    if HOST_MACHINE != 0 && u16_at(&eh, 18) != HOST_MACHINE {
        return Err(bad("built for another processor"));
    }
    let phoff = u64_at(&eh, 32);
    let phentsize = u64::from(u16_at(&eh, 54));
    let phnum = u64::from(u16_at(&eh, 56));
    if phentsize != 56 || phnum == 0 || phnum > 256 {
        return Err(bad("malformed program header table"));
    }
    let table_len = phentsize * phnum;
    if phoff.checked_add(table_len).is_none_or(|end| end > len) {
        return Err(bad("truncated: program headers past the end of the file"));
    }
    let mut table = vec![0u8; table_len as usize];
    file.read_exact_at(&mut table, phoff)
        .map_err(|_| bad("cannot read program headers"))?;
    for ph in table.chunks_exact(56) {
        let kind = u32_at(ph, 0);
        if kind != PT_LOAD && kind != PT_DYNAMIC {
            continue;
        }
        let end = u64_at(ph, 8).checked_add(u64_at(ph, 32));
        if end.is_none_or(|end| end > len) {
            return Err(bad("truncated: a segment lies past the end of the file"));
        }
    }
    Ok(())
}
