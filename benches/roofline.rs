//! Whether the roofs nnbench measures are the machine's, and whether the
//! cases of a sweep land under them where they should.
//!
//! The roofs are measured again in each of several rounds, side by side
//! with their references in the same round:
//!
//! - the f64 peak of one core beside what numpy's BLAS reaches on one
//!   thread of one core for a 2048 × 2048 multiply (the Python peer's
//!   numpy, `scripts/python-peer.sh`): the peak must be at least that,
//!   and at most 1.25 times it, or it is not the core's peak;
//! - the triad bandwidth, on one core and on all, beside McCalpin's STREAM
//!   compiled here (`scripts/stream.sh`) over arrays of the same size, on
//!   as many threads: within 10%.
//!
//! Each figure is the median of its rounds' ratios, judged on its 95%
//! bounds, as is the time the measurement takes; reading the kept roofs,
//! as each run does, is timed too. Then one run of a GEMM sweep, a naive
//! triple loop, a cache-blocked loop and the `matrixmultiply` crate at
//! sizes 64 to 1024, and a triad over 64 MiB arrays, places each case
//! under the roofs: every share of the roof must lie in (0, 1] and be the
//! case's rate over its roof, the three kernels must be ordered from size
//! 256, the library's share must come out near its rate over numpy's, and
//! the triad must reach 0.7 of the bandwidth roof.
//!
//! `cargo bench --bench roofline`; `NNBENCH_PEER_PYTHON` and
//! `NNBENCH_STREAM` name peers made elsewhere.

#[path = "support/gemm_kernels.rs"]
mod gemm_kernels;
#[path = "support/harness.rs"]
mod harness;
#[path = "support/peer.rs"]
mod peer;

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use harness::Goal;
use harness::stats::median;
use nnbench::record::{MachineRoofs, Roof, WorkRecord};
use nnbench::{RunRecord, Runner, Sampling};

const SIZES: [usize; 5] = [64, 128, 256, 512, 1024];
const TEST_SIZES: [usize; 2] = [16, 48];
/// The edge of numpy's multiply.
const NUMPY_EDGE: usize = 2048;
/// Doubles in each of the triad case's three arrays: 64 MiB each.
const TRIAD_ELEMENTS: usize = 8 << 20;
const ROUNDS: usize = 12;

fn sizes() -> &'static [usize] {
    if harness::test_mode() {
        &TEST_SIZES
    } else {
        &SIZES
    }
}

/// Square matrices of one edge, filled once and shared by every case of
/// that edge.
struct Operands {
    a: Vec<f64>,
    b: Vec<f64>,
}

fn operands(n: usize) -> Arc<Operands> {
    static MADE: Mutex<Vec<(usize, Arc<Operands>)>> = Mutex::new(Vec::new());
    let mut made = MADE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, made)) = made.iter().find(|(edge, _)| *edge == n) {
        return Arc::clone(made);
    }
    let fill = |seed: usize| {
        (0..n * n)
            .map(|i| ((i * seed) % 17) as f64 / 17.0)
            .collect()
    };
    let operands = Arc::new(Operands {
        a: fill(7),
        b: fill(11),
    });
    made.push((n, Arc::clone(&operands)));
    operands
}

#[nnbench::product(
    kernel = ["naive", "blocked", "matrixmultiply"],
    n = sizes(),
    flops = 2 * n * n * n,
    bytes = 8 * 3 * n * n,
)]
fn gemm(kernel: &str, n: &usize) -> f64 {
    let n = *n;
    let operands = operands(n);
    let mut c = vec![0.0; n * n];
    match kernel {
        "naive" => gemm_kernels::naive(n, &operands.a, &operands.b, &mut c),
        "blocked" => gemm_kernels::blocked(n, &operands.a, &operands.b, &mut c),
        _ => gemm_kernels::library(n, &operands.a, &operands.b, &mut c),
    }
    c[n * n - 1]
}

fn triad_elements() -> [usize; 1] {
    [if harness::test_mode() {
        1 << 16
    } else {
        TRIAD_ELEMENTS
    }]
}

/// The triad's three arrays, `a`, `b` and `c`.
static TRIAD: Mutex<[Vec<f64>; 3]> = Mutex::new([Vec::new(), Vec::new(), Vec::new()]);

/// STREAM's triad, `a = b + s · c`, over arrays of `n` doubles each:
/// two operations an element, three doubles moved.
#[nnbench::product(n = triad_elements(), flops = 2 * n, bytes = 3 * 8 * n)]
fn triad(n: usize) -> f64 {
    let mut arrays = TRIAD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if arrays[0].len() != n {
        *arrays = [vec![0.0; n], vec![1.0; n], vec![2.0; n]];
    }
    let [a, b, c] = &mut *arrays;
    let scalar = std::hint::black_box(3.0);
    for ((a, b), c) in a.iter_mut().zip(b.iter()).zip(c.iter()) {
        *a = b + scalar * c;
    }
    a[n - 1]
}

