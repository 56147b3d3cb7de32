//! The `main` of a bench binary: `nnbench::main!()` expands to a call of
//! [`bench_main`].

use crate::compare::Verdict;
use crate::settings::{CommandLine, Settings};
use crate::{Result, RunRecord, Runner};

/// Parses the command line, runs, writes `latest.json` (when measuring:
/// a test-mode run must not replace the figures of the last real one),
/// exits: 0 when every case passed, 1 when any failed or the record could
/// not be written, 2 for bad flags.
pub fn bench_main(bench: &str, manifest_dir: &str) -> ! {
    let exit = match main(bench, manifest_dir) {
        Ok(()) => Exit::passed(),
        Err(exit) => exit,
    };
    if let Some(message) = &exit.message {
        eprintln!("error: {message}");
    }
    std::process::exit(exit.code)
}

/// How a bench binary ends other than with every case passed: its exit
/// status, and what it says first.
struct Exit {
    code: i32,
    message: Option<String>,
}

impl Exit {
    fn passed() -> Self {
        Exit {
            code: 0,
            message: None,
        }
    }

    /// Bad input: a flag, a baseline, a base build (2).
    fn bad_input(message: String) -> Self {
        Exit {
            code: 2,
            message: Some(message),
        }
    }

    /// A case failed or regressed, or the run could not be recorded (1).
    fn failed(message: String) -> Self {
        Exit {
            code: 1,
            message: Some(message),
        }
    }
}

/// The bench binary's stages: its settings, a worker's or a listing's
/// own ends, the checks before a run, the run, and the gates after it.
fn main(bench: &str, manifest_dir: &str) -> std::result::Result<(), Exit> {
    let command_line = CommandLine::parse_args(std::env::args_os()).unwrap_or_else(|e| e.exit());
    let settings = settings_of(&command_line, bench, manifest_dir)?;
    let runner = Runner::with_settings(settings.clone());
    if command_line.list {
        list(&runner, command_line.terse());
        return Ok(());
    }
    // Read before the run, so that a missing baseline costs no run.
    let baseline = crate::runner::report::gate::load(&settings).map_err(Exit::bad_input)?;
    // Judged against another build's record, this build is judged on the
    // fixtures it computes itself: a memo not declared independent of the
    // build is loaded only from this build's own disk entries.
    if baseline.is_some() {
        crate::memo::keep_per_build(true);
    }
    checked(&settings, bench).map_err(Exit::bad_input)?;
    let mut outcome = runner.run();
    // Workers the check of `--paired BASE` started for a run that did not
    // take them.
    #[cfg(unix)]
    crate::runner::paired::forget_checked();
    if let Ok(RunRecord {
        interrupted: Some(signal),
        ..
    }) = &outcome
    {
        return Err(Exit {
            code: match signal.as_str() {
                "SIGINT" => 128 + signal_hook::consts::SIGINT,
                "SIGTERM" => 128 + signal_hook::consts::SIGTERM,
                _ => 1,
            },
            message: Some(format!(
                "interrupted by {signal}; `--resume` runs the cases left"
            )),
        });
    }
    let paired = match &outcome {
        Ok(record) if record.paired.is_some() => {
            Some(crate::runner::report::gate::judge_paired(&settings, record))
        }
        _ => None,
    };
    if let Some(message) = failure_message(&outcome) {
        return Err(Exit::failed(message));
    }
    if let Some(comparison) = paired
        && comparison.regressed()
    {
        return Err(Exit::failed(format!(
            "{} of {} cases regressed against the base build {}",
            comparison.count(Verdict::Regressed),
            comparison.cases.len(),
            comparison.base.source
        )));
    }
    if let (Ok(record), Some((name, base))) = (&mut outcome, baseline) {
        let comparison = crate::runner::report::gate::judge(&settings, &name, &base, record)
            .map_err(|error| Exit::failed(format!("{error:#}")))?;
        if comparison.regressed() {
            return Err(Exit::failed(format!(
                "{} of {} cases regressed against baseline {name}",
                comparison.count(Verdict::Regressed),
                comparison.cases.len()
            )));
        }
    }
    Ok(())
}

