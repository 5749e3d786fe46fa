//! Volumes: mount, dismount, list, create, and the daemon's password
//! cache.

use super::Context;
use crate::bus::{Client, Failure, Volume, VolumeState, exit};
use crate::cli::{CreateArgs, MountArgs, MountFilesystem};
use crate::input::{Judged, Passwords, absolute, prepare_keyfiles, read_header, read_keyfiles};
use crate::{host, notify, options, output, search};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use zbus::zvariant::OwnedObjectPath;

/// `tcctl mount`.
pub fn mount(ctx: Context<'_>, mut a: MountArgs) -> Result<(), Failure> {
    let failed = format!("Cannot mount {}", a.volume.display());
    notify::outcome(ctx.notify, &failed, mount_reported(ctx, &mut a))
}

/// A host that cannot be written (`why`) is mounted read-only, said so;
/// read-write asked for in so many words is not given up on.
fn fall_back_to_read_only(a: &mut MountArgs, why: &str) -> Result<(), Failure> {
    if a.read_write {
        return Err(Failure {
            code: exit::PERMISSION_DENIED,
            message: format!(
                "{} {why}: --read-write cannot be had (without it, the volume mounts read-only)",
                a.volume.display()
            ),
        });
    }
    a.readonly = true;
    eprintln!(
        "tcctl: note: {} {why}: it is mounted read-only",
        a.volume.display()
    );
    Ok(())
}

/// Mounts, says where, and returns the notification's summary and body.
fn mount_reported(ctx: Context<'_>, a: &mut MountArgs) -> Result<(String, String), Failure> {
    options::refuse_unsupported(a)?;
    // udisksctl's `mount -b` after `unlock -b`: the device of a volume
    // attached only has its filesystem mounted, no password asked.
    if let Some(done) = mount_attached(ctx, a)? {
        return Ok(done);
    }
    let (host, fell_back) = host::open_to_mount(&a.volume, !options::read_only(a))?;
    if let Some(why) = fell_back {
        fall_back_to_read_only(a, why)?;
    }
    // What can be refused without the password is refused before it is
    // asked (the daemon checks again, in the same order: a mounted volume
    // is "already mounted" whatever the mount point).
    let c = Client::connect(ctx.at)?;
    let listed = c.list()?;
    check_not_mounted(&listed, &a.volume).map_err(|f| attached_only(&listed, &a.volume, f))?;
    warn_loop_backing(&a.volume, &host);
    // VeraCrypt's text mode asks where, Enter taking the default.
    if a.ask_mount_point && a.mount_point.is_none() && a.filesystem != MountFilesystem::None {
        let typed = crate::input::terminal_line("Enter mount directory [default]: ")?;
        if !typed.is_empty() {
            a.mount_point = Some(typed.into());
        }
    }
    default_veracrypt_slot(a, &listed);
    check_mount_point(a, &listed)?;
    let keyfiles = prepare_keyfiles(&a.secrets.keyfiles)?;
    let mut header = read_header(a.detached.header.as_deref())?;
    if options::system(a) && header.is_none() {
        header = host::system_header(&a.volume, &host)?;
    }
    // Warned once nothing refuses the mount short of the password; the
    // note of a read-only mount waits for the mount.
    if options::system(a) && !options::read_only(a) {
        output::system_read_write_warning(a.filesystem == MountFilesystem::None);
    }
    let mut pw = Passwords::new(a.secrets.password_stdin, ctx.asking());
    let shown = a.volume.display().to_string();
    let mut keyfiles = Some(keyfiles);
    let pim_given = a.secrets.pim;
    let mut retries = crate::input::Retries::new(a.ask_again, a.tries, &a.secrets.keyfiles);
    let mut wrong = false;
    let path = loop {
        let once = MountOnce {
            c: &c,
            host: &host,
            header: header.clone(),
            keyfiles: keyfiles.take(),
        };
        match once.run(a, &mut pw) {
            // VeraCrypt's text mode on a terminal asks again, and
            // cryptsetup's open as often as its --tries says.
            Err(f) if f.code == exit::WRONG_PASSWORD && retries.another(&pw) => {
                eprintln!("tcctl: {}", f.message);
                a.secrets.pim = pim_given;
                wrong = true;
            }
            // Ctrl-D at the next prompt gives up: the wrong password
            // stands (its exit code), as cryptsetup's last try's does.
            Err(f) if f.code == exit::CANCELLED && wrong => return Err(super::gave_up(&a.volume)),
            // As TrueCrypt: the cache first, then the password, where one
            // can be given (standard input, or the terminal).
            Err(f) if f.code == exit::WRONG_PASSWORD && a.cached && pw.at_hand() => {
                eprintln!(
                    "tcctl: no password cached for you opens {shown}: asking for its password"
                );
                a.cached = false;
            }
            r => break r?,
        }
    };
    if options::system(a) && !a.read_write && !options::asked_read_only(a) {
        output::system_read_only_note();
    }
    said_mounted(&c, a, &path, &shown)
}

/// `mount DEVICE` where DEVICE is the block device of a volume tcd
/// serves: its filesystem mounted if it is attached only (udisksctl's
/// `mount -b` after `unlock -b`), else "already mounted". None when
/// DEVICE is no such device.
fn mount_attached(ctx: Context<'_>, a: &MountArgs) -> Result<Option<(String, String)>, Failure> {
    let name = absolute(&a.volume);
    if !name.starts_with("/dev/") {
        return Ok(None);
    }
    let c = Client::connect(ctx.at)?;
    let Some(row) = c.list()?.into_iter().find(|r| r.device() == name) else {
        return Ok(None);
    };
    let host = row.host().to_owned();
    if let Some(at) = row.mount_point() {
        return Err(Failure {
            code: exit::ALREADY_MOUNTED,
            message: format!("{name} is the device of {host}, mounted on {at} already"),
        });
    }
    // Its header was opened when it was attached: nothing of the search
    // applies, and its mode was chosen then.
    if a.filesystem == MountFilesystem::None {
        // Already so: the code of its volume's file attached again.
        return Err(Failure {
            code: exit::ALREADY_MOUNTED,
            message: format!(
                "{name} is the device of {host}, attached already: `tcctl mount -b {name}` \
                 mounts the filesystem it holds, if any"
            ),
        });
    }
    // Its mode was chosen when it was attached, either way: asked
    // otherwise, the way to have it is said.
    if a.read_write && row.view.read_only == Some(true) {
        return Err(Failure::invalid(format!(
            "{name} is the device of {host}, attached read-only: `tcctl dismount {word}` and \
             `tcctl mount --read-write {word}` mount it read-write",
            word = output::shell_word(&host)
        )));
    }
    if options::read_only(a) && row.view.read_only != Some(true) {
        return Err(Failure {
            code: exit::INVALID_ARGUMENT,
            message: format!(
                "{name} is the device of {host}, attached read/write: `tcctl dismount {word}` \
                 and `tcctl mount --readonly {word}` mount it read-only",
                word = output::shell_word(&host)
            ),
        });
    }
    let o = tcd_proto::contract::FilesystemMountOptions {
        mount_point: a.mount_point.as_deref().map(absolute),
        allow_non_empty: Some(a.allow_non_empty),
        fs_options: a.fs_options.clone(),
    };
    c.mount_filesystem(&row.object, &o).map_err(|mut f| {
        // It is its block device already: the daemon's way there is moot.
        if f.code == exit::INVALID_ARGUMENT {
            let there = format!(
                "its block device {name} is there to use as it is (`tcctl dismount {name}` \
                 detaches it)"
            );
            // The daemon's way there ends the message, in either form.
            let way = [(" (mount with ", ": "), ("; mount with ", "; ")]
                .into_iter()
                .find_map(|(from, to)| f.message.rfind(from).map(|at| (at, to)));
            if let Some((at, to)) = way.filter(|_| {
                f.message
                    .trim_end_matches(')')
                    .ends_with("reach its block device")
            }) {
                f.message = format!("{}{to}{there}", &f.message[..at]);
            }
        }
        f
    })?;
    let row = c.list()?.into_iter().find(|r| r.object == row.object);
    Ok(Some(report_mounted(row.as_ref(), &host, false)))
}

/// What a mount that went through says: the backup header that opened it,
/// a mapping name not kept, where it is; the file manager with --explore.
fn said_mounted(
    c: &Client,
    a: &MountArgs,
    path: &OwnedObjectPath,
    shown: &str,
) -> Result<(String, String), Failure> {
    let row = c.list()?.into_iter().find(|r| &r.object == path);
    // Asked for (-m headerbak), the backup header says nothing of the
    // primary one.
    let by_backup = row.as_ref().and_then(|r| r.view.used_backup_header);
    if !options::backup_header_only(a) && by_backup == Some(true) {
        output::backup_header_used(&a.volume);
    }
    if let Some(name) = &a.mapping_name {
        eprintln!(
            "tcctl: {} is taken as cryptsetup's mapping name, which tcd does not keep: the \
             volume is attached as a loop device only (`tcctl status {}` names it)",
            name.display(),
            output::shell_word(shown)
        );
    }
    let reported = report_mounted(row.as_ref(), shown, a.udisks_unlock);
    output::legacy_mounted(
        row.as_ref().map(|r| &r.view),
        shown,
        options::asked_read_only(a),
    );
    if a.explore {
        explore(c, path);
    }
    Ok(reported)
}

