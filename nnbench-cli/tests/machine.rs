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

/// A record of one case on a machine with `cpu`: its calls took `ns`, and
/// reached `fraction` of the machine's roof.
fn record(cpu: &str, ns: f64, fraction: f64) -> serde_json::Value {
    serde_json::json!({
        "schema": 2, "run": "kernels", "started_at": "2026-12-07T10:00:00.000Z",
        "context": {"host": {"arch": "x86_64", "cpu": cpu, "cores": 2}, "nnbench": "0.1.0"},
        "cases": [{
            "id": "gemm/n=512", "family": "gemm", "params": {"n": 512}, "value": null,
            "time": {"mode": "sampled", "samples": 12, "iters": 12, "mean_ns": ns, "median_ns": ns,
                     "min_ns": ns, "max_ns": ns * 1.01,
                     "samples_ns": (0..12).map(|i| ns * (1.0 + 0.001 * i as f64)).collect::<Vec<_>>()},
            "memory": {"memo_resident_bytes": 0, "memo_gpu_resident_bytes": 0},
            "memo": {},
            "work": {"flops": 2.7e8, "bytes": 6.3e6, "precision": "f64", "roof": "compute",
                     "roof_fraction": fraction},
        }],
        "memo": {},
    })
}

#[test]
fn across_machines_time_is_not_comparable_and_the_share_of_the_roof_is_judged() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, record: serde_json::Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, serde_json::to_vec(&record).unwrap()).unwrap();
        path.to_string_lossy().into_owned()
    };
    let base = write("base.json", record("Fast CPU", 1e6, 0.8));
    let compare = |head: &str| {
        let out = tool()
            .args(["compare", &base, head, "--format", "json"])
            .output()
            .expect("the tool runs");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", support::said(&out)));
        (out.status.code(), json)
    };
    let figure = |json: &serde_json::Value, name: &str| {
        json["cases"][0]["figures"]
            .as_array()
            .and_then(|f| f.iter().find(|f| f["figure"] == name).cloned())
            .unwrap_or_else(|| panic!("no {name}: {json}"))
    };
    // Twice as slow on a slower machine, at the same share of its roof.
    let (code, json) = compare(&write("slower.json", record("Slow CPU", 2e6, 0.8)));
    assert_eq!(code, Some(0), "{json}");
    let time = figure(&json, "time");
    assert_eq!(time["verdict"], "not_comparable", "{time}");
    assert!(
        time["note"]
            .as_str()
            .is_some_and(|n| n.contains("other machine")),
        "{time}"
    );
    assert_eq!(figure(&json, "roof_fraction")["verdict"], "unchanged");
    // As fast, at half the share of the same roof: the kernel got worse.
    let (code, json) = compare(&write("worse.json", record("Slow CPU", 1e6, 0.4)));
    assert_eq!(code, Some(1), "{json}");
    assert_eq!(figure(&json, "roof_fraction")["verdict"], "regressed");
    assert_eq!(json["cases"][0]["verdict"], "regressed");
    // On the same machine, time is judged as ever.
    let (code, json) = compare(&write("same.json", record("Fast CPU", 2e6, 0.4)));
    assert_eq!(code, Some(1), "{json}");
    assert_eq!(figure(&json, "time")["verdict"], "regressed");
}
