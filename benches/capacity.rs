//! How close a predicted capacity comes to the real out-of-memory point,
//! under a memory cgroup, for three shapes of memory:
//!
//! - linear: 1 MiB an n;
//! - quadratic: 4 KiB an n²;
//! - a model and its activations: 128 MiB held at any size, and 512 KiB
//!   an n.
//!
//! This bench binary, run again as a user's `cargo bench` runs it inside a
//! 512 MiB cgroup with `--isolate`, fits each shape at sizes whose peak
//! stays under half the limit and predicts the largest size that fits.
//! The real point is found by bisection: the shape's case run alone at a
//! size, in the same cgroup, completes or is killed by the out-of-memory
//! killer. Each run's prediction is divided by that real point; the
//! figure is their median, judged on its 95% bounds.
//!
//! It needs root, to make the cgroup; where it cannot, it says so (and
//! fails where `NNBENCH_REQUIRE_CGROUP` is set, as in CI). Built with the
//! `tch` feature, as `scripts/figures.sh` builds it, every process links
//! libtorch, as a libtorch user's bench does: the file-backed pages of its
//! code are resident in each, and the kernel reclaims them under the limit.
//!
//! `cargo bench --features tch --bench capacity` (libtorch from
//! `scripts/libtorch.sh`), or without the feature.

#[path = "../tests/support/cgroup.rs"]
mod cgroup;
#[path = "support/harness.rs"]
mod harness;

use harness::Goal;
use harness::stats::median;

use std::path::Path;
use std::process::{Command, Stdio};

use cgroup::Cgroup;
use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::RunRecord;

/// Set in the processes this bench starts as the user's `cargo bench`.
const CHILD: &str = "NNBENCH_CAPACITY_CHILD";
/// The size a probe runs at, in the probes this bench starts.
const PROBE: &str = "NNBENCH_CAPACITY_PROBE";
const LIMIT: u64 = 512 << 20;
const RUNS: usize = 9;
const KIB: usize = 1 << 10;
const MIB: usize = 1 << 20;

const SHAPES: [&str; 3] = ["linear", "quadratic", "model+activations"];

/// The bytes `shape` holds at `n`.
fn bytes(shape: &str, n: usize) -> usize {
    match shape {
        "linear" => n * MIB,
        "quadratic" => n * n * 4 * KIB,
        _ => 128 * MIB + n * 512 * KIB,
    }
}

/// Each shape at sizes whose peak stays under half the limit.
#[nnbench::product(
    shape = ["linear", "quadratic", "model+activations"],
    n = [16, 32, 64, 128, 192],
    scaling = n,
    timing = once
)]
fn fit(shape: &str, n: usize) -> u64 {
    cgroup::hold(bytes(shape, n))
}

/// One shape (`NNBENCH_CAPACITY_PROBE=shape:n`) at one size.
#[nnbench::product(probe = [probe()], timing = once)]
fn at(probe: (String, usize)) -> u64 {
    cgroup::hold(bytes(&probe.0, probe.1))
}

fn probe() -> (String, usize) {
    std::env::var(PROBE)
        .ok()
        .and_then(|p| {
            let (shape, n) = p.rsplit_once(':')?;
            Some((shape.to_owned(), n.parse().ok()?))
        })
        .unwrap_or_else(|| ("linear".to_owned(), 1))
}

/// One whole run of this binary inside `cgroup`, isolated, on the cases
/// `filter` picks: its record.
fn run(
    cgroup: &Cgroup,
    out: &Path,
    filter: &str,
    probe: Option<(&str, usize)>,
) -> Result<RunRecord, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut command = Command::new(exe);
    command
        .env(CHILD, "1")
        .args(["--bench", "--quiet", "--isolate", "--out"])
        .arg(out)
        .arg(filter)
        .stderr(Stdio::null());
    if let Some((shape, n)) = probe {
        command.env(PROBE, format!("{shape}:{n}"));
    }
    cgroup.run(&mut command);
    RunRecord::read(out).map_err(|e| format!("{filter}: {e}"))
}

/// Whether `shape` at `n` completes in the cgroup; an error for a failure
/// that is not the out-of-memory killer's.
fn fits(cgroup: &Cgroup, out: &Path, shape: &str, n: usize) -> Result<bool, String> {
    let record = run(cgroup, out, "at/", Some((shape, n)))?;
    let case = record.cases.first().ok_or("the probe ran no case")?;
    match &case.error {
        None => Ok(true),
        Some(e) if e.summary().contains("out of memory") => Ok(false),
        Some(e) => Err(format!("{shape} at n = {n}: {}", e.summary())),
    }
}

