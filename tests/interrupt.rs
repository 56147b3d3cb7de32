//! A bench binary stopped by a signal keeps its finished cases, and
//! `--resume` runs only the cases left; a memo cycle does not hang it. The
//! binary (`harness = false`) runs itself as the bench, as `cargo bench`
//! would, and the signals are real.

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

use nnbench::RunRecord;

/// Five steps of a long sweep; each says when it starts.
#[nnbench::parametrize([(n = 1), (n = 2), (n = 3), (n = 4), (n = 5)], timing = once)]
fn step(n: u32) -> u32 {
    eprintln!("start {n}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    n
}

fn bench(target: &Path, args: &[&str]) -> Child {
    support::bench_binary()
        .env("CARGO_TARGET_DIR", target)
        .args(["--bench", "step/"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the bench starts")
}

/// Waits until the bench says case `n` started, sends it `signals` (one
/// after the other), and returns its exit code and the cases it started.
fn signal_during(child: &mut Child, n: u32, signals: &[i32]) -> Vec<u32> {
    let stderr = child.stderr.take().expect("piped");
    let mut started = Vec::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.expect("stderr is text");
        if let Some(step) = line.strip_prefix("start ") {
            let step: u32 = step.parse().expect("a step number");
            started.push(step);
            if step == n {
                for &signal in signals {
                    // SAFETY: a signal to our own child, which is alive.
                    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
                    // Two signals sent at once may arrive as one.
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            }
        }
    }
    started
}

fn finish(child: Child) -> (i32, Vec<u32>) {
    let output = child.wait_with_output().expect("the bench ends");
    let started = String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter_map(|l| l.strip_prefix("start ")?.parse().ok())
        .collect();
    (output.status.code().unwrap_or(-1), started)
}

fn latest(target: &Path) -> RunRecord {
    let path = target.join("nnbench/interrupt/latest.json");
    serde_json::from_str(&std::fs::read_to_string(&path).expect("latest.json")).expect("a record")
}

fn progress_lines(target: &Path) -> usize {
    std::fs::read_to_string(target.join("nnbench/interrupt/progress.ndjson"))
        .map_or(0, |text| text.lines().count())
}

fn ids(record: &RunRecord) -> Vec<&str> {
    record.cases.iter().map(|c| c.id.as_str()).collect()
}

fn ctrl_c_keeps_the_finished_cases_and_resume_runs_the_rest() {
    let target = tempfile::tempdir().unwrap();
    let baseline = target.path().join("nnbench/interrupt/baselines/main.json");
    let mut child = bench(target.path(), &["--save-baseline", "main"]);
    let started = signal_during(&mut child, 3, &[libc::SIGINT]);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "a shell's code for SIGINT");
    assert_eq!(started, [1, 2, 3], "nothing starts after the signal");
    let record = latest(target.path());
    assert_eq!(record.interrupted.as_deref(), Some("SIGINT"));
    assert_eq!(ids(&record), ["step/n=1", "step/n=2", "step/n=3"]);
    assert!(
        record.cases.iter().all(|c| c.error.is_none()),
        "the running case finished"
    );
    assert!(
        record.cases[2]
            .warnings
            .iter()
            .any(|w| w.contains("interrupted (SIGINT)"))
    );
    assert!(
        record
            .warnings
            .iter()
            .any(|w| w.contains("2 of 5 cases did not run"))
    );
    assert!(!baseline.exists(), "half a run is no baseline");

    let (code, started) = finish(bench(
        target.path(),
        &["--resume", "--save-baseline", "main"],
    ));
    assert_eq!(code, 0);
    assert_eq!(started, [4, 5], "only the cases left run");
    let record = latest(target.path());
    assert_eq!(record.interrupted, None);
    assert_eq!(record.cases.len(), 5);
    assert_eq!(
        record
            .cases
            .iter()
            .map(|c| c.value.as_u64())
            .collect::<Vec<_>>(),
        (1..=5).map(Some).collect::<Vec<_>>()
    );
    assert_eq!(
        progress_lines(target.path()),
        0,
        "a run that ends removes its progress"
    );
    let saved = RunRecord::read(&baseline).expect("the completed run is the baseline");
    assert_eq!(saved.cases.len(), 5);
}

fn a_killed_run_leaves_its_finished_cases_for_resume() {
    let target = tempfile::tempdir().unwrap();
    let mut child = bench(target.path(), &[]);
    signal_during(&mut child, 3, &[libc::SIGKILL]);
    child.wait().unwrap();
    assert_eq!(
        progress_lines(target.path()),
        2,
        "the two finished cases are on disk"
    );
    let (code, started) = finish(bench(target.path(), &["--resume"]));
    assert_eq!(code, 0);
    assert_eq!(started, [3, 4, 5]);
    assert_eq!(latest(target.path()).cases.len(), 5);
}

fn a_second_signal_stops_at_once() {
    let target = tempfile::tempdir().unwrap();
    let mut child = bench(target.path(), &[]);
    signal_during(&mut child, 2, &[libc::SIGTERM, libc::SIGTERM]);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "a shell's code for SIGTERM");
    assert_eq!(
        progress_lines(target.path()),
        1,
        "the running case did not finish"
    );
}

fn without_resume_a_run_starts_over() {
    let target = tempfile::tempdir().unwrap();
    let mut child = bench(target.path(), &[]);
    signal_during(&mut child, 2, &[libc::SIGINT]);
    child.wait().unwrap();
    let (code, started) = finish(bench(target.path(), &[]));
    assert_eq!(code, 0);
    assert_eq!(started, [1, 2, 3, 4, 5]);
}

fn main() {
    support::main(
        "interrupt",
        support::checks![
            ctrl_c_keeps_the_finished_cases_and_resume_runs_the_rest,
            a_killed_run_leaves_its_finished_cases_for_resume,
            a_second_signal_stops_at_once,
            without_resume_a_run_starts_over,
        ],
    );
}
