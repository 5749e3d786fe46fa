//! Helpers shared by the end-to-end tests: where the built backends are, the
//! real TrueCrypt/VeraCrypt images, and tools the tests need.
//!
//! A test that needs a tool or a file fails with a message naming it; it
//! never skips (CI installs everything).

pub mod cryptsetup;
pub mod daemon;
pub mod loop_device;
pub mod process;
pub mod pty;
pub mod system;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The cargo output folder of this build (`target/debug` or
/// `target/release`), where the backend libraries are.
pub fn build_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test>-<hash>
    let deps = exe.parent().expect("deps folder");
    deps.parent().expect("profile folder").to_path_buf()
}

/// tcctl(1) as the built `tcctl generate-dist` writes it.
pub fn tcctl_manual_page() -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let st = std::process::Command::new(build_dir().join("tcctl"))
        .arg("generate-dist")
        .arg(dir.path())
        .status()
        .expect("tcctl generate-dist");
    assert!(st.success(), "tcctl generate-dist: {st}");
    std::fs::read_to_string(dir.path().join("tcctl.1")).expect("tcctl.1")
}

/// The path of a built backend library, e.g. `backend_lib("soft")`.
pub fn backend_lib(name: &str) -> PathBuf {
    let p = build_dir().join(format!("libtcd_backend_{name}.so"));
    assert!(
        p.is_file(),
        "{} is missing: build the workspace first (`cargo build --workspace` or the README's test command)",
        p.display()
    );
    p
}

/// The repository's top folder.
/// Compiles the C backend fixture (`tests/fixtures/c_backend.c`) with
/// `defines` (`-D` each) into `dir/name`.
pub fn build_c_backend(dir: &Path, name: &str, defines: &[&str]) -> PathBuf {
    require_tool("cc", "package gcc");
    let out = dir.join(name);
    let st = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o"])
        .arg(&out)
        .arg("-I")
        .arg(repo_dir().join("proto/include"))
        .arg(repo_dir().join("tests/fixtures/c_backend.c"))
        .args(defines.iter().map(|d| format!("-D{d}")))
        .status()
        .expect("run cc");
    assert!(st.success(), "cc failed for {name}");
    out
}

pub fn repo_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root")
        .to_path_buf()
}

/// The read-only shared folder beside the checkout (`../shared`), or
/// `$TCD_SHARED`.
pub fn shared_dir() -> PathBuf {
    let p = std::env::var_os("TCD_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_dir().join("../shared"));
    assert!(
        p.is_dir(),
        "the shared folder {} is missing (set TCD_SHARED)",
        p.display()
    );
    p
}

/// Panics with a clear message unless `tool` runs.
pub fn require_tool(tool: &str, hint: &str) -> PathBuf {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain(
            ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
                .iter()
                .map(PathBuf::from),
        )
        .map(|d| d.join(tool))
        .find(|p| p.is_file());
    match found {
        Some(p) => p,
        None => panic!("this test needs `{tool}` ({hint}); dist/test.sh installs it"),
    }
}

/// The system's Python, whose jeepney (a D-Bus library) the distribution
/// packages.
pub const PYTHON: &str = "/usr/bin/python3";

/// Panics with a clear message unless [`PYTHON`] runs with jeepney.
pub fn require_python_with_jeepney() {
    assert!(
        Path::new(PYTHON).is_file(),
        "this test needs {PYTHON} (package python3); dist/test.sh installs it"
    );
    let out = Command::new(PYTHON)
        .args(["-c", "import jeepney"])
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "this test needs jeepney for {PYTHON} (package python3-jeepney); dist/test.sh installs it: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The unpacked `tcrypt-images/` folder of real TrueCrypt and VeraCrypt
/// volumes, unpacked once per test process into a temporary folder.
pub fn tcrypt_images() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        require_tool("tar", "package tar");
        require_tool("xz", "package xz-utils");
        let archive = shared_dir().join("tcrypt-images/tcrypt-images.tar.xz");
        let meta = std::fs::metadata(&archive)
            .unwrap_or_else(|e| panic!("{} is missing: {e}", archive.display()));
        // Unpacked once per archive and shared by every test process (a
        // static's temporary folder would never be removed): named by the
        // archive's size and time, moved into place whole.
        let stamp = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        let dir = std::env::temp_dir().join(format!("tcd-images-{}-{stamp}", meta.len()));
        let path = dir.join("tcrypt-images");
        if path.is_dir() {
            return path;
        }
        let tmp = tempfile::Builder::new()
            .prefix("tcd-images-unpacking-")
            .tempdir()
            .expect("temp folder");
        let st = Command::new("tar")
            .arg("xJf")
            .arg(&archive)
            .arg("-C")
            .arg(tmp.path())
            .status()
            .expect("run tar");
        assert!(st.success(), "tar failed to unpack {}", archive.display());
        // Another process may have won the race: its copy is as good.
        let unpacked = tmp.keep();
        if std::fs::rename(&unpacked, &dir).is_err() {
            let _ = std::fs::remove_dir_all(&unpacked);
        }
        assert!(path.is_dir(), "{} was not unpacked", path.display());
        path
    })
}

