//! What `tcctl` prints: the tables for people and the `--json` documents
//! for scripts, in one place so both stay in step.

use crate::bus::{self, Bench, Favorite, HeaderInfo, PolicyView, Volume, VolumeState};
use serde_json::{Value as Json, json};
use tcd_proto::contract::options::VolumeFormat;

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

/// "1 device", "2 devices": `n` of `what`, with its plural.
pub fn count(n: usize, what: &str) -> String {
    match n {
        1 => format!("1 {what}"),
        n => format!("{n} {what}s"),
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

/// The version of every `--json` document (its `schema` field): it
/// changes only when a field changes meaning or type, never for a new
/// field.
pub const SCHEMA: u32 = 1;

/// The manual page's OUTPUT section (roff): what `--json` promises.
pub const MAN_SECTION: &str = r#".SH OUTPUT
With \fB\-\-json\fR, \fBlist\fR, \fBstatus\fR, \fBinfo\fR, \fBdump\fR, \fBbackends\fR,
\fBpolicy show\fR, \fBbenchmark\fR, \fBself\-test\fR, \fBtoken list\fR and \fBfavorites list\fR print one JSON object (\fBmonitor\fR one a line) with \fB"schema": 1\fR. The number changes only when a field changes
meaning or type; new fields may appear. Lists are arrays and absent facts
are \fBnull\fR, never empty strings.
\fBlist \-\-json\fR is \fB{"schema": 1, "volumes": [...]}\fR; each volume has
\fBobject\fR (its D\-Bus object path), \fBid\fR, \fBvolume\fR, \fBdevice\fR,
\fBmount_point\fR (null when only attached), \fBfilesystem\fR, \fBformat\fR,
\fBencryption\fR, \fBhash\fR, \fBread_only\fR, \fBhidden\fR, \fBprotects_hidden\fR,
\fBsystem_encryption\fR, \fBused_backup_header\fR,
\fBsize\fR, \fBsector_size\fR, \fBbackends\fR (array), \fBowner\fR, \fBstate\fR,
\fBhealth\fR, \fBproblems\fR (array), \fBslot\fR (VeraCrypt's, null while detaching),
\fBdiscard\fR and \fBdismount_idle\fR (seconds, 0 for never). \fBstatus \-\-json\fR is one of them.
\fBinfo \-\-json\fR and \fBdump \-\-json\fR have \fBpath\fR, \fBformat\fR,
\fBheader_version\fR, \fBencryption\fR, \fBhash\fR, \fBpim\fR (null: the default),
\fBiterations\fR (null for Argon2id), \fBargon2_memory_kib\fR and
\fBargon2_passes\fR (Argon2id's costs, null for PBKDF2), \fBhidden\fR, \fBused_backup_header\fR,
\fBdata_offset\fR, \fBsize\fR, \fBsector_size\fR, \fBweak_keys\fR, \fBbackends\fR
(array), \fBkey_bits\fR, \fBmode\fR, \fBsystem_encryption\fR, \fBminimum_version\fR
(the header's minimum program version, as "VeraCrypt 1.0b": the earliest release that
opens it, not the one that made it; \fBcreated_by\fR, its earlier name, holds the same), and with \fB\-\-dump\-master\-key\fR
\fBmaster_key\fR (hex).
\fBfavorites list \-\-json\fR is \fB{"schema": 1, "favorites": [...]}\fR; each has
every key of the favorites file (null when not set, \fBkeyfiles\fR an array),
\fBsystem\fR, and \fBvolume\fR (its \fBhost\fR, as \fBlist \-\-json\fR names it).
\fBself\-test \-\-json\fR is \fB{"schema": 1, "passed": ..., "checks": [...]}\fR; each
check has \fBalgorithm\fR, \fBbackend\fR, \fBpath\fR (the code path), \fBpassed\fR and
\fBproblem\fR (null when it passed).
\fBtoken list \-\-json\fR is \fB{"schema": 1, "keyfiles": [...]}\fR; each has
\fBkeyfile\fR (its token:// name), \fBslot\fR and \fBname\fR.
.PP
\fBmonitor\fR prints one line per event, the local time first
(\fBHH:MM:SS.mmm: \fR), then the volume's object and what happened:
mounted, attached, dismounted, dismounted automatically, health, changed,
or \fBpolicy changed\fR. \fBmonitor \-\-json\fR prints one object a line, no
banner: \fBschema\fR, \fBtime\fR (UTC, ISO 8601), \fBevent\fR (\fBmounted\fR,
\fBattached\fR, \fBdismounted\fR, \fBauto_dismounted\fR, \fBauto_dismount_failed\fR,
\fBhealth\fR, \fBchanged\fR, \fBheaders_written\fR, \fBpolicy_changed\fR),
\fBobject\fR (null for headers and the policy), \fBmessage\fR (the line's words)
and the event's fields: \fBvolume\fR, \fBdevice\fR, \fBmount_point\fR,
\fBread_only\fR, \fBreason\fR, \fBerror\fR, \fBhealth\fR, \fBproblems\fR,
\fBchanges\fR (each property by its D\-Bus name), \fBmethod\fR, \fBsize\fR,
\fBbackup\fR, \fBhidden\fR, \fBconverted_to\fR, \fBpolicy\fR.
"#;

/// A text as JSON: `null` when absent or empty.
fn text_or_null(v: Option<&str>) -> Json {
    v.filter(|s| !s.is_empty()).map_or(Json::Null, Json::from)
}

/// One volume in every `--json` document that shows volumes.
pub fn volume_json(v: &Volume) -> Json {
    let o = &v.view;
    json!({"object": v.object.as_str(), "id": v.id(), "volume": text_or_null(o.host.as_deref()),
        "device": text_or_null(o.device.as_deref()),
        "mount_point": text_or_null(o.mount_point.as_deref()),
        "filesystem": text_or_null(o.filesystem.as_deref()),
        "format": text_or_null(o.format.as_deref()),
        "encryption": text_or_null(o.encryption.as_deref()), "hash": text_or_null(o.hash.as_deref()),
        "read_only": o.read_only, "hidden": o.hidden, "protects_hidden": o.protects_hidden,
        "system_encryption": o.system_encryption, "used_backup_header": o.used_backup_header,
        "size": o.size, "sector_size": o.sector_size, "backends": o.backends.clone().unwrap_or_default(),
        "owner": o.owner, "state": json_state(v), "health": v.health(),
        "slot": v.slot(), "discard": o.discard.unwrap_or_default(),
        "dismount_idle": o.dismount_idle.unwrap_or_default(),
        "problems": o.problems.clone().unwrap_or_default()})
}

/// `veracrypt -t -l`'s lines: `SLOT: VOLUME DEVICE MOUNT POINT`, the
/// slot the daemon gave the volume at its mount; `-` for no mount point.
/// Volumes detaching are left out: they are not mounted any more (`list`
/// shows them). A path with a space is quoted as VeraCrypt quotes it.
/// Returns how many lines it printed, in the order of the slots as
/// VeraCrypt prints them.
pub fn veracrypt_lines(rows: &[Volume], only: Option<&zbus::zvariant::OwnedObjectPath>) -> usize {
    let mut shown: Vec<(u32, &Volume)> = rows
        .iter()
        .zip(slots(rows))
        .filter(|(r, _)| r.state() != VolumeState::Detaching)
        .filter(|(r, _)| only.is_none_or(|o| &r.object == o))
        .filter_map(|(r, slot)| Some((slot?, r)))
        .collect();
    shown.sort_by_key(|(slot, _)| *slot);
    for (slot, r) in &shown {
        let at = r.mount_point().unwrap_or("-");
        let (host, at) = (quote_spaces(r.host()), quote_spaces(at));
        println!("{slot}: {host} {} {at}", r.device());
    }
    shown.len()
}

/// Each row's VeraCrypt slot: the daemon's (none while detaching); a
/// daemon that keeps none (an older one) has each row given the lowest
/// number no other row has.
pub fn slots(rows: &[Volume]) -> Vec<Option<u32>> {
    let mut taken: Vec<u32> = rows.iter().filter_map(Volume::slot).collect();
    rows.iter()
        .map(|r| match r.view.slot {
            Some(n) => (n > 0).then_some(n),
            None => {
                let free = (1..).find(|n| !taken.contains(n)).unwrap_or(u32::MAX);
                taken.push(free);
                Some(free)
            }
        })
        .collect()
}

/// `s` as one word of a shell command to copy: as it is when it holds
/// nothing a shell reads specially, else in single quotes (each quote
/// inside written `'\''`).
pub fn shell_word(s: &str) -> std::borrow::Cow<'_, str> {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:@%+=,-".contains(&b));
    if plain {
        s.into()
    } else {
        format!("'{}'", s.replace('\'', "'\\''")).into()
    }
}

/// VeraCrypt's quoting in its lists: a text with a space in single quotes,
/// each quote inside doubled; any other text as it is.
fn quote_spaces(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains(' ') {
        format!("'{}'", s.replace('\'', "''")).into()
    } else {
        s.into()
    }
}

/// `tcctl list`.
pub fn volumes(rows: &[Volume], json: bool) {
    if json {
        let v: Vec<_> = rows.iter().map(volume_json).collect();
        println!("{}", json!({"schema": SCHEMA, "volumes": v}));
        return;
    }
    if rows.is_empty() {
        println!("No volumes mounted.");
        return;
    }
    let mut table = vec![
        [
            "VOLUME",
            "DEVICE",
            "MOUNT POINT",
            "SIZE",
            "ENCRYPTION",
            "FORMAT",
            "ACCESS",
            "HIDDEN",
            "BACKENDS",
            "STATE",
        ]
        .map(String::from),
    ];
    table.extend(rows.iter().map(volume_cells));
    print_table(&table);
    for r in rows {
        for p in r.view.problems.iter().flatten() {
            println!("{}: {p}", r.host());
        }
    }
}

/// The HIDDEN column: whether the volume is a hidden one, or the outer
/// volume guarding its hidden one (writes into it refused).
fn hidden_cell(hidden: bool, protects: bool) -> String {
    match (hidden, protects) {
        (_, true) => "protected".into(),
        (h, false) => yes_no(h).into(),
    }
}

/// The JSON `state`: "attached" for a block device with no filesystem
/// mounted, which the daemon counts as mounted.
fn json_state(v: &Volume) -> &'static str {
    match (v.state(), v.mount_point()) {
        (VolumeState::Mounted, None) => "attached",
        (state, _) => state.name(),
    }
}

/// One volume's cells of `tcctl list`: the state is quiet while all is
/// well, loud otherwise.
fn volume_cells(r: &Volume) -> [String; 10] {
    let o = &r.view;
    let state = match (r.state(), r.health()) {
        (VolumeState::Mounted, "ok") => "ok".to_owned(),
        (VolumeState::Mounted, health) => health.to_uppercase(),
        (state, "ok") => state.name().to_owned(),
        (state, health) => format!("{}, {}", state.name(), health.to_uppercase()),
    };
    [
        r.host().to_owned(),
        r.device().to_owned(),
        r.mount_point().unwrap_or("-").to_owned(),
        o.size.map_or_else(|| "-".into(), human_size),
        o.encryption.clone().unwrap_or_default(),
        o.format.clone().unwrap_or_default(),
        if o.read_only.unwrap_or_default() {
            "read-only"
        } else {
            "read-write"
        }
        .to_owned(),
        hidden_cell(
            o.hidden.unwrap_or_default(),
            o.protects_hidden.unwrap_or_default(),
        ),
        // One backend per layer, `+` between them, as benchmark and
        // self-test name a cascade's.
        o.backends.clone().unwrap_or_default().join("+"),
        state,
    ]
}

/// Rows in columns two spaces apart, the last one unpadded.
fn print_table<const N: usize>(rows: &[[String; N]]) {
    let mut widths = [0; N];
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        println!("{}", line.trim_end());
    }
}

/// Bytes in binary units, as `lsblk` shows them ("64M", "1.5G").
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "K", "M", "G", "T", "P"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    // As lsblk: one decimal, rounded, unless it is 0.
    let tenths = (v * 10.0).round() as u64;
    if unit == 0 || tenths.is_multiple_of(10) {
        format!("{}{}", tenths / 10, UNITS[unit])
    } else {
        format!("{}.{}{}", tenths / 10, tenths % 10, UNITS[unit])
    }
}

/// What `HeaderInfo` says, as `info --json` and `dump --json` show it.
pub fn header_json(info: &HeaderInfo, path: &str) -> Json {
    let backends: Vec<&str> = info
        .backends
        .as_deref()
        .map(|b| b.split(',').filter(|b| !b.is_empty()).collect())
        .unwrap_or_default();
    json!({"schema": SCHEMA, "path": path, "format": info.format, "header_version": info.header_version,
        "encryption": info.encryption, "hash": info.hash, "pim": info.pim.filter(|p| *p != 0),
        "iterations": info.iterations, "argon2_memory_kib": info.argon2_memory_kib,
        "argon2_passes": info.argon2_passes, "hidden": info.hidden,
        "used_backup_header": info.used_backup_header, "data_offset": info.data_offset,
        "size": info.size, "sector_size": info.sector_size, "weak_keys": info.weak_keys,
        "backends": backends, "key_bits": info.key_bits, "mode": info.mode,
        "system_encryption": info.system_encryption, "minimum_version": info.minimum_version,
        // Its first name, kept for the scripts that read it: it misled,
        // as VeraCrypt writes 1.0b there whatever release made the volume.
        "created_by": info.minimum_version})
}

/// `tcctl info`: the header's fields in the order of VeraCrypt's volume
/// properties (JSON's `null` is "-" to people).
pub fn header_info(info: &HeaderInfo, path: &str, json: bool) {
    if json {
        println!("{}", header_json(info, path));
        return;
    }
    for (label, value) in header_lines(info, path) {
        println!("{label:<18} {value}");
    }
}

/// The first release that derives header keys with Argon2id.
const ARGON2ID_SINCE: &str = "VeraCrypt 1.26.29";

/// The header's fields as people read them, labelled, in the order of
/// VeraCrypt's volume properties (`tcctl info`, the desktop's Header
/// Information).
pub fn header_lines(info: &HeaderInfo, path: &str) -> Vec<(&'static str, String)> {
    let Json::Object(fields) = header_json(info, path) else {
        return Vec::new();
    };
    const SHOWN: [(&str, &str); 20] = [
        ("path", "Volume"),
        ("format", "Format"),
        ("minimum_version", "Minimum version"),
        ("system_encryption", "System encryption"),
        ("header_version", "Header version"),
        ("hidden", "Hidden volume"),
        ("encryption", "Encryption"),
        ("key_bits", "Key size"),
        ("mode", "Mode"),
        ("hash", "PKCS-5 PRF"),
        ("iterations", "Iterations"),
        ("argon2_memory_kib", "Argon2 memory"),
        ("argon2_passes", "Argon2 passes"),
        ("pim", "PIM"),
        ("size", "Size (bytes)"),
        ("sector_size", "Sector size"),
        ("data_offset", "Data offset"),
        ("used_backup_header", "Opened by backup"),
        ("weak_keys", "Weak keys"),
        ("backends", "Backends"),
    ];
    SHOWN
        .into_iter()
        // Argon2id's costs, or PBKDF2's iterations: not the other's dash.
        // TrueCrypt's format has no PIM to show.
        .filter(|(key, _)| {
            let null = fields.get(*key).is_none_or(Json::is_null);
            let argon2 = fields.get("argon2_passes").is_some_and(|p| !p.is_null());
            let truecrypt = fields.get("format").and_then(Json::as_str) == Some("TrueCrypt");
            !(null && (key.starts_with("argon2_") || (*key == "iterations" && argon2)))
                && !(truecrypt && *key == "pim")
        })
        .map(|(key, label)| {
            let value = match (key, fields.get(key).unwrap_or(&Json::Null)) {
                ("pim", Json::Null) => "default".to_owned(),
                ("argon2_memory_kib", Json::Number(n)) => n.as_u64().map_or_else(
                    || plain(&Json::Number(n.clone())),
                    |k| format!("{} MiB", k / 1024),
                ),
                // As VeraCrypt says it: each cipher's key, and XTS's second.
                ("key_bits", Json::Number(n)) => n.as_u64().map_or_else(
                    || plain(&Json::Number(n.clone())),
                    |b| key_size(b, fields.get("mode")),
                ),
                ("mode", Json::String(m)) if m != "xts-plain64" => {
                    format!("{m} (TrueCrypt before 5.0, legacy)")
                }
                ("backends", Json::Array(a)) => a.iter().map(plain).collect::<Vec<_>>().join("+"),
                // VeraCrypt writes 1.0b there whatever the KDF: the
                // release Argon2id needs is said beside it.
                ("minimum_version", Json::String(v))
                    if fields.get("argon2_passes").is_some_and(|p| !p.is_null()) =>
                {
                    format!(
                        "{v}, as the header says (Argon2id opens in {ARGON2ID_SINCE} and later)"
                    )
                }
                (_, Json::Bool(b)) => yes_no(*b).to_owned(),
                (_, v) => plain(v),
            };
            (label, value)
        })
        .collect()
}

/// The key size as VeraCrypt says it: each cipher's key, and XTS's
/// second; a legacy mode's whole key.
fn key_size(bits: u64, mode: Option<&Json>) -> String {
    match mode {
        Some(Json::String(m)) if m != "xts-plain64" => format!("{bits} bits"),
        _ => format!(
            "{} bits, secondary key (XTS mode) {} bits",
            bits / 2,
            bits / 2
        ),
    }
}

/// A JSON value as people read it.
pub fn plain(v: &Json) -> String {
    match v {
        Json::Null => "-".into(),
        Json::String(s) => s.clone(),
        Json::Array(a) => a.iter().map(plain).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// `tcctl dump`: the header as `cryptsetup tcryptDump` shows it, and the
/// master key when asked for.
pub fn dump(info: &HeaderInfo, path: &str, master_key: Option<&[u8]>, json: bool) {
    if json {
        let mut doc = header_json(info, path);
        if let (Some(key), Json::Object(o)) = (master_key, &mut doc) {
            o.insert("master_key".into(), hex(key, "").as_str().into());
        }
        println!("{doc}");
        return;
    }
    let or_dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    let num = |v: Option<u64>| or_dash(v.map(|n| n.to_string()));
    let unit = |v: Option<u64>, unit: &str| or_dash(v.map(|n| format!("{n} {unit}")));
    // cryptsetup's title: VERACRYPT for a VeraCrypt header.
    let title = match info.format.as_deref() {
        Some("VeraCrypt") => "VERACRYPT",
        _ => "TCRYPT",
    };
    println!("{title} header information for {path}");
    // Argon2id is no PBKDF2 and counts no iterations (cryptsetup's names
    // are for PBKDF2's).
    let argon2 = info.hash.as_deref() == Some("Argon2id");
    let kdf = if argon2 { "KDF" } else { "PBKDF2 hash" };
    let lines = [
        ("Format", or_dash(info.format.clone())),
        ("Version", num(info.header_version.map(u64::from))),
        ("Sector size", num(info.sector_size.map(u64::from))),
        // cryptsetup's unit: 512-byte sectors; each with its unit, as two
        // offsets in different units read alike otherwise.
        (
            "Payload offset",
            unit(info.data_offset.map(|b| b / 512), "sectors"),
        ),
        ("Data offset", unit(info.data_offset, "bytes")),
        ("Size", unit(info.size, "bytes")),
        (kdf, or_dash(info.hash.clone())),
        (
            "PIM",
            match info.pim {
                Some(0) | None => "default".into(),
                Some(p) => p.to_string(),
            },
        ),
        ("Iterations", num(info.iterations.map(u64::from))),
        ("Cipher chain", or_dash(info.encryption.clone())),
        ("Cipher mode", or_dash(info.mode.clone())),
        ("MK bits", num(info.key_bits.map(u64::from))),
        ("Hidden", yes_no(info.hidden.unwrap_or_default()).into()),
        ("Header used", header_used(info).into()),
    ];
    // TrueCrypt's format has no PIM, and cryptsetup shows none for it.
    let truecrypt = info.format.as_deref() == Some("TrueCrypt");
    for (name, value) in lines {
        if truecrypt && name == "PIM" {
            continue;
        }
        if argon2 && name == "Iterations" {
            // cryptsetup luksDump's names for Argon2's costs (memory in KiB).
            println!(
                "{:<16}{}",
                "Time cost:",
                num(info.argon2_passes.map(u64::from))
            );
            println!(
                "{:<16}{}",
                "Memory:",
                num(info.argon2_memory_kib.map(u64::from))
            );
            println!("{:<16}1", "Threads:");
            continue;
        }
        println!("{:<16}{value}", format!("{name}:"));
    }
    if let Some(key) = master_key {
        for (i, row) in key.chunks(16).enumerate() {
            let label = if i == 0 { "MK dump:" } else { "" };
            println!("{label:<16}{}", *hex(row, " "));
        }
    }
}

/// Which of the two headers opened the volume: "Backup" when the primary
/// did not (a "Backup header: No" read as "the volume has none").
fn header_used(info: &HeaderInfo) -> &'static str {
    match info.used_backup_header {
        Some(true) => "Backup",
        _ => "Primary",
    }
}

/// Key bytes in hex, wiped when dropped.
fn hex(key: &[u8], between: &str) -> zeroize::Zeroizing<String> {
    let mut out = zeroize::Zeroizing::new(String::with_capacity(key.len() * 3));
    for (i, b) in key.iter().enumerate() {
        if i > 0 {
            out.push_str(between);
        }
        // Writing to a String cannot fail.
        let _ = std::fmt::Write::write_fmt(&mut *out, format_args!("{b:02x}"));
    }
    out
}

/// `tcctl status`: what is mapped where, as `cryptsetup status` says it.
pub fn status(v: &Volume, json: bool) {
    if json {
        let mut doc = volume_json(v);
        if let Json::Object(o) = &mut doc {
            o.insert("schema".into(), SCHEMA.into());
        }
        println!("{doc}");
        return;
    }
    // As `cryptsetup status` opens: "... is active and is in use."
    let what = match (v.state(), v.mount_point()) {
        (VolumeState::Detaching, _) => "detaching (dismounted by force, still in use)",
        (_, Some(_)) => "active and mounted",
        (_, None) => "active (the block device only)",
    };
    println!("{} is {what}.", v.host());
    let lines = status_lines(v);
    // Values in one column, past the longest label.
    let width = lines.iter().map(|(n, _)| n.len()).max().unwrap_or(0) + 2;
    for (name, value) in lines {
        println!("  {:<width$}{value}", format!("{name}:"));
    }
    for p in v.view.problems.iter().flatten() {
        println!("  {:<width$}{p}", "problem:");
    }
}

/// `status`'s labelled lines, in order.
fn status_lines(v: &Volume) -> Vec<(&'static str, String)> {
    let o = &v.view;
    let text = |s: &Option<String>| {
        s.clone()
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "-".into())
    };
    let size = o
        .size
        .map_or_else(|| "-".into(), |n| format!("{} ({n} bytes)", human_size(n)));
    // cryptsetup's names where it has the fact: `type`, `cipher`, and
    // `mode` for read/write or readonly (the block mode is `cipher mode`).
    let mut lines = vec![
        ("type", "TCRYPT".to_owned()),
        ("device", v.device().to_owned()),
        ("mount point", v.mount_point().unwrap_or("-").to_owned()),
        ("filesystem", text(&o.filesystem)),
        ("size", size),
        ("cipher", text(&o.encryption)),
        ("cipher mode", mode_of(o.encryption.as_deref())),
        // cryptsetup's: the key's bits, the data's start in sectors.
        (
            "keysize",
            o.key_bits
                .map_or_else(|| "-".into(), |n| format!("{n} bits")),
        ),
        (
            "offset",
            o.data_offset
                .map_or_else(|| "-".into(), |n| format!("{} sectors", n / 512)),
        ),
        ("PRF", text(&o.hash)),
        ("format", text(&o.format)),
        (
            "sector size",
            o.sector_size.map_or_else(|| "-".into(), |n| n.to_string()),
        ),
        (
            "mode",
            if o.read_only.unwrap_or_default() {
                "readonly"
            } else {
                "read/write"
            }
            .to_owned(),
        ),
        ("hidden", yes_no(o.hidden.unwrap_or_default()).to_owned()),
        (
            "protects hidden",
            yes_no(o.protects_hidden.unwrap_or_default()).to_owned(),
        ),
        ("backends", o.backends.clone().unwrap_or_default().join("+")),
        ("health", v.health().to_owned()),
    ];
    if let Some(slot) = v.slot() {
        lines.insert(3, ("slot", slot.to_string()));
    }
    // Said only of one: most volumes are not a system drive.
    if o.system_encryption == Some(true) {
        lines.push(("system encryption", "Yes".to_owned()));
    }
    // As `dump` says it: the primary header did not open the volume.
    if o.used_backup_header == Some(true) {
        lines.push(("backup header", "Yes".to_owned()));
    }
    // As cryptsetup says a mapping with discards allowed.
    if o.discard == Some(true) {
        lines.push(("flags", "discards".to_owned()));
    }
    if let Some(n) = o.dismount_idle.filter(|n| *n > 0) {
        lines.push(("dismount when idle", format!("{n} s")));
    }
    lines
}

/// Says on standard error that the backup header opened `volume`, and how
/// to repair the primary one, as TrueCrypt did.
pub fn backup_header_used(volume: &std::path::Path) {
    let v = volume.display();
    let word = shell_word(&volume.to_string_lossy()).into_owned();
    eprintln!(
        "tcctl: warning: the primary header of {v} is damaged; its backup header opened it. \
         Repair the primary header with: tcctl restore-header --embedded {word}"
    );
}

/// A mounted volume's mode as cryptsetup names it (as `info` and `dump`
/// say it): XTS, or the legacy mode its encryption names
/// (`Serpent-Twofish-AES (LRW, legacy)`).
fn mode_of(encryption: Option<&str>) -> String {
    let Some((chain, mode)) = encryption
        .filter(|e| is_legacy(e))
        .and_then(|e| e.strip_suffix(", legacy)"))
        .and_then(|e| e.rsplit_once(" ("))
    else {
        return "xts-plain64".to_owned();
    };
    match mode {
        "LRW" => "lrw-benbi",
        "outer CBC" => "cbci-tcrypt",
        // The Blowfish cascades: CBC in each layer.
        "CBC" if chain.contains('-') => "cbc-tcrypt",
        "CBC" => "cbc-tcw",
        other => other,
    }
    .to_owned()
}

/// Whether a mounted volume's encryption names a TrueCrypt 4 mode
/// (`AES (LRW, legacy)`).
pub fn is_legacy(encryption: &str) -> bool {
    encryption.ends_with(", legacy)")
}

/// After mounting a volume of TrueCrypt before 5.0: read-only unless
/// asked (said unless read-only was asked for), and a warning when
/// read-write was asked.
pub fn legacy_mounted(view: Option<&bus::VolumeView>, volume: &str, asked_read_only: bool) {
    let Some(v) = view.filter(|v| v.encryption.as_deref().is_some_and(is_legacy)) else {
        return;
    };
    if v.read_only == Some(true) && asked_read_only {
        return;
    }
    // A volume with no filesystem mounted is attached, as mount says.
    let done = match v.mount_point.as_deref().is_some_and(|m| !m.is_empty()) {
        true => "mounted",
        false => "attached",
    };
    if v.read_only == Some(true) {
        eprintln!(
            "tcctl: {volume} is a volume of TrueCrypt before 5.0 (LRW or CBC mode): {done} \
             read-only (--read-write to write to it)"
        );
    } else {
        eprintln!(
            "tcctl: warning: {volume} is a volume of TrueCrypt before 5.0, {done} read-write as \
             asked. TrueCrypt 7.1a called its modes deprecated: move its files to a new volume."
        );
    }
}

/// Said when system encryption made a mount read-only on its own.
pub fn system_read_only_note() {
    eprintln!(
        "tcctl: a system drive is mounted read-only, as VeraCrypt mounts one (--read-write \
         writes to it)"
    );
}

/// `mount --system-encryption --read-write`: said before the mount (an
/// attach alone, with no filesystem mounted, said as such).
pub fn system_read_write_warning(attach_only: bool) {
    let doing = match attach_only {
        true => "attaching",
        false => "mounting",
    };
    eprintln!(
        "tcctl: warning: {doing} a system drive read-write. If Windows on it is hibernated \
         (or was shut down with fast startup), writing to it corrupts the system and the \
         files Windows has open when it resumes."
    );
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
            json!({"schema": SCHEMA, "cpu_aes": cpu_aes, "hardware_acceleration": policy.hardware_acceleration,
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
            json!({"schema": SCHEMA, "file": p.file, "hardware_acceleration": p.hardware_acceleration,
                "allowed": if p.all_allowed { Json::Null } else { p.allowed.clone().into() },
                "prefer": p.prefer, "token_library": p.token_library(), "limits": p.limits(), "text": p.text})
        );
    } else {
        println!("# {}", policy_file(p));
        print!("{}", p.text);
    }
}

/// The policy's file, and whether it is there: without it the daemon
/// holds the built-in defaults.
fn policy_file(p: &PolicyView) -> String {
    match std::fs::symlink_metadata(&p.file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            format!("{} (absent: the built-in defaults)", p.file)
        }
        _ => p.file.clone(),
    }
}

/// After `tcctl policy set`: the notes on volumes that keep their old
/// backends, and the policy now in force.
pub fn policy_set(notes: &[String], p: &PolicyView) {
    for note in notes {
        println!("{note}");
    }
    println!("policy in force ({}):", policy_file(p));
    print!("{}", p.text);
}

/// `tcctl self-test`: one row per algorithm, backend and code path.
pub fn self_test(rows: &[tcd_proto::contract::rows::SelfTestRow], json: bool) {
    let result = |r: &tcd_proto::contract::rows::SelfTestRow| {
        if r.passed {
            "passed".to_owned()
        } else {
            format!("FAILED: {}", r.problem)
        }
    };
    if json {
        let v: Vec<_> = rows
            .iter()
            .map(|r| {
                json!({"algorithm": r.algorithm, "backend": r.backend, "path": r.path,
                    "passed": r.passed,
                    "problem": if r.passed { Json::Null } else { r.problem.clone().into() }})
            })
            .collect();
        let passed = rows.iter().all(|r| r.passed);
        println!(
            "{}",
            json!({"schema": SCHEMA, "passed": passed, "checks": v})
        );
        return;
    }
    let width = |f: fn(&tcd_proto::contract::rows::SelfTestRow) -> &str, title: &str| {
        rows.iter()
            .map(|r| f(r).len())
            .max()
            .unwrap_or(0)
            .max(title.len())
    };
    let a = width(|r| &r.algorithm, "ALGORITHM");
    let b = width(|r| &r.backend, "BACKEND");
    let p = width(|r| &r.path, "PATH");
    println!(
        "{:<a$}  {:<b$}  {:<p$}  RESULT",
        "ALGORITHM", "BACKEND", "PATH"
    );
    for r in rows {
        println!(
            "{:<a$}  {:<b$}  {:<p$}  {}",
            r.algorithm,
            r.backend,
            r.path,
            result(r)
        );
    }
    let failed = rows.iter().filter(|r| !r.passed).count();
    if failed == 0 {
        println!("All {} checks passed.", rows.len());
    } else {
        println!("{failed} of {} checks FAILED.", rows.len());
    }
}

pub fn benchmark(bench: Bench, json: bool) {
    let Bench {
        threads,
        cpu_has_aes: cpu_aes,
        ciphers,
        mut kdfs,
        buffer_bytes,
        passes,
        simd,
    } = bench;
    // Each row with its code path (a daemon that does not say: none).
    let mut ciphers: Vec<(bus::CipherBench, String)> = ciphers
        .into_iter()
        .zip(simd.into_iter().chain(std::iter::repeat_with(String::new)))
        .collect();
    ciphers.sort_by(|a, b| b.0.mean_mbs.total_cmp(&a.0.mean_mbs));
    kdfs.sort_by(|a, b| b.per_second.total_cmp(&a.per_second));
    if json {
        let rows: Vec<_> = ciphers
            .iter()
            .map(|(r, simd)| {
                // The daemon's row joins a cascade's layers with `+`; JSON
                // lists are arrays.
                let backends: Vec<&str> = r.backends.split('+').collect();
                let simd: Vec<&str> = simd.split('+').filter(|s| !s.is_empty()).collect();
                json!({"encryption": r.encryption, "backends": backends, "simd": simd,
                    "encrypt_mbs": r.encrypt_mbs, "decrypt_mbs": r.decrypt_mbs,
                    "mean_mbs": r.mean_mbs, "hardware_aes": r.hardware_aes})
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
            json!({"schema": SCHEMA, "buffer_bytes": buffer_bytes, "passes": passes,
                "threads": threads, "cpu_aes": cpu_aes, "ciphers": rows, "prfs": prfs})
        );
        return;
    }
    let times = if passes > 1 {
        format!(" x {passes} passes")
    } else {
        String::new()
    };
    // The daemon takes whole 512-byte data units: a size asked that is
    // none is shown as the units it became.
    let size = if buffer_bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", buffer_bytes >> 20)
    } else if buffer_bytes.is_multiple_of(1 << 10) {
        format!("{} KiB", buffer_bytes >> 10)
    } else {
        format!("{buffer_bytes} bytes (rounded down to whole 512-byte units)")
    };
    println!(
        "Buffer {size}{times} on {threads} threads; processor AES instructions: {}",
        yes_no(cpu_aes)
    );
    cipher_table(&ciphers);
    println!(
        "{:<12} {:>10} {:>14} {:>14}",
        "PRF", "ITERATIONS", "ITER/S (1 CPU)", "HEADER TRIAL"
    );
    for k in &kdfs {
        println!(
            "{:<12} {:>10} {:>14.*} {:>12.2} s",
            k.prf,
            k.iterations,
            // Argon2id's few passes a second want their decimals.
            if k.per_second < 100.0 { 2 } else { 0 },
            k.per_second,
            k.trial_seconds
        );
    }
    if kdfs.iter().any(|k| k.prf == "Argon2id") {
        println!("(Argon2id: its iterations are passes over 416 MiB of memory)");
    }
}

fn cipher_table(ciphers: &[(bus::CipherBench, String)]) {
    println!(
        "{:<28} {:<11} {:>9} {:>9} {:>9}  {:<9} SIMD",
        "ALGORITHM", "BACKENDS", "ENCRYPT", "DECRYPT", "MEAN", "AES ON"
    );
    for (r, simd) in ciphers {
        let hw = if !r.encryption.contains("AES") {
            "-"
        } else if r.hardware_aes {
            "hardware"
        } else {
            "software"
        };
        let simd = if simd.is_empty() { "-" } else { simd };
        println!(
            "{:<28} {:<11} {:>9} {:>9} {:>9}  {hw:<9} {simd}",
            r.encryption,
            r.backends,
            mbs(r.encrypt_mbs),
            mbs(r.decrypt_mbs),
            mbs(r.mean_mbs)
        );
    }
    println!(
        "(MB/s, 10^6 bytes per second; BACKENDS and SIMD give a cascade's layers in the order \
         its name lists them, AES-Twofish's AES first, though data goes through Twofish first)\n"
    );
}

/// `tcctl token list`: the keyfiles found, and whether any token was.
pub fn token_keyfiles(found: &[crate::token::TokenKeyfile], any_token: bool, json: bool) {
    if json {
        let v: Vec<Json> = found
            .iter()
            .map(|k| json!({"keyfile": k.to_string(), "slot": k.slot, "name": k.name}))
            .collect();
        println!("{}", json!({"schema": SCHEMA, "keyfiles": v}));
    } else if !any_token {
        println!("No token.");
    } else if found.is_empty() {
        println!("No keyfiles on the tokens.");
    } else {
        for k in found {
            println!("{k}");
        }
    }
}

/// `tcctl favorites list`; `in_keyring` says whether one of yours has a
/// kept password.
pub fn favorites(favs: &[Favorite], json: bool, in_keyring: impl Fn(&Favorite) -> bool) {
    if json {
        let v: Vec<Json> = favs.iter().map(favorite_json).collect();
        println!("{}", json!({"schema": SCHEMA, "favorites": v}));
        return;
    }
    if favs.is_empty() {
        println!("No favorites.");
        return;
    }
    let mut rows = vec![["NAME", "OWNER", "VOLUME", "MOUNT POINT", "SETTINGS"].map(String::from)];
    for f in favs {
        let mut notes = favorite_notes(f);
        if !f.system && in_keyring(f) {
            notes.push("password in keyring".into());
        }
        let s = &f.settings;
        rows.push([
            s.name.clone(),
            if f.system { "system" } else { "you" }.into(),
            s.host.clone(),
            s.mount_point.clone().unwrap_or_else(|| "-".into()),
            notes.join(", "),
        ]);
    }
    print_table(&rows);
}

/// A favorite's keyfiles as they were named: a folder, whose files are
/// the keyfiles (VeraCrypt's rule), counted as a folder, not one keyfile.
fn keyfiles_named(paths: &[String]) -> String {
    let folders = paths
        .iter()
        .filter(|p| std::path::Path::new(p).is_dir())
        .count();
    let files = paths.len() - folders;
    match (files, folders) {
        (n, 0) => count(n, "keyfile"),
        (0, f) => count(f, "keyfile folder"),
        (n, f) => format!("{} and {}", count(n, "keyfile"), count(f, "keyfile folder")),
    }
}

/// A favorite's settings that differ from a plain mount's, in words.
fn favorite_notes(f: &Favorite) -> Vec<String> {
    let s = &f.settings;
    let mut notes = Vec::new();
    if let Some(slot) = s.slot {
        notes.push(format!("slot {slot}"));
    }
    if s.filesystem.as_deref() == Some("none") {
        notes.push("block device only".into());
    }
    // Given, or learned at its last mount: tried first, never "only".
    match (&s.hash, &s.encryption) {
        (Some(h), None) => notes.push(format!("{h} tried first")),
        (None, Some(e)) => notes.push(format!("{e} tried first")),
        (Some(h), Some(e)) => notes.push(format!("{e}/{h} tried first")),
        (None, None) => {}
    }
    for (set, word) in [
        (s.auto_mount, "auto-mount"),
        (s.system_encryption, "system encryption"),
        (s.readonly, "read-only"),
        (s.dismount_on_logout, "dismount at logout"),
        (s.dismount_before_sleep, "dismount before sleep"),
    ] {
        if set {
            notes.push(word.to_owned());
        }
    }
    if s.pim > 0 {
        notes.push(format!("PIM {}", s.pim));
    }
    if !s.keyfiles.is_empty() {
        notes.push(keyfiles_named(&s.keyfiles));
    }
    if s.protect_hidden {
        notes.push("protects hidden volume".into());
    }
    if let Some(pim) = s.protect_hidden_pim {
        notes.push(format!("hidden volume PIM {pim}"));
    }
    if !s.protect_hidden_keyfiles.is_empty() {
        notes.push(format!(
            "hidden volume {}",
            keyfiles_named(&s.protect_hidden_keyfiles)
        ));
    }
    for (set, word) in [
        (s.discard, "discards"),
        (s.force_dismount, "forced automatic dismounts"),
        (s.password_file.is_some(), "password file"),
    ] {
        if set {
            notes.push(word.to_owned());
        }
    }
    if let Some(b) = &s.backend {
        notes.push(format!("backend {b}"));
    }
    match s.format {
        Some(VolumeFormat::TrueCrypt) => notes.push("TrueCrypt format only".into()),
        Some(VolumeFormat::VeraCrypt) => notes.push("VeraCrypt format only".into()),
        None => {}
    }
    if s.dismount_idle_seconds > 0 {
        notes.push(format!("dismount after {} s idle", s.dismount_idle_seconds));
    }
    notes
}

/// One favorite for scripts: every key of the favorites file, `null` (or
/// `[]` for keyfiles) where it has none, and `system`.
fn favorite_json(f: &Favorite) -> Json {
    let mut o = match serde_json::to_value(&f.settings) {
        Ok(Json::Object(o)) => o,
        _ => serde_json::Map::new(),
    };
    for (key, kind) in tcd_proto::contract::favorite::KEYS {
        o.entry(*key).or_insert_with(|| match *kind {
            "as" => json!([]),
            _ => Json::Null,
        });
    }
    // No PIM (the default) is null, as `info --json` says it.
    if f.settings.pim == 0 {
        o.insert("pim".into(), Json::Null);
    }
    o.insert("system".into(), f.system.into());
    // The key `list --json` and `status --json` name the volume by.
    o.insert("volume".into(), f.settings.host.clone().into());
    Json::Object(o)
}

#[cfg(test)]
mod tests {
    use super::{human_size, shell_word};

    #[test]
    fn a_path_to_copy_into_a_shell_is_quoted_only_where_it_must_be() {
        assert_eq!(shell_word("/tmp/work/a.hc"), "/tmp/work/a.hc");
        assert_eq!(shell_word("/tmp/my vol.hc"), "'/tmp/my vol.hc'");
        assert_eq!(shell_word("/tmp/it's.hc"), "'/tmp/it'\\''s.hc'");
        assert_eq!(shell_word("/tmp/$HOME;x"), "'/tmp/$HOME;x'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn sizes_read_as_lsblk_writes_them() {
        assert_eq!(human_size(66_846_720), "63.8M");
        assert_eq!(human_size(16 << 20), "16M");
        assert_eq!(human_size(15_518_720), "14.8M");
        assert_eq!(human_size(3 << 29), "1.5G");
        assert_eq!(human_size(512), "512B");
    }
}
