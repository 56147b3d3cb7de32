//! `--paired BASE`, as a CI job meets it on a shared machine: this test
//! binary (`harness = false`) is the bench, and the base build is this
//! binary again behind a script that sets what the "other build" does
//! differently. Nothing here asserts on a time: only on verdicts drawn
//! from base and head measured in alternation.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nnbench::record::CaseRecord;
use nnbench::record::{Clock, Verdict};
use nnbench::store::{Format, Json};
use nnbench::{Memo, RunRecord};

/// How much more work this build does in the case it names, in percent:
/// `kernel/n=2:10`. A "build" is this binary with these variables.
const EXTRA: &str = "PAIRED_TEST_EXTRA";
/// The case this build fails by aborting.
const ABORT: &str = "PAIRED_TEST_ABORT";
/// The bench this build says it is.
const BENCH: &str = "PAIRED_TEST_BENCH";
/// How long this build's call waits in the case it names, in µs.
const WAIT: &str = "PAIRED_TEST_WAIT";

/// A table of numbers, costly enough to keep in the disk tier; each
/// compute says so, so that a test can count them.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Table;

impl Memo for Table {
    type Value = Vec<u64>;
    fn compute(&self) -> nnbench::Result<Vec<u64>> {
        eprintln!("computing the table");
        Ok((0..4096).collect())
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u64>>>> {
        Some(Box::new(Json))
    }
}

#[nnbench::product(table = [Table], n = [1, 2, 3])]
fn kernel(table: &[u64], n: u64) -> u64 {
    let id = format!("kernel/table=Table,n={n}");
    if std::env::var(ABORT).is_ok_and(|a| a == id) {
        std::process::abort();
    }
    let steps = 20_000 * n;
    support::spin(steps + steps * support::extra_work(EXTRA, &id) / 100, table)
}

/// A call of a millisecond or two that computes, and in a build that sets
/// [`WAIT`] also sleeps: its wall time grows, its CPU time barely does.
#[nnbench::benchmark]
fn waits() -> u64 {
    let wait = support::extra_work(WAIT, "waits");
    if wait > 0 {
        std::thread::sleep(std::time::Duration::from_micros(wait));
    }
    support::spin(300_000, &[3; 64])
}

/// Work that no build changes.
#[inline(never)]
fn steady_part(units: u64) -> u64 {
    support::spin(units, &[5; 64])
}

/// Work that a build may make slower ([`EXTRA`] naming its case).
#[inline(never)]
fn slow_part(units: u64) -> u64 {
    support::spin(units, &[7; 64])
}

#[nnbench::parametrize([(which = 1), (which = 2)])]
fn profiled(which: u64) -> u64 {
    let id = format!("profiled/which={which}");
    let slow = 100_000 + 100_000 * support::extra_work(EXTRA, &id) / 100;
    steady_part(100_000) + slow_part(slow)
}

fn main() {
    let bench = std::env::var(BENCH).unwrap_or_else(|_| "paired".into());
    support::main(
        &bench,
        support::checks!(
            identical_builds_pass_and_keep_both_sides,
            ten_percent_more_work_in_one_case_fails_that_case_alone,
            a_base_that_crashes_in_a_case_fails_that_case_alone,
            a_base_that_is_not_a_build_of_this_bench_is_refused,
            a_base_revision_without_the_bench_takes_every_case_as_new,
            a_call_that_waits_longer_fails_though_its_cpu_time_did_not,
            a_base_executable_runs_from_a_copy_beside_the_heads,
            counted_builds_are_paired_once_by_their_instructions,
            a_regressed_case_gets_a_differential_flamegraph_and_an_unchanged_one_none,
        ),
    );
}

/// A "build" of this bench: a script that sets `env` and runs this binary.
fn build(dir: &Path, name: &str, env: &[(&str, &str)]) -> PathBuf {
    support::build_script(dir, name, &[EXTRA, ABORT, BENCH, WAIT], env)
}

/// This build, paired with `base`, on the `kernel` cases.
fn paired(target: &Path, base: &Path, head_env: &[(&str, &str)]) -> Output {
    paired_with(target, base, head_env, &[])
}

/// [`paired`], with more flags.
fn paired_with(target: &Path, base: &Path, head_env: &[(&str, &str)], flags: &[&str]) -> Output {
    let mut command: Command = support::bench_binary();
    command
        .env("CARGO_TARGET_DIR", target)
        .env_remove(EXTRA)
        .env_remove(ABORT)
        .env_remove(BENCH)
        .env_remove(WAIT)
        .envs(head_env.iter().copied())
        .args(["--bench", "--paired"])
        .arg(base)
        .args(flags)
        .arg("kernel/");
    command.output().expect("the bench runs")
}

fn latest(target: &Path) -> RunRecord {
    RunRecord::read(target.join("nnbench/paired/latest.json")).expect("latest.json")
}

fn case(record: &RunRecord, n: u32) -> &CaseRecord {
    let id = format!("kernel/table=Table,n={n}");
    record
        .cases
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("{id} is in {:?}", record.cases))
}

