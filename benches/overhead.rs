//! The harness's own costs, each measured side by side in one run:
//!
//! 1. the same trivial function sampled by nnbench and by plain criterion
//!    (`Bencher::iter`): ratio of the medians per call;
//! 2. the harness's cost per case, `once` mode, over a 10,000-case grid of a
//!    trivial function, with memory recording on and off, and the bytes a
//!    case takes in the record file;
//! 3. what reading and resetting the peaks around the call (the call's
//!    own memory, apart from its memos) adds to each case: 1,000 cases
//!    with a setup hook, and with a teardown hook, against as many
//!    without;
//! 4. a resolve of a memo already in the cache;
//! 5. Python nnbench 0.4's cost per case on the same grid, alternating
//!    with (2), when `scripts/python-peer.sh` can make its environment:
//!    as it runs by default, and recording the interpreter and the git
//!    state as nnbench always records its toolchain and commit.
//!
//! Each side's span is its whole run less its calls: collecting the
//! cases, the context, each case, the record. nnbench is measured twice:
//! in a process whose earlier runs left it the memory a run needs (the
//! harness's own work), and as a bench binary runs, once in a fresh
//! process, where the kernel also gives it that memory a page at a time.
//! The Python peer runs once in each interpreter it starts.
//!
//! `cargo bench --bench overhead`

#[path = "support/harness.rs"]
mod harness;
use harness::Goal;
#[path = "support/peer.rs"]
mod peer;
use harness::stats;

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use criterion::Criterion;
use nnbench::{Memo, Runner, Sampling, Timing};
use nnbench_vocab::format_ns;
use stats::median;

/// Some nanoseconds of work that the optimizer cannot remove.
#[inline(never)]
fn trivial() -> u64 {
    (0..64u64).map(black_box).fold(0, u64::wrapping_add)
}

#[nnbench::benchmark(timing = sampled)]
fn overhead_trivial() -> u64 {
    trivial()
}

#[nnbench::product(a = 0..100, b = 0..100)]
fn overhead_grid(a: u32, b: u32) -> u32 {
    black_box(a ^ b)
}

/// A hook that does nothing: what a case with one pays is the call's own
/// memory figures around it.
fn nothing(_: &nnbench::State, _: &nnbench::Params) {}

/// 1,000 cases alike, without hooks and with each kind: the difference of
/// their costs a case is what the call's own memory window adds.
#[nnbench::product(a = 0..100, b = 0..10)]
fn window_none(a: u32, b: u32) -> u32 {
    black_box(a ^ b)
}

#[nnbench::product(a = 0..100, b = 0..10, setup = nothing)]
fn window_setup(a: u32, b: u32) -> u32 {
    black_box(a ^ b)
}

