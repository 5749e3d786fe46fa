//! `tcctl monitor`: every change the daemon announces, a timestamped line
//! each, as `udisksctl monitor` prints them; with `--json`, one JSON object
//! a line (the same event, its fields apart).

use super::Context;
use crate::bus::{Client, Failure, VolumeView, to_json};
use serde_json::{Value as Json, json};
use std::collections::{HashMap, HashSet};
use tcd_proto::contract::names::{MANAGER_INTERFACE, VOLUME_INTERFACE};
use zbus::zvariant::{OwnedObjectPath, OwnedValue};

const OBJECT_MANAGER: &str = "org.freedesktop.DBus.ObjectManager";
const PROPERTIES: &str = "org.freedesktop.DBus.Properties";

/// `tcctl monitor`: every change, as it comes. The daemon sends each
/// client only the volumes it may see, so nothing is filtered here. When
/// the daemon goes, that is a line (an event) of its own, and it is
/// waited for and monitored again once it is back, as `udisksctl monitor`
/// outlives udisksd; only a first connection that fails ends it.
pub fn monitor(ctx: Context<'_>, as_json: bool) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    let signals = c.signals()?;
    let seen = seen_now(&c)?;
    // The banner is for people; a script reading JSON gets events only.
    if !as_json {
        println!("Monitoring the tcd daemon. Press Ctrl+C to exit.");
    }
    follow(&c, signals, seen, as_json);
    loop {
        say(
            &daemon_event(
                "daemon_gone",
                "the daemon went away: monitoring again once it is back",
            ),
            as_json,
        );
        let c = super::wait_for_daemon(ctx.at);
        // Subscribed before the volumes are read: nothing falls between.
        if let (Ok(signals), Ok(seen)) = (c.signals(), seen_now(&c)) {
            say(&daemon_event("daemon_back", "the daemon is back"), as_json);
            follow(&c, signals, seen, as_json);
        }
    }
}

/// What the daemon holds now: a value announced again later is no change.
fn seen_now(c: &Client) -> Result<Seen, Failure> {
    Ok(Seen {
        hosts: c
            .list()?
            .into_iter()
            .map(|v| (v.object.to_string(), v.host().to_owned()))
            .collect(),
        values: c
            .volume_properties()?
            .into_iter()
            .map(|(object, raw)| (object.to_string(), all_in_words(&raw)))
            .collect(),
        ..Seen::default()
    })
}

/// Says each change `signals` bring until the connection ends.
fn follow(
    c: &Client,
    signals: impl Iterator<Item = zbus::message::Message>,
    mut seen: Seen,
    as_json: bool,
) {
    for m in signals {
        if let Some(e) = describe(c, &m, &mut seen) {
            say(&e, as_json);
        }
    }
}

fn say(e: &Event, as_json: bool) {
    if as_json {
        println!("{}", e.json());
    } else {
        println!("{}: {}", timestamp(), e.line());
    }
}

/// The daemon gone or back: an event of no volume.
fn daemon_event(kind: &'static str, text: &str) -> Event {
    Event {
        kind,
        object: None,
        text: text.into(),
        fields: json!({}),
    }
}

/// One change: its kind, the volume's object (none for the policy), the
/// line people read, and its fields for `--json`.
struct Event {
    kind: &'static str,
    object: Option<String>,
    text: String,
    fields: Json,
}

impl Event {
    fn of(kind: &'static str, object: &str, text: String, fields: Json) -> Event {
        Event {
            kind,
            object: Some(object.to_owned()),
            text,
            fields,
        }
    }

    fn line(&self) -> String {
        match &self.object {
            Some(o) => format!("{o}: {}", self.text),
            None => self.text.clone(),
        }
    }

    fn json(&self) -> Json {
        let mut doc = json!({"schema": crate::output::SCHEMA, "time": utc_time(),
            "event": self.kind, "object": self.object, "message": self.text});
        if let (Json::Object(d), Json::Object(f)) = (&mut doc, &self.fields) {
            d.extend(f.clone());
        }
        doc
    }
}

/// What the monitor knows of the volumes, to print each change once.
#[derive(Default)]
struct Seen {
    /// Hosts by object path, for the lines of volumes that are gone.
    hosts: HashMap<String, String>,
    /// Each volume's properties as last announced, in words: a signal that
    /// repeats a value (the properties sent again after a mount) is no
    /// change.
    values: HashMap<String, HashMap<String, String>>,
    /// Volumes whose automatic dismount was announced: their removal is
    /// the same event.
    auto_dismounted: HashSet<String>,
}

