//! Ctrl-C and `SIGTERM` in a bench binary: the run stops after the case
//! that is running, writes its record with every finished case and exits
//! 130 or 143, as a shell reports a process those signals ended. A second
//! signal ends the process at once.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::{SIGINT, SIGTERM};

/// Set by the first signal; a second one while it is set exits.
fn flag() -> &'static Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)))
}

/// The number of the first signal received, 0 before any.
fn received() -> &'static Arc<AtomicUsize> {
    static RECEIVED: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    RECEIVED.get_or_init(|| Arc::new(AtomicUsize::new(0)))
}

/// A signal that asked the run to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Signal(i32);

impl Signal {
    pub(crate) fn from_number(number: i32) -> Self {
        Self(number)
    }

    pub(crate) fn number(self) -> i32 {
        self.0
    }

    pub(crate) fn name(self) -> &'static str {
        match self.0 {
            SIGINT => "SIGINT",
            SIGTERM => "SIGTERM",
            _ => "a signal",
        }
    }
}

/// Catches `SIGINT` and `SIGTERM` from now on.
pub(crate) fn install() -> std::io::Result<()> {
    for signal in [SIGINT, SIGTERM] {
        // Handlers run in this order: on a second signal the flag is
        // already set and the process exits before the number is written,
        // so the first signal's number is the one kept.
        signal_hook::flag::register_conditional_shutdown(signal, 128 + signal, Arc::clone(flag()))?;
        signal_hook::flag::register_usize(signal, Arc::clone(received()), signal as usize)?;
        signal_hook::flag::register(signal, Arc::clone(flag()))?;
    }
    Ok(())
}

/// The signal that asked the run to stop, if one did.
pub(crate) fn requested() -> Option<Signal> {
    if !flag().load(Ordering::Acquire) {
        return None;
    }
    match received().load(Ordering::Acquire) {
        0 => None,
        number => i32::try_from(number).ok().map(Signal),
    }
}
