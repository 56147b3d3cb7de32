//! `--profile` and `Runner::profile`, as a user meets them: a bench binary
//! (this one, `harness = false`, run again as the bench) draws a flamegraph
//! of each case's calls, and the memos the cases load stay out of it.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use nnbench::record::CaseRecord;
use nnbench::{Memo, RunRecord, Runner, Sampling};

/// A table made by work of its own, which no flamegraph may show.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Table(u64);

impl Memo for Table {
    type Value = Vec<u64>;
    fn compute(&self) -> nnbench::Result<Vec<u64>> {
        Ok(memo_only_fill(self.0))
    }
}

/// About 1.5 s of computing: long enough that a table loading beside the
/// case before it (`--prefetch`) is still loading while that case is
/// profiled.
#[inline(never)]
fn memo_only_fill(seed: u64) -> Vec<u64> {
    let table: Vec<u64> = (0..1024).map(|i| i * 2654435761 + seed).collect();
    let until = Instant::now() + Duration::from_millis(1500);
    let mut mixed = 0;
    while Instant::now() < until {
        mixed ^= support::spin(10_000, &table);
    }
    table.into_iter().map(|x| x ^ (mixed & 1)).collect()
}

#[inline(never)]
fn case_hot_loop(table: &[u64]) -> u64 {
    support::spin(200_000, table)
}

#[nnbench::product(table = [Table(1), Table(2)])]
fn lookup(table: &[u64]) -> u64 {
    case_hot_loop(table)
}

#[inline(never)]
fn thread_hot_loop() -> u64 {
    support::spin(100_000, &[3, 5, 7])
}

#[nnbench::benchmark(threads = [2])]
fn on_threads() -> u64 {
    thread_hot_loop()
}

#[inline(never)]
fn request_hot_loop() -> u64 {
    support::spin(100_000, &[11, 13])
}

#[nnbench::benchmark(concurrency = [2])]
fn under_load() -> u64 {
    request_hot_loop()
}

static CALLS: AtomicU32 = AtomicU32::new(0);

/// Succeeds once, when timed; fails when profiled.
#[nnbench::benchmark(timing = once)]
fn fails_later() -> Result<u32, String> {
    match CALLS.fetch_add(1, Ordering::Relaxed) {
        0 => Ok(1),
        n => Err(format!("call {n} refused")),
    }
}

fn bench(target: &Path, args: &[&str]) -> Output {
    support::bench_binary()
        .env("CARGO_TARGET_DIR", target)
        .args([
            "--bench",
            "--quiet",
            "--once",
            "--measurement-time",
            "300ms",
        ])
        .args(args)
        .output()
        .expect("the bench runs")
}

fn latest(target: &Path) -> RunRecord {
    RunRecord::read(target.join("nnbench/profile/latest.json")).expect("latest.json")
}

fn profiles(target: &Path) -> PathBuf {
    std::path::absolute(target.join("nnbench/profile/profiles")).unwrap()
}

/// The flamegraph of `case`, which must have one under `dir`.
fn flamegraph(case: &CaseRecord, dir: &Path) -> String {
    let path = case
        .profile
        .as_ref()
        .unwrap_or_else(|| panic!("{} has a profile: {:?}", case.id, case.warnings));
    assert!(
        path.starts_with(dir),
        "{} is under {}",
        path.display(),
        dir.display()
    );
    std::fs::read_to_string(path).expect("the flamegraph is written")
}

fn each_case_has_a_flamegraph_of_its_calls_without_the_memos() {
    let target = tempfile::tempdir().unwrap();
    let output = bench(target.path(), &["--prefetch", "--profile", "lookup/"]);
    assert!(output.status.success(), "{}", support::said(&output));
    let record = latest(target.path());
    assert_eq!(record.cases.len(), 2);
    for case in &record.cases {
        assert!(case.error.is_none(), "{:?}", case.error);
        let svg = flamegraph(case, &profiles(target.path()));
        assert!(
            svg.contains("case_hot_loop"),
            "{} names its hot function",
            case.id
        );
        assert!(
            !svg.contains("memo_only_fill"),
            "{} leaves its memos out",
            case.id
        );
    }
    assert!(
        record.cases.iter().any(|c| !c.memo.prefetched.is_empty()),
        "a table loaded beside the case before it"
    );
    // The report links each case's flamegraph: relative to the page where
    // it lies below the page's folder, so that the folder can move whole,
    // and by its absolute path from a page elsewhere.
    let elsewhere = tempfile::tempdir().unwrap();
    for page in [
        target.path().join("report.html"),
        elsewhere.path().join("report.html"),
    ] {
        let made = support::tool()
            .env("NNBENCH_HISTORY", "/no/such/history.sqlite")
            .arg("report")
            .arg(target.path().join("nnbench/profile/latest.json"))
            .arg("-o")
            .arg(&page)
            .output()
            .unwrap();
        assert!(made.status.success(), "{}", support::said(&made));
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(html.contains("<th>profile</th>"));
        for case in &record.cases {
            let path = case.profile.as_ref().unwrap();
            let linked = path
                .strip_prefix(page.parent().unwrap())
                .unwrap_or(path)
                .to_str()
                .unwrap();
            assert_eq!(linked.starts_with('/'), page.starts_with(elsewhere.path()));
            let link = linked.replace('(', "%28").replace(')', "%29");
            assert!(
                html.contains(&format!("<a href=\"{link}\">flamegraph</a>")),
                "{link} in {html}"
            );
            assert!(page.parent().unwrap().join(linked).is_file());
        }
    }
}