/// One try at a mount: its credentials asked, the call made.
struct MountOnce<'a> {
    c: &'a Client,
    host: &'a File,
    header: Option<tcd_proto::contract::Secret>,
    /// The keyfiles prepared before the first question; read again for a
    /// second try.
    keyfiles: Option<crate::input::Keyfiles>,
}

impl MountOnce<'_> {
    fn run(self, a: &mut MountArgs, pw: &mut Passwords) -> Result<OwnedObjectPath, Failure> {
        let keyfiles = match self.keyfiles {
            Some(k) => k,
            None => prepare_keyfiles(&a.secrets.keyfiles)?,
        };
        let (password, keyfiles) = if a.cached {
            (zeroize::Zeroizing::new(Vec::new()), keyfiles.finish()?)
        } else {
            let (s, ask) = (&mut a.secrets, a.ask_keyfiles);
            super::ask_credentials(ask, pw, s, &a.search, &a.volume, keyfiles)?
        };
        // VeraCrypt's next question; a read-only mount has no writes to
        // guard.
        if a.ask_protection && !a.cached && !a.protect_hidden && !options::read_only(a) {
            a.protect_hidden =
                crate::input::terminal_yes("Protect hidden volume (if any)? (y=Yes/n=No) [No]: ")?;
        }
        let mut o = options::mount(a);
        o.detached_header = self.header;
        let _hidden_pw = if a.protect_hidden {
            Some(protection(pw, a, &mut o)?)
        } else {
            None
        };
        let (c, host) = (self.c, self.host);
        // A device or file that holds a plain filesystem opens with no
        // password: said instead of what narrows the search.
        let own_header = o.detached_header.is_none();
        let hidden_pim = o.protect_hidden_pim.is_some();
        let truecrypt = a.search.format() == Some(crate::cli::Format::Truecrypt);
        let hint = |said: &str| match said {
            tcd_proto::contract::errors::HIDDEN_NOT_UNLOCKED => {
                Some(hidden_hint(hidden_pim, truecrypt))
            }
            _ => own_header
                .then(|| search::plain_hint(host, &a.volume))
                .flatten()
                .or_else(crate::cli::narrowing_hint),
        };
        search::run_hinted(c, "", hint, || {
            c.mount(host, &absolute(&a.volume), &password, &keyfiles, o)
        })
        .map_err(|f| search::backup_as_volume(f, &a.volume))
        .map_err(|f| match (a.cached, f.code) {
            // Another volume's header of the same size opens, and its key
            // makes noise of this volume's data.
            (_, exit::INVALID_ARGUMENT)
                if !own_header && f.message.contains("holds no filesystem") =>
            {
                Failure {
                    code: f.code,
                    message: format!(
                        "{}; or the header file given is another volume's, whose key turns \
                         this one's data to noise: is it the header of {}?",
                        f.message,
                        a.volume.display()
                    ),
                }
            }
            (true, exit::WRONG_PASSWORD) => Failure {
                code: f.code,
                message: format!(
                    "no password cached for you opens {}: mount it without --cached to give \
                     its password (with --cache, that one is kept for next time)",
                    a.volume.display()
                ),
            },
            // A TrueCrypt volume was given no PIM to blame.
            (_, exit::WRONG_PASSWORD) if truecrypt => Failure {
                code: f.code,
                message: f.message.replacen(
                    "password, keyfiles and PIM given",
                    "password and keyfiles given",
                    1,
                ),
            },
            _ => f,
        })
    }
}

/// What a protected hidden volume's failed search is told: the outer
/// volume's --pim, --hash and --encryption do not reach its search; with
/// no PIM given for it, a missing one is a cause.
fn hidden_hint(pim_given: bool, truecrypt: bool) -> String {
    let (pim, keyfiles) = (
        crate::input::spelled("--protect-hidden-pim"),
        crate::input::spelled("--protect-hidden-keyfile"),
    );
    match (truecrypt, pim_given) {
        // A TrueCrypt volume has no PIM to name.
        (true, _) => format!(
            "its keyfiles are {keyfiles}; its header is searched over every hash and encryption \
             TrueCrypt has"
        ),
        (false, true) => format!(
            "its PIM and keyfiles are {pim} and {keyfiles}; its header is searched over every \
             hash and encryption"
        ),
        (false, false) => format!(
            "a hidden volume created with a PIM opens only with that PIM: {pim} gives it; its \
             keyfiles are {keyfiles}, and its header is searched over every hash and encryption"
        ),
    }
}

/// `--protect-hidden`: the hidden volume's password, PIM and keyfiles
/// into `o`; the password, which `o` holds a copy of, kept by the caller
/// until the call is made.
fn protection(
    pw: &mut Passwords,
    a: &MountArgs,
    o: &mut tcd_proto::contract::MountOptions,
) -> Result<zeroize::Zeroizing<Vec<u8>>, Failure> {
    let mut hidden_keyfiles = read_keyfiles(&a.hidden.protect_hidden_keyfiles)?;
    // As the volume's own: with --non-interactive, keyfiles alone.
    let hidden_pw = pw.ask_unless_keyfiles_alone(
        crate::input::asked(
            "Hidden volume password (to protect it): ",
            "Enter password for hidden volume: ",
        ),
        !hidden_keyfiles.is_empty(),
    )?;
    let truecrypt = a.search.format() == Some(crate::cli::Format::Truecrypt);
    let pim = pw.pim(
        a.hidden.protect_hidden_pim,
        truecrypt,
        crate::input::asked(
            "Hidden volume PIM (Enter for none): ",
            "Enter PIM for hidden volume: ",
        ),
    )?;
    // VeraCrypt's text mode asks the hidden volume's keyfiles last.
    if a.ask_keyfiles && a.hidden.protect_hidden_keyfiles.is_empty() {
        let typed = crate::input::keyfile_questions(crate::input::asked(
            "Enter keyfile for the hidden volume [none]: ",
            "Enter keyfile for hidden volume [none]: ",
        ))?;
        hidden_keyfiles = read_keyfiles(&typed)?;
    }
    if !hidden_keyfiles.is_empty() {
        let bytes = hidden_keyfiles.iter().map(|k| k.to_vec()).collect();
        o.protect_hidden_keyfiles = Some(tcd_proto::contract::SecretList::new(bytes));
    }
    options::protect_hidden(o, &hidden_pw);
    o.protect_hidden_pim = (pim != 0).then_some(pim);
    Ok(hidden_pw)
}

/// `--explore`: the mount point opened in the file manager, by xdg-open.
/// The volume is mounted whatever happens here.
fn explore(c: &Client, path: &OwnedObjectPath) {
    let rows = c.list().unwrap_or_default();
    let Some(r) = rows.into_iter().find(|r| &r.object == path) else {
        return;
    };
    let Some(at) = r.mount_point() else {
        eprintln!("tcctl: --explore: no filesystem is mounted to open");
        return;
    };
    match std::process::Command::new("xdg-open").arg(at).status() {
        Ok(s) if s.success() => {}
        Ok(s) => eprintln!("tcctl: xdg-open {at}: {s}"),
        Err(e) => eprintln!("tcctl: cannot run xdg-open: {}", crate::bus::io_text(&e)),
    }
}

/// The mount point given must exist, be no symbolic link and no system
/// folder, and be empty unless --allow-non-empty (with --filesystem none
/// there is none to mount).
fn check_mount_point(a: &MountArgs, listed: &[Volume]) -> Result<(), Failure> {
    if let Some(slot) = a.slot {
        check_slot(slot, listed)?;
    }
    let Some(p) = a.mount_point.as_deref() else {
        return Ok(());
    };
    if a.filesystem == MountFilesystem::None {
        return Ok(());
    }
    let hint = "--allow-non-empty mounts over what is there";
    check_mount_folder(p, a.allow_non_empty, hint, listed)
}

/// A mount point folder, as the daemon will take it: it exists, is no
/// symbolic link and no system folder, holds no volume of tcd's, and is
/// empty unless `allow_non_empty` (else refused, saying `hint`). Said
/// before any password is asked.
pub(super) fn check_mount_folder(
    p: &Path,
    allow_non_empty: bool,
    hint: &str,
    listed: &[Volume],
) -> Result<(), Failure> {
    let shown = p.display();
    // The daemon mounts on no link (it could be swapped under it): the
    // folder itself is named, before any password.
    if let Ok(to) = std::fs::read_link(p) {
        return Err(Failure::invalid(format!(
            "mount point {shown} is a symbolic link (to {}): name the folder itself",
            to.display()
        )));
    }
    let mut entries = std::fs::read_dir(p).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Failure::invalid(format!(
            "mount point {shown} does not exist: create the folder first"
        )),
        _ => Failure::invalid(format!("mount point {shown}: {}", crate::bus::io_text(&e))),
    })?;
    if std::fs::canonicalize(p).is_ok_and(|real| tcd_proto::mount_points::is_system_folder(&real)) {
        return Err(Failure::invalid(format!(
            "mount point {shown} is a system folder: choose another"
        )));
    }
    let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    if let Some(v) = listed
        .iter()
        .find(|v| v.mount_point().is_some_and(|m| Path::new(m) == real))
    {
        return Err(Failure::invalid(format!(
            "mount point {shown} is where {} is mounted: dismount it first, or choose another",
            v.host()
        )));
    }
    if !allow_non_empty && entries.next().is_some() {
        return Err(Failure::invalid(format!(
            "mount point {shown} is not empty: {hint}"
        )));
    }
    Ok(())
}

