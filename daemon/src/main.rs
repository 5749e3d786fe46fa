//! `tcd`: the privileged daemon that owns mounted volumes and every key.

use clap::Parser;
use std::path::PathBuf;
use std::sync::Arc;
use tcd::backends::Backends;
use tcd::engine::{self, Engine};
use tcd::mounts::MountTable;
use tcd::service::{self, Shared};

#[derive(Parser)]
#[command(
    version,
    about = "tcd: TrueCrypt and VeraCrypt volumes, served from user space"
)]
struct Args {
    /// The peer-to-peer D-Bus socket clients connect to.
    #[arg(long, env = "TCD_SOCKET", default_value = "/run/tcd/tcd.sock")]
    socket: PathBuf,
    /// Folder for the daemon's FUSE mounts.
    #[arg(long, default_value = "/run/tcd")]
    runtime_dir: PathBuf,
    /// Folder of cipher backend libraries (root-owned, writable by no one
    /// else). Default: /usr/lib/tcd/backends when installed, else the
    /// daemon's own folder if it holds backends (a development build).
    #[arg(long, env = "TCD_BACKEND_DIR")]
    backend_dir: Option<PathBuf>,
    /// The backend policy (TOML; a missing file allows every backend).
    #[arg(long, env = "TCD_POLICY", default_value = "/etc/tcd/policy.toml")]
    policy: PathBuf,
    /// Load one backend, print what it says about itself, and exit (the
    /// daemon runs itself so to describe backends it may not load).
    #[arg(long, hide = true, value_name = "FILE")]
    probe_backend: Option<PathBuf>,
    /// Check every cipher of these backends against the self-test's
    /// vectors at the `TCD_SIMD` level of the environment, print the
    /// checks, and exit (the self-test runs one child per level).
    #[arg(long, hide = true, value_name = "FILE", num_args = 1..)]
    self_test_ciphers: Option<Vec<PathBuf>>,
    /// Write the manual page (tcd.8) into this folder and exit (for
    /// packaging).
    #[arg(long, hide = true, value_name = "DIR")]
    generate_man: Option<PathBuf>,
    /// Folder of the daemon's state (users' favorites).
    #[arg(long, env = "TCD_STATE_DIR", default_value = "/var/lib/tcd")]
    state_dir: PathBuf,
    /// The system's favorites (TOML, root's), mounted by the daemon when
    /// marked auto_mount.
    #[arg(
        long,
        env = "TCD_SYSTEM_FAVORITES",
        default_value = "/etc/tcd/favorites.toml"
    )]
    system_favorites: PathBuf,
    /// How the kernel's requests for a volume file reach the daemon:
    /// `auto` uses FUSE over io_uring where the kernel is built with it
    /// (turning on its `fuse.enable_uring` switch, which only lets FUSE
    /// servers ask for it), else `/dev/fuse`; `classic` always `/dev/fuse`.
    #[arg(long, env = "TCD_FUSE_TRANSPORT", value_enum, default_value = "auto")]
    fuse_transport: FuseTransport,
    /// Cipher threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Serve on the session bus as org.tcd.Tcd1 (development).
    #[arg(long, conflicts_with = "system")]
    session: bool,
    /// Serve on the system bus as org.tcd.Tcd1 (the bus must let it own
    /// the name: /usr/share/dbus-1/system.d/org.tcd.Tcd1.conf, installed
    /// with the package).
    #[arg(long)]
    system: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum FuseTransport {
    Auto,
    Classic,
}

