//! `concurrency = [...]`: a case per level, each keeping that many
//! requests in flight for its timed period, with each request's latency
//! and the rate of those that finished in the record.

#[path = "../../tests/support/alone.rs"]
mod alone;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use alone::run;
use nnbench::Runner;
use nnbench::record::{CaseRecord, RunRecord, Sampler, TimingMode};

fn at(record: &RunRecord, level: u64) -> &CaseRecord {
    record
        .cases
        .iter()
        .find(|c| c.params["concurrency"] == level)
        .unwrap_or_else(|| panic!("no case at concurrency {level}"))
}

/// Requests of `waiting` in flight now, and the most there were at once.
static WAITING: AtomicUsize = AtomicUsize::new(0);
static MOST_WAITING: AtomicUsize = AtomicUsize::new(0);

/// A request that waits on something else (a socket, a disk) for 2 ms.
#[nnbench::benchmark(concurrency = [1, 8], warm_up_time = "20ms", measurement_time = "200ms")]
fn waiting() -> u32 {
    let now = WAITING.fetch_add(1, Ordering::SeqCst) + 1;
    MOST_WAITING.fetch_max(now, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(2));
    WAITING.fetch_sub(1, Ordering::SeqCst);
    7
}

#[test]
fn requests_that_wait_are_served_faster_with_more_in_flight() {
    let record = run("waiting/");
    let ids: Vec<&str> = record.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["waiting/concurrency=1", "waiting/concurrency=8"]);
    for case in &record.cases {
        assert!(case.error.is_none(), "{:?}", case.error);
        assert_eq!(case.value, 7, "the first call's value is the metric");
        assert_eq!(case.time.mode, TimingMode::Sampled);
        assert_eq!(case.time.sampler, Some(Sampler::Load));
        let load = case.concurrency.as_deref().expect("the load is recorded");
        assert_eq!(load.duration_ns, 200e6);
        assert_eq!(load.requests, case.time.iters);
        let p = case
            .time
            .percentiles
            .as_deref()
            .expect("each request's latency");
        assert!(p.p50_ns >= 2e6, "a request waits 2 ms: {p:?}");
        assert!(p.p50_ns <= p.p90_ns && p.p90_ns <= p.p99_ns && p.p99_ns <= p.max_ns);
    }
    let (one, eight) = (at(&record, 1), at(&record, 8));
    let rate = |c: &CaseRecord| {
        assert!(c.error.is_none(), "{}: {:?}", c.id, c.error);
        c.concurrency
            .as_deref()
            .expect("the load is recorded")
            .requests_per_second
    };
    // Eight requests were in flight at once, as the level asks.
    assert_eq!(MOST_WAITING.load(Ordering::SeqCst), 8);
    // Eight sleeping requests overlap: close to eight times the rate. A
    // busy machine delays each request's wake-up, at one level and at
    // eight alike, but cannot make the eight take turns.
    assert!(
        rate(eight) > 2.0 * rate(one),
        "{} req/s at 1, {} req/s at 8",
        rate(one),
        rate(eight)
    );
}

fn compute() -> u64 {
    (0..20_000u64).fold(0, |acc, n| acc.wrapping_add(std::hint::black_box(n * n)))
}

/// A request that only computes.
#[nnbench::benchmark(concurrency = [1, 4], warm_up_time = "20ms", measurement_time = "200ms")]
fn computing() -> u64 {
    compute()
}

#[test]
fn requests_that_compute_are_not_served_faster_than_the_cores_allow() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    // Four requests in flight compute on at most `cores` cores at once, so
    // the rate at four passes the rate at one at most that many times. The
    // two levels run one after the other, in the same run: a machine busy
    // through both slows them alike. A spell that slows the first level
    // alone could lift one run's ratio, so the least of a few runs is
    // judged; a harness that counted requests it did not serve would lift
    // every run's.
    let ratios: Vec<f64> = (0..3)
        .map(|_| {
            let record = run("computing/");
            let rate = |level| {
                let case = at(&record, level);
                assert!(case.error.is_none(), "{}: {:?}", case.id, case.error);
                let rate = case
                    .concurrency
                    .as_deref()
                    .expect("the load is recorded")
                    .requests_per_second;
                assert!(rate > 0.0, "{}: no request was served", case.id);
                rate
            };
            rate(4) / rate(1)
        })
        .collect();
    let least = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let most = cores.min(4.0);
    assert!(
        least < 1.25 * most,
        "four in flight served {ratios:?} times the rate of one on {cores} cores"
    );
}

static MADE: AtomicUsize = AtomicUsize::new(0);

/// Fails on its fifth request.
#[nnbench::benchmark(concurrency = [3], warm_up_time = "1ms", measurement_time = "2s")]
fn flaky() -> Result<usize, String> {
    let n = MADE.fetch_add(1, Ordering::SeqCst);
    if n == 4 {
        return Err(format!("request {n} was refused"));
    }
    Ok(n)
}

