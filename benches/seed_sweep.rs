//! The seed sweep at full size, run as a user runs it, against Python
//! nnbench 0.4 with numpy doing the same work, side by side in one run:
//! three 8000 × 8000 `f64` models of 512 MB read from `.npy`, `sum(model ·
//! data)` with an 8000 × 16 dataset, one model resident at a time; whole
//! processes, alternating, seven runs each, medians of wall time and peak
//! resident memory.
//!
//! Python nnbench calls each case once, so nnbench runs with `--once` for
//! the same work (both multiply on every core: numpy through its BLAS,
//! ndarray with `matrixmultiply-threading`); with `--prefetch` too, and
//! with its default timing (which samples these 50 ms calls until their
//! median is precise) for reference. Each contender runs with the files in
//! the page cache, and with them dropped from it before the run.
//!
//! The peer comes from `scripts/python-peer.sh` (a cached virtual
//! environment with `nnbench==0.4.0` and numpy from PyPI); without Python,
//! or offline, the table says why it is missing. The matrices are
//! generated under `target/nnbench/sweep-data/` on first use (a minute).
//!
//! `cargo bench --bench seed_sweep`

#[path = "support/harness.rs"]
mod harness;
use harness::Goal;
#[path = "support/matrices.rs"]
mod matrices;
#[path = "support/peer.rs"]
mod peer;
use harness::stats;
#[path = "support/sweep_family.rs"]
mod sweep_family;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::RunRecord;
use nnbench_vocab::{format_bytes, format_ns};
use stats::median;

/// Set in the processes this bench starts as the user's `cargo bench`.
const CHILD: &str = "NNBENCH_SEED_SWEEP_CHILD";
/// The models' side at full size.
const SIDE: usize = 8000;
const RUNS: usize = 7;

/// What one whole process took.
#[derive(Clone, Debug)]
struct Measured {
    wall: Duration,
    peak_rss: u64,
    /// Per case (in run order), the time of its call, for nnbench's runs.
    calls_ns: Vec<f64>,
}

/// This binary again, as `cargo bench --bench seed_sweep -- FLAGS` runs
/// it, writing its record to `out`.
fn nnbench_run(side: usize, flags: &[&str], out: &Path) -> Result<Measured, String> {
    let exe = std::env::current_exe().map_err(|e| format!("this bench's path: {e}"))?;
    let mut command = Command::new(exe);
    command
        .args(["--bench", "--quiet", "--out"])
        .arg(out)
        .args(flags)
        .env(CHILD, "1")
        .env("NNBENCH_SWEEP_N", side.to_string());
    let (wall, peak_rss) = peer::measure(&mut command)?;
    let text = std::fs::read_to_string(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let record: RunRecord =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", out.display()))?;
    if record.failed() > 0 || record.cases.len() != 3 {
        return Err(format!("{}: a case failed", out.display()));
    }
    let case_peak = record
        .cases
        .iter()
        .filter_map(|c| c.memory.rss_peak_bytes)
        .max()
        .unwrap_or(0);
    Ok(Measured {
        wall,
        peak_rss: peak_rss.max(case_peak),
        calls_ns: record.cases.iter().map(|c| c.time.median_ns).collect(),
    })
}

fn peer_run(python: &Path, data: &Path, side: usize) -> Result<Measured, String> {
    let (wall, peak_rss) = peer::sweep(python, data, side, matrices::BATCH, false)?;
    Ok(Measured {
        wall,
        peak_rss,
        calls_ns: Vec::new(),
    })
}

/// Medians of the runs of one contender.
#[derive(Clone, Copy)]
struct Summary {
    wall: f64,
    fastest: f64,
    slowest: f64,
    peak_rss: f64,
}

fn summarize(runs: &[Measured]) -> Summary {
    let walls = || runs.iter().map(|r| r.wall.as_secs_f64());
    Summary {
        wall: median(walls()),
        fastest: walls().fold(f64::INFINITY, f64::min),
        slowest: walls().fold(0.0, f64::max),
        peak_rss: median(runs.iter().map(|r| r.peak_rss as f64)),
    }
}

fn main() {
    if std::env::var_os(CHILD).is_some() {
        nnbench::main!(bench = "seed_sweep");
    }
    if !harness::should_run("seed_sweep") {
        return;
    }
    if let Err(message) = compare() {
        eprintln!("seed_sweep: {message}");
        std::process::exit(1);
    }
    harness::publish("seed_sweep");
}

/// Who runs the sweep.
#[derive(Clone, Copy, PartialEq)]
enum Runner {
    Nnbench(&'static [&'static str]),
    Python,
}

/// One column of the comparison: who, and whether the files are read
/// from disk (dropped from the page cache before each run) or from memory.
#[derive(Clone, Copy)]
struct Contender {
    name: &'static str,
    runner: Runner,
    cold: bool,
}

/// Who runs, each with the files cached and then dropped.
const RUNNERS: [(&str, Runner); 5] = [
    (
        "nnbench --once (the same work)",
        Runner::Nnbench(&["--once"]),
    ),
    (
        "nnbench --once --prefetch",
        Runner::Nnbench(&["--once", "--prefetch"]),
    ),
    ("nnbench, default timing", Runner::Nnbench(&[])),
    (
        "nnbench, default timing --prefetch",
        Runner::Nnbench(&["--prefetch"]),
    ),
    ("Python nnbench 0.4 + numpy", Runner::Python),
];

fn contenders() -> Vec<Contender> {
    [false, true]
        .into_iter()
        .flat_map(|cold| RUNNERS.map(|(name, runner)| Contender { name, runner, cold }))
        .collect()
}

