//! The Mount dialog: password (hidden, with a show toggle), keyfiles, PIM,
//! TrueCrypt mode, hash and encryption (Auto by default), read-only, mount
//! point, filesystem or block device only, protect a hidden volume, cache
//! the password, dismount when idle. Cancel during the header search ends
//! the search. The daemon's error is shown as it names it.

use crate::daemon::{self, Cancel};
use crate::i18n::tr;
use crate::main_window::{self as window, Main};
use crate::ui::{self, Form};
use gtk::prelude::*;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use tcd_client::forms::{MountForm, encryptions, hashes};
use zeroize::Zeroizing;

struct Dialog {
    window: gtk::Window,
    password: gtk::PasswordEntry,
    keyfiles: gtk::Entry,
    pim: gtk::SpinButton,
    truecrypt: gtk::CheckButton,
    hash: gtk::DropDown,
    encryption: gtk::DropDown,
    readonly: gtk::CheckButton,
    mount_point: gtk::Entry,
    filesystem: gtk::DropDown,
    protect_hidden: gtk::CheckButton,
    hidden_password: gtk::PasswordEntry,
    cache: gtk::CheckButton,
    idle: gtk::SpinButton,
    mount: gtk::Button,
    spinner: gtk::Spinner,
    message: gtk::Label,
    /// The call in progress.
    running: RefCell<Option<Cancel>>,
}

/// A password entry with the show toggle.
pub fn password_entry(name: &str) -> gtk::PasswordEntry {
    let p = gtk::PasswordEntry::new();
    p.set_show_peek_icon(true);
    p.set_hexpand(true);
    ui::named(&p, &tr(name));
    p
}

/// `Auto`, then `items`.
fn auto_and(items: Vec<String>) -> Vec<String> {
    std::iter::once(tr("Auto")).chain(items).collect()
}

fn spin(name: &str, most: f64) -> gtk::SpinButton {
    let s = gtk::SpinButton::with_range(0.0, most, 1.0);
    ui::named(&s, &tr(name));
    s
}

/// Opens the dialog for the volume named in the main window.
pub fn show(main: &Rc<Main>) {
    let volume = main.volume.text().to_string();
    if volume.trim().is_empty() {
        return window::say(
            main,
            &tr("Choose a volume first: Select File or Select Device."),
        );
    }
    let d = Rc::new(Dialog {
        window: ui::dialog(&main.window, &format!("{} {volume}", tr("Mount"))),
        password: password_entry("Password"),
        keyfiles: ui::entry("Keyfiles"),
        pim: spin("PIM", 2_147_468.0),
        truecrypt: ui::check("_TrueCrypt mode"),
        hash: ui::drop_down("Hash", &auto_and(hashes())),
        encryption: ui::drop_down("Encryption", &auto_and(encryptions())),
        readonly: ui::check("_Read-only"),
        mount_point: ui::entry("Mount point"),
        filesystem: ui::drop_down(
            "Filesystem",
            &[tr("Mount the filesystem"), tr("Block device only")],
        ),
        protect_hidden: ui::check("Protect a _hidden volume"),
        hidden_password: password_entry("Hidden volume password"),
        cache: ui::check("_Cache the password"),
        idle: spin("Dismount after idle minutes", 10_000.0),
        mount: ui::button("_Mount"),
        spinner: gtk::Spinner::new(),
        message: ui::message_label("Mount error"),
        running: RefCell::new(None),
    });
    d.window.set_child(Some(&content(&d)));
    wire(&d, main, volume);
    d.window.set_default_widget(Some(&d.mount));
    d.password.grab_focus();
    d.window.present();
}

fn content(d: &Rc<Dialog>) -> gtk::Box {
    let mut f = Form::new();
    f.row("_Password:", &d.password);
    let keyfiles = gtk::Box::new(gtk::Orientation::Horizontal, 6);
    let add = ui::button("_Add Keyfiles…");
    let dd = d.clone();
    add.connect_clicked(move |_| add_keyfiles(&dd));
    keyfiles.append(&d.keyfiles);
    keyfiles.append(&add);
    f.row("_Keyfiles (; between):", &keyfiles);
    f.row("P_IM (0: default):", &d.pim);
    f.wide(&d.truecrypt);
    f.row("_Hash:", &d.hash);
    f.row("_Encryption:", &d.encryption);
    f.wide(&d.readonly);
    f.row("Mount _point (empty: chosen):", &d.mount_point);
    f.row("_Filesystem:", &d.filesystem);
    f.wide(&d.protect_hidden);
    f.row("Hidden volume pass_word:", &d.hidden_password);
    d.hidden_password.set_sensitive(false);
    f.wide(&d.cache);
    f.row("Dismount after _idle minutes (0: never):", &d.idle);
    let buttons = gtk::Box::new(gtk::Orientation::Horizontal, 8);
    buttons.set_halign(gtk::Align::End);
    let cancel = ui::button("_Cancel");
    let dd = d.clone();
    cancel.connect_clicked(move |_| cancel_or_close(&dd));
    d.mount.add_css_class("suggested-action");
    buttons.append(&d.spinner);
    buttons.append(&cancel);
    buttons.append(&d.mount);
    let body = gtk::Box::new(gtk::Orientation::Vertical, 12);
    for side in [
        gtk::Widget::set_margin_start,
        gtk::Widget::set_margin_end,
        gtk::Widget::set_margin_top,
        gtk::Widget::set_margin_bottom,
    ] {
        side(body.upcast_ref(), 16);
    }
    body.append(&f.grid);
    body.append(&d.message);
    body.append(&buttons);
    body
}

