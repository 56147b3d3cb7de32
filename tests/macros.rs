//! What the attributes register, as a user sees it through the runner.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use nnbench::{Memo, RunRecord, Runner};
use serde::Serialize;

fn run(filter: &str) -> RunRecord {
    Runner::new()
        .filter(filter)
        .test_mode(true)
        .quiet(true)
        .run()
        .expect("run")
}

fn ids(filter: &str) -> Vec<String> {
    Runner::new().filter(filter).list()
}

#[nnbench::benchmark]
fn single_case() -> u64 {
    7
}

#[test]
fn benchmark_registers_one_case_named_after_the_function() {
    let record = run("single_case");
    assert_eq!(record.cases.len(), 1);
    let case = &record.cases[0];
    assert_eq!(case.id, "single_case");
    assert_eq!(case.family, "single_case");
    assert_eq!(case.value, 7);
    assert!(case.params.is_empty());
    assert!(case.error.is_none());
}

#[nnbench::product(a = [1, 2, 3], b = [10, 20], c = ["x", "y"])]
fn grid_3x2x2(a: u32, b: i64, c: &str) -> String {
    format!("{a}-{b}-{c}")
}

#[test]
fn product_expands_every_combination_in_declared_order() {
    let ids = ids("grid_3x2x2/");
    assert_eq!(ids.len(), 12);
    assert_eq!(ids[0], "grid_3x2x2/a=1,b=10,c=x");
    assert_eq!(ids[1], "grid_3x2x2/a=1,b=10,c=y");
    assert_eq!(ids[2], "grid_3x2x2/a=1,b=20,c=x");
    assert_eq!(ids[11], "grid_3x2x2/a=3,b=20,c=y");
    let record = run("grid_3x2x2/");
    let values: Vec<_> = record
        .cases
        .iter()
        .map(|c| c.value.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(values[0], "1-10-x");
    assert_eq!(values[11], "3-20-y");
    assert_eq!(record.cases[7].params["b"], 20);
    assert_eq!(record.cases[7].params["c"], "y");
    assert_eq!(record.cases[7].params["a"], 2);
}

#[nnbench::product(
    i = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    j = 0..10,
    k = (0..10).map(|k| k * 100),
)]
fn thousand(i: usize, j: usize, k: usize) -> usize {
    i + j + k
}

#[test]
fn a_10x10x10_product_records_1000_cases_with_unique_ids() {
    let record = run("thousand/");
    assert_eq!(record.cases.len(), 1000);
    let unique: std::collections::HashSet<_> = record.cases.iter().map(|c| &c.id).collect();
    assert_eq!(unique.len(), 1000);
    assert_eq!(record.failed(), 0);
    // Ids are stable: a second listing is the same, in the same order.
    assert_eq!(ids("thousand/"), ids("thousand/"));
}

#[nnbench::parametrize([(n = 64, k = 8), (k = 16, n = 256)])]
fn explicit_sets(n: usize, k: usize) -> usize {
    n * k
}

#[test]
fn parametrize_registers_one_case_per_set_whatever_the_order_of_names() {
    let record = run("explicit_sets/");
    let got: Vec<_> = record
        .cases
        .iter()
        .map(|c| (c.id.as_str(), c.value.as_u64().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            ("explicit_sets/n=64,k=8", 512),
            ("explicit_sets/n=256,k=16", 4096)
        ]
    );
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Table(u32);

static TABLE_COMPUTES: AtomicUsize = AtomicUsize::new(0);

impl Memo for Table {
    type Value = Vec<u32>;
    fn compute(&self) -> nnbench::Result<Vec<u32>> {
        TABLE_COMPUTES.fetch_add(1, Ordering::SeqCst);
        Ok((0..self.0).collect())
    }
}

#[nnbench::product(table = [Table(3), Table(4)], scale = [2u32])]
fn memo_by_reference(table: &[u32], scale: u32) -> u32 {
    table.iter().sum::<u32>() * scale
}

#[nnbench::product(table = [Table(5)])]
fn memo_as_arc(table: Arc<Vec<u32>>) -> usize {
    // Two references: the cache's and this one; the runner released its own.
    Arc::strong_count(&table)
}

#[test]
fn memo_values_are_passed_by_reference_or_as_arc() {
    let record = run("memo_by_reference/");
    assert_eq!(record.cases.len(), 2);
    assert_eq!(record.cases[0].value, 6);
    assert_eq!(record.cases[1].value, 12);
    assert_eq!(record.cases[0].params["table"], "Table(3)");
    assert_eq!(
        record.cases[0].id,
        "memo_by_reference/table=Table(3),scale=2"
    );

    let record = run("memo_as_arc/");
    assert_eq!(record.failed(), 0);
    assert!(record.cases[0].value.as_u64().unwrap() >= 2);
    assert!(TABLE_COMPUTES.load(Ordering::SeqCst) >= 3);
}

#[derive(Clone, Debug, PartialEq, Serialize)]
struct Shape {
    rows: usize,
    cols: usize,
}

#[derive(Clone, Debug, PartialEq)]
enum Device {
    Cpu,
}

#[nnbench::product(
    shape = [Shape { rows: 2, cols: 3 }],
    name = [String::from("alpha")],
    device = [Device::Cpu],
    label = ["by-ref"],
    shared = [Arc::new(5u8)],
)]
fn plain_values(
    shape: &Shape,
    name: String,
    device: &Device,
    label: &str,
    shared: Arc<u8>,
) -> String {
    format!(
        "{}x{} {name} {device:?} {label} {shared}",
        shape.rows, shape.cols
    )
}

