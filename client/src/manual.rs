//! What packaging installs from the command line's definition: the manual
//! pages (`tcctl.1` and one per command, which it refers to) and the bash,
//! zsh and fish completions.

use crate::bus::Failure;
use crate::cli::Cli;
use clap::CommandFactory;
use std::path::Path;

/// Examples, as a user types them (`.TP`: the command, then what it does).
const EXAMPLES: &[(&str, &str)] = &[
    (
        "tcctl mount ~/secret.hc ~/mnt",
        "Ask for the password and mount the volume's filesystem on ~/mnt.",
    ),
    (
        "tcctl mount --filesystem none /dev/disk/by-partlabel/vault",
        "Open a partition as a block device only; the device is printed.",
    ),
    (
        "tcctl --non-interactive mount --password-stdin secret.hc < password.txt",
        "From a script: never ask; the password is the first line of standard input.",
    ),
    (
        "tcctl mount --protect-hidden --readonly outer.hc",
        "Ask for both passwords and mount the outer volume read-only, with writes into the hidden \
         volume refused as well.",
    ),
    (
        "gpg -d key.gpg | tcctl mount --keyfile - secret.hc",
        "A keyfile from standard input; the password is asked on the terminal.",
    ),
    (
        "tcctl mount --header secret.hdr secret.hc",
        "Take the header from a header backup file, for a volume whose own headers are damaged \
         or were removed.",
    ),
    (
        "tcctl create --size 1G --encryption AES-Twofish-Serpent new.hc",
        "Make a 1 GiB VeraCrypt volume with an ext4 filesystem.",
    ),
    ("tcctl list --json", "The mounted volumes, for scripts."),
    ("tcctl dismount --all", "Dismount every volume you mounted."),
];

/// Files `tcctl` and the daemon it talks to read or write for it.
const FILES: &[(&str, &str)] = &[
    (
        "/run/tcd/tcd.sock",
        "The daemon's socket when it does not run on the system bus (root only).",
    ),
    (
        "/etc/tcd/policy.toml",
        "The administrator's policy: allowed backends, filesystems and limits (tcd(8)).",
    ),
    ("/etc/tcd/favorites.toml", "The system's favorite volumes."),
    (
        "/var/lib/tcd/favorites/UID.toml",
        "Each user's favorite volumes, written by the daemon.",
    ),
];

/// The environment `tcctl` reads.
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "TCD_SOCKET",
        "The daemon's socket, when --socket is not given.",
    ),
    (
        "DISPLAY, WAYLAND_DISPLAY",
        "Without a terminal, a zenity or kdialog dialog asks for passwords on this display.",
    ),
    (
        "TCD_KEYRING",
        "kernel or secret-service: where --remember keeps a favorite's password.",
    ),
    (
        "DBUS_SYSTEM_BUS_ADDRESS, DBUS_SESSION_BUS_ADDRESS",
        "The buses --system and --session mean.",
    ),
    (
        "TCD_PKCS11_MODULE",
        "The PKCS #11 library of your security token, when --token-lib is not given (before the policy's token_library).",
    ),
    (
        "TCD_TOKEN_PIN",
        "The token's user PIN for token:// keyfiles (without it, a terminal asks; tcctl takes no PIN on its command line).",
    ),
];

