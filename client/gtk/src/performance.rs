//! Settings: Performance.

use crate::daemon::Target;

pub fn show(_parent: &adw::ApplicationWindow, _target: &Target) {}
