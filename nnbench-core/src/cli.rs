//! The command line of bench binaries made by `nnbench::main!()`: flags
//! become plain [`RunSettings`] that the runner consumes, as criterion's
//! `cli::Args` and divan's `cli::command()` do.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::compare::Thresholds;
use crate::memo::DiskTier;
use crate::settings::{Baselines, RunSettings, RunTiming, Sampling, Selection, Timing};

/// Flags of a bench binary: `cargo bench [--bench NAME] -- [FLAGS]`.
#[derive(Debug, Parser)]
#[command(
    name = "nnbench",
    about = "Runs the benchmarks registered with #[benchmark], #[parametrize] and #[product]",
    disable_version_flag = true
)]
pub(crate) struct Cli {
    /// Run only cases whose id contains any of these.
    #[arg(value_name = "FILTER")]
    filters: Vec<String>,
    /// Match filters and --skip against whole ids.
    #[arg(long)]
    exact: bool,
    /// Leave out cases whose id contains this (repeatable).
    #[arg(long, value_name = "PATTERN")]
    skip: Vec<String>,
    /// Run only cases with any of these tags (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    tags: Vec<String>,
    /// List the selected cases and exit.
    #[arg(long)]
    pub list: bool,
    /// Keep memos in the cache after their last use.
    #[arg(long)]
    keep_memos: bool,
    /// Print, at the end, what the memo cache holds and did, per memo type
    /// (also NNBENCH_PRINT_CACHE_SIZE=1).
    #[arg(long)]
    print_cache: bool,
    /// Keep resident memos within SIZE (such as 8GiB), evicting the least
    /// recently used first.
    #[arg(long, value_name = "SIZE", env = "NNBENCH_MEMO_BUDGET", value_parser = size)]
    memo_budget: Option<u64>,
    /// Keep the GPU memory of resident memos (tensors on a device) within
    /// SIZE, evicting the least recently used first.
    #[arg(long, value_name = "SIZE", env = "NNBENCH_MEMO_GPU_BUDGET", value_parser = size)]
    memo_gpu_budget: Option<u64>,
    /// Run only the cases that the last run, interrupted or killed, did not
    /// finish (its finished cases are kept in
    /// target/nnbench/<bench>/progress.ndjson as it goes).
    #[arg(long)]
    resume: bool,
    /// While a case runs, load the next case's memos in the background,
    /// when the memo budget (or the memory available) has room for them:
    /// the load shares the machine with the timed case.
    #[arg(long)]
    prefetch: bool,
    /// Run the cases in a worker process started from this binary: a case
    /// that aborts, segfaults or is killed (out of memory) is recorded as
    /// failed with its cause, and a new worker runs the cases after it.
    #[arg(long, help_heading = "Failures")]
    isolate: bool,
    /// The longest a case may run (seconds, or a duration such as 10m):
    /// with --isolate its worker is killed and the run goes on; without,
    /// the case is recorded as timed out and the run stops there.
    #[arg(long, value_name = "DURATION", value_parser = duration, help_heading = "Failures")]
    case_timeout: Option<Duration>,
    /// Limit each worker's address space to SIZE (such as 16GiB): a case
    /// that allocates past it fails as out of memory, not the machine.
    #[arg(long, value_name = "SIZE", value_parser = size, requires = "isolate", help_heading = "Failures")]
    worker_memory_limit: Option<u64>,
    /// Run shard K of N of the selected cases (K counts from 1), split so
    /// that cases sharing a memo stay in one shard: `auto` (or `auto/N`)
    /// reads the scheduler's index (a Slurm job array, a Kubernetes
    /// indexed Job). Every shard of a sweep plans the same split.
    #[arg(
        long,
        value_name = "K/N",
        env = "NNBENCH_SHARD",
        help_heading = "Shards"
    )]
    shard: Option<crate::shard::Shard>,
    /// Balance the shards by the times this record, baseline or history
    /// measured (give every shard the same one); without it, by case count.
    #[arg(
        long,
        value_name = "FILE",
        env = "NNBENCH_SHARD_COSTS",
        requires = "shard",
        help_heading = "Shards"
    )]
    pub shard_costs: Option<PathBuf>,
    /// Folder of the disk tier of persisted memos (default target/nnbench/memo-cache).
    #[arg(long, value_name = "DIR", conflicts_with = "no_memo_cache")]
    memo_cache_dir: Option<PathBuf>,
    /// Keep persisted memos in memory only.
    #[arg(long)]
    no_memo_cache: bool,
    /// `clear`: empty the disk tier before the run.
    #[arg(long, value_name = "ACTION", value_parser = ["clear"])]
    memo_cache: Option<String>,
    /// Also write the record to FILE (.json, or .ndjson for one case per line).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print no progress lines and no table.
    #[arg(short, long)]
    quiet: bool,
    /// Record no memory figures.
    #[arg(long)]
    no_memory: bool,

    /// Time every case with one call.
    #[arg(long, conflicts_with = "sampled", help_heading = "Timing")]
    once: bool,
    /// Let criterion sample every case, with its settings, analysis and
    /// reports (otherwise nnbench's sampler samples, and stops once the
    /// median is known within 1%).
    #[arg(long, help_heading = "Timing")]
    sampled: bool,
    /// First-call duration from which automatic timing keeps one call
    /// (seconds, or a duration such as 250ms).
    #[arg(long, value_name = "DURATION", value_parser = duration, help_heading = "Timing")]
    auto_threshold: Option<Duration>,
    /// Samples to take: at least this many (default 10), or with
    /// --sampled exactly this many (criterion's default 100; 10 or more).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(10..), help_heading = "Timing")]
    sample_size: Option<u64>,
    /// Warm-up before sampling (seconds, or a duration such as 500ms;
    /// default 25ms, 3s with --sampled).
    #[arg(long, value_name = "DURATION", value_parser = duration, help_heading = "Timing")]
    warm_up_time: Option<Duration>,
    /// The most time spent sampling a case (default 1s), or with --sampled
    /// the time criterion spends (default 5s); seconds or a duration.
    #[arg(long, value_name = "DURATION", value_parser = duration, help_heading = "Timing")]
    measurement_time: Option<Duration>,
    /// Save the run record as baseline NAME
    /// (target/nnbench/<bench>/baselines/NAME.json), and criterion's
    /// estimates under the same name.
    #[arg(long, value_name = "NAME", value_parser = baseline_name, help_heading = "Baselines")]
    save_baseline: Option<String>,
    /// Compare the run against baseline NAME at its end, without
    /// overwriting it; print what changed and exit 1 if a case regressed.
    #[arg(
        long,
        value_name = "NAME",
        value_parser = baseline_name,
        conflicts_with = "save_baseline",
        help_heading = "Baselines"
    )]
    baseline: Option<String>,
    /// Add the run to the history when it ends: the file NNBENCH_HISTORY
    /// names, else target/nnbench/history.sqlite, or --history=FILE.
    /// `nnbench history` reads it.
    #[arg(
        long,
        value_name = "FILE",
        num_args = 0..=1,
        require_equals = true,
        help_heading = "Baselines"
    )]
    history: Option<Option<PathBuf>>,
    /// Thresholds for --baseline over the defaults, as `nnbench compare
    /// --fail-on` takes them: time=5%,rss=2%+4MiB,gpu=off,value=0.01.
    #[arg(long, value_name = "SPEC", value_parser = thresholds, requires = "baseline", help_heading = "Baselines")]
    fail_on: Option<Thresholds>,

    /// Given by `cargo bench`: measure. Without it (`cargo test --benches`)
    /// each case runs once, quickly.
    #[arg(long, help_heading = "Test harness compatibility")]
    pub bench: bool,
    /// Run only ignored cases; nnbench ignores none, so this selects nothing.
    #[arg(long, help_heading = "Test harness compatibility")]
    ignored: bool,
    /// Accepted for libtest compatibility (every case is included).
    #[arg(long, hide = true)]
    include_ignored: bool,
    /// Accepted for libtest compatibility (output is never captured).
    #[arg(long, hide = true)]
    nocapture: bool,
    /// Accepted for libtest compatibility (cases run one at a time).
    #[arg(long, hide = true, value_name = "N")]
    test_threads: Option<usize>,
    /// The format of --list: `pretty` or `terse` (the same: `ID: benchmark`).
    #[arg(long, value_name = "FORMAT", value_parser = ["pretty", "terse"], help_heading = "Test harness compatibility")]
    format: Option<String>,
}