fn identical_builds_pass_and_keep_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let base = build(dir.path(), "base", &[]);
    let output = paired(dir.path(), &base, &[]);
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    let record = latest(dir.path());
    let run = record.paired.as_ref().expect("the run says it was paired");
    assert_eq!(run.base, base.display().to_string());
    assert_eq!(record.cases.len(), 3);
    for case in &record.cases {
        let p = case.paired.as_ref().expect("every case is paired");
        // A run of this machine's noise can still settle early on a
        // percent or two either way: only a regression fails the job.
        assert_ne!(p.verdict, Verdict::Regressed, "{}: {p:?}", case.id);
        assert!(
            p.interval[0] <= 1.1 && p.interval[1] >= 0.9,
            "the interval reaches no change: {}: {p:?}",
            case.id
        );
        // Past 50 rounds only a case whose estimate is beyond the limit
        // goes on.
        assert!(
            p.rounds >= 8 && (p.rounds <= 50 || p.estimate > 1.03),
            "{p:?}"
        );
        assert_eq!(p.wall_ratios.len(), p.rounds as usize);
        assert!(
            p.interval[0] <= p.estimate && p.estimate <= p.interval[1],
            "{p:?}"
        );
        assert_eq!(p.clock, Clock::Cpu, "single-threaded work: {p:?}");
        assert_eq!(p.base.value, case.value, "both builds compute the same");
        assert_eq!(
            case.time.samples,
            3 * p.rounds as u64,
            "three samples a round"
        );
        assert_eq!(
            case.time.iters / case.time.samples,
            p.base.time.iters / p.base.time.samples,
            "both builds make the same calls per sample"
        );
    }
    assert!(
        said.contains("head/base (99%)") && said.matches("┆ cpu   ┆ ").count() == 3,
        "the table lists every case with its verdict: {said}"
    );
    // Two copies of one build keep their disk entries apart, as two
    // builds do: each side computes the fixture once and reads it back.
    assert_eq!(
        said.matches("computing the table").count(),
        2,
        "the fixture is computed once a side: {said}"
    );
}

fn ten_percent_more_work_in_one_case_fails_that_case_alone() {
    let dir = tempfile::tempdir().unwrap();
    let base = build(dir.path(), "base", &[]);
    let slower = "kernel/table=Table,n=2";
    // In a noisy spell 30 rounds may not bound a 10% change; 60 do.
    let output = paired_with(
        dir.path(),
        &base,
        &[(EXTRA, &format!("{slower}:10"))],
        &["--max-rounds", "60"],
    );
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains("1 of 3 cases regressed against the base build"),
        "{said}"
    );
    let record = latest(dir.path());
    for n in [1, 2, 3] {
        let case = case(&record, n);
        let p = case.paired.as_ref().expect("paired");
        if n != 2 {
            assert_ne!(p.verdict, Verdict::Regressed, "{}: {p:?}", case.id);
        } else {
            assert_eq!(p.verdict, Verdict::Regressed, "{}: {p:?}", case.id);
            assert!(
                p.interval[0] > 1.0 && p.interval[0] <= 1.2 && p.interval[1] >= 1.05,
                "the interval reaches a tenth more: {p:?}"
            );
        }
    }
}

