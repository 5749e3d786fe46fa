//! Favorites, as `tcctl favorites` keeps them (`tcd_client::favorites`):
//! the user's and the system's, listed; the chosen mounted volume added;
//! (keeping its format when it is a TrueCrypt volume, and system
//! encryption); one removed, or its mount point, read-only, TrueCrypt mode
//! (only the TrueCrypt format tried), system encryption, auto-mount, idle
//! dismount and PIM changed; Mount Favorites mounts every one of the user's that
//! is not mounted, asking each one's password in a window of its own
//! (nothing typed for one is tried on another), or with the password
//! kept in the user's keyring when "Remember passwords in the keyring"
//! kept it there; Forget Password takes it out again. The system's are
//! read-only unless polkit would let the user change them.

use crate::daemon::{self, Target};
use crate::i18n::{mark, tr, trf};
use crate::main_window::{self as window, Main, selected};
use crate::ui::{self, Form, spin};
use gtk::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use tcd_client::bus::{Client, Failure, exit};
use tcd_client::favorites::{host_name, in_keyring, key_of, mount_one};
use tcd_client::polkit::{self, Permission};
use tcd_proto::contract::favorite::Favorite;
use tcd_proto::contract::options::VolumeFormat;
use zeroize::Zeroizing;

/// Why a system favorite cannot be changed.
const READ_ONLY: &str =
    mark("The system's favorites are read-only: polkit does not let you change them.");

struct Dialog {
    window: gtk::Window,
    target: Target,
    list: gtk::ListBox,
    /// Each row's favorite, whether it is the system's, and whether its
    /// password is in the user's keyring.
    rows: RefCell<Vec<(Favorite, bool, bool)>>,
    /// polkit lets the user change the system's favorites.
    system_editable: RefCell<bool>,
    mount_point: gtk::Entry,
    readonly: gtk::CheckButton,
    truecrypt: gtk::CheckButton,
    system_encryption: gtk::CheckButton,
    auto_mount: gtk::CheckButton,
    idle: gtk::SpinButton,
    pim: gtk::SpinButton,
    save: gtk::Button,
    remember: gtk::CheckButton,
    message: gtk::Label,
}

pub fn show(main: &Rc<Main>) {
    let d = Rc::new(Dialog {
        window: ui::dialog(&main.window, &tr("Favorites")),
        target: main.target.clone(),
        list: gtk::ListBox::new(),
        rows: RefCell::default(),
        system_editable: RefCell::new(false),
        mount_point: ui::entry("Favorite mount point"),
        readonly: ui::check("_Read-only"),
        truecrypt: ui::check("_TrueCrypt mode"),
        system_encryption: ui::check("S_ystem encryption (without pre-boot authentication)"),
        auto_mount: ui::check("_Auto-mount"),
        idle: spin("Favorite idle minutes", 0.0, 10_000.0),
        pim: spin("Favorite PIM", 0.0, 2_147_468.0),
        save: ui::button("_Save Changes"),
        remember: ui::check("Remember passwords in the _keyring"),
        message: ui::message_label("Favorites message"),
    });
    ui::named(&d.list, &tr("Favorite volumes"));
    d.list
        .set_placeholder(Some(&gtk::Label::new(Some(&tr("No favorites")))));
    let dd = d.clone();
    d.list.connect_row_selected(move |_, _| chosen(&dd));
    d.window.set_child(Some(&content(&d, main)));
    reload(&d);
    d.window.present();
}

fn content(d: &Rc<Dialog>, main: &Rc<Main>) -> gtk::Box {
    let scrolled = gtk::ScrolledWindow::builder()
        .child(&d.list)
        .min_content_height(160)
        .vexpand(true)
        .build();
    let mut f = Form::new();
    f.row("Mount _point (empty: chosen):", &d.mount_point);
    f.wide(&d.readonly);
    f.wide(&d.truecrypt);
    f.wide(&d.system_encryption);
    // A system partition mounts read-only unless the user unticks it, as
    // `tcctl favorites add --system-encryption` keeps it unless --read-write.
    let readonly = d.readonly.clone();
    d.system_encryption.connect_toggled(move |c| {
        if c.is_active() {
            readonly.set_active(true);
        }
    });
    f.wide(&d.auto_mount);
    f.row("Dismount after _idle minutes (0: never):", &d.idle);
    f.row("P_IM (0: default):", &d.pim);
    let dd = d.clone();
    d.save.connect_clicked(move |_| save_changes(&dd));
    f.wide(&d.save);
    editable(d, false);
    let add = ui::button("Add _Mounted Volume");
    let (dd, m) = (d.clone(), main.clone());
    add.connect_clicked(move |_| add_mounted(&dd, &m));
    let remove = ui::button("_Remove");
    let dd = d.clone();
    remove.connect_clicked(move |_| remove_chosen(&dd));
    let forget = ui::button("For_get Password");
    let dd = d.clone();
    forget.connect_clicked(move |_| forget_chosen(&dd));
    let mount = ui::button("Mount _Favorites");
    let (dd, m) = (d.clone(), main.clone());
    mount.connect_clicked(move |_| mount_all(&dd, &m));
    let close = ui::button("_Close");
    let w = d.window.clone();
    close.connect_clicked(move |_| w.close());
    let body = ui::body(10);
    body.append(&scrolled);
    body.append(&f.grid);
    body.append(&d.remember);
    body.append(&d.message);
    body.append(&ui::button_row(&[&add, &remove, &forget, &mount, &close]));
    body
}

