//! Runs the registered cases: select, order, run each through its
//! lifecycle, evict memos past their last use, record, report.

mod case;
mod schedule;
pub(crate) mod select;
mod timed;

use std::collections::HashMap;
use std::path::PathBuf;

use crate::cli::Cli;
use crate::memo;
use crate::record::{OutputFormat, RunMemoRecord, RunRecord, SCHEMA};
use crate::registry::{self, Case};
use crate::report::Console;
use crate::{Result, context};

use schedule::Schedule;
use select::Selection;
use timed::{Engine, RunTiming};

/// Runs the cases registered by `#[benchmark]`, `#[parametrize]` and
/// `#[product]` in this binary, and returns the run record.
///
/// The bench binary made by `nnbench::main!()` is a `Runner` configured from
/// the command line; tests and examples build one directly.
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
    selection: Selection,
    keep_memos: bool,
    memo_budget: Option<u64>,
    memo_cache: MemoCacheSetting,
    print_cache: bool,
    skip_memory: bool,
    timing: RunTiming,
    quiet: bool,
    out: Option<PathBuf>,
    name: Option<String>,
    latest_dir: Option<PathBuf>,
    repo_dir: Option<PathBuf>,
}

impl Runner {
    /// A runner of every registered case, with each family's own timing,
    /// progress lines and the final table, and no record file.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new();
    /// # let _ = runner;
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
    /// let runner = nnbench::Runner::from_args(["accuracy", "--tag", "cpu", "--quiet"]).unwrap();
    /// # let _ = runner;
    /// assert!(nnbench::Runner::from_args(["--no-such-flag"]).is_err());
    /// ```
    pub fn from_args<I, T>(args: I) -> Result<Self>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let program = std::iter::once(std::ffi::OsString::from("nnbench"));
        let cli = Cli::try_parse_args(program.chain(args.into_iter().map(Into::into)))?;
        Ok(cli.runner())
    }

    /// Runs only cases whose id contains `pattern` (any of several filters).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().filter("accuracy").filter("latency");
    /// # let _ = runner;
    /// ```
    pub fn filter(mut self, pattern: impl Into<String>) -> Self {
        self.selection.filters.push(pattern.into());
        self
    }

    /// Leaves out cases whose id contains `pattern`.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().skip("batch=1024");
    /// # let _ = runner;
    /// ```
    pub fn skip(mut self, pattern: impl Into<String>) -> Self {
        self.selection.skip.push(pattern.into());
        self
    }

    /// Runs only cases tagged `tag` (any of several tags).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().tag("cpu");
    /// # let _ = runner;
    /// ```
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.selection.tags.push(tag.into());
        self
    }

    /// Makes filters and skips match whole ids.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().filter("startup").exact(true);
    /// # let _ = runner;
    /// ```
    pub fn exact(mut self, exact: bool) -> Self {
        self.selection.exact = exact;
        self
    }

    /// Keeps memos in the cache after their last use (by default each memo is
    /// evicted as soon as no remaining case needs it).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().keep_memos(true);
    /// # let _ = runner;
    /// ```
    pub fn keep_memos(mut self, keep: bool) -> Self {
        self.keep_memos = keep;
        self
    }

    /// Keeps the bytes of resident memos within `bytes`: before a memo
    /// loads, least recently used memos that the running case does not use
    /// are evicted (spilled to the disk tier if they persist). A case whose
    /// own memos exceed the budget still runs, with a warning.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().memo_budget(8 << 30);
    /// # let _ = runner;
    /// ```
    pub fn memo_budget(mut self, bytes: u64) -> Self {
        self.memo_budget = Some(bytes);
        self
    }

    /// Puts the disk tier of persisted memos in `dir` for this run and
    /// after (by default `target/nnbench/memo-cache`).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().memo_cache_dir("/scratch/memo-cache");
    /// # let _ = runner;
    /// ```
    pub fn memo_cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.memo_cache.dir = Some(Some(dir.into()));
        self
    }

    /// Turns the disk tier off: persisted memos are computed and kept in
    /// memory only.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().no_memo_cache();
    /// # let _ = runner;
    /// ```
    pub fn no_memo_cache(mut self) -> Self {
        self.memo_cache.dir = Some(None);
        self
    }

    /// Empties the disk tier before the run.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().clear_memo_cache(true);
    /// # let _ = runner;
    /// ```
    pub fn clear_memo_cache(mut self, clear: bool) -> Self {
        self.memo_cache.clear = clear;
        self
    }

    /// Prints the memo cache report ([`memo::report`](crate::memo::report))
    /// at the end of the run, even when quiet.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().print_cache(true);
    /// # let _ = runner;
    /// ```
    pub fn print_cache(mut self, print: bool) -> Self {
        self.print_cache = print;
        self
    }

    /// Times every case this way, whatever its family says (by default each
    /// family's `timing` option, else [`Timing::Auto`](crate::Timing::Auto)).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().timing(nnbench::Timing::Sampled);
    /// # let _ = runner;
    /// ```
    pub fn timing(mut self, timing: crate::Timing) -> Self {
        self.timing.timing = Some(timing);
        self
    }

    /// Sampling settings that override every family's.
    ///
    /// # Example
    ///
    /// ```
    /// let quick = nnbench::Sampling { sample_size: Some(10), ..Default::default() };
    /// let runner = nnbench::Runner::new().sampling(quick);
    /// # let _ = runner;
    /// ```
    pub fn sampling(mut self, sampling: crate::Sampling) -> Self {
        self.timing.sampling = sampling;
        self
    }

    /// The first-call duration from which [`Timing::Auto`](crate::Timing::Auto)
    /// keeps a case to one call (default 100 ms).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().auto_threshold(std::time::Duration::from_millis(20));
    /// # let _ = runner;
    /// ```
    pub fn auto_threshold(mut self, threshold: std::time::Duration) -> Self {
        self.timing.auto_threshold = threshold;
        self
    }

    /// Test mode: each case runs once, quickly, whatever its timing, as
    /// `cargo test --benches` runs bench binaries.
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
        self.timing.test_mode = test;
        self
    }

    /// Saves criterion's estimates of sampled cases under baseline `name`
    /// (criterion's `--save-baseline`).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().save_baseline("main");
    /// # let _ = runner;
    /// ```
    pub fn save_baseline(mut self, name: impl Into<String>) -> Self {
        self.timing.baselines.save = Some(name.into());
        self
    }

    /// Compares sampled cases against baseline `name` without overwriting it
    /// (criterion's `--baseline`).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().baseline("main");
    /// # let _ = runner;
    /// ```
    pub fn baseline(mut self, name: impl Into<String>) -> Self {
        self.timing.baselines.compare = Some(name.into());
        self
    }

    /// Records no memory figures (they cost about 4 µs a case).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().record_memory(false);
    /// # let _ = runner;
    /// ```
    pub fn record_memory(mut self, record: bool) -> Self {
        self.skip_memory = !record;
        self
    }

    /// Prints nothing: no progress lines, no table.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().quiet(true);
    /// # let _ = runner;
    /// ```
    pub fn quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }

    /// Also writes the record to `path` (`.json`, or `.ndjson` for one case
    /// per line).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().out("results/run.json");
    /// # let _ = runner;
    /// ```
    pub fn out(mut self, path: impl Into<PathBuf>) -> Self {
        self.out = Some(path.into());
        self
    }

    /// Names the run (the record's `run`; the bench target's name under
    /// `cargo bench`).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().name("nightly");
    /// # let _ = runner;
    /// ```
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Writes the record to `dir/latest.json` after each run, as bench
    /// binaries do under `target/nnbench/<bench>/`.
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().latest_dir("target/nnbench/mine");
    /// # let _ = runner;
    /// ```
    pub fn latest_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.latest_dir = Some(dir.into());
        self
    }

    /// The folder whose git state the record's context describes (default:
    /// the current folder).
    ///
    /// # Example
    ///
    /// ```
    /// let runner = nnbench::Runner::new().repo_dir(env!("CARGO_MANIFEST_DIR"));
    /// # let _ = runner;
    /// ```
    pub fn repo_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.repo_dir = Some(dir.into());
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
        let cases = registry::cases();
        let selected = self.select(&cases);
        Schedule::static_order(&selected)
            .into_iter()
            .map(|at| selected[at].id.clone())
            .collect()
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
        if let Some(out) = &self.out {
            OutputFormat::of(out)?;
        }
        if let Some(dir) = &self.memo_cache.dir {
            memo::set_disk_dir(dir.clone());
        }
        if self.memo_cache.clear {
            memo::clear_disk()?;
        }
        let started_at = context::now_rfc3339();
        let repo_dir = self.repo_dir.clone().unwrap_or_else(|| PathBuf::from("."));
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
        let selected = self.select(&cases);

        let mut family_sizes: HashMap<&str, usize> = HashMap::new();
        for case in &selected {
            *family_sizes.entry(&case.family.name).or_default() += 1;
        }
        let mut family_seen: HashMap<&str, usize> = HashMap::new();
        let mut console = Console::new(self.quiet, selected.len());
        let mut schedule = Schedule::new(&selected);
        let mut records = Vec::with_capacity(selected.len());
        let context = match context {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|_| context::collect(&repo_dir, command)),
            Err(_) => context::collect(&repo_dir, command),
        };
        let cache = memo::global_cache();
        let stats_before = cache.stats();
        let settings = case::Settings {
            keep_memos: self.keep_memos,
            memo_budget: self.memo_budget,
            record_memory: !self.skip_memory,
            timing: &self.timing,
        };
        let mut engine = Engine::new(self.timing.baselines.clone());
        while let Some(at) = schedule.next(|m| cache.resident_bytes(m)) {
            let case = selected[at];
            let unused = schedule.finish(at);
            let family = case.family.name.as_str();
            let index = family_seen.entry(family).or_default();
            let place = case::Place {
                family_size: family_sizes[family],
                family_index: *index,
            };
            *index += 1;
            let record = case::run(case, place, &unused, &settings, &mut engine);
            console.case(&record);
            records.push(record);
        }

        engine.finish();
        let record = RunRecord {
            schema: SCHEMA,
            run: self.name.clone().unwrap_or_else(default_run_name),
            started_at,
            context,
            cases: records,
            memo: memo_record(stats_before, cache.stats()),
        };
        console.summary(&record);
        if self.print_cache {
            println!("\n{}", memo::report());
        }
        if let Some(dir) = &self.latest_dir {
            record.write(dir.join("latest.json"))?;
        }
        if let Some(out) = &self.out {
            record.write(out)?;
        }
        Ok(record)
    }

    fn select<'a>(&self, cases: &'a [Case]) -> Vec<&'a Case> {
        cases.iter().filter(|c| self.selection.selects(c)).collect()
    }

    pub(crate) fn set_selection(mut self, selection: Selection) -> Self {
        self.selection = selection;
        self
    }
}

/// What a run does with the disk tier.
#[derive(Clone, Debug, Default)]
struct MemoCacheSetting {
    /// `Some(None)`: off; `Some(Some(dir))`: there; `None`: as it is.
    dir: Option<Option<PathBuf>>,
    clear: bool,
}

/// The cache's counters over the run. Other threads of the process (tests
/// running side by side) count too; a bench binary runs alone.
fn memo_record(before: memo::MemoStats, after: memo::MemoStats) -> RunMemoRecord {
    RunMemoRecord {
        hits: after.hits - before.hits,
        misses: after.misses - before.misses,
        disk_hits: after.disk_hits - before.disk_hits,
        computes: after.computes - before.computes,
        spills: after.spills - before.spills,
        failures: after.failures - before.failures,
        evictions: after.evictions - before.evictions,
        entries_at_end: after.entries,
        resident_bytes_at_end: after.resident_bytes,
        disk_bytes_at_end: after.disk_bytes,
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