/// `tcctl generate-dist DIR`: the manual pages and the completions, into
/// `DIR`. A command for packaging, outside the command line users see, so
/// completion never offers it.
pub fn generate_dist(dir: &Path) -> Result<(), Failure> {
    let fail = |e: std::io::Error| Failure::invalid(format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(fail)?;
    // A page per command (tcctl-mount.1, tcctl-favorites-add.1, ...): the
    // main page's COMMANDS refer to them. Then the main page, with more.
    clap_mangen::generate_to(aliases_in_help(Cli::command()), dir).map_err(fail)?;
    std::fs::write(dir.join("tcctl.1"), main_page().map_err(fail)?).map_err(fail)?;
    for shell in [
        clap_complete::Shell::Bash,
        clap_complete::Shell::Zsh,
        clap_complete::Shell::Fish,
    ] {
        let file =
            clap_complete::generate_to(shell, &mut Cli::command(), "tcctl", dir).map_err(fail)?;
        let mut text = without_internal(&std::fs::read_to_string(&file).map_err(fail)?);
        if shell == clap_complete::Shell::Bash {
            text.push_str(&bash_text_mode());
        }
        std::fs::write(&file, text).map_err(fail)?;
    }
    Ok(())
}

/// The options tcctl gives itself when it translates VeraCrypt's and
/// cryptsetup's spellings: hidden from help, and taken out of the
/// completions, which clap's generators would offer (each name is used by
/// no option a user types).
pub const INTERNAL: &[&str] = &[
    "empty-password",
    "ask-mount-point",
    "ask-keyfiles",
    "ask-protection",
    "ask-again",
    "mounted-status",
    "check-only",
    "ask-outer",
    "veracrypt-lines",
    "only",
    "udisks-lock",
    "udisks-unlock",
    "no-pim-question",
];

/// The backends tcd ships, offered after `--backend` (one an
/// administrator adds is typed in full).
const BACKENDS: &[&str] = &["aesni", "soft"];

/// Bash functions the completion calls: what the daemon lists, asked of
/// the tcctl being completed, at the daemon its line names.
const BASH_LISTED: &str = r#"
# What the daemon lists, asked of the tcctl being completed, at the daemon
# its line names: $1 a JSON field, then the command listing it.
_tcctl_listed() {
    local i at=() field="$1"
    shift
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            --session|--system|--socket=*) at+=("${COMP_WORDS[i]}") ;;
            --socket) at+=(--socket "${COMP_WORDS[i+1]}") ;;
        esac
    done
    "${COMP_WORDS[0]}" "${at[@]}" --non-interactive "$@" --json 2>/dev/null |
        grep -o "\"$field\":\"[^\"]*\"" | sed "s/^\"$field\":\"//; s/\"\$//"
}

# The mounted volumes' files and mount points.
_tcctl_mounted() {
    _tcctl_listed volume list
    _tcctl_listed mount_point list
}
"#;