/// VeraCrypt's line with no --slot and no mount folder: the lowest slot
/// free among the user's volumes is asked for, as the daemon would give
/// it, so that the default folder is named by it (veracryptN), as
/// VeraCrypt names its /media/veracryptN.
fn default_veracrypt_slot(a: &mut MountArgs, listed: &[Volume]) {
    if !crate::input::veracrypt_line()
        || a.slot.is_some()
        || a.mount_point.is_some()
        || a.filesystem == MountFilesystem::None
    {
        return;
    }
    // SAFETY: getuid has no arguments and cannot fail.
    let me = unsafe { libc::getuid() };
    let held: Vec<u32> = listed
        .iter()
        .zip(output::slots(listed))
        .filter(|(v, _)| v.view.owner == Some(me))
        .filter_map(|(_, s)| s)
        .collect();
    a.slot = (1..=64).find(|n| !held.contains(n));
}

/// A slot one of the user's volumes holds is said taken before any
/// password is asked; the daemon checks again.
fn check_slot(slot: u32, listed: &[Volume]) -> Result<(), Failure> {
    // SAFETY: getuid has no arguments and cannot fail.
    let me = unsafe { libc::getuid() };
    let taken = listed
        .iter()
        .zip(output::slots(listed))
        .find(|(v, s)| v.view.owner == Some(me) && *s == Some(slot));
    match taken {
        Some((v, _)) => Err(Failure::invalid(format!(
            "slot {slot} is taken: {} is mounted {}; choose another --slot",
            v.host(),
            match v.mount_point() {
                Some(at) => format!("on {at}"),
                None => format!("as {}", v.device()),
            }
        ))),
        None => Ok(()),
    }
}

/// A volume the daemon lists as mounted already is said so before any
/// password is asked: the same file or device, by whatever path.
/// The row of `volume` among the mounted ones, by name or by file.
pub fn mounted_row<'a>(listed: &'a [Volume], volume: &Path) -> Option<&'a Volume> {
    let name = absolute(volume);
    listed
        .iter()
        .find(|r| r.host() == name || same_host(Path::new(r.host()), volume))
}

pub(super) fn check_not_mounted(listed: &[Volume], volume: &Path) -> Result<(), Failure> {
    match mounted_row(listed, volume) {
        None => Ok(()),
        // The daemon refuses it, naming the processes that hold it.
        Some(r) if r.state() == VolumeState::Detaching => Ok(()),
        Some(r) => Err(Failure {
            code: exit::ALREADY_MOUNTED,
            message: format!(
                "{} already mounted{}: `tcctl dismount {}` first",
                named_as(volume, r.host()),
                match r.mount_point() {
                    None => format!(" as {}", r.device()),
                    Some(at) => format!(" on {at}"),
                },
                output::shell_word(r.host())
            ),
        }),
    }
}

/// `volume` as a refusal names it: by its mounted volume `host` too when
/// it is another name of it (a loop device over its file, a link), so the
/// device said mounted is not taken for the one given.
fn named_as(volume: &Path, host: &str) -> String {
    let given = volume.display();
    if absolute(volume) == host {
        format!("{given} is")
    } else if crate::host::is_device(volume) {
        format!("{given} is a loop device over {host}, which is")
    } else if crate::host::is_device(Path::new(host)) {
        format!("{given} is the file behind {host}, which is")
    } else {
        format!("{given} is {host}, which is")
    }
}

/// A container attached to a loop device set up outside tcd (losetup,
/// udisksctl loop-setup) is said before it is mounted: what is written
/// through that device and through the volume would overwrite each other.
/// VeraCrypt and cryptsetup mount it all the same; so does tcd.
fn warn_loop_backing(volume: &Path, host: &File) {
    use std::os::unix::fs::MetadataExt;
    let Some(m) = host.metadata().ok().filter(|m| m.is_file()) else {
        return;
    };
    if let Some(dev) = tcd_proto::devices::loop_device_over(m.dev(), m.ino()) {
        eprintln!(
            "tcctl: warning: {} is also attached as {dev} outside tcd: what is written through \
             {dev} and through this volume would overwrite each other (losetup -d {dev} \
             detaches it)",
            volume.display(),
            dev = dev.display()
        );
    }
}

/// A mount of a volume attached only: udisksctl's next step is a mount
/// of its device, said instead of `f`.
fn attached_only(listed: &[Volume], volume: &Path, f: Failure) -> Failure {
    match mounted_row(listed, volume) {
        Some(r) if r.mount_point().is_none() && r.state() != VolumeState::Detaching => Failure {
            code: f.code,
            message: format!(
                "{} already attached as {device}: `tcctl mount -b {device}` mounts the \
                 filesystem it holds, if any",
                named_as(volume, r.host()),
                device = r.device(),
            ),
        },
        _ => f,
    }
}

/// Whether two paths name one host: the same device, or the same file
/// (device and inode), through links, bind mounts or relative paths; a
/// volume opened on a loop device is named by the file behind it too, and
/// a volume opened as a file by a loop device over it.
fn same_host(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) if x.file_type().is_block_device() => {
            (y.file_type().is_block_device() && x.rdev() == y.rdev())
                || (y.is_file() && loop_backing(x.rdev()).is_some_and(|f| same_file(&f, &y)))
        }
        // A loop device over the volume's file names it too.
        (Ok(x), Ok(y)) if y.file_type().is_block_device() => {
            loop_backing(y.rdev()).is_some_and(|f| same_file(&f, &x))
        }
        (Ok(x), Ok(y)) => same_file(&x, &y),
        _ => false,
    }
}

fn same_file(x: &std::fs::Metadata, y: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    x.dev() == y.dev() && x.ino() == y.ino()
}

/// The file behind the loop device `rdev`, as the kernel names it now.
fn loop_backing(rdev: u64) -> Option<std::fs::Metadata> {
    let sys = format!(
        "/sys/dev/block/{}:{}/loop/backing_file",
        libc::major(rdev),
        libc::minor(rdev)
    );
    let path = std::fs::read_to_string(sys).ok()?;
    std::fs::metadata(path.trim_end_matches('\n')).ok()
}

/// Said after a FAT volume is mounted through fusefat (a kernel without
/// vfat): fusefat never passes fsync on to the volume's device.
pub const FUSEFAT_NOTICE: &str = "note: fusefat serves this FAT volume (the kernel has no vfat): \
     fsync does not reach the volume; what is written gets there when the kernel writes back \
     its cache, and at the latest at dismount (/usr/share/doc/tcd/docs/RELIABILITY.md)";

/// Whether the filesystem mounted at `at` is served by a FUSE driver.
fn served_by_fuse(at: &Path) -> bool {
    tcd_proto::mount_table::now()
        .iter()
        .any(|m| m.point == at && m.fs_type.starts_with("fuse"))
}

/// Says where the volume (its listing, `row`) went, and returns the
/// notification's summary and body; `udisks`: an attachment in
/// udisksctl's unlock's words.
fn report_mounted(row: Option<&Volume>, shown: &str, udisks: bool) -> (String, String) {
    // By the daemon's absolute name, as `tcctl list` shows it.
    match row {
        Some(r) if r.mount_point().is_some() => {
            let (at, device, host) = (r.mount_point().unwrap_or_default(), r.device(), r.host());
            println!("{host} mounted on {at} ({device})");
            // A read-only mount writes nothing to lose.
            if r.view.filesystem.as_deref() == Some("vfat")
                && r.view.read_only != Some(true)
                && served_by_fuse(Path::new(at))
            {
                eprintln!("{FUSEFAT_NOTICE}");
            }
            (format!("Mounted {host} at {at}"), device.to_owned())
        }
        Some(r) => {
            match udisks {
                true => println!("Unlocked {} as {}.", r.host(), r.device()),
                false => println!("{} attached as {}", r.host(), r.device()),
            }
            (
                format!("Attached {} as {}", r.host(), r.device()),
                String::new(),
            )
        }
        None => {
            println!("{shown} mounted");
            (format!("Mounted {shown}"), String::new())
        }
    }
}

/// A volume as the command line names it: by a name, or by VeraCrypt's
/// slot number.
pub enum Named {
    Name(String),
    Slot(u32),
    None,
}

impl Named {
    /// clap lets at most one of the two through.
    pub fn of(target: Option<String>, slot: Option<u32>) -> Named {
        match (target, slot) {
            (Some(t), _) => Named::Name(t),
            (None, Some(n)) => Named::Slot(n),
            (None, None) => Named::None,
        }
    }

    fn describe(&self) -> String {
        match self {
            Named::Name(t) => t.clone(),
            Named::Slot(n) => format!("slot {n}"),
            Named::None => "all volumes".into(),
        }
    }

