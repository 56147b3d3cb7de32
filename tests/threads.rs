//! `threads = [...]`: a case per thread count, each call made on that many
//! threads started together, each thread's time in the record.

#[path = "support/alone.rs"]
mod alone;

use std::sync::Mutex;

use alone::run;
use nnbench::record::{CaseRecord, RunRecord};

fn at(record: &RunRecord, threads: u64) -> &CaseRecord {
    let case = record
        .cases
        .iter()
        .find(|c| c.params["threads"] == threads)
        .unwrap_or_else(|| panic!("no case on {threads} threads"));
    assert!(case.error.is_none(), "{:?}", case.error);
    case
}

/// About 50 µs of arithmetic.
fn work() -> u64 {
    (0..50_000u64).fold(0, |acc, n| acc.wrapping_add(std::hint::black_box(n ^ acc)))
}

static SHARED: Mutex<u64> = Mutex::new(0);

/// Every call holds one lock while it works: threads wait for each other.
#[nnbench::benchmark(threads = [1, 4], timing = sampled, warm_up = "20ms", measurement_time = "300ms")]
fn shared_lock() -> u64 {
    let mut shared = SHARED.lock().unwrap_or_else(|e| e.into_inner());
    *shared = shared.wrapping_add(work());
    *shared
}

/// Every call works on its own.
#[nnbench::benchmark(threads = [1, 4], timing = sampled, warm_up = "20ms", measurement_time = "300ms")]
fn own_work() -> u64 {
    work()
}

/// The ratio `of` the cases whose ids contain `filter` on 4 threads to
/// theirs on 1, from `first` (a run of them) and up to two runs more until
/// one `holds`: another process slows a side of the ratio for seconds at a
/// time, so one quiet run shows the ratio the cases have. The ratios of the
/// runs when none holds.
fn in_one_of_three_runs(
    first: RunRecord,
    filter: &str,
    of: impl Fn(&CaseRecord) -> f64,
    holds: impl Fn(f64) -> bool,
) -> Result<f64, Vec<f64>> {
    let mut ratios = Vec::new();
    let runs = std::iter::once(first).chain(std::iter::repeat_with(|| run(filter)));
    for record in runs.take(3) {
        let ratio = of(at(&record, 4)) / of(at(&record, 1));
        if holds(ratio) {
            return Ok(ratio);
        }
        ratios.push(ratio);
    }
    Err(ratios)
}

#[test]
fn a_lock_makes_each_call_slower_with_more_threads_and_own_work_does_not() {
    let contended = run("shared_lock/");
    let ids: Vec<&str> = contended.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["shared_lock/threads=1", "shared_lock/threads=4"]);
    let (one, four) = (at(&contended, 1), at(&contended, 4));
    assert!(one.threads.is_none(), "one thread has no spread");
    let record = four.threads.as_ref().expect("each thread's time");
    assert_eq!((record.count, record.per_thread_ns.len()), (4, 4));
    assert!(
        record.per_thread_ns.iter().all(|&ns| ns > 0.0) && record.spread.is_finite(),
        "{record:?}"
    );
    // Four threads take turns at the lock: a round of calls waits for
    // others: about four times as long a round (at least twice, whatever
    // the machine).
    let wall = |c: &CaseRecord| c.time.median_ns;
    let slower = in_one_of_three_runs(contended, "shared_lock/", wall, |ratio| ratio > 2.0);
    assert!(slower.is_ok(), "{slower:.2?}× per call on 4 threads");

    // Each thread's own CPU time per call stays that of one thread, however
    // many cores there are to run them side by side.
    let cpu = |c: &CaseRecord| c.time.cpu_median_ns.expect("thread CPU time");
    let same = in_one_of_three_runs(run("own_work/"), "own_work/", cpu, |ratio| ratio < 1.5);
    assert!(same.is_ok(), "{same:.2?}× CPU per call on 4 threads");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores >= 8 {
        let same = in_one_of_three_runs(run("own_work/"), "own_work/", wall, |ratio| ratio < 1.5);
        assert!(
            same.is_ok(),
            "{same:.2?}× per call on 4 threads of {cores} cores"
        );
    }
}

#[nnbench::parametrize([(fail = false), (fail = true)], threads = [3], timing = once)]
fn refusing(fail: bool) -> Result<u8, String> {
    let name = std::thread::current().name().map(str::to_owned);
    match name {
        Some(name) if fail && name == "nnbench-thread-2" => Err(format!("{name} refused")),
        _ => Ok(1),
    }
}

#[test]
fn a_thread_that_fails_fails_the_case_with_its_error() {
    let record = run("refusing/");
    let ids: Vec<&str> = record.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "refusing/fail=false,threads=3",
            "refusing/fail=true,threads=3"
        ]
    );
    let fine = &record.cases[0];
    assert!(fine.error.is_none(), "{:?}", fine.error);
    assert_eq!(fine.threads.as_ref().map(|t| t.count), Some(3));
    let error = record.cases[1].error.as_ref().expect("failed");
    assert_eq!(error.message, "nnbench-thread-2 refused");
}
