//! Options from the wire into the contract's types. The D-Bus signature is
//! `a{sv}`, decoded here rather than by zbus so that a key the daemon does
//! not know, or a value of the wrong type, is the API's own
//! `InvalidArgument` error, naming the key.

use super::errors::ServiceError;
use serde::Deserialize;
use std::collections::HashMap;
use zbus::zvariant::{OwnedValue, Type, serialized::Context, to_bytes};

/// Options as they arrive.
pub type Dict = HashMap<String, OwnedValue>;

/// `T` from `dict`, or `InvalidArgument` saying which key is wrong.
pub fn options<T>(dict: &Dict) -> Result<T, ServiceError>
where
    T: for<'d> Deserialize<'d> + Type,
{
    named(dict, "")
}

/// As [`options`], for `ChangePassword`'s new side: its keys are named
/// `new_KEY` in errors, apart from the same keys of the opening side.
pub fn new_options<T>(dict: &Dict) -> Result<T, ServiceError>
where
    T: for<'d> Deserialize<'d> + Type,
{
    named(dict, "new_")
}

fn named<T>(dict: &Dict, prefix: &str) -> Result<T, ServiceError>
where
    T: for<'d> Deserialize<'d> + Type,
{
    let bad = |e: zbus::zvariant::Error| ServiceError::invalid(format!("options: {e}"));
    // (The message that carried them holds the same bytes.)
    let bytes = to_bytes(Context::new_dbus(zbus::zvariant::LE, 0), dict).map_err(bad)?;
    let decoded = bytes.deserialize::<T>().map(|(v, _)| v);
    decoded.map_err(|e| match wrong_key::<T>(dict) {
        Some(key) => ServiceError::invalid(format!("option {prefix}{key}: {e}")),
        None => bad(e),
    })
}

/// The first key that alone does not decode, to name it in the error.
fn wrong_key<T>(dict: &Dict) -> Option<&str>
where
    T: for<'d> Deserialize<'d> + Type,
{
    let ctx = Context::new_dbus(zbus::zvariant::LE, 0);
    dict.iter().find_map(|(k, v)| {
        let one: HashMap<&str, &OwnedValue> = HashMap::from([(k.as_str(), v)]);
        let bytes = to_bytes(ctx, &one).ok()?;
        bytes.deserialize::<T>().is_err().then_some(k.as_str())
    })
}
