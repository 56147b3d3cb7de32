//! Runs the registered cases: select, order, run each through its
//! lifecycle, evict memos past their last use, record, report.

mod bench_main;
mod case;
mod cases;
mod engine;
mod gate;
mod history;
mod interrupt;
#[cfg(unix)]
mod isolate;
mod ledger;
mod prefetch;
mod progress;
mod schedule;
mod watchdog;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

pub use bench_main::bench_main;

use crate::cli::Cli;
use crate::memo::{self, DiskTier, journal};
use crate::record::{OutputFormat, RunMemoRecord, RunRecord};
use crate::registry::{self, Case};
use crate::report::Console;
use crate::settings::{RunSettings, Sampling, Timing};
use crate::shard::{self, Shard, ShardCosts};
use crate::{Error, Result, context};

use cases::Sink;
use ledger::{Closing, Ledger, Stop};
use progress::Progress;
use schedule::Schedule;
use watchdog::Watchdog;

/// Runs the cases registered by `#[benchmark]`, `#[parametrize]` and
/// `#[product]` in this binary, and returns the run record.
///
/// The bench binary made by `nnbench::main!()` is a `Runner` configured from
/// the command line; tests and examples build one directly. Each builder
/// method names the flag it equals.
///
/// # Example
///
/// ```
/// #[nnbench::benchmark]
/// fn two_plus_two() -> u32 {
///     2 + 2
/// }
///
/// let record = nnbench::Runner::new().filter("two_plus_two").test_mode(true).quiet(true).run().unwrap();
/// assert_eq!(record.cases.len(), 1);
/// assert_eq!(record.cases[0].value, 4);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Runner {
    settings: RunSettings,
}