/// One signal as an event; `None` for one that says nothing new (a
/// volume's `Health` property comes with the manager's `HealthChanged`).
fn describe(c: &Client, m: &zbus::Message, seen: &mut Seen) -> Option<Event> {
    let header = m.header();
    let path = header.path()?.to_string();
    let body = m.body();
    match (header.interface()?.as_str(), header.member()?.as_str()) {
        (OBJECT_MANAGER, "InterfacesAdded") => added(&body, seen),
        (OBJECT_MANAGER, "InterfacesRemoved") => {
            let (object, _): (OwnedObjectPath, Vec<String>) = body.deserialize().ok()?;
            let host = seen.hosts.remove(object.as_str()).unwrap_or_default();
            seen.values.remove(object.as_str());
            (!seen.auto_dismounted.remove(object.as_str())).then(|| {
                let text = format!("dismounted {host}");
                Event::of("dismounted", &object, text, json!({"volume": host}))
            })
        }
        (PROPERTIES, "PropertiesChanged") => {
            let (_, changed, _): (String, HashMap<String, OwnedValue>, Vec<String>) =
                body.deserialize().ok()?;
            let host = seen.hosts.get(&path)?.clone();
            let known = seen.values.entry(path.clone()).or_default();
            properties_changed(&path, &host, known, changed)
        }
        (MANAGER_INTERFACE, "AutoDismounted") => auto_dismounted(&body, seen),
        (MANAGER_INTERFACE, member) => manager_signal(c, member, &body),
        _ => None,
    }
}

/// A volume mounted (or attached) since the monitor started.
fn added(body: &zbus::message::Body, seen: &mut Seen) -> Option<Event> {
    type Added<T> = (OwnedObjectPath, HashMap<String, T>);
    let (object, mut interfaces): Added<VolumeView> = body.deserialize().ok()?;
    let v = interfaces.remove(VOLUME_INTERFACE)?;
    // A volume listed when the monitor started is no change (the daemon
    // announces the volumes already mounted to each new connection);
    // object paths are never used twice.
    if seen.hosts.contains_key(object.as_str()) {
        return None;
    }
    if let Ok((_, mut raw)) = body.deserialize::<Added<HashMap<String, OwnedValue>>>() {
        let words = all_in_words(&raw.remove(VOLUME_INTERFACE).unwrap_or_default());
        seen.values.insert(object.to_string(), words);
    }
    let host = v.host.clone().unwrap_or_default();
    seen.hosts.insert(object.to_string(), host.clone());
    let device = v.device.unwrap_or_default();
    let at = v.mount_point.filter(|p| !p.is_empty());
    let read_only = v.read_only.unwrap_or_default();
    let how = if read_only { ", read-only" } else { "" };
    let fields =
        json!({"volume": host, "device": device, "mount_point": at, "read_only": read_only});
    Some(match at {
        Some(at) => {
            let text = format!("mounted {host} on {at} ({device}){how}");
            Event::of("mounted", &object, text, fields)
        }
        None => Event::of(
            "attached",
            &object,
            format!("attached {host} as {device}{how}"),
            fields,
        ),
    })
}

/// A property's value in words; "-" for none (an empty mount point, or
/// `Slot` 0: no slot, which `--slot` never takes).
fn in_words(v: &OwnedValue) -> String {
    let words = crate::output::plain(&to_json(v));
    if words.is_empty() { "-".into() } else { words }
}

/// [`in_words`] of property `key`.
fn property_in_words(key: &str, v: &OwnedValue) -> String {
    match (key, u32::try_from(v)) {
        ("Slot", Ok(0)) => "-".into(),
        _ => in_words(v),
    }
}

/// A volume's properties in words, its `State` as tcctl says it.
fn all_in_words(raw: &HashMap<String, OwnedValue>) -> HashMap<String, String> {
    let mut words: HashMap<String, String> = raw
        .iter()
        .map(|(k, v)| (k.clone(), property_in_words(k, v)))
        .collect();
    let mount_point = words.get("MountPoint").cloned();
    if let Some(state) = words.get_mut("State") {
        let raw = std::mem::take(state);
        *state = state_in_words(&raw, mount_point.as_deref());
        words.insert(DAEMON_STATE.into(), raw);
    }
    words
}

