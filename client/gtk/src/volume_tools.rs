//! Volume Tools, on the volume chosen in the list (or named in the main
//! window, or chosen here): change its password, keyfiles, PIM and hash,
//! and convert a TrueCrypt volume to the VeraCrypt format on the way (as
//! VeraCrypt's Change Password does in TrueCrypt mode);
//! back up its headers to a new file; restore them from a backup file or
//! the embedded backup; show its header as `tcctl info` does. Every call
//! is the one `tcctl` makes (`tcd_client::tools`); the passwords typed
//! are emptied from their entries when the call ends, and the bytes sent
//! are wiped.

use crate::daemon::{self, Cancel};
use crate::i18n::{mark, tr, trf};
use crate::keyfile_list::KeyfileList;
use crate::main_window::{Main, selected};
use crate::ui::{self, Form, password_entry, secret, spin};
use gtk::prelude::*;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use tcd_client::bus::{Client, Failure};
use tcd_client::forms::hashes;
use tcd_client::tools::{HeaderForm, NewSecrets};
use tcd_proto::contract::options::VolumeFormat;
use zeroize::Zeroizing;

/// The labels of `tcctl info`'s lines (`tcd_client::output::header_lines`),
/// for the template: Header Information shows them translated.
const HEADER_LABELS: [&str; 18] = [
    mark("Volume"),
    mark("Format"),
    mark("Minimum version"),
    mark("System encryption"),
    mark("Header version"),
    mark("Hidden volume"),
    mark("Encryption"),
    mark("Key size"),
    mark("Mode"),
    mark("PKCS-5 PRF"),
    mark("Iterations"),
    mark("PIM"),
    mark("Size (bytes)"),
    mark("Sector size"),
    mark("Data offset"),
    mark("Opened by backup"),
    mark("Weak keys"),
    mark("Backends"),
];

/// A label of Header Information in the user's language (one not marked
/// above as it is).
fn header_label(label: &str) -> String {
    match HEADER_LABELS.contains(&label) {
        true => tr(label),
        false => label.to_owned(),
    }
}

struct Tools {
    window: gtk::Window,
    volume: gtk::Entry,
    password: gtk::PasswordEntry,
    keyfiles: KeyfileList,
    pim: gtk::SpinButton,
    truecrypt: gtk::CheckButton,
    new_password: gtk::PasswordEntry,
    confirm: gtk::PasswordEntry,
    new_keyfiles: KeyfileList,
    new_pim: gtk::SpinButton,
    new_hash: gtk::DropDown,
    convert: gtk::CheckButton,
    backup_file: gtk::Entry,
    restore_from: gtk::DropDown,
    message: gtk::Label,
    running: RefCell<Option<Cancel>>,
}

pub fn show(main: &Rc<Main>) {
    let window = ui::dialog(&main.window, &tr("Volume Tools"));
    window.set_default_width(860);
    let unchanged = std::iter::once(tr("Unchanged")).chain(hashes());
    let t = Rc::new(Tools {
        keyfiles: KeyfileList::new(&window, "Keyfiles"),
        new_keyfiles: KeyfileList::new(&window, "New keyfiles"),
        window,
        volume: ui::entry("Volume"),
        password: password_entry("Current password"),
        pim: spin("PIM", 0.0, 2_147_468.0),
        truecrypt: ui::check("_TrueCrypt mode"),
        new_password: password_entry("New password"),
        confirm: password_entry("Confirm new password"),
        new_pim: spin("New PIM", 0.0, 2_147_468.0),
        new_hash: ui::drop_down("New hash", &unchanged.collect::<Vec<_>>()),
        convert: ui::check("Convert to the VeraCr_ypt format"),
        backup_file: ui::entry("Backup file"),
        restore_from: ui::drop_down(
            "Restore from",
            &[tr("The backup file"), tr("The backup header in the volume")],
        ),
        message: ui::message_label("Volume Tools message"),
        running: RefCell::new(None),
    });
    let volume = selected(main).map_or_else(|| main.volume.text().to_string(), |(host, _)| host);
    t.volume.set_text(&volume);
    let columns = gtk::Box::new(gtk::Orientation::Horizontal, 24);
    columns.append(&opening(&t, main));
    columns.append(&changes(&t, main));
    let close = ui::button("_Close");
    let w = t.window.clone();
    close.connect_clicked(move |_| w.close());
    let body = ui::body(12);
    body.append(&columns);
    body.append(&t.message);
    body.append(&ui::button_row(&[&close]));
    t.window.set_child(Some(&body));
    let tt = t.clone();
    t.window.connect_close_request(move |_| {
        if let Some(c) = tt.running.take() {
            c.cancel();
        }
        clear(&tt);
        gtk::glib::Propagation::Proceed
    });
    t.password.grab_focus();
    t.window.present();
}

