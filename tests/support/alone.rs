//! Runs for tests that measure rates or ratios: one at a time in their
//! test binary, since another test's calls would take the cores they are
//! measured on.

use std::sync::{Mutex, MutexGuard};

use nnbench::Runner;
use nnbench::record::RunRecord;

static SERIAL: Mutex<()> = Mutex::new(());

/// Holds the cores to this test until dropped.
pub fn alone() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The cases whose ids contain `filter`, timed as their families say,
/// memory left out, while no other test of the binary runs.
pub fn run(filter: &str) -> RunRecord {
    let _alone = alone();
    Runner::new()
        .filter(filter)
        .quiet(true)
        .memory(false)
        .run()
        .expect("the run")
}
