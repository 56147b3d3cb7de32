//! What one case measured, as its record holds it.

use nnbench_vocab::{Direction, Figure};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::memo::MemoRecord;
use super::{GpuMethod, RssMethod};

/// What one case measured.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::record::CaseRecord) {
/// match &case.error {
///     None => println!("{} = {} in {} ns", case.id, case.value, case.time.median_ns),
///     Some(e) => println!("{} failed at {:?}: {}", case.id, e.stage, e.message),
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CaseRecord {
    /// `family/name=value,...`, unique in the run and stable across runs.
    pub id: String,
    /// The family the case belongs to.
    pub family: String,
    /// Each parameter's description: a memo by its `Debug` form.
    #[serde(default, skip_serializing_if = "super::ParamMap::is_empty")]
    pub params: super::ParamMap,
    /// The family's tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// What the function returned; `null` for `()` or a failed case. In a
    /// sampled case, a struct's fields that are a time or a rate by their
    /// names (`nnbench_core::compare::measured_field`) are the median of
    /// the sampled calls' figures; the rest are the first call's.
    pub value: Json,
    /// Which way the value is better, as the family's `metric` option says;
    /// `null` when it does not say (the value is then not judged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// Which way each field of a struct value is better, as the family's
    /// `metric = "accuracy:higher, latency_ms:lower"` says (nested fields
    /// by dots); empty for a number. Every numeric field is recorded in
    /// `value`; the fields not named here are shown, never judged.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub directions: std::collections::BTreeMap<String, Direction>,
    /// The family's `fail_on` option: regression limits that comparisons
    /// apply over their own for the figures it names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_on: Option<String>,
    /// Why the case failed, or `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Box<CaseError>>,
    /// How long the function took.
    pub time: TimeRecord,
    /// Time spent resolving the case's memos, apart from `time`.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub load_ns: u64,
    /// Resident memory around the case.
    pub memory: MemoryRecord,
    /// What the case did with the memo cache; left out where it did
    /// nothing with it.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub memo: MemoRecord,
    /// What went wrong without failing the case (a damaged disk entry
    /// recomputed, a memo budget exceeded, a memo evicted while held).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// The shard that ran the case (`--shard K/N`, K), in a shard's record
    /// and in one merged from shards; `None` in a whole sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<usize>,
    /// The case measured against the base build of a paired run
    /// (`--paired BASE`); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<Box<super::PairedRecord>>,
    /// What one call handles and at what rate, for a family with
    /// `throughput = elements(EXPR)` or `bytes(EXPR)`; `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput: Option<Box<super::ThroughputRecord>>,
    /// The work one call does and the rates it was done at, for a family
    /// with `flops = EXPR` or `bytes = EXPR`; `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work: Option<Box<super::WorkRecord>>,
    /// The load a family with `concurrency = [...]` ran the case under:
    /// requests in flight, requests finished and their rate; `None`
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<Box<super::ConcurrencyRecord>>,
    /// The open loop a family with `rate = [...]` ran the case under:
    /// the rates offered and achieved, and what was late, dropped or
    /// timed out; `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<Box<super::LoadRecord>>,
    /// The tokens of a family with `stream`, timed one by one: time to
    /// first token, time per output token, the gaps between tokens and
    /// whole requests, as percentiles; `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<Box<super::StreamRecord>>,
    /// The search of a family with `latency_target`: the rates tried and
    /// the highest that met it; `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<Box<super::SearchRecord>>,
    /// The threads a family with `threads = [...]` made each call on, and
    /// how far apart their times were; `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<Box<super::ThreadsRecord>>,
    /// The flamegraph of the case's calls (`--profile`): an SVG under
    /// `target/nnbench/<bench>/profiles/`; `None` without `--profile`, or
    /// when the profiler could not take one (a warning says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<std::path::PathBuf>,
    /// The energy the case's calls used on the GPUs, or why there is no
    /// figure; `None` where the run has no GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<Box<super::EnergyRecord>>,
    /// The family's `scaling` parameter, whose values its figures are
    /// fitted against (the run's `scaling`); `None` without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scales_with: Option<String>,
}

