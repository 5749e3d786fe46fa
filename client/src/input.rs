//! What the user hands `tcctl` besides options: passwords, keyfiles,
//! sizes and paths.

use crate::bus::{Failure, exit};
use crate::prompt;
use std::fs::File;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use zeroize::Zeroizing;

/// Standard input was read by one user of it (passwords, or a keyfile
/// named `-`): a second would get nothing, or the first one's bytes.
static STDIN_TAKEN: AtomicBool = AtomicBool::new(false);

/// A PIM other than none typed at a prompt (or read with
/// `--veracrypt-query-pim`) rather than given on the command line; 0 when
/// none was. What narrows a search is said from it after a wrong password.
static TYPED_PIM: AtomicU32 = AtomicU32::new(0);

/// [`TYPED_PIM`] came on standard input (`--veracrypt-query-pim`).
static PIM_ON_STDIN: AtomicBool = AtomicBool::new(false);
/// The command line is VeraCrypt's (`-t`): messages name its options.
static VERACRYPT_LINE: AtomicBool = AtomicBool::new(false);

/// The command line is udisksctl's `unlock`: messages name its options.
static UDISKS_LINE: AtomicBool = AtomicBool::new(false);

/// udisksctl's `unlock --key-file FILE`: the passphrase file standard
/// input was made from, named when what it holds is no passphrase.
static PASSPHRASE_FILE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Says the command line is in VeraCrypt's words (`-t`, `--text`).
pub fn set_veracrypt_line() {
    VERACRYPT_LINE.store(true, Ordering::SeqCst);
}

/// Says the command line is udisksctl's `unlock`.
pub fn set_udisks_line() {
    UDISKS_LINE.store(true, Ordering::SeqCst);
}

/// The command line is in cryptsetup's words: hints name its options.
static CRYPTSETUP_LINE: AtomicBool = AtomicBool::new(false);

/// Says the command line is in cryptsetup's words.
pub fn set_cryptsetup_line() {
    CRYPTSETUP_LINE.store(true, Ordering::SeqCst);
}

/// Whether the command line is in cryptsetup's words.
pub fn cryptsetup_line() -> bool {
    CRYPTSETUP_LINE.load(Ordering::SeqCst)
}

/// tcctl's option `option` as the command line's tool spells it: on a
/// VeraCrypt line, VeraCrypt's name for it, which the line also takes; on
/// udisksctl's unlock, its --key-file for the password.
pub fn spelled(option: &'static str) -> &'static str {
    // udisksctl's unlock takes the passphrase from a file's first line.
    // As the line gave it, else both ways.
    if UDISKS_LINE.load(Ordering::SeqCst) && option == "--password-stdin" {
        let given = |o: &str| std::env::args().any(|a| a == o || a.starts_with(&format!("{o}=")));
        return match (given("--key-file"), given("--password-stdin")) {
            (true, _) => "--key-file FILE (its first line)",
            (false, true) => "--password-stdin",
            (false, false) => "--key-file FILE (its first line) or --password-stdin",
        };
    }
    if !VERACRYPT_LINE.load(Ordering::SeqCst) {
        return option;
    }
    match option {
        "--password-stdin" => "--stdin",
        "--keyfile" => "--keyfiles",
        "--new-keyfile" => "--new-keyfiles",
        "--protect-hidden-pim" => "--protection-pim",
        "--protect-hidden-keyfile" => "--protection-keyfiles",
        "--system-encryption" => "-m system",
        other => other,
    }
}

/// Whether the command line is VeraCrypt's.
pub fn veracrypt_line() -> bool {
    VERACRYPT_LINE.load(Ordering::SeqCst)
}

/// A question in tcctl's words, or on a VeraCrypt line in VeraCrypt's
/// (its text mode's exact prompt, which expect scripts match).
pub fn asked(tcctl: &'static str, veracrypt: &'static str) -> &'static str {
    match VERACRYPT_LINE.load(Ordering::SeqCst) {
        true => veracrypt,
        false => tcctl,
    }
}

/// The question that has a new password typed again.
pub fn repeat_prompt() -> &'static str {
    asked("Repeat the password: ", "Re-enter password: ")
}

/// The question for `what`'s password: on a VeraCrypt or cryptsetup
/// line, that tool's own words for it.
pub fn password_prompt(what: &str) -> String {
    if VERACRYPT_LINE.load(Ordering::SeqCst) {
        format!("Enter password for {what}: ")
    } else if cryptsetup_line() {
        // cryptsetup's own question.
        format!("Enter passphrase for {what}: ")
    } else {
        format!("Password for {what}: ")
    }
}

/// The question for `what`'s PIM (Enter: none), as [`password_prompt`].
pub fn pim_prompt(what: &str) -> String {
    match VERACRYPT_LINE.load(Ordering::SeqCst) {
        true => format!("Enter PIM for {what}: "),
        false => format!("PIM for {what} (Enter for none): "),
    }
}

/// The PIM given other than on the command line, if one (other than
/// none) was, and where it came from ("the PIM typed at the prompt").
pub fn typed_pim() -> Option<(u32, &'static str)> {
    let from = match PIM_ON_STDIN.load(Ordering::SeqCst) {
        true => "the PIM read after the password",
        false => "the PIM typed at the prompt",
    };
    Some(TYPED_PIM.load(Ordering::SeqCst))
        .filter(|&p| p != 0)
        .map(|p| (p, from))
}

/// Claims standard input for `what`; an error if something else has it.
fn take_stdin(what: &str) -> Result<(), Failure> {
    match STDIN_TAKEN.swap(true, Ordering::SeqCst) {
        false => Ok(()),
        true => Err(Failure {
            code: exit::USAGE,
            message: format!(
                "standard input is already read for something else: {what} cannot read it too \
                 (--password-stdin and --keyfile - each take all of it)"
            ),
        }),
    }
}

