//! The Mount dialog: password (hidden, with a show toggle), keyfiles (a
//! list), PIM, TrueCrypt mode, hash and encryption (Auto by default),
//! read-only, mount point, filesystem or block device only, protect a
//! hidden volume (by its password, PIM and keyfiles), cache the
//! password, dismount when idle, TrueCrypt 7's "Use backup header
//! embedded in volume if available" and "Mount partition using system
//! encryption without pre-boot authentication" (`tcctl -m headerbak` and
//! `-m system`); the defaults from the Preferences. While the daemon
//! searches for the header its progress is shown (the format and PRF
//! tried, the share done, the time left), and Cancel ends the search. The
//! daemon's error is shown as it names it.

use crate::daemon::{self, Cancel};
use crate::i18n::{tr, trf};
use crate::keyfile_list::KeyfileList;
use crate::main_window::{self as window, Main};
use crate::ui::{self, Form};
use gtk::prelude::*;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;
use tcd_client::forms::{MountForm, encryptions, hashes};
use tcd_client::search::Report;
use ui::{password_entry, secret, spin};

struct Dialog {
    window: gtk::Window,
    password: gtk::PasswordEntry,
    keyfiles: KeyfileList,
    pim: gtk::SpinButton,
    truecrypt: gtk::CheckButton,
    hash: gtk::DropDown,
    encryption: gtk::DropDown,
    readonly: gtk::CheckButton,
    mount_point: gtk::Entry,
    filesystem: gtk::DropDown,
    protect_hidden: gtk::CheckButton,
    hidden_password: gtk::PasswordEntry,
    hidden_pim: gtk::SpinButton,
    hidden_keyfiles: KeyfileList,
    cache: gtk::CheckButton,
    idle: gtk::SpinButton,
    backup_header: gtk::CheckButton,
    system: gtk::CheckButton,
    mount: gtk::Button,
    progress: gtk::ProgressBar,
    message: gtk::Label,
    /// The call in progress.
    running: RefCell<Option<Cancel>>,
}

/// `Auto`, then `items`.
fn auto_and(items: Vec<String>) -> Vec<String> {
    std::iter::once(tr("Auto")).chain(items).collect()
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
    let window = ui::dialog(&main.window, &trf("Mount {0}", &[&volume]));
    let d = Rc::new(Dialog {
        keyfiles: KeyfileList::new(&window, "Keyfiles"),
        hidden_keyfiles: KeyfileList::new(&window, "Hidden volume keyfiles"),
        window,
        password: password_entry("Password"),
        pim: spin("PIM", 0.0, 2_147_468.0),
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
        hidden_pim: spin("Hidden volume PIM", 0.0, 2_147_468.0),
        cache: ui::check("_Cache the password"),
        idle: spin("Dismount after idle minutes", 0.0, 10_000.0),
        backup_header: ui::check("Use backup header embedded in _volume if available"),
        system: ui::check(
            "Mount partition using _system encryption without pre-boot authentication",
        ),
        mount: ui::button("_Mount"),
        progress: gtk::ProgressBar::new(),
        message: ui::message_label("Mount error"),
        running: RefCell::new(None),
    });
    defaults(&d);
    d.window.set_child(Some(&content(&d)));
    wire(&d, main, volume);
    d.window.set_default_widget(Some(&d.mount));
    d.password.grab_focus();
    d.window.present();
}

fn content(d: &Rc<Dialog>) -> gtk::Box {
    let mut f = Form::new();
    f.row("_Password:", &d.password);
    f.row("_Keyfiles:", &d.keyfiles.widget);
    f.row("P_IM (0: default):", &d.pim);
    f.wide(&d.truecrypt);
    f.row("_Hash:", &d.hash);
    f.row("_Encryption:", &d.encryption);
    f.wide(&d.readonly);
    f.row("Mount _point (empty: chosen):", &d.mount_point);
    f.row("_Filesystem:", &d.filesystem);
    f.wide(&d.protect_hidden);
    f.row("Hidden volume pass_word:", &d.hidden_password);
    f.row("Hi_dden volume PIM (0: default):", &d.hidden_pim);
    f.row("Hidden vo_lume keyfiles:", &d.hidden_keyfiles.widget);
    protection_sensitive(d, false);
    f.wide(&d.cache);
    f.row("Dismount after _idle minutes (0: never):", &d.idle);
    f.wide(&d.backup_header);
    f.wide(&d.system);
    let cancel = ui::button("_Cancel");
    let dd = d.clone();
    cancel.connect_clicked(move |_| cancel_or_close(&dd));
    d.mount.add_css_class("suggested-action");
    let buttons = ui::button_row(&[&cancel, &d.mount]);
    d.progress.set_show_text(true);
    d.progress.set_visible(false);
    ui::named(&d.progress, &tr("Search progress"));
    let body = ui::body(12);
    body.append(&f.grid);
    body.append(&d.progress);
    body.append(&d.message);
    body.append(&buttons);
    body
}

