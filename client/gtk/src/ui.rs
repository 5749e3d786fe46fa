//! Small builders every window shares: controls with an accessible name
//! and a mnemonic, a labelled form grid, messages.

use crate::i18n::tr;
use adw::prelude::*;
use gtk::glib;

/// Gives `w` the accessible name `name` (what a screen reader says and
/// what AT-SPI finds it by).
pub fn named<W: IsA<gtk::Accessible>>(w: &W, name: &str) {
    w.update_property(&[gtk::accessible::Property::Label(name)]);
}

/// A button with a mnemonic (`_Mount`) and its label, without the
/// underscore, as its accessible name.
pub fn button(label: &str) -> gtk::Button {
    let b = gtk::Button::with_mnemonic(&tr(label));
    named(&b, &tr(label).replace('_', ""));
    b
}

/// A check button with a mnemonic, named as [`button`].
pub fn check(label: &str) -> gtk::CheckButton {
    let c = gtk::CheckButton::with_mnemonic(&tr(label));
    named(&c, &tr(label).replace('_', ""));
    c
}

/// A radio button (put in a group with `set_group`), named as [`button`].
pub fn radio(label: &str) -> gtk::CheckButton {
    check(label)
}

/// A text entry named `name`.
pub fn entry(name: &str) -> gtk::Entry {
    let e = gtk::Entry::new();
    e.set_hexpand(true);
    named(&e, &tr(name));
    e
}

/// A drop-down of `items` named `name`, the first chosen.
pub fn drop_down(name: &str, items: &[String]) -> gtk::DropDown {
    let refs: Vec<&str> = items.iter().map(String::as_str).collect();
    let d = gtk::DropDown::from_strings(&refs);
    named(&d, &tr(name));
    d
}

/// The chosen string of a drop-down made by [`drop_down`].
pub fn chosen(d: &gtk::DropDown) -> String {
    d.selected_item()
        .and_downcast::<gtk::StringObject>()
        .map(|s| s.string().to_string())
        .unwrap_or_default()
}

/// A two-column form: a label with a mnemonic, then its control.
pub struct Form {
    pub grid: gtk::Grid,
    rows: i32,
}

impl Form {
    pub fn new() -> Form {
        let grid = gtk::Grid::builder()
            .row_spacing(8)
            .column_spacing(12)
            .build();
        Form { grid, rows: 0 }
    }

    /// Adds `control` under `label`, which activates it by its mnemonic.
    pub fn row(&mut self, label: &str, control: &impl IsA<gtk::Widget>) {
        let l = gtk::Label::with_mnemonic(&tr(label));
        l.set_xalign(0.0);
        l.set_mnemonic_widget(Some(control));
        self.grid.attach(&l, 0, self.rows, 1, 1);
        self.grid.attach(control, 1, self.rows, 1, 1);
        self.rows += 1;
    }

    /// Adds `control` across both columns.
    pub fn wide(&mut self, control: &impl IsA<gtk::Widget>) {
        self.grid.attach(control, 0, self.rows, 2, 1);
        self.rows += 1;
    }
}

/// A label for messages (errors, what happened): wraps, selectable, and
/// read by AT-SPI under `name`.
pub fn message_label(name: &str) -> gtk::Label {
    let l = gtk::Label::new(None);
    l.set_wrap(true);
    l.set_xalign(0.0);
    l.set_selectable(true);
    l.add_css_class("error");
    named(&l, &tr(name));
    l
}

/// Shows `text` in a message label, in the theme's error colour when
/// `error`.
pub fn tell(label: &gtk::Label, text: &str, error: bool) {
    if error {
        label.add_css_class("error");
    } else {
        label.remove_css_class("error");
    }
    label.set_text(text);
}

/// A column of a dialog: a heading, then `parts`.
pub fn column(heading: &str, parts: &[&gtk::Widget]) -> gtk::Box {
    let column = gtk::Box::new(gtk::Orientation::Vertical, 8);
    column.set_hexpand(true);
    let l = gtk::Label::new(Some(&tr(heading)));
    l.set_xalign(0.0);
    l.add_css_class("heading");
    column.append(&l);
    for p in parts {
        column.append(*p);
    }
    column
}

/// A modal window over `parent` with a header bar; Escape closes it.
pub fn dialog(parent: &impl IsA<gtk::Window>, title: &str) -> gtk::Window {
    let w = gtk::Window::builder()
        .title(title)
        .modal(true)
        .transient_for(parent)
        .default_width(520)
        .accessible_role(gtk::AccessibleRole::Dialog)
        .build();
    w.set_titlebar(Some(&gtk::HeaderBar::new()));
    let keys = gtk::EventControllerKey::new();
    let closing = w.clone();
    keys.connect_key_pressed(move |_, key, _, _| {
        if key == gtk::gdk::Key::Escape {
            closing.close();
            return glib::Propagation::Stop;
        }
        glib::Propagation::Proceed
    });
    w.add_controller(keys);
    w
}