    /// The name to give the daemon: a slot's volume by its device.
    fn resolve(self, c: &Client) -> Result<Option<String>, Failure> {
        match self {
            Named::Name(t) => Ok(Some(t)),
            Named::None => Ok(None),
            Named::Slot(n) => {
                let rows = c.list()?;
                // SAFETY: getuid has no arguments and cannot fail.
                let me = unsafe { libc::getuid() };
                // Slots are each user's own: the caller's volume first
                // (root sees everyone's).
                rows.iter()
                    .zip(output::slots(&rows))
                    .filter(|(_, s)| *s == Some(n))
                    .max_by_key(|(r, _)| r.view.owner == Some(me))
                    .map(|(r, _)| Some(r.device().to_owned()))
                    .ok_or_else(|| Failure::not_found(format!("no volume is mounted in slot {n}")))
            }
        }
    }
}

/// `tcctl dismount`; `udisks_lock`: udisksctl's `lock` (see [`lock`]).
pub fn dismount(
    ctx: Context<'_>,
    target: Named,
    all: bool,
    force: bool,
    udisks_lock: bool,
) -> Result<(), Failure> {
    let what = target.describe();
    // A slot's volume is said by its slot, as it was named.
    let named_as = matches!(target, Named::Slot(_)).then(|| what.clone());
    // clap asks for one of them.
    let result = Client::connect(ctx.at).and_then(|c| match target.resolve(&c)? {
        Some(t) if udisks_lock => lock(&c, t, force),
        Some(t) if !all => dismount_one(&c, t, named_as, force),
        _ => dismount_all(&c, force),
    });
    // VeraCrypt's -d exits 1 for a volume not mounted, as its -l does.
    let result = result.map_err(|f| match f.code {
        exit::NOT_FOUND if crate::input::veracrypt_line() => Failure {
            code: exit::FAILED,
            ..f
        },
        _ => f,
    });
    notify::outcome(ctx.notify, &format!("Cannot dismount {what}"), result)
}

/// tcctl leaves its working folder for `/` while it asks for a dismount:
/// run inside the mount point, it would hold the filesystem itself and be
/// named among its users. Back in it (by its path) when this goes, so a
/// name given relative to it still means what it meant.
struct AwayFromWorkingFolder(Option<std::path::PathBuf>);

fn leave_working_folder() -> AwayFromWorkingFolder {
    let was = std::env::current_dir().ok();
    let _ = std::env::set_current_dir("/");
    AwayFromWorkingFolder(was)
}

impl Drop for AwayFromWorkingFolder {
    fn drop(&mut self) {
        if let Some(was) = &self.0 {
            let _ = std::env::set_current_dir(was);
        }
    }
}

/// udisksctl's `lock`: a volume attached as its block device alone is
/// detached and said as udisksctl says it; one whose filesystem is
/// mounted is refused, as udisks refuses to lock a device in use.
fn lock(c: &Client, target: String, force: bool) -> Result<(String, String), Failure> {
    let name = match Path::new(&target).exists() {
        true => absolute(Path::new(&target)),
        false => target,
    };
    let Some(v) = find_mounted(c.list()?, &name) else {
        return Err(no_mapping_names(
            c,
            &name,
            Failure::not_found(format!("{name} is not unlocked")),
        ));
    };
    let (volume, device) = (v.host().to_owned(), v.device().to_owned());
    if let Some(at) = v.mount_point() {
        return Err(Failure {
            code: exit::BUSY,
            message: format!(
                "Error locking {volume}: its filesystem is mounted on {at}; `tcctl unmount -b \
                 {device}` unmounts it first (`tcctl dismount {}` does both)",
                output::shell_word(&volume)
            ),
        });
    }
    let holders = {
        let _away = leave_working_folder();
        c.dismount(&volume, force)
            .map_err(|f| busy_hint(force, true, f))?
    };
    // Forced while held: not locked yet, and said so (its key stays until
    // the device is let go).
    let still = !holders.is_empty()
        || c.list().ok().is_some_and(|l| {
            find_mounted(l, &volume).is_some_and(|v| v.state() == VolumeState::Detaching)
        });
    if still {
        let by = match holders.is_empty() {
            true => String::new(),
            false => format!(" by {}", output::describe_holders(&holders)),
        };
        let said = format!(
            "{volume} is detaching, not locked yet: {device} is still in use{by}, and the volume \
             and its key go when it is let go"
        );
        println!("{said}");
        return Ok((format!("Locking {volume}"), said));
    }
    println!("Locked {volume}.");
    Ok((format!("Dismounted {volume}"), String::new()))
}

fn dismount_all(c: &Client, force: bool) -> Result<(String, String), Failure> {
    let _away = leave_working_folder();
    let n = c.dismount_all(force).map_err(|f| match (force, f.code) {
        (false, exit::BUSY) => Failure {
            code: f.code,
            message: format!(
                "{}; --force takes each volume in use off its mount point now (a device \
                 mounted outside tcd stays mounted there) and detaches it when the last user \
                 lets go",
                f.message
            ),
        },
        _ => f,
    })?;
    let detaching: Vec<String> = c
        .list()?
        .iter()
        .filter(|r| r.state() == VolumeState::Detaching)
        .map(|r| r.host().to_owned())
        .collect();
    let said = match (n, detaching.is_empty()) {
        (0, true) => "nothing to dismount".to_owned(),
        // Forced off their mount points, none gone yet: said below.
        (0, false) if force => "no volume detached yet".to_owned(),
        // What is left is on its way out already.
        (0, false) => "nothing more to dismount".to_owned(),
        (1, _) => "1 volume dismounted".to_owned(),
        (n, _) => format!("{n} volumes dismounted"),
    };
    // On standard output, as mount's line: what was done, not a problem.
    println!("{said}");
    for host in detaching {
        println!("{host} is still in use; it will be detached when its users let go");
    }
    Ok((said, String::new()))
}

/// A volume in use, dismounted without --force: how --force would help.
/// `attached`: the volume has no mount point of tcd's (its block device
/// alone, which someone else may have mounted).
fn busy_hint(force: bool, attached: bool, f: Failure) -> Failure {
    match (force, f.code) {
        (false, exit::BUSY) if attached => Failure {
            code: f.code,
            message: format!(
                "{}; --force leaves it detaching, and it is detached when the device is let go",
                f.message
            ),
        },
        (false, exit::BUSY) => Failure {
            code: f.code,
            message: format!(
                "{}; --force takes it off its mount point now, and it is detached when the \
                 last user lets go",
                f.message
            ),
        },
        _ => f,
    }
}

fn dismount_one(
    c: &Client,
    target: String,
    named_as: Option<String>,
    force: bool,
) -> Result<(String, String), Failure> {
    let typed = target.clone();
    let name = if Path::new(&target).exists() {
        absolute(Path::new(&target))
    } else {
        target
    };
    // Said by the volume, whatever named it (its mount point or device),
    // and asked by the volume's own name: a symbolic link to the
    // container, the device or the mount point is followed, as mount
    // followed it.
    let found = c.list().ok().and_then(|l| find_mounted(l, &name));
    let volume = found
        .as_ref()
        .map_or_else(|| name.clone(), |v| v.host().to_owned());
    let asked = found.as_ref().map_or(name.as_str(), |v| v.host());
    let attached = found.as_ref().is_some_and(|v| v.mount_point().is_none());
    let dismounted = {
        let _away = leave_working_folder();
        c.dismount(asked, force)
    };
    let holders = dismounted
        .map_err(|f| busy_hint(force, attached, f))
        .map_err(|f| match found {
            Some(_) => f,
            None => no_mapping_names(c, &typed, f),
        })?;
    // A block device someone else mounted is held by no process: the
    // volume is still listed, detaching.
    let detaching = holders.is_empty()
        && c.list().ok().is_some_and(|l| {
            find_mounted(l, &volume).is_some_and(|v| v.state() == VolumeState::Detaching)
        });
    if detaching {
        let said =
            format!("{volume} is detaching: its device is still in use, and it goes when let go");
        println!("{said}");
        return Ok((format!("Dismounting {volume}"), said));
    }
    if holders.is_empty() {
        // As `dismount --all` says its count, and udisksctl its unmount.
        // The name given, when it was the volume's mount point or device
        // (`mnt/` as `mnt`); a link to the container is the container.
        let given = match name.trim_end_matches('/') {
            "" => "/",
            n => n,
        };
        let by_place = found
            .as_ref()
            .is_some_and(|v| v.mount_point() == Some(given) || v.device() == given);
        let from = match named_as {
            Some(n) => format!(" ({n})"),
            None if by_place => format!(" ({given})"),
            None => String::new(),
        };
        println!("{volume} dismounted{from}");
        return Ok((format!("Dismounted {volume}"), from.trim().to_owned()));
    }
    // An attached volume had no filesystem of tcd's to unmount: it is
    // detaching, whoever else (a mount outside, udev's probe) holds it.
    let by = output::describe_holders(&holders);
    let said = if attached && found.is_some_and(|v| v.state() == VolumeState::Mounted) {
        format!(
            "{volume} is detaching: its device is still in use by {by}, and it goes when they let go"
        )
    } else {
        format!("{volume} is unmounted, but still in use by {by}: its device goes when they let go")
    };
    println!("{said}");
    Ok((format!("Dismounting {volume}"), said))
}

