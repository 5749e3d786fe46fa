//! `tcctl monitor`: every change the daemon announces, a timestamped line
//! each, as `udisksctl monitor` prints them.

use super::Context;
use crate::bus::{Client, Failure, VolumeView, exit};
use std::collections::{HashMap, HashSet};
use tcd_proto::contract::names::{MANAGER_INTERFACE, VOLUME_INTERFACE};
use zbus::zvariant::{OwnedObjectPath, OwnedValue};

const OBJECT_MANAGER: &str = "org.freedesktop.DBus.ObjectManager";
const PROPERTIES: &str = "org.freedesktop.DBus.Properties";

/// `tcctl monitor`: until the daemon goes. The daemon sends each client
/// only the volumes it may see, so nothing is filtered here.
pub fn monitor(ctx: Context<'_>) -> Result<(), Failure> {
    let c = Client::connect(ctx.at)?;
    let signals = c.signals()?;
    let mut seen = Seen {
        hosts: c
            .list()?
            .into_iter()
            .map(|v| (v.object.to_string(), v.host().to_owned()))
            .collect(),
        ..Seen::default()
    };
    println!("Monitoring the tcd daemon. Press Ctrl+C to exit.");
    for m in signals {
        if let Some(line) = describe(&c, &m, &mut seen) {
            println!("{}: {line}", timestamp());
        }
    }
    Err(Failure {
        code: exit::NO_DAEMON,
        message: "the daemon went away".into(),
    })
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

/// One signal in words; `None` for one that says nothing new (a volume's
/// `Health` property comes with the manager's `HealthChanged`).
fn describe(c: &Client, m: &zbus::Message, seen: &mut Seen) -> Option<String> {
    let header = m.header();
    let path = header.path()?.to_string();
    let body = m.body();
    match (header.interface()?.as_str(), header.member()?.as_str()) {
        (OBJECT_MANAGER, "InterfacesAdded") => added(&body, seen),
        (OBJECT_MANAGER, "InterfacesRemoved") => {
            let (object, _): (OwnedObjectPath, Vec<String>) = body.deserialize().ok()?;
            let host = seen.hosts.remove(object.as_str()).unwrap_or_default();
            seen.values.remove(object.as_str());
            (!seen.auto_dismounted.remove(object.as_str()))
                .then(|| format!("{object}: dismounted {host}"))
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
fn added(body: &zbus::message::Body, seen: &mut Seen) -> Option<String> {
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
        let words = raw
            .remove(VOLUME_INTERFACE)
            .unwrap_or_default()
            .iter()
            .map(|(k, v)| (k.clone(), in_words(v)))
            .collect();
        seen.values.insert(object.to_string(), words);
    }
    let host = v.host.clone().unwrap_or_default();
    seen.hosts.insert(object.to_string(), host.clone());
    let device = v.device.unwrap_or_default();
    Some(match v.mount_point.filter(|p| !p.is_empty()) {
        Some(at) => format!("{object}: mounted {host} on {at} ({device})"),
        None => format!("{object}: attached {host} as {device}"),
    })
}

/// A property's value in words; "-" for none (an empty mount point).
fn in_words(v: &OwnedValue) -> String {
    let words = crate::output::plain(&crate::bus::to_json(v));
    if words.is_empty() { "-".into() } else { words }
}

/// A volume's `Backends`, `ReadOnly` and `State` as they change: only
/// the values that differ from what was last said.
fn properties_changed(
    path: &str,
    host: &str,
    known: &mut HashMap<String, String>,
    changed: HashMap<String, OwnedValue>,
) -> Option<String> {
    let mut said: Vec<String> = changed
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "Health" | "Problems"))
        .filter_map(|(k, v)| {
            let words = in_words(v);
            let old = known.insert(k.clone(), words.clone());
            (old.as_ref() != Some(&words)).then(|| format!("{k} {words}"))
        })
        .collect();
    said.sort();
    (!said.is_empty()).then(|| format!("{path}: {host} changed: {}", said.join(", ")))
}

/// An automatic dismount: one line, which also stands for the removal of
/// the volume's object that follows it.
fn auto_dismounted(body: &zbus::message::Body, seen: &mut Seen) -> Option<String> {
    let (object, host, _, reason, error): (OwnedObjectPath, String, u32, String, String) =
        body.deserialize().ok()?;
    Some(if error.is_empty() {
        seen.auto_dismounted.insert(object.to_string());
        format!("{object}: dismounted {host} automatically ({reason})")
    } else {
        format!("{object}: could not dismount {host} ({reason}): {error}")
    })
}

/// The manager's own signals: health, the policy.
fn manager_signal(c: &Client, member: &str, body: &zbus::message::Body) -> Option<String> {
    match member {
        "HealthChanged" => {
            let (object, host, _, health, problems): (
                OwnedObjectPath,
                String,
                u32,
                String,
                Vec<String>,
            ) = body.deserialize().ok()?;
            let mut line = format!("{object}: {host} health {health}");
            if !problems.is_empty() {
                line.push_str(&format!(": {}", problems.join("; ")));
            }
            Some(line)
        }
        "HeadersWritten" => headers_written(body),
        "PolicyChanged" => Some(match c.policy() {
            Ok(p) => {
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
                format!(
                    "policy changed: hardware acceleration {}, backends allowed {allowed}, \
                     preferred {}",
                    p.hardware_acceleration,
                    list(&p.prefer)
                )
            }
            Err(_) => "policy changed".into(),
        }),
        _ => None,
    }
}

/// A call that wrote a volume's headers, in words.
fn headers_written(body: &zbus::message::Body) -> Option<String> {
    let (host, _, method, size, backup): (String, u32, String, u64, String) =
        body.deserialize().ok()?;
    Some(match method.as_str() {
        "Create" => format!("created {host}"),
        "Expand" => format!("expanded {host} to {}", in_units(size)),
        "ChangePassword" => format!("changed the password of {host}"),
        "RestoreHeaders" => format!("restored the header of {host} from {backup}"),
        "RestoreEmbeddedHeader" => {
            format!("restored the header of {host} from its embedded backup")
        }
        other => format!("{other} wrote the headers of {host}"),
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

/// The local time to the millisecond, as `udisksctl monitor` shows it.
fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = libc::time_t::try_from(now.as_secs()).unwrap_or_default();
    // SAFETY: `tm` is plain data that localtime_r fills; both pointers are
    // to live locals.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&secs, &mut tm);
        tm
    };
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        now.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::in_units;

    #[test]
    fn sizes_are_said_in_the_largest_unit_that_holds_them_whole() {
        assert_eq!(in_units(200 << 20), "200 MiB");
        assert_eq!(in_units(1 << 30), "1 GiB");
        assert_eq!(in_units(1536 << 10), "1536 KiB");
        assert_eq!(in_units(1000), "1000 bytes");
        assert_eq!(in_units(0), "0 bytes");
    }
}