impl Runner {
    /// A runner of every registered case, with each family's own timing,
    /// progress lines and the final table, and no record file: a bench
    /// binary run without flags, except that it samples (`--bench`).
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark]
    /// fn registered() {}
    ///
    /// assert!(nnbench::Runner::new().list().contains(&"registered".to_owned()));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// A runner configured by the same flags a bench binary takes
    /// (`args` without the program name). As in a bench binary, without
    /// `--bench` it is in test mode: each case runs once.
    ///
    /// # Errors
    ///
    /// The flag parser's message when `args` are not valid.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark(tags = ["cpu"])]
    /// fn tagged() {}
    ///
    /// let runner = nnbench::Runner::from_args(["tagged", "--tag", "cpu", "--quiet"]).unwrap();
    /// assert_eq!(runner.list(), ["tagged"]);
    /// assert!(nnbench::Runner::from_args(["--no-such-flag"]).is_err());
    /// ```
    pub fn from_args<I, T>(args: I) -> Result<Self>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let program = std::iter::once(std::ffi::OsString::from("nnbench"));
        let cli = Cli::try_parse_args(program.chain(args.into_iter().map(Into::into)))?;
        let mut settings = cli.settings();
        if let Some(path) = &cli.shard_costs {
            settings.shard_costs = Some(ShardCosts::read(path, None).map_err(Error::msg)?);
        }
        Ok(Self::with_settings(settings))
    }

    pub(crate) fn with_settings(settings: RunSettings) -> Self {
        Self { settings }
    }

    /// Runs only cases whose id contains `pattern` (any of several
    /// filters): the positional `FILTER` arguments.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::parametrize([(n = 1), (n = 2)])]
    /// fn filtered(n: u32) -> u32 { n }
    ///
    /// let ids = nnbench::Runner::new().filter("filtered/n=2").list();
    /// assert_eq!(ids, ["filtered/n=2"]);
    /// ```
    pub fn filter(mut self, pattern: impl Into<String>) -> Self {
        self.settings.selection.filters.push(pattern.into());
        self
    }

    /// Leaves out cases whose id contains `pattern`: `--skip PATTERN`.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::parametrize([(batch = 32), (batch = 1024)])]
    /// fn skipped(batch: usize) -> usize { batch }
    ///
    /// let ids = nnbench::Runner::new().filter("skipped/").skip("batch=1024").list();
    /// assert_eq!(ids, ["skipped/batch=32"]);
    /// ```
    pub fn skip(mut self, pattern: impl Into<String>) -> Self {
        self.settings.selection.skip.push(pattern.into());
        self
    }

    /// Runs only cases tagged `tag` (any of several tags): `--tag TAG`.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark(tags = ["gpu-only"])]
    /// fn on_gpu() {}
    ///
    /// assert_eq!(nnbench::Runner::new().tag("gpu-only").list(), ["on_gpu"]);
    /// ```
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.settings.selection.tags.push(tag.into());
        self
    }

    /// Makes filters and skips match whole ids: `--exact`.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark]
    /// fn startup() {}
    /// #[nnbench::benchmark]
    /// fn startup_cold() {}
    ///
    /// assert_eq!(nnbench::Runner::new().filter("startup").exact(true).list(), ["startup"]);
    /// ```
    pub fn exact(mut self, exact: bool) -> Self {
        self.settings.selection.exact = exact;
        self
    }

    /// Keeps memos in the cache after their last use (by default each memo is
    /// evicted as soon as no remaining case needs it): `--keep-memos`.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::Memo;
    ///
    /// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    /// struct Table;
    /// impl Memo for Table {
    ///     type Value = Vec<u8>;
    ///     fn compute(&self) -> nnbench::Result<Vec<u8>> { Ok(vec![1; 8]) }
    /// }
    ///
    /// #[nnbench::product(t = [Table])]
    /// fn kept(t: &[u8]) -> usize { t.len() }
    ///
    /// nnbench::Runner::new().filter("kept/").test_mode(true).quiet(true).keep_memos(true).run().unwrap();
    /// assert!(nnbench::memo::contains(&Table));
    /// ```
    pub fn keep_memos(mut self, keep: bool) -> Self {
        self.settings.keep_memos = keep;
        self
    }

    /// Keeps the bytes of resident memos within `bytes`: before a memo
    /// loads, least recently used memos that the running case does not use
    /// are evicted (spilled to the disk tier if they persist). A case whose
    /// own memos exceed the budget still runs, with a warning in its record.
    /// `--memo-budget SIZE`.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().memo_budget(8 << 30);
    /// assert_eq!(format!("{runner:?}").matches("memo_budget: Some(8589934592)").count(), 1);
    /// ```
    pub fn memo_budget(mut self, bytes: u64) -> Self {
        self.settings.memo_budget = Some(bytes);
        self
    }

    /// Keeps the GPU memory of resident memos (what their
    /// [`Memo::device_bytes`](crate::Memo::device_bytes) reports) within
    /// `bytes`, as [`memo_budget`](Self::memo_budget) does for host memory:
    /// `--memo-gpu-budget SIZE`.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().memo_gpu_budget(40 << 30);
    /// assert!(format!("{runner:?}").contains("memo_gpu_budget: Some(42949672960)"));
    /// ```
    pub fn memo_gpu_budget(mut self, bytes: u64) -> Self {
        self.settings.memo_gpu_budget = Some(bytes);
        self
    }

    /// While a case runs, loads the next case's memos in a background
    /// thread, when they fit beside the resident memos (within
    /// [`memo_budget`](Self::memo_budget) and
    /// [`memo_gpu_budget`](Self::memo_gpu_budget) where set, else within the
    /// memory the system has available): a sweep bound by loading models
    /// then costs about the larger of load and compute per case instead of
    /// their sum. `--prefetch`.
    ///
    /// The load shares the machine with the running case: it can slow its
    /// timed call, and its memory counts in that case's peaks. The run
    /// record says prefetch was on (`prefetch`), and each case lists the
    /// memos that loaded beside it (`memo.prefetched`). Test mode does not
    /// prefetch.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().prefetch(true).memo_budget(2 << 30);
    /// assert!(format!("{runner:?}").contains("prefetch: true"));
    /// ```
    pub fn prefetch(mut self, on: bool) -> Self {
        self.settings.prefetch = on;
        self
    }

    /// Puts the disk tier of persisted memos in `dir` for this run's cases
    /// and hooks (by default `target/nnbench/memo-cache`):
    /// `--memo-cache-dir DIR`.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().memo_cache_dir("/scratch/memos");
    /// assert!(format!("{runner:?}").contains(r#"disk_tier: At("/scratch/memos")"#));
    /// ```
    pub fn memo_cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.settings.disk_tier = DiskTier::At(dir.into());
        self
    }

    /// Turns the disk tier off for this run: persisted memos are computed
    /// and kept in memory only. `--no-memo-cache`.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().no_memo_cache();
    /// assert!(format!("{runner:?}").contains("disk_tier: Off"));
    /// ```
    pub fn no_memo_cache(mut self) -> Self {
        self.settings.disk_tier = DiskTier::Off;
        self
    }

    /// Sets this run's disk tier: the default folder, none, or a folder
    /// ([`memo_cache_dir`](Self::memo_cache_dir) and
    /// [`no_memo_cache`](Self::no_memo_cache) are its shorthands).
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::memo::DiskTier;
    /// let runner = nnbench::Runner::new().no_memo_cache().disk_tier(DiskTier::Default);
    /// assert!(format!("{runner:?}").contains("disk_tier: Default"));
    /// ```
    pub fn disk_tier(mut self, tier: DiskTier) -> Self {
        self.settings.disk_tier = tier;
        self
    }

    /// Empties the disk tier before the run: `--memo-cache clear`.
    ///
    /// # Example
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let stale = dir.path().join("SomeMemo").join("0123.memo");
    /// std::fs::create_dir_all(stale.parent().unwrap()).unwrap();
    /// std::fs::write(&stale, b"old").unwrap();
    /// nnbench::Runner::new()
    ///     .filter("no case has this id")
    ///     .memo_cache_dir(dir.path())
    ///     .clear_memo_cache(true)
    ///     .quiet(true)
    ///     .run()
    ///     .unwrap();
    /// assert!(!stale.exists());
    /// ```
    pub fn clear_memo_cache(mut self, clear: bool) -> Self {
        self.settings.clear_disk_tier = clear;
        self
    }

    /// Prints the memo cache report ([`memo::report`](crate::memo::report))
    /// at the end of the run, even when quiet: `--print-cache`.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().print_cache(true);
    /// assert!(format!("{runner:?}").contains("print_cache: true"));
    /// ```
    pub fn print_cache(mut self, print: bool) -> Self {
        self.settings.print_cache = print;
        self
    }

    /// Times every case this way, whatever its family says (by default each
    /// family's `timing` option, else [`Timing::Auto`]): `--once` or
    /// `--sampled`. [`Timing::Sampled`] here lets criterion sample every
    /// case, with its settings, analysis and reports under
    /// `target/criterion`.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark(timing = sampled)]
    /// fn forced() -> u8 { 1 }
    ///
    /// let record = nnbench::Runner::new()
    ///     .filter("forced")
    ///     .timing(nnbench::Timing::Once)
    ///     .quiet(true)
    ///     .run()
    ///     .unwrap();
    /// assert_eq!(record.cases[0].time.mode, nnbench::record::TimingMode::Once);
    /// ```
    pub fn timing(mut self, timing: Timing) -> Self {
        self.settings.timing.timing = Some(timing);
        self
    }

    /// Sampling settings that override every family's: `--sample-size`,
    /// `--warm-up-time` and `--measurement-time`. For nnbench's sampler the
    /// sample size is the least number of samples and the measurement time
    /// the most time spent sampling; under criterion
    /// ([`Timing::Sampled`] as the run's timing) they are its own.
    ///
    /// # Example
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// #[nnbench::benchmark(timing = sampled)]
    /// fn quick() -> u64 { (0..100u64).sum() }
    ///
    /// let quick_sampling = nnbench::Sampling {
    ///     sample_size: Some(10),
    ///     warm_up: Some(Duration::from_millis(10)),
    ///     measurement_time: Some(Duration::from_millis(50)),
    /// };
    /// let record = nnbench::Runner::new().filter("quick").sampling(quick_sampling).quiet(true).run().unwrap();
    /// assert!(record.cases[0].time.samples >= 10);
    /// ```
    pub fn sampling(mut self, sampling: Sampling) -> Self {
        self.settings.timing.sampling = sampling;
        self
    }

    /// The first-call duration from which [`Timing::Auto`] keeps a case to
    /// one call (default 100 ms): `--auto-threshold DURATION`.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark]
    /// fn slowish() { std::thread::sleep(std::time::Duration::from_millis(5)); }
    ///
    /// let record = nnbench::Runner::new()
    ///     .filter("slowish")
    ///     .auto_threshold(std::time::Duration::from_millis(1))
    ///     .quiet(true)
    ///     .run()
    ///     .unwrap();
    /// assert_eq!(record.cases[0].time.mode, nnbench::record::TimingMode::Once);
    /// ```
    pub fn auto_threshold(mut self, threshold: std::time::Duration) -> Self {
        self.settings.timing.auto_threshold = threshold;
        self
    }

    /// Test mode: each case runs once, quickly, whatever its timing, as
    /// `cargo test --benches` runs bench binaries (a bench binary without
    /// `--bench`).
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark(timing = sampled)]
    /// fn tiny() -> u8 { 1 }
    ///
    /// let record = nnbench::Runner::new().filter("tiny").test_mode(true).quiet(true).run().unwrap();
    /// assert_eq!(record.cases[0].time.samples, 1);
    /// ```
    pub fn test_mode(mut self, test: bool) -> Self {
        self.settings.timing.test_mode = test;
        self
    }

    /// Saves the run record as baseline `name`, beside `latest.json`
    /// (`<latest_dir>/baselines/<name>.json`), and criterion's estimates of
    /// sampled cases under the same name: `--save-baseline NAME`. A bench
    /// binary saves only when measuring (`--bench`).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().save_baseline("main");
    /// assert!(format!("{runner:?}").contains(r#"save: Some("main")"#));
    /// ```
    pub fn save_baseline(mut self, name: impl Into<String>) -> Self {
        self.settings.timing.baselines.save = Some(name.into());
        self
    }

    /// Compares against baseline `name` without overwriting it:
    /// `--baseline NAME`. criterion compares its sampled cases; a bench
    /// binary then compares the whole record with the saved one, prints
    /// what changed and exits 1 if a case regressed (see
    /// [`compare`](crate::compare)).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().baseline("main");
    /// assert!(format!("{runner:?}").contains(r#"compare: Some("main")"#));
    /// ```
    pub fn baseline(mut self, name: impl Into<String>) -> Self {
        self.settings.timing.baselines.compare = Some(name.into());
        self
    }

    /// Records no memory figures (they cost about 4 µs a case):
    /// `--no-memory` when `record` is false.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark]
    /// fn unmeasured() {}
    ///
    /// let record = nnbench::Runner::new()
    ///     .filter("unmeasured")
    ///     .record_memory(false)
    ///     .test_mode(true)
    ///     .quiet(true)
    ///     .run()
    ///     .unwrap();
    /// assert_eq!(record.cases[0].memory.rss_peak_bytes, None);
    /// ```
    pub fn record_memory(mut self, record: bool) -> Self {
        self.settings.skip_memory = !record;
        self
    }

    /// Prints nothing: no progress, no warnings, no table: `--quiet`. The
    /// record still holds every warning.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().quiet(true);
    /// assert!(format!("{runner:?}").contains("quiet: true"));
    /// ```
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.settings.quiet = quiet;
        self
    }

    /// Also writes the record to `path` (`.json`, or `.ndjson` for one case
    /// per line): `--out FILE`.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark]
    /// fn written() -> u8 { 7 }
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("run.json");
    /// nnbench::Runner::new().filter("written").test_mode(true).quiet(true).out(&path).run().unwrap();
    /// assert_eq!(nnbench::RunRecord::read(&path).unwrap().cases[0].value, 7);
    /// ```
    pub fn out(mut self, path: impl Into<PathBuf>) -> Self {
        self.settings.out = Some(path.into());
        self
    }

    /// Names the run (the record's `run`; the bench target's name under
    /// `cargo bench`).
    ///
    /// # Example
    ///
    /// ```
    /// let record = nnbench::Runner::new().filter("no such case").name("nightly").quiet(true).run().unwrap();
    /// assert_eq!(record.run, "nightly");
    /// ```
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.settings.name = Some(name.into());
        self
    }

    /// Writes the record to `dir/latest.json` after each run, as bench
    /// binaries do under `target/nnbench/<bench>/` when given `--bench`.
    ///
    /// # Example
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// nnbench::Runner::new().filter("no such case").quiet(true).latest_dir(dir.path()).run().unwrap();
    /// assert!(dir.path().join("latest.json").is_file());
    /// ```
    pub fn latest_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.settings.latest_dir = Some(dir.into());
        self
    }

    /// The folder whose git state the record's context describes (default:
    /// the current folder; a bench binary's crate folder).
    ///
    /// # Example
    ///
    /// ```
    /// let not_a_repo = tempfile::tempdir().unwrap();
    /// let record = nnbench::Runner::new()
    ///     .filter("no such case")
    ///     .repo_dir(not_a_repo.path())
    ///     .quiet(true)
    ///     .run()
    ///     .unwrap();
    /// assert_eq!(record.context.git, None);
    /// ```
    pub fn repo_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.settings.repo_dir = Some(dir.into());
        self
    }

    /// Runs only shard `shard` of the selected cases: `--shard K/N`.
    ///
    /// Every shard of a sweep plans the same split from the same selected
    /// cases (and [`shard_costs`](Self::shard_costs)), so machines that
    /// run the shards need not talk to each other. Cases that share a memo
    /// stay in one shard where the balance allows. The record says which
    /// shard it holds (`shard`), and [`shard::merge`](crate::shard::merge)
    /// (`nnbench merge`) makes one record of all.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::shard::Shard;
    ///
    /// #[nnbench::parametrize([(n = 1), (n = 2), (n = 3)])]
    /// fn thirds(n: u32) -> u32 { n }
    ///
    /// let record = nnbench::Runner::new()
    ///     .filter("thirds/")
    ///     .shard(Shard::new(2, 3).unwrap())
    ///     .test_mode(true)
    ///     .quiet(true)
    ///     .run()
    ///     .unwrap();
    /// assert_eq!(record.cases.len(), 1);
    /// assert_eq!(record.shard.unwrap().index, 2);
    /// ```
    pub fn shard(mut self, shard: Shard) -> Self {
        self.settings.shard = Some(shard);
        self
    }

    /// Balances the shards by measured costs instead of case counts:
    /// `--shard-costs FILE`. Give every shard the same costs.
    ///
    /// # Example
    ///
    /// ```no_run
    /// use nnbench::shard::{Shard, ShardCosts};
    ///
    /// let costs = ShardCosts::read("runs/main.json", None)?;
    /// let runner = nnbench::Runner::new().shard(Shard::new(1, 4)?).shard_costs(costs);
    /// # Ok::<(), nnbench::shard::ShardError>(())
    /// ```
    pub fn shard_costs(mut self, costs: ShardCosts) -> Self {
        self.settings.shard_costs = Some(costs);
        self
    }

    /// The ids of the selected cases, in the order a run would start them
    /// (a run may reorder further once it knows which memos are large).
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::parametrize([(n = 1), (n = 2)])]
    /// fn listed(n: u32) -> u32 { n }
    ///
    /// let ids = nnbench::Runner::new().filter("listed/").list();
    /// assert_eq!(ids, ["listed/n=1", "listed/n=2"]);
    /// ```
    pub fn list(&self) -> Vec<String> {
        self.listing().0
    }

    /// [`list`](Self::list), and with `--shard` one line on the shard: its
    /// cases, memo loads and share of the expected cost.
    pub(crate) fn listing(&self) -> (Vec<String>, Option<String>) {
        let cases = registry::cases();
        let (selected, shard) = self.select(&cases);
        let ids = Schedule::static_order(&selected)
            .into_iter()
            .map(|at| selected[at].id.clone())
            .collect();
        (ids, shard.map(|s| s.describe()))
    }

    /// Runs the selected cases and writes the record where configured.
    ///
    /// A failing case does not stop the run: its error is in its record, and
    /// [`RunRecord::failed`] counts them.
    ///
    /// # Errors
    ///
    /// When an output file has neither a `.json` nor an `.ndjson` extension
    /// (checked before any case runs), or a record cannot be written.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark(tags = ["doc"])]
    /// fn answer() -> u8 { 42 }
    ///
    /// let record = nnbench::Runner::new().tag("doc").test_mode(true).quiet(true).run().unwrap();
    /// assert_eq!(record.failed(), 0);
    /// ```
    pub fn run(&self) -> Result<RunRecord> {
        let settings = &self.settings;
        if let Some(out) = &settings.out {
            OutputFormat::of(out)?;
        }
        // The run's disk tier is in force on this thread, where its cases
        // and their hooks resolve memos; a run beside it keeps its own.
        memo::with_disk_tier(settings.disk_tier.clone(), || {
            let _recording = journal::record();
            self.run_recorded()
        })
    }

    fn run_recorded(&self) -> Result<RunRecord> {
        let settings = &self.settings;
        if (settings.isolate || settings.case_timeout.is_some()) && !settings.bench_binary {
            return Err(Error::msg(
                "--isolate and --case-timeout work in a bench binary (`nnbench::main!()`), which starts itself again as a worker or ends on a timed-out case",
            ));
        }
        if settings.clear_disk_tier {
            memo::clear_disk()?;
        }
        let started_at = context::now_rfc3339();
        let repo_dir = settings
            .repo_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("."));
        // The context (git, host, GPU) takes milliseconds to gather: it is
        // gathered while the grids are built, and done before the first case
        // starts, so that it disturbs no case's figures.
        let command: Vec<String> = std::env::args().collect();
        let context = std::thread::Builder::new()
            .name("nnbench-context".into())
            .spawn({
                let (dir, command) = (repo_dir.clone(), command.clone());
                move || context::collect(&dir, command)
            });
        let cases = registry::cases();
        let (mut selected, shard) = self.select(&cases);
        if let Some(shard) = &shard
            && !settings.quiet
        {
            eprintln!("{}", shard.describe());
        }
        let shard = shard.map(|s| s.record);
        let progress_path = settings
            .latest_dir
            .as_ref()
            .map(|dir| dir.join("progress.ndjson"));
        let previous = match (&progress_path, settings.resume) {
            (Some(path), true) => progress::read(path),
            (None, true) => progress::Previous {
                warnings: vec![
                    "--resume: only a measuring bench binary (cargo bench) keeps the progress of its runs: every case runs".into(),
                ],
                ..progress::Previous::default()
            },
            _ => progress::Previous::default(),
        };
        let finished = previous.ids();
        let resumed: Vec<crate::CaseRecord> = previous
            .cases
            .iter()
            .filter(|c| selected.iter().any(|s| s.id == c.id))
            .cloned()
            .collect();
        let total = selected.len();
        selected.retain(|c| !finished.contains(c.id.as_str()));

        let console = Console::new(settings.quiet, selected.len());
        let context = match context {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|_| context::collect(&repo_dir, command)),
            Err(_) => context::collect(&repo_dir, command),
        };
        let mut warnings = run_warnings(settings);
        warnings.extend(previous.warnings);
        let progress = match &progress_path {
            Some(path) => match Progress::open(path, settings.resume && !resumed.is_empty()) {
                Ok(progress) => Some(progress),
                Err(e) => {
                    warnings.push(format!(
                        "{}: finished cases are not written as the run goes ({e})",
                        path.display()
                    ));
                    None
                }
            },
            None => None,
        };
        let ledger = Arc::new(Mutex::new(Ledger {
            records: resumed,
            warnings,
            progress,
        }));
        let closing = Arc::new(Closing {
            settings: settings.clone(),
            name: settings.name.clone().unwrap_or_else(default_run_name),
            started_at,
            context,
            stats_before: memo::global_cache().stats(),
            total,
            shard,
        });
        let stop = || settings.interruptible.then(interrupt::requested).flatten();
        let (stopped, workers_memo) = if settings.isolate {
            let (stopped, memo) = run_isolated(&selected, settings, &stop, &ledger, &console)?;
            (stopped, Some(memo))
        } else {
            let watchdog = match settings.case_timeout {
                Some(limit) => Some(
                    Watchdog::start(limit, close_on_timeout(limit, &ledger, &closing)).map_err(
                        |e| Error::msg(format!("--case-timeout: no watchdog thread: {e}")),
                    )?,
                ),
                None => None,
            };
            let mut sink = Local {
                ledger: &ledger,
                console: &console,
                stop: &stop,
                watchdog: watchdog.as_ref(),
            };
            let end = cases::run(&selected, settings, &console, &mut sink);
            drop(watchdog);
            lock(&ledger).warnings.extend(end.warnings);
            (end.interrupted.map(Stop::Signal), None)
        };
        let record = closing.record(&mut lock(&ledger), stopped, workers_memo);
        closing.finish(&record, &console)?;
        Ok(record)
    }

    /// The selected cases, of this runner's shard when it has one.
    fn select<'a>(&self, cases: &'a [Case]) -> (Vec<&'a Case>, Option<shard::Assigned>) {
        let selection = &self.settings.selection;
        let selected: Vec<&Case> = cases
            .iter()
            .filter(|c| selection.selects(&c.id, &c.family.tags))
            .collect();
        match self.settings.shard {
            Some(shard) => {
                let (mine, assigned) =
                    shard::assign(&selected, shard, self.settings.shard_costs.as_ref());
                (mine, Some(assigned))
            }
            None => (selected, None),
        }
    }
}

