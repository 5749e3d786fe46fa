//! Keyfiles as a list, as TrueCrypt's Keyfiles window has them: files and
//! folders (a folder means the files in it), added, removed and put in
//! order (the order counts for a TrueCrypt volume's pool).

use crate::i18n::{mark, tr};
use crate::ui;
use gtk::prelude::*;
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

#[derive(Clone)]
pub struct KeyfileList {
    list: gtk::ListBox,
    paths: Rc<RefCell<Vec<PathBuf>>>,
    /// The list and its buttons.
    pub widget: gtk::Box,
}

impl KeyfileList {
    /// A list named `name` ("Keyfiles"), its buttons named after it.
    pub fn new(parent: &gtk::Window, name: &str) -> KeyfileList {
        let list = gtk::ListBox::new();
        ui::named(&list, &tr(name));
        list.set_placeholder(Some(&gtk::Label::new(Some(&tr("No keyfiles")))));
        let scrolled = gtk::ScrolledWindow::builder()
            .child(&list)
            .min_content_height(56)
            .max_content_height(90)
            .propagate_natural_height(true)
            .hexpand(true)
            .build();
        let widget = gtk::Box::new(gtk::Orientation::Vertical, 4);
        widget.append(&scrolled);
        let k = KeyfileList {
            list,
            paths: Rc::default(),
            widget,
        };
        k.widget.append(&k.buttons(parent, name));
        k
    }

    /// Small buttons with icons, each named (and its tooltip saying)
    /// what it does.
    fn buttons(&self, parent: &gtk::Window, name: &str) -> gtk::Box {
        let row = gtk::Box::new(gtk::Orientation::Horizontal, 4);
        let button = |label: &str, icon: &str| {
            let b = gtk::Button::from_icon_name(icon);
            b.set_tooltip_text(Some(&tr(label)));
            ui::named(&b, &format!("{} ({})", tr(label), tr(name)));
            row.append(&b);
            b
        };
        for (label, icon, action) in [
            (
                mark("Add Files…"),
                "list-add-symbolic",
                gtk::FileChooserAction::Open,
            ),
            (
                mark("Add Folder…"),
                "folder-open-symbolic",
                gtk::FileChooserAction::SelectFolder,
            ),
        ] {
            let (k, w, title) = (self.clone(), parent.clone(), tr(label));
            let many = action == gtk::FileChooserAction::Open;
            button(label, icon).connect_clicked(move |_| {
                let k = k.clone();
                ui::pick(&w, &title, action, many, move |p| k.add(p));
            });
        }
        for (label, icon, by) in [
            (mark("Remove"), "list-remove-symbolic", 0),
            (mark("Move Up"), "go-up-symbolic", -1),
            (mark("Move Down"), "go-down-symbolic", 1),
        ] {
            let k = self.clone();
            button(label, icon).connect_clicked(move |_| k.change(by));
        }
        row
    }

    pub fn add(&self, more: Vec<PathBuf>) {
        self.paths.borrow_mut().extend(more);
        self.show(None);
    }

    /// The chosen keyfile removed (`by` 0) or moved up or down by one.
    fn change(&self, by: i32) {
        let Some(at) = self.list.selected_row().map(|r| r.index()) else {
            return;
        };
        let Ok(i) = usize::try_from(at) else { return };
        let mut paths = self.paths.borrow_mut();
        let to = i
            .checked_add_signed(by as isize)
            .filter(|t| *t < paths.len());
        let selected = match (by, to) {
            (0, _) if i < paths.len() => {
                paths.remove(i);
                None
            }
            (_, Some(t)) => {
                paths.swap(i, t);
                Some(t)
            }
            _ => Some(i),
        };
        drop(paths);
        self.show(selected);
    }

    fn show(&self, selected: Option<usize>) {
        while let Some(child) = self.list.first_child() {
            self.list.remove(&child);
        }
        for p in self.paths.borrow().iter() {
            let shown = p.to_string_lossy();
            let label = gtk::Label::new(Some(&shown));
            label.set_xalign(0.0);
            self.list.append(&label);
        }
        let row = selected.and_then(|s| self.list.row_at_index(i32::try_from(s).ok()?));
        self.list.select_row(row.as_ref());
    }

    /// The keyfiles in their order.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.paths.borrow().clone()
    }
}