fn say(d: &Dialog, text: &str, error: bool) {
    ui::tell(&d.message, text, error);
}

/// What a row says of a favorite after its name.
fn describe(f: &Favorite, system: bool, kept: bool) -> String {
    let mut parts = vec![
        f.host.clone(),
        if system { tr("system's") } else { tr("yours") },
        f.mount_point
            .clone()
            .unwrap_or_else(|| tr("mount point chosen")),
    ];
    for (on, word) in [
        (f.readonly, mark("read-only")),
        (f.auto_mount, mark("auto-mount")),
        (f.system_encryption, mark("system encryption")),
        (f.protect_hidden, mark("protects its hidden volume")),
        (
            f.format == Some(VolumeFormat::TrueCrypt),
            mark("TrueCrypt format only"),
        ),
        (
            f.format == Some(VolumeFormat::VeraCrypt),
            mark("VeraCrypt format only"),
        ),
    ] {
        if on {
            parts.push(tr(word));
        }
    }
    if f.dismount_idle_seconds > 0 {
        parts.push(trf(
            "dismount when idle {0} min",
            &[&(f.dismount_idle_seconds / 60)],
        ));
    }
    if kept {
        parts.push(tr("password in your keyring"));
    }
    parts.join(" · ")
}

/// Reads the list again, and whether the system's may be changed.
fn reload(d: &Rc<Dialog>) {
    let dd = d.clone();
    daemon::run(
        &d.target,
        |c| {
            let favs = c.list_favorites()?;
            let may = matches!(
                polkit::check("org.tcd.manage-system-favorites"),
                Ok(Permission::Yes | Permission::AfterAuthentication)
            );
            let rows = favs
                .into_iter()
                .map(|f| {
                    let kept = in_keyring(&f);
                    (f.settings, f.system, kept)
                })
                .collect();
            Ok((rows, may))
        },
        move |r| match r {
            Ok((rows, may)) => {
                *dd.system_editable.borrow_mut() = may;
                fill(&dd, rows);
            }
            Err(f) => say(&dd, &f.message, true),
        },
    );
}

fn fill(d: &Dialog, rows: Vec<(Favorite, bool, bool)>) {
    let before = current(d).map(|(f, system)| (f.name, system));
    while let Some(child) = d.list.first_child() {
        d.list.remove(&child);
    }
    for (f, system, kept) in &rows {
        let details = describe(f, *system, *kept);
        let row = adw::ActionRow::builder()
            .title(gtk::glib::markup_escape_text(&f.name).to_string())
            .subtitle(gtk::glib::markup_escape_text(&details).to_string())
            .activatable(true)
            .build();
        ui::named(&row, &f.name);
        row.update_property(&[gtk::accessible::Property::Description(&details)]);
        d.list.append(&row);
    }
    *d.rows.borrow_mut() = rows;
    editable(d, false);
    // The favorite chosen before stays chosen.
    let again = d
        .rows
        .borrow()
        .iter()
        .position(|(f, system, _)| before.as_ref() == Some(&(f.name.clone(), *system)));
    if let Some(row) = again.and_then(|i| d.list.row_at_index(i32::try_from(i).ok()?)) {
        d.list.select_row(Some(&row));
    }
}

/// The chosen favorite's settings offered for change, or greyed.
fn editable(d: &Dialog, on: bool) {
    d.mount_point.set_sensitive(on);
    for w in [
        d.readonly.upcast_ref::<gtk::Widget>(),
        d.truecrypt.upcast_ref(),
        d.system_encryption.upcast_ref(),
        d.auto_mount.upcast_ref(),
        d.idle.upcast_ref(),
        d.pim.upcast_ref(),
        d.save.upcast_ref(),
    ] {
        w.set_sensitive(on);
    }
}

/// The chosen favorite and whether it is the system's.
fn current(d: &Dialog) -> Option<(Favorite, bool)> {
    let at = usize::try_from(d.list.selected_row()?.index()).ok()?;
    let rows = d.rows.borrow();
    let (f, system, _) = rows.get(at)?;
    Some((f.clone(), *system))
}

