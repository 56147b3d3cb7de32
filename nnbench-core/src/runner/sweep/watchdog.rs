//! `--case-timeout` without `--isolate`: a thread that watches the running
//! case. A thread cannot be stopped from outside, so when a case runs past
//! its time the watchdog closes the run in its place: the case is recorded
//! failed as timed out, the record is written with every finished case,
//! and the process exits. `--resume` then runs the cases after it.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::record::{CaseRecord, MemoryRecord, Stage};
use crate::registry::Case;

/// The case being watched.
pub(crate) struct Overdue {
    /// Its record should it not finish: made when it starts, since the
    /// case itself stays with the thread that runs it.
    record: CaseRecord,
    stage: Stage,
    rss_before: Option<u64>,
}

impl Overdue {
    /// The case's record: failed, in the step it was in, as timed out.
    pub(crate) fn into_record(mut self, limit: Duration) -> CaseRecord {
        if let Some(error) = &mut self.record.error {
            error.stage = self.stage;
            error.message = format!(
                "timed out: still running after {} (--case-timeout); without --isolate a running case cannot be stopped, so the run stopped",
                humantime::format_duration(limit)
            );
        }
        self.record.memory = MemoryRecord {
            rss_before_bytes: self.rss_before,
            rss_peak_bytes: crate::measure::rss::peak_bytes(),
            rss_method: Some(crate::record::RssMethod::Hwm),
            ..MemoryRecord::default()
        };
        self.record
    }
}

struct Watch {
    running: Option<(Overdue, Instant)>,
    /// The watchdog is closing the run: the loop must not go on.
    fired: bool,
    /// The run ended: the thread ends.
    done: bool,
}

struct Shared {
    watch: Mutex<Watch>,
    wake: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Watch> {
        self.watch.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Watches each case for `limit`; calls `on_timeout` from its own thread
/// with the case that ran past it.
pub(crate) struct Watchdog {
    limit: Duration,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    pub(crate) fn start(
        limit: Duration,
        on_timeout: impl FnOnce(Overdue) + Send + 'static,
    ) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            watch: Mutex::new(Watch {
                running: None,
                fired: false,
                done: false,
            }),
            wake: Condvar::new(),
        });
        let thread = std::thread::Builder::new()
            .name("nnbench-watchdog".into())
            .spawn({
                let shared = Arc::clone(&shared);
                move || {
                    if let Some(overdue) = watch(&shared) {
                        on_timeout(overdue);
                    }
                }
            })?;
        Ok(Self {
            limit,
            shared,
            thread: Some(thread),
        })
    }

    /// `case` starts now.
    pub(crate) fn arm(&self, case: &Case) {
        let record = crate::runner::case::lifecycle::unfinished(
            case,
            Stage::Memo,
            String::new(),
            Vec::new(),
            MemoryRecord::default(),
        );
        let rss_before = crate::measure::rss::current_bytes();
        let mut watch = self.shared.lock();
        watch.running = Some((
            Overdue {
                record,
                stage: Stage::Memo,
                rss_before,
            },
            Instant::now() + self.limit,
        ));
        self.shared.wake.notify_one();
    }

    /// The running case enters `stage`.
    pub(crate) fn stage(&self, stage: Stage) {
        if let Some((overdue, _)) = &mut self.shared.lock().running {
            overdue.stage = stage;
        }
    }

    /// The running case finished in time. If it did not (the watchdog is
    /// closing the run), this thread waits for the process to end.
    pub(crate) fn disarm(&self) {
        let mut watch = self.shared.lock();
        if watch.fired {
            drop(watch);
            loop {
                std::thread::park();
            }
        }
        watch.running = None;
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.shared.lock().done = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Waits for a case to run past its deadline; `None` once the run ends.
fn watch(shared: &Shared) -> Option<Overdue> {
    let mut watch = shared.lock();
    loop {
        if watch.done {
            return None;
        }
        let deadline = watch.running.as_ref().map(|(_, deadline)| *deadline);
        watch = match deadline {
            None => shared
                .wake
                .wait(watch)
                .unwrap_or_else(PoisonError::into_inner),
            Some(deadline) if Instant::now() >= deadline => {
                watch.fired = true;
                return watch.running.take().map(|(overdue, _)| overdue);
            }
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                shared
                    .wake
                    .wait_timeout(watch, left)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0
            }
        };
    }
}