#[nnbench::product(a = 0..100, b = 0..10, teardown = nothing)]
fn window_teardown(a: u32, b: u32) -> u32 {
    black_box(a ^ b)
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Tokenizer {
    vocabulary: &'static str,
    size: usize,
}

impl Memo for Tokenizer {
    type Value = Vec<u32>;
    fn compute(&self) -> nnbench::Result<Vec<u32>> {
        Ok((0..self.size as u32).collect())
    }
}

/// Settings of both sides of the comparison.
fn sampling() -> Sampling {
    Sampling::new()
        .sample_size(50)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
}

/// Median time per call that nnbench's sampling records.
fn nnbench_median() -> f64 {
    let record = Runner::new()
        .filter("overhead_trivial")
        .exact(true)
        .timing(Timing::Criterion)
        .sampling(sampling())
        .quiet(true)
        .run()
        .unwrap_or_else(|e| panic!("nnbench run: {e:#}"));
    record.cases[0].time.median_ns
}

/// Median time per call of criterion's own samples of `Bencher::iter`, read
/// back from the `sample.json` criterion writes.
fn criterion_median() -> f64 {
    let s = sampling();
    let mut criterion = Criterion::default()
        .sample_size(s.sample_size.unwrap_or(100))
        .warm_up_time(s.warm_up_time.unwrap_or_default())
        .measurement_time(s.measurement_time.unwrap_or_default());
    criterion.bench_function("overhead_plain_criterion", |b| b.iter(overhead_trivial));
    let path =
        nnbench::record::target_dir().join("criterion/overhead_plain_criterion/new/sample.json");
    median_of_sample_file(&path)
}

fn median_of_sample_file(path: &Path) -> f64 {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let sample: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let iters = sample["iters"].as_array().cloned().unwrap_or_default();
    let times = sample["times"].as_array().cloned().unwrap_or_default();
    let per_call: Vec<f64> = iters
        .iter()
        .zip(&times)
        .filter_map(|(i, t)| Some(t.as_f64()? / i.as_f64()?))
        .collect();
    median(&per_call)
}

/// Harness time per case of the 10,000-case grid: the whole run, the
/// registry and the schedule included, less the function's own time; and
/// the pages the process faulted in meanwhile, per case.
fn per_case_cost(record_memory: bool) -> (f64, f64) {
    grid_cost("overhead_grid/", record_memory)
}

/// [`per_case_cost`] of the cases `filter` selects.
fn grid_cost(filter: &str, record_memory: bool) -> (f64, f64) {
    let faults = minor_faults();
    let start = Instant::now();
    let record = Runner::new()
        .filter(filter)
        .timing(Timing::Once)
        .memory(record_memory)
        .quiet(true)
        .run()
        .unwrap_or_else(|e| panic!("grid run: {e:#}"));
    let total = start.elapsed().as_nanos() as f64;
    let faulted = minor_faults() - faults;
    let calls: f64 = record.cases.iter().map(|c| c.time.median_ns).sum();
    let cases = record.cases.len() as f64;
    ((total - calls) / cases, faulted as f64 / cases)
}

/// The bytes each case of the 10,000-case grid takes in the record file,
/// timed once with memory recorded, written as a bench binary writes it.
fn record_bytes_per_case() -> f64 {
    let record = Runner::new()
        .filter("overhead_grid/")
        .timing(Timing::Once)
        .quiet(true)
        .run()
        .unwrap_or_else(|e| panic!("grid run: {e:#}"));
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("grid.json");
    record.write(&path).expect("the record is written");
    let bytes = std::fs::metadata(&path).expect("the record").len();
    bytes as f64 / record.cases.len() as f64
}

/// Pages this process has faulted in without reading a file.
fn minor_faults() -> i64 {
    usage().map_or(0, |u| u.ru_minflt)
}

/// What `getrusage` says of this process.
fn usage() -> Option<libc::rusage> {
    // SAFETY: getrusage only writes the plain struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    (unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0).then_some(usage)
}

/// Python nnbench's cost per case on the same 10,000-case grid, measured
/// as [`per_case_cost`] measures nnbench's: its run (collection
/// included) less its calls, per case; `context`: with the interpreter
/// and the git state recorded.
fn python_per_case_cost(python: &Path, context: bool) -> Result<f64, String> {
    let args: Vec<String> = context
        .then(|| "--context".to_owned())
        .into_iter()
        .collect();
    let output = peer::script(python, "peer_overhead.py", &args)
        .output()
        .map_err(|e| format!("peer_overhead.py: {e}"))?;
    let said = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let error = String::from_utf8_lossy(&output.stderr);
        return Err(format!("peer_overhead.py failed: {}", error.trim()));
    }
    let figures: Vec<f64> = said
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    match figures[..] {
        [cases, wall, calls] if cases > 0.0 => Ok((wall - calls) * 1e9 / cases),
        _ => Err(format!("peer_overhead.py printed `{}`", said.trim())),
    }
}

/// ns per resolve of a memo that is in the cache.
fn cache_hit() -> Vec<f64> {
    let memo = Tokenizer {
        vocabulary: "gpt2",
        size: 50_257,
    };
    drop(nnbench::memo::resolve(&memo).expect("computes"));
    let times: Vec<f64> = (0..21)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..100_000 {
                black_box(nnbench::memo::resolve(black_box(&memo)).ok());
            }
            start.elapsed().as_nanos() as f64 / 100_000.0
        })
        .collect();
    nnbench::memo::evict(&memo);
    times
}

