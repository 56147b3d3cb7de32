//! What the harness measures around a case: resident memory (exact peak
//! where the kernel resets its high-water mark, sampled elsewhere), heap
//! (with [`TrackingAllocator`](crate::alloc::TrackingAllocator) installed) and
//! GPU memory (through NVML). Time is taken around the call itself.

pub(crate) mod adaptive;
pub mod gpu;
pub mod rss;
mod sampler;
mod timer;

pub use timer::Timer;
pub(crate) use timer::summarize;

use crate::alloc;
pub use crate::record::RssMethod;
use crate::record::{GpuMethod, MemoryRecord};
use sampler::Watch;

/// `NNBENCH_RSS=sampled` makes the runner sample even where the kernel
/// could keep the peak, to compare the two or to test the fallback.
fn sampling_forced() -> bool {
    std::env::var("NNBENCH_RSS").is_ok_and(|v| v == "sampled")
}

/// Measurement of one case, from before its memos resolve until after
/// its eviction.
pub(crate) struct CaseMeter {
    rss_before: Option<u64>,
    rss_method: Option<RssMethod>,
    heap_before: Option<u64>,
    gpu: Option<(GpuMethod, Option<u64>)>,
    watch: Watch,
    /// Peaks set aside before foreign code ran: see [`checkpoint`](Self::checkpoint).
    held: Held,
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
    pub(crate) fn start() -> Self {
        let hwm = !sampling_forced() && rss::reset_peak();
        let rss_before = rss::current_bytes();
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
            rss_method,
            heap_before,
            gpu,
            watch,
            held: Held::default(),
        }
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
        self,
        memo_resident_bytes: u64,
        memo_gpu_resident_bytes: u64,
    ) -> MemoryRecord {
        let peaks = sampler::end(self.watch);
        let heap = alloc::stats();
        let (hwm, rss_after_bytes) = match self.rss_method {
            Some(RssMethod::Hwm) => rss::peak_and_current_bytes(),
            _ => (None, rss::current_bytes()),
        };
        let rss_peak_bytes = match self.rss_method {
            Some(RssMethod::Hwm) => hwm,
            Some(RssMethod::Sampled) => peaks.rss,
            None => None,
        }
        .max(self.held.rss);
        let (gpu_peak_bytes, gpu_reserved_peak_bytes) = match self.gpu {
            Some((GpuMethod::Process, _)) => (peaks.gpu, None),
            Some((GpuMethod::DeviceDelta, start)) => (
                peaks
                    .gpu
                    .zip(start)
                    .map(|(peak, start)| peak.saturating_sub(start)),
                None,
            ),
            Some((GpuMethod::TorchAllocator, _)) => torch_peaks(),
            None => (None, None),
        };
        MemoryRecord {
            rss_before_bytes: self.rss_before,
            rss_peak_bytes,
            rss_after_bytes,
            rss_method: self.rss_method,
            heap_before_bytes: self.heap_before,
            heap_peak_bytes: heap.map(|h| h.peak_bytes.max(self.held.heap.unwrap_or(0))),
            heap_allocations: heap
                .map(|h| h.allocations.saturating_sub(self.held.foreign_allocations)),
            gpu_peak_bytes,
            gpu_method: self.gpu.map(|(method, _)| method),
            gpu_reserved_peak_bytes,
            memo_resident_bytes,
            memo_gpu_resident_bytes,
        }
    }
}

/// How the case's GPU memory is measured: libtorch's allocator, its peaks
/// reset now, when the `tch` feature finds an accelerator; else NVML, with
/// the figure it starts from.
fn start_gpu() -> Option<(GpuMethod, Option<u64>)> {
    #[cfg(feature = "tch")]
    if crate::torch::reset_peaks() {
        return Some((GpuMethod::TorchAllocator, None));
    }
    gpu::method().map(|method| (method, gpu::used_bytes()))
}

/// The allocator's peaks of live and reserved bytes since [`start_gpu`].
fn torch_peaks() -> (Option<u64>, Option<u64>) {
    #[cfg(feature = "tch")]
    if let Some((allocated, reserved)) = crate::torch::peaks() {
        return (Some(allocated), Some(reserved));
    }
    (None, None)
}
