//! The Fashion-MNIST sweep's section of the book's page of measured
//! figures: the bench run as a user runs it, whole processes, first on an
//! empty disk tier (training the models), then three times on the tier it
//! left; per case the figures of those three runs.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::RunRecord;
use nnbench_vocab::{format_bytes, format_ns};

use crate::harness;
use crate::stats::{median, spread};

/// Set in the processes the figures start as the user's `cargo bench`.
pub const CHILD: &str = "NNBENCH_MNIST_FIGURES_CHILD";

/// Runs after the first, on the tier it filled.
const WARM_RUNS: usize = 3;

/// This bench again, as `cargo bench --bench mnist` runs it, on the disk
/// tier `tier`: its record and wall seconds.
fn run(tier: &Path, out: &Path) -> Result<(RunRecord, f64), String> {
    let exe = std::env::current_exe().map_err(|e| format!("this bench's path: {e}"))?;
    let started = Instant::now();
    let status = Command::new(exe)
        .args(["--bench", "--quiet", "--disk-tier-dir"])
        .arg(tier)
        .arg("--out")
        .arg(out)
        .env(CHILD, "1")
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("the mnist bench: {e}"))?;
    let seconds = started.elapsed().as_secs_f64();
    if !status.success() {
        return Err(format!("the mnist bench ended with {status}"));
    }
    let record = RunRecord::read(out).map_err(|e| e.to_string())?;
    if record.failed() > 0 {
        return Err(format!("{}: a case failed", out.display()));
    }
    Ok((record, seconds))
}

fn value(record: &RunRecord, id: &str, key: &str) -> Option<f64> {
    record.case(id)?.value.get(key)?.as_f64()
}

fn figures() -> Result<(), String> {
    let work = nnbench::record::target_dir().join("nnbench/mnist-figures");
    let tier = work.join("tier");
    // An empty tier: the first run trains the models, as on a new machine.
    match std::fs::remove_dir_all(&tier) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("{}: {e}", tier.display()));
        }
        _ => {}
    }
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let (cold, cold_s) = run(&tier, &work.join("cold.json"))?;
    let mut warm = Vec::new();
    for i in 0..WARM_RUNS {
        warm.push(run(&tier, &work.join(format!("warm-{i}.json")))?);
    }
    let ids: Vec<&str> = cold
        .cases
        .iter()
        .filter(|c| c.family == "classify")
        .map(|c| c.id.as_str())
        .collect();

    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "case",
        "accuracy",
        "images/s (run to run)",
        "time",
        "load: first run, next",
        "peak RSS",
        "GPU peak",
    ]);
    let mut throughput_spreads = Vec::new();
    for id in &ids {
        let of = |figure: &dyn Fn(&RunRecord) -> Option<f64>| -> Vec<f64> {
            warm.iter().filter_map(|(r, _)| figure(r)).collect()
        };
        let rates = of(&|r| value(r, id, "images_per_second"));
        let accuracies = of(&|r| value(r, id, "accuracy"));
        let times = of(&|r| r.case(id).map(|c| c.time.median_ns));
        let loads = of(&|r| r.case(id).map(|c| c.load_ns as f64));
        let rss = of(&|r| r.case(id)?.memory.rss_peak_bytes.map(|b| b as f64));
        let gpu = of(&|r| r.case(id)?.memory.gpu_peak_bytes.map(|b| b as f64));
        if rates.len() < WARM_RUNS || accuracies.len() < WARM_RUNS {
            return Err(format!("{id}: a run recorded no accuracy or images/s"));
        }
        throughput_spreads.push(spread(&rates));
        let first_load = cold.case(id).map_or(0, |c| c.load_ns) as f64;
        table.add_row([
            format!("`{id}`"),
            if spread(&accuracies) == 0.0 {
                format!("{:.4}", accuracies[0])
            } else {
                format!("{:.4} (moved)", median(&accuracies))
            },
            format!("{:.0} ({:.1}%)", median(&rates), 100.0 * spread(&rates)),
            format_ns(median(&times)),
            format!("{}, {}", format_ns(first_load), format_ns(median(&loads))),
            format_bytes(median(&rss) as u64),
            if gpu.is_empty() {
                "-".to_owned()
            } else {
                format_bytes(median(&gpu) as u64)
            },
        ]);
    }
    harness::table(&table);
    let walls: Vec<f64> = warm.iter().map(|(_, s)| *s).collect();
    harness::note(format!(
        "the whole bench: {cold_s:.1} s on an empty disk tier (the models trained), {:.1} s on the tier it left (median of {WARM_RUNS}); figures are medians of those {WARM_RUNS} runs, images/s with its largest difference between two of them",
        median(&walls)
    ));
    let last = &warm[warm.len() - 1].0;
    for fit in &last.scaling {
        harness::note(format!(
            "`{}`: {} ∝ {}^{:.2} [{:.2}, {:.2}], {}",
            fit.label(),
            fit.figure,
            fit.parameter,
            fit.exponent,
            fit.interval[0],
            fit.interval[1],
            fit.fit
        ));
    }
    harness::note(if last.context.gpu.available {
        "CUDA cases ran on the GPU named in the record"
    } else {
        "no GPU here: no CUDA cases, and no GPU figures"
    });
    harness::note(format!(
        "throughput, largest difference between runs over the cases: {:.1}%",
        100.0 * throughput_spreads.iter().copied().fold(0.0, f64::max)
    ));
    Ok(())
}

/// Measures the figures and writes the section; exits on failure.
pub fn main() {
    if let Err(message) = figures() {
        eprintln!("mnist: {message}");
        std::process::exit(1);
    }
    harness::publish("mnist");
}
