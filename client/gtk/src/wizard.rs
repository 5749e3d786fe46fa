//! The Volume Creation Wizard: a new container file — its format,
//! encryption and hash (with the benchmark a click away), size, password
//! (with a strength hint), PIM, keyfiles, filesystem, quick or full
//! format — and the daemon's progress with speed, bytes done and time
//! left. Cancel stops the daemon and leaves no file behind.

use crate::benchmark;
use crate::daemon::{self, Cancel};
use crate::i18n::tr;
use crate::keyfile_list::KeyfileList;
use crate::main_window::{self as window, Main};
use crate::ui::{self, Form, password_entry, spin};
use gtk::prelude::*;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;
use tcd_client::forms::{CreateForm, encryptions, filesystems, hashes};
use tcd_client::output::human_size;

struct Wizard {
    window: gtk::Window,
    volume: gtk::Entry,
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

pub fn show(main: &Rc<Main>) {
    let window = ui::dialog(&main.window, &tr("Volume Creation Wizard"));
    let w = Rc::new(Wizard {
        keyfiles: KeyfileList::new(&window, "Keyfiles"),
        window,
        volume: ui::entry("Volume file"),
        size: spin("Size in MiB", 1.0, 16_777_216.0),
        format: ui::drop_down("Format", &["VeraCrypt".to_owned(), "TrueCrypt".to_owned()]),
        encryption: ui::drop_down("Encryption", &encryptions()),
        hash: ui::drop_down("Hash", &hashes()),
        filesystem: ui::drop_down("Filesystem", &filesystems()),
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
    w.progress.set_show_text(true);
    ui::named(&w.progress, &tr("Creation progress"));
    w.window.set_child(Some(&content(&w, main)));
    let ww = w.clone();
    w.password.connect_changed(move |_| hint(&ww));
    let (ww, m) = (w.clone(), main.clone());
    w.create.connect_clicked(move |_| start(&ww, &m));
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
    let mut f = Form::new();
    f.row("Volume _file:", &w.volume);
    f.row("_Size (MiB):", &w.size);
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
    let cancel = ui::button("_Cancel");
    let ww = w.clone();
    cancel.connect_clicked(move |_| match ww.running.take() {
        Some(c) => c.cancel(),
        None => ww.window.close(),
    });
    w.create.add_css_class("suggested-action");
    let buttons = ui::button_row(&[&cancel, &w.create]);
    let body = ui::body(10);
    body.append(&f.grid);
    body.append(&w.progress);
    body.append(&w.message);
    body.append(&buttons);
    body
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
}

fn form(w: &Wizard) -> CreateForm {
    CreateForm {
        volume: PathBuf::from(w.volume.text().trim()),
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

fn start(w: &Rc<Wizard>, main: &Rc<Main>) {
    if w.password.text() != w.confirm.text() {
        return w.message.set_text(&tr("The passwords do not match."));
    }
    let form = form(w);
    if form.volume.as_os_str().is_empty() {
        return w.message.set_text(&tr("Name the volume file first."));
    }
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
            form.create(c, &password, move |done, total| {
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
                    ww.message.remove_css_class("error");
                    ww.message.set_text(&tr("The volume was created."));
                    m.volume.set_text(&ww.volume.text());
                    window::inform(&m, &tr("The volume was created."));
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
    format!(
        "{} {} {}, {}/s, {:.0} s {}",
        human_size(done),
        tr("of"),
        human_size(total),
        human_size(speed as u64),
        left,
        tr("left")
    )
}