/// Where [`Seen::values`] keeps the daemon's own `State`, from which the
/// one said is made again whenever the mount point changes.
const DAEMON_STATE: &str = " daemon State";

/// The daemon's `State` counts a volume attached alone (no mount point)
/// as mounted; tcctl says "attached", as `status` and `list` do.
fn state_in_words(state: &str, mount_point: Option<&str>) -> String {
    match (state, mount_point) {
        ("mounted", Some("-")) => "attached".into(),
        _ => state.into(),
    }
}

/// A volume's `Backends`, `ReadOnly` and `State` as they change: only
/// the values that differ from what was last said. The daemon sends each
/// property in a signal of its own, and the `State` said (attached or
/// mounted) depends on the mount point too: it is made again from both
/// whenever either changes.
fn properties_changed(
    path: &str,
    host: &str,
    known: &mut HashMap<String, String>,
    changed: HashMap<String, OwnedValue>,
) -> Option<Event> {
    let mut said: Vec<(String, String, Json)> = changed
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "Health" | "Problems" | "State"))
        .filter_map(|(k, v)| {
            let words = property_in_words(k, v);
            // An empty string is a fact absent: null, as elsewhere.
            let value = if words == "-" { Json::Null } else { to_json(v) };
            let old = known.insert(k.clone(), words.clone());
            (old.as_ref() != Some(&words)).then(|| (k.clone(), words, value))
        })
        .collect();
    if let Some(raw) = changed.get("State") {
        known.insert(DAEMON_STATE.into(), in_words(raw));
    }
    if let Some(raw) = known.get(DAEMON_STATE) {
        let words = state_in_words(raw, known.get("MountPoint").map(String::as_str));
        if known.insert("State".into(), words.clone()).as_ref() != Some(&words) {
            said.push(("State".into(), words.clone(), Json::String(words)));
        }
    }
    if said.is_empty() {
        return None;
    }
    said.sort_by(|a, b| a.0.cmp(&b.0));
    let text = said
        .iter()
        .map(|(k, words, _)| format!("{k} {words}"))
        .collect::<Vec<_>>()
        .join(", ");
    let changes: serde_json::Map<String, Json> =
        said.into_iter().map(|(k, _, value)| (k, value)).collect();
    Some(Event::of(
        "changed",
        path,
        format!("{host} changed: {text}"),
        json!({"volume": host, "changes": changes}),
    ))
}

/// An automatic dismount: one event, which also stands for the removal of
/// the volume's object that follows it.
fn auto_dismounted(body: &zbus::message::Body, seen: &mut Seen) -> Option<Event> {
    let (object, host, _, reason, error): (OwnedObjectPath, String, u32, String, String) =
        body.deserialize().ok()?;
    Some(if error.is_empty() {
        seen.auto_dismounted.insert(object.to_string());
        let text = format!("dismounted {host} automatically ({reason})");
        let fields = json!({"volume": host, "reason": reason});
        Event::of("auto_dismounted", &object, text, fields)
    } else {
        let text = format!("could not dismount {host} ({reason}): {error}");
        let fields = json!({"volume": host, "reason": reason, "error": error});
        Event::of("auto_dismount_failed", &object, text, fields)
    })
}

/// The manager's own signals: health, headers written, the policy.
fn manager_signal(c: &Client, member: &str, body: &zbus::message::Body) -> Option<Event> {
    match member {
        "HealthChanged" => {
            let (object, host, _, health, problems): (
                OwnedObjectPath,
                String,
                u32,
                String,
                Vec<String>,
            ) = body.deserialize().ok()?;
            let mut text = format!("{host} health {health}");
            if !problems.is_empty() {
                text.push_str(&format!(": {}", problems.join("; ")));
            }
            let fields = json!({"volume": host, "health": health, "problems": problems});
            Some(Event::of("health", &object, text, fields))
        }
        "HeadersWritten" => headers_written(body),
        "PolicyChanged" => Some(policy_changed(c)),
        _ => None,
    }
}

