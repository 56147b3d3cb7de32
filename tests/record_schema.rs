//! The record a run writes (schema 2): compact, with nothing it did not
//! measure written as `null`, valid against the JSON Schema checked in at
//! `api/record.schema.json` (by `check-jsonschema`, which
//! `scripts/schemas.sh` installs; the check skips without it unless
//! `NNBENCH_REQUIRE_SCHEMAS` is set, as in CI), and read back whole; a
//! schema 1 record, nulls and all, is still read.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use nnbench::{Memo, RunRecord, Runner, Sampling, Timing};

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Weights(u32);

impl Memo for Weights {
    type Value = Vec<f64>;
    fn compute(&self) -> nnbench::Result<Vec<f64>> {
        Ok(vec![f64::from(self.0); 1024])
    }
    fn size_of(&self, value: &Vec<f64>) -> Option<u64> {
        Some((value.len() * 8) as u64)
    }
}

#[derive(serde::Serialize)]
struct Eval {
    accuracy: f64,
    loss: f64,
}

#[nnbench::product(
    model = [Weights(1), Weights(2)],
    batch = [1u64, 8],
    throughput = elements(batch),
    flops = 2 * batch,
    bytes = 8 * batch,
    metric = "accuracy:higher, loss:lower",
)]
fn schema_sweep(model: &[f64], batch: u64) -> Eval {
    let total: f64 = model.iter().take(batch as usize).sum();
    Eval {
        accuracy: total / (total + 1.0),
        loss: 1.0 / (total + 1.0),
    }
}

#[nnbench::benchmark(timing = once)]
fn schema_failing() -> nnbench::Result<u64> {
    Err(nnbench::Error::msg("a case that fails"))
}

#[nnbench::benchmark]
fn schema_unit() {}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A run of cases of every kind, written where `dir` says.
fn written(dir: &Path) -> (RunRecord, PathBuf) {
    let out = dir.join("run.json");
    let record = Runner::new()
        .filter("schema_")
        .timing(Timing::Auto)
        .sampling(
            Sampling::new()
                .sample_size(10)
                .measurement_time(std::time::Duration::from_millis(50)),
        )
        .quiet(true)
        .run()
        .expect("the run");
    record.write(&out).expect("the record is written");
    (record, out)
}

#[test]
fn a_record_leaves_out_what_it_did_not_measure_and_reads_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (record, out) = written(dir.path());
    assert_eq!(record.schema, 2);
    assert_eq!(
        record.cases.len(),
        6,
        "{:?}",
        record.cases.iter().map(|c| &c.id).collect::<Vec<_>>()
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 1, "compact: one line");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut nulls = Vec::new();
    find_nulls(&json, "", &mut nulls);
    // A case that returns nothing has the value null: that is its metric.
    nulls.retain(|path| !path.ends_with(".value"));
    assert!(nulls.is_empty(), "written as null: {nulls:?}");
    let back = serde_json::to_value(RunRecord::read(&out).unwrap()).unwrap();
    let mut differ = Vec::new();
    differences(
        &serde_json::to_value(&record).unwrap(),
        &back,
        "",
        &mut differ,
    );
    assert!(differ.is_empty(), "read back otherwise: {differ:?}");
}

fn differences(a: &serde_json::Value, b: &serde_json::Value, at: &str, into: &mut Vec<String>) {
    match (a, b) {
        (serde_json::Value::Object(x), serde_json::Value::Object(y)) => {
            for key in x.keys().chain(y.keys()) {
                let none = serde_json::Value::Null;
                let (l, r) = (x.get(key).unwrap_or(&none), y.get(key).unwrap_or(&none));
                differences(l, r, &format!("{at}.{key}"), into);
            }
        }
        (serde_json::Value::Array(x), serde_json::Value::Array(y)) if x.len() == y.len() => {
            for (i, (l, r)) in x.iter().zip(y).enumerate() {
                differences(l, r, &format!("{at}[{i}]"), into);
            }
        }
        _ if a != b => into.push(format!("{at}: {a} against {b}")),
        _ => {}
    }
}

fn find_nulls(json: &serde_json::Value, at: &str, into: &mut Vec<String>) {
    match json {
        serde_json::Value::Null => into.push(at.to_owned()),
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                find_nulls(item, &format!("{at}[{i}]"), into);
            }
        }
        serde_json::Value::Object(fields) => {
            for (key, value) in fields {
                find_nulls(value, &format!("{at}.{key}"), into);
            }
        }
        _ => {}
    }
}

#[test]
fn a_run_of_no_case_still_writes_its_cases() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("empty.json");
    let record = Runner::new()
        .filter("schema_: no such case")
        .quiet(true)
        .run()
        .expect("the run");
    record.write(&out).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(json["cases"], serde_json::json!([]), "{json}");
}

#[test]
fn a_schema_1_record_with_its_nulls_is_read() {
    let record = RunRecord::read(repo().join("benches/expected/mnist.json")).expect("read");
    assert_eq!(record.schema, 1);
    assert!(record.cases.iter().all(|c| c.error.is_none()));
}

#[test]
fn a_record_of_a_newer_schema_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("future.json");
    std::fs::write(
        &path,
        r#"{"schema":99,"run":"x","started_at":"t","context":{"host":{"arch":"x86_64"},"nnbench":"9.0.0","gpu":{}}}"#,
    )
    .unwrap();
    let said = RunRecord::read(&path).unwrap_err().to_string();
    assert!(
        said.contains("future.json") && said.contains("schema 99"),
        "{said}"
    );
}

#[test]
fn the_record_is_valid_against_the_checked_in_schema() {
    let found = std::env::var_os("NNBENCH_CHECK_JSONSCHEMA").map(PathBuf::from);
    support::here_or_skip(
        found.is_some(),
        "NNBENCH_CHECK_JSONSCHEMA",
        "NNBENCH_REQUIRE_SCHEMAS",
        "eval \"$(scripts/schemas.sh)\" installs it",
    );
    let Some(tool) = found else { return };
    let dir = tempfile::tempdir().unwrap();
    let (_, out) = written(dir.path());
    let schema = repo().join("api/record.schema.json");
    let output = Command::new(&tool)
        .arg("--schemafile")
        .arg(&schema)
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", tool.display()));
    assert!(
        output.status.success(),
        "{}:\n{}{}",
        out.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_checked_in_schema_is_the_record_types() {
    let python = Command::new("python3").arg("--version").output();
    support::here_or_skip(
        python.is_ok(),
        "python3",
        "NNBENCH_REQUIRE_SCHEMAS",
        "the schema is written by scripts/record_schema.py",
    );
    if python.is_err() {
        return;
    }
    let output = Command::new("python3")
        .arg(repo().join("scripts/record_schema.py"))
        .arg("--check")
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn every_reference_of_the_schema_names_a_definition() {
    fn refs<'a>(value: &'a serde_json::Value, found: &mut Vec<&'a str>) {
        match value {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::String(r)) = map.get("$ref") {
                    found.push(r);
                }
                map.values().for_each(|v| refs(v, found));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| refs(v, found)),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(repo().join("api/record.schema.json")).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut found = Vec::new();
    refs(&schema, &mut found);
    assert!(found.len() > 20, "{found:?}");
    for r in found {
        let name = r.strip_prefix("#/$defs/").unwrap_or_else(|| panic!("{r}"));
        assert!(
            schema["$defs"].get(name).is_some(),
            "{r} names no definition"
        );
    }
}
