//! A struct metric judged field by field, as a user meets it: two runs of
//! a family that returns `{accuracy, latency_ms, stats: {loss}, name}`,
//! the second with one model less accurate, one slower and one better,
//! compared by the `nnbench` tool.

use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};

use nnbench::{RunRecord, Runner};
use serde::Serialize;

/// 0: the base run; 1: the head run, where the models changed.
static PHASE: AtomicU8 = AtomicU8::new(0);
/// Held by the tests that set [`PHASE`], which run side by side.
static PHASES: Mutex<()> = Mutex::new(());

#[derive(Serialize)]
struct Stats {
    loss: f64,
}

#[derive(Serialize)]
struct Eval {
    accuracy: f64,
    latency_ms: f64,
    stats: Stats,
    name: &'static str,
}

#[nnbench::parametrize(
    [(model = "a"), (model = "b"), (model = "c"), (model = "d")],
    metric = "accuracy:higher, latency_ms:lower",
    fail_on = "value.accuracy=0.5%, value.latency_ms=10%",
    timing = once,
)]
fn evaluate(model: &str) -> Eval {
    let head = PHASE.load(Ordering::SeqCst) == 1;
    let (accuracy, latency_ms) = match (model, head) {
        ("a", true) => (0.90 * 0.98, 12.0), // 2% less accurate
        ("b", true) => (0.90, 12.0 * 1.2),  // 20% slower
        ("c", true) => (0.95, 10.0),        // better on both
        ("d", true) => (0.95, 12.0 * 1.2),  // more accurate, and slower
        _ => (0.90, 12.0),
    };
    Eval {
        accuracy,
        latency_ms,
        // Undirected: it moves in every case and is never judged.
        stats: Stats {
            loss: if head { 0.5 } else { 0.4 },
        },
        name: "mlp",
    }
}

#[nnbench::benchmark(metric = "acuracy:higher", timing = once)]
fn misspelt() -> Eval {
    Eval {
        accuracy: 0.9,
        latency_ms: 1.0,
        stats: Stats { loss: 0.1 },
        name: "mlp",
    }
}

fn run(filter: &str) -> RunRecord {
    Runner::new()
        .filter(filter)
        .quiet(true)
        .test_mode(true)
        .run()
        .expect("the run")
}