fn wire(d: &Rc<Dialog>, main: &Rc<Main>, volume: String) {
    let dd = d.clone();
    d.protect_hidden
        .connect_toggled(move |c| protection_sensitive(&dd, c.is_active()));
    // A system partition mounts read-only unless the user unticks it, as
    // `tcctl -m system` does unless --read-write.
    let readonly = d.readonly.clone();
    d.system.connect_toggled(move |c| {
        if c.is_active() {
            readonly.set_active(true);
        }
    });
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

/// The hidden volume's password, PIM and keyfiles: taken only with
/// "Protect a hidden volume" ticked.
fn protection_sensitive(d: &Dialog, on: bool) {
    d.hidden_password.set_sensitive(on);
    d.hidden_pim.set_sensitive(on);
    d.hidden_keyfiles.widget.set_sensitive(on);
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

/// A search under way, or over: its bar then stays with the last report,
/// which says how far a failed search went.
fn busy(d: &Dialog, on: bool) {
    d.mount.set_sensitive(!on);
    if on {
        d.progress.set_visible(true);
        d.progress.set_fraction(0.0);
        d.progress.set_text(Some(""));
        d.message.remove_css_class("error");
        d.message.set_text(&tr("Searching for the volume header…"));
    } else {
        d.message.add_css_class("error");
    }
}

fn form(d: &Dialog, volume: PathBuf) -> MountForm {
    let choice = |dd: &gtk::DropDown| (dd.selected() > 0).then(|| ui::chosen(dd));
    let text = d.mount_point.text();
    MountForm {
        volume,
        keyfiles: d.keyfiles.paths(),
        pim: d.pim.value_as_int().try_into().unwrap_or(0),
        truecrypt: d.truecrypt.is_active(),
        hash: choice(&d.hash),
        encryption: choice(&d.encryption),
        readonly: d.readonly.is_active(),
        mount_point: (!text.trim().is_empty()).then(|| PathBuf::from(text.trim())),
        block_device_only: d.filesystem.selected() == 1,
        cache: d.cache.is_active(),
        dismount_idle_minutes: d.idle.value_as_int().try_into().unwrap_or(0),
        backup_header: d.backup_header.is_active(),
        system_encryption: d.system.is_active(),
        protect_hidden_pim: d.hidden_pim.value_as_int().try_into().unwrap_or(0),
        protect_hidden_keyfiles: d.hidden_keyfiles.paths(),
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
    let on = progress(d);
    let (dd, m) = (d.clone(), main.clone());
    let cancel = daemon::run(
        &main.target,
        move |c| {
            tcd_client::search::reported(c, on, || {
                form.mount(c, &password, hidden.as_deref().map(Vec::as_slice))
            })
        },
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

/// What hands the daemon's search progress to the dialog's bar.
fn progress(d: &Dialog) -> impl Fn(Report) + Send + 'static {
    let (tx, rx) = async_channel::unbounded::<Report>();
    let bar = d.progress.clone();
    gtk::glib::spawn_future_local(async move {
        let mut last = None;
        // Redrawn every second too: its estimate counts down while one
        // slow trial brings no news. The loop ends with the search.
        loop {
            match gtk::glib::future_with_timeout(Duration::from_secs(1), rx.recv()).await {
                Ok(Ok(report)) => last = Some(report),
                Ok(Err(_)) => break,
                Err(_) => {}
            }
            if let Some(report) = &last {
                let line = report.words();
                bar.set_fraction(report.done());
                bar.set_text(Some(&line));
                // Read by a screen reader, which does not read a bar's text.
                bar.update_property(&[gtk::accessible::Property::Description(&line)]);
            }
        }
    });
    move |report| {
        let _ = tx.send_blocking(report);
    }
}

/// The Preferences' mount options.
fn defaults(d: &Dialog) {
    let s = crate::settings::load();
    d.readonly.set_active(s.readonly);
    d.mount_point.set_text(&s.mount_point);
    d.cache.set_active(s.cache_password);
    d.idle.set_value(f64::from(s.dismount_idle_minutes));
}
