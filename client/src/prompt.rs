//! Passwords asked for when no terminal is attached (a desktop launcher, a
//! file manager's menu): a zenity or kdialog dialog on a graphical session,
//! else `systemd-ask-password` when one of its agents runs to answer; with
//! none of these the command fails at once.
//!
//! The password comes back on the helper's standard output, never on a
//! command line, and lives only in zeroized buffers.

use crate::bus::{Failure, exit};
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use zeroize::Zeroizing;

/// More than any volume format takes (VeraCrypt: 128 bytes); the daemon
/// refuses longer strings anyway.
const MAX_ANSWER: usize = 4096;

/// Asks for a password with the first helper this session has; `other_way`
/// says how to give it without one ("give it with --password-stdin").
pub fn ask(prompt: &str, other_way: &str) -> Result<Zeroizing<Vec<u8>>, Failure> {
    let text = prompt.trim_end().trim_end_matches(':');
    let graphical = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
    let mut command = match (graphical, find("zenity"), find("kdialog")) {
        (true, Some(zenity), _) => {
            let mut c = Command::new(zenity);
            c.args(["--password", "--title", text]);
            c
        }
        (true, None, Some(kdialog)) => {
            let mut c = Command::new(kdialog);
            c.args(["--title", "tcd", "--password", text]);
            c
        }
        _ => {
            let Some(agent) = find("systemd-ask-password").filter(|_| agent_running()) else {
                return Err(Failure {
                    code: exit::USAGE,
                    message: format!(
                        "no terminal, dialog or password agent to ask for a password on: \
                         {other_way}"
                    ),
                });
            };
            // It waits for an agent to answer, which may take long (or
            // never come): not in silence.
            eprintln!("tcctl: no terminal: asking the system's password agents (else {other_way})");
            let mut c = Command::new(agent);
            c.args([
                "--timeout=0",
                "--icon=drive-harddisk-encrypted",
                "--id=tcctl",
                text,
            ]);
            c
        }
    };
    run(&mut command, other_way)
}

/// Process names (as the kernel truncates them, 15 bytes) of the agents
/// that answer `systemd-ask-password` without a terminal: systemd's own
/// (its wall and console agents run it too) and plymouth's boot splash.
const AGENTS: [&str; 2] = ["systemd-tty-ask", "plymouthd"];

/// Whether a password agent runs: without one, `systemd-ask-password`
/// would wait for an answer that never comes.
fn agent_running() -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs.flatten().any(|p| {
        std::fs::read_to_string(p.path().join("comm"))
            .is_ok_and(|c| AGENTS.contains(&c.trim_end_matches('\n')))
    })
}

/// `tool`'s path in $PATH, if it is there.
fn find(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Runs the helper and takes its output, less the newline that ends it, as
/// the password; a helper that exits with an error means the user
/// cancelled.
fn run(command: &mut Command, other_way: &str) -> Result<Zeroizing<Vec<u8>>, Failure> {
    let name = command.get_program().to_string_lossy().into_owned();
    let failed = |e: std::io::Error| Failure {
        code: exit::FAILED,
        message: format!("cannot ask for a password with {name}: {e} (no terminal: {other_way})"),
    };
    dies_with_tcctl(command);
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(failed)?;
    // A buffer of fixed size: growing a Vec would leave copies of the
    // password in freed memory.
    let mut answer = Zeroizing::new(vec![0u8; MAX_ANSWER]);
    let mut len = 0;
    let read = match child.stdout.take() {
        Some(mut out) => loop {
            if len == answer.len() {
                break Err(std::io::Error::other("the answer is too long"));
            }
            match out.read(&mut answer[len..]) {
                Ok(0) => break Ok(()),
                Ok(n) => len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        },
        None => Err(std::io::Error::other("no output")),
    };
    if read.is_err() {
        let _ = child.kill();
    }
    let status = child.wait().map_err(failed)?;
    read.map_err(failed)?;
    if !status.success() {
        return Err(Failure {
            code: exit::CANCELLED,
            message: "no password given (the prompt was cancelled)".into(),
        });
    }
    answer.truncate(len);
    if answer.last() == Some(&b'\n') {
        answer.truncate(len - 1);
    }
    Ok(answer)
}

/// The helper goes when tcctl does (killed, or interrupted): no dialog or
/// agent request is left waiting for nobody.
fn dies_with_tcctl(command: &mut Command) {
    // SAFETY: the closure runs in the child between fork and exec, where
    // only async-signal-safe calls are allowed: prctl is one, and it
    // touches no memory.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
