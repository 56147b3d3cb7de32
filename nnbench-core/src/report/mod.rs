//! What a run prints: a progress line per case and a table at the end.

mod console;
mod units;

pub(crate) use console::Console;
pub use units::{format_bytes, format_ns};
