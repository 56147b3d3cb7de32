//! What nnbench's sampler costs and what it gives, side by side in one run:
//!
//! 1. the wall time of a 10 × 10 × 10 grid of small kernels under the
//!    default timing (`auto`), run once first and again after each run
//!    of (2), against a goal of 60 s; beside it,
//!    criterion's (its time per case measured on the cases of (2), times
//!    the grid's cases); how the sampler stopped on the grid's cases, and
//!    whether each of a third of them (every third), sampled again
//!    under the default timing, has its median within the precision its
//!    record states of a long run of the same case right after it (300
//!    samples at least, 10 s at most), the claim the timing page makes;
//!    beside it, the grid's own medians against those long runs minutes
//!    later, which also holds what the machine moved in between;
//! 2. on a few of those cases, and on two heavier kernels, the median per
//!    call that nnbench's sampler records against the one a full criterion
//!    run (`--criterion`: 3 s of warm-up, 5 s of samples) records, in
//!    alternated runs: within 3%, judged on the 95% bounds of each case's
//!    ratios;
//! 3. the same runs: how far medians move from run to run, by each;
//! 4. the README's `cargo bench` (the seed sweep) as fresh processes, ten
//!    times: its three cases run one computation on models of one shape,
//!    so the first case's median, read in a process that has only just
//!    started, should lie within 10% of the other two's in every run.
//!    Each run is judged against itself.
//!
//! `cargo bench --bench sampling`

#[path = "support/harness.rs"]
mod harness;
use harness::Goal;
use harness::stats;

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::record::{CaseRecord, Clock, StopReason};
use nnbench::{RunRecord, Runner, Sampling, Timing};
use nnbench_vocab::format_ns;
use stats::{median, spread};

/// Some tens of nanoseconds of work, more with larger parameters.
#[nnbench::product(a = 0..10u64, b = 0..10u64, c = 0..10u64)]
fn grid(a: u64, b: u64, c: u64) -> u64 {
    (0..16 + 4 * a + b)
        .map(black_box)
        .fold(c, u64::wrapping_add)
}

/// Tens of microseconds: a sort of 4096 numbers that arrive shuffled.
#[nnbench::benchmark]
fn sort_4k() -> u64 {
    let mut values: Vec<u64> = (0..4096u64)
        .map(|i| black_box(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40))
        .collect();
    values.sort_unstable();
    values[2048]
}

/// Some hundreds of microseconds: a 96 × 96 matrix product.
#[nnbench::benchmark]
fn matmul_96() -> f64 {
    let a = ndarray::Array2::from_shape_fn((96, 96), |(i, j)| black_box((i * j) as f64));
    a.dot(&a).sum()
}

/// The cases both samplers measure.
const CHECKED: [&str; 5] = [
    "grid/a=0,b=0,c=0",
    "grid/a=5,b=5,c=5",
    "grid/a=9,b=9,c=9",
    "sort_4k",
    "matmul_96",
];

/// How many times each sampler measures the checked cases.
const RUNS: usize = 6;

/// Every how many cases of the grid the long run measures again.
const LONG_EVERY: usize = 3;

/// The share of cases whose median lies within their stated precision of
/// the long run's right after: 95% intervals, less what the machine moves
/// between the two.
const COVERED: f64 = 0.9;

/// The median of `case` on the clock its precision names, and that
/// precision (the wall clock's median and its interval where the sampler
/// stated none).
fn stated(case: &CaseRecord) -> Option<(f64, Clock, f64)> {
    let p = case.time.precision?;
    let median = match p.clock {
        Clock::Cpu => case.time.cpu_median_ns?,
        _ => case.time.median_ns,
    };
    Some((median, p.clock, p.reached))
}

/// Whether `case`'s median lies within the precision it states of
/// `reference`'s on the same clock (widened by the reference's own
/// precision); `None` where either states none.
fn within_stated(case: &CaseRecord, reference: &CaseRecord) -> Option<bool> {
    let (_, _, long_reached) = stated(reference)?;
    let (median, clock, reached) = stated(case)?;
    let long_median = match clock {
        Clock::Cpu => reference.time.cpu_median_ns?,
        _ => reference.time.median_ns,
    };
    Some((median - long_median).abs() <= (reached + long_reached) * long_median)
}

/// `(within, checked)` of `pairs` of a case and its reference.
fn coverage<'a>(pairs: impl Iterator<Item = (&'a CaseRecord, &'a CaseRecord)>) -> (usize, usize) {
    pairs
        .filter_map(|(case, reference)| within_stated(case, reference))
        .fold((0, 0), |(within, checked), ok| {
            (within + usize::from(ok), checked + 1)
        })
}

/// The long run of the case `id`: 300 samples at least, 10 s at most.
fn long_run(id: &str, test_mode: bool) -> CaseRecord {
    let runner = Runner::new().exact(true).test_mode(test_mode).sampling(
        Sampling::new()
            .sample_size(if test_mode { 10 } else { 300 })
            .measurement_time(std::time::Duration::from_secs(10)),
    );
    only(run(runner.filter(id)), id)
}