fn an_isolated_worker_draws_the_flamegraphs_of_its_cases() {
    let target = tempfile::tempdir().unwrap();
    let output = bench(target.path(), &["--isolate", "--profile", "lookup/"]);
    assert!(output.status.success(), "{}", support::said(&output));
    let record = latest(target.path());
    assert!(record.isolate);
    for case in &record.cases {
        let svg = flamegraph(case, &profiles(target.path()));
        assert!(svg.contains("case_hot_loop"));
        assert!(!svg.contains("memo_only_fill"));
    }
}

fn calls_on_threads_and_under_load_are_profiled_where_they_run() {
    let target = tempfile::tempdir().unwrap();
    let output = bench(target.path(), &["--profile", "on_threads", "under_load"]);
    assert!(output.status.success(), "{}", support::said(&output));
    let record = latest(target.path());
    assert_eq!(record.cases.len(), 2);
    let threads = record
        .cases
        .iter()
        .find(|c| c.id.starts_with("on_threads"))
        .unwrap();
    assert!(flamegraph(threads, &profiles(target.path())).contains("thread_hot_loop"));
    let load = record
        .cases
        .iter()
        .find(|c| c.id.starts_with("under_load"))
        .unwrap();
    assert!(flamegraph(load, &profiles(target.path())).contains("request_hot_loop"));
}

fn a_call_that_fails_while_profiled_fails_its_case() {
    let target = tempfile::tempdir().unwrap();
    let output = bench(target.path(), &["--profile", "fails_later"]);
    assert_eq!(output.status.code(), Some(1), "{}", support::said(&output));
    let record = latest(target.path());
    let error = record.cases[0].error.as_ref().expect("the case failed");
    assert!(
        error.summary().contains("while profiled"),
        "{}",
        error.summary()
    );
    assert!(
        error.summary().contains("call 1 refused"),
        "{}",
        error.summary()
    );
}

fn profiling_is_refused_beside_counting_instructions() {
    let output = support::bench_binary()
        .args(["--profile", "--instructions"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        support::said(&output).contains("--profile"),
        "{}",
        support::said(&output)
    );
}

fn run_profiled(dir: &Path) -> CaseRecord {
    let record = Runner::new()
        .filter("lookup/table=Table(1)")
        .exact(true)
        .test_mode(true)
        .quiet(true)
        .latest_dir(dir)
        .sampling(Sampling::new().measurement_time(Duration::from_millis(200)))
        .profile(true)
        .run()
        .expect("the run is recorded");
    assert_eq!(record.cases.len(), 1);
    record.cases.into_iter().next().unwrap()
}

fn a_profiler_that_cannot_start_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let _other = pprof::ProfilerGuard::new(100).expect("this test's own profiler starts");
    let case = run_profiled(dir.path());
    assert!(case.error.is_none(), "{:?}", case.error);
    assert!(case.value.is_u64(), "the case was measured: {}", case.value);
    assert!(case.profile.is_none());
    assert!(
        case.warnings
            .iter()
            .any(|w| w == "no profile: another profiler is already sampling this process"),
        "{:?}",
        case.warnings
    );
}

fn a_flamegraph_that_cannot_be_written_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("profiles"),
        "a file where the folder would be",
    )
    .unwrap();
    let case = run_profiled(dir.path());
    assert!(case.error.is_none(), "{:?}", case.error);
    assert!(case.profile.is_none());
    assert!(
        case.warnings
            .iter()
            .any(|w| w.starts_with("no profile: could not write ") && w.contains("profiles")),
        "{:?}",
        case.warnings
    );
}

fn the_runner_draws_beside_its_latest_record() {
    let dir = tempfile::tempdir().unwrap();
    let case = run_profiled(dir.path());
    let svg = flamegraph(
        &case,
        &std::path::absolute(dir.path().join("profiles")).unwrap(),
    );
    assert!(svg.contains("case_hot_loop"));
    assert!(
        svg.contains("lookup/table=Table(1)"),
        "the title names the case"
    );
}

fn main() {
    support::main(
        "profile",
        support::checks![
            each_case_has_a_flamegraph_of_its_calls_without_the_memos,
            an_isolated_worker_draws_the_flamegraphs_of_its_cases,
            calls_on_threads_and_under_load_are_profiled_where_they_run,
            a_call_that_fails_while_profiled_fails_its_case,
            profiling_is_refused_beside_counting_instructions,
            a_profiler_that_cannot_start_is_a_warning,
            a_flamegraph_that_cannot_be_written_is_a_warning,
            the_runner_draws_beside_its_latest_record,
        ],
    );
}