/// Whether a password may be asked for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Asking {
    Yes,
    /// `--non-interactive`.
    No,
    /// VeraCrypt's `-p ""`: nothing is asked, the password is empty.
    EmptyGiven,
}

/// Passwords from standard input (one line each), a terminal prompt, or
/// without a terminal a graphical one (or the system's password agents);
/// with `interactive` false, only from standard input.
pub struct Passwords {
    stdin: bool,
    interactive: bool,
    /// VeraCrypt's `-p ""`: the password is the empty one.
    empty_given: bool,
    lines: Option<std::io::StdinLock<'static>>,
    /// Standard input held nothing at all when the password was read.
    stdin_empty: bool,
    /// --password-stdin read the terminal that is standard input.
    stdin_typed: bool,
    /// Where keyfiles come from, said when no password can be asked.
    keyfiles_from: &'static str,
}

/// What a --password-stdin that ended says: empty from the start, or
/// ended before the password asked for `prompt`.
fn stdin_ended(first: bool, prompt: &str) -> String {
    if first && cryptsetup_line() {
        // Read because it is no terminal, as cryptsetup
        // reads a passphrase piped in: no option named.
        "standard input holds no passphrase (it is empty; a passphrase piped in \
         is read as cryptsetup reads it)"
            .into()
    } else if let Some(file) = PASSPHRASE_FILE.get().filter(|_| first) {
        // udisksctl's --key-file, read in standard input's
        // place: the file is named, not standard input.
        format!(
            "--key-file {}: the passphrase file is empty (its first line is the \
             passphrase)",
            file.display()
        )
    } else if first {
        format!(
            "{}: standard input holds no password (it is empty)",
            spelled("--password-stdin")
        )
    } else {
        format!(
            "{}: standard input ended before the password asked for \"{}\" \
             (one line each)",
            spelled("--password-stdin"),
            prompt.trim_end().trim_end_matches(':')
        )
    }
}

impl Passwords {
    pub fn new(stdin: bool, asking: Asking) -> Self {
        Passwords {
            stdin,
            interactive: asking == Asking::Yes,
            empty_given: asking == Asking::EmptyGiven,
            lines: None,
            stdin_empty: false,
            stdin_typed: false,
            keyfiles_from: "open with keyfiles alone: give them with --keyfile",
        }
    }

    /// For favorites, whose keyfiles are their own, not the command's.
    pub fn of_favorites(mut self) -> Self {
        self.keyfiles_from = "add the favorite again with --keyfile --replace to open it with \
                              keyfiles alone";
        self
    }

    /// Whether a password can be had here without a dialog: standard
    /// input, or a prompt on the terminal.
    pub fn at_hand(&self) -> bool {
        self.stdin || (self.interactive && terminal_to_ask_on())
    }

    /// Whether a password is typed at a prompt on the terminal (not read
    /// from standard input).
    pub fn typed(&self) -> bool {
        !self.stdin && self.interactive && terminal_to_ask_on()
    }

    /// Whether passwords are read from standard input.
    pub fn reads_stdin(&self) -> bool {
        self.stdin
    }

    /// Neither standard input nor a prompt gives a password: with
    /// keyfiles, VeraCrypt's `--non-interactive` then opens with them alone.
    pub fn asks_nobody(&self) -> bool {
        !self.stdin && !self.interactive
    }

    /// The password, or the empty one where keyfiles open the volume
    /// alone (`keyfiles`): with --non-interactive and no --password-stdin,
    /// as VeraCrypt; with --password-stdin and nothing at all on standard
    /// input, as cryptsetup takes an empty passphrase with its keyfiles.
    pub fn ask_unless_keyfiles_alone(
        &mut self,
        prompt: &str,
        keyfiles: bool,
    ) -> Result<Zeroizing<Vec<u8>>, Failure> {
        if keyfiles && self.asks_nobody() {
            return Ok(Zeroizing::new(Vec::new()));
        }
        match self.ask(prompt) {
            Err(_) if keyfiles && self.stdin_empty => Ok(Zeroizing::new(Vec::new())),
            asked => asked,
        }
    }

    pub fn ask(&mut self, prompt: &str) -> Result<Zeroizing<Vec<u8>>, Failure> {
        if self.stdin {
            let first = self.lines.is_none() && !self.stdin_typed;
            if first {
                take_stdin("--password-stdin")?;
            }
            // Standard input that is the terminal (nothing piped in): typed
            // as at a prompt, not shown, as cryptsetup reads it there.
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                self.stdin_typed = true;
                let p = on_terminal(prompt, "password")?;
                return Ok(Zeroizing::new(p.as_bytes().to_vec()));
            }
            let lines = self.lines.get_or_insert_with(|| std::io::stdin().lock());
            let mut line = Zeroizing::new(String::new());
            let read = lines.read_line(&mut line).map_err(not_a_password)?;
            if read == 0 {
                // Nothing at all (an empty file, /dev/null): no password
                // was given, which no search would find out any sooner.
                self.stdin_empty = first;
                return Err(Failure {
                    code: exit::USAGE,
                    message: stdin_ended(first, prompt),
                });
            }
            let trimmed = line.trim_end_matches(['\n', '\r']);
            return Ok(Zeroizing::new(trimmed.as_bytes().to_vec()));
        }
        if self.empty_given {
            // No volume has the empty password and no keyfile: VeraCrypt
            // would search and say the password is wrong; this says so now.
            return Err(Failure {
                code: exit::WRONG_PASSWORD,
                message: "-p \"\": the empty password opens no volume without a keyfile: \
                          give the password with --stdin, or the keyfiles with -k"
                    .into(),
            });
        }
        if !self.interactive {
            // udisksctl's --no-user-interaction is --non-interactive:
            // named as typed.
            let option = match std::env::args().any(|a| a == "--no-user-interaction") {
                true => "--no-user-interaction",
                false => "--non-interactive",
            };
            return Err(Failure {
                code: exit::USAGE,
                message: format!(
                    "a password is needed, and {option} asks for none: {}, or {}",
                    other_way(),
                    // (It names no --keyfiles: each --keyfile is one.)
                    self.keyfiles_from
                        .replace("--keyfile", spelled("--keyfile"))
                ),
            });
        }
        if !terminal_to_ask_on() {
            return prompt::ask(prompt, &other_way());
        }
        let p = on_terminal(prompt, "password")?;
        Ok(Zeroizing::new(p.as_bytes().to_vec()))
    }
}

