//! A volume a process keeps busy, dismounted by force, against the real
//! daemon on a private system bus (`tcd_tests::system::System`):
//! - the forced dismount returns at once naming the process that holds
//!   the volume, while another volume is dismounted and a third mounted,
//!   neither waiting for it; the volume stays listed as "detaching" until
//!   the process lets go, then goes with its loop device, and its data is
//!   intact on the next mount;
//! - a normal dismount leaves no error in the daemon's log;
//! - a user is told that another user's process holds their volume, not
//!   which (root is told);
//! - a volume attached as a block device alone, whose device root then
//!   mounted outside tcd: `mount -b` and `unmount -b` name that mount
//!   (nothing mounted twice), its dismount is refused at once naming the
//!   mount point, a forced one leaves it listed as "detaching" until the
//!   filesystem is unmounted, then it goes with its loop device.
//! - a mounted volume whose filesystem root also mounted elsewhere (a bind
//!   mount of its mount point, its device mounted again): its dismount and
//!   `dismount --all` are refused naming both, nothing changed; once they
//!   are unmounted the dismount goes through with the data written there.
//! - over the peer-to-peer socket (`tcd --socket`), a forced
//!   `Volume1.Dismount` of a held volume, called at the volume's own
//!   object, is answered at once naming the holder, and the volume goes
//!   when the holder lets go.
//!
//! Needs root, /dev/fuse, dbus-daemon, polkitd, setpriv, mkfs.ext4,
//! losetup.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use tcd_tests::is_mount_point;
use tcd_tests::require_tool;
use tcd_tests::s;
use tcd_tests::system::{OPEN_FAST, PASSWORD, System, User};

/// How long an operation that must not wait for the held volume may take:
/// generous for a loaded machine, far below the hold.
const PROMPT: Duration = Duration::from_secs(20);
/// How long the holder would hold the volume if not killed.
const HOLD: &str = "300";

/// Runs `cmd` with `stdin` for at most `limit`: its output, or `None` if
/// it was still running (it is killed then).
fn bounded(mut cmd: Command, stdin: &str, limit: Duration) -> Option<Output> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    if let Some(mut input) = child.stdin.take() {
        let _ = std::io::Write::write_all(&mut input, stdin.as_bytes());
    }
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => {
            let _ = waiter.join();
            Some(out.expect("output"))
        }
        Err(_) => {
            // SAFETY: kill(2) on the pid of our own child, not yet reaped
            // (its waiter still runs).
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
            let _ = waiter.join();
            None
        }
    }
}

/// tcctl as `who` with `args`, at most [`PROMPT`]; fails the test if it
/// took longer.
fn prompt_tcctl(sys: &System, who: &User, args: &[&str], stdin: &str, what: &str) -> Output {
    let mut c = sys.tcctl_command(Some(who));
    c.args(args);
    let started = Instant::now();
    bounded(c, stdin, PROMPT).unwrap_or_else(|| {
        panic!(
            "{what} did not finish within {PROMPT:?} (started {:?} ago)\n{}",
            started.elapsed(),
            sys.log()
        )
    })
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The row of `tcctl list --json` whose volume is `vol`.
fn row(sys: &System, who: &User, vol: &Path) -> Option<serde_json::Value> {
    sys.list(Some(who))
        .as_array()
        .expect("a list")
        .iter()
        .find(|r| r["volume"] == s(vol))
        .cloned()
}

/// Loop devices whose backing file lies under `folder`.
fn loops_under(folder: &Path) -> Vec<String> {
    let out = Command::new(require_tool("losetup", "package util-linux"))
        .args(["--list", "--noheadings", "--output", "NAME,BACK-FILE"])
        .output()
        .expect("losetup");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .nth(1)
                .is_some_and(|back| Path::new(back).starts_with(folder))
        })
        .map(str::to_owned)
        .collect()
}

