//! The main window's list of mounted volumes: one row each, what `tcctl
//! list` shows in its columns.

use crate::i18n::{tr, trf};
use crate::ui;
use adw::prelude::*;
use tcd_client::bus::Volume;
use tcd_client::output::human_size;

/// The facts of a volume after its host, in words.
pub fn details(v: &Volume) -> String {
    let o = &v.view;
    let at = match v.mount_point() {
        Some(m) => trf("mounted on {0}", &[&m]),
        None => trf("block device {0}", &[&v.device()]),
    };
    let mut parts = vec![
        at,
        o.size.map_or_else(|| "-".into(), human_size),
        o.encryption.clone().unwrap_or_default(),
        o.hash.clone().unwrap_or_default(),
        o.format.clone().unwrap_or_default(),
        if o.read_only.unwrap_or_default() {
            tr("read-only")
        } else {
            tr("read-write")
        },
    ];
    if o.hidden.unwrap_or_default() {
        parts.push(tr("hidden volume"));
    }
    if o.protects_hidden.unwrap_or_default() {
        parts.push(tr("hidden volume protected"));
    }
    let backends = o.backends.clone().unwrap_or_default().join(", ");
    parts.push(trf("backends {0}", &[&backends]));
    if v.health() != "ok" && !v.health().is_empty() {
        parts.push(trf("health: {0}", &[&v.health()]));
    }
    parts.join(" · ")
}

/// One row: the host as its title, the rest below.
pub fn row(v: &Volume) -> adw::ActionRow {
    let r = adw::ActionRow::builder()
        .title(glib_escape(v.host()))
        .subtitle(glib_escape(&details(v)))
        .activatable(true)
        .build();
    ui::named(&r, v.host());
    r.update_property(&[gtk::accessible::Property::Description(&details(v))]);
    r
}

/// Titles are markup: a path with `&` or `<` is shown as it is.
fn glib_escape(s: &str) -> String {
    gtk::glib::markup_escape_text(s).to_string()
}

/// Fills `list` with `volumes`, or its placeholder when there are none.
pub fn fill(list: &gtk::ListBox, volumes: &[Volume]) {
    while let Some(child) = list.first_child() {
        list.remove(&child);
    }
    for v in volumes {
        list.append(&row(v));
    }
}
