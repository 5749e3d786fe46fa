//! The `a{sv}` option keys of the API as `tcctl` spells them. The daemon's
//! messages name keys (its callers speak D-Bus); `tcctl` shows them to
//! its user with the options they typed.

/// Each option key of `Mount`, `HeaderInfo`, `Create`, `Expand`,
/// `ChangePassword` and `Dismount`, and what a `tcctl` user gives for it.
/// A key of several methods has one spelling: the one of the commands
/// that open a volume; `ChangePassword`'s new side is named `new_KEY` in
/// the daemon's errors.
pub const TCCTL_FLAGS: &[(&str, &str)] = &[
    ("hash", "--hash"),
    ("encryption", "--encryption"),
    ("format", "--format"),
    ("backend", "--backend"),
    ("pim", "--pim"),
    ("detached_header", "--header"),
    ("system_encryption", "--system-encryption"),
    ("readonly", "--readonly"),
    ("filesystem", "--filesystem"),
    ("mount_point", "the mount point"),
    ("allow_non_empty", "--allow-non-empty"),
    ("discard", "--discard"),
    ("preserve_timestamps", "--no-preserve-timestamps"),
    ("protect_hidden_password", "--protect-hidden"),
    ("protect_hidden_keyfiles", "--protect-hidden's keyfiles"),
    ("protect_hidden_pim", "--protect-hidden-pim"),
    ("cache", "--cache"),
    ("use_cache", "--cached"),
    ("dismount_on_logout", "--dismount-on-logout"),
    ("dismount_before_sleep", "--dismount-before-sleep"),
    ("dismount_idle_seconds", "--dismount-idle"),
    ("force_dismount", "--force-dismount"),
    ("favorite", "the favorite"),
    ("favorite_system", "--system-favorite"),
    ("backup_header", "-m headerbak"),
    ("skip_data_check", "--skip-data-check"),
    ("slot", "--slot"),
    ("fs_options", "--fs-options"),
    ("size", "--size"),
    ("no_random_fill", "--no-random-fill"),
    ("holds_hidden", "--holds-hidden"),
    ("filesystem_as_is", "--filesystem-as-is"),
    ("sector_size", "--sector-size"),
    ("quick", "--quick"),
    ("hidden_size", "--hidden-size"),
    ("outer_password", "the outer volume's password"),
    ("outer_keyfiles", "--outer-keyfile"),
    ("outer_pim", "--outer-pim"),
    ("outer_hash", "--outer-hash"),
    ("force", "--force"),
    ("new_pim", "--new-pim"),
    ("new_hash", "--new-hash"),
    ("new_format", "--to"),
];

/// `tcctl`'s spelling of the option `key`.
pub fn tcctl_flag(key: &str) -> Option<&'static str> {
    TCCTL_FLAGS.iter().find(|(k, _)| *k == key).map(|(_, f)| *f)
}

/// A daemon's message with the option keys it names in `tcctl`'s words:
/// "option KEY" and "options KEY and KEY" become the options' spellings,
/// and a key with an underscore is replaced wherever it stands as a word
/// of its own (not inside a path or a longer name).
pub fn in_tcctl_words(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    // "option"/"options" and the spaces after it, held until the next word
    // shows whether it names a key.
    let mut held = String::new();
    // After "option(s) KEY": an "and KEY" goes on the list.
    let mut listing = false;
    let mut rest = message;
    while !rest.is_empty() {
        let word_len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if word_len == 0 {
            let c = rest.chars().next().map_or(1, char::len_utf8);
            let (gap, tail) = rest.split_at(c);
            if gap == " " && !held.is_empty() {
                held.push(' ');
            } else {
                out.push_str(&std::mem::take(&mut held));
                out.push_str(gap);
                listing &= gap == " " || gap == ",";
            }
            rest = tail;
            continue;
        }
        let (word, tail) = rest.split_at(word_len);
        let before = out.chars().last().or(held.chars().last());
        let path_after = tail.starts_with('/')
            || (tail.starts_with('.')
                && tail[1..].starts_with(|c: char| c.is_ascii_alphanumeric()));
        let alone = before != Some('/') && before != Some('.') && !path_after;
        let flag = tcctl_flag(word).filter(|_| alone);
        let wanted = !held.is_empty() || listing || word.contains('_');
        match flag.filter(|_| wanted) {
            Some(f) => {
                held.clear();
                out.push_str(f);
                listing = true;
            }
            None if held.is_empty() && (word == "option" || word == "options") => {
                held.push_str(word);
                listing = false;
            }
            None => {
                out.push_str(&std::mem::take(&mut held));
                out.push_str(word);
                listing = listing && word == "and";
            }
        }
        rest = tail;
    }
    out.push_str(&held);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_after_option_and_underscored_keys_become_tcctl_options() {
        for (daemon, tcctl) in [
            (
                "option detached_header: a header file holds 512 bytes to 128 KiB, not 3 bytes",
                "--header: a header file holds 512 bytes to 128 KiB, not 3 bytes",
            ),
            (
                "options backup_header and detached_header: a header file has no backup headers",
                "-m headerbak and --header: a header file has no backup headers",
            ),
            (
                "option backend of 5000 bytes (at most 4096)",
                "--backend of 5000 bytes (at most 4096)",
            ),
            ("option slot: 1 to 64", "--slot: 1 to 64"),
            (
                "option new_pim: invalid type: string, expected u32",
                "--new-pim: invalid type: string, expected u32",
            ),
            (
                "option system_encryption: pass it as detached_header.",
                "--system-encryption: pass it as --header.",
            ),
            // Plain words stay words; paths and unknown names stay.
            (
                "the hash and format of /srv/mount_point/a.hc",
                "the hash and format of /srv/mount_point/a.hc",
            ),
            ("option nothing_known: no", "option nothing_known: no"),
            ("cannot read the options", "cannot read the options"),
            ("wrong password, hash sha512", "wrong password, hash sha512"),
        ] {
            assert_eq!(in_tcctl_words(daemon), tcctl, "{daemon}");
        }
    }

    #[test]
    fn every_option_key_of_the_api_has_a_spelling() {
        let keys = [
            "hash",
            "encryption",
            "format",
            "backend",
            "pim",
            "detached_header",
            "system_encryption",
            "readonly",
            "filesystem",
            "mount_point",
            "protect_hidden_password",
            "fs_options",
            "no_random_fill",
            "hidden_size",
            "outer_keyfiles",
            "force",
        ];
        for k in keys {
            assert!(tcctl_flag(k).is_some(), "{k}");
        }
        let mut seen = std::collections::HashSet::new();
        assert!(
            TCCTL_FLAGS.iter().all(|(k, _)| seen.insert(*k)),
            "one row a key"
        );
    }
}
