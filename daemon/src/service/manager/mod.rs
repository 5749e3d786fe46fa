//! `org.tcd.Manager1` at `/org/tcd/Tcd1`. Each method decodes its
//! arguments, authorises the caller, calls the application and encodes the
//! answer; the longer ones live beside this file by subject.

mod headers;
mod volumes;

use super::authority::Action;
use super::context::Ctx;
use super::decode::{self, Dict};
use super::errors::ServiceError;
use crate::app::input;
use tcd_proto::contract::rows::{BackendRow, CipherBenchRow, KdfBenchRow, SelfTestRow};
use tcd_proto::contract::{Secret, SecretList, VolumeRow, names};
use zbus::object_server::SignalEmitter;
use zbus::zvariant::{OwnedFd, OwnedObjectPath};

type Result<T> = std::result::Result<T, ServiceError>;
type Hdr<'a> = zbus::message::Header<'a>;

pub struct Manager {
    pub(super) ctx: Ctx,
}

#[zbus::interface(name = "org.tcd.Manager1")]
impl Manager {
    /// Opens the volume in `host` (a descriptor the client opened with its
    /// own rights) and mounts it. Options: `hash`, `encryption`, `format`,
    /// `pim` (u), `readonly` (b), `filesystem` ("auto" or "none"),
    /// `mount_point`, `allow_non_empty` (b), `discard` (b), `backend`,
    /// `protect_hidden_password` (ay), `protect_hidden_keyfiles` (aay),
    /// `protect_hidden_pim` (u), `cache` (b), `use_cache` (b),
    /// `dismount_on_logout` (b), `dismount_before_sleep` (b),
    /// `dismount_idle_seconds` (u), `force_dismount` (b); `favorite` (the
    /// caller's favorite this volume is, whose settings then apply) and
    /// `favorite_system` (b: the system's favorite of that name).
    #[allow(clippy::too_many_arguments)]
    async fn mount(
        &self,
        host: OwnedFd,
        host_name: String,
        password: Secret,
        keyfiles: SecretList,
        options: Dict,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<OwnedObjectPath> {
        let options = decode::options(&options)?;
        let call = crate::app::mount::MountCall {
            host: input::host_file(host.into())?,
            host_name,
            password,
            keyfiles,
            options,
        };
        self.mount_volume(call, emitter, &header, conn).await
    }

    /// Dismounts the volume named by its object path, host name, device or
    /// mount point. Returns the processes (pid, command) that still hold a
    /// volume a forced dismount left detaching; empty once it is gone.
    async fn dismount(
        &self,
        volume: String,
        force: bool,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<Vec<(u32, String)>> {
        let peer = self.ctx.caller(&header, conn).await?;
        self.ctx.dismount_named(&peer, &volume, force).await
    }

    /// Dismounts every volume the caller may manage; returns how many.
    async fn dismount_all(
        &self,
        force: bool,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<u32> {
        let peer = self.ctx.caller(&header, conn).await?;
        self.dismount_every(&peer, force).await
    }

    /// The caller's mounted volumes (root and `manage-others`: every one).
    async fn list_volumes(
        &self,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<Vec<VolumeRow>> {
        let peer = self.ctx.caller(&header, conn).await?;
        self.volume_rows(&peer).await
    }

    /// What a volume's header says, without mounting it. Same options as
    /// `Mount` for the search.
    #[allow(clippy::too_many_arguments)]
    async fn header_info(
        &self,
        host: OwnedFd,
        password: Secret,
        keyfiles: SecretList,
        options: Dict,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<tcd_proto::contract::HeaderInfo> {
        let opening = self
            .opening(host, password, keyfiles, &options, &header, conn)
            .await?;
        self.run_search(
            opening,
            emitter,
            &header,
            conn,
            move |app, peer, o, cancel| app.header_info(&peer, o, cancel),
        )
        .await
    }

    /// The master key of the volume the password opens, as its header
    /// holds it. Root only (the daemon checks the caller's uid itself,
    /// whatever polkit allows). Same arguments as `HeaderInfo`.
    #[allow(clippy::too_many_arguments)]
    async fn header_master_key(
        &self,
        host: OwnedFd,
        password: Secret,
        keyfiles: SecretList,
        options: Dict,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<Secret> {
        let peer = self.ctx.caller(&header, conn).await?;
        if peer.uid != 0 {
            return Err(ServiceError::denied("only root may read a master key"));
        }
        let opening = self
            .opening(host, password, keyfiles, &options, &header, conn)
            .await?;
        let key = self
            .run_search(
                opening,
                emitter,
                &header,
                conn,
                move |app, peer, o, cancel| app.header_master_key(&peer, o, cancel),
            )
            .await?;
        tracing::warn!(uid = peer.uid, "a master key was read");
        Ok(key)
    }

    /// Makes a volume over all of `host` (a file the client sized, or a
    /// device) and a filesystem inside. Options: `format` ("veracrypt",
    /// "truecrypt"), `encryption`, `hash`, `pim` (u), `sector_size` (u),
    /// `quick` (b), `filesystem` ("ext4", "fat", "exfat", "btrfs", "xfs",
    /// "ntfs", "none"), `hidden_size` (t) with `outer_password` (ay) and
    /// `outer_keyfiles` (aay) for a hidden volume inside an existing one.
    /// Emits `CreateProgress` while filling.
    #[allow(clippy::too_many_arguments)]
    async fn create(
        &self,
        host: OwnedFd,
        password: Secret,
        keyfiles: SecretList,
        options: Dict,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<()> {
        let options = decode::options(&options)?;
        let call = crate::app::create::CreateCall {
            host: input::host_file(host.into())?,
            password,
            keyfiles,
            options,
        };
        // A new container tcctl made beside the file it replaces is named
        // by that file, whose place it takes once made.
        let writing = headers::Writing::of(&call.host)?.named_as_replaced();
        let detail = match call.options.hidden_size {
            Some(_) => "hidden".to_owned(),
            None => String::new(),
        };
        self.create_volume(call, emitter, &header, conn).await?;
        self.written(writing, "Create", detail, &header, conn).await;
        Ok(())
    }

    /// Progress of the caller's header search (`Mount`, `HeaderInfo`,
    /// `HeaderMasterKey`, `ChangePassword`, `BackupHeaders`,
    /// `RestoreHeaders`, `RestoreEmbeddedHeader`): the format and hash being tried, on the
    /// "primary" or "backup" headers, the share done (0 to 1) and the
    /// seconds left (-1: not known yet). Sent to the caller alone, at each
    /// change of format, hash or headers, and otherwise at most four times
    /// a second.
    #[zbus(signal)]
    async fn search_progress(
        emitter: &SignalEmitter<'_>,
        format: &str,
        hash: &str,
        headers: &str,
        done: f64,
        seconds_left: i64,
    ) -> zbus::Result<()>;

    /// Progress of `Create`'s data fill, in bytes.
    #[zbus(signal)]
    async fn create_progress(
        emitter: &SignalEmitter<'_>,
        done: u64,
        total: u64,
    ) -> zbus::Result<()>;

    /// Changes what opens a volume: new password, keyfiles, PIM, hash, or
    /// format (`new_format`: "truecrypt" or "veracrypt"; absent keeps it).
    /// `options` as for `HeaderInfo` select the volume; `new_options`:
    /// `pim` (u), `hash` (s), `format` (s). Works on a mounted volume too.
    #[allow(clippy::too_many_arguments)]
    async fn change_password(
        &self,
        host: OwnedFd,
        password: Secret,
        keyfiles: SecretList,
        options: Dict,
        new_password: Secret,
        new_keyfiles: SecretList,
        new_options: Dict,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<()> {
        let new = decode::new_options(&new_options)?;
        let opening = self
            .opening(host, password, keyfiles, &options, &header, conn)
            .await?;
        let writing = headers::Writing::of(&opening.host)?;
        let converted = self
            .run_search(
                opening,
                emitter,
                &header,
                conn,
                move |app, peer, o, cancel| {
                    app.change_password(&peer, o, new_password, new_keyfiles, new, cancel)
                },
            )
            .await?;
        let detail = converted.map(|f| f.name().to_owned()).unwrap_or_default();
        self.written(writing, "ChangePassword", detail, &header, conn)
            .await;
        Ok(())
    }

    /// VeraCrypt's Expand Volume, on a dismounted volume: grows the
    /// container `host` to `size` (t; absent for a device, which has grown:
    /// the volume fills it), encrypts the new space unless `no_random_fill`
    /// (b), writes the backup headers at the new end and the primary header
    /// with the new size (the master key stays), then grows the filesystem
    /// inside (ext2/3/4, XFS, btrfs). `options` as for `HeaderInfo`. A
    /// hidden volume, and one whose owner says (`holds_hidden`, b) that it
    /// holds one, is refused. Returns the data area's new size, the
    /// filesystem, whether it was grown, and a note of lines: if not
    /// grown, why and how to grow it; if the backup header opened the
    /// volume, `EXPANDED_BY_BACKUP`; and first, when both headers held the
    /// size already and the data area's end had never been written (an
    /// expansion left unfinished, its primary header since restored from
    /// the backup), that this expansion finished it. Emits `SearchProgress`, then
    /// `ExpandProgress` while filling.
    #[allow(clippy::too_many_arguments)]
    async fn expand(
        &self,
        host: OwnedFd,
        password: Secret,
        keyfiles: SecretList,
        options: Dict,
        expand_options: Dict,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<(u64, String, bool, String)> {
        let x = decode::options(&expand_options)?;
        let opening = self
            .opening(host, password, keyfiles, &options, &header, conn)
            .await?;
        let writing = headers::Writing::of(&opening.host)?;
        let e = self.run_expand(opening, x, emitter, &header, conn).await?;
        self.written(writing, "Expand", String::new(), &header, conn)
            .await;
        let fs = e.filesystem;
        // One line each: an unfinished expansion finished, why the
        // filesystem was not grown, and that the backup header opened it.
        let finished = e
            .finished
            .map(|tail| tcd_proto::contract::options::expansion_finished(tail, e.filled));
        let by_backup = e
            .by_backup
            .then(|| tcd_proto::contract::options::EXPANDED_BY_BACKUP.to_owned());
        let note: Vec<String> = finished
            .into_iter()
            .chain(Some(fs.note).filter(|n| !n.is_empty()))
            .chain(by_backup)
            .collect();
        Ok((e.size, fs.filesystem, fs.grown, note.join("\n")))
    }

    /// A call wrote a volume's headers: `method` (`Create`, `Expand`,
    /// `ChangePassword`, `RestoreHeaders`, `RestoreEmbeddedHeader`) on
    /// `host` of the caller `owner`, `size` the host's bytes once written;
    /// `detail`: for `RestoreHeaders` the backup file it read, for
    /// `Create` "hidden" when it wrote a hidden volume inside an existing
    /// one, for `ChangePassword` the format ("TrueCrypt", "VeraCrypt") the
    /// header was converted to; else empty. Sent to the clients that may
    /// see that caller's volumes.
    #[zbus(signal)]
    async fn headers_written(
        emitter: &SignalEmitter<'_>,
        host: &str,
        owner: u32,
        method: &str,
        size: u64,
        detail: &str,
    ) -> zbus::Result<()>;

    /// Progress of `Expand`'s fill of the new space, in bytes.
    #[zbus(signal)]
    async fn expand_progress(
        emitter: &SignalEmitter<'_>,
        done: u64,
        total: u64,
    ) -> zbus::Result<()>;

    /// Writes both header slots of the volume that the password opens to
    /// `backup` (a file the client opened for writing): 128 KiB, the same
    /// whether or not a hidden volume exists.
    #[allow(clippy::too_many_arguments)]
    async fn backup_headers(
        &self,
        host: OwnedFd,
        backup: OwnedFd,
        password: Secret,
        keyfiles: SecretList,
        options: Dict,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<()> {
        let backup = input::host_file(backup.into())?;
        let opening = self
            .opening(host, password, keyfiles, &options, &header, conn)
            .await?;
        self.run_search(
            opening,
            emitter,
            &header,
            conn,
            move |app, peer, o, cancel| app.backup_headers(&peer, o, backup, cancel),
        )
        .await
    }

    /// Restores the header the password opens from `backup` (a header
    /// backup file's descriptor) to the volume's primary and backup
    /// places. Returns which header it restored.
    #[allow(clippy::too_many_arguments)]
    async fn restore_headers(
        &self,
        host: OwnedFd,
        backup: OwnedFd,
        password: Secret,
        keyfiles: SecretList,
        options: Dict,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<String> {
        let backup = Some(input::host_file(backup.into())?);
        self.restore(
            host, backup, password, keyfiles, &options, emitter, &header, conn,
        )
        .await
    }

    /// Copies the embedded backup header the password opens over the
    /// damaged primary one. Returns which header it used.
    #[allow(clippy::too_many_arguments)]
    async fn restore_embedded_header(
        &self,
        host: OwnedFd,
        password: Secret,
        keyfiles: SecretList,
        options: Dict,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<String> {
        self.restore(
            host, None, password, keyfiles, &options, emitter, &header, conn,
        )
        .await
    }

    /// Every backend file found, loaded or not, and whether the processor
    /// has AES instructions.
    fn backends(&self) -> (bool, Vec<BackendRow>) {
        (
            crate::app::backends::cpu_has_aes(),
            self.ctx.shared.backend_rows(),
        )
    }

    /// The backend policy: its text, its file, `hardware_acceleration`,
    /// whether every backend is allowed, the allowed names (when not), and
    /// the order of preference. Open to everyone.
    // A literal tuple: zbus makes its fields separate out arguments.
    fn policy(&self) -> (String, String, String, bool, Vec<String>, Vec<String>) {
        let p = self.ctx.shared.policy_reply();
        (
            p.text,
            p.file,
            p.hardware_acceleration,
            p.all_allowed,
            p.allowed,
            p.prefer,
        )
    }

    /// Replaces the policy (root only) and applies it at once: mounted
    /// volumes move to allowed backends without a dismount. Returns a note
    /// for each volume that keeps its old backends until dismounted.
    async fn set_policy(
        &self,
        text: String,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<Vec<String>> {
        let peer = self.ctx.caller(&header, conn).await?;
        self.ctx.authorise(&peer, Action::SetPolicy).await?;
        let app = self.ctx.app();
        let applied = blocking::unblock(move || app.set_policy(&text)).await?;
        tracing::info!(
            uid = peer.uid,
            changed = applied.changed,
            "policy set over D-Bus"
        );
        self.ctx.shared.announce_changed_async(&applied.moved).await;
        if applied.changed {
            self.ctx.shared.announce_policy_async().await;
        }
        Ok(applied.kept)
    }

    /// The backend policy was replaced (`SetPolicy` or SIGHUP); `Policy`
    /// says what it is now. Sent to every client.
    #[zbus(signal)]
    async fn policy_changed(emitter: &SignalEmitter<'_>) -> zbus::Result<()>;

    /// The caller's favorites and the system's: (name, system, favorite).
    /// The favorite's keys are those of the favorites file.
    async fn list_favorites(
        &self,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<Vec<(String, bool, super::favorites::Dict)>> {
        let peer = self.ctx.caller(&header, conn).await?;
        self.favorites_of(&peer).await
    }

    /// Adds a favorite (replacing one of the same name) to the caller's
    /// list, or with `system` to the system's (polkit
    /// `manage-system-favorites`).
    async fn add_favorite(
        &self,
        favorite: super::favorites::Dict,
        system: bool,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<()> {
        let peer = self.ctx.caller(&header, conn).await?;
        let fav = super::favorites::from_dict(&favorite)?;
        let owner = self.ctx.favorites_owner(&peer, system).await?;
        let app = self.ctx.app();
        Ok(blocking::unblock(move || app.add_favorite(owner, fav)).await?)
    }

    /// Removes a favorite; whether there was one.
    async fn remove_favorite(
        &self,
        name: String,
        system: bool,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<bool> {
        input::bounded("the favorite name", &name)?;
        let peer = self.ctx.caller(&header, conn).await?;
        let owner = self.ctx.favorites_owner(&peer, system).await?;
        let app = self.ctx.app();
        Ok(blocking::unblock(move || app.remove_favorite(owner, &name)).await?)
    }

    /// A volume was dismounted without a call (`reason`: "idle", "logout",
    /// "sleep", "device removed", "daemon stopping"), or could not be
    /// (`error` non-empty).
    #[zbus(signal)]
    async fn auto_dismounted(
        emitter: &SignalEmitter<'_>,
        volume: zbus::zvariant::ObjectPath<'_>,
        host: &str,
        owner: u32,
        reason: &str,
        error: &str,
    ) -> zbus::Result<()>;

    /// Something went wrong with a volume (`health` "failed"), or what went
    /// wrong changed: `problems` says what, in words. Sent as the volume's
    /// `Health` and `Problems` properties change.
    #[zbus(signal)]
    async fn health_changed(
        emitter: &SignalEmitter<'_>,
        volume: zbus::zvariant::ObjectPath<'_>,
        host: &str,
        owner: u32,
        health: &str,
        problems: Vec<String>,
    ) -> zbus::Result<()>;

    /// Wipes the caller's cached passwords (root: everyone's); returns how
    /// many were wiped.
    async fn wipe_cache(
        &self,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<u32> {
        let peer = self.ctx.caller(&header, conn).await?;
        let n = (self.ctx.shared.cache).wipe((peer.uid != 0).then_some(peer.uid));
        tracing::info!(uid = peer.uid, wiped = n, "password cache wiped");
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    /// TrueCrypt's benchmark, on the engine mounted volumes use: every
    /// encryption algorithm on each choice of allowed backends over a
    /// buffer of `buffer_bytes` once (0: 1 MiB, cache-sized, 100 times)
    /// on all cores, and the header key derivation of each PRF. Returns
    /// the threads used, whether the processor has AES instructions, the
    /// cipher rows, the PRF rows, the buffer's bytes, the passes over it
    /// and the code path (SIMD) of each cipher row.
    /// Emits `BenchmarkProgress`.
    async fn benchmark(
        &self,
        buffer_bytes: u64,
        #[zbus(signal_emitter)] emitter: SignalEmitter<'_>,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<(
        u32,
        bool,
        Vec<CipherBenchRow>,
        Vec<KdfBenchRow>,
        u64,
        u32,
        Vec<String>,
    )> {
        let r = self
            .run_benchmark(buffer_bytes, emitter, &header, conn)
            .await?;
        Ok((
            r.threads,
            r.cpu_has_aes,
            r.ciphers,
            r.kdfs,
            r.buffer_bytes,
            r.passes,
            r.simd,
        ))
    }

    /// TrueCrypt's Test Vectors: every encryption algorithm on each
    /// backend that serves it at each SIMD level this processor runs, and
    /// every hash and header-key PRF on each path of the key search,
    /// against published test vectors. Any local user may run it (it
    /// touches no secret). Returns one row per algorithm, backend and
    /// code path: `(algorithm, backend, path, passed, problem)`.
    async fn self_test(
        &self,
        #[zbus(header)] header: Hdr<'_>,
        #[zbus(connection)] conn: &zbus::Connection,
    ) -> Result<Vec<SelfTestRow>> {
        let peer = self.ctx.caller(&header, conn).await?;
        let app = self.ctx.app();
        let rows = blocking::unblock(move || app.self_test()).await?;
        let failed = rows.iter().filter(|r| !r.passed).count();
        tracing::info!(uid = peer.uid, checks = rows.len(), failed, "self-test");
        Ok(rows)
    }

    /// Steps of `Benchmark` done, of `total`.
    #[zbus(signal)]
    async fn benchmark_progress(
        emitter: &SignalEmitter<'_>,
        done: u32,
        total: u32,
    ) -> zbus::Result<()>;

    /// The interface version.
    #[zbus(property)]
    fn version(&self) -> u32 {
        names::VERSION
    }

    /// Client connections the daemon holds (on its own socket, the ones
    /// whose client has not hung up).
    #[zbus(property)]
    fn clients(&self) -> u32 {
        u32::try_from(self.ctx.shared.connection_count()).unwrap_or(u32::MAX)
    }
}
