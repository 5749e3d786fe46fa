//! The backends in the backend folder, described without loading them into
//! the daemon: a short-lived child process (`tcd --probe-backend FILE`)
//! loads each one and reports what it says about itself. So a library the
//! policy forbids never enters the daemon's memory, and one that crashes on
//! load takes down only the child.

use super::loader::{self, LoadedBackend};
use crate::error::{BackendProblem, Error, Result};
use serde::{Deserialize, Serialize};
use sha2::Digest;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tcd_proto::contract::policy::Candidate;

/// File names of backend libraries in a folder.
pub const BACKEND_PREFIX: &str = "libtcd_backend_";
/// A backend that takes longer than this to describe itself is skipped.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which backends may serve ciphers and in which order. The daemon's
/// policy answers; the engine knows nothing of its file or its form.
pub trait Selection {
    fn allows(&self, backend: &Found) -> bool;
    fn order(&self, backends: &mut [Arc<LoadedBackend>]);
}

/// What a backend says about itself, as the probe reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Described {
    pub name: String,
    pub description: String,
    pub version: String,
    pub uses_cpu_crypto: bool,
    /// Its `available()` on this processor.
    pub available: bool,
    pub ciphers: Vec<String>,
}

impl Described {
    pub fn of(b: &LoadedBackend) -> Described {
        Described {
            name: b.info.name.clone(),
            description: b.info.description.clone(),
            version: b.info.version.clone(),
            uses_cpu_crypto: b.info.uses_cpu_crypto,
            available: b.info.available,
            ciphers: b.info.ciphers.iter().map(|c| c.name.clone()).collect(),
        }
    }
}

/// One backend file of the folder.
#[derive(Debug)]
pub struct Found {
    pub file: PathBuf,
    /// SHA-256 of the file, in hex (empty if it could not be read).
    pub sha256: String,
    /// What it says about itself, or why it was skipped.
    pub described: std::result::Result<Described, String>,
    /// The daemon's copy, while anything uses it.
    loaded: Mutex<Weak<LoadedBackend>>,
}

impl Found {
    /// Whether the library is in the daemon's memory now.
    pub fn is_loaded(&self) -> bool {
        self.loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .strong_count()
            > 0
    }

    fn load(&self) -> Result<Arc<LoadedBackend>> {
        let mut slot = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(b) = slot.upgrade() {
            return Ok(b);
        }
        let b = Arc::new(loader::load(&self.file)?);
        *slot = Arc::downgrade(&b);
        Ok(b)
    }
}

impl Candidate for Found {
    fn name(&self) -> &str {
        self.described.as_ref().map_or("", |d| d.name.as_str())
    }
    fn uses_cpu_crypto(&self) -> bool {
        // A backend that could not describe itself is never used; counting
        // it as hardware keeps it out of a software-only policy too.
        self.described.as_ref().map_or(true, |d| d.uses_cpu_crypto)
    }
}

impl Candidate for LoadedBackend {
    fn name(&self) -> &str {
        &self.info.name
    }
    fn uses_cpu_crypto(&self) -> bool {
        self.info.uses_cpu_crypto
    }
}

/// The backend files of `dir`, in name order.
pub fn backend_files(dir: &Path) -> Result<Vec<PathBuf>> {
    crate::trust::check_folder(dir)?;
    let entries = std::fs::read_dir(dir).map_err(|e| Error::BackendDir {
        path: dir.to_path_buf(),
        problem: BackendProblem::Open(e.to_string()),
    })?;
    let mut paths: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(BACKEND_PREFIX) && n.ends_with(".so"))
        })
        .collect();
    paths.sort();
    Ok(paths)
}

/// Every backend file of a folder and what became of it.
#[derive(Debug)]
pub struct Catalog {
    pub dir: PathBuf,
    pub found: Vec<Found>,
}

