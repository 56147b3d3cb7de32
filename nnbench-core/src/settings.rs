//! What a run is asked to do, as plain values: which cases, how they are
//! timed, what happens to memos and where output goes. The command line
//! (`cli`) and the [`Runner`](crate::Runner)'s builder methods fill these
//! in; the runner consumes them.

use std::path::PathBuf;
use std::time::Duration;

use crate::compare::Thresholds;
use crate::memo::DiskTier;

/// How a family's cases are timed.
///
/// # Example
///
/// ```
/// let runner = nnbench::Runner::new().timing(nnbench::Timing::Once);
/// # let _ = runner;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timing {
    /// One call, its duration: for heavy cases (a model's evaluation).
    Once,
    /// The function is sampled until its median is known within 1% (or
    /// the measurement time is spent): for small kernels. As the run's
    /// timing ([`Runner::timing`](crate::Runner::timing), `--sampled`),
    /// criterion samples every case instead, with its settings, analysis
    /// and reports.
    Sampled,
    /// The first call yields the metric and its time; if it took at least
    /// the threshold (100 ms by default), the case stays `Once`, otherwise
    /// it is sampled.
    #[default]
    Auto,
}

/// Sampling settings; `None` leaves the default: at least 10 samples after
/// 25 ms of warm-up, for at most 1 s, or under criterion (`--sampled`) its
/// 100 samples after 3 s of warm-up, over 5 s.
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// let sampling = nnbench::Sampling {
///     sample_size: Some(20),
///     warm_up: Some(Duration::from_millis(500)),
///     measurement_time: None,
/// };
/// let runner = nnbench::Runner::new().sampling(sampling);
/// # let _ = runner;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sampling {
    /// The least number of samples; criterion's number of samples (at
    /// least 10, as it requires).
    pub sample_size: Option<usize>,
    /// Time to run the function before sampling.
    pub warm_up: Option<Duration>,
    /// The most time spent sampling; criterion's time spent sampling.
    pub measurement_time: Option<Duration>,
}

impl Sampling {
    /// These settings, with `over`'s where it has them.
    pub(crate) fn overridden_by(self, over: Sampling) -> Sampling {
        Sampling {
            sample_size: over.sample_size.or(self.sample_size),
            warm_up: over.warm_up.or(self.warm_up),
            measurement_time: over.measurement_time.or(self.measurement_time),
        }
    }
}

/// The first-call duration from which `Auto` keeps a case `Once`.
pub const DEFAULT_AUTO_THRESHOLD: Duration = Duration::from_millis(100);

/// Which cases a run selects: filters, skips and tags, as libtest has them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Selection {
    /// A case runs if its id contains any of these (all run when empty).
    pub filters: Vec<String>,
    /// A case is left out if its id contains any of these.
    pub skip: Vec<String>,
    /// A case runs only if its family has any of these tags (when not empty).
    pub tags: Vec<String>,
    /// Filters and skips match whole ids instead of parts.
    pub exact: bool,
    /// Select no case (libtest's `--ignored`: nnbench ignores none).
    pub nothing: bool,
}