/// Where baseline `name` of the bench whose records go to `dir` is kept.
pub(crate) fn baseline_path(dir: &std::path::Path, name: &str) -> PathBuf {
    dir.join("baselines").join(format!("{name}.json"))
}

fn lock(ledger: &Mutex<Ledger>) -> MutexGuard<'_, Ledger> {
    ledger.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `selected` in worker processes (`--isolate`); says what stopped
/// the run early, if anything, and what the workers' memo caches did.
#[cfg(unix)]
fn run_isolated(
    selected: &[&Case],
    settings: &RunSettings,
    stop: &dyn Fn() -> Option<interrupt::Signal>,
    ledger: &Mutex<Ledger>,
    console: &Console,
) -> Result<(Option<Stop>, RunMemoRecord)> {
    let outcome = isolate::supervise(selected, settings, stop, &mut |record| {
        lock(ledger).add(record, console)
    })?;
    lock(ledger).warnings.extend(outcome.warnings);
    Ok((outcome.interrupted.map(Stop::Signal), outcome.memo))
}

#[cfg(not(unix))]
fn run_isolated(
    _: &[&Case],
    _: &RunSettings,
    _: &dyn Fn() -> Option<interrupt::Signal>,
    _: &Mutex<Ledger>,
    _: &Console,
) -> Result<(Option<Stop>, RunMemoRecord)> {
    Err(Error::msg("--isolate needs a Unix system"))
}

