//! How near the powers fitted to families built as n, n² and n log n come
//! to the truth, on a quiet machine and beside a cold build of the
//! workspace, and how often `compare` calls an unchanged family's scaling
//! regressed between two runs of one build, beside that build.
//!
//! Each run's fits are taken two ways, side by side from the same run:
//! from the interleaved rounds the run takes of each family's sizes (what
//! a run records), and from each size's own samples, taken one size after
//! another (what the rounds replace), which a drifting machine bends.
//!
//! `cargo bench --bench scaling`;
//! `NNBENCH_SCALING_PAIRS=N` for another number of comparisons beside the
//! build (20 by default; a quarter as many on the quiet machine).

#[path = "support/beside_build.rs"]
mod beside_build;
#[path = "support/harness.rs"]
mod harness;
use harness::stats;
#[path = "support/steps.rs"]
mod steps;

use std::time::Duration;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::record::{ScalingRecord, Verdict};
use nnbench::{RunRecord, Runner, Sampling};
use stats::median;
use steps::work;

/// How far from the truth a fitted power may be.
const TARGET: f64 = 0.05;

const LINEAR_SIZES: [u64; 4] = [512, 2048, 8192, 32768];
const QUADRATIC_SIZES: [u64; 4] = [32, 128, 512, 2048];

#[nnbench::product(n = LINEAR_SIZES, scaling = n)]
fn linear(n: u64) -> u64 {
    work(16 * n)
}

#[nnbench::product(n = QUADRATIC_SIZES, scaling = n)]
fn quadratic(n: u64) -> u64 {
    work(n * n)
}

#[nnbench::product(n = LINEAR_SIZES, scaling = n)]
fn n_log_n(n: u64) -> u64 {
    work(n * u64::from(n.ilog2()))
}

/// The families, and the power a least-squares line through log(cost)
/// against log(n) has over their sizes: what each should fit.
fn truths() -> [(&'static str, f64); 3] {
    let float = |sizes: [u64; 4]| sizes.map(|n| n as f64);
    [
        ("linear", 1.0),
        ("quadratic", 2.0),
        ("n_log_n", line(&float(LINEAR_SIZES), |n| n * n.log2())),
    ]
}

fn line(sizes: &[f64], cost: impl Fn(f64) -> f64) -> f64 {
    let xs: Vec<f64> = sizes.iter().map(|n| n.ln()).collect();
    let ys: Vec<f64> = sizes.iter().map(|&n| cost(n).ln()).collect();
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    sxy / sxx
}

/// One run of the three families.
fn run() -> Result<RunRecord, String> {
    let sampling = if harness::test_mode() {
        Sampling::new()
            .sample_size(3)
            .warm_up_time(Duration::from_millis(1))
            .measurement_time(Duration::from_millis(20))
    } else {
        Sampling::new()
            .sample_size(10)
            .warm_up_time(Duration::from_millis(20))
            .measurement_time(Duration::from_millis(500))
    };
    Runner::new()
        .quiet(true)
        .sampling(sampling)
        .run()
        .map_err(|e| format!("{e:#}"))
}

/// `record` as its fits would be from each size's own samples: its
/// rounds dropped, and refitted.
fn sequential(record: &RunRecord) -> RunRecord {
    let mut record = record.clone();
    for case in &mut record.cases {
        case.time.rounds_ns.clear();
        case.time.cpu_rounds_ns.clear();
    }
    record.scaling = nnbench_core::scaling::fit(&record.cases);
    record
}

fn time_fit<'a>(record: &'a RunRecord, family: &str) -> Option<&'a ScalingRecord> {
    record
        .scaling
        .iter()
        .find(|s| s.family == family && s.figure == "time")
}

/// Families whose scaling `compare` calls regressed from `base` to `head`.
fn false_regressions(base: &RunRecord, head: &RunRecord) -> usize {
    nnbench_core::compare::compare(base, head, &Default::default())
        .scaling
        .iter()
        .filter(|s| s.figure == "time" && s.verdict == Verdict::Regressed)
        .count()
}

/// What one way of fitting came to over a condition's runs.
#[derive(Default)]
struct Tally {
    /// Per family, the power of each run.
    powers: Vec<Vec<f64>>,
    /// Per family, the runs whose interval left out the truth.
    missed: Vec<usize>,
    alarms: usize,
    pairs: usize,
    rounds: Vec<f64>,
}