/// The volume and what opens its header; Header Information.
fn opening(t: &Rc<Tools>, main: &Rc<Main>) -> gtk::Box {
    let mut f = Form::new();
    let chooser = ui::path_row(
        &t.window,
        &t.volume,
        "Select _File…",
        gtk::FileChooserAction::Open,
    );
    f.row("_Volume:", &chooser);
    f.row("Current _password:", &t.password);
    f.row("_Keyfiles:", &t.keyfiles.widget);
    f.row("P_IM (0: default):", &t.pim);
    f.wide(&t.truecrypt);
    let info = ui::button("Header _Information");
    let (tt, m) = (t.clone(), main.clone());
    info.connect_clicked(move |_| header_info(&tt, &m));
    f.wide(&info);
    ui::column("Volume", &[f.grid.upcast_ref()])
}

/// Change Password; Back Up Header and Restore Header.
fn changes(t: &Rc<Tools>, main: &Rc<Main>) -> gtk::Box {
    let mut f = Form::new();
    f.row("_New password:", &t.new_password);
    f.row("C_onfirm new password:", &t.confirm);
    f.row("New k_eyfiles:", &t.new_keyfiles.widget);
    f.row("New PI_M (0: default):", &t.new_pim);
    f.row("New _hash:", &t.new_hash);
    f.wide(&t.convert);
    let change = ui::button("_Change Password");
    let (tt, m) = (t.clone(), main.clone());
    change.connect_clicked(move |_| change_password(&tt, &m));
    f.wide(&change);
    let mut b = Form::new();
    let file = ui::path_row(
        &t.window,
        &t.backup_file,
        "C_hoose…",
        gtk::FileChooserAction::Save,
    );
    b.row("Backup _file:", &file);
    let backup = ui::button("_Back Up Header");
    let (tt, m) = (t.clone(), main.clone());
    backup.connect_clicked(move |_| back_up(&tt, &m));
    b.wide(&backup);
    b.row("_Restore from:", &t.restore_from);
    let restore = ui::button("Re_store Header");
    let (tt, m) = (t.clone(), main.clone());
    restore.connect_clicked(move |_| restore_header(&tt, &m));
    b.wide(&restore);
    let column = ui::column("Change Password", &[f.grid.upcast_ref()]);
    column.append(&ui::column("Header Backup", &[b.grid.upcast_ref()]));
    column
}

/// Every password entry emptied.
fn clear(t: &Tools) {
    for p in [&t.password, &t.new_password, &t.confirm] {
        p.set_text("");
    }
}

fn form(t: &Tools) -> HeaderForm {
    HeaderForm {
        volume: PathBuf::from(t.volume.text().trim()),
        keyfiles: t.keyfiles.paths(),
        pim: t.pim.value_as_int().try_into().unwrap_or(0),
        truecrypt: t.truecrypt.is_active(),
    }
}

fn say(t: &Tools, text: &str, error: bool) {
    ui::tell(&t.message, text, error);
}

/// Runs `work` with the header's form and the current password; the
/// password entries are emptied when it ends, and `done` gets its result
/// (an error is shown as the daemon words it).
fn call<T: Send + 'static>(
    t: &Rc<Tools>,
    main: &Main,
    work: impl FnOnce(&Client, &HeaderForm, &[u8]) -> Result<T, Failure> + Send + 'static,
    done: impl FnOnce(&Rc<Tools>, T) + 'static,
) {
    let form = form(t);
    if form.volume.as_os_str().is_empty() {
        return say(t, &tr("Choose a volume first."), true);
    }
    if t.running.borrow().is_some() {
        return;
    }
    let password = secret(&t.password);
    say(t, &tr("Working…"), false);
    let tt = t.clone();
    let cancel = daemon::run(
        &main.target,
        move |c| work(c, &form, &password),
        move |r| {
            tt.running.take();
            clear(&tt);
            match r {
                Ok(v) => done(&tt, v),
                Err(f) => say(&tt, &f.message, true),
            }
        },
    );
    t.running.replace(Some(cancel));
}