/// The peers' figures of one round, beside the roofs measured in it.
struct Round {
    roofs: MachineRoofs,
    numpy: f64,
    stream_one: f64,
    stream_all: f64,
}

/// Finds STREAM: `NNBENCH_STREAM`, or the binary `scripts/stream.sh`
/// builds (or finds cached).
fn stream() -> Result<PathBuf, String> {
    peer::made_by("scripts/stream.sh", "NNBENCH_STREAM")
}

/// What `command` printed, as text, or why it failed.
fn printed(command: &mut Command) -> Result<String, String> {
    let output = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(format!("{command:?} failed: {}", said.trim()));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// STREAM's triad, in bytes a second, over three arrays of `elements`
/// doubles on `threads` threads, each bound to a core.
fn stream_triad(stream: &PathBuf, elements: u64, threads: usize) -> Result<f64, String> {
    let text = printed(
        Command::new(stream)
            .arg(elements.to_string())
            .env("OMP_NUM_THREADS", threads.to_string())
            .env("OMP_PROC_BIND", "close")
            .env("OMP_PLACES", "cores"),
    )?;
    text.lines()
        .find_map(|line| line.strip_prefix("triad "))
        .and_then(|rate| rate.trim().parse().ok())
        .ok_or_else(|| format!("STREAM printed no triad rate: {text}"))
}

/// numpy's one-thread multiply of `edge`-sided matrices, in FLOP/s.
fn numpy_gemm(python: &std::path::Path, edge: usize) -> Result<f64, String> {
    let text = printed(&mut peer::script(
        python,
        "numpy_gemm.py",
        &[edge.to_string(), "3".to_owned()],
    ))?;
    text.trim()
        .parse()
        .map_err(|_| format!("numpy_gemm.py printed no rate: {text}"))
}

/// One round: the roofs measured again, and each peer beside them.
fn round(python: &std::path::Path, stream: &PathBuf) -> Result<Round, String> {
    let here = nnbench::machine::this_machine();
    let roofs = nnbench::machine::roofs(&here, true).map_err(|e| e.to_string())?;
    let elements = roofs.method.triad_array_bytes / 8;
    Ok(Round {
        numpy: numpy_gemm(python, NUMPY_EDGE)?,
        stream_one: stream_triad(stream, elements, 1)?,
        stream_all: stream_triad(stream, elements, roofs.method.cores)?,
        roofs,
    })
}

fn ratio(value: f64) -> String {
    format!("{value:.3}")
}

fn seconds(value: f64) -> String {
    format!("{value:.2} s")
}

/// The rounds of the roofs beside their references, and the rate numpy
/// reached (the median of the rounds').
fn references() -> Result<f64, String> {
    let python = peer::python()?;
    let stream = stream()?;
    let rounds: Vec<Round> = (0..ROUNDS)
        .map(|_| round(&python, &stream))
        .collect::<Result<_, _>>()?;
    let of = |figure: fn(&Round) -> f64| rounds.iter().map(figure).collect::<Vec<f64>>();
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "figure",
        "median of rounds",
        "reference",
        "verdict",
    ]);
    let numpy = median(of(|r| r.numpy));
    type Shown = fn(f64) -> String;
    let rows: [(&str, Vec<f64>, String, Goal, Shown); 4] = [
        (
            "f64 peak, one core / numpy's one-thread 2048² DGEMM",
            of(|r| r.roofs.flops_f64.one_core / r.numpy),
            format!("numpy {:.1} GFLOP/s", numpy / 1e9),
            Goal::Within(1.0, 1.25),
            ratio,
        ),
        (
            "triad, one core / STREAM's triad on one thread",
            of(|r| r.roofs.bandwidth.one_core / r.stream_one),
            format!("STREAM {:.1} GB/s", median(of(|r| r.stream_one)) / 1e9),
            Goal::Within(0.9, 1.1),
            ratio,
        ),
        (
            "triad, all cores / STREAM's triad on as many threads",
            of(|r| r.roofs.bandwidth.all_cores / r.stream_all),
            format!("STREAM {:.1} GB/s", median(of(|r| r.stream_all)) / 1e9),
            Goal::Within(0.9, 1.1),
            ratio,
        ),
        (
            "seconds to measure the roofs",
            of(|r| r.roofs.method.seconds),
            "limit 5 s".to_owned(),
            Goal::AtMost(5.0),
            seconds,
        ),
    ];
    for (figure, values, reference, goal, show) in rows {
        let verdict = harness::judged(figure, &values, goal, 1.0, show);
        table.add_row([figure.to_owned(), show(median(&values)), reference, verdict]);
    }
    harness::table(&table);
    let noisy = rounds.iter().filter(|r| r.roofs.method.noisy).count();
    harness::note(format!(
        "{ROUNDS} rounds, each measuring the roofs again ({} kernels on {} cores, triad arrays of {} MiB), then numpy and STREAM; {noisy} of them on a machine the roofs call busy.",
        rounds[0].roofs.method.units,
        rounds[0].roofs.method.cores,
        rounds[0].roofs.method.triad_array_bytes >> 20,
    ));
    Ok(numpy)
}