/// Waits (a minute at most) until `who`'s volume `vol` (object id `id`,
/// device `device`) is no longer listed once `after`, then checks that its
/// loop device left with it; its FUSE folder under the daemon's runtime
/// folder.
fn gone_with_its_loop_device(
    sys: &System,
    who: &User,
    (vol, id, device): (&Path, &str, &str),
    after: &str,
) -> std::path::PathBuf {
    let deadline = Instant::now() + Duration::from_secs(60);
    while row(sys, who, vol).is_some() {
        assert!(
            Instant::now() < deadline,
            "the volume is still listed a minute after {after}\n{}",
            sys.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Its FUSE file, under the daemon's runtime folder, named by its id.
    let fuse = sys.dir.path().join("run/fuse").join(id);
    assert_eq!(
        loops_under(&fuse),
        Vec::<String>::new(),
        "loop devices left"
    );
    let name = Path::new(device).file_name().expect("loop name");
    let backing = Path::new("/sys/block").join(name).join("loop/backing_file");
    let still = std::fs::read_to_string(&backing).unwrap_or_default();
    assert!(
        !Path::new(still.trim()).starts_with(&fuse),
        "{device} still attached to {still}"
    );
    fuse
}

#[test]
fn a_forced_dismount_of_a_held_volume_returns_at_once_and_holds_up_no_other_volume() {
    let sys = System::start();
    let alice = &sys.users[0];
    let held = sys.create_volume(alice, "held.hc", "24M");
    let other = sys.create_volume(alice, "other.hc", "24M");
    let third = sys.create_volume(alice, "third.hc", "24M");
    let home = alice.home.display().to_string();
    sys.sh(alice, &format!("mkdir {home}/m2 {home}/m3"));
    sys.mount(alice, &held, &alice.path("mnt"));
    sys.mount(alice, &other, &alice.path("m2"));
    sys.sh(
        alice,
        &format!("echo 'written before' > {home}/mnt/data && sync"),
    );
    assert_eq!(
        row(&sys, alice, &held).expect("listed")["state"],
        "mounted",
        "a volume in use is listed as mounted"
    );

    // A process of alice's whose working folder is in the held volume.
    let mut holder = sys
        .command(Some(alice), "sleep")
        .arg(HOLD)
        .current_dir(alice.path("mnt"))
        .spawn()
        .expect("holder");
    let pid = holder.id().to_string();
    std::thread::sleep(Duration::from_millis(300));

    // The forced dismount, the other volume's dismount and the third's
    // mount, all at once: none waits for the holder.
    let forced = std::thread::scope(|scope| {
        let forced = scope.spawn(|| {
            prompt_tcctl(
                &sys,
                alice,
                &["dismount", "--force", s(&held)],
                "",
                "the forced dismount of the held volume",
            )
        });
        std::thread::sleep(Duration::from_millis(200));
        let dismounted = scope.spawn(|| {
            prompt_tcctl(
                &sys,
                alice,
                &["dismount", s(&other)],
                "",
                "the other volume's dismount",
            )
        });
        let mounted = scope.spawn(|| {
            let mut args = vec!["mount", s(&third)];
            let m3 = alice.path("m3");
            args.push(s(&m3));
            args.extend(OPEN_FAST);
            prompt_tcctl(
                &sys,
                alice,
                &args,
                &format!("{PASSWORD}\n"),
                "the third volume's mount",
            )
        });
        let dismounted = dismounted.join().expect("dismount thread");
        assert!(dismounted.status.success(), "{}", text(&dismounted));
        let mounted = mounted.join().expect("mount thread");
        assert!(mounted.status.success(), "{}", text(&mounted));
        forced.join().expect("forced dismount thread")
    });
    let said = text(&forced);
    assert!(forced.status.success(), "forced dismount: {said}");
    assert!(
        said.contains(&format!("PID {pid} (sleep)")),
        "the forced dismount names the holder (PID {pid}): {said}"
    );
    assert!(
        !is_mount_point(&alice.path("mnt")),
        "the held volume is off its mount point"
    );
    assert!(
        row(&sys, alice, &other).is_none(),
        "the other volume is gone"
    );
    assert_eq!(
        row(&sys, alice, &third).expect("third listed")["state"],
        "mounted"
    );

    // Listed as detaching while held, by `list` and `list --json`.
    let detaching = row(&sys, alice, &held).expect("the held volume is still listed");
    assert_eq!(detaching["state"], "detaching", "{detaching}");
    let device = detaching["device"].as_str().expect("device").to_owned();
    let id = detaching["object"]
        .as_str()
        .and_then(|o| o.rsplit('/').next())
        .expect("object path")
        .to_owned();
    let human = sys.ok(Some(alice), &["list"], "");
    assert!(
        human
            .lines()
            .any(|l| l.starts_with(s(&held)) && l.contains("detaching")),
        "{human}"
    );
    // A second dismount, by the device, is answered at once, and names
    // the volume and its holder again.
    let again = prompt_tcctl(
        &sys,
        alice,
        &["dismount", "--force", &device],
        "",
        "a second dismount of the detaching volume",
    );
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(
        text(&again).lines().next().unwrap_or_default(),
        format!(
            "{} is unmounted, but still in use by PID {pid} (sleep): its device goes when \
             they let go",
            s(&held)
        ),
        "{}",
        text(&again)
    );
    // dismount --all: the third goes, the held one is said to be on its
    // way; again, nothing more is there to dismount.
    let still = format!(
        "{} is still in use; it will be detached when its users let go\n",
        s(&held)
    );
    let all = sys.ok(Some(alice), &["dismount", "--all"], "");
    assert_eq!(all, format!("1 volume dismounted\n{still}"));
    let all = sys.ok(Some(alice), &["dismount", "--all"], "");
    assert_eq!(all, format!("nothing more to dismount\n{still}"));

    // The holder lets go: the volume goes, with its loop device.
    let _ = holder.kill();
    let _ = holder.wait();
    let fuse = gone_with_its_loop_device(&sys, alice, (&held, &id, &device), "its holder died");
    assert!(
        !is_mount_point(&fuse),
        "FUSE mount left on {}",
        fuse.display()
    );

    // The data written before the forced dismount is intact.
    sys.mount(alice, &held, &alice.path("mnt"));
    assert_eq!(
        std::fs::read_to_string(alice.path("mnt/data")).expect("data"),
        "written before\n"
    );
    sys.ok(Some(alice), &["dismount", "--all"], "");
    assert_eq!(sys.list(Some(alice)).as_array().map(Vec::len), Some(0));
}

#[test]
fn a_normal_dismount_logs_no_error() {
    let sys = System::start();
    let alice = &sys.users[0];
    let vol = sys.create_volume(alice, "v.hc", "24M");
    // (Making the filesystem mounted and dismounted the new volume: the
    // rounds below are counted from here.)
    let start = sys.log().len();
    // The session's last replies race the unmount of its folder: a few
    // rounds give a lost reply its chance to show.
    for round in 0..4 {
        sys.mount(alice, &vol, &alice.path("mnt"));
        sys.sh(
            alice,
            &format!("echo {round} > {}/mnt/f && sync", alice.home.display()),
        );
        sys.ok(Some(alice), &["dismount", s(&vol)], "");
    }
    // The daemon logs as it goes; the last lines of a dismount are out
    // when its call has returned.
    let log = sys.log();
    let errors: Vec<&str> = log.lines().filter(|l| l.contains("ERROR")).collect();
    assert!(errors.is_empty(), "errors in the log: {errors:#?}\n{log}");
    let rounds = log.get(start..).unwrap_or_default();
    assert_eq!(rounds.matches("volume dismounted").count(), 4, "{log}");
}

#[test]
fn a_user_is_not_told_which_process_of_another_user_holds_their_volume() {
    let sys = System::start();
    let alice = &sys.users[0];
    let held = sys.create_volume(alice, "held.hc", "24M");
    sys.mount(alice, &held, &alice.path("mnt"));
    // A process of root's (not alice's) keeps her volume busy.
    let mut holder = Command::new("sleep")
        .arg(HOLD)
        .current_dir(alice.path("mnt"))
        .spawn()
        .expect("holder");
    let pid = holder.id().to_string();
    std::thread::sleep(Duration::from_millis(300));

    let forced = prompt_tcctl(
        &sys,
        alice,
        &["dismount", "--force", s(&held)],
        "",
        "the forced dismount",
    );
    let said = text(&forced);
    assert!(forced.status.success(), "{said}");
    assert!(said.contains("a process of another user"), "{said}");
    assert!(!said.contains(&pid), "root's PID shown to alice: {said}");
    assert!(
        !said.contains("sleep"),
        "root's command shown to alice: {said}"
    );
    // Root is told which.
    let by_root = sys.tcctl(None, &["dismount", "--force", s(&held)], "");
    assert!(
        text(&by_root).contains(&format!("PID {pid} (sleep)")),
        "{}",
        text(&by_root)
    );
    let _ = holder.kill();
    let _ = holder.wait();
    let deadline = Instant::now() + Duration::from_secs(60);
    while row(&sys, alice, &held).is_some() {
        assert!(Instant::now() < deadline, "still listed\n{}", sys.log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Unmounts (lazily) a filesystem the test mounted outside tcd, however the
/// test ends, so the daemon's teardown never waits for it.
struct Outside<'a>(&'a Path);

impl Drop for Outside<'_> {
    fn drop(&mut self) {
        if is_mount_point(self.0) {
            let _ = Command::new("umount").arg("-l").arg(self.0).status();
        }
    }
}

#[test]
fn a_block_device_mounted_outside_tcd_is_busy_and_force_leaves_it_detaching() {
    let sys = System::start();
    let alice = &sys.users[0];
    let vol = sys.create_volume(alice, "attached.hc", "24M");
    let mut args = vec!["mount", s(&vol), "--filesystem", "none"];
    args.extend(OPEN_FAST);
    let said = sys.ok(Some(alice), &args, &format!("{PASSWORD}\n"));
    let attached = row(&sys, alice, &vol).expect("listed");
    let device = attached["device"].as_str().expect("device").to_owned();
    assert!(said.contains(&format!("attached as {device}")), "{said}");
    let id = attached["object"]
        .as_str()
        .and_then(|o| o.rsplit('/').next())
        .expect("object path")
        .to_owned();

    // Root mounts the volume's filesystem from its loop device, as any
    // block device, and writes to it.
    let outside = sys.dir.path().join("outside");
    std::fs::create_dir(&outside).expect("mkdir");
    let st = Command::new(require_tool("mount", "package util-linux"))
        .arg(&device)
        .arg(&outside)
        .status()
        .expect("mount");
    assert!(st.success(), "mount {device} {}", outside.display());
    let _guard = Outside(&outside);
    std::fs::write(outside.join("data"), "written outside\n").expect("write");

    // udisksctl's mount -b and unmount -b on that device: neither mounts
    // it a second time nor says "not mounted" without saying where it is.
    let again = prompt_tcctl(&sys, alice, &["mount", "-b", &device], "", "mount -b");
    let said = text(&again);
    assert_eq!(
        again.status.code(),
        Some(4),
        "exit 4 (already mounted): {said}"
    );
    assert!(
        said.contains(&format!(
            "{device} mounted on {}, outside tcd",
            outside.display()
        )),
        "{said}"
    );
    let off = prompt_tcctl(&sys, alice, &["unmount", "-b", &device], "", "unmount -b");
    let said = text(&off);
    assert_eq!(off.status.code(), Some(3), "exit 3 (not found): {said}");
    assert!(
        said.contains("is not mounted by tcd")
            && said.contains(&format!("{device} mounted on {}", outside.display())),
        "{said}"
    );
    assert_eq!(row(&sys, alice, &vol).expect("listed")["state"], "attached");

    // Somewhere else, a mount point whose name is not UTF-8, as any user
    // makes one with fusermount3 on a folder of theirs (Debian's /dev/fuse
    // is open to all; this machine's is root's, so root mounts it for
    // alice): the daemon still reads the rest of the mount table.
    let odd = alice.path(".").join(OsStr::from_bytes(b"odd \xff name"));
    std::fs::create_dir(&odd).expect("mkdir");
    let st = Command::new("mount")
        .args(["-t", "tmpfs", "alice"])
        .arg(&odd)
        .status()
        .expect("mount tmpfs");
    assert!(st.success(), "mount tmpfs on {}", odd.display());
    let _odd = Outside(&odd);

    // Refused at once, naming where the device is mounted; nothing changes.
    let refused = prompt_tcctl(
        &sys,
        alice,
        &["dismount", s(&vol)],
        "",
        "the dismount of the device mounted outside",
    );
    let said = text(&refused);
    assert_eq!(refused.status.code(), Some(5), "exit 5 (busy): {said}");
    assert!(
        said.contains(&format!("{device} (mounted on {})", outside.display())),
        "the refusal names the device and its mount point: {said}"
    );
    let still = row(&sys, alice, &vol).expect("still listed after the refusal");
    assert_eq!(still["state"], "attached", "{still}");
    assert_eq!(still["device"], device.as_str());
    assert!(is_mount_point(&outside));
    std::fs::write(outside.join("data"), "written after the refusal\n").expect("write");

    // So is `dismount --all`, whose hint says what --force does here.
    let refused = prompt_tcctl(&sys, alice, &["dismount", "--all"], "", "dismount --all");
    let said = text(&refused);
    assert_eq!(refused.status.code(), Some(5), "exit 5 (busy): {said}");
    assert!(
        said.contains(&format!("{device} (mounted on {})", outside.display()))
            && said.contains("(a device mounted outside tcd stays mounted there)"),
        "{said}"
    );
    // Forced: answered at once, listed detaching while the device is
    // mounted, by `list --json` and `list`; `--all` counts it as on its
    // way, not as dismounted.
    let forced = prompt_tcctl(
        &sys,
        alice,
        &["dismount", "--all", "--force"],
        "",
        "the forced dismount of the device mounted outside",
    );
    let said = text(&forced);
    assert!(forced.status.success(), "{said}");
    assert_eq!(
        said,
        format!(
            "no volume detached yet\n{} is still in use; it will be detached when its users \
             let go\n",
            s(&vol)
        )
    );
    let again = prompt_tcctl(&sys, alice, &["dismount", "--force", s(&vol)], "", "again");
    let said = text(&again);
    assert!(again.status.success(), "{said}");
    assert!(said.contains("detaching"), "{said}");
    let detaching = row(&sys, alice, &vol).expect("listed while its device is mounted");
    assert_eq!(detaching["state"], "detaching", "{detaching}");
    let human = sys.ok(Some(alice), &["list"], "");
    assert!(
        human
            .lines()
            .any(|l| l.starts_with(s(&vol)) && l.contains("detaching")),
        "{human}"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("data")).expect("read"),
        "written after the refusal\n",
        "the outside mount still reads the volume"
    );

    // Unmounted outside: the volume goes, with its loop device.
    let st = Command::new("umount")
        .arg(&outside)
        .status()
        .expect("umount");
    assert!(st.success(), "umount {}", outside.display());
    gone_with_its_loop_device(
        &sys,
        alice,
        (&vol, &id, &device),
        "its device was unmounted",
    );

    // What was written outside is on the volume.
    sys.mount(alice, &vol, &alice.path("mnt"));
    assert_eq!(
        std::fs::read_to_string(alice.path("mnt/data")).expect("data"),
        "written after the refusal\n"
    );
    sys.ok(Some(alice), &["dismount", s(&vol)], "");
}

#[test]
fn a_mounted_volume_whose_filesystem_is_mounted_elsewhere_too_is_busy_until_that_goes() {
    let sys = System::start();
    let alice = &sys.users[0];
    let vol = sys.create_volume(alice, "twice.hc", "24M");
    let mnt = alice.path("mnt");
    sys.mount(alice, &vol, &mnt);
    let mounted = row(&sys, alice, &vol).expect("listed");
    let device = mounted["device"].as_str().expect("device").to_owned();

    // Root binds the volume's mount point somewhere else, and mounts its
    // device a second time: both write the volume.
    let bound = sys.dir.path().join("bound");
    let again = sys.dir.path().join("again");
    for (dir, args) in [
        (&bound, vec!["--bind", s(&mnt)]),
        (&again, vec![device.as_str()]),
    ] {
        std::fs::create_dir(dir).expect("mkdir");
        let st = Command::new(require_tool("mount", "package util-linux"))
            .args(&args)
            .arg(dir)
            .status()
            .expect("mount");
        assert!(st.success(), "mount {args:?} {}", dir.display());
    }
    let _bound = Outside(&bound);
    let _again = Outside(&again);

    for args in [vec!["dismount", s(&vol)], vec!["dismount", "--all"]] {
        let refused = prompt_tcctl(
            &sys,
            alice,
            &args,
            "",
            "the dismount of a volume mounted twice",
        );
        let said = text(&refused);
        assert_eq!(
            refused.status.code(),
            Some(5),
            "{args:?}: exit 5 (busy): {said}"
        );
        for other in [&bound, &again] {
            assert!(
                said.contains(&other.display().to_string()),
                "{args:?}: the refusal names the other mount point {}: {said}",
                other.display()
            );
        }
        assert!(!said.contains("dismounted"), "{args:?}: {said}");
        let still = row(&sys, alice, &vol).expect("still listed after the refusal");
        assert_eq!(
            still["state"], "mounted",
            "{args:?}: nothing changed: {still}"
        );
        assert!(is_mount_point(&mnt), "{args:?}: still on its mount point");
    }
    std::fs::write(bound.join("data"), "written at the bind mount\n").expect("write");
    assert_eq!(
        std::fs::read_to_string(mnt.join("data")).expect("read at tcd's mount point"),
        "written at the bind mount\n"
    );

    // Once the other mounts go, the dismount goes through, and the data
    // is on the volume.
    for dir in [&bound, &again] {
        let st = Command::new("umount").arg(dir).status().expect("umount");
        assert!(st.success(), "umount {}", dir.display());
    }
    let out = prompt_tcctl(
        &sys,
        alice,
        &["dismount", s(&vol)],
        "",
        "the dismount after",
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(row(&sys, alice, &vol).is_none(), "gone from the list");
    sys.mount(alice, &vol, &mnt);
    assert_eq!(
        std::fs::read_to_string(mnt.join("data")).expect("data"),
        "written at the bind mount\n"
    );
    sys.ok(Some(alice), &["dismount", s(&vol)], "");
}

#[test]
fn an_attached_volume_held_by_a_process_is_detaching_when_forced() {
    let sys = System::start();
    let alice = &sys.users[0];
    let vol = sys.create_volume(alice, "held.hc", "24M");
    let mut args = vec!["mount", s(&vol), "--filesystem", "none"];
    args.extend(OPEN_FAST);
    sys.ok(Some(alice), &args, &format!("{PASSWORD}\n"));
    let attached = row(&sys, alice, &vol).expect("listed");
    let device = attached["device"].as_str().expect("device").to_owned();
    let id = attached["object"]
        .as_str()
        .and_then(|o| o.rsplit('/').next())
        .expect("object path")
        .to_owned();

    // Root's process reads the block device, as a backup tool would.
    let mut holder = Command::new("sh")
        .args(["-c", &format!("exec 3<{device}; exec sleep {HOLD}")])
        .spawn()
        .expect("a process holding the device");
    let opened = Instant::now();
    while !std::fs::read_dir(format!("/proc/{}/fd", holder.id()))
        .map(|fds| fds.flatten().any(|fd| fd.file_name() == "3"))
        .unwrap_or(false)
    {
        assert!(
            opened.elapsed() < PROMPT,
            "the holder never opened {device}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // The volume had no filesystem of tcd's: it is said to be detaching,
    // not unmounted, and its holder is named as alice may see it.
    let forced = prompt_tcctl(
        &sys,
        alice,
        &["dismount", "--force", s(&vol)],
        "",
        "the forced dismount of the held device",
    );
    let said = text(&forced);
    assert!(forced.status.success(), "{said}");
    assert_eq!(
        said.lines().next().unwrap_or_default(),
        format!(
            "{} is detaching: its device is still in use by a process of another user, and it \
             goes when they let go",
            s(&vol)
        ),
        "{said}"
    );
    assert_eq!(
        row(&sys, alice, &vol).expect("listed")["state"],
        "detaching"
    );

    let _ = holder.kill();
    let _ = holder.wait();
    gone_with_its_loop_device(&sys, alice, (&vol, &id, &device), "its holder died");
}

/// The mounts under `folder`, as the kernel lists them.
fn mounts_under(folder: &Path) -> Vec<String> {
    std::fs::read_to_string("/proc/self/mounts")
        .expect("the mount table")
        .lines()
        .filter_map(|l| l.split(' ').nth(1))
        .filter(|at| Path::new(at).starts_with(folder))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_daemon_that_stops_leaves_no_dead_mount_of_a_volume_still_detaching() {
    let mut d = tcd_tests::daemon::Daemon::start();
    let v = d.path("held.hc");
    let mnt = d.path("mnt");
    std::fs::create_dir(&mnt).expect("mount point");
    let fast = ["--pim", "1", "--hash", "sha512", "--password-stdin"];
    let pw = "twenty or more characters\n";
    let create = [
        &["create", s(&v), "--size", "8M", "--filesystem", "fat"][..],
        &fast,
    ];
    d.ok(&create.concat(), pw);
    d.ok(&[&["mount", s(&v), s(&mnt)][..], &fast].concat(), pw);
    let mut holder = Command::new("sleep")
        .arg(HOLD)
        .current_dir(&mnt)
        .spawn()
        .expect("holder");
    d.ok(&["dismount", "--force", s(&v)], "");
    let runtime = d.dir.path().join("run");
    assert_eq!(
        mounts_under(&runtime).len(),
        1,
        "the detaching volume's FUSE mount"
    );
    let stopped = d.stop();
    let left = mounts_under(&runtime);
    let _ = holder.kill();
    let _ = holder.wait();
    assert!(stopped.success(), "{stopped:?}");
    assert_eq!(
        left,
        Vec::<String>::new(),
        "left mounted by the stopped daemon"
    );
}

#[test]
fn a_forced_volume_dismount_over_the_socket_is_answered_at_once() {
    let d = tcd_tests::daemon::Daemon::start();
    let (mnt, object) = tcd_tests::system::mounted_ext4(&d);
    // Killed on drop, should the test fail first.
    let mut holder = tcd_tests::daemon::Stopped(
        Command::new("sleep")
            .arg(HOLD)
            .current_dir(&mnt)
            .spawn()
            .expect("holder"),
    );
    let pid = holder.0.id();
    std::thread::sleep(Duration::from_millis(300));

    // The volume's own object, on a connection of the socket's own.
    let stream = std::os::unix::net::UnixStream::connect(d.socket()).expect("connect");
    let conn = zbus::blocking::connection::Builder::async_io_unix_stream(stream)
        .p2p()
        .build()
        .expect("p2p connection");
    let (tx, rx) = std::sync::mpsc::channel();
    let call = object.clone();
    // Called on a thread of its own: a call never answered fails the test
    // instead of hanging it.
    std::thread::spawn(move || {
        let options: std::collections::HashMap<&str, zbus::zvariant::Value> =
            std::collections::HashMap::from([("force", zbus::zvariant::Value::from(true))]);
        let reply = conn
            .call_method(
                None::<&str>,
                call.as_str(),
                Some("org.tcd.Volume1"),
                "Dismount",
                &options,
            )
            .and_then(|r| r.body().deserialize::<Vec<(u32, String)>>());
        let _ = tx.send(reply);
    });
    let log = || std::fs::read_to_string(d.path("tcd.log")).unwrap_or_default();
    let holders = rx
        .recv_timeout(PROMPT)
        .unwrap_or_else(|_| panic!("no answer within {PROMPT:?}: {}", log()))
        .unwrap_or_else(|e| panic!("the forced dismount failed: {e}\n{}", log()));
    assert!(
        holders
            .iter()
            .any(|(p, command)| *p == pid && command == "sleep"),
        "the answer names the holder (PID {pid}): {holders:?}"
    );
    assert!(
        !is_mount_point(&mnt),
        "the held volume is off its mount point"
    );
    let listed = d.list();
    assert_eq!(listed[0]["state"], "detaching", "{listed}");

    // The holder lets go: the volume goes.
    let _ = holder.0.kill();
    let _ = holder.0.wait();
    let deadline = Instant::now() + Duration::from_secs(60);
    while d.list().as_array().is_some_and(|v| !v.is_empty()) {
        assert!(
            Instant::now() < deadline,
            "still listed a minute after its holder died: {}",
            log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}