/// What the watchdog does with a case that ran past `limit`: records it,
/// closes the run with the cases finished, and ends the process, since the
/// case's thread cannot be stopped.
fn close_on_timeout(
    limit: std::time::Duration,
    ledger: &Arc<Mutex<Ledger>>,
    closing: &Arc<Closing>,
) -> impl FnOnce(watchdog::Overdue) + Send + 'static {
    let (ledger, closing) = (Arc::clone(ledger), Arc::clone(closing));
    move |overdue| {
        let record = overdue.into_record(limit);
        let id = record.id.clone();
        let mut ledger = lock(&ledger);
        ledger.keep(record);
        let run = closing.record(&mut ledger, Some(Stop::CaseTimeout), None);
        let written = closing.finish(&run, &Console::new(closing.settings.quiet, 0));
        eprintln!(
            "error: {id} ran past --case-timeout {}; the run stopped there (--isolate kills such a case and goes on); `--resume` runs the cases left",
            humantime::format_duration(limit)
        );
        if let Err(error) = written {
            eprintln!("error: {error:#}");
        }
        std::process::exit(1)
    }
}

/// The sink of cases run in this process: the console, the progress file
/// and the ledger, and the watchdog of `--case-timeout`.
struct Local<'a> {
    ledger: &'a Mutex<Ledger>,
    console: &'a Console,
    stop: &'a dyn Fn() -> Option<interrupt::Signal>,
    watchdog: Option<&'a Watchdog>,
}

