//! A storm of clients against the real daemon on a private system bus
//! with polkitd (`tcd_tests::system::System`):
//! - a dozen wrong-password searches at once (root's and users'), some of
//!   their clients killed mid-search, while a user keeps asking cheap
//!   things: each cheap answer comes within seconds;
//! - a client killed after its search, while its volume is being
//!   mounted: the mount is undone, nothing left behind;
//! - the daemon's memory after a search returns near its idle figure.
//!
//! Needs root, /dev/fuse, dbus-daemon, polkitd, setpriv, mkfs.ext4.

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};
use tcd_tests::is_mount_point;
use tcd_tests::process::wait_at_most;
use tcd_tests::s;
use tcd_tests::system::{OPEN_FAST, PASSWORD, System, User};

/// A field of /proc/PID/status in KiB (VmRSS, VmLck).
fn status_kib(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Kills and reaps every child.
fn kill_all(children: &mut Vec<Child>) {
    for c in children.iter_mut() {
        let _ = c.kill();
    }
    for c in children.iter_mut() {
        let _ = c.wait();
    }
    children.clear();
}

/// Runs tcctl as `who`; its exit code and how long it took.
fn timed(sys: &System, who: Option<&User>, args: &[&str], stdin: &str) -> (Option<i32>, Duration) {
    let started = Instant::now();
    let out = sys.tcctl(who, args, stdin);
    (out.status.code(), started.elapsed())
}

/// A VeraCrypt volume of root's without a filesystem, opened with
/// [`PASSWORD`]; a wrong password searches every PRF of both formats at
/// their default cost (Argon2id included).
fn root_volume(sys: &System, name: &str) -> std::path::PathBuf {
    let vol = sys.dir.path().join(name);
    let mut args = vec!["create", s(&vol), "--size", "4M", "--filesystem", "none"];
    args.extend(OPEN_FAST);
    sys.ok(None, &args, &format!("{PASSWORD}\n"));
    vol
}

#[test]
fn cheap_calls_are_answered_at_once_during_a_storm_of_searches() {
    let sys = System::start();
    let alice = &sys.users[0];
    let bob = &sys.users[1];
    let vol = sys.create_volume(alice, "a.hc", "24M");
    sys.mount(alice, &vol, &alice.path("mnt"));
    let target = root_volume(&sys, "storm.hc");
    let alice_target = sys.create_volume(alice, "a2.hc", "24M");
    let bob_vol = sys.create_volume(bob, "b.hc", "24M");

    // The storm: root's wrong-password infos and mounts (unbounded), and
    // alice's own (two at once, as the policy allows a user).
    let wrong = "wrong words\n";
    let start_one = |n: usize| -> Child {
        let verb = if n.is_multiple_of(2) { "info" } else { "mount" };
        if n % 6 == 5 {
            sys.spawn_tcctl(
                Some(alice),
                &[verb, s(&alice_target), "--password-stdin"],
                wrong,
            )
        } else {
            sys.spawn_tcctl(None, &[verb, s(&target), "--password-stdin"], wrong)
        }
    };
    let mut storm: Vec<Child> = (0..14).map(start_one).collect();
    std::thread::sleep(Duration::from_secs(2));

    let mut worst = (Duration::ZERO, String::new());
    let mut note = |what: &str, took: Duration| {
        eprintln!("{what}: {took:?}");
        if took > worst.0 {
            worst = (took, what.to_owned());
        }
    };
    let mut already = Vec::new();
    let probes_until = Instant::now() + Duration::from_secs(25);
    let mut round = 0;
    while Instant::now() < probes_until {
        // Some clients die mid-search; others take their place.
        if round % 2 == 1 && !storm.is_empty() {
            let mut victim = storm.remove(round % storm.len());
            let _ = victim.kill();
            let _ = victim.wait();
            storm.push(start_one(round));
        }
        round += 1;
        let (code, took) = timed(&sys, Some(alice), &["list", "--json"], "");
        assert_eq!(code, Some(0), "list");
        note("list", took);
        let mut args = vec!["mount", s(&vol), s(&alice.home)];
        args.extend(OPEN_FAST);
        let (code, took) = timed(&sys, Some(alice), &args, &format!("{PASSWORD}\n"));
        already.push(code);
        note("mount of a mounted volume", took);
        let (code, took) = timed(&sys, Some(alice), &["favorites", "list"], "");
        assert_eq!(code, Some(0), "favorites list");
        note("favorites list", took);
        let (code, took) = timed(&sys, Some(alice), &["policy", "show"], "");
        assert_eq!(code, Some(0), "policy");
        note("policy", took);
    }
    // A mount that searches long (a wrong password, Argon2id) for a
    // volume that another call mounts meanwhile: told "already mounted"
    // as soon as it is, not after its search.
    let mut slow = sys.spawn_tcctl(
        Some(bob),
        &[
            "mount",
            s(&bob_vol),
            "--hash",
            "argon2id",
            "--password-stdin",
        ],
        wrong,
    );
    std::thread::sleep(Duration::from_secs(1));
    sys.mount(bob, &bob_vol, &bob.path("mnt"));
    let mounted_at = Instant::now();
    let code = wait_at_most(&mut slow, Duration::from_secs(60));
    let slow_took = mounted_at.elapsed();
    eprintln!("the racing mount: {code:?} {slow_took:?} after the volume was mounted");
    let stormed = storm.len();
    let still_searching = storm
        .iter_mut()
        .filter_map(|c| c.try_wait().ok())
        .filter(Option::is_none)
        .count();
    kill_all(&mut storm);
    assert!(
        still_searching > stormed / 2,
        "the storm lasted through the probes ({still_searching} of {stormed} still searching)"
    );
    assert_eq!(
        code,
        Some(4),
        "the racing mount said \"already mounted\" (after {slow_took:?})"
    );
    assert!(
        slow_took < Duration::from_secs(3),
        "the racing mount was told only {slow_took:?} after the volume was mounted"
    );
    assert!(
        already.iter().all(|c| *c == Some(4)),
        "each mount of the mounted volume said \"already mounted\" (exit 4): {already:?}"
    );
    assert!(
        worst.0 < Duration::from_secs(3),
        "the slowest cheap answer ({}) took {:?}\n{}",
        worst.1,
        worst.0,
        sys.log()
    );
    // The daemon still serves: alice's volume and bob's.
    assert_eq!(sys.list(None).as_array().map(Vec::len), Some(2));
}

/// Loop devices whose backing file lies under `folder`.
fn loops_under(folder: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/sys/block")
        .expect("/sys/block")
        .flatten()
    {
        let backing = e.path().join("loop/backing_file");
        if let Ok(f) = std::fs::read_to_string(&backing)
            && f.trim().starts_with(s(folder))
        {
            found.push(format!(
                "{} ({})",
                e.file_name().to_string_lossy(),
                f.trim()
            ));
        }
    }
    found
}

/// The volumes' FUSE folders (`run/fuse/ID`): one is made after a search,
/// as its mount begins. A folder of an earlier mount may linger a moment
/// after its dismount, so callers look for a name they have not seen.
fn fuse_folders(run: &Path) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(run.join("fuse")).map_or_else(
        |_| Vec::new(),
        |d| {
            d.flatten()
                .map(|e| e.file_name())
                .filter(|n| n.to_string_lossy().bytes().all(|b| b.is_ascii_digit()))
                .collect()
        },
    )
}

