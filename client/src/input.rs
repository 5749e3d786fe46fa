//! What the user hands `tcctl` besides options: passwords, keyfiles,
//! sizes and paths.

use crate::bus::{Failure, exit};
use crate::prompt;
use std::fs::File;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use zeroize::Zeroizing;

/// Passwords from standard input (one line each), a terminal prompt, or
/// without a terminal a graphical one (or the system's password agents);
/// with `interactive` false, only from standard input.
pub struct Passwords {
    stdin: bool,
    interactive: bool,
    lines: Option<std::io::StdinLock<'static>>,
}

impl Passwords {
    pub fn new(stdin: bool, interactive: bool) -> Self {
        Passwords {
            stdin,
            interactive,
            lines: None,
        }
    }

    pub fn ask(&mut self, prompt: &str) -> Result<Zeroizing<Vec<u8>>, Failure> {
        if self.stdin {
            let lines = self.lines.get_or_insert_with(|| std::io::stdin().lock());
            let mut line = Zeroizing::new(String::new());
            lines
                .read_line(&mut line)
                .map_err(|e| Failure::usage(format!("cannot read a password: {e}")))?;
            let trimmed = line.trim_end_matches(['\n', '\r']);
            return Ok(Zeroizing::new(trimmed.as_bytes().to_vec()));
        }
        if !self.interactive {
            return Err(Failure {
                code: exit::USAGE,
                message: "a password is needed, and --non-interactive asks for none: \
                          give it with --password-stdin"
                    .into(),
            });
        }
        if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            return prompt::ask(prompt);
        }
        let p = rpassword::prompt_password(prompt)
            .map_err(|e| Failure::usage(format!("cannot read a password: {e}")))?;
        Ok(Zeroizing::new(p.into_bytes()))
    }
}

/// The keyfiles' contents (the first MiB of each); a folder means the
/// files in it, by the rule every side shares.
pub fn read_keyfiles(paths: &[PathBuf]) -> Result<Vec<Zeroizing<Vec<u8>>>, Failure> {
    use std::io::Read;
    let files = tcd_proto::keyfiles::files(paths).map_err(|e| Failure::usage(e.to_string()))?;
    let mut out = Vec::new();
    for p in files {
        let mut data = Zeroizing::new(Vec::new());
        File::open(&p)
            .and_then(|f| {
                f.take(tcd_proto::keyfiles::MAX_READ as u64)
                    .read_to_end(&mut data)
            })
            .map_err(|e| Failure::usage(format!("keyfile {}: {e}", p.display())))?;
        out.push(data);
    }
    Ok(out)
}

/// A size in bytes, or with K, M, G, T (binary units; VeraCrypt's KiB,
/// MiB, GiB, TiB too).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let s = s
        .strip_suffix("iB")
        .filter(|n| n.ends_with(['K', 'M', 'G', 'T']))
        .unwrap_or(s);
    let (num, mult) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&s[..s.len() - 1], 1 << 20),
        Some('G' | 'g') => (&s[..s.len() - 1], 1 << 30),
        Some('T' | 't') => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("bad size {s}"))
}

/// A size in decimal units, as TrueCrypt's benchmark states them.
pub fn parse_decimal_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1_000,
                'M' => 1_000_000,
                'G' => 1_000_000_000,
                _ => return Err(format!("bad size {s}")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("bad size {s}"))
}

/// `p` as an absolute path, for the daemon, which does not share our
/// working folder.
pub fn absolute(p: &Path) -> String {
    std::path::absolute(p)
        .unwrap_or_else(|_| p.to_path_buf())
        .display()
        .to_string()
}