/// The time a run spends on roofs kept for its machine: reading them, as
/// each run that places a case does.
fn kept_roofs_read() -> Result<(), String> {
    let here = nnbench::machine::this_machine();
    let times: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let started = Instant::now();
            let roofs = nnbench::machine::roofs(&here, false).map_err(|e| e.to_string())?;
            let took = started.elapsed().as_secs_f64();
            Ok(if roofs.method.cached { took } else { f64::NAN })
        })
        .collect::<Result<_, String>>()?;
    if times.iter().any(|t| t.is_nan()) {
        harness::note(
            "Reading the kept roofs: not timed, as the machine was quiet again after roofs measured on a busy one, and they were measured again.",
        );
        return Ok(());
    }
    let show = |t: f64| format!("{:.0} µs", t * 1e6);
    harness::note(format!(
        "Reading the kept roofs, as a run does: {}.",
        harness::judged("reading kept roofs", &times, Goal::AtMost(1e-3), 1.0, show)
    ));
    Ok(())
}

/// One run of the sweep, placed under the kept roofs.
fn sweep() -> Result<RunRecord, String> {
    let sampling = if harness::test_mode() {
        Sampling::new()
            .sample_size(3)
            .warm_up_time(Duration::from_millis(1))
            .measurement_time(Duration::from_millis(10))
    } else {
        Sampling::new()
            .sample_size(10)
            .warm_up_time(Duration::from_millis(100))
            .measurement_time(Duration::from_millis(500))
    };
    let mut runner = Runner::new()
        .name("roofline")
        .quiet(true)
        .sampling(sampling);
    if !harness::test_mode() {
        // For `nnbench report`, as the book's roofline page draws it.
        runner = runner.latest_dir(nnbench::record::target_dir().join("nnbench/roofline"));
    }
    runner.run().map_err(|e| format!("{e:#}"))
}

fn work<'a>(record: &'a RunRecord, id: &str) -> Result<&'a WorkRecord, String> {
    harness::case(record, id)?
        .work
        .as_deref()
        .ok_or_else(|| format!("{id}: no work"))
}

/// The roof a case is under, recomputed from the roofs as the book states
/// it, on one core.
fn roof_of(work: &WorkRecord, roofs: &MachineRoofs) -> f64 {
    let peak = roofs.flops_f64.one_core;
    let intensity = work.intensity.unwrap_or(f64::INFINITY);
    peak.min(intensity * roofs.bandwidth.one_core)
}