#[test]
fn a_mount_whose_client_died_after_the_search_is_undone() {
    let sys = System::start();
    let alice = &sys.users[0];
    let vol = sys.create_volume(alice, "a.hc", "24M");
    let run = sys.dir.path().join("run");
    let mnt = alice.path("mnt");
    let mut args = vec!["mount", s(&vol), s(&mnt)];
    args.extend(OPEN_FAST);
    // The client is killed once its search is over and the daemon is
    // mounting (FUSE, loop device, mount(2)): between search and reply.
    let mut killed = false;
    for _attempt in 0..5 {
        let before = fuse_folders(&run);
        let mut client = sys.spawn_tcctl(Some(alice), &args, &format!("{PASSWORD}\n"));
        let deadline = Instant::now() + Duration::from_secs(60);
        let made = || fuse_folders(&run).iter().any(|n| !before.contains(n));
        while !made() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let answered = client.try_wait().expect("try_wait").is_some();
        let _ = client.kill();
        let _ = client.wait();
        if !answered {
            killed = true;
            break;
        }
        // Too late: the client had its answer. Again.
        sys.ok(None, &["dismount", s(&vol)], "");
    }
    assert!(killed, "the client was never caught mounting");
    // The daemon finishes the mount it was doing, sees its caller gone and
    // says so as it takes the volume down. Until then nothing can be
    // judged: the mount may not be in the table yet.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !sys.log().contains("volume of a departed caller dismounted") {
        assert!(
            Instant::now() < deadline,
            "the daemon says why it dismounted: {}",
            sys.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        sys.log()
            .contains("the caller left before its mount was answered"),
        "the daemon says why it dismounted: {}",
        sys.log()
    );
    // Nothing is left for the dead client: no volume, no mount, no loop
    // device over the daemon's FUSE files.
    let volumes = sys.list(None);
    let loops = loops_under(&run);
    assert!(
        volumes.as_array().is_some_and(Vec::is_empty) && !is_mount_point(&mnt) && loops.is_empty(),
        "left for a dead client: volumes {volumes}, mounted {}, loops {loops:?}\n{}",
        is_mount_point(&mnt),
        sys.log()
    );
    // The volume mounts again for a client that stays.
    sys.mount(alice, &vol, &mnt);
    assert_eq!(sys.list(Some(alice)).as_array().map(Vec::len), Some(1));
}