fn a_base_that_crashes_in_a_case_fails_that_case_alone() {
    let dir = tempfile::tempdir().unwrap();
    let crashed = "kernel/table=Table,n=3";
    let base = build(dir.path(), "base", &[(ABORT, crashed)]);
    // The head gets the variable too, naming no case, so that both sides'
    // environments, which lie above their stacks, take the same room.
    let nothing = "-".repeat(crashed.len());
    let output = paired(dir.path(), &base, &[(ABORT, &nothing)]);
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    let record = latest(dir.path());
    let failed = case(&record, 3);
    let error = failed
        .error
        .as_ref()
        .expect("the base's crash fails the case");
    assert!(
        error.message.starts_with("the base build failed it: ")
            && error.message.contains("SIGABRT"),
        "{error:?}"
    );
    // The other cases are still paired and timed alike. Not held to a
    // verdict: two processes of one build can differ by several percent
    // for real (where their stacks and code lie), which a verdict at a
    // few percent would call a change.
    for n in [1, 2] {
        let c = case(&record, n);
        let p = c.paired.as_ref().expect("paired");
        assert!(c.error.is_none(), "{:?}", c.error);
        assert!((0.9..1.1).contains(&p.estimate), "{p:?}");
    }
}

fn a_base_that_is_not_a_build_of_this_bench_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let other = build(dir.path(), "other-bench", &[(BENCH, "sweep")]);
    let output = paired(dir.path(), &other, &[]);
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(
        said.contains(&format!(
            "--paired {}: a build of bench `sweep`, not of `paired`",
            other.display()
        )),
        "{said}"
    );
    let missing = dir.path().join("no-such-build");
    let output = paired(dir.path(), &missing, &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        support::said(&output).contains(&format!("--paired {}: ", missing.display())),
        "{}",
        support::said(&output)
    );
    let output = paired(dir.path(), Path::new("/bin/true"), &[]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        support::said(&output).contains("--paired /bin/true: not a bench binary"),
        "{}",
        support::said(&output)
    );
    assert!(
        !dir.path().join("nnbench/paired/latest.json").exists(),
        "nothing ran"
    );
}

/// The file `nnbench build-base` prints for a revision without the bench.
fn a_base_revision_without_the_bench_takes_every_case_as_new() {
    let dir = tempfile::tempdir().unwrap();
    let none = dir.path().join("paired-0123456789ab.none");
    std::fs::write(
        &none,
        "nnbench: no base build\nrevision main (0123456789ab) has no bench `paired`\n",
    )
    .unwrap();
    let output = paired(dir.path(), &none, &[]);
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    let record = latest(dir.path());
    assert_eq!(record.cases.len(), 3, "{said}");
    assert!(record.paired.is_some(), "the run says it was paired");
    for case in &record.cases {
        assert!(case.error.is_none(), "{}: {:?}", case.id, case.error);
        assert!(case.paired.is_none(), "{} has no base side", case.id);
        assert!(case.time.samples > 0, "{} was measured", case.id);
    }
    let warned = record.warnings.join("\n") + &said;
    assert!(
        warned.contains("revision main (0123456789ab) has no bench `paired`: every case is new"),
        "{warned}"
    );
}