/// Bytes (`1073741824`) or a size with its unit (`8GiB`, `512 MB`).
fn size(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<bytesize::ByteSize>()
        .map(|s| s.as_u64())
        .map_err(|e| format!("{e} (write a size such as 8GiB or 512MiB)"))
}

/// A baseline's name becomes a file name: letters, digits, `-`, `_`, `.`.
fn baseline_name(text: &str) -> Result<String, String> {
    let fine = !text.is_empty()
        && !text.starts_with('.')
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if fine {
        Ok(text.to_owned())
    } else {
        Err("a baseline's name is made of letters, digits, '-', '_' and '.'".into())
    }
}

fn thresholds(spec: &str) -> Result<Thresholds, String> {
    Thresholds::default()
        .with_spec(spec)
        .map_err(|e| e.to_string())
}

/// Seconds (`1.5`) or a duration (`500ms`, `2s`), as the attributes take them.
fn duration(text: &str) -> Result<Duration, String> {
    nnbench_units::parse_duration(text)
}

impl Cli {
    /// Parses `args`, the program's name first.
    pub(crate) fn try_parse_args(
        args: impl IntoIterator<Item = OsString>,
    ) -> Result<Self, clap::Error> {
        Self::try_parse_from(args)
    }

    /// The run these flags ask for.
    pub(crate) fn settings(&self) -> RunSettings {
        let timing = if self.once {
            Some(Timing::Once)
        } else if self.sampled {
            Some(Timing::Sampled)
        } else {
            None
        };
        let disk_tier = match (&self.memo_cache_dir, self.no_memo_cache) {
            (_, true) => DiskTier::Off,
            (Some(dir), false) => DiskTier::At(dir.clone()),
            (None, false) => DiskTier::Default,
        };
        RunSettings {
            selection: Selection {
                filters: self.filters.clone(),
                skip: self.skip.clone(),
                tags: self.tags.clone(),
                exact: self.exact,
                nothing: self.ignored,
            },
            keep_memos: self.keep_memos,
            memo_budget: self.memo_budget,
            memo_gpu_budget: self.memo_gpu_budget,
            prefetch: self.prefetch,
            resume: self.resume,
            isolate: self.isolate,
            case_timeout: self.case_timeout,
            worker_memory_limit: self.worker_memory_limit,
            disk_tier,
            clear_disk_tier: self.memo_cache.is_some(),
            print_cache: self.print_cache || env_flag("NNBENCH_PRINT_CACHE_SIZE"),
            skip_memory: self.no_memory,
            timing: RunTiming {
                timing,
                sampling: Sampling {
                    sample_size: self.sample_size.map(|n| n as usize),
                    warm_up: self.warm_up_time,
                    measurement_time: self.measurement_time,
                },
                auto_threshold: self
                    .auto_threshold
                    .unwrap_or(crate::settings::DEFAULT_AUTO_THRESHOLD),
                test_mode: !self.bench,
                baselines: Baselines {
                    save: self.save_baseline.clone(),
                    compare: self.baseline.clone(),
                },
            },
            fail_on: self.fail_on.clone(),
            history: self.history.clone().map(Option::unwrap_or_default),
            quiet: self.quiet,
            out: self.out.clone(),
            shard: self.shard,
            ..RunSettings::default()
        }
    }
}

/// Whether the environment variable is set to something other than `0` or empty.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_args(
            std::iter::once("bench")
                .chain(args.iter().copied())
                .map(OsString::from),
        )
    }

    #[test]
    fn without_bench_the_binary_is_in_test_mode() {
        assert!(!parse(&[]).unwrap().bench);
        assert!(parse(&["--bench"]).unwrap().bench);
        assert!(parse(&["accuracy", "--bench", "--quiet"]).unwrap().quiet);
    }

    #[test]
    fn sizes_and_durations_parse_in_the_forms_criterion_and_people_use() {
        assert_eq!(size("8GiB"), Ok(8 << 30));
        assert_eq!(size("512 MiB"), Ok(512 << 20));
        assert_eq!(size("1000"), Ok(1000));
        assert!(size("lots").unwrap_err().contains("8GiB"));
        assert_eq!(duration("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(duration("0").is_err());
        assert!(duration("-1").is_err());
    }
}
