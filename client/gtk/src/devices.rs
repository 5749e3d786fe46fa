//! Select Device: the block devices the host offers (those nothing uses
//! and tcd does not serve, as `tcctl mount-devices` tries them), each by
//! its stable name where it has one, with its size and whether the user
//! may open it. The one chosen goes into the volume field it was opened
//! for.

use crate::daemon::{self, Target};
use crate::i18n::tr;
use crate::ui;
use gtk::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use tcd_client::devices::Device;
use tcd_client::output::human_size;

struct Dialog {
    window: gtk::Window,
    target: Target,
    list: gtk::ListBox,
    devices: RefCell<Vec<Device>>,
    message: gtk::Label,
    field: gtk::Entry,
}

/// Opens Select Device over `parent`; the device chosen fills `field`.
pub fn show(parent: &impl IsA<gtk::Window>, target: &Target, field: &gtk::Entry) {
    let d = Rc::new(Dialog {
        window: ui::dialog(parent, &tr("Select Device")),
        target: target.clone(),
        list: gtk::ListBox::new(),
        devices: RefCell::default(),
        message: ui::message_label("Select Device message"),
        field: field.clone(),
    });
    ui::named(&d.list, &tr("Devices"));
    d.list.set_placeholder(Some(&gtk::Label::new(Some(&tr(
        "No device is free: each is mounted, in use, partitioned, or served by tcd",
    )))));
    let dd = d.clone();
    d.list.connect_row_activated(move |_, _| choose(&dd));
    let scrolled = gtk::ScrolledWindow::builder()
        .child(&d.list)
        .min_content_height(200)
        .vexpand(true)
        .build();
    let refresh = ui::button("_Refresh");
    let dd = d.clone();
    refresh.connect_clicked(move |_| reload(&dd));
    let cancel = ui::button("_Cancel");
    let w = d.window.clone();
    cancel.connect_clicked(move |_| w.close());
    let select = ui::button("_Select");
    select.add_css_class("suggested-action");
    let dd = d.clone();
    select.connect_clicked(move |_| choose(&dd));
    let body = ui::body(10);
    body.append(&scrolled);
    body.append(&d.message);
    body.append(&ui::button_row(&[&refresh, &cancel, &select]));
    d.window.set_child(Some(&body));
    d.window.set_default_widget(Some(&select));
    reload(&d);
    d.window.present();
}

/// What a row says of a device after its name.
fn describe(dev: &Device) -> String {
    let mut parts = vec![
        dev.path.to_string_lossy().into_owned(),
        human_size(dev.size),
    ];
    if !dev.yours {
        parts.push(tr("you may not open it"));
    }
    parts.join(" · ")
}

fn reload(d: &Rc<Dialog>) {
    let dd = d.clone();
    daemon::run(&d.target, tcd_client::devices::offered, move |r| {
        while let Some(child) = dd.list.first_child() {
            dd.list.remove(&child);
        }
        match r {
            Ok(devices) => {
                for dev in &devices {
                    let details = describe(dev);
                    let row = adw::ActionRow::builder()
                        .title(gtk::glib::markup_escape_text(&dev.name).to_string())
                        .subtitle(gtk::glib::markup_escape_text(&details).to_string())
                        .activatable(true)
                        .build();
                    ui::named(&row, &dev.name);
                    row.update_property(&[gtk::accessible::Property::Description(&details)]);
                    dd.list.append(&row);
                }
                ui::tell(&dd.message, "", false);
                *dd.devices.borrow_mut() = devices;
            }
            Err(f) => ui::tell(&dd.message, &f.message, true),
        }
    });
}

fn choose(d: &Dialog) {
    let at = d
        .list
        .selected_row()
        .and_then(|r| usize::try_from(r.index()).ok());
    let devices = d.devices.borrow();
    let Some(dev) = at.and_then(|i| devices.get(i)) else {
        return ui::tell(&d.message, &tr("Choose a device first."), true);
    };
    d.field.set_text(&dev.name);
    d.window.close();
}