/// A favorite chosen: its settings in the fields, changeable if the
/// user may.
fn chosen(d: &Dialog) {
    let Some((f, system)) = current(d) else {
        return editable(d, false);
    };
    d.mount_point
        .set_text(f.mount_point.as_deref().unwrap_or_default());
    // The system encryption switch first: ticking it ticks read-only.
    d.system_encryption.set_active(f.system_encryption);
    d.readonly.set_active(f.readonly);
    d.truecrypt
        .set_active(f.format == Some(VolumeFormat::TrueCrypt));
    d.auto_mount.set_active(f.auto_mount);
    d.idle.set_value(f64::from(f.dismount_idle_seconds / 60));
    d.pim.set_value(f64::from(f.pim));
    let may = !system || *d.system_editable.borrow();
    editable(d, may);
    if !may {
        say(d, &tr(READ_ONLY), true);
    }
}

/// Runs a change to the favorites, then reads them again.
fn change(d: &Rc<Dialog>, work: impl FnOnce(&Client) -> Result<String, Failure> + Send + 'static) {
    let dd = d.clone();
    daemon::run(&d.target, work, move |r| {
        match r {
            Ok(said) => say(&dd, &said, false),
            Err(f) => say(&dd, &f.message, true),
        }
        reload(&dd);
    });
}

fn save_changes(d: &Rc<Dialog>) {
    let Some((mut f, system)) = current(d) else {
        return say(d, &tr("Choose a favorite first."), true);
    };
    let at = d.mount_point.text().trim().to_owned();
    f.mount_point = (!at.is_empty()).then_some(at);
    f.readonly = d.readonly.is_active();
    f.system_encryption = d.system_encryption.is_active();
    // Ticked: TrueCrypt only; unticked, a format kept by `tcctl favorites
    // add --format veracrypt` stays.
    f.format = if d.truecrypt.is_active() {
        Some(VolumeFormat::TrueCrypt)
    } else {
        f.format.filter(|k| *k == VolumeFormat::VeraCrypt)
    };
    f.auto_mount = d.auto_mount.is_active();
    f.dismount_idle_seconds = u32::try_from(d.idle.value_as_int())
        .unwrap_or(0)
        .saturating_mul(60);
    f.pim = u32::try_from(d.pim.value_as_int()).unwrap_or(0);
    let said = trf("Saved favorite {0}", &[&f.name]);
    change(d, move |c| c.add_favorite(&f, system).map(|()| said));
}

fn add_mounted(d: &Rc<Dialog>, main: &Main) {
    let Some((host, mount_point)) = selected(main) else {
        return say(
            d,
            &tr("Select a mounted volume in the main window first."),
            true,
        );
    };
    // As it is mounted: read-only, system encryption, and TrueCrypt mode
    // for a TrueCrypt volume (VeraCrypt's default needs no word).
    let (readonly, system_encryption, format) = main
        .volumes
        .borrow()
        .iter()
        .find(|v| v.host() == host)
        .map_or((false, false, None), |v| {
            let truecrypt = v.view.format.as_deref() == Some("TrueCrypt");
            (
                v.view.read_only.unwrap_or_default(),
                v.view.system_encryption.unwrap_or_default(),
                truecrypt.then_some(VolumeFormat::TrueCrypt),
            )
        });
    change(d, move |c| {
        let host = host_name(std::path::Path::new(&host))?;
        let name = std::path::Path::new(&host)
            .file_name()
            .map_or_else(|| host.clone(), |n| n.to_string_lossy().into_owned());
        let f = Favorite {
            name: name.clone(),
            host: host.clone(),
            mount_point,
            readonly,
            system_encryption,
            format,
            ..Favorite::default()
        };
        c.add_favorite(&f, false)?;
        Ok(trf("Added favorite {0}: {1}", &[&name, &host]))
    });
}

fn remove_chosen(d: &Rc<Dialog>) {
    let Some((f, system)) = current(d) else {
        return say(d, &tr("Choose a favorite first."), true);
    };
    if system && !*d.system_editable.borrow() {
        return say(d, &tr(READ_ONLY), true);
    }
    let name = f.name;
    change(d, move |c| {
        if !c.remove_favorite(&name, system)? {
            return Err(Failure::not_found(trf("no favorite {0}", &[&name])));
        }
        let _ = tcd_client::keystore::forget(&key_of(&name, system));
        Ok(trf("Removed favorite {0}", &[&name]))
    });
}

/// The chosen favorite's password taken out of the user's keyring.
fn forget_chosen(d: &Rc<Dialog>) {
    let Some((f, system)) = current(d) else {
        return say(d, &tr("Choose a favorite first."), true);
    };
    let name = f.name;
    change(d, move |_| {
        Ok(
            match tcd_client::keystore::forget(&key_of(&name, system))? {
                true => trf("Password forgotten: {0}", &[&name]),
                false => trf("No password in your keyring for {0}", &[&name]),
            },
        )
    });
}

