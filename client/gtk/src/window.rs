//! The main window: the mounted volumes (following the daemon's signals),
//! a volume to mount, and Mount, Open, Dismount, Dismount All, Volume
//! Tools, Favorites; Create Volume, Keyfile Generator, Benchmark and
//! Settings in the header bar.

use crate::daemon::{self, Target};
use crate::i18n::{tr, trf};
use crate::main_window::{Main, inform, refresh, say, selected};
use crate::{
    benchmark, devices, favorites, keyfile_generator, mount_dialog, performance, ui, volume_tools,
    wizard,
};
use adw::prelude::*;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use tcd_client::bus::{Failure, exit};
use tcd_client::follow::Change;

/// Builds and shows the main window.
pub fn build(app: &adw::Application, target: Target) {
    let list = gtk::ListBox::new();
    list.set_selection_mode(gtk::SelectionMode::Single);
    ui::named(&list, &tr("Mounted volumes"));
    list.set_placeholder(Some(&gtk::Label::new(Some(&tr("No volume is mounted")))));
    let window = adw::ApplicationWindow::builder()
        .application(app)
        .title("tcd")
        .default_width(860)
        .default_height(520)
        .build();
    let main = Rc::new(Main {
        window,
        target,
        list,
        volumes: RefCell::new(Vec::new()),
        volume: ui::entry("Volume"),
        status: ui::message_label("Status"),
    });
    main.window.set_content(Some(&layout(&main)));
    // Enter in a volume's row opens it, as a double click does; Enter in
    // the volume field opens the Mount dialog.
    main.list.set_activate_on_single_click(false);
    let m = main.clone();
    main.list
        .connect_row_activated(move |_, _| open_selected(&m));
    let m = main.clone();
    main.volume
        .connect_activate(move |_| mount_dialog::show(&m));
    let following = Rc::downgrade(&main);
    daemon::follow(&main.target, move |change| {
        if let Some(main) = following.upgrade() {
            changed(&main, change);
        }
    });
    main.window.present();
}

fn layout(main: &Rc<Main>) -> gtk::Box {
    let content = gtk::Box::new(gtk::Orientation::Vertical, 8);
    content.append(&header(main));
    let scrolled = gtk::ScrolledWindow::builder()
        .child(&main.list)
        .vexpand(true)
        .build();
    let body = gtk::Box::new(gtk::Orientation::Vertical, 8);
    body.set_margin_start(12);
    body.set_margin_end(12);
    body.set_margin_bottom(12);
    body.append(&scrolled);
    body.append(&volume_bar(main));
    body.append(&actions(main));
    body.append(&main.status);
    content.append(&body);
    content
}

fn header(main: &Rc<Main>) -> adw::HeaderBar {
    let bar = adw::HeaderBar::new();
    let create = ui::button("_Create Volume…");
    let m = main.clone();
    create.connect_clicked(move |_| wizard::show(&m));
    let bench = ui::button("_Benchmark…");
    let m = main.clone();
    bench.connect_clicked(move |_| benchmark::show(&m.window, &m.target));
    let prefs = ui::button("_Settings…");
    let m = main.clone();
    prefs.connect_clicked(move |_| performance::show(&m.window, &m.target));
    let keyfiles = ui::button("_Keyfile Generator…");
    let m = main.clone();
    keyfiles.connect_clicked(move |_| keyfile_generator::show(&m.window));
    bar.pack_start(&create);
    bar.pack_end(&prefs);
    bar.pack_end(&bench);
    bar.pack_end(&keyfiles);
    bar
}

/// The volume to mount, and the buttons that choose it.
fn volume_bar(main: &Rc<Main>) -> gtk::Box {
    let row = gtk::Box::new(gtk::Orientation::Horizontal, 8);
    let label = gtk::Label::with_mnemonic(&tr("_Volume:"));
    label.set_mnemonic_widget(Some(&main.volume));
    let file = ui::button("Select _File…");
    let m = main.clone();
    file.connect_clicked(move |_| choose(&m));
    let device = ui::button("Select D_evice…");
    let m = main.clone();
    device.connect_clicked(move |_| devices::show(&m.window, &m.target, &m.volume));
    row.append(&label);
    row.append(&main.volume);
    row.append(&file);
    row.append(&device);
    row
}

