//! Backends as policy, end to end through the real daemon and `tcctl`: a
//! software-only policy keeps the AES-NI library out of the daemon's memory
//! map; switching to software while a volume is written loses no byte;
//! broken backend files are skipped with a log line; the benchmark covers
//! every algorithm; a policy with an error is refused and the last good one
//! stays. Needs root, /dev/fuse, losetup, mkfs.ext4, cc, and a processor
//! with AES instructions (CI has them all).

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tcd_tests::daemon::Daemon;
use tcd_tests::{build_dir, repo_dir, require_tool};

const AESNI_LIB: &str = "libtcd_backend_aesni.so";

/// Whether the daemon's memory map holds the AES-NI library.
fn maps_aesni(d: &Daemon) -> bool {
    std::fs::read_to_string(format!("/proc/{}/maps", d.pid()))
        .expect("daemon's maps")
        .contains(AESNI_LIB)
}

/// Waits up to 10 s for the library to leave the map (the last request
/// that used it may still be finishing).
fn wait_aesni_unmapped(d: &Daemon) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while maps_aesni(d) {
        assert!(
            Instant::now() < deadline,
            "{AESNI_LIB} is still mapped in the daemon"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn require_cpu_aes() {
    #[cfg(target_arch = "x86_64")]
    assert!(
        std::arch::is_x86_feature_detected!("aes"),
        "this test needs a processor with AES instructions"
    );
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

fn backend<'a>(list: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    list["backends"]
        .as_array()
        .expect("backends")
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no backend {name} in {list}"))
}

/// A policy file in a folder of its own.
fn policy(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("policy.toml");
    if !text.is_empty() {
        std::fs::write(&path, text).expect("write policy");
    }
    (dir, path)
}

fn create(d: &Daemon, vol: &Path, size: &str, filesystem: &str) {
    create_with(d, vol, size, filesystem, "AES");
}

fn create_with(d: &Daemon, vol: &Path, size: &str, filesystem: &str, encryption: &str) {
    let v = vol.to_str().expect("utf-8");
    d.ok(
        &[
            "create",
            v,
            "--size",
            size,
            "--encryption",
            encryption,
            "--hash",
            "sha512",
            "--pim",
            "1",
            "--force",
            "--filesystem",
            filesystem,
            "--password-stdin",
        ],
        "policy test\n",
    );
}

fn mount_args<'a>(vol: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "mount",
        vol,
        "--hash",
        "sha512",
        "--pim",
        "1",
        "--password-stdin",
    ];
    a.extend_from_slice(extra);
    a
}

#[test]
fn software_only_policy_never_loads_the_aesni_library() {
    require_cpu_aes();
    let (_p, path) = policy("hardware_acceleration = \"disabled\"\n");
    let d = Daemon::start_with(&[OsStr::new("--policy"), path.as_os_str()]);
    assert!(
        !maps_aesni(&d),
        "{AESNI_LIB} mapped under a software-only policy"
    );

    let list = json(&d.ok(&["backends", "--json"], ""));
    assert_eq!(list["cpu_aes"], true);
    assert_eq!(list["hardware_acceleration"], "disabled");
    let aesni = backend(&list, "aesni");
    assert_eq!(aesni["available"], true);
    assert_eq!(aesni["allowed"], false);
    assert_eq!(aesni["loaded"], false);
    assert_eq!(aesni["uses_cpu_crypto"], true);
    let sha = aesni["sha256"].as_str().expect("sha256");
    assert_eq!(sha.len(), 64, "a SHA-256 in hex: {sha}");
    let soft = backend(&list, "soft");
    assert_eq!(soft["loaded"], true);
    assert_eq!(soft["uses_cpu_crypto"], false);

    // Creating, mounting, writing and reading back: all in software.
    let vol = d.path("v.vc");
    let v = vol.to_str().expect("utf-8");
    create(&d, &vol, "48M", "ext4");
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mount point");
    let m = mnt.to_str().expect("utf-8");
    d.ok(&mount_args(v, &[m]), "policy test\n");
    let rows = d.list();
    assert_eq!(rows[0]["backends"], serde_json::json!(["soft"]));
    let data: Vec<u8> = (0..3 << 20).map(|i: u32| (i * 7 % 253) as u8).collect();
    std::fs::write(mnt.join("f"), &data).expect("write");
    d.ok(&["dismount", m], "");

    // Forcing the forbidden backend is refused, naming the policy.
    let (code, msg) = d.fails(&mount_args(v, &[m, "--backend", "aesni"]), "policy test\n");
    assert_eq!(code, 6, "permission denied: {msg}");
    assert!(msg.contains("not allowed by the policy"), "{msg}");

    d.ok(&mount_args(v, &[m]), "policy test\n");
    assert_eq!(std::fs::read(mnt.join("f")).expect("read"), data);
    d.ok(&["dismount", m], "");

    // The benchmark obeys the policy too.
    let bench = json(&d.ok(&["benchmark", "--size", "256K", "--json"], ""));
    for row in bench["ciphers"].as_array().expect("rows") {
        let layers = row["backends"].as_array().expect("an array of layers");
        assert!(layers.iter().all(|b| b == "soft"), "{row}");
        assert_eq!(row["hardware_aes"], false, "{row}");
    }
    assert!(
        !maps_aesni(&d),
        "{AESNI_LIB} mapped after create, mount and benchmark"
    );
}

