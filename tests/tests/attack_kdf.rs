//! Key derivation as a resource an unprivileged user tries to spend, on the
//! real daemon on a private system bus with polkitd: a PIM no one could
//! wait for, searches enough to starve another user, clients that leave in
//! the middle of a search, a header restore or a benchmark.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use tcd_tests::s;
use tcd_tests::system::{OPEN_FAST, PASSWORD, System, User};

/// Starts `cmd` with `stdin` written to it.
fn spawn(mut cmd: Command, stdin: &str) -> Child {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tcctl");
    if let Some(mut i) = child.stdin.take() {
        let _ = i.write_all(stdin.as_bytes());
    }
    child
}

/// The child's output if it ends within `limit`; else it is killed and
/// None.
fn wait_at_most(mut child: Child, limit: Duration) -> Option<Output> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Ok(Some(_)) = child.try_wait() {
            return child.wait_with_output().ok();
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// A wrong-password mount of `vol` as `user` that tries every PRF (the
/// most work a plain mount does), stopping at the block device.
fn wrong_search(sys: &System, user: &User, vol: &Path, extra: &[&str]) -> Child {
    let mut cmd = sys.tcctl_command(Some(user));
    cmd.arg("mount")
        .arg(vol)
        .args(["--filesystem", "none", "--password-stdin"])
        .args(extra);
    spawn(cmd, "not the password\n")
}

/// The daemon's CPU time so far (all threads), in seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("daemon stat");
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of the line (utime, stime); `after` starts at 3.
    let ticks: u64 = f[11].parse::<u64>().expect("utime") + f[12].parse::<u64>().expect("stime");
    // SAFETY: sysconf only reads a constant.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks as f64 / hz
}

/// The daemon's CPU use over one second, in CPU seconds per second.
fn cpu_over_one_second(pid: u32) -> f64 {
    let a = cpu_seconds(pid);
    std::thread::sleep(Duration::from_secs(1));
    cpu_seconds(pid) - a
}