/// How to give a password that cannot be asked for: on standard input,
/// unless a keyfile took that.
fn other_way() -> String {
    let stdin = spelled("--password-stdin");
    if STDIN_TAKEN.load(Ordering::SeqCst) {
        format!(
            "standard input holds the keyfile ({} -): run on a terminal, or give the keyfile \
             as a file and the password with {stdin}",
            spelled("--keyfile")
        )
    } else {
        format!("give it with {stdin}")
    }
}

/// What is typed at `prompt` on the terminal, not shown.
fn on_terminal(prompt: &str, what: &str) -> Result<Zeroizing<String>, Failure> {
    let typed = holding_sigint(|| rpassword::prompt_password(prompt)).map_err(|e| {
        let (code, why) = match e.kind() {
            // Ctrl-C at the prompt (which reads the terminal raw): as an
            // interrupt anywhere else, 128 + SIGINT.
            std::io::ErrorKind::Interrupted => (exit::INTERRUPTED, "interrupted"),
            // Ctrl-D: the user ended the input instead of answering.
            std::io::ErrorKind::UnexpectedEof => (exit::CANCELLED, "end of input"),
            _ => return Failure::invalid(format!("cannot read a {what}: {e}")),
        };
        // The prompt's line ended: the message that follows gets its own.
        use std::io::Write;
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/tty")
            .and_then(|mut t| t.write_all(b"\n"));
        Failure {
            code,
            message: format!("no {what} given ({why})"),
        }
    })?;
    Ok(Zeroizing::new(typed))
}

/// A question answered `YES` on the controlling terminal, as cryptsetup
/// confirms what cannot be undone; anything else is `CANCELLED`, and no
/// terminal (or `interactive` false) is a usage error naming `skip`, the
/// options that answer it beforehand, at once, after `what`.
pub fn confirm(interactive: bool, what: &str, question: &str, skip: &str) -> Result<(), Failure> {
    can_confirm(interactive, what, skip)?;
    match terminal_line(question)?.as_str() {
        "YES" => Ok(()),
        _ => Err(Failure {
            code: exit::CANCELLED,
            message: "not confirmed: nothing done".into(),
        }),
    }
}

/// Whether [`confirm`] can ask: the same usage error it gives, for a
/// command that asks other things (a password) before its question and
/// must not ask them when the question cannot be.
pub fn can_confirm(interactive: bool, what: &str, skip: &str) -> Result<(), Failure> {
    // On VeraCrypt's line, its own word for it.
    let skip = match VERACRYPT_LINE.load(Ordering::SeqCst) && skip.starts_with("--batch-mode") {
        true => "--force",
        false => skip,
    };
    if !interactive || File::open("/dev/tty").is_err() {
        return Err(Failure {
            code: exit::USAGE,
            message: format!("{what}: confirmation needed and no terminal to ask on: give {skip}"),
        });
    }
    Ok(())
}

/// A line typed on the controlling terminal after `question`, shown as
/// typed, less its newline; end of input cancels.
pub fn terminal_line(question: &str) -> Result<String, Failure> {
    let tty = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|e| Failure::invalid(format!("cannot open the terminal: {e}")))?;
    // Ctrl-C and Ctrl-D are answers here, as at a password prompt.
    match crate::answer::ask(&tty, question) {
        Ok(crate::answer::Typed::Line(line)) => Ok(line),
        Ok(crate::answer::Typed::Ended) => Err(Failure {
            code: exit::CANCELLED,
            message: "no answer given (end of input)".into(),
        }),
        Ok(crate::answer::Typed::Interrupted) => Err(Failure {
            code: exit::INTERRUPTED,
            message: "no answer given (interrupted)".into(),
        }),
        Err(e) => Err(Failure::invalid(format!(
            "cannot read the answer: {}",
            crate::bus::io_text(&e)
        ))),
    }
}

/// Keyfile paths typed on the terminal after `question`, one a line until
/// an empty one; a path that is not there is asked again, saying why.
pub fn keyfile_questions(question: &str) -> Result<Vec<PathBuf>, Failure> {
    let mut paths = Vec::new();
    let mut asked = question.to_owned();
    loop {
        let keyfile = terminal_line(&asked)?;
        if keyfile.is_empty() {
            return Ok(paths);
        }
        match std::fs::metadata(&keyfile) {
            Ok(_) => {
                paths.push(PathBuf::from(keyfile));
                asked = question.to_owned();
            }
            Err(e) => asked = format!("{keyfile}: {}\n{question}", crate::bus::io_text(&e)),
        }
    }
}

/// A yes-or-no question on the terminal whose Enter answers no.
pub fn terminal_yes(question: &str) -> Result<bool, Failure> {
    terminal_yes_or_no(question, false)
}

/// A yes-or-no question on the terminal whose Enter answers `default`.
/// Anything but a yes or a no is asked again, as VeraCrypt does: a
/// mistyped yes must not pass for a no (an unprotected hidden volume).
pub fn terminal_yes_or_no(question: &str, default: bool) -> Result<bool, Failure> {
    loop {
        match terminal_line(question)?
            .trim()
            .to_ascii_lowercase()
            .as_str()
        {
            "y" | "yes" => return Ok(true),
            "n" | "no" => return Ok(false),
            "" => return Ok(default),
            _ => eprintln!(
                "tcctl: type y or n (Enter: {})",
                if default { "Yes" } else { "No" }
            ),
        }
    }
}