impl CaseRecord {
    /// Whether the case resolved memos, so that its `load_ns` means something.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) {
    /// if case.uses_memos() {
    ///     println!("loading took {} ns", case.load_ns);
    /// }
    /// # }
    /// ```
    pub fn uses_memos(&self) -> bool {
        self.memo.hits + self.memo.misses > 0
    }

    /// How much the case grew resident memory at its peak: peak minus
    /// before, when both were measured.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) {
    /// if let Some(bytes) = case.rss_growth_bytes() {
    ///     println!("{} needed {bytes} more bytes", case.id);
    /// }
    /// # }
    /// ```
    pub fn rss_growth_bytes(&self) -> Option<u64> {
        let m = &self.memory;
        Some(m.rss_peak_bytes?.saturating_sub(m.rss_before_bytes?))
    }

    /// How much the case grew the heap at its peak, when a
    /// [`TrackingAllocator`](crate::alloc::TrackingAllocator) counted it.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) {
    /// let heap = case.heap_growth_bytes().unwrap_or(0);
    /// # }
    /// ```
    pub fn heap_growth_bytes(&self) -> Option<u64> {
        let m = &self.memory;
        Some(
            m.heap_peak_bytes?
                .saturating_sub(m.heap_before_bytes.unwrap_or(0)),
        )
    }

    /// How much the function itself grew resident memory at its peak:
    /// its peak minus the memory when it was first called, so that the
    /// memos it was given and the setup hooks are left out.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) {
    /// if let Some(bytes) = case.call_rss_growth_bytes() {
    ///     println!("{} needed {bytes} bytes of working memory beside its model", case.id);
    /// }
    /// # }
    /// ```
    pub fn call_rss_growth_bytes(&self) -> Option<u64> {
        let m = &self.memory;
        Some(
            m.call_rss_peak_bytes?
                .saturating_sub(m.call_rss_before_bytes?),
        )
    }

    /// How much the function itself grew the heap at its peak, with the
    /// tracker installed.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) {
    /// let working = case.call_heap_growth_bytes().unwrap_or(0);
    /// # }
    /// ```
    pub fn call_heap_growth_bytes(&self) -> Option<u64> {
        let m = &self.memory;
        Some(
            m.call_heap_peak_bytes?
                .saturating_sub(m.call_heap_before_bytes?),
        )
    }

    /// This case's amount of `figure`, in its unit (ns, bytes, or the
    /// value's own), when it has one: time is the median per call, load
    /// only counts for a case that resolved memos, resident and heap memory
    /// are the function's own growth at its peak (memos and hooks left out;
    /// the whole case's growth in records made before those figures), GPU
    /// memory the case's peak, the value only when it is a number.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) {
    /// use nnbench::record::Figure;
    /// if let Some(bytes) = case.figure(Figure::Rss) {
    ///     println!("{} grew resident memory by {bytes} bytes", case.id);
    /// }
    /// # }
    /// ```
    pub fn figure(&self, figure: Figure) -> Option<f64> {
        match figure {
            // A call timed under Callgrind ran many times slower than
            // natively: its time is no figure to follow.
            Figure::Time => (self.time.samples > 0 && self.time.mode != TimingMode::Instructions)
                .then_some(self.time.median_ns),
            Figure::Load => self.uses_memos().then_some(self.load_ns as f64),
            Figure::Rss | Figure::Heap => self
                .call_growth(figure)
                .or_else(|| self.whole_growth(figure)),
            Figure::Gpu => self.memory.gpu_peak_bytes.map(|b| b as f64),
            Figure::Peak => self.memory.rss_peak_bytes.map(|b| b as f64),
            Figure::Memo => (!self.memo.sizes.is_empty()).then(|| {
                self.memo
                    .sizes
                    .iter()
                    .map(|s| (s.bytes + s.device_bytes) as f64)
                    .sum()
            }),
            Figure::Value => self.value.as_f64(),
            Figure::Instructions => self.time.instructions.map(|n| n as f64),
            Figure::Throughput => self.throughput.as_ref().map(|t| t.per_second),
            Figure::P99 => self.time.percentiles.as_ref().map(|p| p.p99_ns),
            Figure::Requests => self
                .concurrency
                .as_ref()
                .map(|c| c.requests_per_second)
                .or(self.load.as_ref().map(|l| l.achieved_rate)),
            Figure::RoofFraction => self.work.as_ref().and_then(|w| w.roof_fraction),
            Figure::Ttft => self.stream.as_ref().map(|s| s.ttft.p99_ns),
            Figure::Tpot => self.stream.as_ref().map(|s| s.tpot.p99_ns),
            Figure::Itl => self.stream.as_ref().map(|s| s.itl.p99_ns),
            Figure::E2e => self.stream.as_ref().map(|s| s.e2e.p99_ns),
            Figure::MaxRate | Figure::MaxGoodputRate => self
                .search
                .as_ref()
                .filter(|s| s.client_bound.is_none())
                .filter(|s| s.goodput.is_some() == (figure == Figure::MaxGoodputRate))
                .and_then(|s| s.max_rate),
            // A family's: the run's `scaling` and `capacity`. A figure this
            // version does not know is none of a case's.
            _ => None,
        }
    }

