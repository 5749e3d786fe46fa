//! The Volume Creation Wizard: a standard volume in a new container file
//! or over a whole device (or existing file, after asking), or a hidden
//! volume inside an outer volume (the outer one opened first with its
//! password, then the hidden one's size limit shown); its format,
//! encryption and hash (with the benchmark a click away), size, password
//! (with a strength hint), PIM, keyfiles, filesystem, sector size on a
//! device, quick or full format; and the daemon's progress with speed,
//! bytes done and time left. Cancel stops the daemon and leaves no new
//! file behind.

use crate::benchmark;
use crate::daemon::{self, Cancel};
use crate::i18n::{tr, trf};
use crate::keyfile_list::KeyfileList;
use crate::main_window::{self as window, Main};
use crate::ui::{self, Form, password_entry, spin};
use gtk::prelude::*;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;
use tcd_client::forms::{CreateForm, Outer, Place, encryptions, filesystems, hashes};
use tcd_client::output::human_size;

struct Wizard {
    window: gtk::Window,
    /// New file, device or existing file, hidden volume.
    places: [gtk::CheckButton; 3],
    volume: gtk::Entry,
    sector: gtk::DropDown,
    outer: OuterPart,
    size: gtk::SpinButton,
    format: gtk::DropDown,
    encryption: gtk::DropDown,
    hash: gtk::DropDown,
    filesystem: gtk::DropDown,
    password: gtk::PasswordEntry,
    confirm: gtk::PasswordEntry,
    hint: gtk::Label,
    pim: gtk::SpinButton,
    keyfiles: KeyfileList,
    quick: gtk::CheckButton,
    create: gtk::Button,
    progress: gtk::ProgressBar,
    message: gtk::Label,
    running: RefCell<Option<Cancel>>,
}

/// The outer volume of a new hidden volume: its credentials, and what
/// opening it found (its hash and the size limit).
struct OuterPart {
    password: gtk::PasswordEntry,
    pim: gtk::SpinButton,
    keyfiles: KeyfileList,
    open: gtk::Button,
    limit: gtk::Label,
    opened: RefCell<Option<(Option<String>, u64)>>,
}

pub fn show(main: &Rc<Main>) {
    let window = ui::dialog(&main.window, &tr("Volume Creation Wizard"));
    let w = Rc::new(Wizard {
        keyfiles: KeyfileList::new(&window, "Keyfiles"),
        outer: OuterPart {
            password: password_entry("Outer volume password"),
            pim: spin("Outer volume PIM", 0.0, 2_147_468.0),
            keyfiles: KeyfileList::new(&window, "Outer volume keyfiles"),
            open: ui::button("_Open Outer Volume"),
            limit: ui::message_label("Hidden volume size limit"),
            opened: RefCell::new(None),
        },
        window,
        places: [
            ui::radio("Standard volume in a _new file"),
            ui::radio("Standard volume on a _device or existing file (erases it)"),
            ui::radio("Hi_dden volume inside an outer volume"),
        ],
        volume: ui::entry("Volume file or device"),
        sector: ui::drop_down(
            "Sector size",
            &[tr("The device's own"), "512".to_owned(), "4096".to_owned()],
        ),
        size: spin("Size in MiB", 1.0, 16_777_216.0),
        format: ui::drop_down("Format", &["VeraCrypt".to_owned(), "TrueCrypt".to_owned()]),
        encryption: ui::drop_down("Encryption", &encryptions()),
        hash: ui::drop_down("Hash", &hashes()),
        filesystem: fat_first(ui::drop_down("Filesystem", &filesystems())),
        password: password_entry("Password"),
        confirm: password_entry("Confirm password"),
        hint: ui::message_label("Password strength"),
        pim: spin("PIM", 0.0, 2_147_468.0),
        quick: ui::check("_Quick format (the free space is not overwritten)"),
        create: ui::button("C_reate"),
        progress: gtk::ProgressBar::new(),
        message: ui::message_label("Creation error"),
        running: RefCell::new(None),
    });
    w.size.set_value(64.0);
    for p in &w.places[1..] {
        p.set_group(Some(&w.places[0]));
    }
    w.places[0].set_active(true);
    w.progress.set_show_text(true);
    ui::named(&w.progress, &tr("Creation progress"));
    w.window.set_child(Some(&content(&w, main)));
    let ww = w.clone();
    w.password.connect_changed(move |_| hint(&ww));
    let (ww, m) = (w.clone(), main.clone());
    w.create.connect_clicked(move |_| confirm(&ww, &m));
    for p in &w.places {
        let ww = w.clone();
        p.connect_toggled(move |_| placed(&ww));
    }
    let (ww, m) = (w.clone(), main.clone());
    w.outer.open.connect_clicked(move |_| open_outer(&ww, &m));
    let ww = w.clone();
    w.volume.connect_changed(move |_| {
        ww.outer.opened.take();
    });
    placed(&w);
    let ww = w.clone();
    w.window.connect_close_request(move |_| {
        if let Some(c) = ww.running.take() {
            c.cancel();
        }
        clear(&ww);
        gtk::glib::Propagation::Proceed
    });
    w.window.present();
}