/// 16 MiB written as 64 chunks of 256 KiB with O_DIRECT, pass after pass;
/// chunk bytes depend on the pass.
const CHUNK: usize = 256 << 10;
const CHUNKS: usize = 64;

fn chunk_bytes(pass: usize, chunk: usize) -> Vec<u8> {
    (0..CHUNK)
        .map(|i| ((i / 512) as u8) ^ (chunk as u8).wrapping_mul(31) ^ (pass as u8).wrapping_mul(97))
        .collect()
}

/// A 4096-aligned buffer of `len` bytes inside `store`.
fn aligned(store: &mut Vec<u8>, len: usize) -> &mut [u8] {
    store.resize(len + 4096, 0);
    let at = store.as_ptr().align_offset(4096);
    &mut store[at..at + len]
}

fn open_direct(device: &str, write: bool) -> std::fs::File {
    std::fs::OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_DIRECT)
        .open(device)
        .unwrap_or_else(|e| panic!("open {device} O_DIRECT: {e}"))
}

fn read_back(device: &str) -> Vec<Vec<u8>> {
    let dev = open_direct(device, false);
    let mut store = Vec::new();
    (0..CHUNKS)
        .map(|c| {
            let buf = aligned(&mut store, CHUNK);
            dev.read_exact_at(buf, (c * CHUNK) as u64).expect("read");
            buf.to_vec()
        })
        .collect()
}

