//! Cipher backends, the policy that chooses among them, the benchmark
//! and the self-test.

use super::Context;
use crate::bus::{Client, Failure, PolicyView, exit};
use crate::cli::{PolicyAction, PolicySetArgs, wire_name};
use crate::output;
use std::path::Path;
use tcd_proto::contract::policy::{Acceleration, Policy};

/// `tcctl backends`.
pub fn backends(ctx: Context<'_>, json: bool) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    let (cpu_aes, list) = c.backends()?;
    let policy = c.policy()?;
    output::backends(cpu_aes, &list, &policy, json);
    Ok(())
}

/// `tcctl policy show` and `tcctl policy set`.
pub fn policy(ctx: Context<'_>, action: PolicyAction) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    match action {
        PolicyAction::Show { json } => {
            output::policy(&c.policy()?, json);
            Ok(())
        }
        PolicyAction::Set(a) => {
            refuse_unknown_backends(&c, &a)?;
            let text = match &a.file {
                Some(f) => read_policy_file(f)?,
                None => changed_policy(a, c.policy()?, &c.backends()?.1)?,
            };
            let notes = c.set_policy(&text)?;
            output::policy_set(&notes, &c.policy()?);
            Ok(())
        }
    }
}

/// Refuses, by name, backends in --allow or --prefer the daemon does not
/// have (as the policy file itself would be).
fn refuse_unknown_backends(c: &Client, a: &PolicySetArgs) -> Result<(), Failure> {
    // `--prefer ""` alone clears the preference.
    let no_preference = a
        .prefer
        .as_ref()
        .is_some_and(|p| p.iter().all(String::is_empty));
    let prefer = a.prefer.iter().filter(|_| !no_preference);
    let named: Vec<&String> = a.allow.iter().chain(prefer).flatten().collect();
    if named.is_empty() {
        return Ok(());
    }
    let (_, list) = c.backends()?;
    let known: Vec<&str> = list
        .iter()
        .map(|b| b.name.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    // `--allow ""` or `--allow soft,`: a name left out, not a backend
    // named "".
    if named.iter().any(|n| n.trim().is_empty()) {
        let option = if a.allow.iter().flatten().any(|n| n.trim().is_empty()) {
            "--allow"
        } else {
            "--prefer"
        };
        return Err(Failure {
            code: exit::USAGE,
            message: format!(
                "{option} takes backend names, comma-separated, none empty (the daemon has: {})",
                known.join(", ")
            ),
        });
    }
    let unknown: Vec<&str> = named
        .iter()
        .map(|n| n.as_str())
        .filter(|n| !known.contains(n))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    // A value on the command line, as clap's own refusals of one (a policy
    // file with an unknown name is the daemon's to refuse).
    Err(Failure {
        code: exit::USAGE,
        message: format!(
            "unknown backend {} (the daemon has: {})",
            unknown.join(", "),
            known.join(", ")
        ),
    })
}

/// A whole policy from a file, or from standard input for "-".
fn read_policy_file(f: &Path) -> Result<String, Failure> {
    if f.as_os_str() == "-" {
        let mut t = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut t)
            .map_err(|e| Failure::invalid(format!("standard input: {e}")))?;
        return Ok(t);
    }
    std::fs::read_to_string(f).map_err(|e| Failure::file(f, &e))
}

/// The policy `now` with the settings given changed (the rest, such as
/// the filesystem allow-list and `[limits]`, as it is).
fn changed_policy(
    a: PolicySetArgs,
    now: PolicyView,
    backends: &[tcd_proto::contract::rows::BackendRow],
) -> Result<String, Failure> {
    let mut policy = Policy::parse(&now.text)
        .map_err(|e| Failure::invalid(format!("the daemon's policy does not parse: {e}")))?;
    if a.allow_all {
        policy.allowed = None;
    } else if let Some(allow) = a.allow {
        policy.allowed = Some(allow);
    }
    if let Some(h) = a.hardware_acceleration {
        let name = wire_name(h);
        if let Some(acc) = Acceleration::ALL.into_iter().find(|x| x.name() == name) {
            policy.hardware_acceleration = acc;
        }
    }
    match a.prefer {
        // `--prefer ""`: no preference.
        Some(prefer) if prefer.iter().all(|p| p.is_empty()) => policy.prefer.clear(),
        Some(prefer) => policy.prefer = prefer,
        // A preference for a backend the new settings keep out (--allow,
        // --hardware-acceleration disabled) could never be followed: it
        // goes, and the user is told.
        None => {
            let allowed = |name: &String| {
                backends
                    .iter()
                    .filter(|b| &b.name == name)
                    .all(|b| policy.allows(b))
            };
            let (kept, dropped): (Vec<String>, Vec<String>) =
                policy.prefer.clone().into_iter().partition(allowed);
            if !dropped.is_empty() {
                eprintln!(
                    "tcctl: no longer preferred, as no longer allowed: {}",
                    dropped.join(", ")
                );
            }
            policy.prefer = kept;
        }
    }
    if let Some(lib) = a.token_library {
        if !lib.is_absolute() {
            return Err(Failure {
                code: exit::USAGE,
                message: format!(
                    "--token-library {}: give the library's absolute path",
                    lib.display()
                ),
            });
        }
        policy.token_library = Some(lib.to_string_lossy().into_owned());
    }
    Ok(policy.to_text())
}

/// `tcctl benchmark`.
pub fn benchmark(ctx: Context<'_>, bytes: u64, json: bool) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    let show = !json && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bench = c.benchmark(bytes, show)?;
    output::benchmark(bench, json);
    Ok(())
}

/// `tcctl self-test`: the table, then exit 12 naming the first algorithm
/// that failed.
pub fn self_test(ctx: Context<'_>, json: bool) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    let rows = c.self_test()?;
    output::self_test(&rows, json);
    let failed: Vec<_> = rows.iter().filter(|r| !r.passed).collect();
    match failed.first() {
        None => Ok(()),
        Some(r) => Err(Failure {
            code: exit::SELF_TEST_FAILED,
            message: format!(
                "self-test failed: {} on {} ({}): {}{}",
                r.algorithm,
                r.backend,
                r.path,
                r.problem,
                match failed.len() {
                    1 => String::new(),
                    n => format!(" (and {} more checks)", n - 1),
                }
            ),
        }),
    }
}
