//! Evictions seen by the current thread, so the runner can tell which memos
//! a case evicted (its teardown, or the runner after their last use) and
//! which of them stayed alive through an outside reference.

use std::cell::RefCell;

/// One entry taken out of the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Eviction {
    /// The memo's description.
    pub memo: String,
    /// References to its value held outside the cache at that moment.
    pub references: usize,
}

thread_local! {
    static JOURNAL: RefCell<Option<Vec<Eviction>>> = const { RefCell::new(None) };
}

/// Starts recording this thread's evictions (dropping any not taken).
pub(crate) fn start() {
    JOURNAL.with(|j| *j.borrow_mut() = Some(Vec::new()));
}

/// Stops recording and returns what was recorded since [`start`].
pub(crate) fn take() -> Vec<Eviction> {
    JOURNAL.with(|j| j.borrow_mut().take().unwrap_or_default())
}

pub(super) fn record(eviction: Eviction) {
    JOURNAL.with(|j| {
        if let Some(log) = j.borrow_mut().as_mut() {
            log.push(eviction);
        }
    });
}