#[test]
fn switching_to_software_while_writing_loses_no_byte() {
    require_cpu_aes();
    let (_p, path) = policy("");
    let d = Daemon::start_with(&[OsStr::new("--policy"), path.as_os_str()]);
    let vol = d.path("v.vc");
    let v = vol.to_str().expect("utf-8");
    create(&d, &vol, "24M", "none");
    d.ok(&mount_args(v, &["--filesystem", "none"]), "policy test\n");
    let rows = d.list();
    assert_eq!(rows[0]["backends"], serde_json::json!(["aesni"]));
    assert!(maps_aesni(&d));
    let device = rows[0]["device"].as_str().expect("device").to_owned();

    // Write pass after pass until told to stop, then one more whole pass.
    let passes = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (passes, stop, device) = (Arc::clone(&passes), Arc::clone(&stop), device.clone());
        std::thread::spawn(move || {
            let dev = open_direct(&device, true);
            let mut store = Vec::new();
            let mut stop_seen_at = None;
            for pass in 0.. {
                for c in 0..CHUNKS {
                    let buf = aligned(&mut store, CHUNK);
                    buf.copy_from_slice(&chunk_bytes(pass, c));
                    dev.write_all_at(buf, (c * CHUNK) as u64).expect("write");
                    if c == CHUNKS / 2 {
                        passes.store(pass + 1, Ordering::SeqCst);
                    }
                }
                if stop_seen_at.is_none() && stop.load(Ordering::SeqCst) {
                    stop_seen_at = Some(pass);
                } else if stop_seen_at.is_some() {
                    return pass;
                }
            }
            unreachable!()
        })
    };
    while passes.load(Ordering::SeqCst) < 2 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = d.ok(
        &["policy", "set", "--hardware-acceleration", "disabled"],
        "",
    );
    assert!(
        out.contains("hardware_acceleration = \"disabled\""),
        "{out}"
    );
    // The writer was mid-pass during the switch (it stops only when told)
    // and writes one more whole pass after it.
    stop.store(true, Ordering::SeqCst);
    let last = writer.join().expect("writer");

    // Moved without a dismount, visible in the list, and the library left.
    let rows = d.list();
    assert_eq!(rows[0]["backends"], serde_json::json!(["soft"]));
    assert_eq!(rows.as_array().expect("rows").len(), 1);
    wait_aesni_unmapped(&d);
    let want: Vec<Vec<u8>> = (0..CHUNKS).map(|c| chunk_bytes(last, c)).collect();
    let got = read_back(&device);
    for c in 0..CHUNKS {
        assert!(got[c] == want[c], "chunk {c} differs after the switch");
    }

    // What is on disk decrypts the same after a fresh mount.
    d.ok(&["dismount", &device], "");
    d.ok(&mount_args(v, &["--filesystem", "none"]), "policy test\n");
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    assert!(
        read_back(&device) == want,
        "contents differ after remounting"
    );
    d.ok(&["dismount", &device], "");
}

fn build_wrong_abi_backend(dir: &Path) -> PathBuf {
    require_tool("cc", "package gcc");
    let out = dir.join("libtcd_backend_wrongabi.so");
    let st = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-DWRONG_ABI", "-o"])
        .arg(&out)
        .arg("-I")
        .arg(repo_dir().join("proto/include"))
        .arg(repo_dir().join("tests/fixtures/c_backend.c"))
        .status()
        .expect("run cc");
    assert!(st.success(), "cc failed");
    out
}

#[test]
fn broken_backend_files_are_skipped_with_a_log_line() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    for name in ["libtcd_backend_soft.so", AESNI_LIB] {
        std::fs::copy(build_dir().join(name), dir.path().join(name)).expect("copy backend");
    }
    let soft = std::fs::read(build_dir().join("libtcd_backend_soft.so")).expect("read soft");
    let truncated = dir.path().join("libtcd_backend_truncated.so");
    // Headers whole, loadable segments cut short.
    std::fs::write(&truncated, &soft[..16 << 10]).expect("write");
    // Good, but a second backend called "soft".
    let twin = dir.path().join("libtcd_backend_twin.so");
    std::fs::copy(build_dir().join("libtcd_backend_soft.so"), &twin).expect("copy");
    let text = dir.path().join("libtcd_backend_text.so");
    std::fs::write(&text, "this is not a library\n").expect("write");
    let wrong = build_wrong_abi_backend(dir.path());
    for f in [&truncated, &text, &wrong, &twin] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    let d = Daemon::start_with(&[OsStr::new("--backend-dir"), dir.path().as_os_str()]);
    for f in [&truncated, &text, &wrong, &twin] {
        d.wait_for_log(
            &format!("backend skipped: backend {}", f.display()),
            &format!("no log line for {}", f.display()),
        );
    }
    let log = std::fs::read_to_string(d.path("tcd.log")).expect("log");
    assert!(log.contains("ABI version"), "wrong ABI named: {log}");
    assert!(log.contains("another backend is called soft"), "{log}");

    let list = json(&d.ok(&["backends", "--json"], ""));
    let all = list["backends"].as_array().expect("backends");
    assert_eq!(all.len(), 6, "{list}");
    let skipped: Vec<_> = all.iter().filter(|b| !b["problem"].is_null()).collect();
    assert_eq!(skipped.len(), 4, "{list}");
    for b in &skipped {
        assert_eq!(b["loaded"], false);
    }
    assert_eq!(backend(&list, "soft")["loaded"], true);

    // And it serves: a volume is made and opened.
    let vol = d.path("v.vc");
    create(&d, &vol, "4M", "none");
    let info = d.ok(
        &[
            "info",
            vol.to_str().expect("utf-8"),
            "--hash",
            "sha512",
            "--pim",
            "1",
            "--password-stdin",
        ],
        "policy test\n",
    );
    assert!(info.contains("AES"), "{info}");
}