/// The run's settings, from the command line and the bench: where it
/// writes, and whether Ctrl-C stops it cleanly. A worker runs its
/// supervisor's cases here and never returns.
fn settings_of(
    command_line: &CommandLine,
    bench: &str,
    manifest_dir: &str,
) -> std::result::Result<Settings, Exit> {
    let mut settings = command_line.settings();
    settings.output.name = Some(bench.to_owned());
    settings.output.repo_dir = Some(manifest_dir.into());
    settings.process.bench_binary = true;
    // A tool that runs the bench for its own ends (bisect) keeps what the
    // run writes out of the user's own `latest.json` and progress.
    let mut dir = std::env::var_os("NNBENCH_LATEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| crate::paths::bench_dir(bench));
    // Shards run side by side on one machine keep apart their latest
    // record, progress and baselines.
    if let Some(shard) = settings.sharding.shard {
        dir = dir.join(format!("shard-{}-of-{}", shard.index(), shard.count()));
    }
    // A worker draws the flamegraphs of the cases it runs where its
    // supervisor would.
    settings.profiling.dir = Some(dir.join("profiles"));
    #[cfg(unix)]
    if let Some(socket) = std::env::var_os(crate::runner::workers::WORKER_ENV) {
        // SAFETY: the bench binary's `main` starts here, before any thread
        // that could read the environment. A process the worker's cases
        // start must not take itself for a worker.
        unsafe { std::env::remove_var(crate::runner::workers::WORKER_ENV) };
        // Its supervisor said what was renamed, once for the run.
        settings.renamed.clear();
        settings.process.interruptible = super::interrupt::install().is_ok();
        crate::runner::workers::worker::main(worker_settings(settings), socket.as_ref());
    }
    if let Some(path) = &settings.sharding.costs_file {
        let costs = crate::shard::ShardCosts::read(path, Some(bench))
            .map_err(|error| Exit::bad_input(error.to_string()))?;
        settings.sharding.costs = Some(costs);
    }
    if command_line.bench {
        settings.output.latest_dir = Some(dir);
        settings.process.interruptible = match super::interrupt::install() {
            Ok(()) => true,
            Err(e) => {
                eprintln!("warning: Ctrl-C will not stop the run cleanly: {e}");
                false
            }
        };
    }
    Ok(settings)
}

/// `--list`: the selected cases, as libtest lists tests, and the plan of
/// their loads after them (`terse`: the list alone).
fn list(runner: &Runner, terse: bool) {
    let listing = runner.listing();
    if let Some(line) = listing.shard {
        eprintln!("{line}");
    }
    for id in listing.ids {
        println!("{id}: benchmark");
    }
    // After the list, as libtest's count: `--format terse` is the list alone.
    if !terse && !listing.plan.is_empty() {
        println!();
        listing.plan.iter().for_each(|line| println!("{line}"));
    }
}

/// What is refused before any case runs: a flag this build cannot honour,
/// `--history`, a base build that cannot pair, valgrind missing.
fn checked(settings: &Settings, bench: &str) -> std::result::Result<(), String> {
    let checked = history_moved(settings, bench).and_then(|()| built_in(settings));
    #[cfg(unix)]
    let checked = checked
        .and_then(|()| crate::runner::paired::check_base(settings, bench))
        .and_then(|()| crate::runner::workers::valgrind::check(settings));
    checked
}

/// A worker runs the cases it is given, in this process's memo cache and
/// disk tier; the records, the progress file, `--out` and baselines are its
/// supervisor's.
#[cfg(unix)]
fn worker_settings(mut settings: Settings) -> Settings {
    settings.isolation.isolate = false;
    settings.isolation.case_timeout = None;
    settings.selection.resume = false;
    settings.memory.disk_tier_action = None;
    settings.output.latest_dir = None;
    settings.output.out = None;
    settings
}

/// Why the bench binary exits non-zero, if it does: a case failed, or the
/// run could not be made or recorded.
fn failure_message(outcome: &Result<RunRecord>) -> Option<String> {
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

/// A flag whose feature this build lacks is refused before any case runs.
fn built_in(settings: &Settings) -> Result<(), String> {
    #[cfg(not(all(unix, feature = "profile")))]
    if settings.profiling.profile {
        return Err(format!(
            "--profile: {}",
            crate::measure::profile::UNAVAILABLE
        ));
    }
    #[cfg(not(feature = "criterion"))]
    if settings.timing.forced.0 == Some(crate::settings::Timing::Criterion) {
        return Err(crate::runner::case::criterion_sampler::UNAVAILABLE.to_owned());
    }
    let _ = settings;
    Ok(())
}

/// `--history` is a step of the tool: a bench binary links no SQLite.
fn history_moved(settings: &Settings, bench: &str) -> Result<(), String> {
    let Some(file) = &settings.baselines.history else {
        return Ok(());
    };
    let into = file
        .as_ref()
        .map(|f| format!(" --history {}", f.display()))
        .unwrap_or_default();
    Err(format!(
        "--history: a bench run does not add itself to the history; the tool does, after the run: \
         `nnbench history add{into} {}` (`cargo install nnbench-cli`)",
        crate::paths::bench_dir(bench).join("latest.json").display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{CaseError, Stage};

    #[test]
    fn the_exit_status_follows_failed_cases_and_errors() {
        let mut record: RunRecord = serde_json::from_str(
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
        case.error = Some(Box::new(CaseError {
            stage: Stage::Call,
            message: "boom".into(),
            causes: vec![],
            also: vec![],
        }));
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