/// Runs `prompt` with SIGINT held in this thread. The prompt reads the
/// terminal raw and answers Ctrl-C by raising SIGINT at itself, then
/// returning `Interrupted`: held, the signal does not kill tcctl, the
/// prompt's error says "cancelled" (exit 10), and the pending signal is
/// taken before the old mask comes back.
fn holding_sigint<T>(prompt: impl FnOnce() -> T) -> T {
    let set = crate::signals::set_of(&[libc::SIGINT]);
    let old = crate::signals::block(&set);
    let answer = prompt();
    if let Some(old) = old {
        crate::signals::drain_and_restore(&set, &old);
    }
    answer
}

/// The keyfiles of a command that may ask its password again: read before
/// the first try (so a missing one is said first), and afresh for each
/// try after a wrong password.
pub struct KeyfilesEachTry(Option<Keyfiles>);

impl KeyfilesEachTry {
    pub fn new(first: Keyfiles) -> KeyfilesEachTry {
        KeyfilesEachTry(Some(first))
    }

    /// The keyfiles for this try, read from `paths` unless the first.
    pub fn next(&mut self, paths: &[PathBuf]) -> Result<Keyfiles, Failure> {
        match self.0.take() {
            Some(k) => Ok(k),
            None => prepare_keyfiles(paths),
        }
    }
}

/// How often a wrong password is asked again: VeraCrypt's text mode asks
/// until it opens; cryptsetup's --tries N asks N times in all (0: until it
/// opens); otherwise 3 times in all, as cryptsetup, sudo and ssh ask. Only
/// a password typed on the terminal is asked again, and never with a
/// keyfile read from standard input (it cannot be read twice).
pub struct Retries(Option<u32>);

impl Retries {
    pub fn new(ask_again: bool, tries: Option<u32>, keyfiles: &[PathBuf]) -> Retries {
        match tries {
            _ if keyfiles.iter().any(|k| k.as_os_str() == "-") => Retries(Some(1)),
            _ if ask_again => Retries(None),
            Some(0) => Retries(None),
            t => Retries(Some(t.unwrap_or(3))),
        }
    }

    /// After a wrong password: whether to ask again.
    pub fn another(&mut self, pw: &Passwords) -> bool {
        if !pw.typed() {
            return false;
        }
        match &mut self.0 {
            None => true,
            Some(left) => {
                *left = left.saturating_sub(1);
                *left > 0
            }
        }
    }
}

/// Whether a prompt can be answered on a terminal: standard input is one,
/// or a keyfile came on standard input (`--keyfile -`) and there is a
/// controlling terminal to ask on instead, as `cat key | tcctl mount v
/// --keyfile -` typed in a shell expects.
fn terminal_to_ask_on() -> bool {
    std::io::IsTerminal::is_terminal(&std::io::stdin())
        || (STDIN_TAKEN.load(Ordering::SeqCst) && File::open("/dev/tty").is_ok())
}

impl Passwords {
    /// The PIM: the one given, else asked on a terminal (Enter for none),
    /// as VeraCrypt's text mode does; never asked with --password-stdin or
    /// --non-interactive, without a terminal, or for a TrueCrypt volume
    /// (TrueCrypt has no PIM).
    pub fn pim(&self, given: Option<u32>, truecrypt: bool, prompt: &str) -> Result<u32, Failure> {
        if let Some(p) = given {
            return Ok(p);
        }
        if self.stdin || !self.interactive || truecrypt || !terminal_to_ask_on() {
            return Ok(0);
        }
        self.pim_on_terminal(prompt)
    }

    /// cryptsetup's `--veracrypt-query-pim`: the PIM asked even where
    /// [`Passwords::pim`] would not ask: with --password-stdin, the next
    /// line of standard input (after the password, as cryptsetup reads
    /// it); otherwise at the prompt.
    pub fn query_pim(&mut self, prompt: &str) -> Result<u32, Failure> {
        if self.stdin {
            let line = self.ask(prompt).map_err(|e| match e.code {
                exit::USAGE => Failure {
                    code: e.code,
                    message: "--veracrypt-query-pim: standard input ended before the PIM, read \
                              as the line after the password (an empty line for none)"
                        .into(),
                },
                _ => e,
            })?;
            let typed = String::from_utf8_lossy(&line);
            let pim = match typed.trim() {
                "" => 0,
                t => t.parse().map_err(|_| Failure {
                    code: exit::USAGE,
                    message: "--veracrypt-query-pim: the line after the password is the PIM, \
                              a whole number (empty for none)"
                        .into(),
                })?,
            };
            TYPED_PIM.store(pim, Ordering::SeqCst);
            PIM_ON_STDIN.store(true, Ordering::SeqCst);
            return Ok(pim);
        }
        self.pim_on_terminal(prompt)
    }

    /// The PIM typed at `prompt` (Enter for none); on no terminal, the
    /// password's ways of asking say why not.
    fn pim_on_terminal(&self, prompt: &str) -> Result<u32, Failure> {
        if !self.interactive || !terminal_to_ask_on() {
            return Err(Failure {
                code: exit::USAGE,
                message: format!(
                    "--veracrypt-query-pim: no terminal to ask for the PIM on: {}",
                    other_way()
                ),
            });
        }
        // A typo is asked again, as VeraCrypt does, not the end of the
        // command (and of the password typed before it).
        loop {
            match on_terminal(prompt, "PIM")?.trim() {
                "" => {
                    TYPED_PIM.store(0, Ordering::SeqCst);
                    return Ok(0);
                }
                t => match t.parse() {
                    Ok(pim) => {
                        TYPED_PIM.store(pim, Ordering::SeqCst);
                        return Ok(pim);
                    }
                    Err(_) => eprintln!("a PIM is a whole number (Enter for none)"),
                },
            }
        }
    }
}