/// TrueCrypt's and VeraCrypt's encryption algorithms, as their menus name
/// them.
const ALGORITHMS: [&str; 15] = [
    "AES",
    "Serpent",
    "Twofish",
    "Camellia",
    "Kuznyechik",
    "AES-Twofish",
    "AES-Twofish-Serpent",
    "Serpent-AES",
    "Serpent-Twofish-AES",
    "Twofish-Serpent",
    "Camellia-Kuznyechik",
    "Camellia-Serpent",
    "Kuznyechik-AES",
    "Kuznyechik-Serpent-Camellia",
    "Kuznyechik-Twofish",
];

#[test]
fn the_benchmark_has_a_row_for_every_algorithm_and_prf() {
    require_cpu_aes();
    let d = Daemon::start();
    let b = json(&d.ok(&["benchmark", "--size", "1M", "--json"], ""));
    // Binary sizes, as TrueCrypt's: 1M is 1 MiB.
    assert_eq!(b["buffer_bytes"], 1_048_576);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(b["threads"], cores);
    assert_eq!(b["cpu_aes"], true);
    let rows = b["ciphers"].as_array().expect("rows");
    for name in ALGORITHMS {
        let of: Vec<_> = rows.iter().filter(|r| r["encryption"] == name).collect();
        assert!(!of.is_empty(), "no row for {name}: {b}");
        for r in &of {
            for k in ["encrypt_mbs", "decrypt_mbs", "mean_mbs"] {
                let v = r[k].as_f64().expect("MB/s");
                assert!(v > 0.0, "{name} {k} = {v}");
            }
        }
    }
    assert_eq!(
        rows.len(),
        ALGORITHMS.len() + 6,
        "AES and the five cascades with AES twice, with and without aesni: {b}"
    );
    let aes: Vec<_> = rows.iter().filter(|r| r["encryption"] == "AES").collect();
    assert!(
        aes.iter()
            .any(|r| r["backends"] == serde_json::json!(["aesni"]) && r["hardware_aes"] == true)
    );
    assert!(
        aes.iter()
            .any(|r| r["backends"] == serde_json::json!(["soft"]) && r["hardware_aes"] == false)
    );
    let means: Vec<f64> = rows
        .iter()
        .map(|r| r["mean_mbs"].as_f64().unwrap_or(0.0))
        .collect();
    assert!(
        means.windows(2).all(|w| w[0] >= w[1]),
        "sorted by speed: {means:?}"
    );

    let prfs: Vec<_> = b["prfs"].as_array().expect("prfs").iter().collect();
    let names: Vec<_> = prfs
        .iter()
        .map(|p| p["prf"].as_str().unwrap_or(""))
        .collect();
    for prf in [
        "SHA-512",
        "SHA-256",
        "Whirlpool",
        "BLAKE2s-256",
        "Streebog",
        "RIPEMD-160",
    ] {
        assert!(names.contains(&prf), "no row for {prf}: {names:?}");
    }
    for p in prfs {
        assert!(
            p["iterations_per_second"].as_f64().unwrap_or(0.0) > 0.0,
            "{p}"
        );
        let trial = p["trial_seconds"].as_f64().unwrap_or(0.0);
        let expect = p["iterations"].as_f64().unwrap_or(0.0)
            / p["iterations_per_second"].as_f64().unwrap_or(1.0);
        assert!((trial - expect).abs() < 1e-6 * expect.max(1.0), "{p}");
    }
}