/// Drops the sweep's files from the page cache, so that the next run
/// reads them from disk, as a sweep over models met for the first time.
fn drop_from_page_cache(data: &Path, side: usize) -> Result<(), String> {
    let names = (1..=3)
        .map(|i| format!("model{i}-{side}x{side}.npy"))
        .chain([format!("data-{side}x{}.npy", matrices::BATCH)]);
    for name in names {
        let path = data.join(name);
        let file = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        use std::os::fd::AsRawFd as _;
        // SAFETY: advice on a descriptor this function holds open.
        let error =
            unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        if error != 0 {
            return Err(format!("{}: posix_fadvise: error {error}", path.display()));
        }
    }
    Ok(())
}

fn compare() -> Result<(), String> {
    let test_mode = harness::test_mode();
    let side = if test_mode { 64 } else { SIDE };
    let work = nnbench::record::target_dir().join("nnbench/seed_sweep");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let out = work.join("run.json");

    // Generates the matrices: not measured.
    nnbench_run(side, &["--once"], &out)?;
    let data = nnbench::record::target_dir().join("nnbench/sweep-data");
    let python = peer::python();
    let runs = if test_mode { 1 } else { RUNS };
    let contenders = contenders();
    let mut measured: Vec<Vec<Measured>> = vec![Vec::new(); contenders.len()];
    let mut peer_error = None;
    for _ in 0..runs {
        for (contender, runs) in contenders.iter().zip(&mut measured) {
            // Files dropped before a run on disk are back in the page
            // cache after it, read by that run.
            if contender.cold {
                drop_from_page_cache(&data, side)?;
            }
            let outcome = match contender.runner {
                Runner::Nnbench(flags) => nnbench_run(side, flags, &out),
                Runner::Python => python
                    .clone()
                    .and_then(|python| peer_run(&python, &data, side)),
            };
            match (outcome, contender.runner) {
                (Ok(m), _) => runs.push(m),
                (Err(e), Runner::Python) => peer_error = Some(e),
                (Err(e), Runner::Nnbench(_)) => return Err(e),
            }
        }
    }

    let model = (side * side * std::mem::size_of::<f64>()) as f64;
    let summaries: Vec<Option<Summary>> = measured
        .iter()
        .map(|runs| (!runs.is_empty()).then(|| summarize(runs)))
        .collect();
    let peer_of = |cold: bool| {
        contenders
            .iter()
            .zip(&summaries)
            .find(|(c, _)| c.runner == Runner::Python && c.cold == cold)
            .and_then(|(_, s)| *s)
    };
    let call = |runs: &[Measured]| median(runs.iter().flat_map(|r| r.calls_ns.iter().copied()));

    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "contender",
        "page cache",
        "wall (fastest-slowest)",
        "vs. Python",
        "peak RSS",
        "vs. one model",
        "median call",
    ]);
    for ((contender, summary), runs) in contenders.iter().zip(&summaries).zip(&measured) {
        let Some(s) = summary else { continue };
        let peer = peer_of(contender.cold);
        table.add_row([
            contender.name.to_owned(),
            if contender.cold { "dropped" } else { "cached" }.to_owned(),
            format!("{:.2} s ({:.2}-{:.2})", s.wall, s.fastest, s.slowest),
            peer.map_or("-".into(), |p| format!("{:.2}", s.wall / p.wall)),
            format_bytes(s.peak_rss as u64),
            format!("{:.3}", s.peak_rss / model),
            match contender.runner {
                Runner::Nnbench(_) => format_ns(call(runs)),
                Runner::Python => "-".into(),
            },
        ]);
    }
    harness::table(&table);
    harness::note(format!(
        "one model: {}; {runs} runs each, alternating, medians",
        format_bytes(model as u64)
    ));
    if let Some(message) = &peer_error {
        harness::note(harness::peer_missing("Python nnbench", message));
    }
    // The runs of `--once` and of the peer, as they alternated: each
    // round's own ratio, on a warm page cache and on a dropped one.
    let runs_of = |runner: Runner, cold: bool| {
        contenders
            .iter()
            .zip(&measured)
            .find(|(c, _)| c.runner == runner && c.cold == cold)
            .map(|(_, runs)| runs.as_slice())
            .unwrap_or_default()
    };
    let once = Runner::Nnbench(&["--once"]);
    for (cold, cache) in [(false, "warm page cache"), (true, "dropped page cache")] {
        let (ours, theirs) = (runs_of(once, cold), runs_of(Runner::Python, cold));
        if theirs.is_empty() {
            continue;
        }
        let ratios: Vec<f64> = ours
            .iter()
            .zip(theirs)
            .map(|(o, t)| o.wall.as_secs_f64() / t.wall.as_secs_f64())
            .collect();
        // Unoptimized, nnbench's side is slower while numpy's is not.
        harness::note(format!(
            "--once wall / Python's, {cache}: {}",
            harness::judged(
                cache,
                &ratios,
                Goal::AtMost(0.6),
                harness::DEBUG_SLACK,
                |v| { format!("{v:.2}x") }
            )
        ));
    }
    // Test mode's models are kilobytes, beside a process's megabytes.
    let slack = if test_mode {
        1.0 + (64 << 20) as f64 / (1.05 * model)
    } else {
        1.0
    };
    let peaks: Vec<f64> = runs_of(once, false)
        .iter()
        .map(|r| r.peak_rss as f64 / model)
        .collect();
    harness::note(format!(
        "--once peak RSS / one model: {}",
        harness::judged("peak RSS", &peaks, Goal::AtMost(1.05), slack, |v| format!(
            "{v:.3}x"
        ))
    ));
    Ok(())
}