fn main() -> std::process::ExitCode {
    init_logging();
    let args = Args::parse();
    if let Some(dir) = &args.generate_man {
        use clap::CommandFactory;
        let mut page = Vec::new();
        let written = clap_mangen::Man::new(Args::command().name("tcd"))
            .section("8")
            .render(&mut page)
            .and_then(|()| std::fs::create_dir_all(dir))
            .and_then(|()| std::fs::write(dir.join("tcd.8"), page));
        return match written {
            Ok(()) => std::process::ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("tcd: {}: {e}", dir.display());
                std::process::ExitCode::FAILURE
            }
        };
    }
    if let Some(file) = &args.probe_backend {
        return std::process::ExitCode::from(engine::catalog::probe_main(file));
    }
    if let Some(files) = &args.self_test_ciphers {
        return std::process::ExitCode::from(tcd::selftest::ciphers::child_main(files));
    }
    match run(&args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> tcd::Result<()> {
    let hardened = tcd::hardening::harden()?;
    if hardened.memory_locked {
        tracing::info!("memory locked; core dumps off");
    } else {
        tracing::warn!("core dumps off, but memory could not be locked: secrets may reach swap");
    }
    let signals = block_signals();
    // The daemon describes backends by running itself: /proc/self/exe
    // stays right even if the binary on disk is replaced meanwhile.
    let backend_dir = args.backend_dir.clone().unwrap_or_else(default_backend_dir);
    tracing::info!(folder = %backend_dir.display(), "cipher backends");
    let backends = Backends::discover(
        &backend_dir,
        std::path::Path::new("/proc/self/exe"),
        &args.policy,
    )?;
    let engine = Arc::new(Engine::with_shared(Vec::new(), args.threads)?);
    let table =
        MountTable::new(engine, &args.runtime_dir)?.with_transport(match args.fuse_transport {
            FuseTransport::Auto => tcd::mount::Transport::Auto,
            FuseTransport::Classic => tcd::mount::Transport::Classic,
        });
    backends.install(&table)?;
    for done in table.clean_up_stale() {
        tracing::info!("left by a previous daemon: {done}");
    }
    let favorites = tcd::favorites::Favorites::new(&args.state_dir, &args.system_favorites);
    let shared = Shared::new(table, backends, favorites, &args.runtime_dir);
    let bus = match (args.session, args.system) {
        (true, _) => Some(service::Bus::Session),
        (_, true) => Some(service::Bus::System),
        _ => None,
    };
    {
        let shared = Arc::clone(&shared);
        let socket = args.socket.clone();
        std::thread::spawn(move || {
            let mut sig = wait_for(&signals);
            while sig == libc::SIGHUP {
                match shared.backends.reload(&shared.table) {
                    Ok(applied) => {
                        tracing::info!(moved = applied.moved.len(), "SIGHUP: policy reloaded");
                        shared.announce_changed(&applied.moved);
                        if applied.changed {
                            shared.announce_policy();
                        }
                    }
                    Err(e) => {
                        tracing::error!("SIGHUP: policy refused, the last good one stays: {e}")
                    }
                }
                sig = wait_for(&signals);
            }
            tracing::info!("signal {sig}: dismounting everything");
            stop(&shared, &socket);
            std::process::exit(0);
        });
    }
    match bus {
        Some(bus) => {
            let served = service::serve_bus(Arc::clone(&shared), bus)?;
            tracing::info!(name = service::BUS_NAME, ?bus, "serving on the bus");
            service::automation::start(&shared);
            // The connection serves on its own threads; the signal thread
            // ends the process, or this one when the bus connection goes:
            // no client can reach the daemon any more, so it stops with an
            // error and lets systemd start it again.
            let why = served
                .lost
                .recv()
                .unwrap_or_else(|_| "the bus dispatcher stopped".into());
            tracing::error!("lost the {bus:?} bus ({why}): dismounting everything");
            stop(&shared, &args.socket);
            Err(tcd::Error::Io {
                what: format!("lost the {bus:?} bus connection"),
                source: std::io::Error::new(std::io::ErrorKind::ConnectionAborted, why),
            })
        }
        None => {
            let listener = service::listen(&args.socket)?;
            tracing::info!(socket = %args.socket.display(), "listening");
            service::automation::start(&shared);
            service::serve(shared, listener)
        }
    }
}

/// Dismounts every volume and wipes the password cache, once: a second
/// caller (a signal during a stop for a lost bus) waits for the first.
fn stop(shared: &Shared, socket: &std::path::Path) {
    static STOPPING: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let mut done = STOPPING.lock().unwrap_or_else(|p| p.into_inner());
    if *done {
        return;
    }
    shared.cache.wipe(None);
    let volumes = shared.table.list();
    if let Err(e) = shared.table.dismount_all(true) {
        tracing::error!("dismount at exit: {e}");
    }
    shared.table.let_go_at_exit();
    // Clients hear of each dismount before the connections close with
    // the process (a volume left detaching goes with it too): nobody
    // called for it, so it is an automatic one, with its reason, which a
    // user's watcher reports.
    for m in &volumes {
        shared.announce_auto_dismount(m, "daemon stopping", "");
        shared.unpublish_blocking(m.id);
    }
    let _ = std::fs::remove_file(socket);
    *done = true;
}

/// Logs to journald when systemd connected standard error to the journal
/// (`$JOURNAL_STREAM` names that stream), else to standard error.
fn init_logging() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_env("TCD_LOG")
            // fuser reports our own orderly unmounts as warnings.
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,fuser=error"))
    };
    if stderr_is_journal()
        && let Ok(journal) = tracing_journald::layer()
    {
        tracing_subscriber::registry()
            .with(filter())
            .with(journal.with_syslog_identifier("tcd".into()))
            .init();
        return;
    }
    // Colour only for a person at a terminal: a log file or pipe gets
    // plain text.
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .init();
}

/// Whether standard error is the journal stream systemd set up
/// (`$JOURNAL_STREAM` is "device:inode" of it).
fn stderr_is_journal() -> bool {
    use std::os::unix::fs::MetadataExt;
    let Some(stream) = std::env::var_os("JOURNAL_STREAM") else {
        return false;
    };
    let Some((dev, ino)) = stream.to_str().and_then(|s| s.split_once(':')) else {
        return false;
    };
    let (Ok(dev), Ok(ino)) = (dev.parse::<u64>(), ino.parse::<u64>()) else {
        return false;
    };
    std::fs::metadata("/proc/self/fd/2").is_ok_and(|m| m.dev() == dev && m.ino() == ino)
}

/// Where backends are when no folder is named: the installed folder, or
/// next to a development build's binary.
fn default_backend_dir() -> PathBuf {
    let installed = PathBuf::from("/usr/lib/tcd/backends");
    if installed.is_dir() {
        return installed;
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.to_path_buf()))
        .filter(|d| engine::catalog::backend_files(d).is_ok_and(|files| !files.is_empty()));
    beside.unwrap_or(installed)
}

/// Blocks SIGTERM, SIGINT and SIGHUP in every thread (threads inherit the
/// mask), so one thread can wait for them and shut down in order.
fn block_signals() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise a sigset_t we own;
    // pthread_sigmask only reads it.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

fn wait_for(set: &libc::sigset_t) -> i32 {
    let mut sig = 0;
    // SAFETY: sigwait reads the set and writes the signal number into a
    // live i32.
    unsafe {
        libc::sigwait(set, &mut sig);
    }
    sig
}