fn change_password(t: &Rc<Tools>, main: &Main) {
    if t.new_password.text() != t.confirm.text() {
        return say(t, &tr("The new passwords do not match."), true);
    }
    let new: Zeroizing<Vec<u8>> = secret(&t.new_password);
    let hash = (t.new_hash.selected() > 0).then(|| ui::chosen(&t.new_hash));
    let secrets = NewSecrets {
        keyfiles: t.new_keyfiles.paths(),
        pim: Some(t.new_pim.value_as_int().try_into().unwrap_or(0)),
        hash,
        to: t.convert.is_active().then_some(VolumeFormat::VeraCrypt),
    };
    let converted = secrets.to.is_some();
    call(
        t,
        main,
        move |c, f, old| f.change_password(c, old, &new, &secrets),
        move |t, ()| {
            let volume = t.volume.text();
            let said = if converted {
                trf(
                    "{0}: password changed, converted to the VeraCrypt format",
                    &[&volume.trim()],
                )
            } else {
                trf("{0}: password changed", &[&volume.trim()])
            };
            say(t, &said, false);
        },
    );
}

fn back_up(t: &Rc<Tools>, main: &Main) {
    let to = PathBuf::from(t.backup_file.text().trim());
    if to.as_os_str().is_empty() {
        return say(t, &tr("Name the backup file first."), true);
    }
    let shown = to.display().to_string();
    call(
        t,
        main,
        move |c, f, password| f.backup(c, password, &to),
        move |t, ()| {
            let volume = t.volume.text();
            let said = trf("Headers of {0} saved to {1}", &[&volume.trim(), &shown]);
            say(t, &said, false);
        },
    );
}

fn restore_header(t: &Rc<Tools>, main: &Main) {
    let from = (t.restore_from.selected() == 0).then(|| PathBuf::from(t.backup_file.text().trim()));
    if from.as_ref().is_some_and(|f| f.as_os_str().is_empty()) {
        return say(t, &tr("Name the backup file first."), true);
    }
    let source = from.as_ref().map(|f| f.display().to_string());
    call(
        t,
        main,
        move |c, f, password| f.restore(c, password, from.as_deref()),
        move |t, used| {
            let volume = t.volume.text();
            let said = match source {
                Some(file) => trf(
                    "{0}: header restored from {1} (the {2})",
                    &[&volume.trim(), &file, &used],
                ),
                None => trf(
                    "{0}: header restored from its {1}",
                    &[&volume.trim(), &used],
                ),
            };
            say(t, &said, false);
        },
    );
}

fn header_info(t: &Rc<Tools>, main: &Main) {
    call(
        t,
        main,
        |c, f, password| {
            let info = f.info(c, password)?;
            let path = tcd_client::input::absolute(&f.volume);
            Ok(tcd_client::output::header_lines(&info, &path))
        },
        |t, lines| {
            say(t, "", false);
            let d = ui::dialog(&t.window, &tr("Header Information"));
            let body = ui::body(4);
            for (label, value) in lines {
                let l = gtk::Label::new(Some(&format!("{}: {value}", header_label(label))));
                l.set_xalign(0.0);
                l.set_selectable(true);
                body.append(&l);
            }
            let close = ui::button("_Close");
            let dd = d.clone();
            close.connect_clicked(move |_| dd.close());
            body.append(&ui::button_row(&[&close]));
            d.set_child(Some(&body));
            d.present();
        },
    );
}

#[cfg(test)]
mod tests {
    use super::HEADER_LABELS;
    use tcd_proto::contract::volume::HeaderInfo;

    /// Every label Header Information shows is in the template.
    #[test]
    fn every_header_label_is_marked() {
        let lines = tcd_client::output::header_lines(&HeaderInfo::default(), "/v");
        assert!(!lines.is_empty());
        for (label, _) in lines {
            assert!(HEADER_LABELS.contains(&label), "{label} is not marked");
        }
    }
}
