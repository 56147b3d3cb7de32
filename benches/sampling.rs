//! What nnbench's sampler costs and what it gives, side by side in one run:
//!
//! 1. the wall time of a 10 × 10 × 10 grid of small kernels under the
//!    default timing (`auto`), against a goal of 60 s; beside it,
//!    criterion's (its time per case measured on the cases of (2), times
//!    the grid's cases); how the sampler stopped on the grid's cases, and
//!    whether each of a hundred of them (every tenth) has its median
//!    within the precision its record states, against a long run of them
//!    (300 samples at least, 10 s at most, a case);
//! 2. on a few of those cases, and on two heavier kernels, the median per
//!    call that nnbench's sampler records against the one a full criterion
//!    run (`--sampled`: 3 s of warm-up, 5 s of samples) records, in
//!    alternated runs: within 3%, judged on the 95% bounds of each case's
//!    ratios;
//! 3. the same runs: how far medians move from run to run, by each.
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
const LONG_EVERY: usize = 10;

/// The share of cases whose median lies within their stated precision of
/// the long run's: 95% intervals, less what the machine moves between the
/// runs.
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

/// Whether each of `short`'s cases that `long` measured again has its
/// median within the precision it states of the long run's on the same
/// clock (widened by the long run's own precision): `(within, checked)`.
fn within_stated(short: &RunRecord, long: &RunRecord) -> (usize, usize) {
    let mut within = 0;
    let mut checked = 0;
    for reference in &long.cases {
        let (Some(case), Some((_, _, long_reached))) =
            (short.case(&reference.id), stated(reference))
        else {
            continue;
        };
        let Some((median, clock, reached)) = stated(case) else {
            continue;
        };
        let long_median = match clock {
            Clock::Cpu => reference.time.cpu_median_ns.unwrap_or(f64::NAN),
            _ => reference.time.median_ns,
        };
        checked += 1;
        if (median - long_median).abs() <= (reached + long_reached) * long_median {
            within += 1;
        }
    }
    (within, checked)
}

fn run(runner: Runner) -> RunRecord {
    let record = runner
        .quiet(true)
        .record_memory(false)
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
    let mut long = Runner::new().exact(true).test_mode(test_mode).sampling(
        Sampling::new()
            .sample_size(if test_mode { 10 } else { 300 })
            .measurement_time(std::time::Duration::from_secs(10)),
    );
    for case in grid.cases.iter().step_by(LONG_EVERY) {
        long = long.filter(case.id.clone());
    }
    let long = run(long);
    let (within, checked) = within_stated(&grid, &long);

    // Alternate the samplers, so that both see the same machine.
    let (mut ours, mut criterions, mut criterion_walls) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..if test_mode { 1 } else { RUNS } {
        ours.push(checked_medians(None, test_mode));
        if !test_mode {
            let started = Instant::now();
            criterions.push(checked_medians(Some(Timing::Sampled), false));
            criterion_walls.push(started.elapsed().as_secs_f64() / CHECKED.len() as f64);
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
            "{:.1} s (median {} samples a case)",
            grid_wall.as_secs_f64(),
            median(&samples)
        ),
        format!(
            "{}; {criterion_grid}",
            harness::judged(
                "the grid",
                &[grid_wall.as_secs_f64()],
                Goal::AtMost(60.0),
                1.0,
                |v| format!("{v:.0} s")
            )
        ),
    ]);
    table.add_row([
        "  how the sampler stopped".to_owned(),
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
            "  medians within their stated precision of a long run's (every {LONG_EVERY}th case, 300 samples at least)"
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
    harness::publish("sampling");
}
