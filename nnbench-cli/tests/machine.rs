//! `nnbench machine`: the roofs kept for this machine's key, printed as a
//! table or JSON; measured again on request, by an optimized build only.

mod support;

use std::process::Output;

use support::tool;

/// The tool's `machine` command with `args`, its target folder `target`.
fn machine(target: &std::path::Path, args: &[&str]) -> Output {
    tool()
        .arg("machine")
        .args(args)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("the tool runs")
}

#[test]
fn the_roofs_kept_for_this_machine_are_printed_and_measured_again_only_when_optimized() {
    let target = tempfile::tempdir().unwrap();
    let key = nnbench_core::machine::this_machine().machine_key();
    let kept = target
        .path()
        .join("nnbench/machine")
        .join(format!("{key}.json"));
    std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
    std::fs::write(
        &kept,
        serde_json::to_vec(&serde_json::json!({
            "flops_f32": {"one_core": 2.08e11, "all_cores": 4.1e11},
            "flops_f64": {"one_core": 1.04e11, "all_cores": 2.05e11},
            "bandwidth": {"one_core": 2.1e10, "all_cores": 3.3e10},
            "method": {"units": "avx512f fma", "cores": 2, "triad_array_bytes": 134217728,
                       "measured_at": "2026-12-07T10:00:00Z", "seconds": 1.5, "noisy": false},
        }))
        .unwrap(),
    )
    .unwrap();

    let table = machine(target.path(), &[]);
    let said = support::said(&table);
    assert!(table.status.success(), "{said}");
    assert!(said.contains(&key), "{said}");
    assert!(
        said.contains("104 GFLOP/s") && said.contains("21.0 GB/s"),
        "{said}"
    );
    assert!(said.contains("kept; --measure-again"), "{said}");

    let json = machine(target.path(), &["--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json["key"], key.as_str());
    assert_eq!(json["roofs"]["flops_f64"]["all_cores"], 2.05e11);
    assert_eq!(json["roofs"]["method"]["cached"], true);

    let again = machine(target.path(), &["--measure-again"]);
    if cfg!(debug_assertions) {
        // This build's kernels would read the roofs low: it says so, and
        // keeps what was kept.
        assert_eq!(again.status.code(), Some(2), "{}", support::said(&again));
        assert!(support::said(&again).contains("optimized build"));
        let still: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&kept).unwrap()).unwrap();
        assert_eq!(still["flops_f64"]["one_core"], 1.04e11);
    } else {
        assert!(again.status.success(), "{}", support::said(&again));
    }
}