fn content(w: &Rc<Wizard>, main: &Rc<Main>) -> gtk::Box {
    let columns = gtk::Box::new(gtk::Orientation::Horizontal, 24);
    columns.append(&ui::column(
        "Volume",
        &[where_part(w, main).grid.upcast_ref()],
    ));
    columns.append(&ui::column(
        "Encryption and password",
        &[secret_part(w, main).grid.upcast_ref()],
    ));
    let cancel = ui::button("_Cancel");
    let ww = w.clone();
    cancel.connect_clicked(move |_| match ww.running.take() {
        Some(c) => c.cancel(),
        None => ww.window.close(),
    });
    w.create.add_css_class("suggested-action");
    let buttons = ui::button_row(&[&cancel, &w.create]);
    let body = ui::body(10);
    body.append(&columns);
    body.append(&w.progress);
    body.append(&w.message);
    body.append(&buttons);
    body
}

/// The kind of volume, where it goes, its size, and the outer volume of
/// a hidden one.
fn where_part(w: &Rc<Wizard>, main: &Rc<Main>) -> Form {
    let mut f = Form::new();
    let kinds = gtk::Box::new(gtk::Orientation::Vertical, 2);
    for p in &w.places {
        kinds.append(p);
    }
    f.wide(&kinds);
    let device = ui::button("Select D_evice…");
    let m = main.clone();
    let field = w.volume.clone();
    let parent = w.window.clone();
    device.connect_clicked(move |_| crate::devices::show(&parent, &m.target, &field));
    let row = gtk::Box::new(gtk::Orientation::Horizontal, 6);
    row.append(&w.volume);
    row.append(&device);
    f.row("_Volume:", &row);
    f.row("Ou_ter volume password:", &w.outer.password);
    f.row("Outer volume PI_M:", &w.outer.pim);
    f.row("Outer volume ke_yfiles:", &w.outer.keyfiles.widget);
    f.wide(&w.outer.open);
    w.outer.limit.set_max_width_chars(50);
    f.wide(&w.outer.limit);
    f.row("_Size (MiB):", &w.size);
    f.row("Sector si_ze:", &w.sector);
    f
}

/// Format, algorithms, the new password, PIM, keyfiles, filesystem.
fn secret_part(w: &Rc<Wizard>, main: &Rc<Main>) -> Form {
    let mut f = Form::new();
    f.row("F_ormat:", &w.format);
    f.row("_Encryption:", &w.encryption);
    f.row("_Hash:", &w.hash);
    let bench = ui::button("_Benchmark…");
    let m = main.clone();
    bench.connect_clicked(move |_| benchmark::show(&m.window, &m.target));
    f.wide(&bench);
    f.row("_Password:", &w.password);
    f.row("Co_nfirm password:", &w.confirm);
    f.wide(&w.hint);
    f.row("P_IM (0: default):", &w.pim);
    f.row("_Keyfiles:", &w.keyfiles.widget);
    f.row("File_system:", &w.filesystem);
    f.wide(&w.quick);
    f
}