    /// The function's own growth of resident or heap memory.
    pub(crate) fn call_growth(&self, figure: Figure) -> Option<f64> {
        match figure {
            Figure::Rss => self.call_rss_growth_bytes().map(|b| b as f64),
            Figure::Heap => self.call_heap_growth_bytes().map(|b| b as f64),
            _ => None,
        }
    }

    /// The whole case's growth of resident or heap memory, memo loading and
    /// hooks included.
    pub(crate) fn whole_growth(&self, figure: Figure) -> Option<f64> {
        match figure {
            Figure::Rss => self.rss_growth_bytes().map(|b| b as f64),
            Figure::Heap => self.heap_growth_bytes().map(|b| b as f64),
            _ => None,
        }
    }
}

/// How a case was timed and what the timing gave, per call of the function.
///
/// # Example
///
/// ```
/// # fn f(time: &nnbench::record::TimeRecord) {
/// println!("{:?}: median {} ns over {} samples", time.mode, time.median_ns, time.samples);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TimeRecord {
    /// How the case was timed.
    pub mode: TimingMode,
    /// What sampled it: nnbench's own sampler, which stops once the median
    /// is precise, or criterion (`--sampled`). `None` for a case timed once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampler: Option<Sampler>,
    /// How many samples were taken (0 when the function never ran).
    pub samples: u64,
    /// How many calls all samples made together.
    pub iters: u64,
    /// Mean time of one call, in nanoseconds.
    pub mean_ns: f64,
    /// Median time of one call.
    pub median_ns: f64,
    /// Standard deviation of the time of one call.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub std_ns: f64,
    /// Fastest call.
    pub min_ns: f64,
    /// Slowest call.
    pub max_ns: f64,
    /// The time of one call in each sample, in the order they were taken
    /// (after warm-up): what comparisons test for significance. A case
    /// timed once has its one call here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub samples_ns: Vec<f64>,
    /// The 95% interval of the median per call, `[low, high]`,
    /// distribution-free (from the samples' order statistics); `None` under
    /// six samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ci_ns: Option<[f64; 2]>,
    /// The CPU time of one call of the thread that made it, in each sample,
    /// in the order of `samples_ns`: unlike wall time, it leaves out the
    /// time the machine gave to other processes, and the time the call
    /// waited (for a device, a lock, a file, another thread). Empty where
    /// the system does not tell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_samples_ns: Vec<f64>,
    /// The median of `cpu_samples_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_median_ns: Option<f64>,
    /// The CPU time of one call of the whole process, every thread's, in
    /// each sample: above `cpu_samples_ns` when the call used other threads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub process_cpu_samples_ns: Vec<f64>,
    /// The median of `process_cpu_samples_ns`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_cpu_median_ns: Option<f64>,
    /// The instructions one call retired in user space on the calling
    /// thread, counted by the processor (`instructions:u`), the median
    /// over the samples: where the processor has a counter that Linux lets
    /// the process use, `None` elsewhere (most virtual machines) and for a
    /// call counted under Callgrind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hw_instructions: Option<f64>,
    /// The instructions one call executed, counted by Callgrind
    /// (`--instructions`, `timing = instructions`): the same in every run
    /// of one build, whatever else the machine does. `None` when the case
    /// was timed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<u64>,
    /// What Callgrind's simulated caches made of that call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callgrind: Option<Box<CallgrindRecord>>,
    /// p50, p90, p99 and the maximum of the time per call, when every
    /// sample was one call timed alone (calls of a millisecond or more);
    /// `None` for calls too short to time one by one, and for a case timed
    /// once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentiles: Option<Box<super::Percentiles>>,
    /// How precisely nnbench's sampler pinned the median, on which clock,
    /// and why it stopped; `None` for a case it did not sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<super::Precision>,
    /// The calls ran work on a device, as far as nnbench sees (with the
    /// `tch` feature): they left kernels queued that the clock waited for,
    /// or grew the device allocator's live memory. Their time is the
    /// device's too, and a thread's CPU time while it waits for a device
    /// measures neither, so such a case is judged and fitted by wall time.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub used_device: bool,
    /// The time of one call in each interleaved round of its scaling
    /// family (`scaling = n`), by the wall clock: after the family's cases
    /// ran, each round timed every size once, in a shuffled order, so that
    /// a machine whose speed drifts slows every size of a round alike.
    /// Round `i` is the same round in each case of the family. Empty for a
    /// case of no such family, and for those the rounds leave out: timed
    /// once, counted, paired, on threads or under load, with hooks, or run
    /// under `--isolate`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds_ns: Vec<f64>,
    /// The same rounds by the calling thread's CPU clock.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_rounds_ns: Vec<f64>,
}