/// The keyfiles' contents (the first MiB of each); a folder means the
/// files in it, by the rule every side shares, and `-` standard input (as
/// cryptsetup's `--key-file -`).
pub fn read_keyfiles(paths: &[PathBuf]) -> Result<Vec<Zeroizing<Vec<u8>>>, Failure> {
    prepare_keyfiles(paths)?.finish()
}

/// Keyfiles read but for those on a token, whose PIN is asked only when
/// [`Keyfiles::finish`] reads them: after the password, as VeraCrypt asks.
pub struct Keyfiles {
    read: Vec<Zeroizing<Vec<u8>>>,
    tokens: Vec<crate::token::TokenKeyfile>,
}

impl Keyfiles {
    /// Whether no keyfile at all was named.
    pub fn is_empty(&self) -> bool {
        self.read.is_empty() && self.tokens.is_empty()
    }

    /// Every keyfile's contents, the token ones read now (their PIN asked).
    pub fn finish(self) -> Result<Vec<Zeroizing<Vec<u8>>>, Failure> {
        let mut out = self.read;
        for k in self.tokens {
            out.push(crate::token::read(&k, tcd_proto::keyfiles::MAX_READ)?);
        }
        Ok(out)
    }
}

/// Hidden files in the keyfile folders among `named`, skipped: said, as
/// VeraCrypt warns of them.
fn warn_of_hidden_keyfiles(named: &[PathBuf]) {
    let hidden = tcd_proto::keyfiles::hidden_skipped(named);
    if !hidden.is_empty() {
        let names: Vec<String> = hidden.iter().map(|p| p.display().to_string()).collect();
        eprintln!(
            "tcctl: warning: hidden files in a keyfile folder are never keyfiles, as in \
             VeraCrypt: skipped {}",
            names.join(", ")
        );
    }
}

/// A folder given as a keyfile on a line in cryptsetup's words, whose
/// --key-file takes a file: its files taken, as VeraCrypt takes a
/// folder, and said (how many), not left to a wrong password to show.
fn note_keyfile_folders(named: &[PathBuf]) {
    if !cryptsetup_line() {
        return;
    }
    for folder in named.iter().filter(|p| p.is_dir()) {
        let n = tcd_proto::keyfiles::files(std::slice::from_ref(folder)).map_or(0, |f| f.len());
        eprintln!(
            "tcctl: note: {} is a folder: the keyfiles are the files in it ({}), as VeraCrypt \
             takes a folder (cryptsetup's --key-file takes one file)",
            folder.display(),
            crate::output::count(n, "file")
        );
    }
}

/// The keyfiles in files and on standard input read, the token ones only
/// named: everything that can be refused without a PIN is refused here.
pub fn prepare_keyfiles(paths: &[PathBuf]) -> Result<Keyfiles, Failure> {
    use std::io::Read;
    let (stdin, named): (Vec<&PathBuf>, Vec<&PathBuf>) =
        paths.iter().partition(|p| p.as_os_str() == "-");
    // Token keyfiles (token://slot/N/file/NAME) come from the token.
    let mut tokens = Vec::new();
    let mut files_named = Vec::new();
    for p in named {
        match crate::token::TokenKeyfile::parse(&p.to_string_lossy()) {
            Some(k) => tokens.push(k?),
            None => files_named.push(p.clone()),
        }
    }
    let named = files_named;
    for p in &named {
        if let Err(e) = std::fs::metadata(p)
            && e.kind() == std::io::ErrorKind::NotFound
        {
            let list = p.to_string_lossy().contains(',');
            return Err(Failure::not_found(format!(
                "keyfile {}: no such file{}",
                p.display(),
                if list {
                    " (one --keyfile per file; VeraCrypt's comma-separated list is read after -t)"
                } else {
                    ""
                }
            )));
        }
    }
    let files = tcd_proto::keyfiles::files(&named).map_err(|e| Failure::invalid(e.to_string()))?;
    warn_of_hidden_keyfiles(&named);
    note_keyfile_folders(&named);
    let mut out = Vec::new();
    for _ in stdin {
        out.push(stdin_keyfile()?);
    }
    for p in files {
        let mut data = Zeroizing::new(Vec::new());
        open_regular(&p)
            .and_then(|f| {
                f.take(tcd_proto::keyfiles::MAX_READ as u64)
                    .read_to_end(&mut data)
            })
            .map_err(|e| {
                Failure::invalid(format!(
                    "keyfile {}: {}",
                    p.display(),
                    crate::bus::io_text(&e)
                ))
            })?;
        // Said here, by name: the daemon only knows it by its place.
        if data.is_empty() {
            return Err(Failure::invalid(format!(
                "keyfile {}: the file is empty (a keyfile holds at least one byte)",
                p.display()
            )));
        }
        out.push(data);
    }
    Ok(Keyfiles { read: out, tokens })
}

/// `--keyfile -`: the keyfile piped to standard input.
fn stdin_keyfile() -> Result<Zeroizing<Vec<u8>>, Failure> {
    use std::io::Read;
    take_stdin("--keyfile -")?;
    // Typed keyfiles are not a thing: a terminal means nothing was
    // piped in, and reading would wait in silence.
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return Err(Failure {
            code: exit::USAGE,
            message: "--keyfile - reads a keyfile piped to standard input, which is a \
                      terminal here: pipe or redirect the keyfile in (tcctl ... --keyfile - < FILE)"
                .into(),
        });
    }
    let mut data = Zeroizing::new(Vec::new());
    std::io::stdin()
        .lock()
        .take(tcd_proto::keyfiles::MAX_READ as u64)
        .read_to_end(&mut data)
        .map_err(|e| Failure::invalid(format!("keyfile from standard input: {e}")))?;
    // As an empty file is: said by its name here.
    if data.is_empty() {
        return Err(Failure::invalid(
            "keyfile - (standard input): nothing was piped in (a keyfile holds at least one \
             byte)"
                .into(),
        ));
    }
    Ok(data)
}

