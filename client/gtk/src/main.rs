//! `tcd-gtk`: the desktop application of the tcd daemon, a second thin
//! client beside `tcctl`. Everything it asks of the daemon goes through the
//! shared client library (`tcd_client`): hosts and keyfiles are opened with
//! the user's own rights and handed over as descriptors and bytes, and no
//! password outlives the call it was typed for.

mod benchmark;
mod daemon;
mod devices;
mod favorites;
mod i18n;
mod keyfile_generator;
mod keyfile_list;
mod main_window;
mod mount_dialog;
mod performance;
mod preferences;
mod settings;
mod ui;
mod volume_tools;
mod volumes;
mod window;
mod wizard;

use gtk::{gio, glib, prelude::*};

/// The application's id: its D-Bus name, desktop file and metainfo.
pub const APP_ID: &str = "org.tcd.Desktop";

fn main() -> glib::ExitCode {
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!("tcd-gtk: runs as a user, not as root: the daemon does what needs root");
        return glib::ExitCode::from(1);
    }
    i18n::init();
    let target = match daemon::Target::from_args(std::env::args_os().skip(1)) {
        Ok(Some(t)) => t,
        Ok(None) => return glib::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tcd-gtk: {e}");
            return glib::ExitCode::from(64);
        }
    };
    let app = adw::Application::builder()
        .application_id(APP_ID)
        .flags(gio::ApplicationFlags::NON_UNIQUE)
        .build();
    app.connect_activate(move |app| window::build(app, target.clone()));
    // The options are ours, read above: GTK is given none.
    app.run_with_args::<&str>(&[])
}
