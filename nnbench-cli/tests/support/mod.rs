//! What the tool's tests share with the runtime's (`tests/support` of the
//! workspace), and the tool they run.

#![allow(dead_code, unused_imports, unused_macros)]

#[path = "../../../tests/support/mod.rs"]
mod shared;

pub(crate) use shared::checks;
pub use shared::*;

use std::process::Command;

/// The `nnbench` tool built with these tests.
pub fn tool() -> Command {
    Command::new(env!("CARGO_BIN_EXE_nnbench"))
}