fn wire(d: &Rc<Dialog>, main: &Rc<Main>, volume: String) {
    let hidden = d.hidden_password.clone();
    d.protect_hidden
        .connect_toggled(move |c| hidden.set_sensitive(c.is_active()));
    let (dd, m) = (d.clone(), main.clone());
    d.mount
        .connect_clicked(move |_| start(&dd, &m, PathBuf::from(volume.trim())));
    let dd = d.clone();
    d.password
        .connect_activate(move |_| dd.mount.emit_clicked());
    // Closing the window cancels a search in progress.
    let dd = d.clone();
    d.window.connect_close_request(move |_| {
        if let Some(c) = dd.running.take() {
            c.cancel();
        }
        clear(&dd);
        gtk::glib::Propagation::Proceed
    });
}

/// Every password entry emptied: what was typed lives no longer than the
/// call it was for.
fn clear(d: &Dialog) {
    d.password.set_text("");
    d.hidden_password.set_text("");
}

fn cancel_or_close(d: &Rc<Dialog>) {
    match d.running.take() {
        Some(c) => {
            c.cancel();
            busy(d, false);
            d.message
                .set_text(&tr("Cancelled: the search was stopped."));
        }
        None => d.window.close(),
    }
}

fn busy(d: &Dialog, on: bool) {
    d.mount.set_sensitive(!on);
    d.spinner.set_spinning(on);
    if on {
        d.message.remove_css_class("error");
        d.message.set_text(&tr("Searching for the volume header…"));
    } else {
        d.message.add_css_class("error");
    }
}

/// The text of a password entry as bytes that are wiped when dropped.
fn secret(p: &gtk::PasswordEntry) -> Zeroizing<Vec<u8>> {
    Zeroizing::new(p.text().as_bytes().to_vec())
}

fn form(d: &Dialog, volume: PathBuf) -> MountForm {
    let choice = |dd: &gtk::DropDown| (dd.selected() > 0).then(|| ui::chosen(dd));
    let text = d.mount_point.text();
    MountForm {
        volume,
        keyfiles: ui::paths(&d.keyfiles),
        pim: d.pim.value_as_int().try_into().unwrap_or(0),
        truecrypt: d.truecrypt.is_active(),
        hash: choice(&d.hash),
        encryption: choice(&d.encryption),
        readonly: d.readonly.is_active(),
        mount_point: (!text.trim().is_empty()).then(|| PathBuf::from(text.trim())),
        block_device_only: d.filesystem.selected() == 1,
        cache: d.cache.is_active(),
        dismount_idle_minutes: d.idle.value_as_int().try_into().unwrap_or(0),
    }
}

fn start(d: &Rc<Dialog>, main: &Rc<Main>, volume: PathBuf) {
    let form = form(d, volume);
    let password = secret(&d.password);
    let hidden = d
        .protect_hidden
        .is_active()
        .then(|| secret(&d.hidden_password));
    busy(d, true);
    let (dd, m) = (d.clone(), main.clone());
    let cancel = daemon::run(
        &main.target,
        move |c| form.mount(c, &password, hidden.as_deref().map(Vec::as_slice)),
        move |r| {
            // A cancelled call's late answer changes nothing.
            if dd.running.take().is_none() {
                return;
            }
            busy(&dd, false);
            clear(&dd);
            match r {
                Ok(_) => {
                    dd.window.close();
                    window::refresh(&m);
                }
                Err(f) => {
                    dd.message.set_text(&f.message);
                    dd.password.grab_focus();
                }
            }
        },
    );
    d.running.replace(Some(cancel));
}

fn add_keyfiles(d: &Rc<Dialog>) {
    let chooser = gtk::FileChooserNative::new(
        Some(&tr("Add keyfiles")),
        Some(&d.window),
        gtk::FileChooserAction::Open,
        Some(&tr("_Add")),
        Some(&tr("_Cancel")),
    );
    chooser.set_select_multiple(true);
    let dd = d.clone();
    chooser.connect_response(move |c, r| {
        if r != gtk::ResponseType::Accept {
            return;
        }
        let files = c.files();
        let mut paths: Vec<String> = vec![dd.keyfiles.text().to_string()];
        for f in files.iter::<gtk::gio::File>().flatten() {
            if let Some(p) = f.path() {
                paths.push(p.to_string_lossy().into_owned());
            }
        }
        paths.retain(|p| !p.trim().is_empty());
        dd.keyfiles.set_text(&paths.join(";"));
    });
    chooser.show();
}
