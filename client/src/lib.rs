//! `tcd_client`: what every client of the tcd daemon shares — the calls
//! (`bus`), hosts opened with the user's own rights (`host`), the option
//! dictionaries (`options`), passwords and keyfiles read from the user
//! (`input`, `answer`, `prompt`, `token`), the user's keyring (`keystore`), the tables
//! (`output`). `tcctl` (main.rs) and the desktop application (client/gtk)
//! are thin layers over it.

pub mod answer;
pub mod bus;
pub mod cli;
pub mod devices;
pub mod favorites;
pub mod follow;
pub mod forms;
pub mod host;
pub mod input;
pub mod keyfiles;
pub mod keystore;
pub mod notify;
pub mod options;
pub mod output;
pub mod polkit;
pub mod prompt;
pub mod search;
pub mod signals;
pub mod token;
pub mod tools;