/// The memory accesses of one call counted under Callgrind, as its
/// simulated caches served them, and the cycles they would take.
///
/// The caches are fixed (32 KiB first-level instruction and data caches,
/// an 8 MiB last-level one) rather than read off the machine, so that a
/// count means the same on every machine.
///
/// # Example
///
/// ```
/// # fn f(time: &nnbench::record::TimeRecord) {
/// if let (Some(n), Some(c)) = (time.instructions, &time.callgrind) {
///     println!("{n} instructions, about {} cycles ({} RAM accesses)", c.estimated_cycles, c.ram_hits);
/// }
/// # }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CallgrindRecord {
    /// Instruction fetches and data accesses the first-level caches served.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub l1_hits: u64,
    /// Those the last-level cache served.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub ll_hits: u64,
    /// Those that went to memory.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub ram_hits: u64,
    /// `l1_hits + 5 * ll_hits + 35 * ram_hits`: the estimate of cycles
    /// that iai-callgrind and CodSpeed report.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub estimated_cycles: u64,
}

impl TimeRecord {
    /// Whether the calls ran on one thread (the thread's CPU time covers
    /// the process's) and computed: in some sample the thread's CPU time
    /// was most of the wall time. One sample is enough, since other
    /// processes can only stretch a sample's wall time, never its CPU
    /// time: a busy machine must not make a computing call look like a
    /// waiting one. Such calls are judged, and fitted, by CPU time.
    pub(crate) fn computes_on_one_thread(&self) -> bool {
        if self.used_device {
            return false;
        }
        let single = match (self.cpu_median_ns, self.process_cpu_median_ns) {
            (Some(thread), Some(process)) => process <= thread * 1.1,
            _ => false,
        };
        single
            && self
                .samples_ns
                .iter()
                .zip(&self.cpu_samples_ns)
                .any(|(wall, cpu)| *cpu >= 0.5 * wall)
    }

