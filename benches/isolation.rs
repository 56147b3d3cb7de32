//! What `--isolate` costs, measured side by side in one run: this bench
//! binary, run again as the user's `cargo bench` runs it, with its cases in
//! its own process and in a worker process. Whole processes, alternating,
//! medians of seven runs each:
//!
//! - the start: one trivial case, isolated minus in-process, is what
//!   starting a worker costs (once per run, and again after each crash);
//! - per case: 500 trivial cases timed once, less the start, divided by
//!   the cases, is what each case costs in messages and memory samples;
//! - the figures: the median of a sampled ~20 µs kernel in a worker over
//!   the same in-process, which says whether the supervisor's polling
//!   disturbs what is timed.
//!
//! `cargo bench --bench isolation`

#[path = "support/harness.rs"]
mod harness;
use harness::Goal;
use harness::stats;

use std::hint::black_box;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::RunRecord;
use nnbench_vocab::format_ns;
use stats::median;

/// Set in the processes this bench starts as the user's `cargo bench`.
const CHILD: &str = "NNBENCH_ISOLATION_CHILD";
const RUNS: usize = 7;

#[nnbench::benchmark(timing = once)]
fn single() -> u64 {
    black_box(1)
}

#[nnbench::product(n = 0..500u64, timing = once)]
fn many(n: u64) -> u64 {
    black_box(n)
}

#[nnbench::benchmark(timing = sampled)]
fn kernel() -> u64 {
    (0..20_000u64).map(black_box).fold(0, u64::wrapping_add)
}

/// One whole run of the bench binary on the cases `selection` picks: its
/// wall time and record.
fn run(selection: &[&str], isolate: bool, out: &Path) -> Result<(Duration, RunRecord), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut command = Command::new(exe);
    command
        .env(CHILD, "1")
        .args(["--bench", "--quiet", "--no-memory", "--out"])
        .arg(out)
        .args(selection)
        .stdout(Stdio::null());
    if harness::test_mode() {
        command.args(["--measurement-time", "0.05"]);
    }
    if isolate {
        command.arg("--isolate");
    }
    let started = Instant::now();
    let status = command.status().map_err(|e| e.to_string())?;
    let wall = started.elapsed();
    let record = RunRecord::read(out).map_err(|e| e.to_string())?;
    if !status.success() || record.failed() > 0 {
        return Err(format!("{command:?} ended with {status}"));
    }
    Ok((wall, record))
}

fn compare() -> Result<(), String> {
    let runs = if harness::test_mode() { 1 } else { RUNS };
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = dir.path().join("run.json");
    let contenders = [("in process", false), ("--isolate", true)];
    let mut walls = [[Vec::new(), Vec::new()], [Vec::new(), Vec::new()]];
    let mut kernel = [Vec::new(), Vec::new()];
    for _ in 0..runs {
        for (at, (_, isolate)) in contenders.iter().enumerate() {
            walls[at][0].push(run(&["--exact", "single"], *isolate, &out)?.0.as_secs_f64());
            let (wall, record) = run(&["many/"], *isolate, &out)?;
            if record.cases.len() != 500 {
                return Err(format!("{} cases of `many` ran", record.cases.len()));
            }
            walls[at][1].push(wall.as_secs_f64());
            let (_, record) = run(&["--exact", "kernel"], *isolate, &out)?;
            let case = record.cases.first().ok_or("the kernel ran no case")?;
            kernel[at].push(case.time.median_ns);
        }
    }
    let single = [median(&walls[0][0]), median(&walls[1][0])];
    let many = [median(&walls[0][1]), median(&walls[1][1])];
    let start = single[1] - single[0];
    let per_case = ((many[1] - many[0]) - start) / 499.0;
    let kernels = [median(&kernel[0]), median(&kernel[1])];

    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "run",
        "1 case, wall",
        "500 cases, wall",
        "kernel median",
    ]);
    for (at, (name, _)) in contenders.iter().enumerate() {
        table.add_row([
            name.to_string(),
            format_ns(single[at] * 1e9),
            format_ns(many[at] * 1e9),
            format_ns(kernels[at]),
        ]);
    }
    harness::note(format!("medians of {runs} whole runs each, alternating:"));
    harness::table(&table);
    // Each run's own ratio: the contenders alternate.
    let ratios: Vec<f64> = kernel[1]
        .iter()
        .zip(&kernel[0])
        .map(|(i, p)| i / p)
        .collect();
    harness::note(format!(
        "starting a worker: {}; each case: {} more; kernel median isolated / in process: {}",
        format_ns(start * 1e9),
        format_ns(per_case * 1e9),
        harness::judged(
            "isolated / in process",
            &ratios,
            Goal::Within(0.97, 1.03),
            // Test mode's one run each cannot average out a shared
            // machine's spells at half speed (the timing page); what it
            // catches is a worker that times something else.
            2.5,
            |v| format!("{v:.3}")
        )
    ));
    Ok(())
}

fn main() {
    if std::env::var_os(CHILD).is_some() {
        nnbench::main!(bench = "isolation");
    }
    if !harness::should_run("isolation") {
        return;
    }
    if let Err(message) = compare() {
        eprintln!("isolation: {message}");
        std::process::exit(1);
    }
    harness::publish("isolation");
}