impl Sink for Local<'_> {
    fn starting(&mut self, case: &Case) {
        if let Some(watchdog) = self.watchdog {
            watchdog.arm(case);
        }
    }

    fn stage(&mut self, stage: crate::record::Stage) {
        if let Some(watchdog) = self.watchdog {
            watchdog.stage(stage);
        }
    }

    fn finished(&mut self, record: crate::CaseRecord) {
        if let Some(watchdog) = self.watchdog {
            watchdog.disarm();
        }
        lock(self.ledger).add(record, self.console);
    }

    fn stop(&mut self) -> Option<interrupt::Signal> {
        (self.stop)()
    }
}

/// Settings that ask for something the run will not do.
fn run_warnings(settings: &RunSettings) -> Vec<String> {
    let baselines = &settings.timing.baselines;
    let baseline = baselines.save.as_ref().or(baselines.compare.as_ref());
    match baseline {
        Some(name) if settings.timing.test_mode => vec![format!(
            "baseline `{name}` is neither saved nor compared: in test mode (no --bench) no case is sampled"
        )],
        _ => Vec::new(),
    }
}

/// The executable's name without cargo's hash suffix.
fn default_run_name() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| match stem.rsplit_once('-') {
            Some((name, hash))
                if hash.len() == 16 && hash.chars().all(|c| c.is_ascii_hexdigit()) =>
            {
                name.to_owned()
            }
            _ => stem,
        })
        .unwrap_or_else(|| "nnbench".into())
}
