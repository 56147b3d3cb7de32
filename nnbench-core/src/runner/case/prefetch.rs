//! `--prefetch`: while a case runs, the memos of the case after it load in
//! a background thread, so that a sweep bound by loading models costs about
//! the larger of load and compute per case instead of their sum.
//!
//! The load shares the machine with the running case: its memory counts in
//! that case's peaks, and it can slow the timed call. The record says which
//! case a prefetch ran beside (`memo.prefetched`).

use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::memo::{self, DiskTier, ErasedMemo, Sizes, journal};
use crate::settings::Settings;

/// The background load in flight, if any.
pub(crate) struct Prefetcher {
    enabled: bool,
    host_budget: Option<u64>,
    device_budget: Option<u64>,
    disk_tier: DiskTier,
    pending: Option<JoinHandle<Loaded>>,
}

impl Prefetcher {
    pub(crate) fn new(settings: &Settings) -> Self {
        Self {
            enabled: settings.memory.prefetch && !settings.timing.test_mode,
            host_budget: settings.memory.memo_budget,
            device_budget: settings.memory.memo_gpu_budget,
            disk_tier: settings.memory.disk_tier.clone(),
            pending: None,
        }
    }

    /// Starts loading those of `memos` that the cache lacks, if memory
    /// allows them beside what is resident; returns their descriptions.
    pub(crate) fn start(&mut self, memos: &[&dyn ErasedMemo]) -> Vec<String> {
        if !self.enabled || self.pending.is_some() {
            return Vec::new();
        }
        let cache = memo::global_cache();
        let missing: Vec<Box<dyn ErasedMemo>> = memos
            .iter()
            .filter(|m| !cache.contains(**m))
            .map(|m| m.clone_boxed())
            .collect();
        if missing.is_empty() {
            return Vec::new();
        }
        let need = missing
            .iter()
            .map(|m| cache.estimated_bytes(&**m) + cache.expected_inputs_bytes(&**m))
            .fold(Sizes::default(), std::ops::Add::add);
        if !self.fits(need) {
            return Vec::new();
        }
        let names: Vec<String> = missing.iter().map(|m| m.describe()).collect();
        let tier = self.disk_tier.clone();
        let spawned = std::thread::Builder::new()
            .name("nnbench-prefetch".into())
            .spawn(move || {
                memo::with_disk_tier(tier, || {
                    let _recording = journal::record();
                    for memo in &missing {
                        // A failure stays in the cache, for the case that
                        // uses the memo to record.
                        let _ = memo::resolve_erased(&**memo);
                    }
                    let warnings = journal::take().warnings;
                    let once: Vec<String> =
                        journal::take_said().into_iter().map(|s| s.text).collect();
                    Loaded {
                        warnings: warnings.into_iter().filter(|w| !once.contains(w)).collect(),
                        once,
                    }
                })
            });
        match spawned {
            Ok(handle) => {
                self.pending = Some(handle);
                names
            }
            // No thread: the next case loads its memos itself.
            Err(_) => Vec::new(),
        }
    }

    /// Whether `need` fits beside the resident memos: within the memo
    /// budgets where they are set, else within the memory the system has
    /// available.
    fn fits(&self, need: Sizes) -> bool {
        let held = memo::global_cache().resident_total();
        let host_room = match self.host_budget {
            Some(budget) => budget.saturating_sub(held.host),
            None => available_memory().unwrap_or(u64::MAX),
        };
        let device_room = self
            .device_budget
            .map_or(u64::MAX, |budget| budget.saturating_sub(held.device));
        need.host <= host_room && need.device <= device_room
    }

    /// Whether the run prefetches at all.
    pub(crate) fn enabled(&self) -> bool {
        self.enabled
    }

    /// Whether a load is in flight.
    pub(crate) fn in_flight(&self) -> bool {
        self.pending.is_some()
    }

    /// Waits for the load in flight; returns the warnings it gave and how
    /// long the wait took. What it says once a run is said on this thread,
    /// for the case that waits.
    pub(crate) fn wait(&mut self) -> (Vec<String>, Duration) {
        let Some(handle) = self.pending.take() else {
            return (Vec::new(), Duration::ZERO);
        };
        let started = Instant::now();
        let loaded = handle.join().unwrap_or_else(|_| Loaded {
            warnings: vec![
                "the background load of the next case's memos stopped unexpectedly".into(),
            ],
            once: Vec::new(),
        });
        for message in loaded.once {
            journal::warn_once(message);
        }
        (loaded.warnings, started.elapsed())
    }
}

/// What a background load said.
struct Loaded {
    warnings: Vec<String>,
    /// Warnings said once a run.
    once: Vec<String>,
}

/// Memory the system can give without swapping (`MemAvailable`), less a
/// tenth kept free.
fn available_memory() -> Option<u64> {
    let mut system = sysinfo::System::new();
    system.refresh_memory();
    let available = system.available_memory();
    (available > 0).then(|| available - available / 10)
}