fn a_call_that_waits_longer_fails_though_its_cpu_time_did_not() {
    let dir = tempfile::tempdir().unwrap();
    let base = build(dir.path(), "base", &[]);
    // This build sleeps `micros` more in `waits`: next to no CPU time.
    let waits = |micros: u32, flags: &[&str]| {
        let mut command: Command = support::bench_binary();
        command
            .env("CARGO_TARGET_DIR", dir.path())
            .env(WAIT, format!("waits:{micros}"))
            .args(["--bench", "--paired"])
            .arg(&base)
            .args(flags)
            .arg("waits");
        let output = command.output().expect("the bench runs");
        let record = latest(dir.path());
        (output, record)
    };
    // 1.8 ms, over half the call's time again: a busy machine stretches
    // both builds' wall time by its own delays, which a smaller change
    // does not stand out from in the rounds a case is given. Still under
    // the call's CPU time, so that in the samples the machine leaves
    // alone the call computes for most of its wall time: a call seen
    // computing in none is judged by wall time alone.
    let (output, record) = waits(1800, &[]);
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    let case = &record.cases[0];
    let p = case.paired.as_ref().expect("paired");
    assert_eq!(p.clock, Clock::Cpu, "{p:?}");
    assert_eq!(p.verdict, Verdict::Regressed, "{p:?}");
    assert!(
        case.warnings.iter().any(|w| w.contains("waits longer")),
        "{:?}",
        case.warnings
    );
    let (cpu_only, _) = waits(1800, &["--paired-clock", "cpu"]);
    assert_eq!(
        cpu_only.status.code(),
        Some(0),
        "{}",
        support::said(&cpu_only)
    );
    let (wall, record) = waits(1800, &["--paired-clock", "wall"]);
    assert_eq!(wall.status.code(), Some(1), "{}", support::said(&wall));
    let p = record.cases[0].paired.as_ref().expect("paired");
    assert_eq!((p.clock, p.verdict), (Clock::Wall, Verdict::Regressed));
}

fn case_paired(record: &RunRecord, n: u32) -> nnbench::record::PairedRecord {
    *case(record, n).paired.clone().expect("paired")
}

fn counted_builds_are_paired_once_by_their_instructions() {
    if !support::valgrind_here() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = build(dir.path(), "base", &[]);
    // 1% more work: the instructions' default limit is 0.5%.
    let head = [(EXTRA, "kernel/table=Table,n=2:1")];
    let output = paired_with(dir.path(), &base, &head, &["--instructions"]);
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains("1 of 3 cases regressed against the base build"),
        "{said}"
    );
    let record = latest(dir.path());
    for n in [1, 2, 3] {
        let p = case_paired(&record, n);
        assert_eq!((p.clock, p.rounds), (Clock::Instructions, 1), "{p:?}");
        let counts = (
            p.base.time.instructions.expect("the base counted"),
            case(&record, n)
                .time
                .instructions
                .expect("the head counted"),
        );
        if n == 2 {
            assert_eq!(p.verdict, Verdict::Regressed, "{p:?}");
            assert!((1.009..1.011).contains(&p.estimate), "{counts:?}");
        } else {
            assert_eq!(p.verdict, Verdict::Unchanged, "{p:?}");
            // Only the head reads a variable it was given, in the call.
            assert!(counts.0.abs_diff(counts.1) * 1000 < counts.0, "{counts:?}");
        }
    }
}

fn a_base_executable_runs_from_a_copy_beside_the_heads() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base-build");
    std::fs::copy(std::env::current_exe().unwrap(), &base).unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    // The copy is made and removed whatever the verdict; the gate on two
    // builds of one source is held to a false alarm that does not repeat.
    support::without_repeated_false_alarm("a base run from a copy", || {
        let mut command: Command = support::bench_binary();
        command
            .env("CARGO_TARGET_DIR", dir.path())
            .env("TMPDIR", &tmp)
            .args(["--bench", "--paired"])
            .arg(&base)
            .arg("kernel/table=Table,n=1");
        let output = command.output().expect("the bench runs");
        match output.status.code() {
            Some(0) => Ok(()),
            Some(1) => Err(support::said(&output)),
            other => panic!("exit {other:?}: {}", support::said(&output)),
        }
    });
    let record = latest(dir.path());
    assert_eq!(
        record.paired.as_ref().unwrap().base,
        base.display().to_string()
    );
    let p = case_paired(&record, 1);
    assert!(p.interval[0] <= 1.1 && p.interval[1] >= 0.9, "{p:?}");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().collect();
    assert!(left.is_empty(), "the copies are removed: {left:?}");
}

