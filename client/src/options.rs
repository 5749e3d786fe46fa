//! The option dictionaries (`a{sv}`) of the daemon's methods, built from
//! the command line.

use crate::bus::{Failure, exit};
use crate::cli::{
    CreateArgs, FavoriteAddArgs, FavoriteMountOption, Format, Hash, MountArgs, MountOption, Search,
    Secrets, wire_name,
};
use crate::input::absolute;
use tcd_proto::contract::favorite::Favorite;
use tcd_proto::contract::options::{MountFilesystem, NewFilesystem, VolumeFormat};
use tcd_proto::contract::{
    CreateOptions, MountOptions, NewCredentials, SearchOptions, Secret, SecretList,
};

fn volume_format(f: Format) -> VolumeFormat {
    if wire_name(f) == VolumeFormat::TrueCrypt.key() {
        VolumeFormat::TrueCrypt
    } else {
        VolumeFormat::VeraCrypt
    }
}

fn nonzero(n: u32) -> Option<u32> {
    (n != 0).then_some(n)
}

/// Which candidates a header search tries (and the PIM).
pub fn search(s: &Search, pim: u32) -> SearchOptions {
    SearchOptions {
        hash: s.hash.map(wire_name),
        encryption: s.encryption.map(wire_name),
        format: s.format().map(volume_format),
        backend: s.backend.clone(),
        pim: nonzero(pim),
        detached_header: None,
        system_encryption: None,
        backup_header: None,
        // cryptsetup's --tcrypt-hidden.
        hidden_only: s.tcrypt_hidden.then_some(true),
        skip_data_check: None,
    }
}

/// As favorite keys (the same names as `Mount`'s options).
/// Whether the mount is read-only: --readonly, or `-m ro`; system
/// encryption unless --read-write.
pub fn read_only(a: &MountArgs) -> bool {
    asked_read_only(a) || (system(a) && !a.read_write)
}

/// Read-only by --readonly or `-m ro`, not by default.
pub fn asked_read_only(a: &MountArgs) -> bool {
    a.readonly
        || a.mount_options.contains(&MountOption::Ro)
        || a.mount_options.contains(&MountOption::Readonly)
}

/// System encryption: --system-encryption, or `-m system`.
pub fn system(a: &MountArgs) -> bool {
    a.system_encryption || a.mount_options.contains(&MountOption::System)
}

fn usage(message: String) -> Failure {
    Failure {
        code: exit::USAGE,
        message,
    }
}

/// Refuses, before any password is asked, what a TrueCrypt volume never
/// has: a PIM (as VeraCrypt refuses it in TrueCrypt mode), VeraCrypt's
/// later hashes and ciphers (the search would only fail as a wrong
/// password, or say none was tried).
pub fn refuse_for_truecrypt(secrets: &Secrets, search: &Search) -> Result<(), Failure> {
    use crate::cli::Hash;
    if search.format() != Some(Format::Truecrypt) {
        return Ok(());
    }
    if secrets.pim() > 0 {
        return Err(usage(
            "TrueCrypt volumes have no PIM (--pim goes with VeraCrypt volumes)".into(),
        ));
    }
    if let Some(h) = search.hash.filter(|h| {
        !matches!(
            h,
            Hash::Sha512 | Hash::Whirlpool | Hash::Ripemd160 | Hash::Sha1
        )
    }) {
        return Err(usage(format!(
            "TrueCrypt's hashes are sha512, whirlpool, ripemd160 and (before 5.0) sha1, not {} \
             (it goes with VeraCrypt volumes)",
            crate::cli::wire_name(h)
        )));
    }
    let cipher = search
        .encryption
        .map(crate::cli::wire_name)
        .unwrap_or_default();
    if cipher.contains("Camellia") || cipher.contains("Kuznyechik") {
        return Err(usage(format!(
            "TrueCrypt's ciphers are AES, Serpent and Twofish and their cascades, not {cipher} \
             (it goes with VeraCrypt volumes)"
        )));
    }
    Ok(())
}

