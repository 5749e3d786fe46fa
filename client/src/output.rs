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
                json!({"name": b.0, "description": b.1, "version": b.2,
                    "file": b.3, "sha256": b.4, "uses_cpu_crypto": b.5, "available": b.6,
                    "allowed": b.7, "loaded": b.8, "ciphers": b.9,
                    "problem": if b.10.is_empty() { Json::Null } else { b.10.clone().into() }})
            })
            .collect();
        println!(
            "{}",
            json!({"cpu_aes": cpu_aes, "hardware_acceleration": policy.2,
                "policy_file": policy.1, "backends": v})
        );
        return;
    }
    println!(
        "Processor (CPU) in this computer provides hardware acceleration for AES: {}",
        yes_no(cpu_aes)
    );
    println!(
        "Hardware acceleration by policy: {} ({})\n",
        policy.2, policy.1
    );
    println!(
        "{:<8} {:<8} {:<10} {:<9} {:<7} {:<6} CIPHERS",
        "BACKEND", "VERSION", "CPU CRYPTO", "AVAILABLE", "ALLOWED", "LOADED"
    );
    for b in list.iter().filter(|b| b.10.is_empty()) {
        println!(
            "{:<8} {:<8} {:<10} {:<9} {:<7} {:<6} {}",
            b.0,
            b.2,
            yes_no(b.5),
            yes_no(b.6),
            yes_no(b.7),
            yes_no(b.8),
            b.9.join(", ")
        );
    }
    println!();
    for b in list {
        if b.10.is_empty() {
            println!("{}: {}", b.0, b.1);
        } else {
            println!("skipped: {}", b.10);
        }
        println!("  {}\n  sha256 {}", b.3, b.4);
    }
}

/// `tcctl policy show`.
pub fn policy(p: &PolicyView, json: bool) {
    if json {
        println!(
            "{}",
            json!({"file": p.1, "hardware_acceleration": p.2,
                "allowed": if p.3 { Json::Null } else { p.4.clone().into() },
                "prefer": p.5, "text": p.0})
        );
    } else {
        println!("# {}", p.1);
        print!("{}", p.0);
    }
}

/// After `tcctl policy set`: the notes on volumes that keep their old
/// backends, and the policy now in force.
pub fn policy_set(notes: &[String], p: &PolicyView) {
    for note in notes {
        println!("{note}");
    }
    println!("policy in force ({}):", p.1);
    print!("{}", p.0);
}

/// `tcctl benchmark`: fastest first.
pub fn benchmark(buffer_bytes: u64, bench: Bench, json: bool) {
    let (threads, cpu_aes, mut ciphers, mut kdfs) = bench;
    ciphers.sort_by(|a, b| b.4.total_cmp(&a.4));
    kdfs.sort_by(|a, b| b.2.total_cmp(&a.2));
    if json {
        let rows: Vec<_> = ciphers
            .iter()
            .map(|r| {
                json!({"encryption": r.0, "backends": r.1, "encrypt_mbs": r.2,
                    "decrypt_mbs": r.3, "mean_mbs": r.4, "hardware_aes": r.5})
            })
            .collect();
        let prfs: Vec<_> = kdfs
            .iter()
            .map(|k| {
                json!({"prf": k.0, "iterations": k.1,
                    "iterations_per_second": k.2, "trial_seconds": k.3})
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
        println!("{:<12} {:>10} {:>14.0} {:>12.2} s", k.0, k.1, k.2, k.3);
    }
}

fn cipher_table(ciphers: &[bus::CipherBench]) {
    println!(
        "{:<28} {:<11} {:>9} {:>9} {:>9}  AES ON",
        "ALGORITHM", "BACKENDS", "ENCRYPT", "DECRYPT", "MEAN"
    );
    for r in ciphers {
        let hw = if !r.0.contains("AES") {
            "-"
        } else if r.5 {
            "hardware"
        } else {
            "software"
        };
        println!(
            "{:<28} {:<11} {:>9} {:>9} {:>9}  {hw}",
            r.0,
            r.1,
            mbs(r.2),
            mbs(r.3),
            mbs(r.4)
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