/// `tcctl dismount --filesystem-only`: the filesystem unmounted, the
/// volume left attached as its block device (udisksctl's `unmount -b`).
pub fn unmount_filesystem(ctx: Context<'_>, target: Named, force: bool) -> Result<(), Failure> {
    let what = target.describe();
    let result = Client::connect(ctx.at).and_then(|c| {
        let Some(target) = target.resolve(&c)? else {
            return Err(Failure::invalid("name the volume to unmount".into()));
        };
        unmount_one(&c, &target, force)
    });
    notify::outcome(ctx.notify, &format!("Cannot unmount {what}"), result)
}

fn unmount_one(c: &Client, target: &str, force: bool) -> Result<(String, String), Failure> {
    let name = if Path::new(target).exists() {
        absolute(Path::new(target))
    } else {
        target.to_owned()
    };
    let Some(v) = find_mounted(c.list()?, &name) else {
        return Err(no_mapping_names(
            c,
            target,
            Failure::not_found(format!("{name} is not mounted")),
        ));
    };
    let (volume, device) = (v.host().to_owned(), v.device().to_owned());
    let _away = leave_working_folder();
    c.unmount_filesystem(&v.object, force)
        .map_err(|f| match (force, f.code) {
            (false, exit::BUSY) => Failure {
                code: f.code,
                message: format!(
                    "{}; --force takes it off its mount point now, and its users keep it until \
                     they let go",
                    f.message
                ),
            },
            _ => f,
        })?;
    // As dismount and mount -b say it: the volume, where it was, and the
    // device it is still attached as.
    let from = v
        .mount_point()
        .map(|at| format!(" ({at})"))
        .unwrap_or_default();
    let said = format!("{volume} unmounted{from}; still attached as {device}");
    println!("{said}");
    Ok((
        format!("Unmounted {volume}"),
        format!("still attached as {device}"),
    ))
}

/// A mount point mounted, but by no volume of tcd's: a volume's device
/// mounted by hand, as cryptsetup's users mount a mapping, is named with
/// how it comes off.
fn mounted_not_by_tcd(c: &Client, asked: &str, source: &Path) -> String {
    let listed = c.list().unwrap_or_default();
    match listed.iter().find(|v| Path::new(v.device()) == source) {
        Some(v) => format!(
            "{asked} holds {}, the device of tcd's volume {}, mounted outside tcd: umount(8) \
             unmounts it, then `tcctl close {}` detaches the volume",
            v.device(),
            v.host(),
            output::shell_word(v.host())
        ),
        None => format!(
            "{asked} is mounted, but by no volume of tcd's (`tcctl list` names its volumes)"
        ),
    }
}

/// A name not mounted that names nothing on disk: a bare word is
/// cryptsetup's mapping name, perhaps, which tcd does not keep; a
/// /dev/mapper device one tcd never makes; a file name (`vol.hc`,
/// `dir/vol`) is said to name no file.
fn no_mapping_names(c: &Client, asked: &str, mut f: Failure) -> Failure {
    let path = Path::new(asked);
    if f.code != exit::NOT_FOUND {
        return f;
    }
    let mut folder = false;
    // A symbolic link that leads nowhere (a loop, a missing target) names
    // no file and no mapping.
    if !path.exists() && path.is_symlink() {
        f.message = format!(
            "{asked} is not mounted: it is a symbolic link that leads to no file (its target \
             is missing, or it leads back to itself)"
        );
        return f;
    }
    if path.exists() {
        // Another filesystem's mount point (`/proc`) is mounted, but no
        // volume of tcd's.
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let table = tcd_proto::mount_table::now();
        if let Some(m) = table.iter().find(|m| m.point == canonical) {
            f.message = mounted_not_by_tcd(c, asked, &m.source);
            return f;
        }
        // A bare word that is a folder here may still be the mapping name
        // `open --type tcrypt` took: the folder is said first, the mapping
        // name after (never on VeraCrypt's line, which has none).
        if asked.contains('/') || !path.is_dir() {
            return f;
        }
        f.message = format!(
            "{asked} is not mounted: no volume is mounted on the folder {}",
            canonical.display()
        );
        if crate::input::veracrypt_line() {
            return f;
        }
        folder = true;
    }
    // cryptsetup's and VeraCrypt's device names: what tcd names instead.
    if let Some(name) = asked.strip_prefix("/dev/mapper/") {
        let slot = name
            .strip_prefix("veracrypt")
            .and_then(|n| n.parse::<u32>().ok())
            .map(|n| format!("; VeraCrypt's {name} is `--slot {n}` here"))
            .unwrap_or_default();
        f.message.push_str(&format!(
            " (tcd makes no /dev/mapper devices: its volumes are loop devices, named with their \
             files and mount points by `tcctl list`{slot})"
        ));
        return f;
    }
    if !path.exists() && (asked.contains('/') || path.extension().is_some()) {
        f.message.push_str(" (no file of that name exists either)");
        return f;
    }

    // A favorite's name is no volume's either: its volume is named.
    let favorite = c
        .list_favorites()
        .unwrap_or_default()
        .into_iter()
        .find(|fav| fav.settings.name == asked);
    match favorite {
        Some(fav) => {
            f.message = format!(
                "{asked} is a favorite's name, not a volume's: its volume is {host} (`tcctl dismount \
             {word}`, `tcctl status {word}`)",
                host = fav.settings.host,
                word = output::shell_word(&fav.settings.host)
            )
        }
        None if folder => f.message.push_str(
            "; nor is it a mapping name, which tcd keeps none of: name the volume by its file, \
             device or mount point, as `tcctl list` shows them",
        ),
        None => f.message.push_str(
            " (tcd keeps no cryptsetup mapping names: name the volume by its file, device or \
             mount point, as `tcctl list` shows them)",
        ),
    }
    f
}

/// `tcctl list`.
pub fn list(
    ctx: Context<'_>,
    json: bool,
    veracrypt_lines: bool,
    only: Named,
) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    if !veracrypt_lines {
        output::volumes(&c.list()?, json);
        return Ok(());
    }
    // VeraCrypt's -l exits 1 whenever what it lists is not mounted, a
    // volume named as much as none at all ("No such volume is mounted").
    veracrypt_list(&c, json, only).map_err(|f| match f.code {
        exit::NOT_FOUND => Failure {
            code: exit::FAILED,
            ..f
        },
        _ => f,
    })
}

/// `tcctl -t -l`: VeraCrypt's lines, or with `--json` the list's JSON
/// (one volume's: `status --json`'s).
fn veracrypt_list(c: &Client, json: bool, only: Named) -> Result<(), Failure> {
    let named = !matches!(only, Named::None);
    let shown = only.describe();
    let only = match only.resolve(c)? {
        Some(target) => match find_mounted(c.list()?, &target) {
            Some(v) => Some(v),
            None => return Err(Failure::not_found(format!("{shown} is not mounted"))),
        },
        None => None,
    };
    let rows = c.list()?;
    let none = || Failure {
        code: exit::FAILED,
        message: "No volumes mounted.".into(),
    };
    if json {
        match &only {
            Some(v) => output::status(v, true),
            None => output::volumes(&rows, true),
        }
        // A volume detaching is not mounted any more, as the lines say.
        let mounted = rows.iter().any(|r| r.state() != VolumeState::Detaching);
        return if only.is_some() || mounted {
            Ok(())
        } else {
            Err(none())
        };
    }
    // A volume detaching is not mounted any more: no line.
    let object = only.map(|v| v.object);
    if output::veracrypt_lines(&rows, object.as_ref()) == 0 {
        if named {
            return Err(Failure::not_found(format!("{shown} is not mounted")));
        }
        return Err(none());
    }
    Ok(())
}

/// `tcctl status`: the volume named by its container or device, mount
/// point, mapped device or object path; not mounted is `NOT_FOUND`, as
/// `cryptsetup status` fails on an inactive device.
pub fn status(ctx: Context<'_>, target: Named, json: bool) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    let Some(target) = target.resolve(&c)? else {
        return Err(Failure::invalid("status: name a volume".into()));
    };
    match find_mounted(c.list()?, &target) {
        Some(v) => {
            output::status(&v, json);
            Ok(())
        }
        // A bare word that names no file (cryptsetup's `status NAME`) or
        // another filesystem's mount point: said as close says it.
        None => Err(no_mapping_names(
            &c,
            &target,
            Failure::not_found(format!("{target} is not mounted")),
        )),
    }
}

/// `status` of every mounted volume, as VeraCrypt's --volume-properties
/// with no volume shows each one's; none: "No volumes mounted.", exit 1,
/// as VeraCrypt says it.
pub fn status_of_every(ctx: Context<'_>, json: bool) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    let mounted: Vec<Volume> = c
        .list()?
        .into_iter()
        .filter(|v| v.state() != VolumeState::Detaching)
        .collect();
    if mounted.is_empty() {
        return Err(Failure {
            code: exit::FAILED,
            message: "No volumes mounted.".into(),
        });
    }
    if json {
        output::volumes(&mounted, true);
        return Ok(());
    }
    for (i, v) in mounted.iter().enumerate() {
        if i > 0 {
            println!();
        }
        output::status(v, false);
    }
    Ok(())
}