/// Where the volume goes.
fn place(w: &Wizard) -> Place {
    match w.places.iter().position(|p| p.is_active()) {
        Some(1) => Place::Existing,
        Some(2) => Place::Hidden,
        _ => Place::NewFile,
    }
}

/// The controls that count for the kind of volume chosen, the others
/// greyed.
fn placed(w: &Wizard) {
    let p = place(w);
    let hidden = p == Place::Hidden;
    w.size.set_sensitive(p != Place::Existing);
    w.sector.set_sensitive(p == Place::Existing);
    for c in [
        w.outer.password.upcast_ref::<gtk::Widget>(),
        w.outer.pim.upcast_ref(),
        w.outer.keyfiles.widget.upcast_ref(),
        w.outer.open.upcast_ref(),
    ] {
        c.set_sensitive(hidden);
    }
    w.outer.limit.set_visible(hidden);
    let most = match (hidden, w.outer.opened.borrow().as_ref()) {
        (true, Some((_, limit))) => (limit >> 20).max(1) as f64,
        _ => 16_777_216.0,
    };
    w.size.set_range(1.0, most);
}

/// Opens the outer volume with its credentials, and shows how large the
/// hidden volume may be.
fn open_outer(w: &Rc<Wizard>, main: &Main) {
    let volume = PathBuf::from(w.volume.text().trim());
    if volume.as_os_str().is_empty() {
        return ui::tell(&w.outer.limit, &tr("Name the outer volume first."), true);
    }
    let password = ui::secret(&w.outer.password);
    let pim = w.outer.pim.value_as_int().try_into().unwrap_or(0);
    let keyfiles = w.outer.keyfiles.paths();
    ui::tell(&w.outer.limit, &tr("Opening the outer volume…"), false);
    w.outer.open.set_sensitive(false);
    let ww = w.clone();
    daemon::run(
        &main.target,
        move |c| tcd_client::forms::open_outer(c, &volume, password, pim, keyfiles),
        move |r| {
            ww.outer.open.set_sensitive(place(&ww) == Place::Hidden);
            match r {
                Ok(o) => outer_opened(&ww, &o),
                Err(f) => {
                    ww.outer.opened.take();
                    ui::tell(&ww.outer.limit, &f.message, true);
                }
            }
        },
    );
}

/// The outer volume opened: its limit shown, and set on the size.
fn outer_opened(w: &Wizard, o: &Outer) {
    let mib = o.limit >> 20;
    w.outer.opened.replace(Some((o.hash.clone(), o.limit)));
    placed(w);
    let said = trf(
        "The hidden volume may take up to {0} MiB ({1} bytes). The outer volume's files must not be in that space: the daemon refuses and says how much fits behind them.",
        &[&mib, &o.limit],
    );
    ui::tell(&w.outer.limit, &said, false);
}

/// VeraCrypt's advice on the password typed so far.
fn hint(w: &Wizard) {
    let chars = w.password.text().chars().count();
    w.hint.set_text(&match chars {
        0 => String::new(),
        1..20 => tr("Short password: 20 characters or more are advised."),
        _ => tr("Good length."),
    });
}

fn clear(w: &Wizard) {
    w.password.set_text("");
    w.confirm.set_text("");
    w.outer.password.set_text("");
}

fn form(w: &Wizard) -> CreateForm {
    CreateForm {
        volume: PathBuf::from(w.volume.text().trim()),
        place: place(w),
        sector_size: ui::chosen(&w.sector).parse().unwrap_or(0),
        size: u64::try_from(w.size.value_as_int()).unwrap_or(1) << 20,
        truecrypt: w.format.selected() == 1,
        encryption: ui::chosen(&w.encryption),
        hash: ui::chosen(&w.hash),
        filesystem: ui::chosen(&w.filesystem),
        quick: w.quick.is_active(),
        pim: w.pim.value_as_int().try_into().unwrap_or(0),
        keyfiles: w.keyfiles.paths(),
    }
}