/// Opens a file the user names to be read whole (a keyfile, a header
/// file): a regular file, or a block device. A pipe or a terminal is
/// refused rather than waited on: opening a FIFO no one writes to blocks.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_file() || kind.is_block_device() {
        // Regular reads block again, as any file's.
        // SAFETY: F_SETFL on a descriptor this function owns; no pointers.
        let rc = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&file), libc::F_SETFL, 0) };
        return match rc {
            0 => Ok(file),
            _ => Err(std::io::Error::last_os_error()),
        };
    }
    let what = crate::host::describe(kind);
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("is {what}, not a regular file"),
    ))
}

/// A detached header file's bytes (`--header`): both header slots at most.
pub fn read_header(path: Option<&Path>) -> Result<Option<tcd_proto::contract::Secret>, Failure> {
    use std::io::Read;
    const MOST: u64 = 131072;
    let Some(path) = path else {
        return Ok(None);
    };
    let failed = |e: std::io::Error| {
        let f = Failure::file(path, &e);
        Failure {
            code: f.code,
            message: format!("--header {}", f.message),
        }
    };
    let mut bytes = Zeroizing::new(Vec::new());
    open_regular(path)
        .and_then(|f| f.take(MOST + 1).read_to_end(&mut bytes))
        .map_err(failed)?;
    if bytes.len() < 512 || bytes.len() as u64 > MOST {
        return Err(Failure::invalid(format!(
            "--header {}: a header file holds 512 bytes to 128 KiB, this one {}",
            path.display(),
            if bytes.len() < 512 { "less" } else { "more" }
        )));
    }
    Ok(Some(tcd_proto::contract::Secret(bytes)))
}

/// A size in bytes, or with K, M, G, T (binary units; VeraCrypt's KiB,
/// MiB, GiB, TiB too), whole or with a fraction that makes whole bytes
/// (1.5M).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let bad = |why: String| {
        format!(
            "{why} (a size is a number of bytes, or of K, M, G or T: binary units, 10M is \
             10 MiB)"
        )
    };
    let t = s.trim();
    let t = t
        .strip_suffix("iB")
        .filter(|n| n.ends_with(['K', 'M', 'G', 'T']))
        .unwrap_or(t);
    if let Some(n) = t.strip_suffix(['B', 'b'])
        && n.ends_with(['K', 'k', 'M', 'm', 'G', 'g', 'T', 't'])
    {
        // cryptsetup and VeraCrypt differ on whether MB is 10^6 or 2^20.
        return Err(bad(format!(
            "decimal units are not taken; write {n} for binary ones"
        )));
    }
    let (num, mult) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        Some('T' | 't') => (&t[..t.len() - 1], 1 << 40),
        _ => (t, 1),
    };
    let (whole, fraction) = num.split_once('.').unwrap_or((num, ""));
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !(fraction.is_empty() || digits(fraction)) || num.ends_with('.') {
        return Err(bad("not a number".into()));
    }
    let scale = u32::try_from(fraction.len())
        .ok()
        .and_then(|n| 10u128.checked_pow(n))
        .ok_or_else(|| bad("too many decimals".into()))?;
    let value = format!("{whole}{fraction}")
        .parse::<u128>()
        .ok()
        .and_then(|n| n.checked_mul(u128::from(mult)))
        .ok_or_else(|| bad("too large".into()))?;
    if value % scale != 0 {
        return Err(bad("not a whole number of bytes".into()));
    }
    u64::try_from(value / scale).map_err(|_| bad("too large".into()))
}

/// The size of a volume, its hidden volume or its growth: whole 512-byte
/// sectors, as every volume format counts them.
pub fn parse_volume_size(s: &str) -> Result<u64, String> {
    let size = parse_size(s)?;
    if size == 0 || size % 512 != 0 {
        let given = if s.trim() == size.to_string() {
            format!("{size} byte{}", if size == 1 { "" } else { "s" })
        } else {
            format!("{} ({size} bytes)", s.trim())
        };
        return Err(format!(
            "a volume's size is a whole, nonzero number of 512-byte sectors, not {given} \
             (K, M, G and T are whole sectors)"
        ));
    }
    Ok(size)
}

/// A sector size XTS takes: a power of two from 512 to 4096 bytes.
pub fn parse_sector_size(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(n) if n.is_power_of_two() && (512..=4096).contains(&n) => Ok(n),
        _ => Err("a sector size is 512, 1024, 2048 or 4096 bytes".into()),
    }
}

/// `create --size`: [`parse_volume_size`], or `max`, VeraCrypt's word for
/// the free space of the container's filesystem, as [`MAX_FREE`].
pub fn parse_create_size(s: &str) -> Result<u64, String> {
    match s.trim() {
        "max" => Ok(MAX_FREE),
        _ => parse_volume_size(s),
    }
}

/// `--size max`: not a size anyone can type (no multiple of 512), settled
/// once the container's folder is known.
pub const MAX_FREE: u64 = u64::MAX;

/// A benchmark buffer's size: at least one 512-byte data unit.
pub fn parse_benchmark_size(s: &str) -> Result<u64, String> {
    let size = parse_size(s)?;
    if size < 512 {
        return Err(format!(
            "a benchmark buffer holds at least one 512-byte data unit, not {size} bytes"
        ));
    }
    if size > 1 << 30 {
        return Err(
            "a benchmark buffer is at most 1 GiB (root; 256 MiB for other users), as \
                    TrueCrypt's largest"
                .into(),
        );
    }
    Ok(size)
}