impl Tally {
    fn add(&mut self, records: &[RunRecord]) {
        let truths = truths();
        self.powers.resize(truths.len(), Vec::new());
        self.missed.resize(truths.len(), 0);
        for record in records {
            for (i, (family, truth)) in truths.iter().enumerate() {
                let Some(fit) = time_fit(record, family) else {
                    continue;
                };
                self.powers[i].push(fit.exponent);
                self.missed[i] +=
                    usize::from(!(fit.interval[0] <= *truth && *truth <= fit.interval[1]));
                self.rounds.push(fit.rounds as f64);
            }
        }
        for pair in records.chunks_exact(2) {
            self.alarms += false_regressions(&pair[0], &pair[1]);
            self.pairs += 1;
        }
    }

    /// The farthest any run's power lay from its family's truth.
    fn worst(&self) -> f64 {
        truths()
            .iter()
            .zip(&self.powers)
            .flat_map(|((_, truth), powers)| powers.iter().map(move |p| (p - truth).abs()))
            .fold(0.0, f64::max)
    }
}

fn runs(count: usize) -> Result<(Vec<RunRecord>, Vec<f64>), String> {
    let mut records = Vec::with_capacity(count);
    let mut loads = Vec::with_capacity(count);
    for _ in 0..count {
        records.push(run()?);
        loads.push(beside_build::load());
    }
    Ok((records, loads))
}

fn measure(pairs: usize) -> Result<(), String> {
    let quiet_pairs = if harness::test_mode() {
        1
    } else {
        (pairs / 4).max(1)
    };
    let (quiet, quiet_load) = runs(2 * quiet_pairs)?;
    let (loaded, loaded_load) = if harness::test_mode() {
        runs(2)?
    } else {
        let _build = beside_build::Build::start()?;
        runs(2 * pairs)?
    };
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "machine",
        "fitted from",
        "linear (1)",
        "quadratic (2)",
        "n log n",
        "farthest from the truth",
        "intervals that miss it",
        "false scaling regressions",
    ]);
    let mut met = true;
    let mut said = Vec::new();
    let beside = if harness::test_mode() {
        "again (test mode: no build)"
    } else {
        "beside a cold build"
    };
    for (machine, records, loads) in [
        ("quiet", &quiet, &quiet_load),
        (beside, &loaded, &loaded_load),
    ] {
        let machine = format!("{machine} (load {:.1})", median(loads.as_slice()));
        let sequential: Vec<RunRecord> = records.iter().map(sequential).collect();
        for (how, records) in [
            ("interleaved rounds", records),
            ("each size's samples", &sequential),
        ] {
            let mut tally = Tally::default();
            tally.add(records);
            let gated = how == "interleaved rounds";
            let worst = tally.worst();
            if gated {
                met &= worst <= TARGET;
            }
            let mut row = vec![machine.clone(), how.to_owned()];
            row.extend(tally.powers.iter().map(|p| {
                let (lo, hi) = p
                    .iter()
                    .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
                format!("{:.3} ({lo:.3}-{hi:.3})", median(p.as_slice()))
            }));
            row.push(format!(
                "{worst:.3}{}",
                if gated {
                    // Every run's own power: what was measured, not a rate.
                    format!(
                        " (every run <= {TARGET} {})",
                        harness::verdict("power", worst <= TARGET, worst <= 2.0 * TARGET)
                    )
                } else {
                    String::new()
                }
            ));
            let fits: usize = tally.powers.iter().map(Vec::len).sum();
            row.push(format!("{} of {fits}", tally.missed.iter().sum::<usize>()));
            row.push(format!(
                "{} in {} comparisons{}",
                tally.alarms,
                tally.pairs,
                if gated {
                    format!(
                        " (at most 1 in 20 {})",
                        harness::rate(
                            "scaling alarms",
                            tally.alarms,
                            tally.pairs,
                            harness::Rate::AtMost(0.05)
                        )
                    )
                } else {
                    String::new()
                }
            ));
            table.add_row(row);
            if gated {
                said.push(format!(
                    "{machine}: {} rounds a fit (median).",
                    median(tally.rounds.as_slice())
                ));
            }
        }
    }
    harness::note(format!(
        "Families built as n, n² and n log n (n log n fits {:.3} over its sizes, 16x apart), each run sampled and then timed in interleaved rounds; each run's power (median, and the range over runs), and consecutive runs of one build compared:",
        truths()[2].1
    ));
    harness::table(&table);
    for line in said {
        harness::note(line);
    }
    if !met {
        harness::note("The goals are not all met on this run.");
    }
    Ok(())
}

fn main() {
    if !harness::should_run("scaling") {
        return;
    }
    let pairs = std::env::var("NNBENCH_SCALING_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    if let Err(message) = measure(pairs) {
        eprintln!("scaling: {message}");
        std::process::exit(1);
    }
    harness::publish("scaling");
}
