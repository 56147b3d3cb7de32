//! A bench run places each case that declares its work under the roofs
//! kept for its machine: the share of the roof is the achieved rate over
//! the lower of the peak compute and the intensity times the bandwidth.

mod support;

use nnbench::RunRecord;
use nnbench::record::{FloatPrecision, Roof};

/// A multiply of f64s, compute-bound at these sizes under the roofs kept.
#[nnbench::product(n = [32usize], flops = 2 * n * n * n, bytes = 8 * 3 * n * n, timing = once)]
fn gemm(n: usize) -> f64 {
    let a = vec![1.0f64; n * n];
    let mut c = vec![0.0f64; n * n];
    for i in 0..n {
        for k in 0..n {
            for j in 0..n {
                c[i * n + j] += a[i * n + k] * a[k * n + j];
            }
        }
    }
    std::hint::black_box(c)[0]
}

/// Copying f32s: memory-bound, operations in single precision.
#[nnbench::product(n = [1usize << 16], flops = f32(n), bytes = 8 * n, timing = once)]
fn scale(n: usize) -> f32 {
    let x = vec![1.5f32; n];
    let y: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
    std::hint::black_box(y)[0]
}

fn a_run_places_its_cases_under_the_roofs_kept_for_its_machine() {
    let target = tempfile::tempdir().unwrap();
    let key = nnbench::machine::this_machine().machine_key();
    let kept = target
        .path()
        .join("nnbench/machine")
        .join(format!("{key}.json"));
    std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
    // Roofs far above what a debug build reaches, so that neither roof is
    // passed.
    let roofs = serde_json::json!({
        "flops_f32": {"one_core": 4e12, "all_cores": 8e12},
        "flops_f64": {"one_core": 2e12, "all_cores": 4e12},
        "bandwidth": {"one_core": 1e12, "all_cores": 2e12},
        "method": {"units": "avx512f fma", "cores": 2, "triad_array_bytes": 134217728,
                   "measured_at": "2026-12-07T10:00:00Z", "seconds": 1.5, "noisy": false},
    });
    std::fs::write(&kept, serde_json::to_vec(&roofs).unwrap()).unwrap();
    let output = support::bench_binary()
        .env("CARGO_TARGET_DIR", target.path())
        .args(["--bench", "--quiet"])
        .output()
        .expect("the bench runs");
    assert!(output.status.success(), "{}", support::said(&output));
    let record = RunRecord::read(target.path().join("nnbench/roofline/latest.json")).unwrap();
    let machine = record.context.machine.as_ref().expect("the machine");
    assert_eq!(machine.key, key);
    let kept = machine.roofs.as_ref().expect("the kept roofs");
    assert!(kept.method.cached);

    let case = |id: &str| record.cases.iter().find(|c| c.id == id).expect(id);
    let gemm = case("gemm/n=32").work.as_deref().expect("work");
    // Intensity 32/12 FLOP a byte: 2.7 TFLOP/s under the memory roof, above
    // the f64 peak, so compute-bound.
    assert_eq!(gemm.roof, Some(Roof::Compute));
    let fraction = gemm.flops_per_s.unwrap() / 2e12;
    assert!(
        (gemm.roof_fraction.unwrap() - fraction).abs() < 1e-12,
        "{gemm:?}"
    );
    assert!(gemm.roof_fraction.unwrap() > 0.0 && gemm.roof_fraction.unwrap() <= 1.0);

    let scale = case("scale/n=65536").work.as_deref().expect("work");
    assert_eq!(scale.precision, Some(FloatPrecision::F32));
    // Intensity 1/8: 125 GFLOP/s under the memory roof, below the f32 peak.
    assert_eq!(scale.roof, Some(Roof::Memory));
    let fraction = scale.flops_per_s.unwrap() / (1e12 / 8.0);
    assert!(
        (scale.roof_fraction.unwrap() - fraction).abs() < 1e-12,
        "{scale:?}"
    );
}

fn main() {
    support::main(
        "roofline",
        support::checks![a_run_places_its_cases_under_the_roofs_kept_for_its_machine],
    );
}
