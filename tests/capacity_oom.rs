//! A capacity checked against the out-of-memory killer: a family fitted
//! at sizes well under a memory cgroup's limit, then run in that cgroup
//! at the size its interval says fits, which completes, and at a tenth
//! more than predicted, which the kernel kills, as `--isolate` records it.

mod support;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use nnbench::RunRecord;
use support::cgroup::Cgroup;

const MIB: usize = 1 << 20;

/// The cgroup the cases run in.
const LIMIT: u64 = 512 << 20;

/// The family whose capacity is predicted, at sizes under half the limit.
#[nnbench::product(n = [16, 32, 64, 128, 192], scaling = n, timing = once)]
fn hold(n: usize) -> u64 {
    support::cgroup::hold(n * MIB)
}

/// The size `NNBENCH_TEST_SIZE` (where the test sets it), held as `hold`
/// holds it.
#[nnbench::product(n = [size()], timing = once)]
fn at(n: usize) -> u64 {
    support::cgroup::hold(n * MIB)
}

fn size() -> usize {
    std::env::var("NNBENCH_TEST_SIZE")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1)
}

/// `hold`'s run in `cgroup`, or `at`'s at `size`.
fn run_in(cgroup: &Cgroup, target: &Path, size: Option<usize>) -> (Output, RunRecord) {
    let mut command: Command = support::bench_binary();
    command
        .env("CARGO_TARGET_DIR", target)
        .args(["--bench", "--isolate"])
        .stderr(Stdio::piped());
    match size {
        Some(n) => command.arg("at/").env("NNBENCH_TEST_SIZE", n.to_string()),
        None => command.arg("hold/"),
    };
    let output = cgroup.run(&mut command);
    let record = RunRecord::read(target.join("nnbench/capacity_oom/latest.json"))
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stderr)));
    (output, record)
}

fn the_size_predicted_to_fit_completes_and_a_tenth_more_is_killed() {
    let Some(cgroup) = support::cgroup::for_test("capacity-test", LIMIT) else {
        return;
    };
    let target = tempfile::tempdir().unwrap();
    let (output, record) = run_in(&cgroup, target.path(), None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let capacity = record
        .capacity
        .iter()
        .find(|c| c.family == "hold")
        .unwrap_or_else(|| panic!("no capacity of hold: {stderr}"));
    println!(
        "  predicted n ≈ {:.1} [{:.1}, {:.1}] in {} MiB, {:.1} MiB held beside: {:.2} MiB fixed, {:.3} MiB × n^{:.3}",
        capacity.n,
        capacity.interval[0],
        capacity.interval[1],
        capacity.limit_bytes >> 20,
        capacity.others_bytes.unwrap_or(0) as f64 / MIB as f64,
        capacity.fixed_bytes / MIB as f64,
        capacity.per_bytes / MIB as f64,
        capacity.exponent
    );
    assert_eq!(capacity.limit_from, "cgroup", "{capacity:?}");
    assert_eq!(
        capacity.limit_bytes + capacity.others_bytes.unwrap_or(0),
        LIMIT,
        "the cgroup's limit is the case's and its supervisor's: {capacity:?}"
    );
    assert!(
        capacity.others_bytes.is_some_and(|b| b > 0),
        "the supervisor holds some of it: {capacity:?}"
    );

    // The low end of the 95% interval: the prediction itself is a median,
    // which half of the runs place above the real point by their noise.
    let fits = capacity.interval[0].floor() as usize;
    let (output, record) = run_in(&cgroup, target.path(), Some(fits));
    let case = &record.cases[0];
    assert!(
        output.status.success() && case.error.is_none(),
        "n = {fits}, the low end of the prediction, failed: {:?}\n{}",
        case.error,
        String::from_utf8_lossy(&output.stderr)
    );

    let over = (capacity.n * 1.1).ceil() as usize;
    let (output, record) = run_in(&cgroup, target.path(), Some(over));
    assert_eq!(output.status.code(), Some(1));
    let message = record.cases[0]
        .error
        .as_ref()
        .map(|e| e.summary())
        .unwrap_or_default();
    assert!(
        message.contains("killed by signal 9 (SIGKILL): out of memory?"),
        "n = {over}, a tenth over the prediction: {message}"
    );
}

fn main() {
    support::main(
        "capacity_oom",
        support::checks![the_size_predicted_to_fit_completes_and_a_tenth_more_is_killed],
    );
}