/// An engine over the built backends, in order of preference.
pub fn engine(order: &[&str]) -> tcd::engine::Engine {
    engine_with_threads(order, 2)
}

/// As [`engine`] with `threads` workers (0: one per core).
pub fn engine_with_threads(order: &[&str], threads: usize) -> tcd::engine::Engine {
    let loaded = order
        .iter()
        .map(|b| tcd::engine::loader::load(&backend_lib(b)).expect("backend loads"))
        .collect();
    tcd::engine::Engine::new(loaded, threads).expect("engine")
}

/// A password alone as credentials: no keyfiles, the default PIM.
pub fn creds(password: &[u8]) -> tcd::volume::unlock::Credentials<'_> {
    tcd::volume::unlock::Credentials {
        password,
        keyfiles: &[],
        pim: 0,
    }
}

/// A path as the text a command line takes.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// Whether a filesystem is mounted exactly at `path`.
pub fn is_mount_point(path: &Path) -> bool {
    tcd_proto::mount_table::now()
        .iter()
        .any(|m| m.point == path)
}

/// The volume serial of a FAT boot sector, as blkid prints it (DEAD-BABE is
/// 0xDEADBABE), or None when the sector is no FAT boot sector.
pub fn fat_serial(sector: &[u8]) -> Option<u32> {
    if sector.len() < 512 || sector[510..512] != [0x55, 0xaa] {
        return None;
    }
    let at = if &sector[0x52..0x57] == b"FAT32" {
        0x43
    } else {
        0x27
    };
    Some(u32::from_le_bytes(sector[at..at + 4].try_into().ok()?))
}

/// Panics with a clear message unless the test runs as root (loop devices,
/// mounts; CI runs as root).
pub fn require_root() {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().next())
        .expect("Uid line");
    assert_eq!(uid, "0", "this test needs root (CI runs as root)");
}

/// Root, /dev/fuse, losetup and blkid: what serving a volume needs.
pub fn require_root_and_fuse() {
    require_root();
    assert!(Path::new("/dev/fuse").exists(), "this test needs /dev/fuse");
    require_tool("losetup", "package mount");
    require_tool("blkid", "package util-linux");
}

/// A new host file of `size` bytes, open for reading and writing.
pub fn new_host(path: &Path, size: u64) -> std::fs::File {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .expect("create host file");
    f.set_len(size).expect("size host file");
    f
}

/// An existing file, open for reading and writing.
pub fn open_rw(path: &Path) -> std::fs::File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The filesystem UUID `blkid` reads on `device` (a FAT serial: DEAD-BABE).
pub fn blkid_uuid(device: &Path) -> String {
    let out = Command::new(require_tool("blkid", "package util-linux"))
        .args(["-p", "-o", "value", "-s", "UUID"])
        .arg(device)
        .output()
        .expect("blkid");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The values of `TCD_SIMD` (the backends' SIMD cap), widest first. A
/// level the processor lacks makes the backends fall back to the best they
/// have below it, so every one can be forced on any machine.
pub const SIMD_LEVELS: [&str; 3] = ["avx512", "avx2", "sse2"];

/// Runs the named tests of this test executable again in a child process
/// for each [`SIMD_LEVELS`] value of `TCD_SIMD`, so they cover every code
/// path of the backends this processor can run, and panics unless each run
/// passed all of them.
pub fn rerun_under_each_simd_level(tests: &[&str]) {
    let exe = std::env::current_exe().expect("test executable path");
    for level in SIMD_LEVELS {
        let out = Command::new(&exe)
            .args(tests)
            .args(["--exact", "--test-threads", "1"])
            .env("TCD_SIMD", level)
            .output()
            .expect("test executable runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let summary = format!("{} passed; 0 failed", tests.len());
        assert!(
            out.status.success() && text.contains(&summary),
            "TCD_SIMD={level}: {}\n{text}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