fn a_regressed_case_gets_a_differential_flamegraph_and_an_unchanged_one_none() {
    let dir = tempfile::tempdir().unwrap();
    let base = build(dir.path(), "base", &[]);
    let output = support::bench_binary()
        .env("CARGO_TARGET_DIR", dir.path())
        .env_remove(EXTRA)
        .env_remove(ABORT)
        .env_remove(BENCH)
        .env_remove(WAIT)
        // Four times the work in slow_part: it grows by three times its
        // own base time, its callers and the code it shares with the
        // steady part by less than twice theirs. A gap that wide holds in
        // the few hundred samples a profile takes beside a busy process,
        // which a doubling's did not always (slow_part missed the three
        // frames named).
        .env(EXTRA, "profiled/which=1:300")
        .args(["--bench", "--paired"])
        .arg(&base)
        .args(["--profile", "--max-rounds", "40", "profiled/"])
        .output()
        .expect("the bench runs");
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    let record = latest(dir.path());
    let find = |id: &str| record.cases.iter().find(|c| c.id == id).unwrap();
    let slower = find("profiled/which=1");
    assert_eq!(slower.paired.as_ref().unwrap().verdict, Verdict::Regressed);
    let path = slower
        .profile
        .as_ref()
        .unwrap_or_else(|| panic!("a differential flamegraph: {:?}", slower.warnings));
    let diff = std::path::absolute(dir.path().join("nnbench/paired/profiles/diff")).unwrap();
    assert!(path.starts_with(&diff), "{}", path.display());
    let svg = std::fs::read_to_string(path).unwrap();
    assert!(svg.contains("base build against this one"), "{svg}");
    // More work in slow_part: its time per call grew (red), the
    // steady part's did not. Each profile holds a few hundred samples
    // (fewer beside a busy neighbour), whose noise may tint the steady
    // part: it is held to growing less than slow_part, side by side in
    // one flamegraph.
    let fill = |frame: &str| -> [u8; 3] {
        let at = svg
            .find(&format!("<title>{frame} ("))
            .unwrap_or_else(|| panic!("{frame} in the flamegraph"));
        let from = at + svg[at..].find("fill=\"rgb(").unwrap() + 10;
        let rgb: Vec<u8> = svg[from..from + svg[from..].find(')').unwrap()]
            .split(',')
            .map(|c| c.trim().parse().unwrap())
            .collect();
        [rgb[0], rgb[1], rgb[2]]
    };
    let (slow, steady) = (fill("paired::slow_part"), fill("paired::steady_part"));
    assert!(slow[0] == 255 && slow[1] < 250, "red: it grew: {slow:?}");
    assert!(
        steady[0] < 255 || steady[1] > slow[1],
        "the steady part grew less: {steady:?} against {slow:?}"
    );
    let grew = &svg[svg.find("grew most: ").expect("a frame grew")..];
    let grew = &grew[..grew.find('<').unwrap_or(grew.len())];
    assert!(grew.contains("paired::slow_part +"), "{grew}");
    let unchanged = find("profiled/which=2");
    assert_ne!(
        unchanged.paired.as_ref().unwrap().verdict,
        Verdict::Regressed
    );
    assert!(unchanged.profile.is_none(), "{:?}", unchanged.profile);
    // Compare's markdown links it.
    let compared = support::tool()
        .args(["compare", "--paired"])
        .arg(dir.path().join("nnbench/paired/latest.json"))
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&compared.stdout).contains("[flamegraph]("),
        "{}",
        support::said(&compared)
    );
}
