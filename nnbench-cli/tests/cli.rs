//! The `nnbench` tool as CI runs it: exit codes, messages that name the
//! file at fault, and exports in the shapes Bencher and
//! github-action-benchmark document.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nnbench::{RunRecord, Runner};
use serde_json::Value as Json;

#[nnbench::parametrize([(n = 1), (n = 2)], metric = higher)]
fn cli_case(n: u32) -> f64 {
    f64::from(n) / 4.0
}

#[nnbench::benchmark(metric = higher, fail_on = "rss=off,peak=off,value=5%")]
fn lenient_case() -> f64 {
    0.5
}

/// A model file whose contents the tests change between runs.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Weights(PathBuf);

impl nnbench::Memo for Weights {
    type Value = usize;
    fn compute(&self) -> nnbench::Result<usize> {
        Ok(std::fs::read(&self.0)?.len())
    }
    fn fingerprint(&self) -> nnbench::Result<Option<String>> {
        nnbench::memo::file_digest(&self.0).map(Some)
    }
}

fn weights_path() -> PathBuf {
    std::env::temp_dir().join(format!("nnbench-cli-weights-{}.bin", std::process::id()))
}

#[nnbench::product(weights = [Weights(weights_path())])]
fn input_case(weights: &usize) -> usize {
    *weights
}

fn record() -> RunRecord {
    run("cli_case/")
}

fn run(filter: &str) -> RunRecord {
    Runner::new()
        .filter(filter)
        .test_mode(true)
        .quiet(true)
        .run()
        .expect("run")
}

fn write(dir: &Path, name: &str, record: &RunRecord) -> PathBuf {
    let path = dir.join(name);
    record.write(&path).expect("write");
    path
}

fn nnbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nnbench"))
        .args(args)
        .output()
        .expect("nnbench runs")
}

/// `nnbench compare` of `base` and `head` (written into `dir`) with
/// `args`: its exit status and what it said.
fn compared(
    dir: &Path,
    base: &RunRecord,
    head: &RunRecord,
    args: &[&str],
) -> (Option<i32>, String) {
    let (b, h) = (write(dir, "b.json", base), write(dir, "h.json", head));
    let out = nnbench(&[&["compare", s(&b), s(&h)], args].concat());
    (out.status.code(), support::said(&out))
}

/// A case's error: its call failed with `message`.
fn failure(message: &str) -> Option<Box<nnbench::record::CaseError>> {
    Some(Box::new(nnbench::record::CaseError::new(
        nnbench::record::Stage::Call,
        message,
    )))
}