/// A keyfile's size: 64 bytes to 1 MiB, as `parse_size` reads it.
pub fn parse_keyfile_size(s: &str) -> Result<u32, String> {
    let n = parse_size(s)?;
    match u32::try_from(n) {
        Ok(n) if (64..=1 << 20).contains(&n) => Ok(n),
        _ => Err(format!("{s} is not from 64 bytes to 1M (1048576 bytes)")),
    }
}

/// A volume's path made absolute, as `tcctl list` shows volumes: what
/// a command says of it then names it the same way. A file is named as
/// the kernel names it (symbolic links resolved, as the daemon names a
/// mounted container). Otherwise `.` and `..` go: the folder is resolved
/// (symbolic links too, so `link/..` is the link's target's parent), and
/// the name kept as given (a device's /dev/disk/by-id name stays).
pub fn shown_absolute(p: PathBuf) -> PathBuf {
    let abs = std::path::absolute(&p).unwrap_or(p);
    // `vol.hc/` is a folder's name: kept, so that it is refused as one.
    if crate::host::names_a_folder(&abs) {
        return abs;
    }
    if let Ok(real) = std::fs::canonicalize(&abs)
        && real.is_file()
    {
        return real;
    }
    let resolved = match (abs.parent(), abs.file_name()) {
        (Some(dir), Some(name)) => std::fs::canonicalize(dir).map(|d| d.join(name)),
        // `/` itself, or a path ending in `..`: a folder, resolved whole.
        _ => std::fs::canonicalize(&abs),
    };
    resolved.unwrap_or(abs)
}

/// `p` as an absolute path, for the daemon, which does not share our
/// working folder: nothing in it resolved, so the daemon's own checks of
/// links and folders see the path as the user gave it.
pub fn absolute(p: &Path) -> String {
    std::path::absolute(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}

/// A volume named as [`shown_absolute`] names it, for what tcctl says.
pub fn shown(p: &Path) -> String {
    shown_absolute(p.to_path_buf()).display().to_string()
}

/// Below this many characters a new password is refused without --force.
const SHORTEST_PASSWORD: usize = 8;
/// Below this many, a password typed on a terminal is asked about, as
/// VeraCrypt asks (its warning size threshold).
const ASKED_BELOW: usize = 12;
/// Below this many, a warning: VeraCrypt's advice is 20 or more.
const ADVISED_PASSWORD: usize = 20;

/// A warning of [`judge_new_password`] or [`judge_new_pim`], said when the
/// command goes ahead (not before a refusal that makes it moot).
#[must_use]
pub struct Warning(Option<String>);

impl Warning {
    /// Says it, if there is one, on standard error.
    pub fn say(self) {
        if let Some(w) = self.0 {
            eprintln!("tcctl: warning: {w}");
        }
    }
}

/// Says what VeraCrypt says of a short password, and refuses a very short
/// one unless forced. Keyfiles alone may open a volume: no password is
/// then fine.
pub fn judge_new_password(
    password: &[u8],
    keyfiles: bool,
    force: bool,
    keyfile_option: &'static str,
) -> Result<Warning, Failure> {
    let chars = String::from_utf8_lossy(password).chars().count();
    if chars == 0 && keyfiles {
        return Ok(Warning(None));
    }
    if chars == 0 {
        // Not even --force: no tool would ever open the volume.
        return Err(Failure {
            code: exit::INVALID_ARGUMENT,
            message: format!(
                "an empty password with no keyfile opens no volume: give a password, or \
                 keyfiles with {}",
                spelled(keyfile_option)
            ),
        });
    }
    if chars < SHORTEST_PASSWORD && !force {
        return Err(Failure {
            code: exit::INVALID_ARGUMENT,
            message: format!(
                "a password of {chars} characters is easy to guess: tcctl takes no fewer than \
                 {SHORTEST_PASSWORD} and advises {ADVISED_PASSWORD} or more (--force takes it \
                 anyway)"
            ),
        });
    }
    Ok(Warning((chars < ADVISED_PASSWORD).then(|| {
        format!(
            "a password shorter than {ADVISED_PASSWORD} characters is easier to guess by brute \
             force; {ADVISED_PASSWORD} or more are advised"
        )
    })))
}

/// A password line that could not be read: one that is no text (a
/// keyfile given where a password is read) is said as such, by where it
/// came from, with the way to give a keyfile.
fn not_a_password(e: std::io::Error) -> Failure {
    if e.kind() != std::io::ErrorKind::InvalidData {
        return Failure::invalid(format!("cannot read a password: {e}"));
    }
    Failure::invalid(match PASSPHRASE_FILE.get() {
        Some(file) => format!(
            "--key-file {0}: its first line is no passphrase (not text): on unlock, --key-file \
             is udisksctl's passphrase file; a TrueCrypt or VeraCrypt keyfile is given with -k {0}",
            file.display()
        ),
        None => "the password line on standard input is not text (UTF-8): a keyfile is given \
                 with --keyfile FILE, or --keyfile - on standard input"
            .into(),
    })
}

/// udisksctl's `unlock --key-file FILE`: FILE (opened with the user's
/// rights: a regular file, or a pipe such as `<(…)` or a piped
/// /dev/stdin, which udisksctl reads too) becomes standard input, which
/// the password is then read from as --password-stdin reads it.
pub fn password_from_file(path: &Path) -> Result<(), Failure> {
    use std::os::fd::AsRawFd;
    let f = open_regular(path)
        .or_else(|e| open_pipe(path).ok_or(e))
        .map_err(|e| {
            let mut f = Failure::file(path, &e);
            f.message = format!("--key-file (the passphrase file): {}", f.message);
            f
        })?;
    let _ = PASSPHRASE_FILE.set(path.to_path_buf());
    // SAFETY: dup2(2) on two descriptors this process owns: `f`, open
    // until the end of this function, and standard input, replaced.
    let rc = unsafe { libc::dup2(f.as_raw_fd(), 0) };
    if rc < 0 {
        let e = std::io::Error::last_os_error();
        return Err(Failure::invalid(format!(
            "{}: cannot read the passphrase from it: {e}",
            path.display()
        )));
    }
    Ok(())
}

/// `path` opened for reading if it is a pipe (the user's own, named on
/// the command line: waited on as a pipe on standard input is).
fn open_pipe(path: &Path) -> Option<File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    if !file.metadata().ok()?.file_type().is_fifo() {
        return None;
    }
    // Reads block again, as any pipe's.
    // SAFETY: F_SETFL on a descriptor this function owns; no pointers.
    let rc = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&file), libc::F_SETFL, 0) };
    (rc == 0).then_some(file)
}

