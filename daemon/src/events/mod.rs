//! What happens around the daemon that may mount or dismount volumes
//! without a call: devices appearing and going (kernel uevents), users
//! logging out and the machine going to sleep (logind). The service layer
//! decides what to do about each.

pub mod logind;
pub mod uevent;
