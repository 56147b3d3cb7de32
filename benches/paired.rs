//! How well each way of gating time tells a slower build from an
//! unchanged one on this machine, measured side by side in one run.
//!
//! The "builds" are this bench binary behind scripts that set how much
//! more work its `kernel` case does (0, 1, 2, 5 or 10% more; see
//! `support/paired_builds.rs`): the base does none more, the head the
//! change. Each trial judges one pair of builds
//! with one method, trials of every method and change interleaved:
//!
//! - paired wall time: `--paired BASE --paired-clock wall`;
//! - paired CPU time: `--paired BASE --paired-clock cpu`, at the default
//!   limit (3%) and at `--fail-on time=1%`;
//! - instruction counts: `--paired BASE --instructions` (one call counted
//!   under Callgrind on each build);
//! - the stored baseline: the base run with `--save-baseline`, then the
//!   head with `--baseline`, each a plain run.
//!
//! It prints, per method, the false alarms among identical builds, the
//! trials that caught each change, the smallest change caught 19 times in
//! 20, and what a run costs; the same for the tight limits of paired CPU
//! time (2% at a 1% limit, 1% at 0.5%) beside a cold build of the
//! workspace (`support/beside_build.rs`), with each rate's 95% bounds;
//! what a paired run costs against one plain run of the same case; and,
//! for a sweep of three slow models of 64 MiB (`support/fixture_sweep.rs`),
//! paired without a flag, the verdicts beside the times each build built
//! each model, and the paired run's time against a plain run's.
//!
//! `cargo bench --bench paired` (twenty trials of each);
//! `NNBENCH_PAIRED_TRIALS=N` for another number.

#[path = "support/beside_build.rs"]
mod beside_build;
#[path = "support/fixture_sweep.rs"]
mod fixture_sweep;
#[path = "support/harness.rs"]
mod harness;
use harness::{Goal, Rate};
#[path = "support/paired_builds.rs"]
mod paired_builds;
use harness::stats;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::RunRecord;
use nnbench_vocab::format_ns;
use paired_builds::{Method, build, trial};
use stats::{median, rate_bounds};

/// The changes `method` is tried on, in tenths of a percent: instruction
/// counts on a 1% change too. In test mode, the largest alone: every
/// method's run is tried once, and the trial is what costs.
fn changes(method: Method) -> &'static [u64] {
    match method {
        _ if harness::test_mode() => &[100],
        Method::Instructions => &[0, 10, 20, 50, 100],
        _ => &[0, 20, 50, 100],
    }
}

/// What one method did over its trials: per change, the trials that
/// called the head slower; and the seconds each trial took.
struct Tally {
    caught: Vec<(u64, usize)>,
    seconds: Vec<f64>,
}