#[test]
fn plain_values_are_passed_as_written_and_recorded_by_serde_or_debug() {
    let record = run("plain_values/");
    let case = &record.cases[0];
    assert_eq!(case.value, "2x3 alpha Cpu by-ref 5");
    assert_eq!(
        case.params["shape"],
        serde_json::json!({"rows": 2, "cols": 3})
    );
    assert_eq!(case.params["name"], "alpha");
    assert_eq!(
        case.params["device"], "Cpu",
        "not Serialize: recorded by Debug"
    );
}

#[derive(Serialize)]
struct Metrics {
    accuracy: f64,
    loss: f64,
}

#[nnbench::benchmark]
fn struct_metric() -> Metrics {
    Metrics {
        accuracy: 0.9,
        loss: 0.1,
    }
}

#[nnbench::benchmark]
fn unit_metric() {}

#[nnbench::benchmark]
fn ok_metric() -> Result<f32, std::io::Error> {
    Ok(0.5)
}

#[nnbench::benchmark]
fn err_metric() -> Result<f32, std::io::Error> {
    Err(std::io::Error::other("the model diverged"))
}

#[nnbench::benchmark]
fn anyhow_like_metric() -> nnbench::Result<u8> {
    Err(nnbench::Error::msg("inner cause").context("outer message"))
}

#[test]
fn return_values_become_metrics_and_errors_fail_the_case() {
    let record = run("_metric");
    let case = |id: &str| record.case(id).unwrap_or_else(|| panic!("no case {id}"));
    assert_eq!(
        case("struct_metric").value,
        serde_json::json!({"accuracy": 0.9, "loss": 0.1})
    );
    assert_eq!(case("unit_metric").value, serde_json::Value::Null);
    assert!(case("unit_metric").error.is_none());
    assert_eq!(case("ok_metric").value, 0.5);
    let err = case("err_metric").error.as_ref().expect("failed");
    assert_eq!(err.message, "the model diverged");
    let err = case("anyhow_like_metric").error.as_ref().expect("failed");
    assert_eq!(err.message, "outer message");
    assert_eq!(err.causes, ["inner cause"]);
    assert_eq!(record.failed(), 2);
}

#[nnbench::benchmark(name = "renamed", tags = ["smoke", "cpu"])]
fn original_name() -> u8 {
    1
}

#[test]
fn name_and_tags_options_are_recorded() {
    let record = Runner::new()
        .filter("renamed")
        .exact(true)
        .quiet(true)
        .test_mode(true)
        .run()
        .unwrap();
    assert_eq!(record.cases.len(), 1);
    assert_eq!(record.cases[0].family, "renamed");
    assert_eq!(record.cases[0].tags, ["smoke", "cpu"]);
}

#[nnbench::product(x = [1, 1, 2])]
fn repeated_values(x: u8) -> u8 {
    x
}

#[test]
fn equal_descriptions_get_distinct_ids() {
    assert_eq!(
        ids("repeated_values/"),
        [
            "repeated_values/x=1",
            "repeated_values/x=1#2",
            "repeated_values/x=2"
        ]
    );
}

#[nnbench::product(r#type = ["a"], negative = [-1, -2], ratio = [0.5])]
fn odd_parameters(r#type: &str, negative: i8, ratio: f32) -> String {
    format!("{type}{negative}{ratio}", type = r#type)
}

#[test]
fn raw_identifiers_negative_and_float_literals_work() {
    assert_eq!(
        ids("odd_parameters/"),
        [
            "odd_parameters/type=a,negative=-1,ratio=0.5",
            "odd_parameters/type=a,negative=-2,ratio=0.5"
        ]
    );
    assert_eq!(run("odd_parameters/").cases[1].value, "a-20.5");
}

/// A crate that re-exports nnbench under another name points the attribute
/// at it, as divan's and serde's `crate = path` do.
mod reexported {
    pub use nnbench as harness;
}

#[nnbench::product(crate = crate::reexported::harness, n = [1, 2], tags = ["renamed"])]
fn through_a_reexport(n: u32) -> u32 {
    n * 10
}

#[nnbench::benchmark(
    crate = "crate::reexported::harness",
    timing = "once",
    warm_up_time = 0.05,
    measurement_time = "1s"
)]
fn options_as_strings_and_seconds() -> u8 {
    3
}

#[test]
fn the_crate_option_and_string_or_seconds_forms_are_accepted() {
    let record = run("through_a_reexport/");
    let values: Vec<_> = record.cases.iter().map(|c| c.value.clone()).collect();
    assert_eq!(values, [10, 20]);
    assert_eq!(record.cases[0].tags, ["renamed"]);
    // `timing = "once"` is `timing = once`: one call even when measuring.
    let measured = Runner::new()
        .filter("options_as_strings_and_seconds")
        .quiet(true)
        .run()
        .unwrap();
    assert_eq!(measured.cases[0].value, 3);
    assert_eq!(
        measured.cases[0].time.mode,
        nnbench::record::TimingMode::Once
    );
}
