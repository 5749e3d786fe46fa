//! The commands, one module per group; each function runs one command.

pub mod backends;
pub mod favorites;
pub mod headers;
pub mod monitor;
pub mod volumes;
pub mod watch;

use crate::bus::Where;

/// What every command is given besides its own arguments.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// Where the daemon is.
    pub at: Where<'a>,
    /// Report the outcome as a desktop notification too.
    pub notify: bool,
    /// Passwords may be asked for (not --non-interactive).
    pub interactive: bool,
}
