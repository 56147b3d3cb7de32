//! A background thread that samples resident memory and GPU memory while a
//! case runs (and sleeps parked otherwise), for the figures the kernel does
//! not keep a high-water mark of.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

use super::{gpu, rss};

/// How often resident memory is sampled.
pub(crate) const RSS_PERIOD: Duration = Duration::from_millis(1);
/// How often GPU memory is sampled: an NVML query costs far more than a
/// read of `/proc/self/statm`.
pub(crate) const GPU_PERIOD: Duration = Duration::from_millis(5);

/// What to watch during one case.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Watch {
    pub rss: bool,
    pub gpu: bool,
}

/// The peaks of one case.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Peaks {
    pub rss: Option<u64>,
    pub gpu: Option<u64>,
}

#[derive(Default)]
struct State {
    watch: Watch,
    peaks: Peaks,
    last_gpu: Option<Instant>,
}

impl State {
    fn sample(&mut self) {
        if self.watch.rss
            && let Some(now) = rss::current_bytes()
        {
            self.peaks.rss = Some(self.peaks.rss.map_or(now, |p| p.max(now)));
        }
        let gpu_due = self.last_gpu.is_none_or(|t| t.elapsed() >= GPU_PERIOD);
        if self.watch.gpu
            && gpu_due
            && let Some(now) = gpu::used_bytes()
        {
            self.last_gpu = Some(Instant::now());
            self.peaks.gpu = Some(self.peaks.gpu.map_or(now, |p| p.max(now)));
        }
    }
}

struct Sampler {
    /// Held while sampling, so that a sample never straddles two cases.
    state: Mutex<State>,
    active: AtomicBool,
    thread: Thread,
}

fn sampler() -> &'static Arc<Sampler> {
    static SAMPLER: OnceLock<Arc<Sampler>> = OnceLock::new();
    SAMPLER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Arc<Sampler>>();
        let handle = thread::Builder::new()
            .name("nnbench-sampler".into())
            .spawn(move || {
                let Ok(sampler) = rx.recv() else { return };
                loop {
                    if sampler.active.load(Ordering::Acquire) {
                        sampler
                            .state
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .sample();
                        thread::sleep(RSS_PERIOD);
                    } else {
                        thread::park();
                    }
                }
            });
        let thread = match &handle {
            Ok(handle) => handle.thread().clone(),
            // No thread: begin/end still take their own samples.
            Err(_) => thread::current(),
        };
        let sampler = Arc::new(Sampler {
            state: Mutex::new(State::default()),
            active: AtomicBool::new(false),
            thread,
        });
        if handle.is_ok() {
            let _ = tx.send(Arc::clone(&sampler));
        }
        sampler
    })
}

/// Starts sampling what `watch` asks for, from a first sample now.
pub(crate) fn begin(watch: Watch) {
    if watch == Watch::default() {
        return;
    }
    let sampler = sampler();
    {
        let mut state = sampler.state.lock().unwrap_or_else(PoisonError::into_inner);
        *state = State {
            watch,
            ..State::default()
        };
        state.sample();
    }
    sampler.active.store(true, Ordering::Release);
    sampler.thread.unpark();
}

/// The peaks since [`begin`] (or the last [`forget_rss_peak`]), sampling
/// once more first.
pub(crate) fn peaks_now(watch: Watch) -> Peaks {
    if watch == Watch::default() {
        return Peaks::default();
    }
    let mut state = sampler()
        .state
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    state.sample();
    state.peaks
}

/// Starts the resident-memory peak over from the memory resident now.
pub(crate) fn forget_rss_peak(watch: Watch) {
    if !watch.rss {
        return;
    }
    let mut state = sampler()
        .state
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    state.peaks.rss = None;
    state.sample();
}

/// Starts every peak over from what is used now.
pub(crate) fn restart(watch: Watch) {
    if watch == Watch::default() {
        return;
    }
    let mut state = sampler()
        .state
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    state.peaks = Peaks::default();
    state.last_gpu = None;
    state.sample();
}

/// Stops sampling after a last sample; returns the peaks since [`begin`].
pub(crate) fn end(watch: Watch) -> Peaks {
    if watch == Watch::default() {
        return Peaks::default();
    }
    let sampler = sampler();
    sampler.active.store(false, Ordering::Release);
    let mut state = sampler.state.lock().unwrap_or_else(PoisonError::into_inner);
    state.last_gpu = None;
    state.sample();
    state.peaks
}
