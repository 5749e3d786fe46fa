//! Settings: the Preferences page (preferences.rs), and the Performance
//! page — whether the processor has AES
//! instructions, hardware acceleration and the allowed backends as the
//! policy in force says, and every backend the daemon found. A change is
//! a new policy sent to the daemon, where polkit decides; for a user
//! polkit would refuse, the switches are greyed with the reason.

use crate::daemon::{self, Target};
use crate::i18n::{tr, trf};
use crate::ui;
use adw::prelude::*;
use std::rc::Rc;
use tcd_client::bus::{Backend, Failure, PolicyView};
use tcd_client::polkit::{self, Permission};

/// What the page shows, read in one go.
struct State {
    cpu_aes: bool,
    backends: Vec<Backend>,
    policy: PolicyView,
    /// Why the user may not change it; `None` if they may.
    refused: Option<String>,
}

fn read(c: &tcd_client::bus::Client) -> Result<State, Failure> {
    let (cpu_aes, backends) = c.backends()?;
    let policy = c.policy()?;
    let refused = match polkit::check("org.tcd.set-policy") {
        Ok(Permission::No) => Some(tr(
            "Only an administrator may change the backend policy (polkit refuses \
             org.tcd.set-policy to your account).",
        )),
        // On the daemon's own socket (root's) there is no polkit to ask.
        Ok(_) | Err(_) => None,
    };
    Ok(State {
        cpu_aes,
        backends,
        policy,
        refused,
    })
}

pub fn show(parent: &adw::ApplicationWindow, target: &Target) {
    let window = adw::PreferencesWindow::builder()
        .title(tr("Settings"))
        .modal(true)
        .transient_for(parent)
        .build();
    let page = adw::PreferencesPage::builder()
        .title(tr("Performance"))
        .icon_name("power-profile-performance-symbolic")
        .build();
    window.add(&crate::preferences::page(target));
    window.add(&page);
    window.present();
    let t = target.clone();
    daemon::run(target, read, move |r| match r {
        Ok(state) => fill(&page, &t, Rc::new(state)),
        Err(f) => {
            let g = adw::PreferencesGroup::new();
            g.add(
                &adw::ActionRow::builder()
                    .title(glib_escape(&f.message))
                    .build(),
            );
            page.add(&g);
        }
    });
}

fn glib_escape(s: &str) -> String {
    gtk::glib::markup_escape_text(s).to_string()
}

/// A row saying `title` and `value` in one line (read as one by AT-SPI).
fn fact(title: &str, value: &str) -> adw::ActionRow {
    adw::ActionRow::builder()
        .title(glib_escape(&format!("{title} {value}")))
        .title_lines(0)
        .build()
}

/// A row with a switch named `title`.
fn switch_row(
    title: &str,
    subtitle: &str,
    on: bool,
    state: &State,
) -> (adw::ActionRow, gtk::Switch) {
    let s = gtk::Switch::builder()
        .active(on)
        .valign(gtk::Align::Center)
        .build();
    ui::named(&s, title);
    let row = adw::ActionRow::builder()
        .title(glib_escape(title))
        .subtitle(glib_escape(subtitle))
        .activatable_widget(&s)
        .build();
    row.add_suffix(&s);
    if let Some(why) = &state.refused {
        row.set_sensitive(false);
        row.set_tooltip_text(Some(why));
    }
    (row, s)
}

fn fill(page: &adw::PreferencesPage, target: &Target, state: Rc<State>) {
    let hw = adw::PreferencesGroup::builder()
        .title(tr("Hardware acceleration"))
        .build();
    let yes_no = if state.cpu_aes { tr("Yes") } else { tr("No") };
    hw.add(&fact(
        &tr("Processor (CPU) in this computer supports hardware acceleration for AES:"),
        &yes_no,
    ));
    hw.add(&fact(
        &tr("Hardware acceleration by the policy in force:"),
        &state.policy.hardware_acceleration,
    ));
    let allowed_now = if state.policy.all_allowed {
        tr("all")
    } else {
        state.policy.allowed.join(", ")
    };
    hw.add(&fact(&tr("Backends the policy allows:"), &allowed_now));
    let accel_on = state.policy.hardware_acceleration != "disabled";
    let (row, accel) = switch_row(
        &tr("Accelerate AES with processor instructions"),
        &tr("Off: only backends without processor crypto instructions are used."),
        accel_on,
        &state,
    );
    hw.add(&row);
    if let Some(why) = &state.refused {
        hw.add(&fact(&tr("You may not change these settings:"), why));
    }
    page.add(&hw);
    let allowed = adw::PreferencesGroup::builder()
        .title(tr("Backends"))
        .description(tr("Allowed by the policy in force; a change asks polkit."))
        .build();
    let mut switches = Vec::new();
    for b in state.backends.iter().filter(|b| !b.name.is_empty()) {
        let on = state.policy.all_allowed || state.policy.allowed.contains(&b.name);
        let subtitle = backend_facts(b);
        let (row, s) = switch_row(&b.name, &subtitle, on, &state);
        allowed.add(&row);
        switches.push((b.name.clone(), s));
    }
    page.add(&allowed);
    wire(target, &state, accel, switches);
}

fn backend_facts(b: &Backend) -> String {
    let mut facts = vec![b.description.clone(), trf("version {0}", &[&b.version])];
    facts.push(if b.loaded {
        tr("loaded")
    } else {
        tr("not loaded")
    });
    if !b.available {
        facts.push(tr("not available on this processor"));
    }
    facts.push(b.ciphers.join(", "));
    facts.join(" · ")
}

/// Any switch changed: the whole setting is sent as a new policy.
fn wire(
    target: &Target,
    state: &Rc<State>,
    accel: gtk::Switch,
    backends: Vec<(String, gtk::Switch)>,
) {
    let all: Rc<Vec<(String, gtk::Switch)>> = Rc::new(backends);
    let switches: Vec<gtk::Switch> = std::iter::once(accel.clone())
        .chain(all.iter().map(|(_, s)| s.clone()))
        .collect();
    for s in switches {
        let (t, st, a, all) = (target.clone(), state.clone(), accel.clone(), all.clone());
        s.connect_state_set(move |_, _| {
            // Read after the switch moved.
            let (t, st, a, all) = (t.clone(), st.clone(), a.clone(), all.clone());
            gtk::glib::idle_add_local_once(move || send(&t, &st, &a, &all));
            gtk::glib::Propagation::Proceed
        });
    }
}

fn send(target: &Target, state: &State, accel: &gtk::Switch, all: &[(String, gtk::Switch)]) {
    let allowed: Vec<String> = all
        .iter()
        .filter(|(_, s)| s.is_active())
        .map(|(n, _)| n.clone())
        .collect();
    let every = allowed.len() == all.len();
    let text = tcd_client::forms::policy_with(
        &state.policy,
        accel.is_active(),
        (!every).then_some(allowed),
    );
    let window = accel.root().and_downcast::<gtk::Window>();
    daemon::run(
        target,
        move |c| c.set_policy(&text?),
        move |r| {
            if let (Err(f), Some(w)) = (r, window) {
                let d = adw::MessageDialog::new(
                    Some(&w),
                    Some(&tr("The policy was not changed")),
                    Some(&f.message),
                );
                d.add_response("close", &tr("_Close"));
                d.present();
            }
        },
    );
}