/// Bash's completion of a line in VeraCrypt's words (after `-t` or
/// `--text`, which clap knows nothing of): its options and their values,
/// else file names; and of udisksctl's `unlock` and `lock`.
fn bash_text_mode() -> String {
    use crate::cli::{Encryption, Hash, MountOption, NewFilesystem};
    let (hashes, ciphers) = (value_names::<Hash>(), value_names::<Encryption>());
    let (mount_options, filesystems) =
        (value_names::<MountOption>(), value_names::<NewFilesystem>());
    let completion = format!(
        r#"
# VeraCrypt's text mode: after -t or --text, its options and their values,
# else file names; after -d, -u or --volume-properties the mounted volumes.
# udisksctl's unlock and lock: -b, and after it the volume (lock: one of
# tcd's, or its device). --backend, policy set's --allow and --prefer: the
# backends' names; --slot: 1 to 64.
# dismount, close, status: the mounted volumes (or file names), after -b
# their devices; favorites mount, remove, forget: the favorites' names.
_tcctl_text() {{
    local i cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    case "$prev" in
        --backend|--allow|--prefer) COMPREPLY=($(compgen -W "{backends}" -- "$cur")); return 0 ;;
        --slot) COMPREPLY=($(compgen -W "$(seq 1 64)" -- "$cur")); return 0 ;;
    esac
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in
            dismount|unmount|umount|close|status)
                [[ "$cur" == -* ]] && break
                # udisksctl's unmount -b: the devices of tcd's volumes.
                if [[ "$prev" == -b || "$prev" == --block-device ]]; then
                    COMPREPLY=($(compgen -W "$(_tcctl_listed device list)" -- "$cur"))
                    return 0
                fi
                COMPREPLY=($(compgen -W "$(_tcctl_mounted)" -- "$cur"))
                return 0
                ;;
            favorites)
                case "${{COMP_WORDS[i+1]}}" in
                    mount|remove|forget)
                        (( i + 1 < COMP_CWORD )) && [[ "$cur" != -* ]] || break
                        COMPREPLY=($(compgen -W "$(_tcctl_listed name favorites list)" -- "$cur"))
                        return 0
                        ;;
                esac
                break
                ;;
            -t|--text)
                COMPREPLY=()
                case "$prev" in
                    -d|--dismount|-u|--unmount|--volume-properties) COMPREPLY=($(compgen -W "$(_tcctl_mounted)" -- "$cur")) ;;
                    --auto-mount) COMPREPLY=($(compgen -W "devices favorites" -- "$cur")) ;;
                    --hash|--protection-hash|--new-hash) COMPREPLY=($(compgen -W "{hashes}" -- "$cur")) ;;
                    --encryption) COMPREPLY=($(compgen -W "{ciphers}" -- "$cur")) ;;
                    -m|--mount-options) COMPREPLY=($(compgen -W "{mount_options}" -- "$cur")) ;;
                    --volume-type) COMPREPLY=($(compgen -W "normal hidden" -- "$cur")) ;;
                    --protect-hidden) COMPREPLY=($(compgen -W "yes no" -- "$cur")) ;;
                    --filesystem) COMPREPLY=($(compgen -W "{filesystems}" -- "$cur")) ;;
                    *) [[ "$cur" == -* ]] && COMPREPLY=($(compgen -W "{words}" -- "$cur")) ;;
                esac
                return 0
                ;;
            unlock|lock)
                _tcctl_udisks "${{COMP_WORDS[i]}}"
                return 0
                ;;
        esac
    done
    _tcctl "$@"
    _tcctl_other_tools
}}
complete -F _tcctl_text -o bashdefault -o default tcctl
"#,
        words = crate::veracrypt::text_mode_words().join(" "),
        backends = BACKENDS.join(" ")
    );
    format!(
        "{BASH_LISTED}{}{BASH_UDISKS}{completion}",
        bash_other_tools()
    )
}

/// udisksctl's `unlock` and `lock`: -b, and after it the volume (`unlock`:
/// a volume's file or device; `lock`: one of tcd's, by its file or the
/// device it is attached as).
const BASH_UDISKS: &str = r#"
# The machine's block devices, by their names in /dev.
_tcctl_block_devices() {
    local b
    for b in /sys/class/block/*; do
        [[ -e "$b" ]] && printf '/dev/%s\n' "${b##*/}"
    done
}

# udisksctl's unlock and lock ($1): their options, and after -b the volume.
_tcctl_udisks() {
    local words cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
    COMPREPLY=()
    case "$prev" in
        -b|--block-device)
            if [[ "$1" == lock ]]; then
                COMPREPLY=($(compgen -W "$(_tcctl_listed volume list) $(_tcctl_listed device list)" -- "$cur"))
            else
                # The block devices, as udisksctl offers them, and files.
                COMPREPLY=($(compgen -W "$(_tcctl_block_devices)" -- "$cur") $(compgen -f -- "$cur"))
            fi
            ;;
        *)
            words="-b --block-device --no-user-interaction"
            [[ "$1" == unlock ]] && words+=" --key-file"
            [[ "$cur" == -* ]] && COMPREPLY=($(compgen -W "$words" -- "$cur"))
            ;;
    esac
}
"#;