fn s(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

#[test]
fn the_same_run_passes_and_a_fatter_or_less_accurate_case_fails_named() {
    let dir = tempfile::tempdir().unwrap();
    let base = record();
    let same = write(dir.path(), "same.json", &base);
    let base_path = write(dir.path(), "base.json", &base);
    let ok = nnbench(&["compare", s(&base_path), s(&same)]);
    assert_eq!(ok.status.code(), Some(0), "{}", support::said(&ok));
    assert!(
        support::said(&ok).contains("2 cases: 0 regressed"),
        "{}",
        support::said(&ok)
    );

    // The function's own memory and the whole case's peak are gated apart:
    // a larger model with the same working memory fails on its peak alone.
    let mut thin = base.clone();
    let memory = &mut thin.cases[0].memory;
    (memory.rss_before_bytes, memory.rss_peak_bytes) = (Some(0), Some(200 << 20));
    (memory.call_rss_before_bytes, memory.call_rss_peak_bytes) = (Some(100 << 20), Some(200 << 20));
    let mut bigger_model = thin.clone();
    bigger_model.cases[0].memory.rss_peak_bytes = Some(900 << 20);
    let thin_path = write(dir.path(), "thin.json", &thin);
    let bigger_path = write(dir.path(), "bigger-model.json", &bigger_model);
    let same_call = nnbench(&["compare", s(&thin_path), s(&bigger_path)]);
    let said = support::said(&same_call);
    assert_eq!(same_call.status.code(), Some(1), "{said}");
    assert!(
        said.contains("peak 200 MiB → 900 MiB") && !said.contains("rss "),
        "{said}"
    );
    let peak_off = nnbench(&[
        "compare",
        s(&thin_path),
        s(&bigger_path),
        "--fail-on",
        "peak=off",
    ]);
    assert_eq!(
        peak_off.status.code(),
        Some(0),
        "{}",
        support::said(&peak_off)
    );

    let mut head = thin.clone();
    head.cases[0].memory.call_rss_peak_bytes = Some(300 << 20);
    head.cases[1].value = serde_json::json!(0.1);
    let head_path = write(dir.path(), "head.json", &head);
    let bad = nnbench(&["compare", s(&thin_path), s(&head_path)]);
    assert_eq!(bad.status.code(), Some(1), "{}", support::said(&bad));
    let text = support::said(&bad);
    assert!(
        text.contains("cli_case/n=1") && text.contains("rss"),
        "{text}"
    );
    assert!(
        text.contains("cli_case/n=2") && text.contains("value"),
        "{text}"
    );
    assert!(text.contains("2 regressed"), "{text}");

    // The memory threshold can be raised past the change.
    let lenient = nnbench(&[
        "compare",
        s(&thin_path),
        s(&head_path),
        "--fail-on",
        "rss=150%,value=off",
    ]);
    assert_eq!(
        lenient.status.code(),
        Some(0),
        "{}",
        support::said(&lenient)
    );

    let markdown = nnbench(&[
        "compare",
        s(&thin_path),
        s(&head_path),
        "--format",
        "markdown",
    ]);
    assert!(support::said(&markdown).contains("| case | verdict | what changed |"));
    let json = nnbench(&["compare", s(&thin_path), s(&head_path), "--format", "json"]);
    let parsed: Json = serde_json::from_slice(&json.stdout).expect("JSON");
    assert_eq!(parsed["cases"].as_array().unwrap().len(), 2);
}

#[test]
fn a_family_fail_on_loosens_its_own_cases_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut base = run("cli_case/n=1");
    base.cases.extend(run("lenient_case").cases);
    assert_eq!(base.cases.len(), 2);
    assert_eq!(
        base.cases[1].fail_on.as_deref(),
        Some("rss=off,peak=off,value=5%")
    );
    let mut head = base.clone();
    for case in &mut head.cases {
        case.memory.rss_before_bytes = Some(100 << 20);
        case.memory.rss_peak_bytes = Some(400 << 20);
        case.value = serde_json::json!(case.value.as_f64().unwrap() * 0.97);
    }
    let mut thin = base.clone();
    for case in &mut thin.cases {
        case.memory.rss_before_bytes = Some(100 << 20);
        case.memory.rss_peak_bytes = Some(110 << 20);
    }
    let (b, h) = (
        write(dir.path(), "b.json", &thin),
        write(dir.path(), "h.json", &head),
    );
    let out = nnbench(&["compare", s(&b), s(&h), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", support::said(&out));
    let parsed: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    let verdict = |id: &str| {
        parsed["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .map(|c| c["verdict"].as_str().unwrap().to_owned())
    };
    assert_eq!(verdict("cli_case/n=1").as_deref(), Some("regressed"));
    assert_eq!(verdict("lenient_case").as_deref(), Some("unchanged"));
}

#[test]
fn a_changed_model_file_is_reported_beside_the_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let weights = weights_path();
    std::fs::write(&weights, b"weights").unwrap();
    let base = run("input_case");
    assert_eq!(
        base.cases[0].memo.inputs.len(),
        1,
        "{:?}",
        base.cases[0].memo
    );
    let same = run("input_case");
    std::fs::write(&weights, b"weights, retrained").unwrap();
    let head = run("input_case");
    let _ = std::fs::remove_file(&weights);
    let (b, same, h) = (
        write(dir.path(), "b.json", &base),
        write(dir.path(), "same.json", &same),
        write(dir.path(), "h.json", &head),
    );
    let unchanged = support::said(&nnbench(&["compare", s(&b), s(&same)]));
    assert!(!unchanged.contains("other inputs"), "{unchanged}");
    let out = nnbench(&["compare", s(&b), s(&h), "--fail-on", "value=off"]);
    let text = support::said(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("input_case") && text.contains("other inputs"),
        "{text}"
    );
}

#[test]
fn gpu_figures_of_two_methods_are_not_compared_as_one() {
    use nnbench::record::GpuMethod;
    let dir = tempfile::tempdir().unwrap();
    let mut base = record();
    base.cases[0].memory.gpu_peak_bytes = Some(900 << 20);
    base.cases[0].memory.gpu_method = Some(GpuMethod::Process);
    let mut head = base.clone();
    head.cases[0].memory.gpu_peak_bytes = Some(100 << 20);
    head.cases[0].memory.gpu_method = Some(GpuMethod::TorchAllocator);
    let (b, h) = (
        write(dir.path(), "b.json", &base),
        write(dir.path(), "h.json", &head),
    );
    let out = nnbench(&["compare", s(&b), s(&h), "--format", "json"]);
    let parsed: Json = serde_json::from_slice(&out.stdout).expect("JSON");
    let gpu = parsed["cases"][0]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["figure"] == "gpu")
        .expect("a GPU figure")
        .clone();
    assert_eq!(gpu["verdict"], "not_comparable", "{gpu}");
    assert_eq!(
        parsed["cases"][0]["verdict"], "unchanged",
        "not an improvement"
    );
}

#[test]
fn cases_on_one_side_are_new_or_gone_and_a_failure_is_never_an_improvement() {
    let dir = tempfile::tempdir().unwrap();
    let base = record();
    let mut head = base.clone();
    head.cases[0].id = "cli_case/n=3".into();
    head.cases[1].error = failure("diverged");
    let (status, text) = compared(dir.path(), &base, &head, &[]);
    assert_eq!(status, Some(1), "{text}");
    assert!(text.contains("1 new") && text.contains("1 gone"), "{text}");
    assert!(
        text.contains("FAILS") && text.contains("diverged"),
        "{text}"
    );
}

#[test]
fn a_case_failing_in_the_head_run_fails_even_where_it_failed_before_or_is_new() {
    let dir = tempfile::tempdir().unwrap();
    let mut failing = record();
    failing.cases[1].error = failure("out of memory");
    // A run with a failed case, against itself (a first run, with no
    // baseline): nothing regressed, and still the gate fails.
    let (status, text) = compared(dir.path(), &failing, &failing, &["--format", "markdown"]);
    assert_eq!(status, Some(1), "{text}");
    assert!(text.contains("### ❌"), "{text}");
    assert!(text.contains("0 regressed"), "{text}");
    assert!(text.contains("1 failing in the head run"), "{text}");
    assert!(text.contains("| FAILS |"), "{text}");
    // A new case that fails.
    let base = record();
    let mut head = base.clone();
    head.cases[1].id = "cli_case/n=9".into();
    head.cases[1].error = failure("out of memory");
    let (status, text) = compared(dir.path(), &base, &head, &[]);
    assert_eq!(status, Some(1), "{text}");
    assert!(text.contains("new, FAILS"), "{text}");
    // The same runs without the failure pass.
    let (status, text) = compared(dir.path(), &base, &base, &[]);
    assert_eq!(status, Some(0), "{text}");
}

#[test]
fn bad_input_exits_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.json", &record());
    let truncated = dir.path().join("truncated.json");
    let text = std::fs::read_to_string(&good).unwrap();
    std::fs::write(&truncated, &text[..text.len() / 2]).unwrap();
    let foreign = dir.path().join("foreign.json");
    std::fs::write(&foreign, r#"{"benchmarks": []}"#).unwrap();
    let missing = dir.path().join("missing.json");
    for bad in [&truncated, &foreign, &missing] {
        let out = nnbench(&["compare", s(bad), s(&good)]);
        assert_eq!(out.status.code(), Some(2), "{}", support::said(&out));
        assert!(
            support::said(&out).contains(s(bad)),
            "{}",
            support::said(&out)
        );
    }
    let out = nnbench(&["compare", s(&good), s(&good), "--fail-on", "speed=5%"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        support::said(&out).contains("speed"),
        "{}",
        support::said(&out)
    );
    let out = nnbench(&["compare", "no-such-baseline", s(&good)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        support::said(&out).contains("no-such-baseline"),
        "{}",
        support::said(&out)
    );
}

#[test]
fn any_commit_text_in_a_record_is_shown_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let mut odd = record();
    odd.context.git = Some(nnbench::record::Git::new("é".repeat(20), None, false));
    let path = write(dir.path(), "odd.json", &odd);
    let out = nnbench(&["compare", s(&path), s(&path)]);
    assert_eq!(out.status.code(), Some(0), "{}", support::said(&out));
    assert!(
        support::said(&out).contains(&"é".repeat(10)),
        "{}",
        support::said(&out)
    );
}

#[test]
fn a_folder_of_records_is_one_side() {
    let dir = tempfile::tempdir().unwrap();
    let bench = dir.path().join("sweep");
    std::fs::create_dir(&bench).unwrap();
    let path = write(&bench, "latest.json", &record());
    let out = nnbench(&["compare", s(&path), s(dir.path())]);
    assert_eq!(out.status.code(), Some(0), "{}", support::said(&out));
}

/// Bencher Metric Format: `{benchmark: {measure: {value, lower_value?,
/// upper_value?}}}`, every value a number, bounds around the value.
fn check_bmf(bmf: &Json) {
    let benchmarks = bmf.as_object().expect("an object of benchmarks");
    assert!(!benchmarks.is_empty());
    for (name, measures) in benchmarks {
        assert!(!name.is_empty());
        for (measure, m) in measures.as_object().expect("an object of measures") {
            assert!(
                measure
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "a slug: {measure}"
            );
            let m = m.as_object().expect("a metric object");
            assert!(
                m.keys()
                    .all(|k| ["value", "lower_value", "upper_value"].contains(&k.as_str()))
            );
            let value = m["value"].as_f64().expect("a number");
            // A time is exported with the spread of its samples.
            assert!(
                measure != "latency"
                    || (m.contains_key("lower_value") && m.contains_key("upper_value")),
                "{name}: latency without its bounds: {m:?}"
            );
            if let Some(low) = m.get("lower_value") {
                assert!(low.as_f64().unwrap() <= value);
            }
            if let Some(high) = m.get("upper_value") {
                assert!(high.as_f64().unwrap() >= value);
            }
        }
    }
}

/// github-action-benchmark: `[{name, unit, value, range?, extra?}]`.
fn check_github(entries: &Json) {
    for entry in entries.as_array().expect("an array") {
        let e = entry.as_object().unwrap();
        assert!(e["name"].is_string() && e["unit"].is_string() && e["value"].is_number());
        assert!(
            e.keys()
                .all(|k| ["name", "unit", "value", "range", "extra"].contains(&k.as_str()))
        );
        for optional in ["range", "extra"] {
            assert!(e.get(optional).is_none_or(Json::is_string));
        }
    }
}

#[test]
fn exports_have_the_published_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "run.json", &record());
    let bmf = nnbench(&["export", "--format", "bmf", s(&path)]);
    assert_eq!(bmf.status.code(), Some(0), "{}", support::said(&bmf));
    let bmf: Json = serde_json::from_slice(&bmf.stdout).unwrap();
    check_bmf(&bmf);
    assert_eq!(bmf["cli_case/n=2"]["cli-case"]["value"], 0.5);
    assert!(bmf["cli_case/n=1"]["latency"]["value"].as_f64().unwrap() > 0.0);

    let smaller = nnbench(&["export", "--format", "github-smaller", s(&path)]);
    let smaller: Json = serde_json::from_slice(&smaller.stdout).unwrap();
    check_github(&smaller);
    assert!(
        smaller
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["unit"] == "ns")
    );
    let out = dir.path().join("bigger.json");
    let bigger = nnbench(&[
        "export",
        "--format",
        "github-bigger",
        s(&path),
        "--out",
        s(&out),
    ]);
    assert_eq!(bigger.status.code(), Some(0));
    let bigger: Json = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    check_github(&bigger);
    assert_eq!(bigger[1]["value"], 0.5, "the metric, higher is better");
}

#[test]
fn show_prints_a_compact_record_indented_for_people() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "run.json", &record());
    let written = std::fs::read_to_string(&path).unwrap();
    assert_eq!(written.lines().count(), 1, "a record is written compact");
    let shown = nnbench(&["show", s(&path)]);
    assert!(shown.status.success(), "{shown:?}");
    let text = String::from_utf8(shown.stdout).unwrap();
    assert!(text.lines().count() > 20, "{text}");
    assert!(text.contains("\n  \"cases\": ["), "{text}");
    let again: RunRecord = serde_json::from_str(&text).unwrap();
    assert_eq!(again, RunRecord::read(&path).unwrap());
    let missing = nnbench(&["show", s(&dir.path().join("none.json"))]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("none.json"));
}
