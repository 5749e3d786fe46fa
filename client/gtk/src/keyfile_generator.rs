//! Tools: the Keyfile Generator — `tcctl create-keyfile`'s code
//! (`tcd_client::keyfiles`): a number of keyfiles of random bytes, of one
//! size or random sizes, in a folder under a name (`NAME_1` to `NAME_N`
//! when more than one), new files only their owner may read.

use crate::i18n::{tr, trf};
use crate::ui::{self, Form, spin};
use gtk::prelude::*;
use std::path::PathBuf;
use tcd_client::keyfiles::{MAX_SIZE, MIN_SIZE, generate};

pub fn show(parent: &adw::ApplicationWindow) {
    let window = ui::dialog(parent, &tr("Keyfile Generator"));
    let folder = ui::entry("Folder");
    if let Some(home) = std::env::var_os("HOME") {
        folder.set_text(&home.to_string_lossy());
    }
    let name = ui::entry("Keyfile name");
    name.set_text(&tr("keyfile"));
    let count = spin("Number of keyfiles", 1.0, 1000.0);
    let size = spin(
        "Keyfile size in bytes",
        f64::from(MIN_SIZE),
        f64::from(MAX_SIZE),
    );
    size.set_value(f64::from(MIN_SIZE));
    let random = ui::check("_Random size (up to the size above)");
    let message = ui::message_label("Keyfile Generator message");
    let mut f = Form::new();
    let choose = ui::path_row(
        &window,
        &folder,
        "C_hoose…",
        gtk::FileChooserAction::SelectFolder,
    );
    f.row("_Folder:", &choose);
    f.row("_Name:", &name);
    f.row("N_umber of keyfiles:", &count);
    f.row("_Size (bytes):", &size);
    f.wide(&random);
    let generate_button = ui::button("_Generate");
    generate_button.add_css_class("suggested-action");
    let close = ui::button("_Close");
    let w = window.clone();
    close.connect_clicked(move |_| w.close());
    let body = ui::body(12);
    body.append(&f.grid);
    body.append(&message);
    body.append(&ui::button_row(&[&close, &generate_button]));
    window.set_child(Some(&body));
    generate_button.connect_clicked(move |_| {
        let path = PathBuf::from(folder.text().trim()).join(name.text().trim());
        let n = u32::try_from(count.value_as_int()).unwrap_or(1);
        let bytes = u32::try_from(size.value_as_int()).unwrap_or(MIN_SIZE);
        let randomly = random.is_active();
        let message = message.clone();
        let made = gtk::gio::spawn_blocking(move || generate(&path, n, Some(bytes), randomly));
        gtk::glib::spawn_future_local(async move {
            match made.await {
                Ok(Ok(paths)) => {
                    let shown = paths.first().map(|p| p.display().to_string());
                    let said = trf(
                        "Keyfiles created: {0} ({1})",
                        &[&paths.len(), &shown.unwrap_or_default()],
                    );
                    ui::tell(&message, &said, false);
                }
                Ok(Err(e)) => ui::tell(&message, &e.message, true),
                Err(_) => ui::tell(
                    &message,
                    &tr("the keyfile generator ended abnormally"),
                    true,
                ),
            }
        });
    });
    window.present();
}