/// The one case of `record`, `id`.
fn only(record: RunRecord, id: &str) -> CaseRecord {
    record
        .cases
        .into_iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("{id} ran"))
}

fn run(runner: Runner) -> RunRecord {
    let record = runner
        .quiet(true)
        .memory(false)
        .run()
        .unwrap_or_else(|e| panic!("run: {e:#}"));
    assert_eq!(record.failed(), 0, "every case runs");
    record
}

/// Medians per call of the checked cases, under `timing` (`None`: the
/// default).
fn checked_medians(timing: Option<Timing>, test_mode: bool) -> BTreeMap<&'static str, f64> {
    let mut runner = Runner::new().exact(true).test_mode(test_mode);
    for id in CHECKED {
        runner = runner.filter(id);
    }
    if let Some(timing) = timing {
        runner = runner.timing(timing);
    }
    let record = run(runner);
    CHECKED
        .iter()
        .map(|&id| {
            let case = record.case(id).unwrap_or_else(|| panic!("{id} ran"));
            (id, case.time.median_ns)
        })
        .collect()
}

fn main() {
    if !harness::should_run("sampling") {
        return;
    }
    let test_mode = harness::test_mode();

    let started = Instant::now();
    let grid = run(Runner::new().filter("grid/").test_mode(test_mode));
    let grid_wall = started.elapsed();
    let samples: Vec<f64> = grid.cases.iter().map(|c| c.time.samples as f64).collect();
    let stopped = |reason: StopReason| {
        grid.cases
            .iter()
            .filter(|c| c.time.precision.is_some_and(|p| p.stopped_by == reason))
            .count()
    };
    let on_cpu = grid
        .cases
        .iter()
        .filter(|c| c.time.precision.is_some_and(|p| p.clock == Clock::Cpu))
        .count();
    // Each checked case sampled again as the grid samples it, then at
    // length: the two see the same machine.
    let (mut again, mut long) = (Vec::new(), Vec::new());
    for case in grid.cases.iter().step_by(LONG_EVERY) {
        let default = Runner::new().exact(true).test_mode(test_mode);
        again.push(only(run(default.filter(&case.id)), &case.id));
        long.push(long_run(&case.id, test_mode));
    }
    let (within, checked) = coverage(again.iter().zip(&long));
    let (within_later, checked_later) = coverage(
        long.iter()
            .filter_map(|reference| Some((grid.case(&reference.id)?, reference))),
    );

    // Alternate the samplers, so that both see the same machine; and the
    // grid again after each, so that its wall time has runs spread over
    // the bench to bound.
    let (mut ours, mut criterions, mut criterion_walls) = (Vec::new(), Vec::new(), Vec::new());
    let mut grid_walls = vec![grid_wall.as_secs_f64()];
    for _ in 0..if test_mode { 1 } else { RUNS } {
        ours.push(checked_medians(None, test_mode));
        if !test_mode {
            let started = Instant::now();
            criterions.push(checked_medians(Some(Timing::Criterion), false));
            criterion_walls.push(started.elapsed().as_secs_f64() / CHECKED.len() as f64);
            let started = Instant::now();
            run(Runner::new().filter("grid/"));
            grid_walls.push(started.elapsed().as_secs_f64());
        }
    }
    let criterion_grid = if test_mode {
        "criterion's defaults: not measured in test mode".to_owned()
    } else {
        let per_case = median(&criterion_walls);
        format!(
            "criterion's defaults: {:.0} s ({per_case:.2} s a case, measured on the cases below)",
            per_case * grid.cases.len() as f64
        )
    };

    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(["figure", "measured", "target"]);
    table.add_row([
        format!(
            "{} cases of small kernels, default timing: wall",
            grid.cases.len()
        ),
        format!(
            "{:.1} s, the median of {} runs (the first's median {} samples a case)",
            median(&grid_walls),
            grid_walls.len(),
            median(&samples)
        ),
        format!(
            "{}; {criterion_grid}",
            harness::judged(
                "the grid",
                &grid_walls,
                Goal::AtMost(60.0),
                1.0,
                |v| format!("{v:.0} s")
            )
        ),
    ]);
    table.add_row([
        "  how the sampler stopped (the first run)".to_owned(),
        format!(
            "{} at 1% precision, {} on the machine's spread, {} at the time cap; {on_cpu} judged on the thread's CPU time",
            stopped(StopReason::Target),
            stopped(StopReason::Spread),
            stopped(StopReason::TimeCap)
        ),
        "the rule of the timing page".to_owned(),
    ]);
    table.add_row([
        format!(
            "  medians within their stated precision of a long run's right after (one case in {LONG_EVERY} sampled again, 300 samples at least)"
        ),
        format!("{within} of {checked}"),
        if checked == 0 {
            // Test mode times every case once: nothing states a precision.
            "no case sampled".to_owned()
        } else {
            format!(
                "at least {:.0}% {}",
                100.0 * COVERED,
                harness::rate(
                    "medians within their stated precision",
                    within,
                    checked,
                    harness::Rate::AtLeast(COVERED)
                )
            )
        },
    ]);
    table.add_row([
        "  the grid's medians within their stated precision of those long runs, minutes later"
            .to_owned(),
        format!("{within_later} of {checked_later}"),
        "reported: it also holds what the machine moved between the runs, which a run's own samples cannot see (the timing page)".to_owned(),
    ]);
    if !test_mode {
        let (mut our_moves, mut their_moves) = (Vec::new(), Vec::new());
        for id in CHECKED {
            let mine: Vec<f64> = ours.iter().map(|m| m[id]).collect();
            let theirs: Vec<f64> = criterions.iter().map(|m| m[id]).collect();
            // Each alternated pair of runs gives its own ratio.
            let ratios: Vec<f64> = mine.iter().zip(&theirs).map(|(m, t)| m / t).collect();
            our_moves.push(spread(&mine));
            their_moves.push(spread(&theirs));
            table.add_row([
                format!("{id}: median per call, nnbench / criterion"),
                format!(
                    "{:.3} ({} / {}); run to run {:.1}% / {:.1}%",
                    median(&ratios),
                    format_ns(median(&mine)),
                    format_ns(median(&theirs)),
                    100.0 * spread(&mine),
                    100.0 * spread(&theirs)
                ),
                harness::judged(id, &ratios, Goal::Within(0.97, 1.03), 1.0, |v| {
                    format!("{v:.3}")
                }),
            ]);
        }
        let (ours, theirs) = (median(&our_moves), median(&their_moves));
        table.add_row([
            format!("run-to-run spread of medians ({RUNS} runs), median over the cases"),
            format!(
                "nnbench {:.2}%, criterion {:.2}%",
                100.0 * ours,
                100.0 * theirs
            ),
            "reported: a spread of a few runs of five cases has no bound to judge".to_owned(),
        ]);
    }
    harness::table(&table);
    first_case(test_mode);
    harness::publish("sampling");
}

