//! `--isolate` and `--case-timeout`, as a user meets them: a bench binary
//! (this one, `harness = false`, run again as the bench) whose cases abort,
//! exit, allocate until they fail, or hang. The failures are real: the
//! worker processes die of them.

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use nnbench::record::CaseRecord;
use nnbench::store::{Format, Json};
use nnbench::{Memo, RunRecord};

/// Weights that are costly to make, kept in the disk tier: a worker that
/// replaces a dead one loads them from there.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Weights;

impl Memo for Weights {
    type Value = Vec<u32>;
    fn compute(&self) -> nnbench::Result<Vec<u32>> {
        eprintln!("computing weights");
        Ok(vec![7; 1024])
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u32>>>> {
        Some(Box::new(Json))
    }
}

/// The second case aborts, as a native library does; the third exits.
#[nnbench::product(w = [Weights], n = [1, 2, 3, 4], timing = once)]
fn crash(w: &[u32], n: u32) -> u32 {
    match n {
        2 => std::process::abort(),
        3 => std::process::exit(3),
        _ => w[0] + n,
    }
}

/// The second case allocates until an allocation fails.
#[nnbench::parametrize([(n = 1), (n = 2), (n = 3)], timing = once)]
fn hog(n: u32) -> u32 {
    if n == 2 {
        let mut held = Vec::new();
        loop {
            held.push(std::hint::black_box(vec![1u8; 64 << 20]));
        }
    }
    n
}

/// The second case never returns.
#[nnbench::parametrize([(n = 1), (n = 2), (n = 3)], timing = once)]
fn hang(n: u32) -> u32 {
    eprintln!("start hang {n}");
    if n == 2 {
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    n
}

/// Four steps of a sweep; each says when it starts.
#[nnbench::parametrize([(n = 1), (n = 2), (n = 3), (n = 4)], timing = once)]
fn slow(n: u32) -> u32 {
    eprintln!("start slow {n}");
    std::thread::sleep(Duration::from_millis(300));
    n
}

fn command(target: &Path, args: &[&str]) -> Command {
    let mut command = support::bench_binary();
    command
        .env("CARGO_TARGET_DIR", target)
        .arg("--bench")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

fn bench(target: &Path, args: &[&str]) -> Output {
    command(target, args).output().expect("the bench runs")
}

fn latest(target: &Path) -> RunRecord {
    RunRecord::read(target.join("nnbench/isolate/latest.json")).expect("latest.json")
}

fn case<'a>(record: &'a RunRecord, id: &str) -> &'a CaseRecord {
    record
        .cases
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("{id} is in the record"))
}

