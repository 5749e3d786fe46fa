//! The layering of the source tree, read from the `crate::` paths of every
//! file: the top-level modules of the daemon and of `tcctl` import each
//! other without a cycle, the application layer knows nothing of D-Bus,
//! and nothing below the D-Bus service imports it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use tcd_tests::repo_dir;

/// Modules of the daemon below the D-Bus service: none may import it.
const BELOW_SERVICE: &[&str] = &[
    "engine",
    "trust",
    "volume",
    "mount",
    "mounts",
    "favorites",
    "policy",
    "backends",
    "cache",
    "events",
    "benchmark",
    "hardening",
    "memory",
    "error",
    "app",
];

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a folder entry").path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The top-level module a file belongs to (`engine` for `engine/mod.rs`,
/// `engine.rs` and `engine/loader.rs`), or `None` for the crate root.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).expect("a file under src");
    let first = rel.components().next()?.as_os_str().to_str()?.to_owned();
    if rel.components().count() > 1 {
        return Some(first);
    }
    let stem = first.strip_suffix(".rs")?;
    (stem != "lib" && stem != "main").then(|| stem.to_owned())
}

/// The text without `//` comments, so that prose naming a module is no
/// import.
fn code_only(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The top-level modules a text names through `crate::x` or
/// `crate::{x, y::z}`.
fn crate_imports(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        // `$crate::` in a macro or a longer name ending in "crate".
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let tail = rest.trim_start();
        if let Some(group) = tail.strip_prefix('{') {
            // The first name of each item at depth 0 of the group.
            let mut depth = 0usize;
            let mut item_start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_ascii_alphabetic() || c == '_') => {
                        item_start = false;
                        if depth == 0 {
                            out.insert(ident_at(&group[i..]).to_owned());
                        }
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident_at(tail);
            if !name.is_empty() {
                out.insert(name.to_owned());
            }
        }
    }
    out
}

/// The module graph of one crate: each top-level module and the other
/// top-level modules it imports, with the file of each import.
struct Graph {
    edges: BTreeMap<String, BTreeMap<String, PathBuf>>,
    /// Each module's files with their comment-free text.
    files: BTreeMap<String, Vec<(PathBuf, String)>>,
}

fn graph(src: &Path) -> Graph {
    let mut g = Graph {
        edges: BTreeMap::new(),
        files: BTreeMap::new(),
    };
    let files = rust_files(src);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(src, f)).collect();
    assert!(
        modules.len() >= 3,
        "{} has too few modules to be read",
        src.display()
    );
    for file in files {
        let Some(module) = module_of(src, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("a source file");
        let code = code_only(&text);
        let edges = g.edges.entry(module.clone()).or_default();
        for target in crate_imports(&code) {
            if target != module && modules.contains(&target) {
                edges.entry(target).or_insert_with(|| file.clone());
            }
        }
        g.files.entry(module).or_default().push((file, code));
    }
    g
}

/// A cycle through the modules, as `a -> b -> a` with the file of each
/// import, or `None`.
fn find_cycle(g: &Graph) -> Option<String> {
    // Depth-first search with the path on a stack: an edge back into the
    // path closes a cycle.
    fn visit(
        g: &Graph,
        node: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in g.edges.get(node).into_iter().flat_map(|e| e.keys()) {
            if let Some(cycle) = visit(g, next, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for node in g.edges.keys() {
        if let Some(cycle) = visit(g, node, &mut Vec::new(), &mut done) {
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|w| format!("{} -> {} ({})", w[0], w[1], g.edges[&w[0]][&w[1]].display()))
                .collect();
            return Some(steps.join(", "));
        }
    }
    None
}

#[test]
fn the_daemon_modules_import_each_other_without_a_cycle() {
    let g = graph(&repo_dir().join("daemon/src"));
    assert!(g.edges.contains_key("engine") && g.edges.contains_key("service"));
    if let Some(cycle) = find_cycle(&g) {
        panic!("the daemon's modules import each other in a cycle: {cycle}");
    }
}

#[test]
fn the_client_modules_import_each_other_without_a_cycle() {
    let g = graph(&repo_dir().join("client/src"));
    if let Some(cycle) = find_cycle(&g) {
        panic!("tcctl's modules import each other in a cycle: {cycle}");
    }
}

#[test]
fn the_desktop_application_modules_import_each_other_without_a_cycle() {
    let g = graph(&repo_dir().join("client/gtk/src"));
    assert!(g.edges.contains_key("window"));
    if let Some(cycle) = find_cycle(&g) {
        panic!("tcd-gtk's modules import each other in a cycle: {cycle}");
    }
}

/// The desktop application is a thin layer over the client library: it
/// makes no D-Bus call of its own (every call, descriptor and option struct
/// is `tcd_client`'s, shared with tcctl).
#[test]
fn the_desktop_application_talks_to_the_daemon_through_the_client_library() {
    let g = graph(&repo_dir().join("client/gtk/src"));
    let mut files = 0;
    for (file, code) in g.files.values().flatten() {
        files += 1;
        assert!(
            !code.contains("zbus"),
            "{} calls D-Bus itself; the client library (client/src) does that",
            file.display()
        );
    }
    assert!(files > 3, "sources of tcd-gtk found: {files}");
    let manifest = std::fs::read_to_string(repo_dir().join("client/gtk/Cargo.toml"))
        .expect("client/gtk/Cargo.toml");
    assert!(!manifest.contains("zbus"), "tcd-gtk depends on zbus itself");
}

#[test]
fn nothing_below_the_dbus_service_imports_it() {
    let g = graph(&repo_dir().join("daemon/src"));
    for (module, edges) in &g.edges {
        if BELOW_SERVICE.contains(&module.as_str())
            && let Some(file) = edges.get("service")
        {
            panic!(
                "`{module}` is below the D-Bus service but imports it ({})",
                file.display()
            );
        }
    }
}

#[test]
fn the_application_layer_knows_nothing_of_dbus() {
    let g = graph(&repo_dir().join("daemon/src"));
    for (file, code) in g.files.get("app").into_iter().flatten() {
        let word = "zbus";
        let named = code.match_indices(word).any(|(at, _)| {
            let before = code[..at].chars().next_back();
            let after = code[at + word.len()..].chars().next();
            !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        assert!(
            !named,
            "{} (the application layer) uses zbus",
            file.display()
        );
    }
}

#[test]
fn the_import_reader_finds_grouped_and_nested_paths() {
    // The reader itself: a group, a nested group, a path in an expression,
    // and what is no import.
    let code = code_only(
        "use crate::{engine::Engine, volume::{a, b}, mount};\n\
         let x = crate::policy::load();\n\
         // crate::service in a comment\n\
         macro_rules! m { () => { $crate::cache::x } }\n",
    );
    let found: Vec<String> = crate_imports(&code).into_iter().collect();
    assert_eq!(found, ["engine", "mount", "policy", "volume"]);
}