#[test]
fn a_policy_with_an_error_is_refused_and_the_last_good_one_stays() {
    require_cpu_aes();
    let (_p, path) = policy("hardware_acceleration = \"auto\"\n");
    let d = Daemon::start_with(&[OsStr::new("--policy"), path.as_os_str()]);
    let before = std::fs::read_to_string(&path).expect("policy");

    // Over D-Bus: refused with its line and column; the file is untouched.
    let (code, msg) = d.fails(
        &["policy", "set", "--file", "-"],
        "allowed = [\"soft\"]\nhardware_acceleration = \"sometimes\"\n",
    );
    assert_eq!(code, 7, "{msg}");
    assert!(msg.contains("line 2, column 25"), "{msg}");
    assert_eq!(std::fs::read_to_string(&path).expect("policy"), before);
    // A name on the command line is a usage error; in a policy file, the
    // daemon refuses the policy.
    let (code, msg) = d.fails(&["policy", "set", "--allow", "nothing-here"], "");
    assert_eq!(code, 64, "a policy that allows no backend: {msg}");
    let (code, msg) = d.fails(
        &["policy", "set", "--file", "-"],
        "allowed = [\"nothing-here\"]\n",
    );
    assert_eq!(code, 7, "a policy that allows no backend: {msg}");
    let shown = json(&d.ok(&["policy", "show", "--json"], ""));
    assert_eq!(shown["hardware_acceleration"], "auto");
    assert!(shown["allowed"].is_null(), "{shown}");

    // Edited by hand and reloaded with SIGHUP: a broken file is refused...
    std::fs::write(
        &path,
        "hardware_acceleration = \"disabled\"\nprefer = [\"soft\"\n",
    )
    .expect("write");
    d.signal(1);
    d.wait_for_log(
        "policy refused, the last good one stays",
        "bad file refused",
    );
    let log = std::fs::read_to_string(d.path("tcd.log")).expect("log");
    assert!(
        log.contains(&format!("{}: line 2", path.display())),
        "{log}"
    );
    let shown = json(&d.ok(&["policy", "show", "--json"], ""));
    assert_eq!(shown["hardware_acceleration"], "auto");
    assert!(maps_aesni(&d), "the last good policy (auto) stays");

    // ...and a good one applies at once.
    let mut f = std::fs::File::create(&path).expect("rewrite");
    f.write_all(b"hardware_acceleration = \"disabled\"\n")
        .expect("write");
    drop(f);
    d.signal(1);
    d.wait_for_log("SIGHUP: policy reloaded", "good file applied");
    let shown = json(&d.ok(&["policy", "show", "--json"], ""));
    assert_eq!(shown["hardware_acceleration"], "disabled");
    wait_aesni_unmapped(&d);
}

