//! The daemon's D-Bus API as `tcctl` calls it, and its errors as exit
//! codes.

use std::collections::HashMap;
use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use zbus::zvariant::{Fd, OwnedObjectPath, OwnedValue, Value};
use zeroize::Zeroizing;

use tcd_proto::contract::ErrorKind;
use tcd_proto::contract::names::{
    BUS_NAME, DEFAULT_SOCKET, MANAGER_INTERFACE as INTERFACE, MANAGER_PATH as PATH,
    VOLUME_INTERFACE,
};

pub use tcd_proto::contract::errors::exit;

#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    /// A request the daemon would refuse as `InvalidArgument` (exit 7).
    pub fn invalid(message: String) -> Self {
        Failure {
            code: exit::INVALID_ARGUMENT,
            message,
        }
    }
    pub fn not_found(message: String) -> Self {
        Failure {
            code: exit::NOT_FOUND,
            message,
        }
    }

    /// A file `path` could not be made, read or written: exit 3 for a
    /// missing file or folder, 6 for permissions, 7 for one that exists,
    /// else 1; the message names the file.
    pub fn file(path: &std::path::Path, e: &std::io::Error) -> Self {
        use std::io::ErrorKind as K;
        let code = match e.kind() {
            K::NotFound => exit::NOT_FOUND,
            K::PermissionDenied | K::ReadOnlyFilesystem => exit::PERMISSION_DENIED,
            K::AlreadyExists | K::InvalidInput => exit::INVALID_ARGUMENT,
            _ => exit::FAILED,
        };
        let said = match e.kind() {
            K::ReadOnlyFilesystem => {
                "is on a read-only file system, where nothing can change it".to_owned()
            }
            K::IsADirectory => "is a folder: name a file".to_owned(),
            _ => io_text(e),
        };
        Failure {
            code: match e.kind() {
                K::IsADirectory => exit::INVALID_ARGUMENT,
                _ => code,
            },
            message: format!("{}: {said}", path.display()),
        }
    }
}