/// Refuses, before any password is asked, what makes no sense, naming
/// the options as they were given.
pub fn refuse_unsupported(a: &MountArgs) -> Result<(), Failure> {
    let sys = if a.system_encryption {
        "--system-encryption"
    } else {
        "-m system"
    };
    if let Some(text) = &a.fs_options {
        if text.split(',').any(|o| o == "ro") {
            return Err(usage(
                "--fs-options ro: a read-only mount is --readonly (or -m ro)".into(),
            ));
        }
        tcd_proto::fs_options::FsOptions::parse(text).map_err(usage)?;
        if a.filesystem == crate::cli::MountFilesystem::None {
            return Err(usage(
                "--fs-options and --filesystem none cannot go together: no filesystem is \
                 mounted to take the options"
                    .into(),
            ));
        }
    }
    if a.filesystem == crate::cli::MountFilesystem::None && a.mount_point.is_some() {
        return Err(usage(
            "a mount point and --filesystem none cannot go together: nothing is mounted on it \
             (the volume is attached as a device only)"
                .into(),
        ));
    }
    let headerbak = backup_header_only(a);
    let refusal = if system(a) && headerbak {
        Some(format!(
            "{sys} and -m headerbak cannot go together: a system drive has no backup header"
        ))
    } else if system(a) && a.protect_hidden {
        Some(format!(
            "{sys} and --protect-hidden cannot go together: a system drive has no hidden volume"
        ))
    } else if headerbak && a.detached.header.is_some() {
        Some(
            "-m headerbak and --header cannot go together: a header file has no backup header"
                .into(),
        )
    } else if a.hidden.protect_hidden_pim.is_some_and(|p| p > 0)
        && a.search.format() == Some(Format::Truecrypt)
    {
        Some(
            "TrueCrypt volumes have no PIM (--protect-hidden-pim goes with VeraCrypt volumes)"
                .into(),
        )
    } else {
        None
    };
    refusal.map_or(Ok(()), |m| Err(usage(m)))
}

/// `-m headerbak`: the volume is opened by its backup header only.
pub fn backup_header_only(a: &MountArgs) -> bool {
    a.mount_options.contains(&MountOption::Headerbak)
}

/// `Mount`'s options, less the hidden volume's password.
pub fn mount(a: &MountArgs) -> MountOptions {
    let d = &a.auto_dismount;
    let headerbak = backup_header_only(a);
    MountOptions {
        // Unsaid, the daemon decides: read-write, but read-only for
        // system encryption and TrueCrypt before 5.0.
        readonly: if read_only(a) {
            Some(true)
        } else {
            a.read_write.then_some(false)
        },
        backup_header: headerbak.then_some(true),
        system_encryption: system(a).then_some(true),
        preserve_timestamps: Some(
            !a.no_preserve_timestamps
                && !a.mount_options.contains(&MountOption::Ts)
                && !a.mount_options.contains(&MountOption::Timestamp),
        ),
        slot: a.slot,
        fs_options: a.fs_options.clone(),
        filesystem: Some(if wire_name(a.filesystem) == "none" {
            MountFilesystem::None
        } else {
            MountFilesystem::Auto
        }),
        allow_non_empty: Some(a.allow_non_empty),
        discard: Some(a.discard),
        cache: Some(a.cache),
        use_cache: Some(a.cached),
        dismount_on_logout: Some(d.dismount_on_logout),
        dismount_before_sleep: Some(d.dismount_before_sleep),
        dismount_idle_seconds: Some(d.dismount_idle.unwrap_or(0)),
        force_dismount: Some(d.force_dismount),
        mount_point: a.mount_point.as_deref().map(absolute),
        ..Default::default()
    }
    .with_search(SearchOptions {
        system_encryption: system(a).then_some(true),
        backup_header: headerbak.then_some(true),
        ..search(&a.search, a.secrets.pim())
    })
}

/// The password that protects a hidden volume during a mount.
pub fn protect_hidden(o: &mut MountOptions, password: &[u8]) {
    o.protect_hidden_password = Some(Secret::new(password.to_vec()));
}

/// The filesystem of a new volume as the contract names it.
pub fn new_filesystem(a: &CreateArgs) -> Option<NewFilesystem> {
    let fs = wire_name(a.filesystem);
    NewFilesystem::ALL.into_iter().find(|f| f.key() == fs)
}

/// `Create`'s options for the new volume.
pub fn create(a: &CreateArgs) -> CreateOptions {
    CreateOptions {
        format: Some(volume_format(a.format.unwrap_or(Format::Veracrypt))),
        encryption: Some(wire_name(a.encryption)),
        hash: Some(wire_name(a.hash)),
        filesystem: new_filesystem(a),
        quick: Some(a.quick),
        sector_size: a.sector_size.and_then(nonzero),
        pim: nonzero(a.secrets.pim()),
        ..Default::default()
    }
}

