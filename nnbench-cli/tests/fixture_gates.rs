//! The memory gates see the fixtures, as a sweep gated in CI needs: a
//! model held at twice its size fails the comparison, naming the memo,
//! though the function's own memory did not move; the same code measured
//! twice passes.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use nnbench::{Memo, RunRecord, Runner};
use serde_json::Value as Json;

/// How many times the model's size the head build holds: 1 or 2.
static GROWTH: AtomicUsize = AtomicUsize::new(1);

/// A model of `mib` MiB (times [`GROWTH`]), built in memory.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Model {
    mib: usize,
}

/// A model's weights.
struct Weights(Vec<u8>);

impl Memo for Model {
    type Value = Weights;
    fn compute(&self) -> nnbench::Result<Weights> {
        // Written, so that its pages are resident.
        let bytes = (self.mib * GROWTH.load(Ordering::SeqCst)) << 20;
        Ok(Weights(vec![1u8; bytes]))
    }
    fn size_of(&self, value: &Weights) -> Option<u64> {
        Some(value.0.len() as u64)
    }
}

#[nnbench::product(model = [Model { mib: 32 }], batch = [1usize, 2], timing = once)]
fn predict(model: &Weights, batch: usize) -> usize {
    let sampled: usize = model.0.iter().step_by(4096).map(|&b| usize::from(b)).sum();
    sampled * batch
}

fn run(growth: usize) -> RunRecord {
    GROWTH.store(growth, Ordering::SeqCst);
    Runner::new()
        .filter("predict/")
        .quiet(true)
        .test_mode(true)
        .run()
        .expect("the run")
}

/// `nnbench compare` of two runs, as JSON, and its exit code.
fn compare(base: &RunRecord, head: &RunRecord) -> (Option<i32>, Json) {
    let dir = tempfile::tempdir().unwrap();
    let (b, h) = (dir.path().join("base.json"), dir.path().join("head.json"));
    base.write(&b).unwrap();
    head.write(&h).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_nnbench"))
        .arg("compare")
        .args([&b, &h])
        .args(["--format", "json", "--fail-on", "time=off"])
        .output()
        .unwrap();
    let json = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    (output.status.code(), json)
}

/// The verdict and note of `figure` in each case of a comparison.
fn figure(comparison: &Json, name: &str) -> Vec<(String, Option<String>)> {
    comparison["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let f = case["figures"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["figure"] == name)
                .unwrap_or_else(|| panic!("{name} in {case}"));
            (
                f["verdict"].as_str().unwrap().to_owned(),
                f["note"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

#[test]
fn a_fixture_held_at_twice_its_size_fails_naming_the_memo() {
    let base = run(1);
    let case = &base.cases[0];
    assert_eq!(case.memo.sizes.len(), 1, "{:?}", case.memo);
    assert_eq!(case.memo.sizes[0].bytes, 32 << 20);
    assert_eq!(case.memo.sizes[0].memo, "Model { mib: 32 }");

    let (code, same) = compare(&base, &run(1));
    assert_eq!(code, Some(0), "{same:#}");
    for (verdict, _) in figure(&same, "memo") {
        assert_eq!(verdict, "unchanged", "{same:#}");
    }

    let (code, grown) = compare(&base, &run(2));
    assert_eq!(code, Some(1), "{grown:#}");
    let memo = figure(&grown, "memo");
    assert_eq!(memo.len(), 2, "both cases use the model");
    for (verdict, note) in memo {
        assert_eq!(verdict, "regressed", "{grown:#}");
        let note = note.expect("the memo is named");
        assert!(
            note.contains("Model { mib: 32 }") && note.contains("32.0 MiB → 64.0 MiB"),
            "{note}"
        );
    }
    // The case that loaded the model holds 32 MiB more at its peak; the
    // function itself allocated nothing more.
    let peak = figure(&grown, "peak");
    assert_eq!(peak[0].0, "regressed", "{grown:#}");
    for (verdict, _) in figure(&grown, "rss") {
        assert_eq!(verdict, "unchanged", "{grown:#}");
    }
}