/// An I/O error as a user reads it: "No such file or directory", without
/// the "(os error 2)" Rust adds for programmers.
pub fn io_text(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

impl From<zbus::Error> for Failure {
    fn from(e: zbus::Error) -> Self {
        match &e {
            zbus::Error::MethodError(name, detail, _) => {
                let code = ErrorKind::from_dbus_name(name.as_str())
                    .map_or(exit::FAILED, ErrorKind::exit_code);
                // The daemon names its options by their D-Bus keys; the
                // user typed tcctl's.
                let message = detail.as_deref().map_or_else(
                    || name.to_string(),
                    tcd_proto::contract::flags::in_tcctl_words,
                );
                Failure { code, message }
            }
            // The connection broke under a call: the daemon stopped or
            // restarted. Said as unreachable, as a daemon not running is.
            zbus::Error::InputOutput(io) => Failure {
                code: exit::NO_DAEMON,
                message: format!(
                    "the daemon went away before it answered ({}): `tcctl list` shows what it \
                     holds once it runs again",
                    io_text(io)
                ),
            },
            _ => Failure {
                code: exit::FAILED,
                message: e.to_string(),
            },
        }
    }
}

pub struct Client {
    conn: zbus::blocking::Connection,
    /// The daemon's bus name on a message bus; none on its own socket.
    destination: Option<&'static str>,
}

/// Where the daemon is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Where<'a> {
    Socket(&'a Path),
    Session,
    System,
    /// The default socket if it exists, else the system bus.
    Default,
}

/// One favorite as the daemon lists it.
pub struct Favorite {
    /// The system's, not the caller's.
    pub system: bool,
    pub settings: tcd_proto::contract::favorite::Favorite,
}

/// A mounted volume: its object and the properties of its
/// `org.tcd.Volume1` interface.
pub struct Volume {
    pub object: OwnedObjectPath,
    pub view: VolumeView,
}

impl Volume {
    /// The number at the end of its object path.
    pub fn id(&self) -> Option<u32> {
        self.object.as_str().rsplit('/').next()?.parse().ok()
    }
    /// The container or device, as named at mount.
    pub fn host(&self) -> &str {
        self.view.host.as_deref().unwrap_or_default()
    }
    pub fn device(&self) -> &str {
        self.view.device.as_deref().unwrap_or_default()
    }
    /// `None` when only the block device is attached.
    pub fn mount_point(&self) -> Option<&str> {
        self.view.mount_point.as_deref().filter(|m| !m.is_empty())
    }
    pub fn state(&self) -> VolumeState {
        self.view.state.unwrap_or_default()
    }
    /// VeraCrypt's slot the daemon gave it; `None` while detaching, or
    /// from a daemon that keeps none.
    pub fn slot(&self) -> Option<u32> {
        self.view.slot.filter(|n| *n > 0)
    }
    /// "ok", "failed", or "unknown" from a daemon that does not say.
    pub fn health(&self) -> &str {
        self.view.health.as_deref().unwrap_or("unknown")
    }
}

/// A signal about one volume, for `tcctl watch`.
pub enum VolumeEvent {
    /// Dismounted without a call (`error` empty), or not (why).
    AutoDismounted {
        host: String,
        owner: u32,
        reason: String,
        error: String,
    },
    /// Its health changed: "failed" and what went wrong.
    HealthChanged {
        host: String,
        owner: u32,
        health: String,
        problems: Vec<String>,
    },
}

pub use tcd_proto::contract::volume::{HeaderInfo, VolumeState, VolumeView};

pub use tcd_proto::contract::rows::{
    BackendRow as Backend, BenchReport as Bench, CipherBenchRow as CipherBench,
    PolicyReply as PolicyView,
};

/// The system bus, if the daemon has its name there or the bus can start
/// it.
fn system_bus_with_daemon() -> Option<zbus::blocking::Connection> {
    let conn = zbus::blocking::Connection::system().ok()?;
    let dbus = zbus::blocking::fdo::DBusProxy::new(&conn).ok()?;
    let name = zbus::names::BusName::try_from(BUS_NAME).ok()?;
    let owned = dbus.name_has_owner(name).unwrap_or(false);
    let activatable = || {
        dbus.list_activatable_names()
            .map(|names| names.iter().any(|n| n.as_str() == BUS_NAME))
            .unwrap_or(false)
    };
    (owned || activatable()).then_some(conn)
}

fn as_values(k: &[Zeroizing<Vec<u8>>]) -> Vec<&[u8]> {
    k.iter().map(|k| k.as_slice()).collect()
}

impl Client {
    /// Connects to the daemon: on a socket (`--socket`, `$TCD_SOCKET`),
    /// on a bus (`--session`, `--system`), or by default on the system bus
    /// if the daemon is there (or can be started there), else on the
    /// default socket.
    pub fn connect(at: Where<'_>) -> Result<Client, Failure> {
        let no_daemon = |message: String| Failure {
            code: exit::NO_DAEMON,
            message,
        };
        let bus = |b: zbus::Result<zbus::blocking::Connection>, which: &str| {
            b.map(|conn| Client {
                conn,
                destination: Some(BUS_NAME),
            })
            .map_err(|e| no_daemon(format!("cannot reach the {which} bus: {e}")))
        };
        let path = match at {
            Where::Session => return bus(zbus::blocking::Connection::session(), "session"),
            Where::System => return bus(zbus::blocking::Connection::system(), "system"),
            Where::Socket(p) => p,
            Where::Default => match system_bus_with_daemon() {
                Some(conn) => {
                    return Ok(Client {
                        conn,
                        destination: Some(BUS_NAME),
                    });
                }
                None => Path::new(DEFAULT_SOCKET),
            },
        };
        let stream = UnixStream::connect(path).map_err(|e| match e.kind() {
            // The daemon's own socket is root's alone.
            std::io::ErrorKind::PermissionDenied => Failure {
                code: exit::PERMISSION_DENIED,
                message: format!(
                    "{}: {}: the daemon's socket is for root; users reach tcd on the system \
                     bus (tcctl --system), where polkit decides",
                    path.display(),
                    io_text(&e)
                ),
            },
            // Named as what it is: a folder or a file is no socket at all.
            _ => no_daemon(match std::fs::metadata(path) {
                Ok(m) if !std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()) => format!(
                    "cannot reach the tcd daemon at {}: it is a {}, not the daemon's socket",
                    path.display(),
                    if m.is_dir() { "folder" } else { "file" }
                ),
                _ => format!(
                    "cannot reach the tcd daemon at {}: {}",
                    path.display(),
                    io_text(&e)
                ),
            }),
        })?;
        let conn = zbus::blocking::connection::Builder::async_io_unix_stream(stream)
            .p2p()
            .build()?;
        Ok(Client {
            conn,
            destination: None,
        })
    }

    fn call<B, R>(&self, method: &str, body: &B) -> Result<R, Failure>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
        R: for<'d> zbus::zvariant::DynamicDeserialize<'d>,
    {
        let reply = self
            .conn
            .call_method(self.destination, PATH, Some(INTERFACE), method, body)?;
        Ok(reply.body().deserialize()?)
    }

    /// Ends this connection from another thread: a call in progress fails,
    /// and the daemon, seeing its caller go, stops what it did for it (a
    /// header search).
    pub fn closer(&self) -> impl FnOnce() + Send + 'static {
        let conn = self.conn.clone();
        move || {
            let _ = conn.close();
        }
    }

    /// Whether the processor has AES instructions, and every backend.
    pub fn backends(&self) -> Result<(bool, Vec<Backend>), Failure> {
        self.call("Backends", &())
    }

    pub fn wipe_cache(&self) -> Result<u32, Failure> {
        self.call("WipeCache", &())
    }

    pub fn policy(&self) -> Result<PolicyView, Failure> {
        // Six out arguments.
        type Reply = (String, String, String, bool, Vec<String>, Vec<String>);
        let (text, file, hardware_acceleration, all_allowed, allowed, prefer): Reply =
            self.call("Policy", &())?;
        Ok(PolicyView {
            text,
            file,
            hardware_acceleration,
            all_allowed,
            allowed,
            prefer,
        })
    }

    /// Notes on volumes that keep their old backends.
    pub fn set_policy(&self, text: &str) -> Result<Vec<String>, Failure> {
        self.call("SetPolicy", &(text,))
    }

    pub fn self_test(&self) -> Result<Vec<tcd_proto::contract::rows::SelfTestRow>, Failure> {
        self.call("SelfTest", &())
    }

    pub fn benchmark(&self, buffer_bytes: u64, show: bool) -> Result<Bench, Failure> {
        self.with_progress(
            "BenchmarkProgress",
            "{bar:40} {pos}/{len} {msg}",
            show,
            |m| {
                m.body()
                    .deserialize::<(u32, u32)>()
                    .ok()
                    .map(|(d, t)| (u64::from(d), u64::from(t)))
            },
            || {
                // Seven out arguments.
                type Reply = (
                    u32,
                    bool,
                    Vec<CipherBench>,
                    Vec<tcd_proto::contract::rows::KdfBenchRow>,
                    u64,
                    u32,
                    Vec<String>,
                );
                let (threads, cpu_has_aes, ciphers, kdfs, buffer_bytes, passes, simd): Reply =
                    self.call("Benchmark", &(buffer_bytes,))?;
                Ok(Bench {
                    threads,
                    cpu_has_aes,
                    ciphers,
                    kdfs,
                    buffer_bytes,
                    passes,
                    simd,
                })
            },
        )
    }

    /// Runs `call` while a progress bar follows the signal `member`
    /// (`progress` reads (done, total) from one).
    fn with_progress<T>(
        &self,
        member: &'static str,
        template: &str,
        show: bool,
        progress: fn(&zbus::Message) -> Option<(u64, u64)>,
        call: impl FnOnce() -> Result<T, Failure>,
    ) -> Result<T, Failure> {
        // Drawn from the first signal on: a bar of no length would show
        // as full while the key is derived.
        let bar = indicatif::ProgressBar::hidden();
        bar.set_style(
            indicatif::ProgressStyle::with_template(template)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        // Redrawn on a tick, not only on an update: the last update (the
        // end of the fill) falls inside the draw rate's limit, and without
        // a tick the bar would show an earlier one while mkfs runs.
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        let shown = bar.clone();
        // A fill's bar shows its rate; a count of steps has none.
        let bytes = template.contains("{bytes}");
        // Signals handled in one burst (a client kept waiting under load)
        // leave no time since the first to measure by: the call's own
        // time stands in at the end, so the rate is always said.
        let called = std::time::Instant::now();
        let r = self.with_signals(
            member,
            move |msg| {
                if let Some((done, total)) = progress(msg) {
                    if show && shown.is_hidden() {
                        shown.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                        shown.reset_elapsed();
                    }
                    shown.set_length(total);
                    shown.set_position(done);
                    if bytes {
                        shown.set_message(rate(done, shown.elapsed()));
                    }
                }
            },
            call,
        );
        // The reply may come before the last signal is handled: done is
        // drawn done, and stays on the screen.
        match (&r, bar.is_hidden(), bar.length()) {
            (Ok(_), false, Some(total)) if bytes => {
                bar.set_position(total);
                if bytes {
                    let since_first = rate(total, bar.elapsed());
                    bar.set_message(match since_first.is_empty() {
                        true => rate(total, called.elapsed()),
                        false => since_first,
                    });
                }
                bar.finish();
                eprintln!();
            }
            _ => bar.finish_and_clear(),
        }
        r
    }

    /// Runs `call` while `seen` is handed each signal `member` the daemon
    /// sends (to us: progress signals go to their caller alone).
    pub fn with_signals<T>(
        &self,
        member: &'static str,
        mut seen: impl FnMut(&zbus::Message) + Send + 'static,
        call: impl FnOnce() -> Result<T, Failure>,
    ) -> Result<T, Failure> {
        let mut rule = zbus::MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .interface(INTERFACE)?
            .member(member)?;
        if let Some(d) = self.destination {
            rule = rule.sender(d)?;
        }
        let signals =
            zbus::blocking::MessageIterator::for_match_rule(rule.build(), &self.conn, Some(64))?;
        // Left to end with the process: it waits on the connection.
        std::thread::spawn(move || {
            for msg in signals.flatten() {
                seen(&msg);
            }
        });
        call()
    }

    /// Your favorites and the system's.
    pub fn list_favorites(&self) -> Result<Vec<Favorite>, Failure> {
        let rows: Vec<(String, bool, HashMap<String, OwnedValue>)> =
            self.call("ListFavorites", &())?;
        rows.into_iter()
            .map(|(name, system, fields)| {
                let settings =
                    tcd_proto::contract::favorite::from_dict(&fields).map_err(|e| Failure {
                        code: exit::FAILED,
                        message: format!("the daemon listed favorite {name}: {e}"),
                    })?;
                Ok(Favorite { system, settings })
            })
            .collect()
    }

    pub fn add_favorite(
        &self,
        favorite: &tcd_proto::contract::favorite::Favorite,
        system: bool,
    ) -> Result<(), Failure> {
        let dict = tcd_proto::contract::favorite::to_dict(favorite);
        self.call("AddFavorite", &(dict, system))
    }

    pub fn remove_favorite(&self, name: &str, system: bool) -> Result<bool, Failure> {
        self.call("RemoveFavorite", &(name, system))
    }

    /// Every signal of the daemon's objects, as they come, until the
    /// connection ends.
    pub fn signals(&self) -> Result<impl Iterator<Item = zbus::Message>, Failure> {
        let mut rule = zbus::MatchRule::builder()
            .msg_type(zbus::message::Type::Signal)
            .path_namespace(PATH)?;
        if let Some(d) = self.destination {
            rule = rule.sender(d)?;
        }
        let messages =
            zbus::blocking::MessageIterator::for_match_rule(rule.build(), &self.conn, None)?;
        // On a bus the daemon sends a volume's signals only to clients it
        // knows may see that volume, and it knows a client once it called.
        self.list()?;
        Ok(messages.filter_map(Result::ok))
    }

    /// The daemon's `AutoDismounted` and `HealthChanged` signals, as they
    /// come, until the connection ends.
    pub fn volume_events(&self) -> Result<impl Iterator<Item = VolumeEvent>, Failure> {
        Ok(self.signals()?.filter_map(|m| {
            if m.header().interface()?.as_str() != INTERFACE {
                return None;
            }
            let body = m.body();
            match m.header().member()?.as_str() {
                "AutoDismounted" => {
                    let (_, host, owner, reason, error): (OwnedObjectPath, _, _, _, _) =
                        body.deserialize().ok()?;
                    Some(VolumeEvent::AutoDismounted {
                        host,
                        owner,
                        reason,
                        error,
                    })
                }
                "HealthChanged" => {
                    let (_, host, owner, health, problems): (OwnedObjectPath, _, _, _, _) =
                        body.deserialize().ok()?;
                    Some(VolumeEvent::HealthChanged {
                        host,
                        owner,
                        health,
                        problems,
                    })
                }
                _ => None,
            }
        }))
    }

    /// The volumes the caller may see, from the daemon's ObjectManager,
    /// in the order they were mounted.
    pub fn list(&self) -> Result<Vec<Volume>, Failure> {
        let mut volumes: Vec<Volume> = self
            .volume_objects::<VolumeView>()?
            .into_iter()
            .map(|(object, view)| Volume { object, view })
            .collect();
        volumes.sort_by_key(|v| v.id());
        Ok(volumes)
    }

    /// Each volume's properties as the daemon sends them, by object path
    /// (for `monitor`, which compares what is announced with them).
    pub fn volume_properties(
        &self,
    ) -> Result<HashMap<OwnedObjectPath, HashMap<String, OwnedValue>>, Failure> {
        self.volume_objects()
    }

    /// The volume interface of each object the ObjectManager has, read as
    /// `T`; objects without it are left out.
    fn volume_objects<T>(&self) -> Result<HashMap<OwnedObjectPath, T>, Failure>
    where
        T: for<'d> serde::Deserialize<'d> + zbus::zvariant::Type,
    {
        let reply = self.conn.call_method(
            self.destination,
            PATH,
            Some("org.freedesktop.DBus.ObjectManager"),
            "GetManagedObjects",
            &(),
        )?;
        let objects: HashMap<OwnedObjectPath, HashMap<String, T>> = reply.body().deserialize()?;
        Ok(objects
            .into_iter()
            .filter_map(|(object, mut interfaces)| {
                Some((object, interfaces.remove(VOLUME_INTERFACE)?))
            })
            .collect())
    }

    /// The processes (pid, command; 0 for another user's) still holding a
    /// volume a forced dismount left detaching; empty when it is gone.
    pub fn dismount(&self, name: &str, force: bool) -> Result<Vec<(u32, String)>, Failure> {
        self.call("Dismount", &(name, force))
    }

    /// Mounts the filesystem of the attached volume at `object`; where it
    /// was mounted.
    pub fn mount_filesystem(
        &self,
        object: &OwnedObjectPath,
        options: &tcd_proto::contract::FilesystemMountOptions,
    ) -> Result<String, Failure> {
        let reply = self.conn.call_method(
            self.destination,
            object.as_str(),
            Some(VOLUME_INTERFACE),
            "Mount",
            &(options,),
        )?;
        Ok(reply.body().deserialize()?)
    }

    /// Unmounts the filesystem of the volume at `object`, leaving it
    /// attached as its block device.
    pub fn unmount_filesystem(&self, object: &OwnedObjectPath, force: bool) -> Result<(), Failure> {
        let options = tcd_proto::contract::FilesystemUnmountOptions { force: Some(force) };
        self.conn.call_method(
            self.destination,
            object.as_str(),
            Some(VOLUME_INTERFACE),
            "Unmount",
            &(options,),
        )?;
        Ok(())
    }

    pub fn dismount_all(&self, force: bool) -> Result<u32, Failure> {
        self.call("DismountAll", &(force,))
    }

    pub fn mount(
        &self,
        host: &File,
        host_name: &str,
        password: &[u8],
        keyfiles: &[Zeroizing<Vec<u8>>],
        options: tcd_proto::contract::MountOptions,
    ) -> Result<OwnedObjectPath, Failure> {
        self.call(
            "Mount",
            &(
                Fd::from(host.as_fd()),
                host_name,
                password,
                as_values(keyfiles),
                options,
            ),
        )
    }

    pub fn header_info(
        &self,
        host: &File,
        password: &[u8],
        keyfiles: &[Zeroizing<Vec<u8>>],
        options: tcd_proto::contract::SearchOptions,
    ) -> Result<HeaderInfo, Failure> {
        self.call(
            "HeaderInfo",
            &(
                Fd::from(host.as_fd()),
                password,
                as_values(keyfiles),
                options,
            ),
        )
    }

    /// The master key (root only: the daemon refuses anyone else).
    pub fn header_master_key(
        &self,
        host: &File,
        password: &[u8],
        keyfiles: &[Zeroizing<Vec<u8>>],
        options: tcd_proto::contract::SearchOptions,
    ) -> Result<tcd_proto::contract::Secret, Failure> {
        self.call(
            "HeaderMasterKey",
            &(
                Fd::from(host.as_fd()),
                password,
                as_values(keyfiles),
                options,
            ),
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub fn change_password(
        &self,
        host: &File,
        password: &[u8],
        keyfiles: &[Zeroizing<Vec<u8>>],
        options: tcd_proto::contract::SearchOptions,
        new_password: &[u8],
        new_keyfiles: &[Zeroizing<Vec<u8>>],
        new_options: tcd_proto::contract::NewCredentials,
    ) -> Result<(), Failure> {
        self.call(
            "ChangePassword",
            &(
                Fd::from(host.as_fd()),
                password,
                as_values(keyfiles),
                options,
                new_password,
                as_values(new_keyfiles),
                new_options,
            ),
        )
    }

    /// `Expand`: the data area's new size, the filesystem, whether it
    /// was grown, and if not why.
    pub fn expand(
        &self,
        host: &File,
        password: &[u8],
        keyfiles: &[Zeroizing<Vec<u8>>],
        options: tcd_proto::contract::SearchOptions,
        expand: tcd_proto::contract::ExpandOptions,
        show: bool,
    ) -> Result<(u64, String, bool, String), Failure> {
        self.with_progress(
            "ExpandProgress",
            "{bar:40} {bytes}/{total_bytes} {msg}",
            show,
            |m| m.body().deserialize::<(u64, u64)>().ok(),
            || {
                self.call(
                    "Expand",
                    &(
                        Fd::from(host.as_fd()),
                        password,
                        as_values(keyfiles),
                        options,
                        expand,
                    ),
                )
            },
        )
    }

    pub fn backup_headers(
        &self,
        host: &File,
        out: &File,
        password: &[u8],
        keyfiles: &[Zeroizing<Vec<u8>>],
        options: tcd_proto::contract::SearchOptions,
    ) -> Result<(), Failure> {
        self.call(
            "BackupHeaders",
            &(
                Fd::from(host.as_fd()),
                Fd::from(out.as_fd()),
                password,
                as_values(keyfiles),
                options,
            ),
        )
    }

    /// From `backup`, or from the embedded backup header when `None`.
    pub fn restore_headers(
        &self,
        host: &File,
        backup: Option<&File>,
        password: &[u8],
        keyfiles: &[Zeroizing<Vec<u8>>],
        options: tcd_proto::contract::SearchOptions,
    ) -> Result<String, Failure> {
        let h = Fd::from(host.as_fd());
        match backup {
            Some(b) => self.call(
                "RestoreHeaders",
                &(
                    h,
                    Fd::from(b.as_fd()),
                    password,
                    as_values(keyfiles),
                    options,
                ),
            ),
            None => self.call(
                "RestoreEmbeddedHeader",
                &(h, password, as_values(keyfiles), options),
            ),
        }
    }

    /// Creates a volume, showing the daemon's progress signals as a bar.
    pub fn create(
        &self,
        host: &File,
        password: &[u8],
        keyfiles: &[Zeroizing<Vec<u8>>],
        options: tcd_proto::contract::CreateOptions,
    ) -> Result<(), Failure> {
        self.with_progress(
            "CreateProgress",
            "{bar:40} {bytes}/{total_bytes} {msg}",
            true,
            |m| m.body().deserialize::<(u64, u64)>().ok(),
            || {
                self.call(
                    "Create",
                    &(
                        Fd::from(host.as_fd()),
                        password,
                        as_values(keyfiles),
                        options,
                    ),
                )
            },
        )
    }
}

/// A D-Bus value as JSON, for `--json` output.
pub fn to_json(v: &Value<'_>) -> serde_json::Value {
    match v {
        Value::Bool(b) => (*b).into(),
        Value::U8(n) => (*n).into(),
        Value::U16(n) => (*n).into(),
        Value::U32(n) => (*n).into(),
        Value::U64(n) => (*n).into(),
        Value::I16(n) => (*n).into(),
        Value::I32(n) => (*n).into(),
        Value::I64(n) => (*n).into(),
        Value::F64(n) => (*n).into(),
        Value::Str(s) => s.as_str().into(),
        Value::Array(a) => a.iter().map(to_json).collect(),
        other => other.to_string().into(),
    }
}

/// Bytes per second since the bar was first drawn: the average, which a
/// fill of a few seconds needs (indicatif's own rate trails behind).
fn rate(done: u64, elapsed: std::time::Duration) -> String {
    let secs = elapsed.as_secs_f64();
    if secs < 0.01 {
        return String::new();
    }
    format!("{}/s", indicatif::HumanBytes((done as f64 / secs) as u64))
}
