//! The tcd daemon library.
pub mod engine;
