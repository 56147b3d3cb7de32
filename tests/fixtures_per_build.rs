//! Fixtures and the builds that computed them: a model kept in the disk
//! tier, "trained" by code that a head build breaks. A paired run gives
//! each build its own fixtures, and so does a run judged against a saved
//! baseline, so the head is judged on the model it trains; a plain run
//! that loads a model another build trained says so in its record; a memo that declares itself independent
//! of the build is shared by both.
//! This test binary (`harness = false`) is the bench; another "build" is
//! a copy of it with bytes appended (a build whose code differs), behind a
//! script that sets what it does differently.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};

use nnbench::store::{Format, Json};
use nnbench::{Memo, RunRecord};

/// Which build this is, as its fixtures say when they are computed.
const SIDE: &str = "PER_BUILD_TEST_SIDE";
/// Set in the build whose training is broken.
const BROKEN: &str = "PER_BUILD_TEST_BROKEN";

/// A model whose training this build's code decides: its accuracy.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Trained(u64);

impl Memo for Trained {
    type Value = f64;
    fn compute(&self) -> nnbench::Result<f64> {
        let side = std::env::var(SIDE).unwrap_or_else(|_| "head".into());
        eprintln!("training {self:?} on {side}");
        Ok(if std::env::var_os(BROKEN).is_some() {
            0.5
        } else {
            0.9
        })
    }
    fn store(&self) -> Option<Box<dyn Format<f64>>> {
        Some(Box::new(Json))
    }
}

/// Data read as it is, the same in every build: said independent of it.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Split;

impl Memo for Split {
    type Value = Vec<u64>;
    fn compute(&self) -> nnbench::Result<Vec<u64>> {
        let side = std::env::var(SIDE).unwrap_or_else(|_| "head".into());
        eprintln!("reading Split on {side}");
        Ok((0..64).collect())
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u64>>>> {
        Some(Box::new(Json))
    }
    fn build_independent(&self) -> bool {
        true
    }
}

#[nnbench::product(model = [Trained(1)], split = [Split], metric = higher)]
fn accuracy(model: &f64, split: &[u64]) -> f64 {
    std::hint::black_box(split.iter().sum::<u64>());
    *model
}

/// Inputs made, calls, and calls whose input came unsorted, in this
/// process.
static MADE: AtomicU64 = AtomicU64::new(0);
static CALLS: AtomicU64 = AtomicU64::new(0);
static FRESH: AtomicU64 = AtomicU64::new(0);

/// A sort on an input made for each call, paired like any case. Its value
/// counts, in the process that ran it, the inputs made, the calls, and
/// the calls that were handed an input no call had sorted before.
#[nnbench::benchmark]
fn sort_inputs(b: nnbench::Bencher) -> [u64; 3] {
    b.with_inputs(|| {
        MADE.fetch_add(1, Ordering::Relaxed);
        (0..4096u64).rev().collect::<Vec<u64>>()
    })
    .bench_values(|mut v| {
        CALLS.fetch_add(1, Ordering::Relaxed);
        if v.first() > v.last() {
            FRESH.fetch_add(1, Ordering::Relaxed);
        }
        v.sort_unstable();
        v
    });
    [&MADE, &CALLS, &FRESH].map(|n| n.load(Ordering::Relaxed))
}

fn main() {
    support::main(
        "fixtures_per_build",
        support::checks!(
            a_paired_head_is_judged_on_the_model_it_trains,
            a_baseline_run_is_judged_on_the_model_it_trains,
            a_plain_run_on_another_builds_model_says_so,
            a_case_with_per_call_inputs_is_paired,
            copies_of_one_build_each_train_their_own_model,
        ),
    );
}

/// Another build of this bench: a copy of this binary with bytes appended
/// (which the loader ignores), run by a script that marks it the base and
/// sets `env`.
fn other_build(dir: &Path, env: &[(&str, &str)]) -> PathBuf {
    let copy = dir.join("other-build");
    std::fs::copy(std::env::current_exe().unwrap(), &copy).unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&copy)
        .unwrap();
    std::io::Write::write_all(&mut file, b"another build").unwrap();
    drop(file);
    base_script(dir, &copy, env)
}