/// Set in the children that [`in_child`] starts: `RUNS MEMORY`, the runs
/// each makes and whether they record memory figures (`1`).
const CHILD: &str = "NNBENCH_OVERHEAD_CHILD";

/// The peak a process inherits from its parent at `exec`, where it lies
/// above its own: `getrusage` reports the larger of the two, and the
/// runner then reads a case's peak from `/proc/self/status` instead.
fn inherited_peak() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let own: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    let reported = u64::try_from(usage()?.ru_maxrss).ok()?;
    (reported > own + 1024).then_some(reported * 1024)
}

/// [`per_case_cost`] of `runs` runs in a child of this process, started
/// before this one has grown: with memory figures, its inherited peak lies
/// below its cases', and they are read with `getrusage`. The first run is
/// the child's first, as a bench binary's only run is.
fn in_child(runs: usize, record_memory: bool) -> Result<Vec<(f64, f64)>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let output = std::process::Command::new(&exe)
        .env(CHILD, format!("{runs} {}", u8::from(record_memory)))
        .output()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_owned());
    }
    let said = String::from_utf8_lossy(&output.stdout);
    let runs: Vec<(f64, f64)> = said
        .lines()
        .filter_map(|line| {
            let (cost, faults) = line.split_once(' ')?;
            Some((cost.parse().ok()?, faults.parse().ok()?))
        })
        .collect();
    match runs.is_empty() {
        true => Err(format!("the child printed `{}`", said.trim())),
        false => Ok(runs),
    }
}

/// The cost and faults per case of bench binaries' runs: each of `runs`
/// children makes one, started before this process has grown.
fn first_runs(runs: usize, record_memory: bool) -> Result<Vec<(f64, f64)>, String> {
    (0..runs)
        .map(|_| Ok(in_child(1, record_memory)?[0]))
        .collect()
}

/// The costs per case of a process's later runs: those of `runs` runs in
/// a child, after its first, that faulted in next to no memory (a run's
/// records can still take fresh pages in the second).
fn later_runs(runs: usize, record_memory: bool) -> Result<Vec<f64>, String> {
    let costs: Vec<f64> = in_child(runs + 2, record_memory)?[1..]
        .iter()
        .filter(|&&(_, faults)| faults < 0.01)
        .map(|&(cost, _)| cost)
        .collect();
    match costs.is_empty() {
        true => Err("every run of the child faulted in memory".to_owned()),
        false => Ok(costs),
    }
}

/// The row of a process's later runs, whose costs are `later`: their
/// median and its bounds, with no goal of their own, since the harness's
/// cost is judged against its Python peer's, like for like.
fn later_row(what: &str, later: &Result<Vec<f64>, String>) -> [String; 3] {
    match later {
        Ok(costs) => [
            what.to_owned(),
            format_ns(median(costs)),
            match stats::median_bounds(costs, 0.95) {
                Some((low, high)) => format!(
                    "{} (95% bounds {}-{}), no goal: the like-for-like ratio to Python below is the harness's",
                    format_ns(median(costs)),
                    format_ns(low),
                    format_ns(high)
                ),
                None => {
                    "no goal: the like-for-like ratio to Python below is the harness's".to_owned()
                }
            },
        ],
        Err(e) => [what.to_owned(), "not measured".to_owned(), e.clone()],
    }
}

/// The row of a bench binary's run, whose figures `first` holds: with
/// memory figures (`memory`) or without.
fn first_run_row(first: &Result<Vec<(f64, f64)>, String>, memory: &str) -> [String; 3] {
    let what = format!(
        "  a bench binary's run, {memory}: its process's first, the kernel faulting its memory in page by page"
    );
    match first {
        Ok(runs) => [
            what,
            format!(
                "{} ({:.2} page faults a case)",
                format_ns(median(runs.iter().map(|r| r.0))),
                median(runs.iter().map(|r| r.1))
            ),
            "no goal: the same work, and the machine's cost of fresh memory".to_owned(),
        ],
        Err(e) => [what, "not measured".to_owned(), e.clone()],
    }
}