#[test]
fn a_failed_request_fails_the_case_at_once() {
    let record = run("flaky/");
    let case = &record.cases[0];
    let error = case.error.as_ref().expect("the case failed");
    assert_eq!(error.message, "request 4 was refused");
    assert!(case.concurrency.is_none());
    // Three threads stopped soon after the fifth request, not 2 s later.
    assert!(MADE.load(Ordering::SeqCst) < 10_000);
}

/// Panics on a request thread.
#[nnbench::benchmark(concurrency = [2], measurement_time = "100ms")]
fn panicking() {
    if std::thread::current().name() == Some("nnbench-request-1") {
        panic!("the model is not loaded");
    }
}

#[test]
fn a_panic_on_a_request_thread_fails_the_case_with_its_message() {
    let record = run("panicking/");
    let error = record.cases[0].error.as_ref().expect("the case failed");
    assert!(
        error.message.contains("the model is not loaded"),
        "{}",
        error.message
    );
}

/// In test mode, one request per level's worker.
#[nnbench::product(size = [10usize], concurrency = [1, 4])]
fn quick(size: usize) -> usize {
    size
}

#[test]
fn in_test_mode_each_worker_makes_one_request() {
    let _alone = alone::alone();
    let record = Runner::new()
        .filter("quick/")
        .test_mode(true)
        .quiet(true)
        .run()
        .expect("the run");
    let ids: Vec<&str> = record.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        ["quick/size=10,concurrency=1", "quick/size=10,concurrency=4"]
    );
    for case in &record.cases {
        let level = case.params["concurrency"].as_u64().unwrap();
        let load = case.concurrency.as_deref().expect("the load");
        assert_eq!((load.level, load.requests), (level, level));
        assert_eq!(case.time.mode, TimingMode::Once);
        assert_eq!(case.time.samples, level);
    }
}

/// Three levels of load, in test mode: one request per worker.
#[nnbench::product(reply = ["short", "long"], concurrency = [1, 2, 4])]
fn answered(reply: &str) -> usize {
    reply.len()
}

#[test]
fn the_report_draws_latency_and_requests_against_concurrency() {
    let record = {
        let _alone = alone::alone();
        Runner::new()
            .filter("answered/")
            .test_mode(true)
            .quiet(true)
            .run()
            .expect("the run")
    };
    assert_eq!(record.cases.len(), 6);
    let dir = tempfile::tempdir().expect("a folder");
    let run = dir.path().join("run.json");
    record.write(&run).expect("the record");
    let page = dir.path().join("report.html");
    let made = std::process::Command::new(env!("CARGO_BIN_EXE_nnbench"))
        .env("NNBENCH_HISTORY", "/no/such/history.sqlite")
        .args(["report", "-o"])
        .arg(&page)
        .arg(&run)
        .output()
        .expect("nnbench runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let html = std::fs::read_to_string(&page).expect("the page");
    for title in [
        "answered: median latency against concurrency, latest run",
        "answered: p99 latency against concurrency, latest run",
        "answered: requests per second against concurrency, latest run",
    ] {
        assert!(html.contains(title), "no chart {title:?}");
    }
    // A line for each reply, drawn over the three levels.
    assert!(html.contains("reply=long") && html.contains("reply=short"));
    assert!(html.contains("<th>requests /s</th>"));
}

#[test]
fn fewer_requests_per_second_regress_when_a_limit_asks() {
    use nnbench::record::{Figure, Verdict};
    use nnbench_core::compare::{Limits, compare};

    let base = {
        let _alone = alone::alone();
        Runner::new()
            .filter("answered/reply=long,concurrency=4")
            .test_mode(true)
            .quiet(true)
            .run()
            .expect("the run")
    };
    assert_eq!(base.cases.len(), 1, "{:?}", base.cases);
    let mut slower = base.clone();
    let load = slower.cases[0].concurrency.as_mut().expect("the load");
    load.requests_per_second *= 0.8;
    let verdict = |limits: &Limits, head: &RunRecord| {
        let comparison = compare(&base, head, limits);
        let case = &comparison.cases[0];
        let requests = case.figures.iter().find(|f| f.figure == Figure::Requests);
        (
            requests.expect("requests compared").verdict,
            requests.unwrap().gated,
        )
    };
    // Reported by default; gated, and regressed, when a limit asks.
    assert_eq!(
        verdict(&Limits::default(), &slower),
        (Verdict::Regressed, false)
    );
    let gated = Limits::default()
        .with_spec("requests=10%")
        .expect("a limit");
    assert_eq!(verdict(&gated, &slower), (Verdict::Regressed, true));
    let mut faster = base.clone();
    faster.cases[0]
        .concurrency
        .as_mut()
        .unwrap()
        .requests_per_second *= 1.5;
    assert_eq!(verdict(&gated, &faster).0, Verdict::Improved);
}