/// The volume among `listed` that `target` names: its container or
/// device (by name, or by the file itself: a hard link or bind mount of
/// the container names it too, as the daemon refuses to mount it twice),
/// mount point, mapped device or object path.
fn find_mounted(listed: Vec<Volume>, target: &str) -> Option<Volume> {
    let given = Path::new(target);
    // The names as the daemon keeps them: absolute, and symbolic links
    // followed for a mount point or device.
    let names = [
        target.to_owned(),
        absolute(given),
        std::fs::canonicalize(given)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default(),
    ];
    let named_by = |v: &Volume| {
        let own = [
            v.object.as_str(),
            v.host(),
            v.device(),
            v.mount_point().unwrap_or(""),
        ];
        own.iter()
            .any(|o| !o.is_empty() && names.iter().any(|n| n == o))
    };
    let (named, others): (Vec<Volume>, Vec<Volume>) = listed.into_iter().partition(named_by);
    named.into_iter().next().or_else(|| {
        others
            .into_iter()
            .find(|v| same_host(Path::new(v.host()), given))
    })
}

/// `tcctl wipe-cache`.
pub fn wipe_cache(ctx: Context<'_>) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    let n = c.wipe_cache()?;
    let n = usize::try_from(n).unwrap_or(usize::MAX);
    println!("{} wiped", output::count(n, "cached password"));
    Ok(())
}

/// `tcctl create`: everything asked and judged before a file is made.
pub fn create(ctx: Context<'_>, a: CreateArgs) -> Result<(), Failure> {
    let mut a = a.resolve()?;
    crate::host::refuse_folder_name(&a.volume)?;
    a.volume = crate::input::shown_absolute(a.volume);
    crate::host::refuse_no_host(&a.volume)?;
    super::refuse_tcd_device(ctx.at, &a.volume, true)?;
    settle_max_size(&mut a)?;
    // A hidden volume goes into an outer volume there is: one missing is
    // said as every command says it (exit 3), before anything is asked.
    if a.hidden_size.is_some() {
        crate::host::open_volume(&a.volume, true)?;
    }
    let keyfiles = prepare_keyfiles(&a.secrets.keyfiles)?;
    check_create_target(&a)?;
    // The daemon reached before anything is asked: no password typed in
    // vain.
    let listed = listed_aside(ctx.at)?;
    if std::fs::symlink_metadata(&a.volume).is_ok() {
        check_not_mounted(&listed, &a.volume)?;
    }
    // An existing file or device is replaced: see [`confirm_replace`].
    a.replace = a.hidden_size.is_none() && std::fs::symlink_metadata(&a.volume).is_ok();
    refuse_loop_backing(&a.volume)?;
    // A password read from standard input is judged before the question
    // (a refusal makes it moot); one to be typed is asked after it.
    if !a.secrets.password_stdin {
        confirm_replace(ctx, &a)?;
    }
    let (password, o, typed) = ask_for_create(ctx, &a, !keyfiles.is_empty())?;
    if a.secrets.password_stdin {
        confirm_replace(ctx, &a)?;
    }
    let keyfiles = match typed {
        Some(paths) => prepare_keyfiles(&paths)?.finish()?,
        None => keyfiles.finish()?,
    };
    let (host, made) = open_for_create(&a)?;
    // A container file made here goes again if anything below fails or the
    // user interrupts: no half-made volume is left behind, and a file it
    // was to replace is left as it was.
    if let Some(m) = &made {
        let said = m.undone_saying();
        let temp = m.path.clone();
        crate::interrupt::on_interrupt(move || said(std::fs::remove_file(&temp)));
    }
    // Connected only now: the signals above are blocked in every thread
    // the connection starts.
    let result = Client::connect(ctx.at).and_then(|c| c.create(&host, &password, &keyfiles, o));
    if let (Err(f), Some(m)) = (&result, &made) {
        let said = m.undone_saying()(std::fs::remove_file(&m.path));
        return Err(Failure {
            code: f.code,
            message: format!("{}; {said}", f.message),
        });
    }
    if let (Ok(()), Some(m)) = (&result, &made) {
        m.put_in_place()?;
    }
    result?;
    if a.hidden_size.is_some() {
        println!("hidden volume created in {}", a.volume.display());
    } else {
        println!("{} created", a.volume.display());
    }
    Ok(())
}

/// An existing file or device is gone for good once made a volume: asked
/// as cryptsetup asks before luksFormat, unless -q (cryptsetup's) or
/// --force (VeraCrypt's) says not to.
fn confirm_replace(ctx: Context<'_>, a: &CreateArgs) -> Result<(), Failure> {
    if a.replace && !a.batch_mode && !a.force {
        crate::input::confirm(
            ctx.interactive,
            &format!(
                "{} {}",
                a.volume.display(),
                if crate::host::is_device(&a.volume) {
                    "is a device"
                } else {
                    "exists"
                }
            ),
            &format!(
                "WARNING: this overwrites everything in {} irrevocably. Are you sure? \
                 (Type 'YES' in capital letters): ",
                a.volume.display()
            ),
            "--batch-mode (VeraCrypt's --force)",
        )?;
    }
    Ok(())
}

/// The new volume's password, options, and keyfiles typed (with
/// `--ask-keyfiles`).
type ForCreate = (
    zeroize::Zeroizing<Vec<u8>>,
    tcd_proto::contract::CreateOptions,
    Option<Vec<std::path::PathBuf>>,
);

/// The passwords, PIMs and options of the new volume, asked (the outer
/// volume's first for a hidden one) and judged; with `--ask-keyfiles`,
/// the keyfiles typed after them.
fn ask_for_create(
    ctx: Context<'_>,
    a: &CreateArgs,
    any_keyfile: bool,
) -> Result<ForCreate, Failure> {
    let mut pw = Passwords::new(a.secrets.password_stdin, ctx.asking());
    let mut o = options::create(a);
    let truecrypt = o.format == Some(tcd_proto::contract::options::VolumeFormat::TrueCrypt);
    let what = match a.hidden_size {
        Some(_) => format!("the new hidden volume in {}", a.volume.display()),
        None => format!("the new volume {}", a.volume.display()),
    };
    if let Some(size) = a.hidden_size {
        let (outer, outer_pim, outer_keyfiles, (hash, room)) =
            outer_opened(ctx, a, &mut pw, truecrypt)?;
        // Said before the hidden volume's password is typed (twice).
        if let Some(room) = room.filter(|&room| size > room) {
            return Err(Failure::invalid(format!(
                "a hidden volume of {size} bytes does not fit: the outer volume has room for at \
                 most {room} bytes (less what its files take)"
            )));
        }
        let outer_keyfiles = outer_keyfiles.iter().map(|k| k.to_vec()).collect();
        options::create_hidden(&mut o, size, &outer, outer_pim, outer_keyfiles);
        o.outer_hash = hash;
    }
    let password = new_password_asked(&mut pw, a, &what, truecrypt, any_keyfile)?;
    // As VeraCrypt asks on a terminal: Enter keeps the default iterations.
    let prompt = crate::input::pim_prompt(&what);
    let mut pim = pw.pim(a.secrets.pim, truecrypt, &prompt)?;
    let typed = keyfiles_after(a)?;
    let any_keyfile = any_keyfile || typed.as_ref().is_some_and(|t| !t.is_empty());
    if password.is_empty() {
        crate::input::judge_new_password(&password, any_keyfile, a.force, "--keyfile")?.say();
    }
    // A PIM typed at the prompt that the password is too short for is
    // said and asked again, as a short password is.
    let at_prompt = a.secrets.pim.is_none() && !a.secrets.password_stdin && !pw.asks_nobody();
    loop {
        match crate::input::judge_new_pim(&password, pim, any_keyfile, a.force) {
            Err(f) if at_prompt && f.code == exit::INVALID_ARGUMENT => {
                eprintln!("tcctl: {}", f.message);
                pim = pw.pim(None, truecrypt, &prompt)?;
            }
            judged => break judged?.say(),
        }
    }
    o.pim = (pim != 0).then_some(pim);
    Ok((password, o, typed))
}

/// The new volume's password, judged. A mistyped repeat is said and both
/// are asked again, as VeraCrypt does; a password read from standard
/// input is not repeated.
fn new_password_asked(
    pw: &mut Passwords,
    a: &CreateArgs,
    what: &str,
    truecrypt: bool,
    any_keyfile: bool,
) -> Result<zeroize::Zeroizing<Vec<u8>>, Failure> {
    loop {
        let password =
            pw.ask_unless_keyfiles_alone(&crate::input::password_prompt(what), any_keyfile)?;
        // Past the format's limit: refused, or asked again before the
        // repeat when typed.
        let Some(length) = crate::input::judge_asked_length(pw, &password, truecrypt)? else {
            continue;
        };
        let typed_once = a.secrets.password_stdin || pw.asks_nobody();
        if !typed_once && pw.ask(crate::input::repeat_prompt())? != password {
            eprintln!("tcctl: the passwords differ: type them again");
            continue;
        }
        // A PIM given on the line that this password is too short for is
        // refused before any question of its length (keyfiles asked later
        // may yet make it do: then judged once they are known).
        if let Some(pim) = a.secrets.pim.filter(|_| !a.ask_keyfiles) {
            let _said_once_the_pim_is_settled =
                crate::input::judge_new_pim(&password, pim, any_keyfile, a.force)?;
        }
        // Judged once typed twice, as VeraCrypt judges it; an empty
        // password waits for the keyfiles asked after it.
        let later = a.ask_keyfiles && password.is_empty();
        match crate::input::judge_typed_password(
            pw,
            &password,
            any_keyfile || later,
            a.force,
            "--keyfile",
        )? {
            Judged::Taken(warning) => {
                warning.say();
                length.say();
                crate::input::judge_portable(&password).say();
                break Ok(password);
            }
            Judged::AskAnother => {}
        }
    }
}