/// A plain copy of this binary, as CI copies a build to pair it with
/// itself, run by a script that marks it the base.
fn same_build(dir: &Path) -> PathBuf {
    let copy = dir.join("same-build");
    std::fs::copy(std::env::current_exe().unwrap(), &copy).unwrap();
    base_script(dir, &copy, &[])
}

/// A script that runs `copy` as the base, with `env`.
fn base_script(dir: &Path, copy: &Path, env: &[(&str, &str)]) -> PathBuf {
    let mut script = format!("#!/bin/sh\nunset {BROKEN}\nexport {SIDE}=base\n");
    for (key, value) in env {
        script.push_str(&format!("export {key}='{value}'\n"));
    }
    script.push_str(&format!("exec '{}' \"$@\"\n", copy.display()));
    let path = dir.join("base");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `exe` (a build: this binary when `None`) as a bench over `target`.
fn bench(target: &Path, exe: Option<&Path>, env: &[(&str, &str)], flags: &[&str]) -> Output {
    let mut command = match exe {
        Some(exe) => {
            let mut command = Command::new(exe);
            command.env(support::BENCH_CHILD, "1");
            command
        }
        None => support::bench_binary(),
    };
    command
        .env("CARGO_TARGET_DIR", target)
        .env_remove(BROKEN)
        .env_remove(SIDE)
        .env_remove(nnbench::memo::PER_BUILD_ENV)
        .envs(env.iter().copied())
        .arg("--bench")
        .args(flags);
    command.output().expect("the bench runs")
}

/// This build paired with `base` for 8 rounds at least, on the cases of
/// `filter`, with `env`.
fn paired(target: &Path, base: &Path, env: &[(&str, &str)], filter: &str) -> Output {
    bench(
        target,
        None,
        env,
        &[
            "--paired",
            base.to_str().unwrap(),
            "--max-rounds",
            "8",
            filter,
        ],
    )
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn a_paired_head_is_judged_on_the_model_it_trains() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    let base = other_build(dir.path(), &[]);
    // The base's model is in the tier first, as after a run on main.
    let first = bench(&target, Some(&base), &[], &["accuracy/"]);
    assert!(first.status.success(), "{}", said(&first));
    let output = paired(&target, &base, &[(BROKEN, "1")], "accuracy/");
    let text = said(&output);
    let record =
        RunRecord::read(target.join("nnbench/fixtures_per_build/latest.json")).expect("a record");
    let case = record
        .cases
        .iter()
        .find(|c| c.id.starts_with("accuracy/"))
        .expect("the model's case");
    let paired = case
        .paired
        .as_ref()
        .unwrap_or_else(|| panic!("{} was not paired: {:?}\n{text}", case.id, case.error));
    assert_eq!(case.value, serde_json::json!(0.5), "{text}");
    assert_eq!(paired.base.value, serde_json::json!(0.9), "{text}");
    assert!(text.contains("training Trained(1) on head"), "{text}");
    assert!(case.memo.made_by_other_build.is_empty(), "{text}");
    // The split, the same in both builds, was read once, by the first run.
    assert_eq!(text.matches("reading Split").count(), 0, "{text}");
}

fn a_baseline_run_is_judged_on_the_model_it_trains() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    let base = other_build(dir.path(), &[]);
    // README's flow in one checkout: main's build saves the baseline, and
    // its model is in the default tier.
    let first = bench(
        &target,
        Some(&base),
        &[],
        &["--save-baseline", "main", "accuracy/"],
    );
    assert!(first.status.success(), "{}", said(&first));
    // A branch whose training is broken trains its own model, scores 0.5
    // against main's 0.9, and fails the gate.
    let output = bench(
        &target,
        None,
        &[(BROKEN, "1")],
        &["--baseline", "main", "accuracy/"],
    );
    let text = said(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("training Trained(1) on head"), "{text}");
    assert!(
        text.contains("1 of 1 cases regressed against baseline main"),
        "{text}"
    );
    let record =
        RunRecord::read(target.join("nnbench/fixtures_per_build/latest.json")).expect("a record");
    assert_eq!(record.cases[0].value, serde_json::json!(0.5), "{text}");
    assert!(
        record.cases[0].memo.made_by_other_build.is_empty(),
        "{text}"
    );
    // The split, the same in both builds, was read once, by main's run.
    assert!(!text.contains("reading Split"), "{text}");
}

