//! The runner's builder: a [`Runner`] is its settings, and each builder
//! method sets one of them, naming the flag of a bench binary it equals.

use std::path::PathBuf;

use crate::memo::DiskTier;
use crate::settings::{CommandLine, DiskTierAction, Forced, Settings};
use crate::shard::{Shard, ShardCosts};
use crate::{Error, Result, Sampling, Timing};

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
    pub(in crate::runner) settings: Settings,
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
    #[must_use]
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
        let command_line =
            CommandLine::parse_args(program.chain(args.into_iter().map(Into::into)))?;
        let mut settings = command_line.settings();
        if let Some(path) = &settings.sharding.costs_file {
            settings.sharding.costs = Some(ShardCosts::read(path, None).map_err(Error::msg)?);
        }
        Ok(Self::with_settings(settings))
    }

    pub(crate) fn with_settings(settings: Settings) -> Self {
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
    #[must_use]
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
    #[must_use]
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
    #[must_use]
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
    #[must_use]
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
    #[must_use]
    pub fn keep_memos(mut self, keep: bool) -> Self {
        self.settings.memory.keep_memos = keep;
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
    #[must_use]
    pub fn memo_budget(mut self, bytes: u64) -> Self {
        self.settings.memory.memo_budget = Some(bytes);
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
    #[must_use]
    pub fn memo_gpu_budget(mut self, bytes: u64) -> Self {
        self.settings.memory.memo_gpu_budget = Some(bytes);
        self
    }

    /// Keeps the disk tier within `bytes`, dropping the entries used least
    /// recently at the start of the run and after each case that saved
    /// one: `--disk-tier-max SIZE`.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().disk_tier_max(50 << 30);
    /// assert!(format!("{runner:?}").contains("disk_tier_max: Some(53687091200)"));
    /// ```
    #[must_use]
    pub fn disk_tier_max(mut self, bytes: u64) -> Self {
        self.settings.memory.disk_tier_max = Some(bytes);
        self
    }

    /// The name [`Runner::disk_tier_max`] had before 0.1.0.
    #[doc(hidden)]
    #[deprecated(
        since = "0.1.0",
        note = "renamed `disk_tier_max`, as the flag `--disk-tier-max`"
    )]
    #[must_use]
    pub fn memo_cache_max(self, bytes: u64) -> Self {
        self.disk_tier_max(bytes)
    }

    /// Under a memo budget, orders the cases for the fewest bytes loaded
    /// (`true`, the default) or keeps the declared order, evicting the
    /// least recently used (`false`, `--no-memo-plan`).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().memo_budget(8 << 30).memo_plan(false);
    /// assert!(format!("{runner:?}").contains("no_memo_plan: true"));
    /// ```
    #[must_use]
    pub fn memo_plan(mut self, plan: bool) -> Self {
        self.settings.memory.no_memo_plan = !plan;
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
    #[must_use]
    pub fn prefetch(mut self, on: bool) -> Self {
        self.settings.memory.prefetch = on;
        self
    }

    /// Sets this run's disk tier of persisted memos, in force for its
    /// cases and hooks (by default `target/nnbench/memo-cache`): a folder
    /// (`--disk-tier-dir DIR`), none (`--no-disk-tier`: persisted memos
    /// are computed and kept in memory only), or the default.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::Memo;
    /// use nnbench::memo::DiskTier;
    /// use nnbench::store::{Format, Json};
    ///
    /// #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    /// struct Vocabulary;
    /// impl Memo for Vocabulary {
    ///     type Value = Vec<String>;
    ///     fn compute(&self) -> nnbench::Result<Vec<String>> { Ok(vec!["the".into()]) }
    ///     fn store(&self) -> Option<Box<dyn Format<Vec<String>>>> { Some(Box::new(Json)) }
    /// }
    ///
    /// #[nnbench::product(v = [Vocabulary])]
    /// fn vocabulary_size(v: &[String]) -> usize { v.len() }
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// nnbench::Runner::new()
    ///     .filter("vocabulary_size/")
    ///     .disk_tier(DiskTier::At(dir.path().to_owned()))
    ///     .test_mode(true)
    ///     .quiet(true)
    ///     .run()
    ///     .unwrap();
    /// assert!(std::fs::read_dir(dir.path()).unwrap().next().is_some(), "saved there");
    /// ```
    #[must_use]
    pub fn disk_tier(mut self, tier: DiskTier) -> Self {
        self.settings.memory.disk_tier = tier;
        self
    }

    /// Empties the disk tier before the run: `--memo-cache clear`.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::memo::DiskTier;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let stale = dir.path().join("SomeMemo").join("0123.memo");
    /// std::fs::create_dir_all(stale.parent().unwrap()).unwrap();
    /// std::fs::write(&stale, b"old").unwrap();
    /// nnbench::Runner::new()
    ///     .filter("no case has this id")
    ///     .disk_tier(DiskTier::At(dir.path().to_owned()))
    ///     .clear_disk_tier(true)
    ///     .quiet(true)
    ///     .run()
    ///     .unwrap();
    /// assert!(!stale.exists());
    /// ```
    #[must_use]
    pub fn clear_disk_tier(mut self, clear: bool) -> Self {
        self.settings.memory.disk_tier_action = clear.then_some(DiskTierAction::Clear);
        self
    }

    /// Prints the memo cache's summary ([`memo::summary`](crate::memo::summary))
    /// at the end of the run, even when quiet: `--print-cache`.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().print_cache(true);
    /// assert!(format!("{runner:?}").contains("print_cache: true"));
    /// ```
    #[must_use]
    pub fn print_cache(mut self, print: bool) -> Self {
        self.settings.memory.print_cache = print;
        self
    }

    /// Times every case this way, whatever its family says (by default each
    /// family's `timing` option, else [`Timing::Auto`]): `--once`,
    /// `--criterion` or `--instructions`. [`Timing::Criterion`] lets
    /// criterion sample every case, with its settings, analysis and
    /// reports under `target/criterion`.
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
    #[must_use]
    pub fn timing(mut self, timing: Timing) -> Self {
        self.settings.timing.forced = Forced(Some(timing));
        self
    }

    /// Sampling settings that override every family's: `--sample-size`,
    /// `--warm-up-time` and `--measurement-time`. For nnbench's sampler the
    /// sample size is the least number of samples and the measurement time
    /// the most time spent sampling; under criterion
    /// ([`Timing::Criterion`] as the run's timing) they are its own.
    ///
    /// # Example
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// #[nnbench::benchmark(timing = sampled)]
    /// fn quick() -> u64 { (0..100u64).sum() }
    ///
    /// let quick_sampling = nnbench::Sampling::new().sample_size(10).warm_up_time(Duration::from_millis(10)).measurement_time(Duration::from_millis(50));
    /// let record = nnbench::Runner::new().filter("quick").sampling(quick_sampling).quiet(true).run().unwrap();
    /// assert!(record.cases[0].time.samples >= 10);
    /// ```
    #[must_use]
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
    #[must_use]
    pub fn auto_threshold(mut self, threshold: std::time::Duration) -> Self {
        self.settings.timing.auto_threshold = Some(threshold);
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
    #[must_use]
    pub fn test_mode(mut self, test: bool) -> Self {
        self.settings.timing.test_mode = test;
        self
    }

    /// After timing each case, samples its calls again for the measurement
    /// time (1 s unless set) under a sampling profiler, and draws them as a
    /// flamegraph: `--profile`. Memo loading, hooks and the harness are
    /// left out. The SVG goes to `<latest_dir>/profiles/<case id>.svg`
    /// (a bench binary's `target/nnbench/<bench>/profiles/`), its path to
    /// the case's [`profile`](crate::CaseRecord::profile). A profiler that
    /// cannot start (another one runs in the process, or this is not Unix)
    /// leaves a warning on the case, which passes.
    ///
    /// # Example
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// #[nnbench::benchmark]
    /// fn profiled_checksum() -> u64 {
    ///     (0..std::hint::black_box(100_000u64)).map(|x| x * x % 7).sum()
    /// }
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let record = nnbench::Runner::new()
    ///     .filter("profiled_checksum")
    ///     .test_mode(true)
    ///     .quiet(true)
    ///     .latest_dir(dir.path())
    ///     .sampling(nnbench::Sampling::new().measurement_time(Duration::from_millis(300)))
    ///     .profile(true)
    ///     .run()
    ///     .unwrap();
    /// let case = &record.cases[0];
    /// match &case.profile {
    ///     Some(svg) => {
    ///         assert!(svg.starts_with(dir.path().join("profiles")));
    ///         assert!(std::fs::read_to_string(svg).unwrap().contains("profiled_checksum"));
    ///     }
    ///     // Built without the `profile` feature, or where no profiler runs.
    ///     None => assert!(case.warnings.iter().any(|w| w.contains("profile"))),
    /// }
    /// ```
    #[must_use]
    pub fn profile(mut self, on: bool) -> Self {
        self.settings.profiling.profile = on;
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
    #[must_use]
    pub fn save_baseline(mut self, name: impl Into<String>) -> Self {
        self.settings.baselines.save = Some(name.into());
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
    #[must_use]
    pub fn baseline(mut self, name: impl Into<String>) -> Self {
        self.settings.baselines.compare = Some(name.into());
        self
    }

    /// Whether memory figures are taken (by default they are; what they
    /// cost a case is on the book's page of measured figures,
    /// `scripts/figures.sh overhead`): `--no-memory` when `take` is false.
    ///
    /// # Example
    ///
    /// ```
    /// #[nnbench::benchmark]
    /// fn unmeasured() {}
    ///
    /// let record = nnbench::Runner::new()
    ///     .filter("unmeasured")
    ///     .memory(false)
    ///     .test_mode(true)
    ///     .quiet(true)
    ///     .run()
    ///     .unwrap();
    /// assert_eq!(record.cases[0].memory.rss_peak_bytes, None);
    /// ```
    #[must_use]
    pub fn memory(mut self, take: bool) -> Self {
        self.settings.memory.no_memory = !take;
        self
    }

    /// The name [`Runner::memory`] had before 0.1.0.
    #[doc(hidden)]
    #[deprecated(since = "0.1.0", note = "renamed `memory`, as the flag `--no-memory`")]
    #[must_use]
    pub fn record_memory(self, record: bool) -> Self {
        self.memory(record)
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
    #[must_use]
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.settings.output.quiet = quiet;
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
    #[must_use]
    pub fn out(mut self, path: impl Into<PathBuf>) -> Self {
        self.settings.output.out = Some(path.into());
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
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.settings.output.name = Some(name.into());
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
    #[must_use]
    pub fn latest_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.settings.output.latest_dir = Some(dir.into());
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
    #[must_use]
    pub fn repo_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.settings.output.repo_dir = Some(dir.into());
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
    #[must_use]
    pub fn shard(mut self, shard: Shard) -> Self {
        self.settings.sharding.shard = Some(shard);
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
    #[must_use]
    pub fn shard_costs(mut self, costs: ShardCosts) -> Self {
        self.settings.sharding.costs = Some(costs);
        self
    }
}