impl Catalog {
    /// Describes every backend in `dir` through `prober` (the daemon's own
    /// executable, run with `--probe-backend FILE`).
    pub fn discover(dir: &Path, prober: &Path) -> Result<Catalog> {
        let mut found: Vec<Found> = Vec::new();
        for file in backend_files(dir)? {
            let mut described = probe(prober, &file);
            // Policies name backends: two of one name would be ambiguous.
            if let Ok(d) = &described
                && let Some(first) = found.iter().find(|f| f.name() == d.name)
            {
                described = Err(format!(
                    "backend {}: another backend is called {} ({})",
                    file.display(),
                    d.name,
                    first.file.display()
                ));
            }
            found.push(Found {
                sha256: sha256_hex(&file),
                described,
                loaded: Mutex::new(Weak::new()),
                file,
            });
        }
        Ok(Catalog {
            dir: dir.to_path_buf(),
            found,
        })
    }

    /// Loads (or keeps) the backends `selection` allows and that work on
    /// this processor, in its order of preference. Those that fail to load are
    /// returned beside them.
    pub fn select(&self, selection: &impl Selection) -> (Vec<Arc<LoadedBackend>>, Vec<Error>) {
        let mut chosen = Vec::new();
        let mut failed = Vec::new();
        for f in &self.found {
            let usable = f.described.as_ref().is_ok_and(|d| d.available);
            if !usable || !selection.allows(f) {
                continue;
            }
            match f.load() {
                Ok(b) => chosen.push(b),
                Err(e) => failed.push(e),
            }
        }
        selection.order(&mut chosen);
        (chosen, failed)
    }

    /// The entry of the backend called `name`.
    pub fn by_name(&self, name: &str) -> Option<&Found> {
        self.found.iter().find(|f| f.name() == name)
    }
}

fn sha256_hex(file: &Path) -> String {
    match std::fs::read(file) {
        Ok(bytes) => sha2::Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
        Err(_) => String::new(),
    }
}

/// Waits for a child of the daemon (a probe, the self-test) and its output
/// for at most `limit`, killing it past that. The error is `None` for a
/// child killed so, else why waiting failed.
pub(crate) fn wait_within(
    child: std::process::Child,
    limit: std::time::Duration,
) -> std::result::Result<std::process::Output, Option<String>> {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(e)) => Err(Some(e.to_string())),
        Err(_) => {
            if let Ok(pid) = i32::try_from(pid) {
                // SAFETY: kill(2) on our own child, which has not been
                // reaped (its waiter thread is still blocked in wait).
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            Err(None)
        }
    }
}

/// Runs the probe child for `file` and reads its report.
fn probe(prober: &Path, file: &Path) -> std::result::Result<Described, String> {
    let child = Command::new(prober)
        .arg("--probe-backend")
        .arg(file)
        .env_clear()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run the probe {}: {e}", prober.display()))?;
    let output = wait_within(child, PROBE_TIMEOUT).map_err(|e| match e {
        None => format!(
            "did not describe itself within {} s",
            PROBE_TIMEOUT.as_secs()
        ),
        Some(e) => format!("probe failed: {e}"),
    })?;
    let report: ProbeReport = serde_json::from_slice(&output.stdout).map_err(|_| {
        match std::os::unix::process::ExitStatusExt::signal(&output.status) {
            Some(sig) => format!("crashed while loading (signal {sig})"),
            None => format!("probe gave no report ({})", output.status),
        }
    })?;
    match report {
        ProbeReport::Ok(d) => Ok(d),
        ProbeReport::Refused(why) => Err(why),
    }
}

/// What the probe child prints: one JSON value.
#[derive(Serialize, Deserialize)]
enum ProbeReport {
    Ok(Described),
    Refused(String),
}

/// The probe child's work: load `file`, print what it says about itself,
/// and exit. Returns the process exit code.
pub fn probe_main(file: &Path) -> u8 {
    let (report, code) = match loader::load(file) {
        Ok(b) => (ProbeReport::Ok(Described::of(&b)), 0),
        Err(e) => (ProbeReport::Refused(e.to_string()), 1),
    };
    match serde_json::to_string(&report) {
        Ok(line) => println!("{line}"),
        Err(_) => return 2,
    }
    code
}