fn judge(trials: usize, valgrind: bool) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let methods: Vec<Method> = Method::ALL
        .into_iter()
        .filter(|m| valgrind || !matches!(m, Method::Instructions))
        .collect();
    let mut tallies: Vec<Tally> = methods
        .iter()
        .map(|m| Tally {
            caught: changes(*m).iter().map(|&c| (c, 0)).collect(),
            seconds: Vec::new(),
        })
        .collect();
    // Trial by trial, every method and change in turn: a slow spell of the
    // machine falls on all of them alike.
    for _ in 0..trials {
        for (method, tally) in methods.iter().zip(&mut tallies) {
            for (change, caught) in &mut tally.caught {
                let trial = trial(*method, dir.path(), *change)?;
                *caught += usize::from(trial.regressed);
                tally.seconds.push(trial.seconds);
            }
        }
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "method (its limit)",
        "false alarms",
        "1% caught",
        "2% caught",
        "5% caught",
        "10% caught",
        "smallest caught every trial",
        "a trial",
    ]);
    let mut smallest = Vec::new();
    for (method, tally) in methods.iter().zip(&tallies) {
        let of = |change: u64| {
            tally
                .caught
                .iter()
                .find(|(c, _)| *c == change)
                .map(|(_, n)| *n)
        };
        let cell = |change: u64| of(change).map_or("-".into(), |n| format!("{n} of {trials}"));
        // The smallest change caught in every trial: what the trials saw,
        // with the catch rate's bound below, not a verdict on a count.
        let caught_well = tally
            .caught
            .iter()
            .filter(|(c, n)| *c > 0 && *n == trials)
            .map(|(c, _)| *c)
            .min();
        let name = format!("{} ({})", method.name(), method.limit());
        table.add_row([
            name.clone(),
            cell(0),
            cell(10),
            cell(20),
            cell(50),
            cell(100),
            caught_well.map_or("none of those tried".into(), |c| {
                format!("{}%", c as f64 / 10.0)
            }),
            format_ns(median(&tally.seconds) * 1e9),
        ]);
        smallest.push((name, of(0), caught_well));
    }
    harness::note(format!(
        "{trials} trials of each method (at its limit) on each change of a ~100 µs single-threaded case, interleaved:"
    ));
    harness::table(&table);
    for (name, false_alarms, caught) in smallest {
        let alarms = false_alarms.unwrap_or(0);
        // Met only where the trials show it: the rate's 95% upper bound,
        // not the rate counted, within 1 in 20; the false_alarms section's
        // 400 trials can show what these cannot.
        let upper = rate_bounds(alarms, trials, 0.95).1;
        let judged = harness::rate(&name, alarms, trials, Rate::AtMost(0.05));
        harness::note(format!(
            "{name}: {alarms} false alarms in {trials} identical pairs, one-sided 95% upper bound {:.1}% (target at most 1 in 20) {judged}; smallest change caught in every trial: {}",
            100.0 * upper,
            caught.map_or("none of those tried".into(), |c| format!(
                "{}% (its catch rate at least {:.0}%, one-sided 95% bound)",
                c as f64 / 10.0,
                100.0 * rate_bounds(trials, trials, 0.95).0
            )),
        ));
    }
    beside_a_build(dir.path(), trials)?;
    cost(dir.path())?;
    sweep(dir.path())
}

/// The tight limits of paired CPU time beside a cold build: per method,
/// identical builds and the change it must catch, trials interleaved.
fn beside_a_build(dir: &Path, trials: usize) -> Result<(), String> {
    let tried = [(Method::PairedCpuTight, 20), (Method::PairedCpuHalf, 10)];
    // In test mode, the tighter alone: the first was tried above.
    let tried = &tried[usize::from(harness::test_mode())..];
    let build = if harness::test_mode() {
        None
    } else {
        Some(beside_build::Build::start()?)
    };
    // Per method: false alarms, then changes caught.
    let mut counts = [[0usize; 2]; 2];
    let mut seconds = [Vec::new(), Vec::new()];
    let mut loads = Vec::new();
    // The rounds of identical builds: each round's ratio by the median
    // wall-time samples and by the least CPU-time ones.
    let (mut by_medians, mut by_least) = (Vec::new(), Vec::new());
    for _ in 0..trials {
        for (((method, change), count), seconds) in tried.iter().zip(&mut counts).zip(&mut seconds)
        {
            for (slot, tenths) in [0, *change].into_iter().enumerate() {
                let trial = trial(*method, dir, tenths)?;
                count[slot] += usize::from(trial.regressed);
                seconds.push(trial.seconds);
                if tenths == 0 {
                    by_medians.extend(trial.rounds.0);
                    by_least.extend(trial.rounds.1);
                }
            }
            loads.push(beside_build::load());
        }
    }
    drop(build);
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "method (its limit)",
        "false alarms (one-sided 95% bounds)",
        "change",
        "caught (one-sided 95% bounds)",
        "a trial",
        "target: caught 19 in 20, at most 1 false alarm in 20",
    ]);
    let bounds = |k: usize| {
        let (low, high) = rate_bounds(k, trials, 0.95);
        format!("{k} of {trials} ({:.0}-{:.0}%)", 100.0 * low, 100.0 * high)
    };
    for (((method, change), count), seconds) in tried.iter().zip(counts).zip(&seconds) {
        let name = method.name();
        table.add_row([
            format!("{name} ({})", method.limit()),
            bounds(count[0]),
            format!("{}%", *change as f64 / 10.0),
            bounds(count[1]),
            format_ns(median(seconds) * 1e9),
            format!(
                "false alarms {}; caught {}",
                harness::rate(name, count[0], trials, Rate::AtMost(0.05)),
                harness::rate(name, count[1], trials, Rate::AtLeast(0.95))
            ),
        ]);
    }
    let machine = if harness::test_mode() {
        "again (test mode: no build)".to_owned()
    } else {
        format!(
            "beside a cold build of the workspace (load {:.1})",
            median(&loads)
        )
    };
    harness::note(format!(
        "{trials} trials of each at its limit, {machine}: identical builds, and a head that does the change more work:"
    ));
    harness::table(&table);
    let spread = |ratios: &[f64]| {
        let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
        let mean = logs.iter().sum::<f64>() / logs.len().max(1) as f64;
        let variance =
            logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (logs.len().max(2) - 1) as f64;
        100.0 * variance.sqrt()
    };
    harness::note(format!(
        "the same identical builds' {} rounds, {machine}: each round's ratio spread {:.1}% (standard deviation of its logarithm) by the builds' median wall-time samples, {:.1}% by their least CPU-time samples",
        by_least.len(),
        spread(&by_medians),
        spread(&by_least)
    ));
    Ok(())
}

