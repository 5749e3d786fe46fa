//! The top of the house stays thin: no function of the client, the D-Bus
//! service or the application layer grows past about 80 lines (a long
//! function there is orchestration that belongs in a module of its own).

use std::path::{Path, PathBuf};

/// The longest a function may be, in lines from `fn` to its closing brace.
const MAX_LINES: usize = 85;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read source folder") {
        let path = entry.expect("folder entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Whether `line` starts a function item (not a closure or a call).
fn starts_fn(line: &str) -> bool {
    let t = line.trim_start();
    let t = t.strip_prefix("pub(crate) ").unwrap_or(t);
    let t = t.strip_prefix("pub(super) ").unwrap_or(t);
    let t = t.strip_prefix("pub ").unwrap_or(t);
    let t = t.strip_prefix("const ").unwrap_or(t);
    let t = t.strip_prefix("async ").unwrap_or(t);
    let t = t.strip_prefix("unsafe ").unwrap_or(t);
    t.starts_with("fn ")
}

/// (name, first line, length) of every function in `text`: from its `fn`
/// line to the line where its braces close. Braces inside strings and
/// comments are rare enough here to count as they come.
fn functions(text: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !starts_fn(line) {
            continue;
        }
        let name = line
            .split("fn ")
            .nth(1)
            .and_then(|r| r.split(['(', '<']).next())
            .unwrap_or("?")
            .to_owned();
        let (mut depth, mut opened) = (0i64, false);
        for (j, l) in lines.iter().enumerate().skip(i) {
            if !opened && l.trim_end().ends_with(';') {
                break; // a declaration without a body
            }
            for c in l.chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if opened && depth <= 0 {
                out.push((name, i + 1, j - i + 1));
                break;
            }
        }
    }
    out
}

#[test]
fn no_function_of_the_client_service_or_application_is_long() {
    let root = tcd_tests::repo_dir();
    let mut files = Vec::new();
    for dir in [
        "client/src",
        "client/gtk/src",
        "daemon/src/service",
        "daemon/src/app",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 10, "sources found: {files:?}");
    let mut long = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read source");
        for (name, line, n) in functions(&text) {
            if n > MAX_LINES {
                long.push(format!("{}:{line} {name}: {n} lines", f.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions past {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_counter_sees_a_long_function() {
    let body: String = (0..100)
        .map(|i| format!("    let x{i} = {{ {i} }};\n"))
        .collect();
    let text = format!("pub async fn long() {{\n{body}}}\nfn short() {{}}\n");
    let found = functions(&text);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0], ("long".to_owned(), 1, 102));
    assert_eq!(found[1].2, 1);
}
