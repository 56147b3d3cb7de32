//! `flops = EXPR` and `bytes = EXPR`: the work one call does, declared as
//! expressions of the case's parameters, and the rates the case reached.

#[path = "support/alone.rs"]
mod alone;

use alone::run;
use nnbench::record::{CaseRecord, RunRecord, WorkRecord};

fn case<'r>(record: &'r RunRecord, id: &str) -> &'r CaseRecord {
    record
        .cases
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no case {id}"))
}

/// A square matrix multiply of f64s, the plain triple loop.
#[nnbench::product(
    n = [8usize, 16],
    flops = 2 * n * n * n,
    bytes = 8 * 3 * n * n,
    timing = sampled,
    warm_up_time = "5ms",
    measurement_time = "20ms"
)]
fn multiply(n: usize) -> f64 {
    let a: Vec<f64> = (0..n * n).map(|i| i as f64).collect();
    let mut c = vec![0.0; n * n];
    for i in 0..n {
        for k in 0..n {
            for j in 0..n {
                c[i * n + j] += a[i * n + k] * a[k * n + j];
            }
        }
    }
    std::hint::black_box(c)[0]
}

#[test]
fn the_declared_work_and_its_rates_are_recorded() {
    let record = run("multiply/");
    for n in [8.0f64, 16.0] {
        let case = case(&record, &format!("multiply/n={n}"));
        assert!(case.error.is_none(), "{:?}", case.error);
        let work = case.work.as_deref().expect("the declared work");
        assert_eq!(work.flops, Some(2.0 * n.powi(3)));
        assert_eq!(work.bytes, Some(24.0 * n * n));
        assert_eq!(work.intensity, Some(n / 12.0));
        // At the rate of the median call.
        let calls = 1e9 / case.time.median_ns;
        assert_eq!(work.flops_per_s, Some(2.0 * n.powi(3) * calls));
        assert_eq!(work.bytes_per_s, Some(24.0 * n * n * calls));
        let shown = work.to_string();
        assert!(shown.contains("FLOP/s") && shown.contains("B/s"), "{shown}");
    }
}

/// Only the operations declared, in floats.
#[nnbench::benchmark(flops = 1.5e3, timing = once)]
fn flops_only() -> u64 {
    1
}

/// A product's axis named `bytes` stays an axis: a list of values.
#[nnbench::product(bytes = [64usize, 128], flops = bytes / 8, timing = once)]
fn sized(bytes: usize) -> usize {
    bytes
}

#[test]
fn either_may_be_declared_alone_and_an_axis_of_that_name_stays_one() {
    let record = run("flops_only");
    let work = case(&record, "flops_only").work.as_deref().expect("work");
    assert_eq!(
        (work.flops, work.bytes, work.intensity),
        (Some(1.5e3), None, None)
    );
    assert!(work.flops_per_s.is_some_and(|r| r > 0.0), "{work:?}");
    assert_eq!(work.bytes_per_s, None);

    let record = run("sized/");
    let ids: Vec<&str> = record.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["sized/bytes=64", "sized/bytes=128"]);
    let work = case(&record, "sized/bytes=128")
        .work
        .as_deref()
        .expect("work");
    assert_eq!((work.flops, work.bytes), (Some(16.0), None));
}

/// Work that cannot be: a negative amount.
#[nnbench::product(n = [2i64], flops = n - 10, timing = once)]
fn negative(n: i64) -> i64 {
    n
}

#[test]
fn a_negative_amount_fails_its_case_and_names_the_expression() {
    let record = run("negative/");
    let case = case(&record, "negative/n=2");
    let error = case.error.as_ref().expect("the case failed");
    let said = error.summary();
    assert!(said.contains("flops `n - 10` is -8"), "{said}");
    assert!(case.work.is_none());
}

#[test]
fn the_record_of_the_work_reads_back() {
    let work = WorkRecord::new(Some(2e9), Some(1e9), 10.0);
    let json = serde_json::to_value(&work).unwrap();
    assert_eq!(json["flops_per_s"], 2e10);
    assert_eq!(json["intensity"], 2.0);
    assert!(json.get("roof").is_none(), "no roof without the machine's");
    let back: WorkRecord = serde_json::from_value(json).unwrap();
    assert_eq!(back, work);
}

#[test]
fn a_run_names_its_machine_and_has_its_roofs_or_says_why_not() {
    let record = run("multiply/n=8");
    let machine = record.context.machine.as_ref().expect("the machine");
    assert_eq!(machine.key, record.context.machine_key());
    assert_eq!(machine.key.len(), 16);
    match (&machine.roofs, &machine.roofs_reason) {
        (Some(roofs), None) => assert!(roofs.flops_f64.one_core > 0.0, "{roofs:?}"),
        // A build without optimization measures none; it says so.
        (None, Some(why)) => assert!(why.contains("optimized build"), "{why}"),
        other => panic!("roofs and a reason together, or neither: {other:?}"),
    }
    let busy = machine.busy.as_ref().expect("how busy the machine was");
    assert!(busy.cores >= 1);
    // Where no case declares its work, the roofs are not looked for.
    let plain = run("undeclared");
    let machine = plain.context.machine.as_ref().expect("the machine");
    assert_eq!((&machine.roofs, &machine.roofs_reason), (&None, &None));
}

/// No work declared.
#[nnbench::benchmark(timing = once)]
fn undeclared() -> u8 {
    1
}