/// The sweep's cases under the roofs, and the checks on their shares.
fn placed(record: &RunRecord, numpy: Option<f64>) -> Result<(), String> {
    let roofs = record
        .context
        .machine
        .as_ref()
        .and_then(|m| m.roofs.as_ref());
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "n",
        "naive",
        "blocked",
        "matrixmultiply",
        "ordered",
    ]);
    let mut shares_hold = true;
    let mut ordered_from_256 = true;
    for &n in sizes() {
        let mut row = vec![n.to_string()];
        let mut rates = Vec::new();
        for kernel in ["naive", "blocked", "matrixmultiply"] {
            let work = work(record, &format!("gemm/kernel={kernel},n={n}"))?;
            let rate = work.flops_per_s.ok_or("a case without its rate")?;
            rates.push(rate);
            let share = match (work.roof_fraction, roofs) {
                (Some(share), Some(roofs)) => {
                    let recomputed = rate / roof_of(work, roofs);
                    shares_hold &= share > 0.0
                        && share <= 1.0
                        && (share - recomputed).abs() <= 1e-9 * recomputed;
                    format!(
                        ", {:.0}% of the {} roof",
                        100.0 * share,
                        work.roof.map_or_else(String::new, |r| r.to_string())
                    )
                }
                _ => String::new(),
            };
            row.push(format!("{:.2} GFLOP/s{share}", rate / 1e9));
        }
        let ordered = rates.windows(2).all(|w| w[0] < w[1]);
        if n >= 256 {
            ordered_from_256 &= ordered;
        }
        row.push(if ordered { "yes" } else { "no" }.to_owned());
        table.add_row(row);
    }
    harness::table(&table);
    let Some(roofs) = roofs else {
        let why = record
            .context
            .machine
            .as_ref()
            .and_then(|m| m.roofs_reason.clone())
            .unwrap_or_default();
        harness::note(format!("No roofs to place the cases under: {why}"));
        return Ok(());
    };
    harness::note(format!(
        "Every share of the roof in (0, 1] and the case's rate over its roof: {} {}.",
        if shares_hold { "yes" } else { "no" },
        harness::verdict("shares of the roof", shares_hold, shares_hold)
    ));
    harness::note(format!(
        "naive < blocked < matrixmultiply at each size from 256: {} {}.",
        if ordered_from_256 { "yes" } else { "no" },
        harness::verdict("kernel order", ordered_from_256, true)
    ));
    let largest = sizes()[sizes().len() - 1];
    let library = work(record, &format!("gemm/kernel=matrixmultiply,n={largest}"))?;
    if let (Some(numpy), Some(share), Some(rate)) =
        (numpy, library.roof_fraction, library.flops_per_s)
    {
        let near = share / (rate / numpy);
        harness::note(format!(
            "matrixmultiply at n={largest}: {:.1}% of the compute roof, and {:.1}% of numpy's rate; the share is {near:.3} of that ratio, which lies in 0.80-1.00 where the roof is 1-1.25 times numpy's rate {}.",
            100.0 * share,
            100.0 * rate / numpy,
            harness::verdict("library share", (0.8..=1.0).contains(&near), true)
        ));
    }
    let triad = work(record, &format!("triad/n={}", triad_elements()[0]))?;
    if let Some(share) = triad.roof_fraction {
        let met = triad.roof == Some(Roof::Memory) && share >= 0.7;
        if share > 1.0 {
            harness::note(
                "The triad passed the memory roof, which is measured over arrays four times the last-level cache the machine reports: over these smaller ones, it moved more.",
            );
        }
        harness::note(format!(
            "The triad over arrays of {:.1} MiB: {:.1} GB/s, {:.0}% of the {} roof, goal at least 70% {}.",
            (triad_elements()[0] * 8) as f64 / f64::from(1 << 20),
            triad.bytes_per_s.unwrap_or(0.0) / 1e9,
            100.0 * share,
            triad.roof.map_or_else(String::new, |r| r.to_string()),
            harness::verdict("triad share", met, true)
        ));
    }
    if !harness::test_mode() {
        let roof_for = roofs.flops_f64.one_core;
        harness::note(format!(
            "Roofs of the sweep: {:.1} GFLOP/s f64 and {:.1} GB/s on one core.",
            roof_for / 1e9,
            roofs.bandwidth.one_core / 1e9
        ));
    }
    Ok(())
}

/// The three kernels give one product.
fn kernels_agree() -> bool {
    let n = 70;
    let a: Vec<f64> = (0..n * n).map(|i| (i % 7) as f64).collect();
    let b: Vec<f64> = (0..n * n).map(|i| (i % 5) as f64 - 2.0).collect();
    let mut want = vec![0.0; n * n];
    gemm_kernels::naive(n, &a, &b, &mut want);
    [gemm_kernels::blocked, gemm_kernels::library]
        .iter()
        .all(|kernel| {
            let mut got = vec![1.0; n * n];
            kernel(n, &a, &b, &mut got);
            got == want
        })
}

fn measure() -> Result<(), String> {
    if !kernels_agree() {
        return Err("the three GEMM kernels disagree".to_owned());
    }
    let numpy = if harness::test_mode() {
        // An unoptimized build cannot measure roofs: the peers run once,
        // small, to show that they run.
        let python = peer::python()?;
        numpy_gemm(&python, 64)?;
        stream_triad(&stream()?, 100_000, 1)?;
        None
    } else {
        let numpy = references()?;
        kept_roofs_read()?;
        Some(numpy)
    };
    let record = sweep()?;
    placed(&record, numpy)
}

fn main() {
    if !harness::should_run("roofline") {
        return;
    }
    if std::env::var_os("MATMUL_NUM_THREADS").is_none() {
        // SAFETY: no other thread runs yet to read the environment.
        unsafe { std::env::set_var("MATMUL_NUM_THREADS", "1") };
    }
    if let Err(message) = measure() {
        eprintln!("roofline: {message}");
        std::process::exit(1);
    }
    harness::publish("roofline");
}
