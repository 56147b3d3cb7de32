//! `--save-baseline` and `--baseline` gate a change as CI needs: a case
//! that allocates 50% more fails the run, named, with the default
//! thresholds, and the same code measured twice in a row (saved, then
//! compared) passes, ten pairs out of ten. The binary is a bench binary
//! (`harness = false`) that runs itself as one.
//!
//! The machines this runs on are shared, and at times run every call of a
//! process two or three times slower for seconds: a time verdict here would
//! test the neighbours. The time judgement is tested on fixed samples in
//! `nnbench::compare`; here time is reported, and gated off.

use std::path::Path;
use std::process::{Command, Output};

#[global_allocator]
static ALLOC: nnbench::alloc::TrackingAllocator = nnbench::alloc::TrackingAllocator::system();

fn factor(name: &str) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0)
}

/// A small sampled kernel, whose time is reported.
#[nnbench::benchmark(timing = sampled)]
fn gated_kernel() -> u64 {
    let n = 20_000u64;
    (0..std::hint::black_box(n)).fold(0u64, |acc, i| acc.wrapping_mul(31).wrapping_add(i))
}

/// A case that allocates 64 MiB, times `NNBENCH_TEST_FATTER`.
#[nnbench::benchmark(timing = once)]
fn gated_memory() -> usize {
    let bytes = (64.0 * 1048576.0 * factor("NNBENCH_TEST_FATTER")) as usize;
    let mut buffer = vec![0u8; bytes];
    for page in buffer.chunks_mut(4096) {
        page[0] = 1;
    }
    std::hint::black_box(&buffer).len() / bytes
}

/// A case nothing changes.
#[nnbench::benchmark(metric = higher, timing = once)]
fn gated_accuracy() -> f64 {
    0.93
}

fn bench(target: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    Command::new(std::env::current_exe().expect("own path"))
        .env("NNBENCH_BASELINE_GATE_CHILD", "1")
        .env("CARGO_TARGET_DIR", target)
        .envs(envs.iter().copied())
        .args(["--bench", "--sample-size", "30"])
        .args(["--warm-up-time", "100ms", "--measurement-time", "500ms"])
        .args(args)
        .output()
        .expect("the child runs")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn main() {
    if std::env::var_os("NNBENCH_BASELINE_GATE_CHILD").is_some() {
        nnbench::__private::main("baseline_gate", env!("CARGO_MANIFEST_DIR"));
    }
    let target = tempfile::tempdir().expect("temp dir");
    let saved = bench(target.path(), &["--quiet", "--save-baseline", "main"], &[]);
    assert!(saved.status.success(), "{}", text(&saved));
    assert!(
        target
            .path()
            .join("nnbench/baseline_gate/baselines/main.json")
            .is_file()
    );

    let changed = bench(
        target.path(),
        &["--baseline", "main", "--fail-on", "time=off"],
        &[("NNBENCH_TEST_FATTER", "1.5")],
    );
    let said = text(&changed);
    assert_eq!(changed.status.code(), Some(1), "{said}");
    assert!(
        said.contains("1 of 3 cases regressed against baseline main"),
        "{said}"
    );
    let regressed: Vec<&str> = said.lines().filter(|l| l.contains("REGRESSED")).collect();
    assert_eq!(regressed.len(), 1, "{said}");
    assert!(
        regressed[0].contains("gated_memory")
            && regressed[0].contains("rss")
            && regressed[0].contains("heap"),
        "{said}"
    );

    for attempt in 1..=10 {
        let pair = tempfile::tempdir().expect("temp dir");
        let saved = bench(pair.path(), &["--quiet", "--save-baseline", "main"], &[]);
        assert!(saved.status.success(), "{}", text(&saved));
        let same = bench(
            pair.path(),
            &["--baseline", "main", "--fail-on", "time=off"],
            &[],
        );
        assert!(
            same.status.success(),
            "unchanged code flagged on attempt {attempt}: {}",
            text(&same)
        );
    }

    let missing = bench(target.path(), &["--baseline", "nightly"], &[]);
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
    assert!(
        text(&missing).contains("--save-baseline nightly"),
        "{}",
        text(&missing)
    );
    println!("1 passed, 0 failed");
}
