//! What a run prints: a line per case (under a progress bar on a terminal),
//! its warnings, and a table at the end; and the HTML report of a history.

mod chart;
mod console;
pub mod html;
mod silence;

pub(crate) use console::Console;