/// The largest size of `shape` that completes, by bisection from `low`
/// (which does) to within a quarter of a percent.
fn real_point(
    cgroup: &Cgroup,
    out: &Path,
    shape: &str,
    low: usize,
    guess: f64,
) -> Result<usize, String> {
    let (mut low, mut high) = (low, (guess * 1.5).ceil() as usize);
    while fits(cgroup, out, shape, high)? {
        (low, high) = (high, high * 2);
    }
    while high - low > (low / 400).max(1) {
        let mid = low + (high - low) / 2;
        if fits(cgroup, out, shape, mid)? {
            low = mid;
        } else {
            high = mid;
        }
    }
    Ok(low)
}

fn measure() -> Result<(), String> {
    let Some(cgroup) = cgroup::for_test("capacity-bench", LIMIT) else {
        harness::note(
            "capacity: not measured (making a memory cgroup needs root and a writable /sys/fs/cgroup)",
        );
        return Ok(());
    };
    let runs = if harness::test_mode() { 1 } else { RUNS };
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = dir.path().join("run.json");
    let mut predicted: Vec<Vec<nnbench::record::CapacityRecord>> = vec![Vec::new(); SHAPES.len()];
    let mut file_backed = None;
    for _ in 0..runs {
        let record = run(&cgroup, &out, "fit/", None)?;
        file_backed = file_backed.or_else(|| {
            record
                .cases
                .iter()
                .find_map(|c| c.memory.rss_file_before_bytes)
        });
        for (at, shape) in SHAPES.iter().enumerate() {
            let found = record
                .capacity
                .iter()
                .find(|c| c.params.get("shape").and_then(|s| s.as_str()) == Some(shape))
                .ok_or_else(|| format!("no capacity of {shape}: {:?}", record.capacity))?;
            predicted[at].push(found.clone());
        }
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "shape",
        "fit (one run)",
        "predicted n (median)",
        "one run's interval",
        "real n (bisection)",
        "predicted / real",
    ]);
    let mut verdicts = Vec::new();
    for (at, shape) in SHAPES.iter().enumerate() {
        let runs = &predicted[at];
        let n = median(runs.iter().map(|c| c.n));
        let real = real_point(&cgroup, &out, shape, 192, n)? as f64;
        let ratios: Vec<f64> = runs.iter().map(|c| c.n / real).collect();
        let first = &runs[0];
        table.add_row([
            shape.to_string(),
            format!(
                "{:.1} MiB + {:.3} MiB × n^{:.3}",
                first.fixed_bytes / MIB as f64,
                first.per_bytes / MIB as f64,
                first.exponent
            ),
            format!("{n:.1}"),
            format!("[{:.1}, {:.1}]", first.interval[0], first.interval[1]),
            format!("{real:.0}"),
            format!("{:.3}", median(&ratios)),
        ]);
        verdicts.push(format!(
            "{shape}: {}",
            harness::judged(
                &format!("{shape}: predicted / real"),
                &ratios,
                Goal::Within(0.95, 1.05),
                1.0,
                |v| format!("{v:.3}")
            )
        ));
    }
    let held = predicted[0][0].others_bytes.unwrap_or(0);
    // Built with the tch feature, every process links libtorch, whose code
    // the kernel reclaims under the limit.
    let linked = if cfg!(feature = "tch") {
        "libtorch linked (the tch feature)"
    } else {
        "no framework linked"
    };
    harness::note(format!(
        "In a {} MiB memory cgroup, isolated ({:.1} MiB of it held by the supervisor), {linked}, {:.1} MiB of file-backed pages resident in a worker as its case started (left out of the fit), {runs} fitting runs:",
        LIMIT >> 20,
        held as f64 / MIB as f64,
        file_backed.unwrap_or(0) as f64 / MIB as f64
    ));
    harness::table(&table);
    for verdict in verdicts {
        harness::note(verdict);
    }
    Ok(())
}

fn main() {
    if std::env::var_os(CHILD).is_some() {
        nnbench::main!(bench = "capacity");
    }
    if !harness::should_run("capacity") {
        return;
    }
    if let Err(message) = measure() {
        eprintln!("capacity: {message}");
        std::process::exit(1);
    }
    harness::publish("capacity");
}
