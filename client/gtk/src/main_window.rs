//! The main window's state, which every dialog reaches: the list of
//! volumes, the volume to mount, the status line.

use crate::daemon::{self, Target};
use crate::volumes;
use adw::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use tcd_client::bus::Volume;

pub struct Main {
    pub window: adw::ApplicationWindow,
    pub target: Target,
    pub list: gtk::ListBox,
    pub volumes: RefCell<Vec<Volume>>,
    /// The container or device to mount.
    pub volume: gtk::Entry,
    /// What happened last: an error, an automatic dismount.
    pub status: gtk::Label,
}

/// Reads the list again.
pub fn refresh(main: &Rc<Main>) {
    let m = main.clone();
    daemon::run(
        &main.target,
        |c| c.list(),
        move |r| match r {
            Ok(list) => {
                volumes::fill(&m.list, &list);
                *m.volumes.borrow_mut() = list;
            }
            Err(f) => m.status.set_text(&f.message),
        },
    );
}

/// Shows what went wrong (an error as the daemon names it), in the
/// theme's error colour.
pub fn say(main: &Main, text: &str) {
    main.status.add_css_class("error");
    main.status.set_text(text);
}

/// Shows what was done, in the ordinary colour.
pub fn inform(main: &Main, text: &str) {
    main.status.remove_css_class("error");
    main.status.set_text(text);
}

/// The host and mount point of the volume chosen in the list.
pub fn selected(main: &Main) -> Option<(String, Option<String>)> {
    let at = main.list.selected_row()?.index();
    let volumes = main.volumes.borrow();
    let v = volumes.get(usize::try_from(at).ok()?)?;
    Some((v.host().to_owned(), v.mount_point().map(str::to_owned)))
}