#[test]
fn memory_goes_back_after_searches_and_mounts() {
    let sys = System::start();
    let alice = &sys.users[0];
    let pid = sys.tcd_pid();
    sys.ok(Some(alice), &["list"], "");
    let fresh = (status_kib(pid, "VmRSS"), status_kib(pid, "VmLck"));
    let vol = sys.create_volume(alice, "a.hc", "24M");
    let mnt = alice.path("mnt");
    // Mounts with I/O: FUSE's 16 MiB request buffers, 1 MiB requests.
    for _ in 0..4 {
        sys.mount(alice, &vol, &mnt);
        let data = vec![0x5au8; 8 << 20];
        let file = mnt.join("f");
        let st = sys
            .command(Some(alice), "dd")
            .args([
                "if=/dev/zero",
                "bs=1M",
                "count=8",
                "conv=fsync",
                "status=none",
            ])
            .arg(format!("of={}", file.display()))
            .status()
            .expect("dd");
        assert!(st.success(), "write on the volume");
        assert_eq!(std::fs::read(&file).expect("read back").len(), data.len());
        sys.ok(Some(alice), &["dismount", s(&vol)], "");
    }
    // Searches at once: Argon2id's memory, one thread per core each.
    let wrong = "wrong words\n";
    let mut searches: Vec<Child> = (0..6)
        .map(|i| {
            if i == 0 {
                sys.spawn_tcctl(
                    None,
                    &[
                        "info",
                        s(&vol),
                        "--hash",
                        "argon2id",
                        "--pim",
                        "5",
                        "--password-stdin",
                    ],
                    wrong,
                )
            } else {
                sys.spawn_tcctl(
                    None,
                    &["info", s(&vol), "--pim", "1", "--password-stdin"],
                    wrong,
                )
            }
        })
        .collect();
    let mut peak = status_kib(pid, "VmRSS");
    for c in searches.iter_mut() {
        while c.try_wait().expect("try_wait").is_none() {
            peak = peak.max(status_kib(pid, "VmRSS"));
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    searches.clear();
    std::thread::sleep(Duration::from_secs(2));
    let idle = (status_kib(pid, "VmRSS"), status_kib(pid, "VmLck"));
    eprintln!(
        "tcd memory: fresh VmRSS {} kB VmLck {} kB; peak VmRSS {peak} kB; idle after VmRSS {} kB VmLck {} kB",
        fresh.0, fresh.1, idle.0, idle.1
    );
    assert!(
        idle.0 <= fresh.0 + 30 * 1024,
        "idle after the load, the daemon holds {} kB resident, {} kB more than fresh ({} kB)",
        idle.0,
        idle.0.saturating_sub(fresh.0),
        fresh.0
    );
}
