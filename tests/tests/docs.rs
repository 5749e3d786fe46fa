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
    let mut names: Vec<String> = std::fs::read_dir(man.path())
        .expect("the generated pages")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".1") || n.ends_with(".8"))
        .collect();
    names.sort();
    for name in names {
        let text = std::fs::read_to_string(man.path().join(&name)).expect("a man page");
        out.push((name, text));
    }
    out
}

#[test]
fn every_manual_page_a_page_refers_to_is_made_and_tcctl_1_has_its_sections() {
    let pages = pages();
    let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"tcctl-mount.1"), "{names:?}");
    for (name, text) in &pages {
        // clap_mangen writes a reference as `tcctl\-mount(1)`.
        let plain = text.replace("\\-", "-");
        for (at, _) in plain.match_indices("(1)") {
            let start = plain[..at]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(0, |i| i + 1);
            let page = &plain[start..at];
            if page.starts_with("tcctl") {
                assert!(
                    names.contains(&format!("{page}.1").as_str()),
                    "{name} refers to {page}(1), which is not made"
                );
            }
        }
    }
    let main = &pages
        .iter()
        .find(|(n, _)| n == "tcctl.1")
        .expect("tcctl.1")
        .1;
    for section in ["EXIT STATUS", "EXAMPLES", "FILES", "ENVIRONMENT"] {
        assert!(
            main.contains(&format!(".SH \"{section}\"")),
            "no {section} in tcctl.1"
        );
    }
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