fn message(case: &CaseRecord) -> String {
    case.error
        .as_ref()
        .map_or_else(String::new, |e| e.summary())
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn an_abort_and_an_exit_fail_only_their_cases() {
    let target = tempfile::tempdir().unwrap();
    let output = bench(target.path(), &["--isolate", "crash/"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let record = latest(target.path());
    assert!(record.isolate);
    assert_eq!(record.cases.len(), 4);
    assert_eq!(case(&record, "crash/w=Weights,n=1").value, 8);
    assert_eq!(case(&record, "crash/w=Weights,n=4").value, 11);
    let aborted = case(&record, "crash/w=Weights,n=2");
    let error = aborted.error.as_ref().expect("the abort failed its case");
    assert_eq!(error.stage, nnbench::record::Stage::Call);
    assert!(
        error
            .message
            .starts_with("the worker process was killed by signal 6 (SIGABRT)"),
        "{}",
        error.message
    );
    assert!(
        message(case(&record, "crash/w=Weights,n=3"))
            .starts_with("the worker process exited with status 3 during the case")
    );
    assert_eq!(
        stderr(&output).matches("computing weights").count(),
        1,
        "the workers after a death load the weights from the disk tier"
    );
    assert_eq!(case(&record, "crash/w=Weights,n=4").memo.disk_hits, 1);
    assert!(
        !target
            .path()
            .join("nnbench/isolate/progress.ndjson")
            .exists(),
        "the run ended"
    );
}

fn a_case_that_allocates_past_the_limit_fails_as_out_of_memory() {
    let target = tempfile::tempdir().unwrap();
    let output = bench(
        target.path(),
        &["--isolate", "--worker-memory-limit", "1GiB", "hog/"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let record = latest(target.path());
    let hog = case(&record, "hog/n=2");
    assert!(
        message(hog).contains("out of memory? an allocation failed"),
        "{}",
        message(hog)
    );
    assert!(hog.memory.rss_peak_bytes.unwrap_or(0) > 256 << 20);
    assert_eq!(case(&record, "hog/n=1").value, 1);
    assert_eq!(case(&record, "hog/n=3").value, 3, "the case after it ran");
}

fn a_case_the_oom_killer_kills_is_recorded_as_out_of_memory() {
    let Some(cgroup) = support::cgroup::for_test("isolate-test", 384 << 20) else {
        return;
    };
    let target = tempfile::tempdir().unwrap();
    let output = cgroup.run(&mut command(target.path(), &["--isolate", "hog/"]));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let record = latest(target.path());
    let hog = case(&record, "hog/n=2");
    assert!(
        message(hog).contains("killed by signal 9 (SIGKILL): out of memory?"),
        "{}",
        message(hog)
    );
    assert!(hog.memory.rss_peak_bytes.unwrap_or(0) > 128 << 20);
    assert_eq!(case(&record, "hog/n=3").value, 3, "the case after it ran");
}

fn a_hanging_case_is_killed_in_isolation_and_the_run_goes_on() {
    let target = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let output = bench(
        target.path(),
        &["--isolate", "--case-timeout", "1s", "hang/"],
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let record = latest(target.path());
    assert_eq!(record.interrupted, None);
    assert!(message(case(&record, "hang/n=2")).starts_with(
        "timed out: still running after 1s (--case-timeout); its worker process was killed"
    ));
    assert_eq!(case(&record, "hang/n=3").value, 3);
}

fn without_isolation_a_timeout_stops_the_run_and_resume_goes_on() {
    let target = tempfile::tempdir().unwrap();
    let output = bench(target.path(), &["--case-timeout", "1s", "hang/"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("hang/n=2 ran past --case-timeout 1s"));
    let record = latest(target.path());
    assert_eq!(record.interrupted.as_deref(), Some("case-timeout"));
    assert_eq!(record.cases.len(), 2, "the case after it did not run");
    let hung = case(&record, "hang/n=2");
    assert_eq!(
        hung.error.as_ref().map(|e| e.stage),
        Some(nnbench::record::Stage::Call)
    );
    assert!(message(hung).starts_with("timed out: still running after 1s"));

    let output = bench(target.path(), &["--resume", "hang/"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "the timed-out case still counts"
    );
    assert_eq!(
        stderr(&output).matches("start hang").count(),
        1,
        "only the case left runs"
    );
    let record = latest(target.path());
    assert_eq!(record.interrupted, None);
    assert_eq!(record.cases.len(), 3);
}

fn ctrl_c_to_the_supervisor_stops_the_worker_after_its_case() {
    let target = tempfile::tempdir().unwrap();
    let mut child: Child = command(target.path(), &["--isolate", "slow/"])
        .spawn()
        .expect("the bench starts");
    let lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    let mut started = Vec::new();
    for line in lines {
        let line = line.expect("stderr is text");
        if let Some(n) = line.strip_prefix("start slow ") {
            started.push(n.parse::<u32>().expect("a step"));
            if n == "2" {
                // SAFETY: a signal to our own child, which is alive; its
                // worker is not signalled.
                unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
            }
        }
    }
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert_eq!(started, [1, 2], "nothing starts after the signal");
    let record = latest(target.path());
    assert_eq!(record.interrupted.as_deref(), Some("SIGINT"));
    assert_eq!(record.cases.len(), 2);
    assert!(record.cases.iter().all(|c| c.error.is_none()));
}

fn main() {
    support::main(
        "isolate",
        support::checks![
            an_abort_and_an_exit_fail_only_their_cases,
            a_case_that_allocates_past_the_limit_fails_as_out_of_memory,
            a_case_the_oom_killer_kills_is_recorded_as_out_of_memory,
            a_hanging_case_is_killed_in_isolation_and_the_run_goes_on,
            without_isolation_a_timeout_stops_the_run_and_resume_goes_on,
            ctrl_c_to_the_supervisor_stops_the_worker_after_its_case,
        ],
    );
}