#[test]
fn a_volume_no_allowed_backend_serves_keeps_its_backend_until_dismounted() {
    require_cpu_aes();
    let (_p, path) = policy("");
    let d = Daemon::start_with(&[OsStr::new("--policy"), path.as_os_str()]);
    let vol = d.path("t.vc");
    let v = vol.to_str().expect("utf-8");
    create_with(&d, &vol, "4M", "none", "Twofish");
    d.ok(&mount_args(v, &["--filesystem", "none"]), "policy test\n");
    let device = d.list()[0]["device"].as_str().expect("device").to_owned();
    let before = read_first(&device);

    // Only aesni allowed: it has no Twofish, so the volume stays on soft,
    // and the call says so.
    let out = d.ok(&["policy", "set", "--allow", "aesni"], "");
    assert!(
        out.contains("keeps soft until dismounted"),
        "a note names the volume: {out}"
    );
    assert_eq!(d.list()[0]["backends"], serde_json::json!(["soft"]));
    assert_eq!(read_first(&device), before, "still served");
    let list = json(&d.ok(&["backends", "--json"], ""));
    assert_eq!(backend(&list, "soft")["allowed"], false);
    assert_eq!(
        backend(&list, "soft")["loaded"],
        true,
        "in use by the volume"
    );

    // Once dismounted, it cannot be mounted again under this policy.
    d.ok(&["dismount", &device], "");
    let (code, msg) = d.fails(
        &mount_args(v, &["--filesystem", "none", "--encryption", "Twofish"]),
        "policy test\n",
    );
    assert_eq!(code, 8, "unsupported cipher: {msg}");
    // Without --encryption the search cannot tell the policy from a wrong
    // password (the header opens only with the right cipher): a wrong
    // password, and the encryptions it could not try, each named once.
    let (code, msg) = d.fails(&mount_args(v, &["--filesystem", "none"]), "policy test\n");
    assert_eq!(code, 2, "{msg}");
    let (_, untried) = msg
        .split_once("(not tried, as no backend the policy allows has them: ")
        .unwrap_or_else(|| panic!("the untried encryptions are named: {msg}"));
    let names: Vec<&str> = untried
        .split(')')
        .next()
        .unwrap_or_default()
        .split(", ")
        .collect();
    assert!(names.contains(&"Twofish"), "{msg}");
    assert!(!names.contains(&"AES"), "aesni has AES: {msg}");
    let mut once = names.clone();
    once.sort_unstable();
    once.dedup();
    assert_eq!(once.len(), names.len(), "each named once: {msg}");
    let list = json(&d.ok(&["backends", "--json"], ""));
    assert_eq!(
        backend(&list, "soft")["loaded"],
        false,
        "unloaded when unused"
    );
    // Every backend allowed, but one asked for: what it lacks is said to be
    // its, not the policy's.
    d.ok(&["policy", "set", "--allow-all"], "");
    let (code, msg) = d.fails(
        &mount_args(v, &["--filesystem", "none", "--backend", "aesni"]),
        "policy test\n",
    );
    assert_eq!(code, 2, "{msg}");
    let (_, lacking) = msg
        .split_once("(not tried, as backend aesni, the one asked for, has none of them: ")
        .unwrap_or_else(|| panic!("the backend is named: {msg}"));
    assert!(lacking.contains("Twofish"), "{msg}");
    assert!(!msg.contains("the policy allows"), "{msg}");
}

/// The first 64 KiB of a device, read around the page cache.
fn read_first(device: &str) -> Vec<u8> {
    let dev = open_direct(device, false);
    let mut store = Vec::new();
    let buf = aligned(&mut store, 64 << 10);
    dev.read_exact_at(buf, 0).expect("read");
    buf.to_vec()
}

/// The `simd` array of the row of `encryption` on `backends`.
fn simd_of(bench: &serde_json::Value, encryption: &str, backends: &[&str]) -> serde_json::Value {
    bench["ciphers"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["encryption"] == encryption && r["backends"] == serde_json::json!(backends))
        .unwrap_or_else(|| panic!("no row {encryption} on {backends:?}: {bench}"))["simd"]
        .clone()
}

#[test]
fn the_benchmark_names_the_code_path_each_cipher_ran() {
    require_cpu_aes();
    // Capped at SSE2, every processor runs the same paths.
    let d = Daemon::start_with_env(&[], &[("TCD_SIMD", "sse2")]);
    let b = json(&d.ok(&["benchmark", "--size", "256K", "--json"], ""));
    assert_eq!(b["buffer_bytes"], 262_144);
    assert_eq!(b["passes"], 1);
    assert_eq!(
        simd_of(&b, "AES", &["aesni"]),
        serde_json::json!(["AES-NI"])
    );
    assert_eq!(simd_of(&b, "AES", &["soft"]), serde_json::json!(["SSE2"]));
    assert_eq!(
        simd_of(&b, "Serpent", &["soft"]),
        serde_json::json!(["SSE2"])
    );
    assert_eq!(
        simd_of(&b, "Twofish", &["soft"]),
        serde_json::json!(["portable"])
    );
    assert_eq!(
        simd_of(&b, "Kuznyechik", &["soft"]),
        serde_json::json!(["SSE2"])
    );
    assert_eq!(
        simd_of(&b, "AES-Twofish-Serpent", &["soft"]),
        serde_json::json!(["SSE2", "portable", "SSE2"])
    );
    // People see it as the table's last column.
    let table = d.ok(&["benchmark", "--size", "256K"], "");
    let row = table
        .lines()
        .find(|l| l.starts_with("AES ") && l.contains(" aesni "))
        .unwrap_or_else(|| panic!("no AES row on aesni: {table}"));
    assert!(row.ends_with(" hardware  AES-NI"), "{row:?}");
    assert!(
        table.lines().any(|l| l.starts_with("AES-Twofish-Serpent ")
            && l.contains(" soft ")
            && l.ends_with(" software  SSE2+portable+SSE2")),
        "{table}"
    );
}