/// `--ask-keyfiles`: the new volume's keyfiles, asked after its password
/// and PIM as VeraCrypt asks them; the prompt names the hidden volume
/// where the outer one's keyfiles were asked too.
fn keyfiles_after(a: &CreateArgs) -> Result<Option<Vec<std::path::PathBuf>>, Failure> {
    if !a.ask_keyfiles {
        return Ok(None);
    }
    let prompt = match a.hidden_size {
        Some(_) => "Enter keyfile path for the hidden volume [none]: ",
        None => "Enter keyfile path [none]: ",
    };
    crate::input::keyfile_questions(prompt).map(Some)
}

/// The outer volume's password, PIM and keyfiles, asked, and what opening
/// it tells (see [`open_outer`]). In VeraCrypt's text mode on a terminal
/// its keyfiles are asked after its PIM, and a wrong password is said and
/// all of them asked again, as VeraCrypt does.
type Outer = (
    zeroize::Zeroizing<Vec<u8>>,
    u32,
    Vec<zeroize::Zeroizing<Vec<u8>>>,
    (Option<String>, Option<u64>),
);

fn outer_opened(
    ctx: Context<'_>,
    a: &CreateArgs,
    pw: &mut Passwords,
    truecrypt: bool,
) -> Result<Outer, Failure> {
    loop {
        let outer = pw.ask(&format!(
            "Outer volume password of {}: ",
            a.volume.display()
        ))?;
        let outer_pim = pw.pim(
            a.outer_pim,
            truecrypt,
            "Outer volume PIM (Enter for none): ",
        )?;
        let outer_keyfiles = if a.ask_outer && a.outer_keyfiles.is_empty() {
            let typed =
                crate::input::keyfile_questions("Enter keyfile for the outer volume [none]: ")?;
            read_keyfiles(&typed)?
        } else {
            read_keyfiles(&a.outer_keyfiles)?
        };
        // As VeraCrypt: the outer volume is opened before the hidden
        // volume's password is asked, and its hash then narrows the
        // daemon's second look.
        match open_outer(ctx, a, &outer, outer_pim, &outer_keyfiles) {
            Ok(seen) => return Ok((outer, outer_pim, outer_keyfiles, seen)),
            Err(f) if a.ask_outer && f.code == exit::WRONG_PASSWORD => {
                eprintln!("tcctl: {}", f.message);
            }
            Err(f) => return Err(f),
        }
    }
}

/// Opens the outer volume of a new hidden volume with its credentials, as
/// `info` does (progress on a terminal, the wrong-password hint); its
/// hash, and the largest hidden volume its data area has room for.
fn open_outer(
    ctx: Context<'_>,
    a: &CreateArgs,
    password: &[u8],
    pim: u32,
    keyfiles: &[zeroize::Zeroizing<Vec<u8>>],
) -> Result<(Option<String>, Option<u64>), Failure> {
    let host = host::open_volume(&a.volume, false)?;
    let c = Client::connect(ctx.at)?;
    let search = tcd_proto::contract::SearchOptions {
        hash: a.outer_hash.map(crate::cli::wire_name),
        pim: (pim != 0).then_some(pim),
        ..Default::default()
    };
    let info = search::run_on(&c, &host, &a.volume, || {
        c.header_info(&host, password, keyfiles, search)
    })
    .map_err(|mut f| {
        // Said of the outer volume: --pim and --hash are the hidden one's.
        f.message = format!("the outer volume {}: {}", a.volume.display(), f.message);
        if f.code == exit::WRONG_PASSWORD {
            f.message.push_str(
                " (its PIM and hash are --outer-pim and --outer-hash; --pim and --hash are \
                     the hidden volume's)",
            );
        }
        f
    })?;
    let hash = tcd_client::forms::outer_hash(&a.volume, &info)?;
    // Said now, as the daemon would say it at the end: before the new
    // hidden volume's password is typed in vain.
    if info.end_in_use == Some(true) {
        return Err(Failure::invalid(OUTER_END_IN_USE.into()));
    }
    let room = info.size.map(tcd_client::forms::hidden_limit);
    Ok((hash, room))
}

/// The daemon's words for an outer volume whose end is in use.
const OUTER_END_IN_USE: &str = "the end of the outer volume, where a hidden volume lies, is in \
                                use: it holds a hidden volume already (an outer volume holds \
                                one, and a new one would destroy it), or the outer filesystem's \
                                data reaches its last sector";

/// The daemon's list of volumes, taken on a thread of its own with the
/// interrupt signals blocked: the connection's threads, started there,
/// leave them to the thread `crate::interrupt` starts later.
pub(crate) fn listed_aside(at: crate::bus::Where<'_>) -> Result<Vec<Volume>, Failure> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let set = crate::signals::set_of(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP]);
            crate::signals::block(&set);
            Client::connect(at)?.list()
        })
        .join()
        .unwrap_or_else(|_| {
            Err(Failure::invalid(
                "listing the mounted volumes failed".into(),
            ))
        })
    })
}

/// What TrueCrypt's format cannot hold, refused before a file is made:
/// a PIM, VeraCrypt's later hashes and ciphers.
fn refuse_for_truecrypt(a: &CreateArgs) -> Result<(), Failure> {
    use crate::cli::Hash;
    let refuse = |what: String| {
        Err(Failure {
            code: exit::USAGE,
            message: format!("{what}, or make a VeraCrypt volume"),
        })
    };
    if a.secrets.pim.is_some_and(|p| p != 0) {
        return refuse("a TrueCrypt volume has no PIM: drop --pim".into());
    }
    if !matches!(a.hash, Hash::Sha512 | Hash::Whirlpool | Hash::Ripemd160) {
        return refuse(format!(
            "TrueCrypt's hashes are sha512, whirlpool and ripemd160, not {}",
            crate::cli::wire_name(a.hash)
        ));
    }
    let cipher = crate::cli::wire_name(a.encryption);
    if cipher.contains("Camellia") || cipher.contains("Kuznyechik") {
        return refuse(format!(
            "TrueCrypt's ciphers are AES, Serpent and Twofish and their cascades, not {cipher}"
        ));
    }
    Ok(())
}

/// `--size max`: the free space of the new container's filesystem, less
/// 1 MiB for that filesystem's own records of the file, in whole MiB.
fn settle_max_size(a: &mut CreateArgs) -> Result<(), Failure> {
    const MIB: u64 = 1 << 20;
    let hidden = a.hidden_size == Some(crate::input::MAX_FREE);
    if a.size != Some(crate::input::MAX_FREE) && !hidden {
        return Ok(());
    }
    if hidden {
        return Err(Failure {
            code: exit::USAGE,
            message: "--size max is for a new container file: give a hidden volume's size".into(),
        });
    }
    let folder = match a.volume.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let free = crate::host::free_space(&folder).map_err(|e| Failure::file(&folder, &e))?;
    let size = (free / MIB).saturating_sub(1) * MIB;
    if size == 0 {
        return Err(Failure::invalid(format!(
            "--size max: {} has less than 2 MiB free",
            folder.display()
        )));
    }
    eprintln!(
        "tcctl: --size max: {} ({size} bytes)",
        crate::output::human_size(size)
    );
    a.size = Some(size);
    Ok(())
}

/// Sectors other than 512 bytes in a container file: tcd takes them, but
/// VeraCrypt and TrueCrypt make file containers with 512-byte sectors
/// only (larger ones for devices whose sectors are larger).
fn note_sectors_in_a_file(a: &CreateArgs) {
    use std::os::unix::fs::FileTypeExt;
    let device = std::fs::metadata(&a.volume).is_ok_and(|m| m.file_type().is_block_device());
    if let Some(sector) = a.sector_size.filter(|&s| s != 512 && !device) {
        eprintln!(
            "tcctl: note: VeraCrypt and TrueCrypt make file containers with 512-byte sectors \
             only and may not open one with {sector}-byte sectors; --sector-size 512 (the \
             default in a file) keeps it portable"
        );
    }
}

/// What `open_for_create` would refuse for the file's being there or not,
/// said before any password is asked.
/// A new container's folder exists: said before anything is asked.
fn check_new_container_folder(a: &CreateArgs) -> Result<(), Failure> {
    let folder = match a.volume.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if a.size.is_none() || a.hidden_size.is_some() || folder.is_dir() {
        return Ok(());
    }
    Err(Failure {
        code: exit::NOT_FOUND,
        message: format!(
            "{}: no such folder, to make {} in",
            folder.display(),
            a.volume.display()
        ),
    })
}