/// A device or existing file is erased only after the user says so.
fn confirm(w: &Rc<Wizard>, main: &Rc<Main>) {
    if place(w) != Place::Existing {
        return start(w, main);
    }
    let volume = w.volume.text().trim().to_owned();
    let (ww, m) = (w.clone(), main.clone());
    ui::ask(
        &w.window,
        &tr("Erase everything on it?"),
        &trf(
            "Everything on {0} is lost for good when the volume is written over it.",
            &[&volume],
        ),
        &tr("_Erase"),
        move || start(&ww, &m),
    );
}

fn start(w: &Rc<Wizard>, main: &Rc<Main>) {
    if w.password.text() != w.confirm.text() {
        return w.message.set_text(&tr("The passwords do not match."));
    }
    let form = form(w);
    if form.volume.as_os_str().is_empty() {
        return w
            .message
            .set_text(&tr("Name the volume file or device first."));
    }
    let outer = match (form.place, w.outer.opened.borrow().clone()) {
        (Place::Hidden, None) => {
            return w
                .message
                .set_text(&tr("Open the outer volume first, with its password."));
        }
        (Place::Hidden, Some((hash, limit))) => Some(Outer {
            password: ui::secret(&w.outer.password),
            pim: w.outer.pim.value_as_int().try_into().unwrap_or(0),
            keyfiles: w.outer.keyfiles.paths(),
            hash,
            limit,
        }),
        _ => None,
    };
    let hidden = form.place == Place::Hidden;
    let password = ui::secret(&w.password);
    clear(w);
    w.create.set_sensitive(false);
    w.message.set_text(&tr("Creating…"));
    let (tx, rx) = async_channel::unbounded::<(u64, u64)>();
    let (bar, started) = (w.progress.clone(), Instant::now());
    gtk::glib::spawn_future_local(async move {
        while let Ok((done, total)) = rx.recv().await {
            bar.set_fraction(done as f64 / total.max(1) as f64);
            bar.set_text(Some(&progress_text(done, total, started)));
        }
    });
    let (ww, m) = (w.clone(), main.clone());
    let cancel = daemon::run(
        &main.target,
        move |c| {
            form.create(c, &password, outer.as_ref(), move |done, total| {
                let _ = tx.send_blocking((done, total));
            })
        },
        move |r| {
            ww.running.take();
            ww.create.set_sensitive(true);
            match r {
                Ok(()) => {
                    ww.progress.set_fraction(1.0);
                    ww.progress.set_text(Some(&tr("Done")));
                    let said = if hidden {
                        tr("The hidden volume was created.")
                    } else {
                        tr("The volume was created.")
                    };
                    ww.message.remove_css_class("error");
                    ww.message.set_text(&said);
                    m.volume.set_text(&ww.volume.text());
                    window::inform(&m, &said);
                }
                Err(f) => {
                    ww.message.add_css_class("error");
                    ww.message.set_text(&f.message);
                }
            }
        },
    );
    w.running.replace(Some(cancel));
}

/// "12 M of 64 M, 30 M/s, 2 s left".
fn progress_text(done: u64, total: u64, started: Instant) -> String {
    let secs = started.elapsed().as_secs_f64().max(0.001);
    let speed = done as f64 / secs;
    let left = if speed > 0.0 {
        (total.saturating_sub(done)) as f64 / speed
    } else {
        0.0
    };
    trf(
        "{0} of {1}, {2}/s, {3} s left",
        &[
            &human_size(done),
            &human_size(total),
            &human_size(speed as u64),
            &format!("{left:.0}"),
        ],
    )
}

/// The filesystem drop-down with FAT chosen, as VeraCrypt's wizard
/// proposes it: read everywhere, and an outer volume that can hold a
/// hidden one (it fills from the start).
fn fat_first(d: gtk::DropDown) -> gtk::DropDown {
    if let Some(at) = filesystems().iter().position(|f| f == "fat") {
        d.set_selected(at as u32);
    }
    d
}