#[test]
fn the_default_benchmark_passes_over_a_cache_sized_buffer() {
    require_cpu_aes();
    let d = Daemon::start();
    let b = json(&d.ok(&["benchmark", "--json"], ""));
    assert_eq!(b["buffer_bytes"], 1 << 20);
    assert_eq!(b["passes"], 100);
    // The widest path this processor runs.
    let aes = simd_of(&b, "AES", &["aesni"]);
    assert!(
        ["VAES-512", "VAES-256", "AES-NI"].contains(&aes[0].as_str().unwrap_or("")),
        "{aes}"
    );
    let table = d.ok(&["benchmark"], "");
    assert!(
        table.starts_with("Buffer 1 MiB x 100 passes on "),
        "{table}"
    );
    // Sizes are binary, as TrueCrypt's and create's; one that is no whole
    // number of data units says how it was taken.
    let table = d.ok(&["benchmark", "--size", "8M"], "");
    assert!(table.starts_with("Buffer 8 MiB on "), "{table}");
    let table = d.ok(&["benchmark", "--size", "512KiB"], "");
    assert!(table.starts_with("Buffer 512 KiB on "), "{table}");
    let table = d.ok(&["benchmark", "--size", "1000"], "");
    assert!(
        table.starts_with("Buffer 512 bytes (rounded down to whole 512-byte units) on "),
        "{table}"
    );
    // Less than one data unit is no buffer (0 is not "the default"); more
    // than the bound is refused in a whole sentence.
    for small in ["0", "1", "511"] {
        let (code, msg) = d.fails(&["benchmark", "--size", small], "");
        assert_eq!(code, 64, "{msg}");
        assert!(
            msg.contains(&format!(
                "a benchmark buffer holds at least one 512-byte data unit, not {small} bytes"
            )),
            "{msg}"
        );
    }
    // Beyond what even root may ask: the command line is wrong.
    let (code, msg) = d.fails(&["benchmark", "--size", "2G"], "");
    assert_eq!(code, 64, "{msg}");
    assert!(
        msg.contains("a benchmark buffer is at most 1 GiB (root; 256 MiB for other users)"),
        "{msg}"
    );
}