/// `Create`'s options for a hidden volume: its size and the outer
/// volume's credentials.
pub fn create_hidden(
    o: &mut CreateOptions,
    size: u64,
    outer_password: &[u8],
    outer_pim: u32,
    outer_keyfiles: Vec<Vec<u8>>,
) {
    o.outer_password = Some(Secret::new(outer_password.to_vec()));
    o.hidden_size = Some(size);
    o.outer_pim = nonzero(outer_pim);
    if !outer_keyfiles.is_empty() {
        o.outer_keyfiles = Some(SecretList::new(outer_keyfiles));
    }
}

/// `ChangePassword`'s options for the new credentials.
pub fn new_credentials(
    pim: Option<u32>,
    hash: Option<Hash>,
    format: Option<Format>,
) -> NewCredentials {
    NewCredentials {
        pim,
        hash: hash.map(wire_name),
        format: format.map(volume_format),
    }
}

/// A favorite as `AddFavorite` takes it, kept under `host`.
pub fn favorite(a: &FavoriteAddArgs, host: &str) -> Favorite {
    let d = &a.auto_dismount;
    Favorite {
        name: a.name.clone(),
        host: host.to_owned(),
        mount_point: a.mount_point.as_deref().map(absolute),
        slot: a.slot,
        readonly: favorite_read_only(a),
        format: favorite_format(a).map(volume_format),
        system_encryption: favorite_system(a),
        backend: a.backend.clone(),
        filesystem: a.filesystem.map(wire_name),
        discard: a.discard,
        keyfiles: a.keyfiles.iter().map(|p| absolute(p)).collect(),
        pim: a.pim.unwrap_or(0),
        protect_hidden: a.protect_hidden,
        protect_hidden_pim: a.hidden.protect_hidden_pim,
        protect_hidden_keyfiles: a
            .hidden
            .protect_hidden_keyfiles
            .iter()
            .map(|p| absolute(p))
            .collect(),
        auto_mount: a.auto_mount,
        dismount_on_logout: d.dismount_on_logout,
        dismount_before_sleep: d.dismount_before_sleep,
        dismount_idle_seconds: d.dismount_idle.unwrap_or(0),
        force_dismount: d.force_dismount,
        password_file: a.password_file.as_deref().map(absolute),
        hash: a.hash.map(wire_name),
        encryption: a.encryption.map(wire_name),
    }
}

/// A favorite's system encryption: --system-encryption or `-m system`.
pub fn favorite_system(a: &FavoriteAddArgs) -> bool {
    a.system_encryption || a.mount_options.contains(&FavoriteMountOption::System)
}

/// A favorite's format: --format, or --truecrypt.
pub fn favorite_format(a: &FavoriteAddArgs) -> Option<Format> {
    if a.truecrypt {
        Some(Format::Truecrypt)
    } else {
        a.format
    }
}

/// Read-only: --readonly or `-m ro`; system encryption unless --read-write.
fn favorite_read_only(a: &FavoriteAddArgs) -> bool {
    a.readonly
        || a.mount_options
            .iter()
            .any(|o| matches!(o, FavoriteMountOption::Ro | FavoriteMountOption::Readonly))
        || (favorite_system(a) && !a.read_write)
}

/// A keyfile's bytes as read.
type Keyfile = zeroize::Zeroizing<Vec<u8>>;

/// `Mount`'s options for a favorite (the daemon adds its settings); with
/// `hidden`, the protected hidden volume's password and keyfiles.
pub fn favorite_mount(
    f: &Favorite,
    system: bool,
    hidden: Option<(&[u8], &[Keyfile])>,
) -> MountOptions {
    let mut o = MountOptions {
        favorite: Some(f.name.clone()),
        favorite_system: Some(system),
        pim: Some(f.pim),
        ..Default::default()
    };
    if let Some((password, keyfiles)) = hidden {
        protect_hidden(&mut o, password);
        // A favorite kept before the hidden volume had its own PIM: the
        // favorite's one is the hidden volume's too.
        let pim = f.protect_hidden_pim.unwrap_or(f.pim);
        o.protect_hidden_pim = (pim != 0).then_some(pim);
        if !keyfiles.is_empty() {
            let bytes = keyfiles.iter().map(|k| k.to_vec()).collect();
            o.protect_hidden_keyfiles = Some(SecretList::new(bytes));
        }
    }
    o
}