#[test]
fn compare_names_exactly_the_fields_that_got_worse() {
    let _phases = PHASES.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    PHASE.store(0, Ordering::SeqCst);
    let base = run("evaluate/");
    PHASE.store(1, Ordering::SeqCst);
    let head = run("evaluate/");
    let case = &head.cases[0];
    assert_eq!(
        case.directions.get("latency_ms"),
        Some(&nnbench::record::Direction::Lower)
    );
    assert_eq!(case.value["stats"]["loss"], 0.5, "every field is recorded");
    let (base_file, head_file) = (dir.path().join("base.json"), dir.path().join("head.json"));
    base.write(&base_file).unwrap();
    head.write(&head_file).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_nnbench"))
        .arg("compare")
        .args([&base_file, &head_file])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let comparison: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let verdicts = |id: &str| -> Vec<(String, String)> {
        let case = comparison["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("{id} in {comparison}"));
        case["figures"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["figure"] == "value")
            .map(|f| {
                (
                    f["field"].as_str().unwrap_or("-").to_owned(),
                    f["verdict"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let field = |id: &str, name: &str| {
        verdicts(id)
            .into_iter()
            .find(|(f, _)| f == name)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("{name} of {id}: {:?}", verdicts(id)))
    };
    assert_eq!(field("evaluate/model=a", "accuracy"), "regressed");
    assert_eq!(field("evaluate/model=a", "latency_ms"), "unchanged");
    assert_eq!(field("evaluate/model=b", "latency_ms"), "regressed");
    assert_eq!(field("evaluate/model=b", "accuracy"), "unchanged");
    assert_eq!(field("evaluate/model=c", "accuracy"), "improved");
    assert_eq!(field("evaluate/model=c", "latency_ms"), "improved");
    for id in ["evaluate/model=a", "evaluate/model=b", "evaluate/model=c"] {
        assert_eq!(
            field(id, "stats.loss"),
            "not_comparable",
            "an undirected field is shown, never judged"
        );
    }
    let case_verdict = |id: &str| {
        comparison["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .map(|c| c["verdict"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert_eq!(case_verdict("evaluate/model=a"), "regressed");
    assert_eq!(case_verdict("evaluate/model=b"), "regressed");
    assert_eq!(case_verdict("evaluate/model=c"), "improved");
    // Moves both ways: a trade-off, which still fails on its latency.
    assert_eq!(case_verdict("evaluate/model=d"), "regressed");
    assert_eq!(field("evaluate/model=d", "accuracy"), "improved");
    assert_eq!(field("evaluate/model=d", "latency_ms"), "regressed");
    let trade_offs: Vec<&str> = comparison["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["trade_off"] == true)
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(trade_offs, ["evaluate/model=d"]);
    let table = Command::new(env!("CARGO_BIN_EXE_nnbench"))
        .arg("compare")
        .args([&base_file, &head_file])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&table.stdout);
    assert!(
        said.contains("value.accuracy 0.9 → 0.882") && said.contains("value.latency_ms 12 → 14.4"),
        "{said}"
    );
    assert!(
        said.contains("REGRESSED (trade-off)") && said.contains("(1 a trade-off)"),
        "{said}"
    );
    let markdown = Command::new(env!("CARGO_BIN_EXE_nnbench"))
        .arg("compare")
        .args([&base_file, &head_file])
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    let markdown = String::from_utf8_lossy(&markdown.stdout);
    assert!(
        markdown.contains("| case | accuracy | latency_ms | stats.loss | time |")
            && markdown.contains("| `evaluate/model=d` | 0.95 | 14.4 ms | 0.5 |"),
        "{markdown}"
    );
}

#[test]
fn a_field_the_value_lacks_fails_its_case_naming_it() {
    let record = run("misspelt");
    let error = record.cases[0].error.as_ref().expect("the case fails");
    assert!(
        error.message.contains("`acuracy`") && error.message.contains("accuracy, latency_ms"),
        "{}",
        error.message
    );
}

#[test]
fn history_regressions_follow_each_directed_field() {
    let _phases = PHASES.lock().unwrap_or_else(|e| e.into_inner());
    PHASE.store(0, Ordering::SeqCst);
    let template = run("evaluate/model=a");
    let mut history = nnbench_cli::history::History::in_memory().unwrap();
    // Ten commits of three runs each; from the eighth, accuracy is 3%
    // lower, and the undirected loss moves with it.
    for commit in 0..10u32 {
        for run in 0..3u32 {
            let mut record = template.clone();
            record.started_at = format!("2026-03-01T{commit:02}:{run:02}:00Z");
            record.context.git = Some(nnbench::record::Git::new(
                format!("{commit:040x}"),
                Some("main".into()),
                false,
            ));
            let case = &mut record.cases[0];
            let wobble = f64::from(run) * 1e-4;
            let accuracy = if commit >= 7 { 0.87 } else { 0.90 } + wobble;
            case.value["accuracy"] = accuracy.into();
            case.value["stats"]["loss"] = (accuracy * 0.5).into();
            history.add(&record, None).unwrap();
        }
    }
    let steps = history.steps(&Default::default()).unwrap();
    let named: Vec<(String, nnbench_core::compare::Verdict)> = steps
        .iter()
        .filter(|s| s.field.is_some())
        .map(|s| (s.name(), s.verdict))
        .collect();
    assert_eq!(
        named,
        [(
            "value.accuracy".to_owned(),
            nnbench_core::compare::Verdict::Regressed
        )],
        "{steps:?}"
    );
    assert_eq!(
        steps.iter().find(|s| s.field.is_some()).unwrap().commit,
        format!("{:040x}", 7)
    );
}

#[nnbench::parametrize(
    [(model = "noisy"), (model = "slow"), (model = "worse")],
    metric = "accuracy:higher, latency_ms:lower",
    timing = once,
)]
fn served(model: &str) -> Eval {
    let head = PHASE.load(Ordering::SeqCst) == 1;
    let (accuracy, latency_ms) = match (model, head) {
        ("noisy", true) => (0.90, 12.0 * 1.05), // a measurement's noise
        ("slow", true) => (0.90, 12.0 * 1.3),   // 30% slower
        ("worse", true) => (0.90 - 1e-6, 12.0), // one more image wrong
        _ => (0.90, 12.0),
    };
    Eval {
        accuracy,
        latency_ms,
        stats: Stats { loss: 0.4 },
        name: "mlp",
    }
}

#[test]
fn a_field_named_as_a_time_is_judged_as_a_measurement_and_a_result_exactly() {
    let _phases = PHASES.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    PHASE.store(0, Ordering::SeqCst);
    let base = run("served/");
    PHASE.store(1, Ordering::SeqCst);
    let head = run("served/");
    let (base_file, head_file) = (dir.path().join("base.json"), dir.path().join("head.json"));
    base.write(&base_file).unwrap();
    head.write(&head_file).unwrap();
    let compare = |extra: &[&str]| -> serde_json::Value {
        let output = Command::new(env!("CARGO_BIN_EXE_nnbench"))
            .arg("compare")
            .args([&base_file, &head_file])
            .args(["--format", "json"])
            .args(extra)
            .output()
            .unwrap();
        serde_json::from_slice(&output.stdout).unwrap()
    };
    let field = |comparison: &serde_json::Value, id: &str, name: &str| -> String {
        comparison["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .and_then(|c| c["figures"].as_array()?.iter().find(|f| f["field"] == name))
            .map(|f| f["verdict"].as_str().unwrap().to_owned())
            .unwrap_or_else(|| panic!("{name} of {id} in {comparison}"))
    };
    let defaults = compare(&[]);
    // latency_ms: time's 10%; accuracy: the value's billionth.
    assert_eq!(
        field(&defaults, "served/model=noisy", "latency_ms"),
        "unchanged"
    );
    assert_eq!(
        field(&defaults, "served/model=slow", "latency_ms"),
        "regressed"
    );
    assert_eq!(
        field(&defaults, "served/model=worse", "accuracy"),
        "regressed"
    );
    // The measured field follows time's limit as given.
    let tight = compare(&["--fail-on", "time=2%"]);
    assert_eq!(
        field(&tight, "served/model=noisy", "latency_ms"),
        "regressed"
    );
    let loose = compare(&["--fail-on", "time=50%"]);
    assert_eq!(
        field(&loose, "served/model=slow", "latency_ms"),
        "unchanged"
    );
}