    /// The record of a single call that took `ns` nanoseconds.
    ///
    /// # Example
    ///
    /// ```
    /// let t = nnbench::record::TimeRecord::once(1500.0);
    /// assert_eq!((t.samples, t.median_ns, t.std_ns), (1, 1500.0, 0.0));
    /// ```
    pub fn once(ns: f64) -> Self {
        Self {
            mode: TimingMode::Once,
            samples: 1,
            iters: 1,
            mean_ns: ns,
            median_ns: ns,
            std_ns: 0.0,
            min_ns: ns,
            max_ns: ns,
            samples_ns: vec![ns],
            sampler: None,
            median_ci_ns: None,
            cpu_samples_ns: Vec::new(),
            cpu_median_ns: None,
            process_cpu_samples_ns: Vec::new(),
            process_cpu_median_ns: None,
            hw_instructions: None,
            instructions: None,
            callgrind: None,
            percentiles: None,
            precision: None,
            used_device: false,
            rounds_ns: Vec::new(),
            cpu_rounds_ns: Vec::new(),
        }
    }
}

/// How a case's function was called and timed.
///
/// # Example
///
/// ```
/// assert_eq!(serde_json::to_string(&nnbench::record::TimingMode::Once).unwrap(), "\"once\"");
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TimingMode {
    /// One call, its duration.
    #[default]
    Once,
    /// The function was sampled; the figures are per call.
    Sampled,
    /// One call counted under Callgrind: `instructions` is exact, and its
    /// times are those of the call under Callgrind, many times slower
    /// than native.
    Instructions,
}

/// What sampled a case.
///
/// # Example
///
/// ```
/// use nnbench::record::Sampler;
/// assert_eq!(serde_json::to_string(&Sampler::Adaptive).unwrap(), "\"adaptive\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Sampler {
    /// nnbench's sampler: samples until the median's 95% interval is within
    /// 1% of it, or the case's time is spent (the default).
    Adaptive,
    /// criterion, with its settings, analysis and reports (`--sampled`).
    Criterion,
    /// The rounds of a paired run: per round, a calibrated number of calls
    /// warmed up once, then sampled three times (nine for a case judged by
    /// wall time).
    Paired,
    /// The load of a family with `concurrency = [...]`: requests kept in
    /// flight for the timed period, each one's latency recorded. The
    /// samples are the mean latency of the requests that finished in each
    /// tenth of the period.
    Load,
}

/// Memory of the process around one case.
///
/// # Example
///
/// ```
/// # fn f(m: &nnbench::record::MemoryRecord) {
/// if let (Some(before), Some(peak)) = (m.rss_before_bytes, m.rss_peak_bytes) {
///     println!("the case needed {} more bytes at its peak", peak.saturating_sub(before));
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MemoryRecord {
    /// Resident memory when the case started, before its memos were resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_before_bytes: Option<u64>,
    /// What of [`rss_before_bytes`](Self::rss_before_bytes) was
    /// file-backed (mapped code and files, `RssFile`), which the kernel
    /// reclaims under memory pressure: read for the cases of a `scaling`
    /// family, whose capacity is predicted from the peak less it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_file_before_bytes: Option<u64>,
    /// Peak resident memory during the case (memo loading, hooks and call
    /// included): memory that libtorch, BLAS or `mmap` allocate counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_peak_bytes: Option<u64>,
    /// Resident memory after teardown and eviction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_after_bytes: Option<u64>,
    /// How `rss_peak_bytes` was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rss_method: Option<RssMethod>,
    /// Heap bytes live when the case started, when a
    /// [`TrackingAllocator`](crate::alloc::TrackingAllocator) is installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_before_bytes: Option<u64>,
    /// Peak heap bytes during the case, when the tracker is installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_peak_bytes: Option<u64>,
    /// Allocations made during the case, when the tracker is installed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap_allocations: Option<u64>,
    /// Peak GPU memory during the case, when a GPU is there to ask; see
    /// `gpu_method` for what it counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_peak_bytes: Option<u64>,
    /// How `gpu_peak_bytes` was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_method: Option<GpuMethod>,
    /// Peak bytes the device allocator kept reserved during the case (live
    /// tensors and cached free blocks), with `gpu_method: "torch-allocator"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_reserved_peak_bytes: Option<u64>,
    /// Bytes the memo cache held when the case started.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub memo_resident_bytes: u64,
    /// Bytes of GPU memory the memo cache held when the case started (what
    /// its memos' [`Memo::device_bytes`](crate::Memo::device_bytes) report).
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub memo_gpu_resident_bytes: u64,
    /// Resident memory when the function was first called: memos resolved
    /// and setup hooks run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_rss_before_bytes: Option<u64>,
    /// Peak resident memory while the function ran, memo loading and hooks
    /// left out (every call of a sampled case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_rss_peak_bytes: Option<u64>,
    /// Heap bytes live when the function was first called, with the tracker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_heap_before_bytes: Option<u64>,
    /// Peak heap bytes while the function ran, with the tracker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_heap_peak_bytes: Option<u64>,
    /// Peak GPU memory while the function ran, as `gpu_method` counts it,
    /// above what it counted when the call began: the memos already on the
    /// device are left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_gpu_peak_bytes: Option<u64>,
}