/// A password asked for on the main loop, for a call on a worker thread.
type Request = (String, async_channel::Sender<Option<Zeroizing<Vec<u8>>>>);

/// Mounts each of the user's favorites that is not mounted, one after
/// the other; says what came of each.
fn mount_all(d: &Rc<Dialog>, main: &Rc<Main>) {
    let (tx, rx) = async_channel::unbounded::<Request>();
    let parent = d.window.clone();
    gtk::glib::spawn_future_local(async move {
        while let Ok((prompt, reply)) = rx.recv().await {
            ask_password(&parent, &prompt, reply);
        }
    });
    say(d, &tr("Mounting…"), false);
    let (dd, m) = (d.clone(), main.clone());
    let remember = d.remember.is_active();
    daemon::run(
        &d.target,
        move |c| mount_each(c, &tx, remember),
        move |r| {
            match r {
                Ok(lines) if lines.is_empty() => {
                    say(&dd, &tr("No favorite to mount: yours are mounted."), false)
                }
                Ok(lines) => {
                    let text: Vec<&str> = lines.iter().map(|(l, _)| l.as_str()).collect();
                    say(
                        &dd,
                        &text.join("\n"),
                        lines.iter().any(|(_, failed)| *failed),
                    );
                }
                Err(f) => say(&dd, &f.message, true),
            }
            reload(&dd);
            window::refresh(&m);
        },
    );
}

/// On the worker: each favorite of the user's not mounted, mounted with
/// the password in the keyring or one asked through `ask` (kept in the
/// keyring when `remember`); a line for each, and whether it failed.
fn mount_each(
    c: &Client,
    ask: &async_channel::Sender<Request>,
    remember: bool,
) -> Result<Vec<(String, bool)>, Failure> {
    let mounted: Vec<String> = c.list()?.iter().map(|v| v.host().to_owned()).collect();
    let mut lines = Vec::new();
    for f in c.list_favorites()? {
        let name = f.settings.name.clone();
        if f.system || mounted.contains(&f.settings.host) {
            continue;
        }
        let mut asker = |prompt: &str| {
            let (reply, answer) = async_channel::bounded(1);
            let cancelled = || Failure {
                code: exit::CANCELLED,
                message: tr("cancelled"),
            };
            ask.send_blocking((prompt.to_owned(), reply))
                .map_err(|_| cancelled())?;
            answer.recv_blocking().ok().flatten().ok_or_else(cancelled)
        };
        let line = match mount_one(c, &f, &mut asker, &|| false, remember, &|_| {}) {
            Ok(m) => match m.kept {
                None if m.attached => (trf("{0} attached as {1}", &[&name, &m.at]), false),
                None => (trf("{0} mounted on {1}", &[&name, &m.at]), false),
                Some(kept) => (
                    trf(
                        "{0} mounted on {1} (password kept in the {2})",
                        &[&name, &m.at, &kept],
                    ),
                    false,
                ),
            },
            Err(e) => (format!("{name}: {}", e.message), true),
        };
        lines.push(line);
    }
    Ok(lines)
}

/// A window that asks `prompt`; the password goes back through `reply`
/// (nothing when cancelled), and the entry is emptied.
fn ask_password(
    parent: &gtk::Window,
    prompt: &str,
    reply: async_channel::Sender<Option<Zeroizing<Vec<u8>>>>,
) {
    let w = ui::dialog(parent, prompt.trim_end_matches([' ', ':']));
    let entry = ui::password_entry("Favorite password");
    let mut f = Form::new();
    f.row("_Password:", &entry);
    let cancel = ui::button("_Cancel");
    let ok = ui::button("_Mount");
    ok.add_css_class("suggested-action");
    let body = ui::body(12);
    body.append(&f.grid);
    body.append(&ui::button_row(&[&cancel, &ok]));
    w.set_child(Some(&body));
    w.set_default_widget(Some(&ok));
    let answer = Rc::new(RefCell::new(Some(reply)));
    let (a, e, ww) = (answer.clone(), entry.clone(), w.clone());
    ok.connect_clicked(move |_| {
        if let Some(r) = a.take() {
            let _ = r.send_blocking(Some(ui::secret(&e)));
        }
        ww.close();
    });
    let okb = ok.clone();
    entry.connect_activate(move |_| okb.emit_clicked());
    let ww = w.clone();
    cancel.connect_clicked(move |_| ww.close());
    w.connect_close_request(move |_| {
        entry.set_text("");
        if let Some(r) = answer.take() {
            let _ = r.send_blocking(None);
        }
        gtk::glib::Propagation::Proceed
    });
    w.present();
}
