//! The Volume Creation Wizard.

use crate::window::Main;

pub fn show(_main: &Main) {}
