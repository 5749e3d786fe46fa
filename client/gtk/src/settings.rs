//! The application's Preferences, kept as TOML in the user's config
//! folder (`$XDG_CONFIG_HOME/tcd-gtk/settings.toml`): what a new Mount
//! dialog starts with.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Mount read-only.
    pub readonly: bool,
    /// The mount point a Mount dialog offers; empty: the daemon chooses.
    pub mount_point: String,
    /// Keep the password in the daemon's cache.
    pub cache_password: bool,
    /// Dismount after so many idle minutes (0: never).
    pub dismount_idle_minutes: u32,
}

fn path() -> PathBuf {
    gtk::glib::user_config_dir()
        .join("tcd-gtk")
        .join("settings.toml")
}

/// The settings saved, or the defaults when there are none (or they do
/// not parse).
pub fn load() -> Settings {
    std::fs::read_to_string(path())
        .ok()
        .and_then(|t| toml::from_str(&t).ok())
        .unwrap_or_default()
}

/// Saves `s`; why not, if it could not be.
pub fn save(s: &Settings) -> Result<(), String> {
    let p = path();
    let text = toml::to_string(s).map_err(|e| e.to_string())?;
    if let Some(dir) = p.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))
}