/// A new password [`judge_new_password`] took, or one it refused as short
/// and the user, asked as VeraCrypt asks, did not want.
pub enum Judged {
    Taken(Warning),
    AskAnother,
}

/// [`judge_new_password`]; a password under [`ASKED_BELOW`] characters
/// typed on the terminal is not refused or warned of but asked about, as
/// VeraCrypt asks: yes takes it (as --force would), no asks for another.
pub fn judge_typed_password(
    pw: &Passwords,
    password: &[u8],
    keyfiles: bool,
    force: bool,
    keyfile_option: &'static str,
) -> Result<Judged, Failure> {
    let chars = String::from_utf8_lossy(password).chars().count();
    if (1..ASKED_BELOW).contains(&chars) && pw.typed() && !force {
        let sure = terminal_yes(
            "WARNING: Short passwords are easy to crack using brute force techniques! We \
             recommend choosing a password of 20 or more characters. Are you sure you want to \
             use a short password? (y=Yes/n=No) [No]: ",
        )?;
        // Warned by the question: no second warning.
        return Ok(match sure {
            true => Judged::Taken(Warning(None)),
            false => Judged::AskAnother,
        });
    }
    judge_new_password(password, keyfiles, force, keyfile_option).map(Judged::Taken)
}

/// The most bytes a TrueCrypt password takes, and VeraCrypt's before
/// 1.26; VeraCrypt 1.26 and later take [`VERACRYPT_LONGEST`].
const TRUECRYPT_LONGEST: usize = 64;
const VERACRYPT_LONGEST: usize = 128;

/// A new password's length against its format's limit: past it, refused
/// (the daemon refuses it too, later); one that only VeraCrypt 1.26 and
/// later take is warned of, as older versions cannot open the volume.
pub fn judge_password_length(len: usize, truecrypt: bool) -> Result<Warning, Failure> {
    let (max, name) = match truecrypt {
        true => (TRUECRYPT_LONGEST, "TrueCrypt"),
        false => (VERACRYPT_LONGEST, "VeraCrypt"),
    };
    if len > max {
        return Err(Failure::invalid(format!(
            "password of {len} bytes is longer than the {max} bytes {name} allows"
        )));
    }
    Ok(Warning((len > TRUECRYPT_LONGEST).then(|| {
        format!(
            "a password of {len} bytes opens the volume in VeraCrypt 1.26 and later only: \
             earlier versions take {TRUECRYPT_LONGEST} bytes at most"
        )
    })))
}

/// A new password with characters outside printable ASCII: taken (its
/// bytes are its UTF-8), and warned of, as VeraCrypt warns, since another
/// system, keyboard layout or TrueCrypt may not give the same bytes.
pub fn judge_portable(password: &[u8]) -> Warning {
    Warning(password.iter().any(|b| !(0x20..0x7f).contains(b)).then(|| {
        "the password has characters outside ASCII: another system or keyboard layout \
                 (or TrueCrypt, which takes ASCII only) may not type the same bytes, and the \
                 volume would not open there"
            .to_owned()
    }))
}

/// [`judge_password_length`] of a password just asked: one typed on the
/// terminal past the limit is said and another asked for (`None`), as a
/// short one is; one read from standard input is refused.
pub fn judge_asked_length(
    pw: &Passwords,
    password: &[u8],
    truecrypt: bool,
) -> Result<Option<Warning>, Failure> {
    match judge_password_length(password.len(), truecrypt) {
        Err(f) if pw.typed() => {
            eprintln!("tcctl: {}: type another", f.message);
            Ok(None)
        }
        judged => judged.map(Some),
    }
}

/// Below this PIM, VeraCrypt takes a new password of no fewer than
/// [`ADVISED_PASSWORD`] characters: fewer iterations need more password.
const PIM_NEEDING_LONG_PASSWORD: u32 = 485;

/// VeraCrypt's rule for a new volume's PIM: one under 485 with a password
/// shorter than 20 characters is refused unless forced. Keyfiles bring
/// their own entropy, so a password given with them is not held to it.
pub fn judge_new_pim(
    password: &[u8],
    pim: u32,
    keyfiles: bool,
    force: bool,
) -> Result<Warning, Failure> {
    let chars = String::from_utf8_lossy(password).chars().count();
    if pim == 0 || pim >= PIM_NEEDING_LONG_PASSWORD || chars >= ADVISED_PASSWORD || keyfiles {
        return Ok(Warning(None));
    }
    if !force {
        // Under 8 characters no PIM takes it: said, not sent to be refused
        // again for its length.
        let ways = match chars < SHORTEST_PASSWORD {
            true => format!(
                "a larger PIM, or none, takes one of {SHORTEST_PASSWORD} characters or more"
            ),
            false => "a larger PIM, or none, takes it".to_owned(),
        };
        return Err(Failure {
            code: exit::INVALID_ARGUMENT,
            message: format!(
                "a PIM under {PIM_NEEDING_LONG_PASSWORD} takes a password of \
                 {ADVISED_PASSWORD} characters or more, as VeraCrypt requires; this one has \
                 {chars} ({ways}; --force takes it anyway)"
            ),
        });
    }
    Ok(Warning(Some(format!(
        "PIM {pim} with a password of {chars} characters: few iterations of a short password \
         are quick to guess"
    ))))
}
