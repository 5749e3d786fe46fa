//! Settings: the Preferences page — what a new Mount dialog starts with
//! (read-only, mount point, caching the password, dismounting when idle),
//! saved as the user changes it — and Wipe Cache, which has the daemon
//! forget every password it keeps for the user.

use crate::daemon::{self, Target};
use crate::i18n::{tr, trn};
use crate::settings::{self, Settings};
use crate::ui::{self, Form};
use adw::prelude::*;
use std::rc::Rc;

struct Page {
    readonly: gtk::CheckButton,
    mount_point: gtk::Entry,
    cache: gtk::CheckButton,
    idle: gtk::SpinButton,
    message: gtk::Label,
}

/// The page, filled with the settings saved.
pub fn page(target: &Target) -> adw::PreferencesPage {
    let p = Rc::new(Page {
        readonly: ui::check("Mount volumes _read-only"),
        mount_point: ui::entry("Default mount point"),
        cache: ui::check("_Cache passwords in the daemon"),
        idle: ui::spin("Dismount after idle minutes", 0.0, 10_000.0),
        message: ui::message_label("Preferences message"),
    });
    let s = settings::load();
    p.readonly.set_active(s.readonly);
    p.mount_point.set_text(&s.mount_point);
    p.cache.set_active(s.cache_password);
    p.idle.set_value(f64::from(s.dismount_idle_minutes));
    let page = adw::PreferencesPage::builder()
        .title(tr("Preferences"))
        .icon_name("preferences-system-symbolic")
        .build();
    let mount = adw::PreferencesGroup::builder()
        .title(tr("Default mount options"))
        .description(tr("What the Mount dialog starts with."))
        .build();
    let mut f = Form::new();
    f.wide(&p.readonly);
    f.row("Default _mount point (empty: chosen):", &p.mount_point);
    f.wide(&p.cache);
    f.row("Dismount after _idle minutes (0: never):", &p.idle);
    mount.add(&f.grid);
    page.add(&mount);
    page.add(&cache_group(target, &p));
    wire(&p);
    page
}

fn cache_group(target: &Target, p: &Rc<Page>) -> adw::PreferencesGroup {
    let g = adw::PreferencesGroup::builder()
        .title(tr("Password cache"))
        .description(tr(
            "Passwords the daemon keeps for you, for mounts that asked to cache them.",
        ))
        .build();
    let wipe = ui::button("_Wipe Cache");
    wipe.set_halign(gtk::Align::Start);
    let (t, pp) = (target.clone(), p.clone());
    wipe.connect_clicked(move |_| {
        let pp = pp.clone();
        daemon::run(
            &t,
            |c| c.wipe_cache(),
            move |r| match r {
                Ok(n) => {
                    let said = trn(
                        "{0} cached password wiped",
                        "{0} cached passwords wiped",
                        n.into(),
                    );
                    ui::tell(&pp.message, &said, false);
                }
                Err(f) => ui::tell(&pp.message, &f.message, true),
            },
        );
    });
    g.add(&wipe);
    g.add(&p.message);
    g
}

/// Every change is saved at once.
fn wire(p: &Rc<Page>) {
    let save = {
        let p = p.clone();
        move || {
            let s = Settings {
                readonly: p.readonly.is_active(),
                mount_point: p.mount_point.text().trim().to_owned(),
                cache_password: p.cache.is_active(),
                dismount_idle_minutes: p.idle.value_as_int().try_into().unwrap_or(0),
            };
            if let Err(e) = settings::save(&s) {
                ui::tell(&p.message, &e, true);
            }
        }
    };
    let s = save.clone();
    p.readonly.connect_toggled(move |_| s());
    let s = save.clone();
    p.cache.connect_toggled(move |_| s());
    let s = save.clone();
    p.mount_point.connect_changed(move |_| s());
    p.idle.connect_value_changed(move |_| save());
}
