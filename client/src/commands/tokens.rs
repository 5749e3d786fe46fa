//! `tcctl token`: TrueCrypt's Security Token Keyfiles window on the
//! command line.

use crate::bus::Failure;
use crate::cli::TokenAction;
use crate::output;
use crate::token::{self, TokenKeyfile};
use cryptoki::object::{Attribute, ObjectClass};
use std::io::Read;
use std::path::Path;

pub fn run(action: TokenAction, interactive: bool) -> Result<(), Failure> {
    match action {
        TokenAction::List { json } => list(json),
        TokenAction::Import { file, slot, name } => import(&file, slot, name),
        TokenAction::Delete {
            keyfile,
            batch_mode,
        } => delete(&keyfile, batch_mode, interactive),
    }
}

fn list(json: bool) -> Result<(), Failure> {
    let p = token::open()?;
    let slots = token::slots(&p)?;
    let mut found = Vec::new();
    for &slot in &slots {
        let s = token::session(&p, slot, false)?;
        for (name, _) in token::keyfiles(&s)? {
            found.push(TokenKeyfile {
                slot: slot.id(),
                name,
            });
        }
    }
    output::token_keyfiles(&found, !slots.is_empty(), json);
    Ok(())
}

fn import(file: &Path, slot: Option<u64>, name: Option<String>) -> Result<(), Failure> {
    let name = name
        .or_else(|| file.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    // Room for all of it at once: a growing buffer would leave copies.
    let mut data = zeroize::Zeroizing::new(Vec::with_capacity(tcd_proto::keyfiles::MAX_READ));
    std::fs::File::open(file)
        .and_then(|f| {
            f.take(tcd_proto::keyfiles::MAX_READ as u64)
                .read_to_end(&mut data)
        })
        .map_err(|e| Failure::file(file, &e))?;
    let p = token::open()?;
    let slot = match slot {
        Some(id) => token::slot(&p, id)?,
        None => token::slots(&p)?
            .into_iter()
            .next()
            .ok_or_else(|| Failure::not_found("no token".into()))?,
    };
    let s = token::session(&p, slot, true)?;
    let k = TokenKeyfile {
        slot: slot.id(),
        name: name.clone(),
    };
    if token::keyfiles(&s)?.iter().any(|(n, _)| *n == name) {
        return Err(Failure {
            code: crate::bus::exit::INVALID_ARGUMENT,
            message: format!("{k} exists: a keyfile is never replaced"),
        });
    }
    let mut template = [
        Attribute::Class(ObjectClass::DATA),
        Attribute::Token(true),
        Attribute::Private(true),
        Attribute::Label(name.into_bytes()),
        Attribute::Value(data.to_vec()),
    ];
    let made = s.create_object(&template);
    // The template's copy of the keyfile is wiped like the original.
    if let Attribute::Value(v) = &mut template[4] {
        zeroize::Zeroize::zeroize(v);
    }
    made.map_err(|e| Failure::invalid(format!("{k}: {e}")))?;
    println!("{k} imported");
    Ok(())
}

/// Asked as VeraCrypt asks before it deletes a token's keyfiles: what it
/// opened opens no more without it, and nothing brings it back. Asked
/// once the keyfile is found (the PIN, if typed, comes first).
fn delete(keyfile: &str, batch_mode: bool, interactive: bool) -> Result<(), Failure> {
    let k = TokenKeyfile::parse(keyfile).unwrap_or_else(|| {
        Err(Failure {
            code: crate::bus::exit::USAGE,
            message: format!("{keyfile}: a token keyfile is named token://slot/N/file/NAME"),
        })
    })?;
    let what = format!("deleting {k}");
    // A token not there is said first, as on a terminal; with nobody to
    // ask, refused before its PIN is asked.
    let p = token::open()?;
    let slot = token::slot(&p, k.slot)?;
    if !batch_mode {
        crate::input::can_confirm(interactive, &what, "-q (--batch-mode)")?;
    }
    let s = token::session(&p, slot, true)?;
    let (_, handle) = token::keyfiles(&s)?
        .into_iter()
        .find(|(n, _)| *n == k.name)
        .ok_or_else(|| Failure::not_found(format!("{k}: no such keyfile on the token")))?;
    if !batch_mode {
        crate::input::confirm(
            interactive,
            &what,
            &format!(
                "WARNING: {k} is deleted for good: a volume it opens opens no more without it. \
                 Are you sure? (Type 'YES' in capital letters): "
            ),
            "-q (--batch-mode)",
        )?;
    }
    s.destroy_object(handle)
        .map_err(|e| Failure::invalid(format!("{k}: {e}")))?;
    println!("{k} deleted");
    Ok(())
}
