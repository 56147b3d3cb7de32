//! What the memo cache saw on the current thread that a run must record:
//! evictions (to tell which memos a case evicted, and which of them stayed
//! alive through an outside reference) and warnings. While a run records,
//! both go into its record and its console; outside a run a warning is
//! printed to stderr.

use std::cell::RefCell;

/// One entry taken out of the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Eviction {
    /// The memo's description.
    pub memo: String,
    /// References to its value held outside the cache at that moment.
    pub references: usize,
}

/// What was recorded since the last [`take`].
#[derive(Debug, Default)]
pub(crate) struct Journal {
    pub evictions: Vec<Eviction>,
    pub warnings: Vec<String>,
}

thread_local! {
    static JOURNAL: RefCell<Option<Journal>> = const { RefCell::new(None) };
}

/// Records this thread's evictions and warnings until the returned guard
/// drops (dropping anything recorded and not taken).
pub(crate) fn record() -> Recording {
    let outer = JOURNAL.with(|j| j.borrow_mut().replace(Journal::default()));
    Recording(outer)
}

/// Ends the recording [`record`] began, even when a run unwinds, and gives
/// back the recording of a run this one ran inside (from a hook, say).
pub(crate) struct Recording(Option<Journal>);

impl Drop for Recording {
    fn drop(&mut self) {
        let outer = self.0.take();
        JOURNAL.with(|j| *j.borrow_mut() = outer);
    }
}

/// What was recorded since the last take; recording goes on.
pub(crate) fn take() -> Journal {
    JOURNAL.with(|j| match j.borrow_mut().as_mut() {
        Some(journal) => std::mem::take(journal),
        None => Journal::default(),
    })
}

pub(super) fn evicted(eviction: Eviction) {
    JOURNAL.with(|j| {
        if let Some(journal) = j.borrow_mut().as_mut() {
            journal.evictions.push(eviction);
        }
    });
}

/// Records `message` for the run going on in this thread, or prints it
/// when there is none.
pub(crate) fn warn(message: String) {
    let unrecorded = JOURNAL.with(|j| match j.borrow_mut().as_mut() {
        Some(journal) => {
            journal.warnings.push(message);
            None
        }
        None => Some(message),
    });
    if let Some(message) = unrecorded {
        eprintln!("warning: {message}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_recording_gives_the_outer_one_back() {
        let _outer = record();
        warn("outer".into());
        {
            let _inner = record();
            warn("inner".into());
            assert_eq!(take().warnings, ["inner"]);
        }
        warn("outer again".into());
        assert_eq!(take().warnings, ["outer", "outer again"]);
    }
}