/// Asks `question` with `yes` and Cancel; `then` runs on `yes`.
pub fn ask(
    parent: &impl IsA<gtk::Window>,
    heading: &str,
    body: &str,
    yes: &str,
    then: impl Fn() + 'static,
) {
    let d = adw::MessageDialog::new(Some(parent), Some(heading), Some(body));
    d.add_response("cancel", &tr("_Cancel"));
    d.add_response("yes", yes);
    d.set_response_appearance("yes", adw::ResponseAppearance::Destructive);
    d.set_default_response(Some("cancel"));
    d.connect_response(None, move |_, r| {
        if r == "yes" {
            then();
        }
    });
    d.present();
}

/// A spin button of whole numbers from `low` to `high`, named `name`.
pub fn spin(name: &str, low: f64, high: f64) -> gtk::SpinButton {
    let s = gtk::SpinButton::with_range(low, high, 1.0);
    named(&s, &tr(name));
    s
}

/// A password entry with the show toggle, named `name`.
pub fn password_entry(name: &str) -> gtk::PasswordEntry {
    let p = gtk::PasswordEntry::new();
    p.set_show_peek_icon(true);
    p.set_hexpand(true);
    named(&p, &tr(name));
    p
}

/// The text of a password entry as bytes that are wiped when dropped.
pub fn secret(p: &gtk::PasswordEntry) -> zeroize::Zeroizing<Vec<u8>> {
    zeroize::Zeroizing::new(p.text().as_bytes().to_vec())
}

/// A vertical box with the margins of a dialog's content.
pub fn body(spacing: i32) -> gtk::Box {
    let b = gtk::Box::new(gtk::Orientation::Vertical, spacing);
    b.set_margin_start(16);
    b.set_margin_end(16);
    b.set_margin_top(16);
    b.set_margin_bottom(16);
    b
}

/// A row of buttons at the end of a dialog.
pub fn button_row(buttons: &[&gtk::Button]) -> gtk::Box {
    let row = gtk::Box::new(gtk::Orientation::Horizontal, 8);
    row.set_halign(gtk::Align::End);
    for b in buttons {
        row.append(*b);
    }
    row
}

/// Asks for files (or a folder, or a new file's name with `Save`) with
/// the desktop's chooser; `then` gets the paths chosen.
pub fn pick(
    parent: &impl IsA<gtk::Window>,
    title: &str,
    action: gtk::FileChooserAction,
    many: bool,
    then: impl Fn(Vec<std::path::PathBuf>) + 'static,
) {
    let chooser = gtk::FileChooserNative::new(
        Some(title),
        Some(parent),
        action,
        Some(&tr("_Select")),
        Some(&tr("_Cancel")),
    );
    chooser.set_select_multiple(many);
    let held = keep_until_answered(&chooser);
    chooser.connect_response(move |c, r| {
        held.take();
        if r != gtk::ResponseType::Accept {
            return;
        }
        let files = c.files();
        let paths = files
            .iter::<gtk::gio::File>()
            .flatten()
            .filter_map(|f| f.path())
            .collect();
        then(paths);
    });
    chooser.show();
}

/// Keeps `chooser` alive until it is answered: a native dialog nobody
/// holds is destroyed, and its window with it, as soon as it is shown.
/// Its response handler empties what this returns.
pub fn keep_until_answered(
    chooser: &gtk::FileChooserNative,
) -> std::rc::Rc<std::cell::RefCell<Option<gtk::FileChooserNative>>> {
    std::rc::Rc::new(std::cell::RefCell::new(Some(chooser.clone())))
}

/// A text entry and a button that fills it with a path chosen.
pub fn path_row(
    parent: &gtk::Window,
    entry: &gtk::Entry,
    button: &str,
    action: gtk::FileChooserAction,
) -> gtk::Box {
    let row = gtk::Box::new(gtk::Orientation::Horizontal, 6);
    let choose = self::button(button);
    let (w, e, title) = (
        parent.clone(),
        entry.clone(),
        tr(button).replace(['_', '…'], ""),
    );
    choose.connect_clicked(move |_| {
        let e = e.clone();
        pick(&w, &title, action, false, move |p| {
            if let Some(p) = p.first() {
                e.set_text(&p.to_string_lossy());
            }
        });
    });
    row.append(entry);
    row.append(&choose);
    row
}