fn main() {
    if let Some(child) = std::env::var_os(CHILD) {
        let child = child.to_string_lossy().into_owned();
        let (runs, memory) = child.split_once(' ').unwrap_or((&child, "1"));
        for _ in 0..runs.parse().unwrap_or(1) {
            let (cost, faults) = per_case_cost(memory == "1");
            println!("{cost} {faults}");
        }
        return;
    }
    if !harness::should_run("overhead") {
        return;
    }
    let test_mode = harness::test_mode();
    let runs = if test_mode { 1 } else { 9 };
    // Children first, before this process grows: they inherit its peak,
    // which would put theirs above their cases'.
    let first = first_runs(runs, false);
    let first_with_memory = first_runs(runs, true);
    let later_with_memory = later_runs(runs, true);
    let later = later_runs(runs, false);
    let inherited = inherited_peak();

    let hit = cache_hit();
    let mut python = peer::python();
    let mut with_memory = Vec::new();
    let (mut pythons, mut pythons_with_context) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        with_memory.push(per_case_cost(true).0);
        if let Ok(interpreter) = &python {
            let costs = python_per_case_cost(interpreter, false)
                .and_then(|c| Ok((c, python_per_case_cost(interpreter, true)?)));
            match costs {
                Ok((plain, with_context)) => {
                    pythons.push(plain);
                    pythons_with_context.push(with_context);
                }
                Err(e) => python = Err(e),
            }
        }
    }
    let with_memory = median(&with_memory);

    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(["figure", "measured", "target / reference"]);
    if !test_mode {
        // Alternate the two sides so that both see the same machine.
        let (mut ours, mut plain) = (Vec::new(), Vec::new());
        for _ in 0..7 {
            ours.push(nnbench_median());
            plain.push(criterion_median());
        }
        let ratios: Vec<f64> = ours.iter().zip(&plain).map(|(o, p)| o / p).collect();
        let (ours, plain) = (median(&ours), median(&plain));
        table.add_row([
            "trivial function, median per call: nnbench sampled / plain criterion".to_owned(),
            format!(
                "{:.3} ({} / {})",
                median(&ratios),
                format_ns(ours),
                format_ns(plain)
            ),
            harness::judged(
                "nnbench / criterion",
                &ratios,
                Goal::Within(0.97, 1.03),
                1.0,
                |v| format!("{v:.3}"),
            ),
        ]);
    }
    table.add_row(later_row(
        "harness cost per case, once, 10,000 cases, memory recorded (peaks read with getrusage), a process's later runs",
        &later_with_memory,
    ));
    table.add_row(first_run_row(&first_with_memory, "memory recorded"));
    table.add_row([
        match inherited {
            Some(bytes) => format!(
                "  under this bench's parent, whose peak of {:.0} MiB lies above the cases' (read from /proc/self/status)",
                bytes as f64 / (1 << 20) as f64
            ),
            None => "  in this process (its parent's peak lies below its cases')".to_owned(),
        },
        format_ns(with_memory),
        "the same cases, the peak read the slower way".to_owned(),
    ]);
    table.add_row(later_row(
        "  memory not recorded, a process's later runs",
        &later,
    ));
    table.add_row(first_run_row(&first, "memory not recorded"));
    let bytes = record_bytes_per_case();
    table.add_row([
        "the record of the 10,000 cases, once, memory recorded: bytes a case".to_owned(),
        format!("{bytes:.0} bytes"),
        format!(
            "at most 400 bytes {}",
            harness::verdict(
                &format!("record bytes a case ({bytes:.0})"),
                bytes <= 400.0,
                bytes <= 400.0
            )
        ),
    ]);
    match (&python, &first, &first_with_memory, &later) {
        (Ok(_), Ok(firsts), Ok(firsts_with_memory), Ok(laters)) => {
            let (plain, with_context) = (median(&pythons), median(&pythons_with_context));
            let first = median(firsts.iter().map(|r| r.0));
            let first_with_memory = median(firsts_with_memory.iter().map(|r| r.0));
            let later = median(laters);
            // The i-th child's run against the i-th interpreter's: both
            // sides' runs are each a process's first, nnbench's as it runs
            // by default (memory recorded).
            let ratios: Vec<f64> = firsts_with_memory
                .iter()
                .zip(&pythons_with_context)
                .map(|(ours, theirs)| ours.0 / theirs)
                .collect();
            table.add_row([
                "  Python nnbench 0.4, the same grid, as it runs by default (no context, no memory), once in each interpreter"
                    .to_owned(),
                format_ns(plain),
                format!(
                    "nnbench's first run / Python: {:.2} without memory, {:.2} with",
                    first / plain,
                    first_with_memory / plain
                ),
            ]);
            table.add_row([
                "  and recording the interpreter and the git state, as nnbench does (like for like)"
                    .to_owned(),
                format_ns(with_context),
                format!(
                    "nnbench's first run, memory recorded (its default) / Python: {} (without memory: {:.2}; its later runs: {:.2})",
                    harness::judged(
                        "first run / Python",
                        &ratios,
                        Goal::AtMost(0.3),
                        harness::DEBUG_SLACK,
                        |v| format!("{v:.2}"),
                    ),
                    first / with_context,
                    later / with_context
                ),
            ]);
        }
        (Err(e), _, _, _) => {
            table.add_row([
                "  Python nnbench 0.4, the same grid".to_owned(),
                "not measured".to_owned(),
                harness::peer_missing("Python nnbench", e),
            ]);
        }
        (_, Err(e), _, _) | (_, _, Err(e), _) | (_, _, _, Err(e)) => {
            table.add_row([
                "  Python nnbench 0.4, the same grid".to_owned(),
                "not measured".to_owned(),
                e.clone(),
            ]);
        }
    }
    // Alternating, so that the machine's mood weighs on all three alike.
    let windows: Vec<(f64, f64)> = (0..if test_mode { 1 } else { 9 })
        .map(|_| {
            let none = grid_cost("window_none/", true).0;
            let setup = grid_cost("window_setup/", true).0;
            let teardown = grid_cost("window_teardown/", true).0;
            (setup - none, teardown - none)
        })
        .collect();
    let enter = median(windows.iter().map(|w| w.0).collect::<Vec<_>>());
    let leave = median(windows.iter().map(|w| w.1).collect::<Vec<_>>());
    table.add_row([
        "the call's own memory: peaks read and reset as the call starts, per case with memos or a setup hook"
            .to_owned(),
        format_ns(enter),
        "none for a case without either (its call's figures are the case's)".to_owned(),
    ]);
    table.add_row([
        "  and read as it ends, per case with a teardown hook".to_owned(),
        format_ns(leave),
        "none without one (the case's last reading serves)".to_owned(),
    ]);
    table.add_row([
        "resolve of a cached memo".to_owned(),
        format_ns(median(&hit)),
        harness::judged(
            "resolve",
            &hit,
            Goal::AtMost(100.0),
            harness::DEBUG_SLACK,
            format_ns,
        ),
    ]);
    harness::table(&table);
    let record = std::mem::size_of::<nnbench::record::CaseRecord>();
    harness::note(format!(
        "a case's record takes {record} bytes in memory, {:.2} of a 4 KiB page, before its strings, maps and samples",
        record as f64 / 4096.0
    ));
    harness::note(format!(
        "each side's cost per case is its whole run (collecting the cases, the context, the record) less its calls, over its cases; nnbench's context is its git commit and branch (read from the git directory's files), its state (one `git status` process), the machine and the toolchain; a process's later runs: medians of a child's runs after its first that faulted in no memory; first runs: medians of runs each in a process of its own, as Python's are; the other rows: medians of repeated runs, alternating{}",
        if test_mode {
            " (test mode: one run, no sampling)"
        } else {
            ""
        }
    ));
    harness::publish("overhead");
}
