//! Tools: Benchmark — every encryption algorithm's speed on the daemon's
//! backends (a table sorted by any column), and each PRF's header-search
//! cost, with the daemon's progress while it runs.

use crate::daemon::{self, Target};
use crate::i18n::{mark, tr, trf};
use crate::ui;
use gtk::prelude::*;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use tcd_client::bus::{Bench, CipherBench};

/// Buffer sizes offered, in MiB; the first is chosen.
const BUFFERS: [u64; 4] = [10, 1, 100, 1024];

struct Dialog {
    window: gtk::Window,
    buffer: gtk::DropDown,
    run: gtk::Button,
    progress: gtk::ProgressBar,
    ciphers: gtk::Grid,
    kdfs: gtk::Grid,
    message: gtk::Label,
    rows: RefCell<Vec<CipherBench>>,
    /// The column the table is sorted by.
    sort: Cell<usize>,
}

const COLUMNS: [&str; 5] = [
    mark("Encryption"),
    mark("Backends"),
    mark("Encryption (MB/s)"),
    mark("Decryption (MB/s)"),
    mark("Mean (MB/s)"),
];

pub fn show(parent: &adw::ApplicationWindow, target: &Target) {
    let sizes: Vec<String> = BUFFERS.iter().map(|m| trf("{0} MiB", &[m])).collect();
    let d = Rc::new(Dialog {
        window: ui::dialog(parent, &tr("Benchmark")),
        buffer: ui::drop_down("Buffer size", &sizes),
        run: ui::button("_Run Benchmark"),
        progress: gtk::ProgressBar::new(),
        ciphers: table("Encryption algorithms"),
        kdfs: table("PRFs"),
        message: ui::message_label("Benchmark error"),
        rows: RefCell::new(Vec::new()),
        sort: Cell::new(4),
    });
    ui::named(&d.progress, &tr("Benchmark progress"));
    d.progress.set_show_text(true);
    let mut f = ui::Form::new();
    f.row("_Buffer size:", &d.buffer);
    let body = gtk::Box::new(gtk::Orientation::Vertical, 10);
    body.set_margin_start(16);
    body.set_margin_end(16);
    body.set_margin_top(16);
    body.set_margin_bottom(16);
    body.append(&f.grid);
    body.append(&d.run);
    body.append(&d.progress);
    body.append(&d.ciphers);
    body.append(&gtk::Separator::new(gtk::Orientation::Horizontal));
    body.append(&d.kdfs);
    body.append(&d.message);
    d.window.set_child(Some(&body));
    let (dd, t) = (d.clone(), target.clone());
    d.run.connect_clicked(move |_| start(&dd, &t));
    d.window.set_default_widget(Some(&d.run));
    d.window.present();
}

fn table(name: &str) -> gtk::Grid {
    let g = gtk::Grid::builder()
        .row_spacing(4)
        .column_spacing(16)
        .build();
    ui::named(&g, &tr(name));
    g
}

fn start(d: &Rc<Dialog>, target: &Target) {
    d.run.set_sensitive(false);
    d.progress.set_fraction(0.0);
    d.message.set_text("");
    let mib = BUFFERS
        .get(usize::try_from(d.buffer.selected()).unwrap_or(0))
        .copied()
        .unwrap_or(BUFFERS[0]);
    let (tx, rx) = async_channel::unbounded::<(u32, u32)>();
    let bar = d.progress.clone();
    gtk::glib::spawn_future_local(async move {
        while let Ok((done, total)) = rx.recv().await {
            bar.set_fraction(f64::from(done) / f64::from(total.max(1)));
        }
    });
    let dd = d.clone();
    daemon::run(
        target,
        move |c| {
            tcd_client::forms::benchmark(c, mib << 20, move |done, total| {
                let _ = tx.send_blocking((done, total));
            })
        },
        move |r| {
            dd.run.set_sensitive(true);
            match r {
                Ok(bench) => filled(&dd, bench),
                Err(f) => dd.message.set_text(&f.message),
            }
        },
    );
}

fn filled(d: &Rc<Dialog>, bench: Bench) {
    d.progress.set_fraction(1.0);
    let kdf_rows: Vec<Vec<String>> = bench
        .kdfs
        .iter()
        .map(|k| {
            vec![
                k.prf.clone(),
                k.iterations.to_string(),
                format!("{:.0}", k.per_second),
                format!("{:.2}", k.trial_seconds),
            ]
        })
        .collect();
    let heads = [
        mark("PRF"),
        mark("Iterations"),
        mark("Iterations per second"),
        mark("Seconds per trial"),
    ];
    put(
        &d.kdfs,
        &heads.map(|h| gtk::Label::new(Some(&tr(h))).upcast()),
        &kdf_rows,
    );
    *d.rows.borrow_mut() = bench.ciphers;
    sorted(d);
}

/// The cipher table, sorted by the chosen column (speeds fastest first).
fn sorted(d: &Rc<Dialog>) {
    let column = d.sort.get();
    let mut rows = d.rows.borrow().clone();
    rows.sort_by(|a, b| match column {
        0 => a.encryption.cmp(&b.encryption),
        1 => a.backends.cmp(&b.backends),
        2 => b.encrypt_mbs.total_cmp(&a.encrypt_mbs),
        3 => b.decrypt_mbs.total_cmp(&a.decrypt_mbs),
        _ => b.mean_mbs.total_cmp(&a.mean_mbs),
    });
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.encryption.clone(),
                r.backends.clone(),
                format!("{:.0}", r.encrypt_mbs),
                format!("{:.0}", r.decrypt_mbs),
                format!("{:.0}", r.mean_mbs),
            ]
        })
        .collect();
    let heads: Vec<gtk::Widget> = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let b = gtk::Button::with_label(&tr(h));
            b.add_css_class("flat");
            ui::named(&b, &trf("Sort by {0}", &[&tr(h)]));
            let dd = d.clone();
            b.connect_clicked(move |_| {
                dd.sort.set(i);
                sorted(&dd);
            });
            b.upcast()
        })
        .collect();
    put(&d.ciphers, &heads, &cells);
}

/// Replaces `grid`'s cells: `heads` on the first row, then `rows`.
fn put(grid: &gtk::Grid, heads: &[gtk::Widget], rows: &[Vec<String>]) {
    while let Some(child) = grid.first_child() {
        grid.remove(&child);
    }
    for (x, h) in (0..).zip(heads) {
        grid.attach(h, x, 0, 1, 1);
    }
    for (y, row) in (1..).zip(rows) {
        for (x, cell) in (0..).zip(row) {
            let l = gtk::Label::new(Some(cell));
            l.set_xalign(if x == 0 { 0.0 } else { 1.0 });
            l.set_selectable(true);
            grid.attach(&l, x, y, 1, 1);
        }
    }
}