/// The fresh processes of the README's sweep that section 4 runs.
const FRESH_RUNS: usize = 10;

/// The seed sweep's bench executable, as `cargo bench` builds it.
fn sweep_executable() -> Result<std::path::PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = std::process::Command::new(cargo)
        .args([
            "bench",
            "--bench",
            "sweep",
            "--no-run",
            "--message-format",
            "json",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cargo bench --no-run: {e}"))?;
    String::from_utf8_lossy(&built.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["target"]["name"] == "sweep")
        .filter_map(|m| m["executable"].as_str().map(std::path::PathBuf::from))
        .next_back()
        .ok_or_else(|| "cargo bench --no-run named no sweep executable".to_owned())
}

/// Section 4: the first case of a fresh process against the other two.
fn first_case(test_mode: bool) {
    if test_mode {
        harness::note(
            "the README's sweep in fresh processes: not run in test mode (it builds the sweep in release)",
        );
        return;
    }
    let result = (|| -> Result<(Vec<f64>, usize), String> {
        let sweep = sweep_executable()?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let (mut ratios, mut within) = (Vec::new(), 0);
        for run in 0..FRESH_RUNS {
            let out = dir.path().join(format!("run{run}.json"));
            let status = std::process::Command::new(&sweep)
                .args(["--bench", "--quiet", "--out"])
                .arg(&out)
                .status()
                .map_err(|e| format!("{}: {e}", sweep.display()))?;
            if !status.success() {
                return Err(format!("{} failed ({status})", sweep.display()));
            }
            let record = RunRecord::read(&out).map_err(|e| e.to_string())?;
            let medians: Vec<f64> = record.cases.iter().map(|c| c.time.median_ns).collect();
            let [first, second, third] = medians[..] else {
                return Err(format!("{} cases, not 3", medians.len()));
            };
            let ratio = first / ((second + third) / 2.0);
            if first <= 1.1 * second.min(third) && first >= 0.9 * second.max(third) {
                within += 1;
            }
            ratios.push(ratio);
        }
        Ok((ratios, within))
    })();
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "the README's sweep, fresh processes",
        "measured",
        "target",
    ]);
    match result {
        Ok((ratios, within)) => {
            table.add_row([
                "the first case's median over the mean of the other two".to_owned(),
                format!(
                    "{:.3} (median of {FRESH_RUNS} runs; {within} of {FRESH_RUNS} within 10% of both others)",
                    median(&ratios)
                ),
                harness::judged(
                    "first case",
                    &ratios,
                    Goal::Within(0.9, 1.1),
                    1.0,
                    |v| format!("{v:.3}"),
                ),
            ]);
        }
        Err(why) => {
            table.add_row([
                "the first case's median over the mean of the other two".to_owned(),
                format!("not measured: {why}"),
                "-".to_owned(),
            ]);
        }
    }
    harness::table(&table);
}