/// A field of /proc/PID/status in KiB (VmLck, VmRSS).
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("daemon status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Kills `child` (SIGKILL: no goodbye on the bus), then checks that the
/// daemon stops working for it within a second or two and says so.
fn killed_client_stops_the_work(sys: &System, child: Child, what: &str) {
    let pid = sys.tcd_pid();
    let mut child = child;
    // The work's pace on this machine (shared cores give it less than a
    // core per thread).
    let busy = cpu_over_one_second(pid);
    assert!(
        child.try_wait().expect("tcctl state").is_none(),
        "the {what} ended before its client was killed: {}",
        sys.log()
    );
    child.kill().expect("SIGKILL tcctl");
    let _ = child.wait();
    std::thread::sleep(Duration::from_secs(1));
    let used = cpu_over_one_second(pid);
    // Idle is a few milliseconds a second; the bound is 0.2 s, lower when
    // the machine let the work run slower than that.
    let bound = (busy / 3.0).clamp(0.05, 0.2);
    eprintln!("{what}: {busy:.2} s of CPU a second while working, {used:.2} after the kill");
    assert!(
        used < bound,
        "the daemon still used {used:.2} s of CPU per second (working: {busy:.2}) a second after the {what}'s client was killed: {}",
        sys.log()
    );
    let log = sys.log();
    assert!(
        log.contains("went away: cancelling its request"),
        "the log does not say the {what} was cancelled: {log}"
    );
}

#[test]
fn a_huge_pim_is_refused_at_once_with_a_named_error() {
    let sys = System::start();
    let user = &sys.users[0];
    let vol = sys.create_volume(user, "v.hc", "24M");
    for extra in [
        &["--hash", "argon2id", "--pim", "2147468"][..],
        &["--hash", "sha512", "--pim", "2147468"][..],
        &["--pim", "2147468"][..],
        &["--hash", "argon2id", "--pim", "200"][..],
    ] {
        let started = Instant::now();
        let out = wait_at_most(
            wrong_search(&sys, user, &vol, extra),
            Duration::from_secs(30),
        )
        .unwrap_or_else(|| {
            panic!(
                "tcctl mount {extra:?} was not refused within 30 s: {}",
                sys.log()
            )
        });
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(6),
            "{extra:?}: refused as not allowed, not searched: {stderr}"
        );
        assert!(
            stderr.contains("is above the") && stderr.contains("policy:"),
            "{extra:?}: the message names the bound: {stderr}"
        );
        eprintln!("{extra:?}: refused in {:?}: {stderr}", started.elapsed());
    }
    // The bound is the policy's, not the format's: VeraCrypt's default PIM
    // with Argon2id is searched (and the wrong password found wrong).
    let out = wait_at_most(
        wrong_search(&sys, user, &vol, &["--hash", "argon2id"]),
        Duration::from_secs(300),
    )
    .expect("an Argon2id search at the default PIM ends");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn one_users_searches_neither_starve_anothers_mount_nor_lock_unbounded_memory() {
    let sys = System::start();
    let (one, two) = (&sys.users[0], &sys.users[1]);
    let vol1 = sys.create_volume(one, "one.hc", "24M");
    let vol2 = sys.create_volume(two, "two.hc", "24M");
    let pid = sys.tcd_pid();
    let baseline_kib = status_kib(pid, "VmLck");

    // User one starts four wrong-password Argon2id searches (VeraCrypt's
    // default: 416 MiB, 6 passes a trial) at once; the policy lets a user
    // run two.
    let mut searches: Vec<Child> = (0..4)
        .map(|_| wrong_search(&sys, one, &vol1, &["--hash", "argon2id"]))
        .collect();
    let mut max_locked = 0;
    let mut refused = 0;
    let watch_until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < watch_until {
        max_locked = max_locked.max(status_kib(pid, "VmLck"));
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut running = Vec::new();
    for mut c in searches.drain(..) {
        if c.try_wait().expect("tcctl state").is_some() {
            let out = c.wait_with_output().expect("tcctl output");
            assert_eq!(
                out.status.code(),
                Some(5),
                "a search over the user's bound is refused as Busy: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            refused += 1;
        } else {
            running.push(c);
        }
    }
    assert_eq!(
        refused,
        2,
        "two of user one's four searches are refused at once: {}",
        sys.log()
    );

    // User two mounts their own volume meanwhile.
    let mnt = two.home.join("mnt");
    let mut cmd = sys.tcctl_command(Some(two));
    cmd.arg("mount").arg(&vol2).arg(&mnt).args([
        "--pim",
        "1",
        "--hash",
        "sha512",
        "--password-stdin",
    ]);
    let mount = spawn(cmd, &format!("{PASSWORD}\n"));
    let started = Instant::now();
    let mut mount = Some(mount);
    let mut out = None;
    while started.elapsed() < Duration::from_secs(60) {
        max_locked = max_locked.max(status_kib(pid, "VmLck"));
        if let Some(c) = mount.as_mut()
            && c.try_wait().expect("tcctl state").is_some()
        {
            out = mount.take().and_then(|c| c.wait_with_output().ok());
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if let Some(mut c) = mount {
        let _ = c.kill();
        let _ = c.wait();
    }
    let out = out.unwrap_or_else(|| {
        panic!(
            "user two's mount did not end within 60 s while user one searched: {}",
            sys.log()
        )
    });
    assert!(
        out.status.success(),
        "user two's mount: {} {}",
        String::from_utf8_lossy(&out.stderr),
        sys.log()
    );
    eprintln!("user two mounted in {:?}", started.elapsed());
    let rows = sys.ok(Some(two), &["list", "--json"], "");
    assert!(rows.contains("two.hc"), "{rows}");

    // Locked memory (VmLck counts locked mappings, touched or not): at
    // most one Argon2id trial (416 MiB) per core runs at a time, each in
    // its own mapping unmapped when the trial ends; 256 MiB more covers
    // the mounted volume, the trial threads' stacks and the allocator.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let bound = baseline_kib + cores * 416 * 1024 + 256 * 1024;
    eprintln!("locked: {baseline_kib} KiB at start, at most {max_locked} KiB (bound {bound} KiB)");
    assert!(
        max_locked < bound,
        "the daemon locked {max_locked} KiB (bound {bound} KiB, {cores} cores)"
    );
    for c in running {
        let _ = wait_at_most(c, Duration::from_millis(1));
    }
}

#[test]
fn a_search_whose_client_leaves_the_bus_stops() {
    let sys = System::start();
    let user = &sys.users[0];
    let vol = sys.create_volume(user, "v.hc", "24M");
    // A full search with the wrong password: a minute or more of work.
    let child = wrong_search(&sys, user, &vol, &[]);
    std::thread::sleep(Duration::from_secs(2));
    killed_client_stops_the_work(&sys, child, "search");
    assert!(
        sys.log().contains("header search cancelled"),
        "{}",
        sys.log()
    );
    // And a mount with a high PIM the policy allows, cut short the same way.
    let child = wrong_search(&sys, user, &vol, &["--hash", "streebog", "--pim", "2000"]);
    std::thread::sleep(Duration::from_secs(2));
    killed_client_stops_the_work(&sys, child, "high-PIM search");
    // A header restore from a backup file, its search cut short the same
    // way: the work stops and the volume is as it was.
    let bak = user.path("v.bak");
    let mut backup = vec!["backup-header", s(&vol), s(&bak)];
    backup.extend(OPEN_FAST);
    sys.ok(Some(user), &backup, &format!("{PASSWORD}\n"));
    let before = std::fs::read(&vol).expect("the volume");
    let mut cmd = sys.tcctl_command(Some(user));
    cmd.args([
        "restore-header",
        s(&vol),
        s(&bak),
        "--batch-mode",
        "--password-stdin",
    ]);
    let child = spawn(cmd, "not the password\n");
    std::thread::sleep(Duration::from_secs(2));
    killed_client_stops_the_work(&sys, child, "header restore");
    assert!(
        std::fs::read(&vol).expect("the volume") == before,
        "a cut-short restore changed the volume"
    );
}

#[test]
fn a_benchmark_whose_client_leaves_stops_and_another_starts_at_once() {
    let sys = System::start();
    let (one, two) = (&sys.users[0], &sys.users[1]);
    let mut cmd = sys.tcctl_command(Some(one));
    cmd.args(["benchmark", "--size", "256M"]);
    let child = spawn(cmd, "");
    std::thread::sleep(Duration::from_secs(2));
    killed_client_stops_the_work(&sys, child, "benchmark");
    // No "a benchmark is already running": the next one runs.
    let mut cmd = sys.tcctl_command(Some(two));
    cmd.args(["benchmark", "--size", "1M", "--json"]);
    let out = wait_at_most(spawn(cmd, ""), Duration::from_secs(120))
        .unwrap_or_else(|| panic!("the second benchmark did not end: {}", sys.log()));
    assert!(
        out.status.success(),
        "the second benchmark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
