//! What `tcctl` prints: the tables for people and the `--json` documents
//! for scripts, in one place so both stay in step.

use crate::bus::{self, Bench, Favorite, PolicyView, Volume};
use serde_json::{Value as Json, json};
use std::collections::HashMap;
use zbus::zvariant::OwnedValue;

/// A volume's health and problems, by object path.
pub type Health = HashMap<String, (String, Vec<String>)>;

fn yes_no(b: bool) -> &'static str {
    if b { "Yes" } else { "No" }
}

fn mbs(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.0}")
    } else {
        "-".into()
    }
}

/// "PID 1234 (bash), a process of another user".
pub fn describe_holders(holders: &[(u32, String)]) -> String {
    holders
        .iter()
        .map(|(pid, command)| match pid {
            0 => "a process of another user".to_owned(),
            _ => format!("PID {pid} ({command})"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `tcctl list`.
pub fn volumes(rows: &[Volume], health: &Health, json: bool) {
    // A volume whose object is not (or no longer) there: never "ok".
    let health_of = |v: &Volume| {
        health
            .get(v.object.as_str())
            .cloned()
            .unwrap_or_else(|| ("unknown".into(), Vec::new()))
    };
    if json {
        let v: Vec<_> = rows
            .iter()
            .map(|r| {
                let (health, problems) = health_of(r);
                json!({"object": r.object.as_str(), "volume": r.host, "device": r.device,
                    "mount_point": r.mount_point, "filesystem": r.filesystem, "format": r.format,
                    "encryption": r.encryption, "hash": r.hash, "read_only": r.read_only,
                    "hidden": r.hidden, "protects_hidden": r.protects_hidden, "size": r.size,
                    "backends": r.backends, "state": r.state, "health": health,
                    "problems": problems})
            })
            .collect();
        println!("{}", Json::Array(v));
        return;
    }
    for r in rows {
        let (health, problems) = health_of(r);
        println!("{}", volume_line(r, &health));
        for p in problems {
            println!("    {p}");
        }
    }
}

/// One volume on one line: quiet while all is well, loud otherwise.
fn volume_line(r: &Volume, health: &str) -> String {
    format!(
        "{}  {}  {}  {}  {}  {}{}  [{}]{}{}",
        r.host,
        r.device,
        if r.mount_point.is_empty() {
            "-"
        } else {
            &r.mount_point
        },
        r.encryption,
        r.format,
        if r.read_only {
            "read-only"
        } else {
            "read-write"
        },
        if r.hidden { ", hidden" } else { "" },
        r.backends,
        if r.state == "mounted" {
            String::new()
        } else {
            format!("  {}", r.state)
        },
        if health == "ok" {
            String::new()
        } else {
            format!("  {}", health.to_uppercase())
        }
    )
}

/// `tcctl info`: the header's fields, sorted by name.
pub fn header_info(info: &HashMap<String, OwnedValue>, json: bool) {
    let mut keys: Vec<_> = info.keys().cloned().collect();
    keys.sort();
    if json {
        let map: serde_json::Map<String, Json> = keys
            .iter()
            .map(|k| (k.clone(), bus::to_json(&info[k])))
            .collect();
        println!("{}", Json::Object(map));
        return;
    }
    for k in keys {
        println!(
            "{k:<20} {}",
            bus::to_json(&info[&k]).to_string().trim_matches('"')
        );
    }
}

/// `tcctl backends`.
pub fn backends(cpu_aes: bool, list: &[bus::Backend], policy: &PolicyView, json: bool) {
    if json {
        let v: Vec<_> = list
            .iter()
            .map(|b| {
                json!({"name": b.name, "description": b.description, "version": b.version,
                    "file": b.file, "sha256": b.sha256, "uses_cpu_crypto": b.uses_cpu_crypto, "available": b.available,
                    "allowed": b.allowed, "loaded": b.loaded, "ciphers": b.ciphers,
                    "problem": if b.skipped.is_empty() { Json::Null } else { b.skipped.clone().into() }})
            })
            .collect();
        println!(
            "{}",
            json!({"cpu_aes": cpu_aes, "hardware_acceleration": policy.hardware_acceleration,
                "policy_file": policy.file, "backends": v})
        );
        return;
    }
    println!(
        "Processor (CPU) in this computer provides hardware acceleration for AES: {}",
        yes_no(cpu_aes)
    );
    println!(
        "Hardware acceleration by policy: {} ({})\n",
        policy.hardware_acceleration, policy.file
    );
    println!(
        "{:<8} {:<8} {:<10} {:<9} {:<7} {:<6} CIPHERS",
        "BACKEND", "VERSION", "CPU CRYPTO", "AVAILABLE", "ALLOWED", "LOADED"
    );
    for b in list.iter().filter(|b| b.skipped.is_empty()) {
        println!(
            "{:<8} {:<8} {:<10} {:<9} {:<7} {:<6} {}",
            b.name,
            b.version,
            yes_no(b.uses_cpu_crypto),
            yes_no(b.available),
            yes_no(b.allowed),
            yes_no(b.loaded),
            b.ciphers.join(", ")
        );
    }
    println!();
    for b in list {
        if b.skipped.is_empty() {
            println!("{}: {}", b.name, b.description);
        } else {
            println!("skipped: {}", b.skipped);
        }
        println!("  {}\n  sha256 {}", b.file, b.sha256);
    }
}

/// `tcctl policy show`.
pub fn policy(p: &PolicyView, json: bool) {
    if json {
        println!(
            "{}",
            json!({"file": p.file, "hardware_acceleration": p.hardware_acceleration,
                "allowed": if p.all_allowed { Json::Null } else { p.allowed.clone().into() },
                "prefer": p.prefer, "text": p.text})
        );
    } else {
        println!("# {}", p.file);
        print!("{}", p.text);
    }
}

/// After `tcctl policy set`: the notes on volumes that keep their old
/// backends, and the policy now in force.
pub fn policy_set(notes: &[String], p: &PolicyView) {
    for note in notes {
        println!("{note}");
    }
    println!("policy in force ({}):", p.file);
    print!("{}", p.text);
}

/// `tcctl benchmark`: fastest first.
pub fn benchmark(buffer_bytes: u64, bench: Bench, json: bool) {
    let Bench {
        threads,
        cpu_has_aes: cpu_aes,
        mut ciphers,
        mut kdfs,
    } = bench;
    ciphers.sort_by(|a, b| b.mean_mbs.total_cmp(&a.mean_mbs));
    kdfs.sort_by(|a, b| b.per_second.total_cmp(&a.per_second));
    if json {
        let rows: Vec<_> = ciphers
            .iter()
            .map(|r| {
                json!({"encryption": r.encryption, "backends": r.backends, "encrypt_mbs": r.encrypt_mbs,
                    "decrypt_mbs": r.decrypt_mbs, "mean_mbs": r.mean_mbs, "hardware_aes": r.hardware_aes})
            })
            .collect();
        let prfs: Vec<_> = kdfs
            .iter()
            .map(|k| {
                json!({"prf": k.prf, "iterations": k.iterations,
                    "iterations_per_second": k.per_second, "trial_seconds": k.trial_seconds})
            })
            .collect();
        println!(
            "{}",
            json!({"buffer_bytes": buffer_bytes, "threads": threads,
                "cpu_aes": cpu_aes, "ciphers": rows, "prfs": prfs})
        );
        return;
    }
    println!(
        "Buffer {} MB on {threads} threads; processor AES instructions: {}",
        buffer_bytes as f64 / 1e6,
        yes_no(cpu_aes)
    );
    cipher_table(&ciphers);
    println!(
        "{:<12} {:>10} {:>14} {:>14}",
        "PRF", "ITERATIONS", "ITER/S (1 CPU)", "HEADER TRIAL"
    );
    for k in &kdfs {
        println!(
            "{:<12} {:>10} {:>14.0} {:>12.2} s",
            k.prf, k.iterations, k.per_second, k.trial_seconds
        );
    }
}

fn cipher_table(ciphers: &[bus::CipherBench]) {
    println!(
        "{:<28} {:<11} {:>9} {:>9} {:>9}  AES ON",
        "ALGORITHM", "BACKENDS", "ENCRYPT", "DECRYPT", "MEAN"
    );
    for r in ciphers {
        let hw = if !r.encryption.contains("AES") {
            "-"
        } else if r.hardware_aes {
            "hardware"
        } else {
            "software"
        };
        println!(
            "{:<28} {:<11} {:>9} {:>9} {:>9}  {hw}",
            r.encryption,
            r.backends,
            mbs(r.encrypt_mbs),
            mbs(r.decrypt_mbs),
            mbs(r.mean_mbs)
        );
    }
    println!("(MB/s, 10^6 bytes per second)\n");
}

/// `tcctl favorites list`; `in_keyring` says whether one of yours has a
/// kept password.
pub fn favorites(favs: &[Favorite], json: bool, in_keyring: impl Fn(&Favorite) -> bool) {
    if json {
        let v: Vec<_> = favs
            .iter()
            .map(|f| {
                let mut o = serde_json::Map::new();
                for (k, v) in &f.fields {
                    o.insert(k.clone(), bus::to_json(v));
                }
                o.insert("system".into(), f.system.into());
                Json::Object(o)
            })
            .collect();
        println!("{}", Json::Array(v));
        return;
    }
    println!(
        "{:<14} {:<6} {:<44} {:<20} SETTINGS",
        "NAME", "OWNER", "VOLUME", "MOUNT POINT"
    );
    for f in favs {
        let mut notes = favorite_notes(f);
        if !f.system && in_keyring(f) {
            notes.push("password in keyring".into());
        }
        println!(
            "{:<14} {:<6} {:<44} {:<20} {}",
            f.name,
            if f.system { "system" } else { "you" },
            f.host(),
            f.str("mount_point").unwrap_or_else(|| "-".into()),
            notes.join(", ")
        );
    }
}

/// A favorite's settings worth a word in the table.
fn favorite_notes(f: &Favorite) -> Vec<String> {
    let mut notes = Vec::new();
    if f.bool("auto_mount") {
        notes.push("auto-mount".to_owned());
    }
    if f.bool("readonly") {
        notes.push("read-only".into());
    }
    if f.bool("dismount_on_logout") {
        notes.push("dismount at logout".into());
    }
    if f.bool("dismount_before_sleep") {
        notes.push("dismount before sleep".into());
    }
    if f.u32("dismount_idle_seconds") > 0 {
        notes.push(format!(
            "dismount after {} s idle",
            f.u32("dismount_idle_seconds")
        ));
    }
    if let (Some(h), Some(e)) = (f.str("hash"), f.str("encryption")) {
        notes.push(format!("last {e}/{h}"));
    }
    notes
}