/// The sweep of slow fixtures paired as `--paired BASE` does by default:
/// identical builds, alternating with plain runs of the sweep (their times
/// side by side); then a head 10% slower in one case; then identical
/// builds on new workers every round (`--paired-keep off`).
fn sweep(dir: &Path) -> Result<(), String> {
    let slower = "infer/model=Model(2),batch=2";
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "head",
        "regressed",
        "unchanged",
        "judged again on new workers",
        "builds of each model (head / base)",
        "rounds, all cases",
        "the run",
    ]);
    let row = |name: &str, run: &fixture_sweep::Sweep| {
        [
            name.to_owned(),
            if run.regressed.is_empty() {
                "none".into()
            } else {
                run.regressed.join(", ")
            },
            run.unchanged.to_string(),
            run.again.to_string(),
            run.builds
                .iter()
                .map(|(h, b)| format!("{h} / {b}"))
                .collect::<Vec<_>>()
                .join(", "),
            run.rounds.to_string(),
            format_ns(run.seconds * 1e9),
        ]
    };
    let pairs = if harness::test_mode() { 1 } else { 6 };
    let (mut ratios, mut plains, mut once_a_side, mut right) = (Vec::new(), Vec::new(), 0, 0);
    let mut plain_builds = [0; 3];
    let mut last = None;
    for _ in 0..pairs {
        let (seconds, builds) = fixture_sweep::plain(dir)?;
        plain_builds = builds;
        let run = fixture_sweep::pair(dir, None, None)?;
        ratios.push(run.seconds / seconds);
        plains.push(seconds);
        once_a_side += usize::from(run.builds.iter().all(|&(h, b)| h <= 1 && b <= 1));
        right += usize::from(run.regressed.is_empty());
        last = Some(run);
    }
    if let Some(run) = &last {
        table.add_row(row(
            &format!("identical, no flag (the last of {pairs} runs)"),
            run,
        ));
    }
    let changed = fixture_sweep::pair(dir, Some(slower), None)?;
    right += usize::from(changed.regressed == [slower]);
    table.add_row(row("10% slower in one case, no flag", &changed));
    let fresh = fixture_sweep::pair(dir, None, Some("off"))?;
    right += usize::from(fresh.regressed.is_empty());
    table.add_row(row(
        "identical, new workers every round (--paired-keep off)",
        &fresh,
    ));
    harness::note(format!(
        "a sweep of three models of 64 MiB, each built in memory in {}, two batch sizes each (six cases of ~100 µs and ~200 µs), paired as `--paired BASE` does without a flag (a model is built once a side, and again in each new worker that judges a case the kept ones called changed):",
        format_ns(fixture_sweep::build_ms() as f64 * 1e6)
    ));
    harness::table(&table);
    harness::note(format!(
        "verdicts right in {right} of {} runs (a check, not a rate); a plain run builds each model {}",
        pairs + 2,
        plain_builds
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    // One test-mode run that judged a case again (a kept worker's false
    // alarm, on a noisy machine) paid for new workers a full run pays for
    // only as often: its time says nothing of the kept workers' cost.
    let judged_again = last.as_ref().is_some_and(|run| run.again > 0);
    let verdict = if harness::test_mode() && judged_again {
        "not judged: the one test-mode run judged a case again on new workers".to_owned()
    } else {
        harness::judged(
            "paired sweep / plain sweep",
            &ratios,
            Goal::AtMost(2.0),
            3.0,
            |v| format!("{v:.2}x"),
        )
    };
    harness::note(format!(
        "identical builds paired, no flag, against a plain run of the sweep ({}), alternating: {:.2}x, {verdict}; each model built at most once a side in {once_a_side} of {pairs} runs (target: at least 19 in 20 {})",
        format_ns(median(&plains) * 1e9),
        median(&ratios),
        harness::rate(
            "models built once a side",
            once_a_side,
            pairs,
            Rate::AtLeast(0.95)
        )
    ));
    Ok(())
}

/// A paired run of the case (its workers kept, as by default) against one
/// plain run of it, and one with `--paired-keep off` (new workers every
/// round), whole processes alternating, each paired run judged on its own
/// ratio to the plain run beside it.
fn cost(dir: &Path) -> Result<(), String> {
    let runs = if harness::test_mode() { 1 } else { 25 };
    let base = build(dir, 0)?;
    let base_path = base.to_string_lossy().into_owned();
    let out = dir.join("cost.json");
    let time = |flags: &[&str]| -> Result<f64, String> {
        let started = Instant::now();
        let status = Command::new(&base)
            .env("CARGO_TARGET_DIR", dir)
            .args(["--bench", "--quiet", "--out"])
            .arg(&out)
            .args(flags)
            .args(["--exact", "kernel"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| e.to_string())?;
        if status.code().is_some_and(|c| c <= 1) {
            Ok(started.elapsed().as_secs_f64())
        } else {
            Err(format!("a run with {flags:?} ended with {status}"))
        }
    };
    let kept = || -> Result<bool, String> {
        let record = RunRecord::read(&out).map_err(|e| e.to_string())?;
        Ok(record.paired.is_some_and(|p| !p.kept.is_empty()))
    };
    let (mut plain, mut paired, mut fresh) = (Vec::new(), Vec::new(), Vec::new());
    let mut kept_runs = 0;
    for _ in 0..runs {
        plain.push(time(&[])?);
        paired.push(time(&["--paired", &base_path])?);
        kept_runs += usize::from(kept()?);
        fresh.push(time(&["--paired", &base_path, "--paired-keep", "off"])?);
    }
    // Each alternated pair's own ratio. A paired run takes eight rounds
    // or more, each of which times the case on both builds; a plain run
    // stops once its median is known to 1%.
    let ratio = |of: &[f64]| -> Vec<f64> { of.iter().zip(&plain).map(|(p, q)| p / q).collect() };
    harness::note(format!(
        "a paired run of the case {} (its workers kept in {kept_runs} of {runs} runs) against a plain run {}: {}; with new workers every round (--paired-keep off) {}: {:.2}x",
        format_ns(median(&paired) * 1e9),
        format_ns(median(&plain) * 1e9),
        harness::judged_on_full_runs(
            "paired / plain",
            &ratio(&paired),
            Goal::AtMost(2.5),
            |v| format!("{v:.2}x")
        ),
        format_ns(median(&fresh) * 1e9),
        median(ratio(&fresh)),
    ));
    Ok(())
}

fn main() {
    paired_builds::run_as_build("paired");
    if !harness::should_run("paired") {
        return;
    }
    let (trials, valgrind) = paired_builds::trials_and_valgrind("NNBENCH_PAIRED_TRIALS", 20);
    if let Err(message) = judge(trials, valgrind) {
        eprintln!("paired: {message}");
        std::process::exit(1);
    }
    harness::publish("paired");
}
