//! The desktop application's translation template,
//! `client/gtk/po/tcd-gtk.pot`, holds every string the sources translate:
//! `client/gtk/po/update-pot` makes it again into a temporary file, and
//! the two must list the same msgids. A string added to the application
//! without the template made again fails here, and so does text handed
//! to a widget without passing through `tr`. (`gui_app` shows a catalog
//! made from the template in use.)
//!
//! Needs python3 and gettext (msgfmt).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use tcd_tests::system::PYTHON;
use tcd_tests::{repo_dir, require_tool};

/// The msgids (and plural msgids) of a PO file, as written: escapes kept.
fn msgids(pot: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(pot).unwrap_or_else(|e| panic!("{}: {e}", pot.display()));
    let mut ids = BTreeSet::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let start = line
            .strip_prefix("msgid ")
            .or_else(|| line.strip_prefix("msgid_plural "));
        if let Some(quoted) = start {
            ids.extend(current.take());
            current = Some(unquote(quoted));
        } else if line.starts_with('"') {
            if let Some(c) = current.as_mut() {
                c.push_str(&unquote(line));
            }
        } else {
            ids.extend(current.take());
        }
    }
    ids.extend(current);
    ids.remove("");
    ids
}

fn unquote(s: &str) -> String {
    s.trim()
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or_else(|| panic!("not a quoted string: {s}"))
        .to_owned()
}

/// The template as `update-pot` makes it now, in a temporary folder.
fn made_again(dir: &Path) -> std::path::PathBuf {
    let out = dir.join("tcd-gtk.pot");
    let status = Command::new(PYTHON)
        .arg(repo_dir().join("client/gtk/po/update-pot"))
        .arg(&out)
        .status()
        .expect("run update-pot");
    assert!(status.success(), "update-pot: {status}");
    out
}

#[test]
fn the_template_holds_every_string_the_application_translates() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let now = msgids(&made_again(dir.path()));
    let committed = msgids(&repo_dir().join("client/gtk/po/tcd-gtk.pot"));
    let missing: Vec<_> = now.difference(&committed).collect();
    let stale: Vec<_> = committed.difference(&now).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "client/gtk/po/tcd-gtk.pot is out of date: run client/gtk/po/update-pot\n\
         not in it: {missing:?}\nno longer in the sources: {stale:?}"
    );
}

/// What the extractor takes: the builders' labels, a table's marked
/// headings, a format string, both forms of a plural, and a string
/// continued on the next line as Rust reads it.
#[test]
fn the_template_holds_the_windows_strings_as_rust_reads_them() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let ids = msgids(&made_again(dir.path()));
    for id in [
        "_Mount…",
        "Volume Creation Wizard",
        "Mount {0}",
        "Encryption (MB/s)",
        "Add Files…",
        "{0} cached password wiped",
        "{0} cached passwords wiped",
        "Only an administrator may change the backend policy (polkit refuses \
         org.tcd.set-policy to your account).",
        "PKCS-5 PRF",
    ] {
        assert!(ids.contains(id), "the template has no {id:?}");
    }
    // polkit's action ids are passed to a `check` that is not ui::check.
    assert!(!ids.contains("org.tcd.set-policy"), "{ids:?}");
    assert!(ids.len() > 250, "{} strings only", ids.len());
}

/// No text with words goes to a widget's label, title, tooltip or
/// accessible name, or to a message, without passing through `tr` (or
/// `trf`, `trn`, a `ui` builder): `update-pot --check` lists any.
#[test]
fn no_text_is_shown_untranslated() {
    let out = Command::new(PYTHON)
        .arg(repo_dir().join("client/gtk/po/update-pot"))
        .arg("--check")
        .output()
        .expect("run update-pot --check");
    assert!(
        out.status.success() && out.stdout.is_empty(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The template is a PO file gettext reads.
#[test]
fn gettext_reads_the_template() {
    let msgfmt = require_tool("msgfmt", "apt-get install gettext");
    let dir = tempfile::tempdir().expect("temporary folder");
    let out = Command::new(msgfmt)
        .arg("--output-file")
        .arg(dir.path().join("t.mo"))
        .arg(repo_dir().join("client/gtk/po/tcd-gtk.pot"))
        .output()
        .expect("msgfmt");
    assert!(
        out.status.success(),
        "msgfmt: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
