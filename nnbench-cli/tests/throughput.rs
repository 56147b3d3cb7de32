//! Throughput and latency percentiles, as a user meets them: a family
//! that declares what one call handles, calls long enough to time one by
//! one, and comparisons of the rates.

use std::hint::black_box;
use std::time::{Duration, Instant};

use nnbench::record::{Figure, ThroughputUnit, Verdict};
use nnbench::{Memo, RunRecord, Runner};
use nnbench_core::compare::{Limits, compare};

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Bytes(usize);

impl Memo for Bytes {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        Ok((0..self.0).map(|i| i as u8).collect())
    }
}

#[nnbench::product(batch = [16usize, 256], throughput = elements(batch))]
fn rows(batch: usize) -> u64 {
    (0..batch as u64).map(|i| black_box(i * i)).sum()
}

#[nnbench::product(data = [Bytes(1 << 12)], throughput = bytes(data.len()))]
fn checksum(data: &[u8]) -> u64 {
    data.iter().map(|&b| u64::from(b)).sum()
}

#[nnbench::product(n = [3i64], throughput = elements(n - 5))]
fn negative(n: i64) -> i64 {
    n
}

/// Each call spins for about 1.2 ms: long enough to be timed alone.
#[nnbench::benchmark(timing = sampled)]
fn slow_call() -> u64 {
    let started = Instant::now();
    let mut spins = 0u64;
    while started.elapsed() < Duration::from_micros(1200) {
        spins = black_box(spins + 1);
    }
    spins
}

fn run(filter: &str) -> RunRecord {
    Runner::new().filter(filter).quiet(true).run().unwrap()
}

#[test]
fn a_declared_throughput_is_what_a_call_handles_over_its_median_time() {
    let record = run("rows/");
    assert_eq!(record.failed(), 0);
    for (case, batch) in record.cases.iter().zip([16u64, 256]) {
        let rate = case.throughput.as_deref().expect("a throughput");
        assert_eq!(rate.unit, ThroughputUnit::Elements);
        assert_eq!(rate.per_call, batch);
        let expected = batch as f64 / (case.time.median_ns / 1e9);
        assert!((rate.per_second / expected - 1.0).abs() < 1e-9, "{rate:?}");
        assert_eq!(case.figure(Figure::Throughput), Some(rate.per_second));
        // Nanosecond calls are sampled many to a sample: no tail to tell.
        assert!(case.time.percentiles.is_none());
    }
    let json = serde_json::to_value(&record.cases[0]).unwrap();
    assert_eq!(json["throughput"]["unit"], "elements");
    assert_eq!(json["throughput"]["per_call"], 16);

    let bmf = nnbench_cli::export::bmf(&record);
    let id = &record.cases[1].id;
    assert!(bmf[id]["throughput"]["value"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_throughput_over_a_memo_counts_its_value() {
    let record = run("checksum/");
    assert_eq!(record.failed(), 0);
    let rate = record.cases[0].throughput.as_deref().unwrap();
    assert_eq!((rate.unit, rate.per_call), (ThroughputUnit::Bytes, 4096));
}

#[test]
fn a_negative_count_fails_its_case_naming_the_expression() {
    let record = run("negative/");
    let error = record.cases[0].error.as_ref().expect("a failed case");
    let text = format!("{} {:?}", error.message, error.causes);
    assert!(text.contains("n - 5") && text.contains("-2"), "{text}");
}

#[test]
fn calls_timed_one_by_one_have_ordered_percentiles() {
    let record = run("slow_call");
    assert_eq!(record.failed(), 0);
    let time = &record.cases[0].time;
    assert_eq!(time.iters, time.samples, "one call a sample");
    let p = time.percentiles.as_deref().expect("percentiles");
    assert!(p.p50_ns >= 1.2e6, "{p:?}");
    assert!(p.p50_ns <= p.p90_ns && p.p90_ns <= p.p99_ns && p.p99_ns <= p.max_ns);
    assert_eq!(p.max_ns, time.max_ns);
    assert_eq!(record.cases[0].figure(Figure::P99), Some(p.p99_ns));
    let bmf = nnbench_cli::export::bmf(&record);
    assert_eq!(bmf["slow_call"]["latency-p99"]["value"], p.p99_ns);
}

#[test]
fn comparisons_judge_throughput_as_time_and_count_what_a_call_handles() {
    let base = run("rows/batch=256");
    // The same calls, each now handling half as much: time is unchanged,
    // and throughput halved.
    let mut halved = base.clone();
    let rate = halved.cases[0].throughput.as_mut().unwrap();
    rate.per_call /= 2;
    rate.per_second /= 2.0;
    let comparison = compare(&base, &halved, &Limits::default());
    let case = &comparison.cases[0];
    let figure = |f: Figure| case.figures.iter().find(|c| c.figure == f).unwrap();
    assert_eq!(figure(Figure::Time).verdict, Verdict::Unchanged);
    assert_eq!(figure(Figure::Throughput).verdict, Verdict::Regressed);
    assert_eq!(case.verdict, Verdict::Regressed);
    // The tail is reported, not judged, unless asked: p99 is off by default.
    assert!(!Limits::default().get(Figure::P99).gated);

    let same = compare(&base, &base, &Limits::default());
    let throughput = same.cases[0]
        .figures
        .iter()
        .find(|c| c.figure == Figure::Throughput)
        .unwrap();
    assert_eq!(throughput.verdict, Verdict::Unchanged);
    assert_eq!(throughput.ratio, Some(1.0));
}
