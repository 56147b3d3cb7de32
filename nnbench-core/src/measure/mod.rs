//! What the harness measures around a case: resident memory (exact peak
//! where the kernel resets its high-water mark, sampled elsewhere), heap
//! (with [`TrackingAllocator`](crate::alloc::TrackingAllocator) installed) and
//! GPU memory (through NVML). Time is taken around the call itself.

pub(crate) mod adaptive;
pub(crate) mod arrivals;
mod batches;
mod bencher;
pub(crate) mod busy;
pub(crate) mod callgrind;
pub(crate) mod cpu;
mod dispatcher_core;
pub(crate) mod energy;
pub mod gpu;
pub(crate) mod load;
pub(crate) mod memory_limit;
mod nvml;
mod open_counts;
mod open_loop;
#[cfg_attr(not(target_os = "linux"), path = "perf_elsewhere.rs")]
pub(crate) mod perf;
pub(crate) mod placement;
pub(crate) mod profile;
pub(crate) mod roofs;
pub(crate) mod round;
pub mod rss;
#[cfg(feature = "tokio")]
mod runtime;
mod sampler;
pub(crate) mod search;
pub(crate) mod stream;
mod timer;
mod together;
#[cfg(feature = "tch")]
pub(crate) mod torch_allocator;

pub use bencher::{Bencher, BencherInputs};
#[cfg(feature = "tokio")]
#[cfg_attr(docsrs, doc(cfg(feature = "tokio")))]
pub use runtime::{Flavor, RuntimeError, runtime};
pub use timer::Timer;
pub(crate) use timer::{combine, one_call, summarize};

use crate::alloc;
pub use crate::record::RssMethod;
use crate::record::{GpuMethod, MemoryRecord};
use sampler::Watch;

/// The name of the async cases' runtime threads, which run the work the
/// cases spawn: a profile keeps them, as it leaves out the harness's
/// other threads.
#[cfg_attr(not(any(feature = "tokio", feature = "profile")), allow(dead_code))]
pub(crate) const RUNTIME_THREADS: &str = "nnbench-async";

/// Whether `NNBENCH_RSS=sampled` was set when the running sweep started:
/// see [`read_rss_choice`].
static SAMPLING_FORCED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Reads `NNBENCH_RSS` for the sweep about to start, once rather than
/// for each case: `NNBENCH_RSS=sampled` makes the runner sample even where
/// the kernel could keep the peak, to compare the two or to test the
/// fallback.
pub(crate) fn read_rss_choice() {
    let forced = std::env::var("NNBENCH_RSS").is_ok_and(|v| v == "sampled");
    SAMPLING_FORCED.store(forced, std::sync::atomic::Ordering::Relaxed);
}

