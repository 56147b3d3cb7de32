//! What the harness measures around a case: resident memory (exact peak
//! where the kernel resets its high-water mark, sampled elsewhere), heap
//! (with [`TrackingAllocator`](crate::alloc::TrackingAllocator) installed) and
//! GPU memory (through NVML). Time is taken around the call itself.

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
        let gpu = gpu::method().map(|method| (method, gpu::used_bytes()));
        let watch = Watch {
            rss: rss_method == Some(RssMethod::Sampled),
            gpu: gpu.is_some(),
        };
        sampler::begin(watch);
        Self {
            rss_before,
            rss_method,
            heap_before,
            gpu,
            watch,
        }
    }

    pub(crate) fn finish(self, memo_resident_bytes: u64) -> MemoryRecord {
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
        };
        let gpu_peak_bytes = match self.gpu {
            Some((GpuMethod::Process, _)) => peaks.gpu,
            Some((GpuMethod::DeviceDelta, start)) => peaks
                .gpu
                .zip(start)
                .map(|(peak, start)| peak.saturating_sub(start)),
            None => None,
        };
        MemoryRecord {
            rss_before_bytes: self.rss_before,
            rss_peak_bytes,
            rss_after_bytes,
            rss_method: self.rss_method,
            heap_before_bytes: self.heap_before,
            heap_peak_bytes: heap.map(|h| h.peak_bytes),
            heap_allocations: heap.map(|h| h.allocations),
            gpu_peak_bytes,
            gpu_method: self.gpu.map(|(method, _)| method),
            memo_resident_bytes,
        }
    }
}
