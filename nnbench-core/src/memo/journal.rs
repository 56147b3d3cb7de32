//! What the memo cache saw on the current thread that a run must record:
//! evictions (to tell which memos a case evicted, and which of them stayed
//! alive through an outside reference) and warnings. While a run records,
//! both go into its record and its console; outside a run a warning is
//! printed to stderr. A warning about the run rather than the case (a memo
//! budget too small, a tier without file locks) is said with the first
//! case that meets it and then counted: the run's record says it once,
//! with how many cases it concerned.

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
    /// The warnings said once a run, with whether the current case said
    /// them; kept by [`take`], drained by [`take_said`].
    said: Vec<(Said, bool)>,
}

/// A warning said once a run, and how many cases met it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Said {
    pub text: String,
    pub cases: u64,
}

impl Said {
    /// Adds `more` to `into`, counting the cases of a warning both said.
    pub(crate) fn merge(into: &mut Vec<Said>, more: Vec<Said>) {
        for said in more {
            match into.iter_mut().find(|s| s.text == said.text) {
                Some(known) => known.cases += said.cases,
                None => into.push(said),
            }
        }
    }

    /// The run's warning.
    pub(crate) fn say(&self) -> String {
        let cases = if self.cases == 1 { "case" } else { "cases" };
        format!("{} ({} {cases})", self.text, self.cases)
    }
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
        Some(journal) => Journal {
            evictions: std::mem::take(&mut journal.evictions),
            warnings: std::mem::take(&mut journal.warnings),
            said: Vec::new(),
        },
        None => Journal::default(),
    })
}

/// A new case starts: what it says once a run counts for it.
pub(crate) fn next_case() {
    JOURNAL.with(|j| {
        if let Some(journal) = j.borrow_mut().as_mut() {
            for (_, now) in &mut journal.said {
                *now = false;
            }
        }
    });
}

/// The warnings said once a run since recording began, and the cases each
/// concerned; counting starts again.
pub(crate) fn take_said() -> Vec<Said> {
    JOURNAL.with(|j| match j.borrow_mut().as_mut() {
        Some(journal) => journal.said.drain(..).map(|(said, _)| said).collect(),
        None => Vec::new(),
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

/// Records `message` as a warning about the run: the first case that
/// says it carries it, and later cases only count; outside a run it is
/// printed once a process.
pub(crate) fn warn_once(message: String) {
    let unrecorded = JOURNAL.with(|j| match j.borrow_mut().as_mut() {
        Some(journal) => {
            match journal.said.iter_mut().find(|(s, _)| s.text == message) {
                Some((said, now)) => {
                    if !*now {
                        said.cases += 1;
                        *now = true;
                    }
                }
                None => {
                    journal.warnings.push(message.clone());
                    journal.said.push((
                        Said {
                            text: message,
                            cases: 1,
                        },
                        true,
                    ));
                }
            }
            None
        }
        None => Some(message),
    });
    if let Some(message) = unrecorded {
        static PRINTED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        let mut printed = PRINTED.lock().unwrap_or_else(|p| p.into_inner());
        if !printed.contains(&message) {
            eprintln!("warning: {message}");
            printed.push(message);
        }
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

    #[test]
    fn a_warning_said_once_is_carried_by_its_first_case_and_counted() {
        let _run = record();
        next_case();
        warn_once("budget".into());
        warn_once("budget".into());
        warn_once("locks".into());
        assert_eq!(take().warnings, ["budget", "locks"]);
        for _ in 0..2 {
            next_case();
            warn_once("budget".into());
            assert!(take().warnings.is_empty());
        }
        let said = take_said();
        assert_eq!(
            said,
            [
                Said {
                    text: "budget".into(),
                    cases: 3
                },
                Said {
                    text: "locks".into(),
                    cases: 1
                }
            ]
        );
        let mut all = said.clone();
        Said::merge(&mut all, said);
        assert_eq!(all[0].say(), "budget (6 cases)");
        assert_eq!(all[1].say(), "locks (2 cases)");
        assert!(take_said().is_empty());
    }
}