fn sampling_forced() -> bool {
    SAMPLING_FORCED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Measurement of one case, from before its memos resolve until after
/// its eviction.
pub(crate) struct CaseMeter {
    rss_before: Option<u64>,
    /// What of `rss_before` was file-backed, where asked for.
    rss_file_before: Option<u64>,
    rss_method: Option<RssMethod>,
    heap_before: Option<u64>,
    gpu: Option<(GpuMethod, Option<u64>)>,
    watch: Watch,
    /// Peaks set aside before foreign code ran: see [`checkpoint`](Self::checkpoint).
    held: Held,
    /// The function's own figures, once it started: see
    /// [`enter_call`](Self::enter_call).
    call: Option<CallWindow>,
    /// Resident and heap peaks before the call, while it runs.
    pre_call: Option<(Option<u64>, Option<u64>)>,
    /// The call's figures are the case's: see [`call_spans_case`](Self::call_spans_case).
    call_is_case: bool,
    /// Whole-case GPU peaks set aside when the call started, whose
    /// counters it reset: absolute bytes, and the allocator's reserved.
    held_gpu: (Option<u64>, Option<u64>),
}

/// What the function's own figures start from, and, once it returned, what
/// they are.
#[derive(Clone, Copy, Debug, Default)]
struct CallWindow {
    rss_before: Option<u64>,
    heap_before: Option<u64>,
    /// What the device used when the call began (`device-delta`).
    gpu_start: Option<u64>,
    rss_peak: Option<u64>,
    heap_peak: Option<u64>,
    gpu_peak: Option<u64>,
}

/// The case's peaks as of its last call, and the allocations made by
/// foreign code since, which are not the case's.
#[derive(Clone, Copy, Debug, Default)]
struct Held {
    rss: Option<u64>,
    heap: Option<u64>,
    allocations_at_checkpoint: u64,
    foreign_allocations: u64,
}

impl CaseMeter {
    /// Starts measuring a case; `file_backed`: whether to read what of its
    /// resident memory is file-backed (a `scaling` family's, whose capacity
    /// leaves out what the kernel reclaims), one more read of `status`.
    pub(crate) fn start(file_backed: bool) -> Self {
        let rss_file_before = file_backed.then(rss::file_backed_bytes).flatten();
        let (hwm, rss_before) = if sampling_forced() {
            rss::forget_reading();
            (false, rss::current_bytes())
        } else {
            rss::reset_peak_and_read()
        };
        let rss_method = match (hwm, rss_before) {
            (true, _) => Some(RssMethod::Hwm),
            (false, Some(_)) => Some(RssMethod::Sampled),
            (false, None) => None,
        };
        alloc::reset_peak();
        let heap_before = alloc::stats().map(|s| s.current_bytes);
        let gpu = start_gpu();
        let watch = Watch {
            rss: rss_method == Some(RssMethod::Sampled),
            gpu: matches!(gpu, Some((GpuMethod::Process | GpuMethod::DeviceDelta, _))),
        };
        sampler::begin(watch);
        Self {
            rss_before,
            rss_file_before,
            rss_method,
            heap_before,
            gpu,
            watch,
            held: Held::default(),
            call: None,
            pre_call: None,
            call_is_case: false,
            held_gpu: (None, None),
        }
    }

    /// The case's figures now: its peaks so far, and what is resident.
    /// `end` stops the sampler with a last sample.
    fn read(&self, end: bool) -> Reading {
        let sampled = if end {
            sampler::end(self.watch)
        } else {
            sampler::peaks_now(self.watch)
        };
        let (rss_peak, rss_now) = match self.rss_method {
            // One read of `status` gives both.
            Some(RssMethod::Hwm) => rss::peak_and_current_bytes(end),
            Some(RssMethod::Sampled) => (sampled.rss, rss::current_bytes()),
            None => (None, rss::current_bytes()),
        };
        let heap = alloc::stats();
        let (gpu, gpu_reserved) = match self.gpu {
            Some((GpuMethod::TorchAllocator, _)) => torch_peaks(),
            Some(_) => (sampled.gpu, None),
            None => (None, None),
        };
        Reading {
            rss_peak,
            rss_now,
            heap_peak: heap.map(|h| h.peak_bytes),
            heap_now: heap.map(|h| h.current_bytes),
            heap_allocations: heap.map(|h| h.allocations),
            gpu,
            gpu_reserved,
        }
    }

    /// Starts the function's own figures: called once its memos are
    /// resolved and its setup hooks ran, just before its first call. The
    /// peaks so far are set aside for the whole case's, and the counters
    /// start over from what is resident now, so that what the call adds
    /// stands apart from the memos it was given.
    pub(crate) fn enter_call(&mut self) {
        let now = self.read(false);
        self.held_gpu = (
            self.held_gpu.0.max(now.gpu),
            self.held_gpu.1.max(now.gpu_reserved),
        );
        if self.rss_method == Some(RssMethod::Hwm) {
            rss::reset_peak();
        }
        sampler::restart(self.watch);
        if now.heap_peak.is_some() {
            alloc::forget_peak();
        }
        #[cfg(feature = "tch")]
        if matches!(self.gpu, Some((GpuMethod::TorchAllocator, _))) {
            torch_allocator::reset_peaks();
        }
        self.call = Some(CallWindow {
            rss_before: now.rss_now,
            heap_before: now.heap_now,
            gpu_start: gpu_now(self.gpu),
            ..CallWindow::default()
        });
        // From here the checkpoints of a sampled call set aside the call's
        // own peaks; those before it wait in `pre_call`.
        self.pre_call = Some((
            self.held.rss.take().max(now.rss_peak),
            self.held.heap.take().max(now.heap_peak),
        ));
    }

    /// Ends the function's own figures when its last call returned: needed
    /// only before a teardown hook, whose memory is not the call's; without
    /// one, [`finish`](Self::finish) ends them, since what follows the call
    /// (releasing and evicting memos) only frees memory.
    pub(crate) fn leave_call(&mut self) {
        let now = self.read(false);
        self.close_call(&now);
    }

    /// Records the call's peaks from `now`, and sets them aside for the
    /// whole case's.
    fn close_call(&mut self, now: &Reading) {
        let (Some(mut window), Some((rss_before_call, heap_before_call))) =
            (self.call, self.pre_call.take())
        else {
            return;
        };
        window.rss_peak = now.rss_peak.max(self.held.rss);
        window.heap_peak = now.heap_peak.max(self.held.heap);
        window.gpu_peak = now
            .gpu
            .zip(window.gpu_start)
            .map(|(peak, start)| peak.saturating_sub(start));
        self.call = Some(window);
        self.held.rss = window.rss_peak.max(rss_before_call);
        self.held.heap = window.heap_peak.max(heap_before_call);
        self.held_gpu = (
            self.held_gpu.0.max(now.gpu),
            self.held_gpu.1.max(now.gpu_reserved),
        );
    }

    /// The call's figures are the whole case's: a case with neither memos
    /// nor a setup hook starts its call as it starts, and a window of its
    /// own would cost a case two reads of the kernel's counters for nothing.
    pub(crate) fn call_spans_case(&mut self) {
        self.call_is_case = true;
    }

    /// Notes the peaks so far. Called after the first call of a sampled
    /// case and after each sampled call, so that the last note holds the
    /// peak of every call before criterion analyses the samples.
    pub(crate) fn checkpoint(&mut self) {
        let rss = match self.rss_method {
            Some(RssMethod::Hwm) => rss::peak_bytes(),
            Some(RssMethod::Sampled) => sampler::peaks_now(self.watch).rss,
            None => None,
        };
        self.held.rss = self.held.rss.max(rss);
        if let Some(heap) = alloc::stats() {
            self.held.heap = self.held.heap.max(Some(heap.peak_bytes));
            self.held.allocations_at_checkpoint = heap.allocations;
        }
    }

    /// Forgets what foreign code (criterion's set-up and analysis) used
    /// since the last [`checkpoint`](Self::checkpoint): peaks start over
    /// from now, and its allocations are not counted.
    pub(crate) fn forget_since_checkpoint(&mut self) {
        match self.rss_method {
            Some(RssMethod::Hwm) => {
                rss::reset_peak();
            }
            Some(RssMethod::Sampled) => sampler::forget_rss_peak(self.watch),
            None => {}
        }
        if let Some(heap) = alloc::stats() {
            self.held.foreign_allocations += heap
                .allocations
                .saturating_sub(self.held.allocations_at_checkpoint);
            alloc::forget_peak();
        }
    }

    pub(crate) fn finish(
        mut self,
        memo_resident_bytes: u64,
        memo_gpu_resident_bytes: u64,
    ) -> MemoryRecord {
        let now = self.read(true);
        self.close_call(&now);
        let rss_peak_bytes = now.rss_peak.max(self.held.rss);
        let heap_peak_bytes = now.heap_peak.map(|p| p.max(self.held.heap.unwrap_or(0)));
        let (held_gpu, held_reserved) = self.held_gpu;
        let (gpu_peak_bytes, gpu_reserved_peak_bytes) = match self.gpu {
            Some((GpuMethod::Process, _)) => (now.gpu.max(held_gpu), None),
            Some((GpuMethod::DeviceDelta, start)) => (
                now.gpu
                    .max(held_gpu)
                    .zip(start)
                    .map(|(peak, start)| peak.saturating_sub(start)),
                None,
            ),
            Some((GpuMethod::TorchAllocator, _)) => {
                (now.gpu.max(held_gpu), now.gpu_reserved.max(held_reserved))
            }
            None => (None, None),
        };
        let call = match (self.call, self.call_is_case) {
            (Some(window), _) => window,
            (None, true) => CallWindow {
                rss_before: self.rss_before,
                heap_before: self.heap_before,
                gpu_start: None,
                rss_peak: rss_peak_bytes,
                heap_peak: heap_peak_bytes,
                gpu_peak: match self.gpu {
                    Some((GpuMethod::DeviceDelta, _)) => gpu_peak_bytes,
                    Some((_, start)) => now
                        .gpu
                        .max(held_gpu)
                        .zip(start)
                        .map(|(peak, start)| peak.saturating_sub(start)),
                    None => None,
                },
            },
            (None, false) => CallWindow::default(),
        };
        MemoryRecord {
            rss_before_bytes: self.rss_before,
            rss_file_before_bytes: self.rss_file_before,
            rss_peak_bytes,
            rss_after_bytes: now.rss_now,
            rss_method: self.rss_method,
            heap_before_bytes: self.heap_before,
            heap_peak_bytes,
            heap_allocations: now
                .heap_allocations
                .map(|a| a.saturating_sub(self.held.foreign_allocations)),
            gpu_peak_bytes,
            gpu_method: self.gpu.map(|(method, _)| method),
            gpu_reserved_peak_bytes,
            memo_resident_bytes,
            memo_gpu_resident_bytes,
            call_rss_before_bytes: call.rss_before,
            call_rss_peak_bytes: call.rss_peak,
            call_heap_before_bytes: call.heap_before,
            call_heap_peak_bytes: call.heap_peak,
            call_gpu_peak_bytes: call.gpu_peak,
        }
    }
}

/// The case's figures at one moment.
#[derive(Clone, Copy, Debug, Default)]
struct Reading {
    rss_peak: Option<u64>,
    rss_now: Option<u64>,
    heap_peak: Option<u64>,
    heap_now: Option<u64>,
    heap_allocations: Option<u64>,
    /// GPU bytes as the method counts them (absolute), and the allocator's
    /// reserved peak.
    gpu: Option<u64>,
    gpu_reserved: Option<u64>,
}

/// How the case's GPU memory is measured: libtorch's allocator, its peaks
/// reset now, when the `tch` feature finds an accelerator; else NVML, with
/// the figure it starts from.
fn start_gpu() -> Option<(GpuMethod, Option<u64>)> {
    #[cfg(feature = "tch")]
    if !gpu::nvml_forced() && torch_allocator::reset_peaks() {
        return Some((GpuMethod::TorchAllocator, torch_allocator::allocated()));
    }
    gpu::method().map(|method| (method, gpu::used_bytes()))
}

/// GPU bytes now as `method` counts them: what a call's own peak grows
/// from.
fn gpu_now(method: Option<(GpuMethod, Option<u64>)>) -> Option<u64> {
    match method? {
        #[cfg(feature = "tch")]
        (GpuMethod::TorchAllocator, _) => torch_allocator::allocated(),
        #[cfg(not(feature = "tch"))]
        (GpuMethod::TorchAllocator, _) => None,
        (GpuMethod::Process | GpuMethod::DeviceDelta, _) => gpu::used_bytes(),
    }
}

/// The allocator's peaks of live and reserved bytes since [`start_gpu`].
fn torch_peaks() -> (Option<u64>, Option<u64>) {
    #[cfg(feature = "tch")]
    if let Some((allocated, reserved)) = torch_allocator::peaks() {
        return (Some(allocated), Some(reserved));
    }
    (None, None)
}