/// Bash's words of the other tools clap knows nothing of, added to what
/// clap's completion offers: cryptsetup's options on its commands, and
/// udisksctl's commands among tcctl's.
fn bash_other_tools() -> String {
    format!(
        r#"
# cryptsetup's options on its commands; umount(8)'s and udisksctl's on
# umount and unmount; udisksctl's unlock and lock with tcctl's commands, and
# after mount -b the devices of attached volumes.
_tcctl_other_tools() {{
    local i cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in
            mount|open|tcryptOpen)
                # udisksctl's mount -b: the devices of attached volumes.
                if [[ "$prev" == -b || "$prev" == --block-device ]]; then
                    COMPREPLY=($(compgen -W "$(_tcctl_listed device list)" -- "$cur"))
                elif [[ "$prev" == -M ]]; then
                    COMPREPLY=($(compgen -W "tcrypt" -- "$cur"))
                elif [[ "$cur" == -* ]]; then
                    _tcctl_add "{cryptsetup_open}"
                fi
                return 0
                ;;
            tcryptDump|info|dump)
                [[ "$cur" == -* ]] && _tcctl_add "{cryptsetup_dump}"
                return 0
                ;;
            umount|unmount)
                [[ "$cur" == -* ]] && _tcctl_add "-l --lazy -f --force -v --verbose -b --block-device"
                return 0
                ;;
            --socket) (( i++ )) ;;
            -*) ;;
            *) return 0 ;;
        esac
    done
    [[ "$cur" != -* ]] && _tcctl_add "unlock lock"
    return 0
}}

# The words of $1 that complete the current word and are not offered yet.
_tcctl_add() {{
    local w
    for w in $(compgen -W "$1" -- "${{COMP_WORDS[COMP_CWORD]}}"); do
        [[ " ${{COMPREPLY[*]}} " == *" $w "* ]] || COMPREPLY+=("$w")
    done
}}
"#,
        cryptsetup_open = crate::veracrypt::cryptsetup_option_words(false).join(" "),
        cryptsetup_dump = crate::veracrypt::cryptsetup_option_words(true).join(" ")
    )
}