fn check_create_target(a: &CreateArgs) -> Result<(), Failure> {
    use tcd_proto::contract::options::NEW_VOLUME_HEADER_BYTES;
    // The daemon refuses it too; said here before a password is asked.
    if a.hash == crate::cli::Hash::Sha1 {
        return Err(Failure::invalid(
            "SHA-1 is the hash of TrueCrypt before 5.0 (deprecated since TrueCrypt 5): tcd opens \
             such volumes but never makes new headers with it"
                .into(),
        ));
    }
    // `resolve` has put --truecrypt and --volume-type into the format.
    if a.format == Some(crate::cli::Format::Truecrypt) {
        refuse_for_truecrypt(a)?;
    }
    // A file made into a volume at its own size.
    let existing = std::fs::metadata(&a.volume)
        .ok()
        .filter(|m| m.is_file() && a.size.is_none() && a.hidden_size.is_none())
        .map(|m| m.len());
    refuse_too_small(a, existing)?;
    check_new_container_folder(a)?;
    if let Some(sector) = a.sector_size
        && let Some(size) = a
            .size
            .or(a.hidden_size)
            .filter(|s| s % u64::from(sector) != 0)
    {
        return Err(Failure {
            code: exit::USAGE,
            message: format!(
                "{size} bytes is no whole number of {sector}-byte sectors (--sector-size)"
            ),
        });
    }
    note_sectors_in_a_file(a);
    let data = a.hidden_size.or_else(|| {
        a.size
            .or(existing)
            .map(|s| s.saturating_sub(NEW_VOLUME_HEADER_BYTES))
    });
    if let (Some(data), Some(fs)) = (data, options::new_filesystem(a))
        && let Some(why) = fs.refuses(data)
    {
        return Err(Failure::invalid(format!("{}: {why}", a.volume.display())));
    }
    let there = std::fs::symlink_metadata(&a.volume).is_ok();
    let new_file = a.size.is_some() && a.hidden_size.is_none();
    // A new container file needs its whole size free, beside any file it
    // replaces until it takes that one's place.
    let folder = std::fs::canonicalize(&a.volume)
        .unwrap_or_else(|_| a.volume.clone())
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
            .to_path_buf()
        });
    let regular_or_new = std::fs::metadata(&a.volume).map_or(true, |m| m.is_file());
    if let (true, true, Some(size), Some(Ok(dir))) =
        (new_file, regular_or_new, a.size, folder.map(File::open))
    {
        crate::host::check_room(&dir, &a.volume, size, a.quick).map_err(|mut f| {
            // The file there keeps its place without --size: the volume
            // is made in it, as VeraCrypt makes one in an existing file.
            if there {
                f.message.push_str(&format!(
                    " (a new file is made beside {} until it replaces it; without --size the \
                     volume is made in that file, at its size)",
                    a.volume.display()
                ));
            }
            f
        })?;
    }
    match (new_file, there) {
        (false, false) => open_for_create(a).map(|_| ()),
        _ => Ok(()),
    }
}

/// A size below both header groups and 32 KiB of data, as TrueCrypt asks.
/// (Past the headers, the filesystem's own least is said by
/// `check_create_target`: each message names the least it enforces.)
/// An existing file made into a volume at its own size (`existing`) is
/// judged the same way, by its name.
fn refuse_too_small(a: &CreateArgs, existing: Option<u64>) -> Result<(), Failure> {
    use tcd_proto::contract::options::NEW_VOLUME_HEADER_BYTES;
    let headers = NEW_VOLUME_HEADER_BYTES + 32 * 1024;
    let least = format!(
        "a volume takes at least {} KiB (its headers and 32 KiB of data)",
        headers >> 10
    );
    let message = match (a.size, existing) {
        (Some(size), _) if size < headers && a.hidden_size.is_none() => {
            format!("--size {}: {least}", crate::output::human_size(size))
        }
        (None, Some(size)) if size < headers => format!(
            "{}: the file holds {size} bytes, and {least}: give --size to make it larger",
            a.volume.display()
        ),
        _ => return Ok(()),
    };
    Err(Failure {
        code: exit::INVALID_ARGUMENT,
        message,
    })
}

/// A container file `create` made: at the volume's path, or beside an
/// existing file it replaces, which it takes the place of only once the
/// daemon has made the volume.
struct MadeFile {
    path: PathBuf,
    replaces: Option<PathBuf>,
}

impl MadeFile {
    /// What to say once `path` is removed (or could not be).
    fn undone_saying(&self) -> impl FnOnce(std::io::Result<()>) -> String + Send + 'static {
        let path = self.path.clone();
        let replaces = self.replaces.clone();
        move |removed| match (removed, replaces) {
            (Ok(()), None) => format!("removed the unfinished {}", path.display()),
            (Ok(()), Some(old)) => format!("{} is left as it was", old.display()),
            (Err(e), _) => format!("the unfinished {} is left: {e}", path.display()),
        }
    }

    /// The new container takes the place of the file it replaces.
    fn put_in_place(&self) -> Result<(), Failure> {
        let Some(old) = &self.replaces else {
            return Ok(());
        };
        std::fs::rename(&self.path, old).map_err(|e| {
            Failure::invalid(format!(
                "the new volume is {}, and could not take the place of {}: {e}",
                self.path.display(),
                old.display()
            ))
        })
    }
}

/// A new container file of `bytes` beside the regular file `old` (a
/// symbolic link's target), with its permissions, and its owner where
/// tcctl may give it.
fn beside(old: &Path, bytes: u64) -> std::io::Result<(File, MadeFile)> {
    use std::os::unix::fs::MetadataExt;
    let old = std::fs::canonicalize(old)?;
    let meta = std::fs::metadata(&old)?;
    let name = old.file_name().map(|n| n.to_string_lossy().into_owned());
    let path = old.with_file_name(tcd_proto::contract::names::replacement_name(
        &name.unwrap_or_default(),
        std::process::id(),
    ));
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    let made = MadeFile {
        path,
        replaces: Some(old),
    };
    let sized = f
        .set_permissions(meta.permissions())
        .and_then(|()| f.set_len(bytes));
    if let Err(e) = sized {
        let _ = std::fs::remove_file(&made.path);
        return Err(e);
    }
    // Only root may give a file away; anyone else keeps it as their own.
    let _ = std::os::unix::fs::fchown(&f, Some(meta.uid()), Some(meta.gid()));
    Ok((f, made))
}

/// The host of a new volume: a new file of `size` (beside one it replaces
/// with `force`, see [`beside`]), or (without a size, or for a hidden
/// volume) what is there; and the file made, if one was.
/// A container a loop device is attached to is busy, as the daemon finds
/// it for a restore or an expansion: a new file put in its place would
/// leave the loop device on the old one, deleted. Said before anything is
/// asked.
fn refuse_loop_backing(volume: &Path) -> Result<(), Failure> {
    use std::os::unix::fs::MetadataExt;
    let Some(m) = std::fs::metadata(volume).ok().filter(|m| m.is_file()) else {
        return Ok(());
    };
    match tcd_proto::devices::loop_device_over(m.dev(), m.ino()) {
        Some(dev) => Err(Failure {
            code: exit::BUSY,
            message: format!(
                "{} is busy (the backing file of {}): detach it first (losetup -d {})",
                volume.display(),
                dev.display(),
                dev.display()
            ),
        }),
        None => Ok(()),
    }
}

fn open_for_create(a: &CreateArgs) -> Result<(File, Option<MadeFile>), Failure> {
    let volume = &a.volume;
    let shown = volume.display();
    let regular = std::fs::metadata(volume).is_ok_and(|m| m.is_file());
    // As VeraCrypt says it: a device's volume fills the device.
    if a.size.is_some() && a.hidden_size.is_none() && crate::host::is_device(volume) {
        return Err(Failure {
            code: exit::USAGE,
            message: format!(
                "{shown} is a device: a volume on a device fills it, so --size goes with \
                 container files only (leave it out)"
            ),
        });
    }
    let opened = match (a.size, a.hidden_size) {
        (Some(bytes), None) if a.replace && regular => {
            beside(volume, bytes).map(|(f, made)| (f, Some(made)))
        }
        // Readable by its owner only: a container anyone may copy is
        // open to a password search anywhere.
        (Some(bytes), None) => OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(!a.replace)
            .mode(0o600)
            .open(volume)
            .and_then(|f| {
                let made = (!a.replace).then(|| MadeFile {
                    path: volume.clone(),
                    replaces: None,
                });
                match f.set_len(bytes) {
                    Ok(()) => Ok((f, made)),
                    Err(e) => {
                        if let Some(m) = made {
                            let _ = std::fs::remove_file(&m.path);
                        }
                        Err(e)
                    }
                }
            }),
        _ => OpenOptions::new()
            .read(true)
            .write(true)
            .open(volume)
            .map(|f| (f, None)),
    };
    opened.map_err(|e| match e.kind() {
        // Made by someone else since it was asked.
        std::io::ErrorKind::AlreadyExists => Failure {
            code: exit::USAGE,
            message: format!("{shown} appeared while tcctl asked: nothing was written to it"),
        },
        std::io::ErrorKind::NotFound if a.hidden_size.is_none() => Failure {
            code: exit::USAGE,
            message: format!(
                "{shown} does not exist: give --size to make a container file \
                 of that size, or name an existing file or device"
            ),
        },
        // Said as every command says what it cannot open (a read-only
        // file system: exit 6).
        _ => host::open_failure(&a.volume, &e),
    })
}