fn a_plain_run_on_another_builds_model_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    let base = other_build(dir.path(), &[]);
    let first = bench(&target, Some(&base), &[], &["accuracy/"]);
    assert!(first.status.success(), "{}", said(&first));
    // Without a baseline, this build loads the model the other one
    // trained, and its record says so.
    let output = bench(&target, None, &[], &["accuracy/"]);
    let text = said(&output);
    assert!(output.status.success(), "{text}");
    assert!(!text.contains("training"), "{text}");
    let record =
        RunRecord::read(target.join("nnbench/fixtures_per_build/latest.json")).expect("a record");
    assert_eq!(
        record.cases[0].memo.made_by_other_build,
        ["Trained(1)"],
        "{text}"
    );
    // Under the per-build switch, this build trains its own.
    let own = bench(
        &target,
        None,
        &[(nnbench::memo::PER_BUILD_ENV, "1")],
        &["accuracy/"],
    );
    let text = said(&own);
    assert!(text.contains("training Trained(1) on head"), "{text}");
    assert!(!text.contains("reading Split"), "{text}");
    let record =
        RunRecord::read(target.join("nnbench/fixtures_per_build/latest.json")).expect("a record");
    assert!(record.cases[0].memo.made_by_other_build.is_empty());
}

fn a_case_with_per_call_inputs_is_paired() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    let base = other_build(dir.path(), &[]);
    let output = paired(&target, &base, &[], "sort_inputs");
    let text = said(&output);
    let record =
        RunRecord::read(target.join("nnbench/fixtures_per_build/latest.json")).expect("a record");
    let case = &record.cases[0];
    assert_eq!(case.id, "sort_inputs");
    assert!(case.error.is_none(), "{:?}\n{text}", case.error);
    let paired = case.paired.as_ref().expect("paired");
    assert!(paired.rounds >= 8, "{paired:?}");
    assert!(paired.base.error.is_none(), "{:?}", paired.base.error);
    assert!(case.time.median_ns > 0.0 && paired.base.time.median_ns > 0.0);
    // On each build, every call was handed an input of its own, made for
    // it and unsorted.
    for (side, value) in [("head", &case.value), ("base", &paired.base.value)] {
        let [made, calls, fresh]: [u64; 3] = serde_json::from_value(value.clone())
            .unwrap_or_else(|e| panic!("{side}'s value {value}: {e}"));
        assert!(calls > 0, "{side} made no call: {value}");
        assert!(made >= calls, "{side}: {made} inputs for {calls} calls");
        assert_eq!(fresh, calls, "{side}: a call was handed a sorted input");
    }
}

fn copies_of_one_build_each_train_their_own_model() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    let base = same_build(dir.path());
    let output = paired(&target, &base, &[], "accuracy/");
    let text = said(&output);
    // One side loading the model the other trained would do less work
    // (and hold less memory) than the other: both train, as two builds do.
    assert!(text.contains("training Trained(1) on head"), "{text}");
    assert!(text.contains("training Trained(1) on base"), "{text}");
    let record =
        RunRecord::read(target.join("nnbench/fixtures_per_build/latest.json")).expect("a record");
    let case = &record.cases[0];
    assert!(case.error.is_none(), "{:?}\n{text}", case.error);
    assert!(case.memo.made_by_other_build.is_empty(), "{text}");
    let paired = case.paired.as_ref().expect("paired");
    assert_eq!(paired.base.value, serde_json::json!(0.9), "{text}");
}
