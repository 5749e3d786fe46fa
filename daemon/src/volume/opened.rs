//! An open volume: its host, its data cipher, and reads and writes of the
//! decrypted data area at volume offsets.

use super::create::GROUP_BYTES;
use super::header::{Header, Location, MASTER_KEY_BYTES};
use super::health::Health;
use super::kdf::{Format, Prf};
use super::system;
use super::unlock::{self, Credentials, SearchOptions, Target, Unlocked};
use crate::engine::{Chain, Engine, VolumeCipher, legacy};
use crate::error::{Error, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use zeroize::Zeroizing;

/// The XTS data unit of TrueCrypt and VeraCrypt volumes, whatever the
/// volume's sector size.
pub const UNIT: u64 = 512;

/// What a user may see about an open volume: no key material.
#[derive(Debug, Clone)]
pub struct VolumeInfo {
    pub format: Format,
    pub header_version: u16,
    pub prf: Prf,
    pub chain: &'static Chain,
    pub location: Location,
    pub used_backup_header: bool,
    pub hidden: bool,
    pub data_offset: u64,
    pub data_size: u64,
    pub sector_size: u32,
    /// The backend serving each layer when the volume was opened; see
    /// [`OpenVolume::backends`] for now.
    pub backends: Vec<String>,
    /// XTS primary and secondary keys equal in some layer (a weak volume).
    pub weak_keys: bool,
    /// Opened as system encryption: the header came from the drive's
    /// first track.
    pub system: bool,
    /// The header's minimum program version (TrueCrypt's and VeraCrypt's
    /// version numbers: 0x071a is 7.1a, 0x010b VeraCrypt 1.0b).
    pub min_program_version: u16,
}

impl VolumeInfo {
    /// The minimum program version as its program writes it ("7.1a",
    /// "1.0b", "1.26"): TrueCrypt drops a minor version's trailing zero.
    pub fn minimum_version(&self) -> String {
        let [major, minor] = self.min_program_version.to_be_bytes();
        let mut minor = format!("{minor:02x}");
        if self.format == Format::TrueCrypt && minor.ends_with('0') {
            minor.pop();
        }
        format!("{} {major:x}.{minor}", self.format.name())
    }
}

/// A container file's access and modification times, taken before the
/// mount reads anything (a read moves the access time).
#[derive(Clone, Copy)]
pub struct HostTimes([libc::timespec; 2]);

impl HostTimes {
    /// `host`'s times; None for a device, whose times tell nothing.
    pub fn of(host: &File) -> Option<HostTimes> {
        use std::os::unix::fs::MetadataExt;
        let m = host.metadata().ok().filter(|m| m.is_file())?;
        let at = |sec: i64, nsec: i64| libc::timespec {
            tv_sec: sec,
            tv_nsec: nsec,
        };
        Some(HostTimes([
            at(m.atime(), m.atime_nsec()),
            at(m.mtime(), m.mtime_nsec()),
        ]))
    }

    /// `host`'s times, to be put back for the caller `uid`: None for a
    /// device, and for a file `uid` does not own (root: any). The
    /// daemon's right to set any times never sets those of a file the
    /// caller may only read or write, whose owner would see them rolled
    /// back.
    pub fn for_caller(host: &File, uid: u32) -> Option<HostTimes> {
        use std::os::unix::fs::MetadataExt;
        let owner = host.metadata().ok()?.uid();
        if uid != 0 && owner != uid {
            return None;
        }
        Self::of(host)
    }

    /// Sets `host`'s times back to these, through its descriptor.
    pub fn put_back(&self, host: &File) -> std::io::Result<()> {
        // SAFETY: futimens(2) on a descriptor `host` keeps open for the
        // call, with two initialised timespecs.
        let rc = unsafe { libc::futimens(std::os::fd::AsRawFd::as_raw_fd(host), self.0.as_ptr()) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// A container file's times, put back when this goes: a header read or
/// rewritten (`info`, a password change, a restore) does not tell when,
/// as VeraCrypt keeps them by default.
pub struct TimesKept {
    host: File,
    times: HostTimes,
}

impl TimesKept {
    /// Keeps `host`'s times (a descriptor of its own, so the volume may
    /// take `host`) as [`HostTimes::for_caller`] takes them.
    pub fn keep(host: &File, uid: u32) -> Option<TimesKept> {
        let times = HostTimes::for_caller(host, uid)?;
        let host = host.try_clone().ok()?;
        Some(TimesKept { host, times })
    }
}

impl Drop for TimesKept {
    fn drop(&mut self) {
        if let Err(e) = self.times.put_back(&self.host) {
            tracing::warn!("cannot put the container's timestamps back: {e}");
        }
    }
}

impl std::fmt::Debug for HostTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostTimes({}, {})", self.0[0].tv_sec, self.0[1].tv_sec)
    }
}

/// An open volume.
pub struct OpenVolume {
    host: File,
    /// Swapped whole when the policy moves the volume to other backends;
    /// a request in flight finishes with the cipher it started with, which
    /// computes the same bytes.
    cipher: RwLock<Arc<VolumeCipher>>,
    /// Kept to key the cipher again on other backends (the backends' own
    /// contexts hold expanded copies of it anyway).
    master_keys: Zeroizing<[u8; MASTER_KEY_BYTES]>,
    /// The backend asked for at mount, if any.
    forced: Option<String>,
    /// Called once when hidden-volume protection makes the volume
    /// read-only (so the service can tell clients).
    on_read_only: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>>,
    info: VolumeInfo,
    read_only: AtomicBool,
    /// Host byte range of a hidden volume that writes must not touch.
    protected: Option<(u64, u64)>,
    /// Seconds after `opened_at` of the last read or write (for the idle
    /// auto-dismount; a coarse clock is enough).
    last_io: std::sync::atomic::AtomicU64,
    opened_at: std::time::Instant,
    /// What went wrong on the way to the host since the volume opened.
    health: Arc<Health>,
    /// The host is a regular file, whose size and names can change under
    /// the volume (a device's cannot).
    host_is_file: bool,
    /// Added (wrapping) to a host offset's unit to number it: a
    /// system-encrypted partition's units count from the start of its
    /// drive; a legacy volume's from its data area.
    unit_shift: u64,
    /// A container file's access and modification times before the
    /// mount, put back when the volume closes.
    host_times: Option<HostTimes>,
}

impl std::fmt::Debug for OpenVolume {
    /// No key material: what a user may see.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenVolume")
            .field("info", &self.info)
            .field("read_only", &self.is_read_only())
            .field("protected", &self.protected)
            .finish_non_exhaustive()
    }
}

impl OpenVolume {
    /// Opens the volume in `host` that `creds` unlock.
    pub fn open(
        engine: &Engine,
        host: File,
        creds: Credentials<'_>,
        target: Target,
        opts: &SearchOptions,
        cancel: &AtomicBool,
        read_only: bool,
    ) -> Result<OpenVolume> {
        if opts.system {
            return Self::open_system(engine, host, creds, opts, cancel, read_only);
        }
        let u = unlock::unlock(engine, &host, creds, target, opts, cancel)?;
        Self::from_unlocked(engine, host, u, opts, read_only, None)
    }

    /// Opens system encryption in `host`: a drive or disk image holding
    /// the header, or a partition whose header, read from its drive by the
    /// caller, comes as `opts.detached` (the daemon never opens a drive
    /// for a caller who may only have been given the partition).
    fn open_system(
        engine: &Engine,
        host: File,
        creds: Credentials<'_>,
        opts: &SearchOptions,
        cancel: &AtomicBool,
        read_only: bool,
    ) -> Result<OpenVolume> {
        let start = system::partition_start(&host)?;
        if start.is_some() && opts.detached.is_none() {
            return Err(Error::InvalidArgument(
                "option system_encryption: a partition's system header lies in its drive's first \
                 track; pass it (512 bytes from byte 31744 of the drive) as detached_header"
                    .into(),
            ));
        }
        let u = unlock::unlock(engine, &host, creds, Target::Outer, opts, cancel)?;
        let size = unlock::host_size(&host)?;
        let area = system::area(&u.header, size, start)?;
        let mut v = Self::from_unlocked(engine, host, u, opts, read_only, Some(area))?;
        v.info.system = true;
        Ok(v)
    }

    /// Opens the outer volume with hidden-volume protection: `hidden`
    /// unlocks the hidden volume's header, whose extent writes may then
    /// never touch. Read-only asked for holds as well: protection only
    /// adds a refusal.
    pub fn open_protected(
        engine: &Engine,
        host: File,
        outer: Credentials<'_>,
        hidden: Credentials<'_>,
        opts: &SearchOptions,
        cancel: &AtomicBool,
        read_only: bool,
    ) -> Result<OpenVolume> {
        let o = unlock::unlock(engine, &host, outer, Target::Outer, opts, cancel)?;
        // The hash and encryption asked for are the outer volume's: the
        // hidden one's are searched over all (VeraCrypt's --hash does not
        // reach its --protection-hash either).
        let any = SearchOptions {
            prf: None,
            chain: None,
            ..opts.clone()
        };
        let h = unlock::unlock(engine, &host, hidden, Target::Hidden, &any, cancel).map_err(
            |e| match e {
                Error::NotUnlocked { .. } => Error::HiddenNotUnlocked,
                e => e,
            },
        )?;
        let start = h.header.data_offset;
        let end = start.saturating_add(h.header.data_size);
        let mut v = Self::from_unlocked(engine, host, o, opts, read_only, None)?;
        v.protected = Some((start, end));
        Ok(v)
    }

    fn from_unlocked(
        engine: &Engine,
        host: File,
        u: Unlocked,
        opts: &SearchOptions,
        read_only: bool,
        system_area: Option<system::Area>,
    ) -> Result<OpenVolume> {
        let h: &Header = &u.header;
        let size = unlock::host_size(&host)?;
        let host_is_file = host.metadata().is_ok_and(|m| m.is_file());
        let area = match system_area {
            Some(a) => a,
            None => Self::volume_area(h, size)?,
        };
        let cipher = engine.volume_cipher(u.chain, &h.master_keys[..], opts.backend.as_deref())?;
        let info = VolumeInfo {
            format: h.format,
            header_version: h.version,
            prf: u.prf,
            chain: u.chain,
            location: u.location,
            used_backup_header: u.used_backup(),
            hidden: u.location.is_hidden(),
            data_offset: area.offset,
            data_size: area.size,
            sector_size: h.sector_size,
            backends: cipher.backends().into_iter().map(str::to_owned).collect(),
            weak_keys: !u.chain.mode.is_legacy() && h.has_equal_xts_halves(u.chain.ciphers.len()),
            system: false,
            min_program_version: h.min_program_version,
        };
        if info.weak_keys {
            tracing::warn!("volume has equal XTS primary and secondary keys in a layer: weak");
        }
        let unit_shift = if u.chain.mode.is_legacy() {
            // The legacy modes number the data area's own sectors (LRW
            // from 0, CBC from 1): the shift takes a host unit there.
            legacy::first_sector(u.chain.mode).wrapping_sub(area.offset / UNIT)
        } else {
            area.host_start / UNIT
        };
        Ok(OpenVolume {
            host,
            cipher: RwLock::new(Arc::new(cipher)),
            master_keys: h.master_keys.clone(),
            forced: opts.backend.clone(),
            on_read_only: std::sync::OnceLock::new(),
            info,
            read_only: AtomicBool::new(read_only),
            protected: None,
            last_io: std::sync::atomic::AtomicU64::new(0),
            opened_at: std::time::Instant::now(),
            health: Arc::new(Health::new(!read_only)),
            host_is_file,
            unit_shift,
            host_times: None,
        })
    }

    /// A volume's data area, checked against its host's size.
    fn volume_area(h: &Header, size: u64) -> Result<system::Area> {
        if !h.data_offset.is_multiple_of(UNIT)
            || h.data_offset == 0
            || h.data_offset
                .checked_add(h.data_size)
                .is_none_or(|end| end > size)
        {
            let mut said = format!(
                "the header's data area ({} bytes at {}) does not fit the {size}-byte host",
                h.data_size, h.data_offset
            );
            // A backup holds no data area: its header, opened, names its
            // volume's.
            if size == super::maintain::BACKUP_FILE_BYTES as u64 {
                said = format!("{said}: {}", tcd_proto::contract::errors::BACKUP_AS_VOLUME);
            }
            return Err(Error::InvalidArgument(said));
        }
        Ok(system::Area {
            offset: h.data_offset,
            size: h.data_size,
            host_start: 0,
        })
    }

    /// A volume opened by a header read from a header file, to be
    /// mounted, must be this host's: a volume with backup headers ends its
    /// data area where the backup group begins, 128 KiB before the host's
    /// end (less the part of a sector the format rounds off). A header of
    /// another volume, or one saved before the volume was expanded, would
    /// map data that is not this volume's, and writes could reach its
    /// backup headers: refused, saying which. (Reading such a header, as
    /// `HeaderInfo` does, is how a backup's settings are seen.)
    pub fn check_detached_fit(&self) -> Result<()> {
        let i = &self.info;
        // Before header version 4 (TrueCrypt 6) there were no backup
        // headers, and the data area's end was not fixed; a hidden
        // volume's header places it by itself.
        if i.header_version < 4 || i.hidden || i.system {
            return Ok(());
        }
        let size = unlock::host_size(&self.host)?;
        let end = i.data_offset.saturating_add(i.data_size);
        let backups = size.saturating_sub(GROUP_BYTES);
        let rounded_off = backups.saturating_sub(end);
        if end <= backups && rounded_off < u64::from(i.sector_size.max(512)) {
            return Ok(());
        }
        Err(Error::InvalidArgument(format!(
            "the header file's volume has a data area of {} bytes, where this {size}-byte host \
             has room for {} bytes: a header of another volume, or one saved before the volume \
             was expanded (its data would not be this volume's); mount without a header file, \
             or restore a header backup saved since",
            i.data_size,
            backups.saturating_sub(i.data_offset),
        )))
    }

    /// Puts the container file's times back to `times` when the volume
    /// closes (TrueCrypt's default), so the host does not tell when the
    /// volume was last used.
    pub fn restore_times_at_close(&mut self, times: HostTimes) {
        if self.host_is_file {
            self.host_times = Some(times);
        }
    }

    pub fn info(&self) -> &VolumeInfo {
        &self.info
    }

    /// The master key as the header holds it: each layer's primary key in
    /// order of application, then their secondary keys (`tcctl dump
    /// --dump-master-key`, for root).
    pub fn master_key(&self) -> Zeroizing<Vec<u8>> {
        let bytes = self.info.chain.key_bytes();
        Zeroizing::new(self.master_keys[..bytes.min(self.master_keys.len())].to_vec())
    }

    fn cipher(&self) -> Arc<VolumeCipher> {
        Arc::clone(&self.cipher.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The backend serving each layer now, in order of application.
    pub fn backends(&self) -> Vec<String> {
        self.cipher()
            .backends()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// Keys the cipher again from `engine`'s backends, as they now stand,
    /// and swaps it in where that changes a backend. A backend forced at
    /// mount is kept if the engine still has it. Returns the new backends,
    /// or None when nothing changed.
    pub fn rebind(&self, engine: &Engine) -> Result<Option<Vec<String>>> {
        let old = self.cipher();
        let forced = self
            .forced
            .as_deref()
            .filter(|f| engine.backends().iter().any(|b| b.info.name == *f));
        let new = engine.volume_cipher_units(
            old.chain(),
            &self.master_keys[..],
            forced,
            old.unit_size(),
        )?;
        if new.backends() == old.backends() {
            return Ok(None);
        }
        let names = new.backends().into_iter().map(str::to_owned).collect();
        *self.cipher.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(new);
        Ok(Some(names))
    }

    pub fn size(&self) -> u64 {
        self.info.data_size
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only.load(Ordering::Relaxed)
    }

    /// Sets what to call when protection makes the volume read-only.
    pub fn on_read_only(&self, f: impl Fn() + Send + Sync + 'static) {
        let _ = self.on_read_only.set(Box::new(f));
    }

    /// Makes the volume read-only from now on (a legacy volume mounted
    /// without asking for read-write).
    pub fn make_read_only(&self) {
        self.read_only.store(true, Ordering::Relaxed);
        self.health.now_read_only();
    }

    /// Hidden-volume protection triggered: refuse every write from now on.
    fn protect(&self, what: &str) -> Error {
        tracing::warn!("{what} into the protected hidden volume refused; volume now read-only");
        self.health.hidden_write_refused();
        if !self.read_only.swap(true, Ordering::Relaxed)
            && let Some(f) = self.on_read_only.get()
        {
            f();
        }
        Error::HiddenVolumeProtected
    }

    pub fn protects_hidden_volume(&self) -> bool {
        self.protected.is_some()
    }

    /// Checks an aligned range inside the data area; returns the host offset.
    fn host_range(&self, offset: u64, len: usize) -> Result<u64> {
        let len = len as u64;
        if !offset.is_multiple_of(UNIT) || !len.is_multiple_of(UNIT) {
            return Err(Error::InvalidArgument(format!(
                "{len} bytes at {offset} are not whole 512-byte sectors"
            )));
        }
        if offset
            .checked_add(len)
            .is_none_or(|end| end > self.info.data_size)
        {
            return Err(Error::InvalidArgument(format!(
                "{len} bytes at {offset} pass the end of the volume"
            )));
        }
        Ok(self.info.data_offset + offset)
    }

    /// Whether the last 512 bytes below the last `reserve` bytes of the
    /// data area hold data: where a hidden volume ends, so one is there
    /// already (or the outer filesystem reached it). Sectors never written
    /// on the host (zeros) are not data: the outer volume is not filled,
    /// which a hidden volume's create says itself.
    pub fn end_in_use(&self, reserve: u64) -> Result<bool> {
        let Some(offset) = self.info.data_size.checked_sub(reserve + UNIT) else {
            return Ok(false);
        };
        let at = self.host_range(offset, UNIT as usize)?;
        let mut buf = Zeroizing::new(vec![0u8; UNIT as usize]);
        self.host
            .read_exact_at(&mut buf, at)
            .map_err(|source| Error::Io {
                what: format!("read at {offset}"),
                source,
            })?;
        if buf.iter().all(|&b| b == 0) {
            return Ok(false);
        }
        self.cipher()
            .decrypt(&mut buf, (at / UNIT).wrapping_add(self.unit_shift))?;
        Ok(buf.iter().any(|&b| b != 0))
    }

    /// Reads and decrypts whole sectors at `offset` of the data area.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        self.touch();
        let at = self.host_range(offset, buf.len())?;
        if let Err(e) = self.host.read_exact_at(buf, at) {
            let why = if e.kind() == std::io::ErrorKind::UnexpectedEof {
                "past the container's end".to_owned()
            } else {
                e.to_string()
            };
            self.health.read_failed(&why);
            // A read past the end: say why, if the container shrank.
            self.check_host();
            return Err(Error::Io {
                what: format!("read at {offset}"),
                source: e,
            });
        }
        self.cipher()
            .decrypt(buf, (at / UNIT).wrapping_add(self.unit_shift))
    }

    /// Encrypts and writes whole sectors at `offset` of the data area.
    /// `buf` is used as scratch: it holds ciphertext afterwards.
    pub fn write_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        self.touch();
        if self.is_read_only() {
            return Err(Error::ReadOnly);
        }
        let at = self.host_range(offset, buf.len())?;
        if let Some((start, end)) = self.protected
            && at < end
            && at + buf.len() as u64 > start
        {
            // As TrueCrypt: refuse, and refuse every write from now on,
            // so the filesystem cannot half-write around the hole.
            return Err(self.protect("write"));
        }
        // The host never grows: a write past its end (a container
        // truncated while mounted) or to a container deleted while mounted
        // is an I/O error, not a file written back into existence.
        if let Some(why) = self.refuse_host_write(at + buf.len() as u64) {
            self.health.write_failed(&why);
            return Err(Error::Io {
                what: format!("write at {offset}: {why}"),
                source: std::io::Error::from_raw_os_error(libc::EIO),
            });
        }
        self.cipher()
            .encrypt(buf, (at / UNIT).wrapping_add(self.unit_shift))?;
        self.host.write_all_at(buf, at).map_err(|e| {
            self.health.write_failed(&e.to_string());
            Error::Io {
                what: format!("write at {offset}"),
                source: e,
            }
        })
    }

    /// The volume's health (shared with its views).
    pub fn health(&self) -> &Arc<Health> {
        &self.health
    }

    /// Looks at the host file for what no request sees: its name gone
    /// (deleted) or its size cut below the volume's end. Recorded in the
    /// volume's health; returns the host's size and link count.
    pub fn check_host(&self) -> Option<(u64, u64)> {
        if !self.host_is_file {
            return None;
        }
        let meta = self.host.metadata().ok()?;
        let (size, links) = (meta.len(), std::os::unix::fs::MetadataExt::nlink(&meta));
        if links == 0 {
            self.health.host_deleted();
        }
        if size < self.info.data_offset + self.info.data_size {
            self.health.host_shrunk(size);
        }
        Some((size, links))
    }

    /// Why a write ending at host offset `end` must not reach the host.
    fn refuse_host_write(&self, end: u64) -> Option<String> {
        let (size, links) = self.check_host()?;
        if links == 0 {
            Some("the container was deleted".into())
        } else if end > size {
            Some(format!("past the container's end at {size} bytes"))
        } else {
            None
        }
    }

    /// Discards (TRIM) whole sectors at `offset` of the data area: the
    /// host's blocks there are deallocated (a hole in a file; a discard on
    /// a device that supports it). Their contents read back as garbage
    /// afterwards, as on any discarded block. Refused like a write in the
    /// protected hidden volume.
    pub fn discard(&self, offset: u64, len: u64) -> Result<()> {
        if self.is_read_only() {
            return Err(Error::ReadOnly);
        }
        let size = usize::try_from(len)
            .map_err(|_| Error::InvalidArgument(format!("a discard of {len} bytes")))?;
        let at = self.host_range(offset, size)?;
        if let Some((start, end)) = self.protected
            && at < end
            && at + len > start
        {
            return Err(self.protect("discard"));
        }
        let (Ok(at), Ok(len)) = (i64::try_from(at), i64::try_from(len)) else {
            return Err(Error::InvalidArgument("a discard past 2^63".into()));
        };
        // SAFETY: fallocate(2) on a descriptor we own, with plain integers.
        let rc = unsafe {
            libc::fallocate(
                std::os::fd::AsRawFd::as_raw_fd(&self.host),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                at,
                len,
            )
        };
        if rc != 0 {
            return Err(Error::Io {
                what: format!("discard at {offset}"),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(())
    }

    fn touch(&self) {
        let now = self.opened_at.elapsed().as_secs();
        if self.last_io.load(Ordering::Relaxed) != now {
            self.last_io.store(now, Ordering::Relaxed);
        }
    }

    /// When the last read or write was, in seconds after opening: a mark
    /// that changes only with I/O.
    pub fn last_io(&self) -> u64 {
        self.last_io.load(Ordering::Relaxed)
    }

    /// How long since the last read or write.
    pub fn idle_for(&self) -> std::time::Duration {
        let last = self.last_io.load(Ordering::Relaxed);
        self.opened_at
            .elapsed()
            .saturating_sub(std::time::Duration::from_secs(last))
    }

    /// Makes written data durable in the host.
    pub fn sync(&self) -> Result<()> {
        self.host.sync_data().map_err(|e| {
            self.health.flush_failed(&e.to_string());
            Error::Io {
                what: "sync".into(),
                source: e,
            }
        })
    }
}

impl Drop for OpenVolume {
    /// The last write is done: the container's times go back to what they
    /// were before the mount. On the descriptor the volume was opened with
    /// (the caller's, whatever became of the file's name).
    fn drop(&mut self) {
        let Some(times) = self.host_times else {
            return;
        };
        if let Err(e) = times.put_back(&self.host) {
            tracing::warn!("cannot put the container's timestamps back: {e}");
        }
    }
}