/// The policy now in force, in words and fields.
fn policy_changed(c: &Client) -> Event {
    let Ok(p) = c.policy() else {
        return Event {
            kind: "policy_changed",
            object: None,
            text: "policy changed".into(),
            fields: json!({"policy": null}),
        };
    };
    let list = |l: &[String]| {
        if l.is_empty() {
            "-".to_owned()
        } else {
            l.join(", ")
        }
    };
    let allowed = if p.all_allowed {
        "all".to_owned()
    } else {
        list(&p.allowed)
    };
    Event {
        kind: "policy_changed",
        object: None,
        text: format!(
            "policy changed: hardware acceleration {}, backends allowed {allowed}, \
             preferred {}",
            p.hardware_acceleration,
            list(&p.prefer)
        ),
        // As `policy show --json`: `allowed` is null when every backend is.
        fields: json!({"policy": {"hardware_acceleration": p.hardware_acceleration,
            "all_allowed": p.all_allowed, "allowed": (!p.all_allowed).then_some(&p.allowed),
            "prefer": p.prefer}}),
    }
}

/// A call that wrote a volume's headers.
fn headers_written(body: &zbus::message::Body) -> Option<Event> {
    let (host, _, method, size, detail): (String, u32, String, u64, String) =
        body.deserialize().ok()?;
    let hidden = method == "Create" && detail == "hidden";
    let converted_to = (method == "ChangePassword" && !detail.is_empty()).then_some(&detail);
    let text = match (method.as_str(), converted_to) {
        ("Create", _) if hidden => format!("created a hidden volume in {host}"),
        ("Create", _) => format!("created {host}"),
        ("Expand", _) => format!("expanded {host} to {}", in_units(size)),
        ("ChangePassword", Some(format)) => {
            format!("changed the credentials of {host} and converted it to {format}")
        }
        ("ChangePassword", None) => format!("changed the credentials of {host}"),
        ("RestoreHeaders", _) => format!("restored the header of {host} from {detail}"),
        ("RestoreEmbeddedHeader", _) => {
            format!("restored the header of {host} from its embedded backup")
        }
        (other, _) => format!("{other} wrote the headers of {host}"),
    };
    let backup = (method == "RestoreHeaders" && !detail.is_empty()).then_some(&detail);
    Some(Event {
        kind: "headers_written",
        object: None,
        text,
        fields: json!({"volume": host, "method": method, "size": size, "backup": backup,
            "hidden": hidden, "converted_to": converted_to}),
    })
}

/// Bytes in the largest binary unit that holds them whole: "200 MiB",
/// "1 GiB", "1536 KiB", "1000 bytes".
fn in_units(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    UNITS
        .iter()
        .find(|(unit, _)| bytes >= *unit && bytes.is_multiple_of(*unit))
        .map_or_else(
            || format!("{bytes} bytes"),
            |(unit, name)| format!("{} {name}", bytes / unit),
        )
}

/// The time in UTC, as ISO 8601 to the millisecond, for scripts.
fn utc_time() -> String {
    let (tm, ms) = now(true);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
    )
}

/// The local time to the millisecond, as `udisksctl monitor` shows it.
fn timestamp() -> String {
    let (tm, ms) = now(false);
    format!(
        "{:02}:{:02}:{:02}.{ms:03}",
        tm.tm_hour, tm.tm_min, tm.tm_sec
    )
}

/// The time now, broken down in UTC or local time, and its milliseconds.
fn now(utc: bool) -> (libc::tm, u32) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = libc::time_t::try_from(now.as_secs()).unwrap_or_default();
    // SAFETY: `tm` is plain data that gmtime_r or localtime_r fills; both
    // pointers are to live locals.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if utc {
            libc::gmtime_r(&secs, &mut tm);
        } else {
            libc::localtime_r(&secs, &mut tm);
        }
        tm
    };
    (tm, now.subsec_millis())
}

#[cfg(test)]
mod tests {
    use super::{in_units, property_in_words};
    use zbus::zvariant::{OwnedValue, Value};

    #[test]
    fn slot_zero_is_no_slot_and_others_are_said_as_they_are() {
        let of = |v: Value<'static>| OwnedValue::try_from(v).expect("owned");
        assert_eq!(property_in_words("Slot", &of(Value::U32(0))), "-");
        assert_eq!(property_in_words("Slot", &of(Value::U32(3))), "3");
        assert_eq!(property_in_words("Size", &of(Value::U32(0))), "0");
        assert_eq!(property_in_words("MountPoint", &of(Value::from(""))), "-");
    }

    #[test]
    fn sizes_are_said_in_the_largest_unit_that_holds_them_whole() {
        assert_eq!(in_units(200 << 20), "200 MiB");
        assert_eq!(in_units(1 << 30), "1 GiB");
        assert_eq!(in_units(1536 << 10), "1536 KiB");
        assert_eq!(in_units(1000), "1000 bytes");
        assert_eq!(in_units(0), "0 bytes");
    }
}