#[test]
fn policy_set_keeps_the_shipped_files_comments_and_layout() {
    let shipped =
        std::fs::read_to_string(repo_dir().join("dist/etc/policy.toml")).expect("shipped policy");
    let (_p, path) = policy(&shipped);
    let d = Daemon::start_with(&[OsStr::new("--policy"), path.as_os_str()]);
    // Nothing to set is a usage error naming the options; the file is not
    // touched (not even rewritten as it is).
    let before = std::fs::metadata(&path)
        .expect("policy")
        .modified()
        .expect("mtime");
    let (code, msg) = d.fails(&["policy", "set"], "");
    assert_eq!(code, 64, "{msg}");
    assert!(
        msg.contains("--hardware-acceleration") && msg.contains("--file"),
        "{msg}"
    );
    let after = std::fs::metadata(&path)
        .expect("policy")
        .modified()
        .expect("mtime");
    assert_eq!(before, after);
    let comments = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.find('#').map(|at| l[at..].to_owned()))
            .collect()
    };
    d.ok(
        &["policy", "set", "--hardware-acceleration", "disabled"],
        "",
    );
    let disabled = std::fs::read_to_string(&path).expect("policy");
    assert_eq!(comments(&disabled), comments(&shipped), "{disabled}");
    assert_eq!(
        disabled,
        shipped.replace(
            "hardware_acceleration = \"auto\"",
            "hardware_acceleration = \"disabled\""
        )
    );
    let shown = json(&d.ok(&["policy", "show", "--json"], ""));
    assert_eq!(shown["hardware_acceleration"], "disabled");
    d.ok(&["policy", "set", "--hardware-acceleration", "auto"], "");
    assert_eq!(std::fs::read_to_string(&path).expect("policy"), shipped);
    let shown = json(&d.ok(&["policy", "show", "--json"], ""));
    assert_eq!(shown["hardware_acceleration"], "auto");

    // A whole file with comments of its own, sent with --file, is the
    // new policy file as the administrator wrote it.
    let mine = "# Only the software backend on this host (ticket 4711).
                hardware_acceleration = \"disabled\"  # no AES-NI here

                # Keep the portable code first.
prefer = [\"soft\"]
";
    d.ok(&["policy", "set", "--file", "-"], mine);
    assert_eq!(std::fs::read_to_string(&path).expect("policy"), mine);
    let shown = json(&d.ok(&["policy", "show", "--json"], ""));
    assert_eq!(shown["hardware_acceleration"], "disabled");
    // ...and a later change of one setting keeps those comments.
    d.ok(&["policy", "set", "--hardware-acceleration", "auto"], "");
    let edited = std::fs::read_to_string(&path).expect("policy");
    assert!(
        edited.starts_with(&mine.replace("\"disabled\"", "\"auto\"")),
        "{edited}"
    );
}

/// A cascade's backends are said in the order its name gives the
/// ciphers, so each reads beside its cipher: Serpent-AES on software
/// Serpent and AES-NI is `soft+aesni`, in `list`, `status` and the
/// benchmark alike.
#[test]
fn a_cascades_backends_are_said_in_the_order_of_its_name() {
    let d = Daemon::start();
    let v = d.path("sa.hc");
    let v = v.to_str().expect("utf-8");
    let fast = ["--pim", "1", "--hash", "sha512", "--password-stdin"];
    d.ok(
        &[
            &["create", v, "--size", "4M", "--encryption", "Serpent-AES"][..],
            &["--filesystem", "none"],
            &fast,
        ]
        .concat(),
        "twenty or more characters\n",
    );
    d.ok(
        &[&["mount", v, "--filesystem", "none"][..], &fast].concat(),
        "twenty or more characters\n",
    );
    let row = &d.list()[0];
    assert_eq!(row["encryption"], "Serpent-AES", "{row}");
    assert_eq!(
        row["backends"],
        serde_json::json!(["soft", "aesni"]),
        "{row}"
    );
    let status = d.ok(&["status", v], "");
    assert!(
        status
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>() == ["backends:", "soft+aesni"]),
        "{status}"
    );
    d.ok(&["dismount", v], "");
    let bench = json(&d.ok(&["benchmark", "--size", "256K", "--json"], ""));
    // The table says the order it uses.
    let table = d.ok(&["benchmark", "--size", "256K"], "");
    assert!(
        table.contains("in the order its name lists them, AES-Twofish's AES first"),
        "{table}"
    );
    // AES's code path second, as AES on aesni alone runs it.
    let rows = bench["ciphers"].as_array().expect("rows");
    let aes = rows
        .iter()
        .find(|r| r["encryption"] == "AES" && r["backends"] == serde_json::json!(["aesni"]))
        .unwrap_or_else(|| panic!("no AES row on aesni: {bench}"));
    assert!(
        rows.iter().any(|r| r["encryption"] == "Serpent-AES"
            && r["backends"] == serde_json::json!(["soft", "aesni"])
            && r["simd"][1] == aes["simd"][0]),
        "{bench}"
    );
}