fn actions(main: &Rc<Main>) -> gtk::Box {
    let row = gtk::Box::new(gtk::Orientation::Horizontal, 8);
    let mount = ui::button("_Mount…");
    let m = main.clone();
    mount.connect_clicked(move |_| mount_dialog::show(&m));
    let open = ui::button("_Open");
    let m = main.clone();
    open.connect_clicked(move |_| open_selected(&m));
    let dismount = ui::button("_Dismount");
    let m = main.clone();
    dismount.connect_clicked(move |_| dismount_selected(&m, false));
    let all = ui::button("Dismount _All");
    let m = main.clone();
    all.connect_clicked(move |_| dismount_all(&m, false));
    let tools = ui::button("Volume _Tools…");
    let m = main.clone();
    tools.connect_clicked(move |_| volume_tools::show(&m));
    let favs = ui::button("Favo_rites…");
    let m = main.clone();
    favs.connect_clicked(move |_| favorites::show(&m));
    for b in [&mount, &open, &dismount, &all, &tools, &favs] {
        row.append(b);
    }
    row
}

/// Select File: a container file.
fn choose(main: &Rc<Main>) {
    let chooser = gtk::FileChooserNative::new(
        Some(&tr("Select a volume file")),
        Some(&main.window),
        gtk::FileChooserAction::Open,
        Some(&tr("_Select")),
        Some(&tr("_Cancel")),
    );
    let m = main.clone();
    let held = ui::keep_until_answered(&chooser);
    chooser.connect_response(move |c, r| {
        held.take();
        if r == gtk::ResponseType::Accept
            && let Some(path) = c.file().and_then(|f| f.path())
        {
            m.volume.set_text(&path.to_string_lossy());
        }
    });
    chooser.show();
}

fn changed(main: &Rc<Main>, change: Change) {
    if let Change::AutoDismounted {
        host,
        reason,
        error,
    } = change
    {
        let said = if error.is_empty() {
            trf("{0} was dismounted automatically ({1})", &[&host, &reason])
        } else {
            trf(
                "{0} could not be dismounted automatically ({1}): {2}",
                &[&host, &reason, &error],
            )
        };
        if error.is_empty() {
            inform(main, &said);
        } else {
            say(main, &said);
        }
    }
    refresh(main);
}

fn open_selected(main: &Rc<Main>) {
    let Some((_, mount_point)) = selected(main) else {
        return say(main, &tr("Select a mounted volume first."));
    };
    let Some(at) = mount_point else {
        return say(main, &tr("This volume has no filesystem mounted."));
    };
    let uri = gtk::gio::File::for_path(PathBuf::from(at)).uri();
    if let Err(e) =
        gtk::gio::AppInfo::launch_default_for_uri(&uri, None::<&gtk::gio::AppLaunchContext>)
    {
        say(main, &e.to_string());
    }
}

fn dismount_selected(main: &Rc<Main>, force: bool) {
    let Some((host, _)) = selected(main) else {
        return say(main, &tr("Select a mounted volume first."));
    };
    let m = main.clone();
    let name = host.clone();
    daemon::run(
        &main.target,
        move |c| c.dismount(&name, force),
        move |r| {
            done(&m, r.map(|_| trf("Dismounted {0}", &[&host])), move |m| {
                dismount_selected(m, true)
            })
        },
    );
}

fn dismount_all(main: &Rc<Main>, force: bool) {
    let m = main.clone();
    daemon::run(
        &main.target,
        move |c| c.dismount_all(force),
        move |r| {
            let r = r.map(|n| trf("Volumes dismounted: {0}", &[&n]));
            done(&m, r, move |m| dismount_all(m, true))
        },
    );
}

/// After a dismount: said; a busy volume asks whether to force it.
fn done(main: &Rc<Main>, r: Result<String, Failure>, force: impl Fn(&Rc<Main>) + 'static) {
    match r {
        Ok(said) => inform(main, &said),
        Err(f) if f.code == exit::BUSY => {
            say(main, &f.message);
            let m = main.clone();
            ui::ask(
                &main.window,
                &tr("The volume is in use"),
                &format!(
                    "{}\n\n{}",
                    f.message,
                    tr("Dismount it anyway? Programs using it may lose data.")
                ),
                &tr("_Force Dismount"),
                move || force(&m),
            );
        }
        Err(f) => say(main, &f.message),
    }
    refresh(main);
}
