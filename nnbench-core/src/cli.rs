//! The command line of bench binaries made by `nnbench::main!()`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::runner::select::Selection as CaseSelection;
use crate::{Runner, Sampling, Timing};

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
    list: bool,
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
    /// Let criterion sample every case.
    #[arg(long, help_heading = "Timing")]
    sampled: bool,
    /// First-call duration from which automatic timing keeps one call
    /// (seconds, or a duration such as 250ms).
    #[arg(long, value_name = "DURATION", value_parser = duration, help_heading = "Timing")]
    auto_threshold: Option<Duration>,
    /// Samples criterion takes (at least 10).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(10..), help_heading = "Timing")]
    sample_size: Option<u64>,
    /// Warm-up before sampling (seconds, or a duration such as 500ms).
    #[arg(long, value_name = "DURATION", value_parser = duration, help_heading = "Timing")]
    warm_up_time: Option<Duration>,
    /// Time spent sampling (seconds, or a duration such as 2s).
    #[arg(long, value_name = "DURATION", value_parser = duration, help_heading = "Timing")]
    measurement_time: Option<Duration>,
    /// Save criterion's estimates under this baseline.
    #[arg(long, value_name = "NAME", help_heading = "Timing")]
    save_baseline: Option<String>,
    /// Compare against this baseline, without overwriting it.
    #[arg(
        long,
        value_name = "NAME",
        conflicts_with = "save_baseline",
        help_heading = "Timing"
    )]
    baseline: Option<String>,

    /// Given by `cargo bench`: measure. Without it (`cargo test --benches`)
    /// each case runs once, quickly.
    #[arg(long, help_heading = "Test harness compatibility")]
    bench: bool,
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

/// Seconds (`1.5`) or a duration (`500ms`, `2s`).
fn duration(text: &str) -> Result<Duration, String> {
    let parsed = match text.parse::<f64>() {
        Ok(seconds) => Duration::try_from_secs_f64(seconds).map_err(|e| e.to_string()),
        Err(_) => humantime::parse_duration(text).map_err(|e| e.to_string()),
    };
    match parsed {
        Ok(d) if d.is_zero() => Err("must be longer than zero".into()),
        Ok(d) => Ok(d),
        Err(e) => Err(format!(
            "{e} (write seconds, such as 1.5, or a duration, such as 500ms)"
        )),
    }
}

impl Cli {
    pub(crate) fn try_parse_args(
        args: impl IntoIterator<Item = OsString>,
    ) -> Result<Self, clap::Error> {
        Self::try_parse_from(args)
    }

    pub(crate) fn runner(&self) -> Runner {
        let mut runner = Runner::new()
            .set_selection(CaseSelection {
                filters: self.filters.clone(),
                skip: self.skip.clone(),
                tags: self.tags.clone(),
                exact: self.exact,
                nothing: self.ignored,
            })
            .record_memory(!self.no_memory)
            .test_mode(!self.bench)
            .sampling(Sampling {
                sample_size: self.sample_size.map(|n| n as usize),
                warm_up: self.warm_up_time,
                measurement_time: self.measurement_time,
            })
            .keep_memos(self.keep_memos)
            .print_cache(self.print_cache || env_flag("NNBENCH_PRINT_CACHE_SIZE"))
            .quiet(self.quiet);
        if self.once {
            runner = runner.timing(Timing::Once);
        }
        if self.sampled {
            runner = runner.timing(Timing::Sampled);
        }
        if let Some(threshold) = self.auto_threshold {
            runner = runner.auto_threshold(threshold);
        }
        if let Some(budget) = self.memo_budget {
            runner = runner.memo_budget(budget);
        }
        if let Some(dir) = &self.memo_cache_dir {
            runner = runner.memo_cache_dir(dir);
        }
        if self.no_memo_cache {
            runner = runner.no_memo_cache();
        }
        runner = runner.clear_memo_cache(self.memo_cache.is_some());
        if let Some(name) = &self.save_baseline {
            runner = runner.save_baseline(name);
        }
        if let Some(name) = &self.baseline {
            runner = runner.baseline(name);
        }
        match &self.out {
            Some(out) => runner.out(out),
            None => runner,
        }
    }
}

/// Parses the command line, runs, writes `latest.json` (when measuring:
/// a test-mode run must not replace the figures of the last real one),
/// exits: 0 when every case passed, 1 when any failed or the record could
/// not be written, 2 for bad flags.
pub(crate) fn main(bench: &str, manifest_dir: &str) -> ! {
    let cli = Cli::try_parse().unwrap_or_else(|e| e.exit());
    let runner = cli.runner();
    if cli.list {
        for id in runner.list() {
            println!("{id}: benchmark");
        }
        std::process::exit(0);
    }
    let mut runner = runner.name(bench).repo_dir(manifest_dir);
    if cli.bench {
        runner = runner.latest_dir(crate::target_dir().join("nnbench").join(bench));
    }
    let outcome = runner.run();
    if let Some(message) = failure_message(&outcome) {
        eprintln!("error: {message}");
        std::process::exit(1);
    }
    std::process::exit(0)
}

/// Why the bench binary exits non-zero, if it does: a case failed, or the
/// run could not be made or recorded.
fn failure_message(outcome: &crate::Result<crate::RunRecord>) -> Option<String> {
    match outcome {
        Ok(record) if record.failed() > 0 => Some(format!(
            "{} of {} cases failed",
            record.failed(),
            record.cases.len()
        )),
        Ok(_) => None,
        Err(error) => Some(format!("{error:#}")),
    }
}

/// Whether the environment variable is set to something other than `0` or empty.
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{CaseError, Stage};

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

    #[test]
    fn the_exit_status_follows_failed_cases_and_errors() {
        let mut record: crate::RunRecord = serde_json::from_str(
            r#"{"schema":1,"run":"r","started_at":"t","context":{"host":{"arch":"x","cores":1},"git":null,"nnbench":"0"},"cases":[]}"#,
        )
        .unwrap();
        assert_eq!(failure_message(&Ok(record.clone())), None);
        let mut case: crate::CaseRecord = serde_json::from_value(serde_json::json!({
            "id": "a", "family": "a", "params": {}, "tags": [], "value": null, "error": null,
            "time": {"mode": "once", "samples": 0, "iters": 0, "mean_ns": 0.0, "median_ns": 0.0,
                     "std_ns": 0.0, "min_ns": 0.0, "max_ns": 0.0},
            "load_ns": 0,
            "memory": {"rss_before_bytes": null, "rss_peak_bytes": null, "rss_after_bytes": null,
                       "heap_peak_bytes": null, "gpu_peak_bytes": null},
            "memo": {"hits": 0, "misses": 0, "evicted": []}
        }))
        .unwrap();
        record.cases.push(case.clone());
        case.error = Some(CaseError {
            stage: Stage::Call,
            message: "boom".into(),
            causes: vec![],
            also: vec![],
        });
        record.cases.push(case);
        assert_eq!(
            failure_message(&Ok(record)).as_deref(),
            Some("1 of 2 cases failed")
        );
        let error = Err(crate::Error::msg("disk full").context("writing run.json"));
        assert_eq!(
            failure_message(&error).as_deref(),
            Some("writing run.json: disk full")
        );
    }
}
