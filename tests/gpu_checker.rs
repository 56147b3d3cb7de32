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
