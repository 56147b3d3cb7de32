//! The GPU checker (`scripts/gpu_check.py judge`) fails every check whose
//! records are missing: an empty output, as a GPU run whose steps all
//! failed before writing anything leaves, passes nothing.

use std::path::Path;
use std::process::Command;

#[test]
fn the_gpu_checker_fails_each_check_it_could_not_make() {
    let out = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu_check.py");
    let status = Command::new("python3")
        .arg(&script)
        .arg("judge")
        .arg(out.path())
        .output()
        .expect("python3 runs the GPU checker");
    assert_eq!(
        status.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("summary.json")).unwrap()).unwrap();
    let rows = summary["checks"].as_array().unwrap();
    assert!(rows.iter().all(|r| r["ok"] == false), "{rows:?}");
    for name in [
        "matmul: nnbench's median within 5% of CUDA events",
        "matmul: energy counted by NVML, at a power the device can draw",
        "NVML alone (no tch) reads a Python torch process's 1 GiB",
        "mnist: paired run of the CUDA cases against a copy passes",
    ] {
        assert!(
            rows.iter().any(|r| r["check"] == name),
            "{name} is listed as failed: {rows:?}"
        );
    }
}

/// Runs the checker on `out`: its rows by name.
fn judged(out: &Path) -> std::collections::HashMap<String, bool> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/gpu_check.py");
    let ran = Command::new("python3")
        .arg(&script)
        .arg("judge")
        .arg(out)
        .output()
        .expect("python3 runs the GPU checker");
    let summary: serde_json::Value = serde_json::from_slice(
        &std::fs::read(out.join("summary.json"))
            .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&ran.stderr))),
    )
    .unwrap();
    summary["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["check"].as_str().unwrap().to_owned(), r["ok"] == true))
        .collect()
}

/// A paired run that failed its gate (a step's exit) fails the check of
/// that step, whatever the verdicts of time in its record; the step that
/// fails on purpose passes only by failing; and a schema 2 record, which
/// leaves an absent `error` out, is read.
#[test]
fn the_gpu_checker_fails_a_step_that_exited_as_it_should_not() {
    let out = tempfile::tempdir().unwrap();
    let steps = "reference 0 7\nalloc 0 1\nalloc-nvml 0 1\nalloc-isolate 0 2\nmatmul 0 2\n\
                 matmul-paired 0 7\npair 0 1\npair-budget 0 1\noom 1 1\nchild 0 6\nmnist 0 10\n\
                 mnist-paired 1 23\n";
    std::fs::write(out.path().join("steps"), steps).unwrap();
    std::fs::write(
        out.path().join("mnist-paired.log"),
        "error: 4 of 4 cases regressed against the base build\n",
    )
    .unwrap();
    let mib = 1u64 << 20;
    let case = |size: u64| {
        serde_json::json!({
            "id": format!("alloc/mib={size}"), "family": "alloc", "params": {"mib": size},
            "memory": {"gpu_method": "torch-allocator", "gpu_peak_bytes": (256 + size) * mib,
                       "call_gpu_peak_bytes": size * mib,
                       "gpu_reserved_peak_bytes": (258 + size) * mib}
        })
    };
    let record = serde_json::json!({"schema": 2, "cases": [case(512), case(64)]});
    std::fs::write(out.path().join("alloc.json"), record.to_string()).unwrap();
    let rows = judged(out.path());
    assert_eq!(
        rows.get("step mnist-paired exits 0"),
        Some(&false),
        "{rows:?}"
    );
    assert_eq!(rows.get("step oom exits 1"), Some(&true), "{rows:?}");
    assert_eq!(rows.get("step mnist exits 0"), Some(&true), "{rows:?}");
    assert_eq!(rows.get("alloc ran"), Some(&true), "{rows:?}");
    assert_eq!(
        rows.get("alloc 512 MiB: call_gpu_peak_bytes leaves the fixture out"),
        Some(&true),
        "{rows:?}"
    );
}

/// Every step `scripts/gpu-check.sh` runs is one the checker judges, and
/// a step it does not know fails the check.
#[test]
fn the_gpu_checker_judges_every_step_the_script_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = std::fs::read_to_string(root.join("scripts/gpu-check.sh")).unwrap();
    let names: Vec<&str> = script
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("step "))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect();
    assert!(names.len() >= 10, "the script's steps: {names:?}");
    let out = tempfile::tempdir().unwrap();
    let steps: String = names
        .iter()
        .chain(&["unknown-step"])
        .map(|name| format!("{name} 0 1\n"))
        .collect();
    std::fs::write(out.path().join("steps"), steps).unwrap();
    let rows = judged(out.path());
    for name in &names {
        assert!(
            rows.keys()
                .any(|check| check.starts_with(&format!("step {name} exits "))),
            "the checker does not judge step {name}: {rows:?}"
        );
        assert_eq!(
            rows.get(&format!("step {name} is judged")),
            None,
            "{rows:?}"
        );
    }
    assert_eq!(
        rows.get("step unknown-step is judged"),
        Some(&false),
        "{rows:?}"
    );
}