/// The values of `T` a user is offered, as its `--help` lists them.
fn value_names<T: clap::ValueEnum>() -> String {
    T::value_variants()
        .iter()
        .filter_map(clap::ValueEnum::to_possible_value)
        .filter(|p| !p.is_hide_set())
        .map(|p| p.get_name().to_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The command line with each option's other names at the end of its
/// help, as `--help` shows them: clap_mangen's pages leave them out.
fn aliases_in_help(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| {
        let aliases: Vec<String> = a
            .get_visible_aliases()
            .unwrap_or_default()
            .iter()
            .map(|n| format!("--{n}"))
            .collect();
        if aliases.is_empty() {
            return a;
        }
        let help = a.get_help().map(ToString::to_string).unwrap_or_default();
        let word = if aliases.len() == 1 {
            "alias"
        } else {
            "aliases"
        };
        a.help(format!("{help} [{word}: {}]", aliases.join(", ")))
    })
    .mut_subcommands(aliases_in_help)
}

/// `line` without each `word` that ends there, at a space, a quote or
/// an `=` (taken too).
fn without_word(line: &str, word: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find(word) {
        let after = &rest[at + word.len()..];
        out.push_str(&rest[..at]);
        match after.chars().next() {
            Some(' ' | '"' | '\n') | None => rest = after,
            Some('=') => rest = &after[1..],
            Some(_) => {
                out.push_str(word);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A completion script with [`INTERNAL`] taken out: bash's option lists,
/// zsh's and fish's lines for them.
fn without_internal(script: &str) -> String {
    let mut out = String::with_capacity(script.len());
    for line in script.split_inclusive('\n') {
        let t = line.trim_start();
        // zsh's `'(--json)--NAME[...]' \`: past its exclusions and `*`.
        let spec = t.strip_prefix('\'').map(|r| match r.strip_prefix('(') {
            Some(r) => r.split_once(')').map_or(r, |(_, r)| r),
            None => r,
        });
        let spec = spec.map(|r| r.trim_start_matches('*'));
        let zsh = INTERNAL.iter().any(|n| {
            spec.is_some_and(|r| {
                r.starts_with(&format!("--{n}[")) || r.starts_with(&format!("--{n}=["))
            })
        });
        let fish = INTERNAL.iter().any(|n| {
            t.starts_with("complete -c tcctl")
                && (t.contains(&format!(" -l {n} ")) || t.trim_end().ends_with(&format!(" -l {n}")))
        });
        if zsh || fish {
            continue;
        }
        // bash's `opts="... --NAME ..."`; fish's argparse list `NAME`.
        let listed = t.starts_with("opts=") || t.starts_with("string join");
        let mut kept = line.to_owned();
        for n in INTERNAL.iter().filter(|_| listed) {
            for word in [format!(" --{n}"), format!(" {n}")] {
                kept = without_word(&kept, &word);
            }
        }
        out.push_str(&kept);
    }
    out
}

/// The page clap makes, with EXIT STATUS, EXAMPLES, FILES and ENVIRONMENT
/// after the commands.
fn main_page() -> std::io::Result<Vec<u8>> {
    // The `help` command is this page itself.
    let man = clap_mangen::Man::new(aliases_in_help(Cli::command()).disable_help_subcommand(true));
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    man.render_subcommands_section(&mut page)?;
    let aliases: Vec<(String, String)> = Cli::command()
        .get_subcommands()
        .filter_map(|c| {
            let names: Vec<&str> = c.get_all_aliases().collect();
            (!names.is_empty()).then(|| (c.get_name().to_owned(), names.join(", ")))
        })
        .collect();
    let aliases: Vec<(&str, &str)> = aliases
        .iter()
        .map(|(c, a)| (c.as_str(), a.as_str()))
        .collect();
    section(&mut page, "ALIASES", &aliases, true);
    page.extend_from_slice(crate::output::MAN_SECTION.as_bytes());
    let codes: Vec<(String, &str)> = crate::bus::exit::TABLE
        .iter()
        .map(|(code, meaning)| (code.to_string(), *meaning))
        .collect();
    let codes: Vec<(&str, &str)> = codes.iter().map(|(c, m)| (c.as_str(), *m)).collect();
    section(&mut page, "EXIT STATUS", &codes, false);
    section(&mut page, "EXAMPLES", EXAMPLES, true);
    section(&mut page, "FILES", FILES, true);
    section(&mut page, "ENVIRONMENT", ENVIRONMENT, true);
    section(
        &mut page,
        "CRYPTSETUP SPELLINGS",
        crate::veracrypt::CRYPTSETUP_SPELLINGS,
        true,
    );
    section(
        &mut page,
        "UDISKSCTL SPELLINGS",
        crate::veracrypt::UDISKS_SPELLINGS,
        true,
    );
    section(
        &mut page,
        "VERACRYPT SPELLINGS",
        crate::veracrypt::SPELLINGS,
        true,
    );
    man.render_version_section(&mut page)?;
    Ok(page)
}

/// What a section says before its items.
fn intro(title: &str) -> Option<&'static str> {
    match title {
        "VERACRYPT SPELLINGS" => Some(
            "VeraCrypt's text-mode command line \\(em veracrypt \\-\\-text with its commands \
             as options \\(em is read as the tcctl command it means:",
        ),
        "CRYPTSETUP SPELLINGS" => Some(
            "cryptsetup's options for TrueCrypt and VeraCrypt volumes (its type tcrypt), taken \
             by every command that opens a volume:",
        ),
        "UDISKSCTL SPELLINGS" => Some("udisksctl's words for an encrypted device:"),
        "ALIASES" => Some(
            "Other names of commands, as cryptsetup, udisksctl and umount(8) users type \
             them:",
        ),
        _ => None,
    }
}

/// A section of tagged paragraphs; `bold` tags are set in bold.
fn section(page: &mut Vec<u8>, title: &str, items: &[(&str, &str)], bold: bool) {
    page.extend_from_slice(format!(".SH \"{title}\"\n").as_bytes());
    if let Some(text) = intro(title) {
        page.extend_from_slice(format!("{text}\n").as_bytes());
    }
    for (tag, text) in items {
        let tag = if bold {
            format!("\\fB{}\\fR", roff_escape(tag))
        } else {
            roff_escape(tag)
        };
        page.extend_from_slice(format!(".TP\n{tag}\n{}\n", roff_escape(text)).as_bytes());
    }
}

/// `text` safe in a roff line: hyphens as minus signs where they are
/// options, and no line that starts with a control character.
fn roff_escape(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    match t.starts_with(['.', '\'']) {
        true => format!("\\&{t}"),
        false => t,
    }
}