impl Selection {
    /// Whether the case `id`, of a family tagged `tags`, is selected.
    pub(crate) fn selects(&self, id: &str, tags: &[String]) -> bool {
        let matches = |pattern: &String| {
            if self.exact {
                id == pattern
            } else {
                id.contains(pattern.as_str())
            }
        };
        !self.nothing
            && (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skip.iter().any(matches)
            && (self.tags.is_empty() || self.tags.iter().any(|t| tags.contains(t)))
    }
}

/// Baselines to save the run as, or to compare it against: the run record
/// under `target/nnbench/<bench>/baselines/`, and criterion's estimates.
#[derive(Clone, Debug, Default)]
pub(crate) struct Baselines {
    pub save: Option<String>,
    pub compare: Option<String>,
}

/// The run's timing settings.
#[derive(Clone, Debug)]
pub(crate) struct RunTiming {
    /// Forces every family's timing.
    pub timing: Option<Timing>,
    pub sampling: Sampling,
    pub auto_threshold: Duration,
    /// Each case once, quickly: `cargo test --benches`.
    pub test_mode: bool,
    pub baselines: Baselines,
}

impl Default for RunTiming {
    fn default() -> Self {
        Self {
            timing: None,
            sampling: Sampling::default(),
            auto_threshold: DEFAULT_AUTO_THRESHOLD,
            test_mode: false,
            baselines: Baselines::default(),
        }
    }
}

/// Everything a [`Runner`](crate::Runner) is configured with.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunSettings {
    pub selection: Selection,
    pub keep_memos: bool,
    /// Bytes resident memos may hold together.
    pub memo_budget: Option<u64>,
    /// Bytes of GPU memory resident memos may hold together.
    pub memo_gpu_budget: Option<u64>,
    /// Load the next case's memos in the background while a case runs.
    pub prefetch: bool,
    /// Run only the cases the last run (interrupted or killed) did not
    /// finish, from its progress file.
    pub resume: bool,
    /// Stop after the running case when `SIGINT` or `SIGTERM` arrives
    /// (bench binaries, which catch them).
    pub interruptible: bool,
    /// Run the cases in worker processes started from this executable, a
    /// new one after each that dies.
    pub isolate: bool,
    /// The longest a case may run: killed in isolation, otherwise recorded
    /// as timed out with the run stopped.
    pub case_timeout: Option<Duration>,
    /// The address space each worker may use.
    pub worker_memory_limit: Option<u64>,
    /// This is a bench binary's run (`nnbench::main!()`): its executable
    /// can be started again as a worker, and may end on a timed-out case.
    pub bench_binary: bool,
    /// Where persisted memos live during the run.
    pub disk_tier: DiskTier,
    /// Empty the disk tier before the run.
    pub clear_disk_tier: bool,
    pub print_cache: bool,
    /// Take no memory figures (they cost about 4 µs a case).
    pub skip_memory: bool,
    pub timing: RunTiming,
    /// Thresholds of the comparison with `--baseline`.
    pub fail_on: Option<Thresholds>,
    /// Add the run to the history at its end: this file, or the default
    /// one when empty.
    pub history: Option<PathBuf>,
    pub quiet: bool,
    pub out: Option<PathBuf>,
    pub name: Option<String>,
    pub latest_dir: Option<PathBuf>,
    pub repo_dir: Option<PathBuf>,
    /// Run only this shard of the selected cases.
    pub shard: Option<crate::shard::Shard>,
    /// The measured costs that balance the shards.
    pub shard_costs: Option<crate::shard::ShardCosts>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(tags: &[&str]) -> Vec<String> {
        tags.iter().map(|t| (*t).to_owned()).collect()
    }

    #[test]
    fn an_empty_selection_selects_everything() {
        assert!(Selection::default().selects("any/x=1", &[]));
    }

    #[test]
    fn filters_skips_and_tags_combine() {
        let selection = Selection {
            filters: vec!["acc".into(), "lat".into()],
            skip: vec!["batch=64".into()],
            tags: vec!["cpu".into()],
            exact: false,
            nothing: false,
        };
        assert!(selection.selects("accuracy/batch=32", &tags(&["cpu"])));
        assert!(selection.selects("latency/batch=32", &tags(&["gpu", "cpu"])));
        assert!(
            !selection.selects("accuracy/batch=64", &tags(&["cpu"])),
            "skipped"
        );
        assert!(
            !selection.selects("accuracy/batch=32", &tags(&["gpu"])),
            "untagged"
        );
        assert!(
            !selection.selects("throughput/batch=32", &tags(&["cpu"])),
            "unfiltered"
        );
    }

    #[test]
    fn exact_compares_whole_ids_for_filters_and_skips() {
        let selection = Selection {
            filters: vec!["startup".into()],
            exact: true,
            ..Selection::default()
        };
        assert!(selection.selects("startup", &[]));
        assert!(!selection.selects("startup_cold", &[]));
        let skip = Selection {
            skip: vec!["startup".into()],
            exact: true,
            ..Selection::default()
        };
        assert!(skip.selects("startup_cold", &[]));
        assert!(!skip.selects("startup", &[]));
    }
}
