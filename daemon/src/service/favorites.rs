//! Favorites on D-Bus: each is an `a{sv}` whose keys are those of the
//! favorites file (`name`, `host`, `mount_point`, `readonly`, …), so what
//! a desktop sends, what `tcctl` prints and what an administrator writes
//! are one vocabulary (proto's `favorite` module).

use super::errors::ServiceError;
use crate::favorites::Favorite;
pub use tcd_proto::contract::favorite::{Dict, to_dict};

/// A favorite from what a caller sent; unknown keys and wrong types are
/// `InvalidArgument`, named.
pub fn from_dict(d: &Dict) -> Result<Favorite, ServiceError> {
    tcd_proto::contract::favorite::from_dict(d).map_err(ServiceError::invalid)
}