/// Why a case failed.
///
/// # Example
///
/// ```
/// # fn f(e: &nnbench::record::CaseError) {
/// eprintln!("{:?}: {}", e.stage, e.message);
/// for cause in &e.causes {
///     eprintln!("  caused by: {cause}");
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CaseError {
    /// The step that failed.
    pub stage: Stage,
    /// The error's message.
    pub message: String,
    /// Its chain of causes, outermost first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<String>,
    /// Failures of later steps of the same case (a teardown that failed too).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<CaseError>,
}

impl CaseError {
    /// A failure at `stage` with `message` and no causes.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::record::{CaseError, Stage};
    /// let mut e = CaseError::new(Stage::Call, "outer");
    /// e.causes.push("inner".into());
    /// assert_eq!(e.summary(), "outer: inner");
    /// ```
    pub fn new(stage: Stage, message: impl Into<String>) -> Self {
        Self {
            stage,
            message: message.into(),
            causes: Vec::new(),
            also: Vec::new(),
        }
    }

    pub(crate) fn of(stage: Stage, error: &crate::Error) -> Self {
        let mut messages = error.messages().into_iter();
        Self {
            stage,
            message: messages.next().unwrap_or_default(),
            causes: messages.collect(),
            also: Vec::new(),
        }
    }

    /// One line: the message and its causes joined by `: `.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::record::{CaseError, Stage};
    /// let mut e = CaseError::new(Stage::Call, "outer");
    /// e.causes.push("inner".into());
    /// assert_eq!(e.summary(), "outer: inner");
    /// ```
    pub fn summary(&self) -> String {
        std::iter::once(self.message.as_str())
            .chain(self.causes.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(": ")
    }
}

/// The steps of a case's lifecycle, as named in [`CaseError::stage`].
///
/// # Example
///
/// ```
/// assert_eq!(serde_json::to_string(&nnbench::record::Stage::Memo).unwrap(), "\"memo\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Stage {
    /// Building the family's parameter grid.
    Grid,
    /// Resolving a memo.
    Memo,
    /// The setup hook.
    Setup,
    /// The function itself.
    Call,
    /// The teardown hook.
    Teardown,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three calls of 10 ms whose thread was busy for 9.5 ms of each.
    fn computing() -> TimeRecord {
        TimeRecord {
            samples_ns: vec![10e6; 3],
            cpu_samples_ns: vec![9.5e6; 3],
            cpu_median_ns: Some(9.5e6),
            process_cpu_median_ns: Some(9.6e6),
            ..TimeRecord::once(10e6)
        }
    }

    #[test]
    fn a_call_busy_on_one_thread_computes() {
        assert!(computing().computes_on_one_thread());
    }

    #[test]
    fn a_call_that_used_a_device_is_not_judged_by_cpu_time() {
        // A thread spinning while it waits for a kernel is as busy as one
        // that computes: only the record's word tells them apart.
        let waited = TimeRecord {
            used_device: true,
            ..computing()
        };
        assert!(!waited.computes_on_one_thread());
    }

    #[test]
    fn used_device_is_written_only_when_true() {
        let plain = serde_json::to_value(computing()).unwrap();
        assert!(plain.get("used_device").is_none());
        let waited = TimeRecord {
            used_device: true,
            ..computing()
        };
        assert_eq!(serde_json::to_value(waited).unwrap()["used_device"], true);
    }
}
