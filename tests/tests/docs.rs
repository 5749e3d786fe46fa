//! What a reader of the documentation meets: pages that describe the
//! program as it is. No issue numbers (they mean nothing to a reader), no
//! parts announced as planned, no source-tree paths in the man pages, and
//! every page the README names exists.

use std::path::PathBuf;
use std::process::Command;
use tcd_tests::{build_dir, repo_dir};

/// Each documentation page: the README, docs/*.md and the man pages the
/// binaries generate.
fn pages() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut files: Vec<PathBuf> = vec![repo_dir().join("README.md")];
    files.extend(
        std::fs::read_dir(repo_dir().join("docs"))
            .expect("docs/")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    for f in files {
        let text = std::fs::read_to_string(&f).expect("a page");
        out.push((f.display().to_string(), text));
    }
    let man = tempfile::tempdir().expect("temp dir");
    for (bin, flag) in [("tcd", "--generate-man"), ("tcctl", "generate-dist")] {
        let st = Command::new(build_dir().join(bin))
            .arg(flag)
            .arg(man.path())
            .status()
            .expect("generate the man pages");
        assert!(st.success(), "{bin} {flag}");
    }
    for name in ["tcd.8", "tcctl.1"] {
        let text = std::fs::read_to_string(man.path().join(name)).expect("a man page");
        out.push((name.to_owned(), text));
    }
    out
}

/// `word` followed by a number ("issue 4", "issue #12").
fn cites_a_number(text: &str, word: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let mut rest = lower.as_str();
    while let Some(at) = rest.find(word) {
        let after = rest[at + word.len()..].trim_start_matches([' ', '#', 's']);
        if after.starts_with(|c: char| c.is_ascii_digit()) {
            return Some(rest[at..].chars().take(40).collect());
        }
        rest = &rest[at + word.len()..];
    }
    None
}

#[test]
fn pages_cite_no_issue_numbers_and_announce_nothing_as_planned() {
    for (name, text) in pages() {
        for word in ["issue", "ticket"] {
            assert_eq!(
                cites_a_number(&text, word),
                None,
                "{name} cites an {word} number"
            );
        }
        for stale in ["(planned)", "*(planned)*", "until it lands", "later issues"] {
            assert!(!text.contains(stale), "{name}: {stale:?}");
        }
    }
}

#[test]
fn man_pages_name_installed_paths_not_the_source_tree() {
    for (name, text) in pages().into_iter().filter(|(n, _)| !n.ends_with(".md")) {
        for tree in [" dist/", "(dist/", " target/", "../"] {
            assert!(!text.contains(tree), "{name} names {tree:?}");
        }
    }
}

#[test]
fn every_page_the_readme_names_exists() {
    let readme = std::fs::read_to_string(repo_dir().join("README.md")).expect("README");
    let named: Vec<&str> = readme
        .split("docs/")
        .skip(1)
        .filter_map(|rest| rest.split_once(".md").map(|(name, _)| name))
        .filter(|n| {
            n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        })
        .collect();
    assert!(named.len() >= 4, "the README links the docs: {named:?}");
    for page in named {
        let path = repo_dir().join("docs").join(format!("{page}.md"));
        assert!(path.is_file(), "README names {}", path.display());
    }
}
