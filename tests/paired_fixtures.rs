//! `--paired BASE` over a sweep of fixtures built in memory, as a CI gate
//! meets a model sweep: by default (and with `--paired-keep 200ms`) each
//! model, slow to build, is built once a side, however many rounds its
//! cases take, but for the cases its kept workers call changed, which are
//! judged again on new workers (a kept worker keeps a speed of its own).
//! A fixture quick to build is built by each round's new workers under
//! `--paired-keep 200ms`; by default its group keeps its workers where
//! starting them costs more than its calls. The record says which groups
//! were kept and counts each memo's builds.
//! This test binary (`harness = false`) is the bench; a "build" is this
//! binary behind a script that sets what it does differently. Nothing here
//! asserts on a time: only on verdicts and on counts of builds.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nnbench::record::CaseRecord;
use nnbench::record::Verdict;
use nnbench::{Memo, RunRecord};

/// Which build this is, as its fixtures say when they are built.
const SIDE: &str = "FIXTURES_TEST_SIDE";
/// How much more work this build does in the case it names, in percent.
const EXTRA: &str = "FIXTURES_TEST_EXTRA";
/// The case this build fails by aborting.
const ABORT: &str = "FIXTURES_TEST_ABORT";
/// A folder where this build's workers mark each model they ran a case
/// of: the first case run of the second model aborts.
const ABORT_SECOND: &str = "FIXTURES_TEST_ABORT_SECOND";

/// A "model" of 8 MiB of weights (the first its number), built in memory
/// slowly (as a real one is loaded or trained; 300 ms, to keep the test
/// short) and never persisted: each build of it is said on stderr, with
/// the side that built it.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Model(u64);

impl Memo for Model {
    type Value = Vec<u64>;
    fn compute(&self) -> nnbench::Result<Vec<u64>> {
        let side = std::env::var(SIDE).unwrap_or_else(|_| "head".into());
        eprintln!("building {self:?} on {side}");
        std::thread::sleep(std::time::Duration::from_millis(300));
        eprintln!("built {self:?} on {side}");
        Ok((0..1u64 << 20)
            .map(|i| {
                if i == 0 {
                    self.0
                } else {
                    i.wrapping_mul(0x9E37_79B9)
                }
            })
            .collect())
    }
}

#[nnbench::product(model = [Model(1), Model(2), Model(3)], batch = [1, 2])]
fn infer(model: &[u64], batch: u64) -> u64 {
    say_worker_ran(model[0]);
    let id = format!("infer/model=Model({}),batch={batch}", model[0]);
    if std::env::var(ABORT).is_ok_and(|a| a == id) {
        std::process::abort();
    }
    abort_in_second_model(model[0]);
    let steps = 20_000 * batch;
    support::spin(
        steps + steps * support::extra_work(EXTRA, &id) / 100,
        &model[..4096],
    )
}

/// Says on stderr, once a process, that this process ran a case of
/// `Model(model)`: each such process built the model (none is persisted),
/// which the counts of builds are checked against.
fn say_worker_ran(model: u64) {
    static SAID: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.contains(&model) {
        said.push(model);
        let side = std::env::var(SIDE).unwrap_or_else(|_| "head".into());
        eprintln!("worker {} on {side} ran Model({model})", std::process::id());
    }
}

/// Aborts where this is the first case run of the second model this
/// build's workers ran, once a process has marked each model it ran.
fn abort_in_second_model(model: u64) {
    static MARKED: std::sync::Mutex<Vec<u64>> = std::sync::Mutex::new(Vec::new());
    let Ok(dir) = std::env::var(ABORT_SECOND) else {
        return;
    };
    let mut marked = MARKED.lock().unwrap_or_else(|e| e.into_inner());
    if marked.contains(&model) {
        return;
    }
    marked.push(model);
    let marker = Path::new(&dir).join(format!("Model({model})"));
    let first = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(marker)
        .is_ok();
    let models = std::fs::read_dir(&dir).map_or(0, |entries| entries.count());
    if first && models == 2 {
        std::process::abort();
    }
}

/// A table quick to build, never persisted: each build said on stderr.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Quick;

impl Memo for Quick {
    type Value = Vec<u64>;
    fn compute(&self) -> nnbench::Result<Vec<u64>> {
        let side = std::env::var(SIDE).unwrap_or_else(|_| "head".into());
        eprintln!("building Quick on {side}");
        Ok((0..4096).collect())
    }
}

#[nnbench::product(table = [Quick])]
fn light(table: &[u64]) -> u64 {
    support::spin(20_000, table)
}

/// A case without fixtures, paired beside the sweep.
#[nnbench::benchmark]
fn plain() -> u64 {
    support::spin(30_000, &[9; 64])
}

fn main() {
    support::main(
        "paired_fixtures",
        support::checks!(
            identical_builds_pass_and_build_each_model_once_a_side_unless_judged_again,
            a_slower_model_case_is_caught_and_judged_again_on_new_workers,
            a_base_that_dies_in_a_model_case_fails_it_and_builds_its_model_again,
            a_base_that_dies_while_both_builds_build_a_model_runs_the_rest_of_its_cases,
        ),
    );
}

/// A "build" of this bench: a script that sets `env` and runs this binary
/// as the base.
fn build(dir: &Path, name: &str, env: &[(&str, &str)]) -> PathBuf {
    let env: Vec<(&str, &str)> = [(SIDE, "base")]
        .into_iter()
        .chain(env.iter().copied())
        .collect();
    support::build_script(dir, name, &[EXTRA, ABORT, ABORT_SECOND], &env)
}

/// This build, paired with `base`, on every case.
fn paired(target: &Path, base: &Path, head_env: &[(&str, &str)], flags: &[&str]) -> Output {
    let mut command: Command = support::bench_binary();
    command
        .env("CARGO_TARGET_DIR", target)
        .env_remove(EXTRA)
        .env_remove(ABORT)
        .env_remove(ABORT_SECOND)
        // Named as the base's is, in as many letters.
        .env(SIDE, "head")
        .envs(head_env.iter().copied())
        .args(["--bench", "--paired"])
        .arg(base)
        .args(flags);
    command.output().expect("the bench runs")
}

fn latest(target: &Path) -> RunRecord {
    RunRecord::read(target.join("nnbench/paired_fixtures/latest.json")).expect("latest.json")
}

/// How many times each model was built on `side`, checked against the
/// processes of that side that ran its cases: each built it once, and no
/// other did.
fn builds(said: &str, side: &str) -> [usize; 3] {
    let built = [1, 2, 3].map(|m| {
        said.matches(&format!("building Model({m}) on {side}\n"))
            .count()
    });
    let ran = [1, 2, 3].map(|m| {
        said.matches(&format!(" on {side} ran Model({m})\n"))
            .count()
    });
    assert_eq!(
        built, ran,
        "{side}: models built, against the processes that ran their cases: {said}"
    );
    built
}

/// Whether the kept workers called `case` changed, so that it was judged
/// again on new workers.
fn judged_again(case: &CaseRecord) -> bool {
    case.warnings
        .iter()
        .any(|w| w.starts_with("on workers kept for its group"))
}

/// How many times each model is built on a side: once by the kept worker,
/// and once in each round that judged its cases again on new workers.
fn expected_builds(record: &RunRecord) -> [usize; 3] {
    [1, 2, 3].map(|m| {
        let model = format!("infer/model=Model({m}),");
        let again = record
            .cases
            .iter()
            .filter(|c| c.id.starts_with(&model) && judged_again(c))
            .filter_map(|c| c.paired.as_ref().map(|p| p.rounds as usize))
            .max();
        1 + again.unwrap_or(0)
    })
}

fn identical_builds_pass_and_build_each_model_once_a_side_unless_judged_again() {
    let dir = tempfile::tempdir().unwrap();
    let base = build(dir.path(), "base", &[]);
    // No --paired-keep: kept where starting workers and building fixtures
    // cost more than the calls.
    let output = paired(dir.path(), &base, &[], &[]);
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(0), "{said}");
    let record = latest(dir.path());
    assert_eq!(record.cases.len(), 8, "{said}");
    let mut rounds = 0;
    for case in &record.cases {
        let p = case.paired.as_ref().expect("every case is paired");
        assert_ne!(p.verdict, Verdict::Regressed, "{}: {p:?}", case.id);
        assert_eq!(
            p.base.value, case.value,
            "{}: both builds compute the same",
            case.id
        );
        rounds += p.rounds;
    }
    assert!(rounds >= 8 * 8, "every case took its rounds: {rounds}");
    assert_eq!(builds(&said, "head"), expected_builds(&record), "{said}");
    assert_eq!(builds(&said, "base"), expected_builds(&record), "{said}");
    // The run's first kept group builds its fixture on the head and then
    // on the base, each with the machine to itself; a fixture that waits
    // as these do used no core, so the groups after it are built on both
    // builds at once (a fixture that computes on every core would be
    // built in turn again).
    let first = said
        .find("building ")
        .map(|at| said[at..].lines().next().unwrap_or_default().to_owned());
    let first = first.as_deref().and_then(|l| l.strip_prefix("building "));
    let first = first.and_then(|l| l.strip_suffix(" on head"));
    for memo in ["Model(1)", "Model(2)", "Model(3)"] {
        let built_on_head = said.find(&format!("built {memo} on head\n"));
        let building_on_base = said.find(&format!("building {memo} on base\n"));
        let (Some(head), Some(base)) = (built_on_head, building_on_base) else {
            panic!("{memo} is built on both builds: {said}");
        };
        if Some(memo) == first {
            assert!(
                head < base,
                "{memo}, the first group, was built at once: {said}"
            );
        } else {
            assert!(base < head, "{memo} was built in turn: {said}");
        }
    }
    // A fixture quick to build is built once a side where its group kept
    // its workers (starting one costs more than its calls), else by each
    // round's new workers: the record says which.
    let run = record.paired.as_ref().expect("the run's pairing");
    let quick = quick_builds(&record, run.kept.iter().any(|g| g == "Quick"));
    for side in ["head", "base"] {
        let built = said.matches(&format!("building Quick on {side}\n")).count();
        assert_eq!(built, quick, "{side}: {said}");
    }
    // The record and the console say the same.
    let models: Vec<&str> = run
        .kept
        .iter()
        .map(String::as_str)
        .filter(|g| g.starts_with("Model("))
        .collect();
    assert_eq!(models, ["Model(1)", "Model(2)", "Model(3)"], "{said}");
    for group in &run.kept {
        assert!(
            group.starts_with("Model(") || group == "Quick" || group == "cases without memos",
            "{group}: {run:?}"
        );
    }
    let recorded = |memo: &str| {
        let b = run.builds.iter().find(|b| b.memo == memo).expect(memo);
        (b.head as usize, b.base as usize)
    };
    for (at, expected) in expected_builds(&record).into_iter().enumerate() {
        let memo = format!("Model({})", at + 1);
        assert_eq!(recorded(&memo), (expected, expected), "{memo}: {run:?}");
    }
    assert_eq!(recorded("Quick"), (quick, quick), "{run:?}");
    assert!(
        said.contains(&format!(
            "paired: workers kept for {}; memos built (this build / base): ",
            run.kept.join("; ")
        )),
        "{said}"
    );
}

/// How many times `Quick` is built on a side: once by a kept worker (and
/// once in each round that judged its case again on new workers), else
/// once in its group's first round (a round not judged, which builds
/// the fixtures) and once a judged round.
fn quick_builds(record: &RunRecord, kept: bool) -> usize {
    let light = record
        .cases
        .iter()
        .find(|c| c.id == "light/table=Quick")
        .expect("the light case ran");
    let rounds = light.paired.as_ref().expect("it is paired").rounds as usize;
    match (kept, judged_again(light)) {
        (false, _) => 1 + rounds,
        (true, false) => 1,
        (true, true) => 1 + rounds,
    }
}

fn a_slower_model_case_is_caught_and_judged_again_on_new_workers() {
    let dir = tempfile::tempdir().unwrap();
    let base = build(dir.path(), "base", &[]);
    let slower = "infer/model=Model(2),batch=2";
    let output = paired(
        dir.path(),
        &base,
        &[(EXTRA, &format!("{slower}:30"))],
        &["--max-rounds", "60", "--paired-keep", "200ms"],
    );
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    let record = latest(dir.path());
    for case in &record.cases {
        let p = case.paired.as_ref().expect("every case is paired");
        if case.id == slower {
            assert_eq!(p.verdict, Verdict::Regressed, "{p:?}");
            // A third more work: the interval reaches it. On a busy host a
            // round's ratio can land anywhere from 0.7 to 2.2, so the
            // estimate alone is not held to it.
            assert!(p.interval[0] <= 1.45 && p.interval[1] >= 1.2, "{p:?}");
            assert!(judged_again(case), "{:?}", case.warnings);
        } else {
            assert_ne!(p.verdict, Verdict::Regressed, "{}: {p:?}", case.id);
        }
    }
    let expected = expected_builds(&record);
    assert!(expected[1] > 1, "Model(2) is built by each new worker");
    assert_eq!(builds(&said, "head"), expected, "{said}");
    assert_eq!(builds(&said, "base"), expected, "{said}");
    // A DURATION keeps only groups whose memos took it: the quick fixture
    // is built by each round's new workers, and the case without memos
    // runs on new ones too.
    let run = record.paired.as_ref().expect("the run's pairing");
    assert_eq!(run.kept, ["Model(1)", "Model(2)", "Model(3)"], "{said}");
    let quick = quick_builds(&record, false);
    for side in ["head", "base"] {
        let built = said.matches(&format!("building Quick on {side}\n")).count();
        assert_eq!(built, quick, "{side}: {said}");
    }
}

fn a_base_that_dies_in_a_model_case_fails_it_and_builds_its_model_again() {
    let dir = tempfile::tempdir().unwrap();
    let crashed = "infer/model=Model(1),batch=2";
    let base = build(dir.path(), "base", &[(ABORT, crashed)]);
    // The head gets the variable too, naming no case, so that both sides'
    // environments, which lie above their stacks, take the same room.
    let nothing = "-".repeat(crashed.len());
    let output = paired(dir.path(), &base, &[(ABORT, &nothing)], &[]);
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    let record = latest(dir.path());
    for case in &record.cases {
        if case.id == crashed {
            let error = case
                .error
                .as_ref()
                .expect("the base's crash fails the case");
            assert!(
                error.message.starts_with("the base build failed it: ")
                    && error.message.contains("SIGABRT"),
                "{error:?}"
            );
        } else {
            // Two processes of one build can differ by several percent for
            // real (where their stacks, code and models lie), enough for a
            // verdict at the test's 3%. What this test checks is that they
            // are still paired, and timed alike.
            let p = case.paired.as_ref().expect("paired");
            assert!(p.estimate < 1.10, "{}: {p:?}", case.id);
            assert!(case.error.is_none(), "{}: {:?}", case.id, case.error);
        }
    }
    // The base's worker died in Model(1)'s round; the one after it builds
    // Model(1) again for the case left, and keeps it.
    let expected = expected_builds(&record);
    assert_eq!(builds(&said, "head"), expected, "{said}");
    assert_eq!(
        builds(&said, "base"),
        [expected[0] + 1, expected[1], expected[2]],
        "{said}"
    );
}

fn a_base_that_dies_while_both_builds_build_a_model_runs_the_rest_of_its_cases() {
    let dir = tempfile::tempdir().unwrap();
    let marks = dir.path().join("marks");
    std::fs::create_dir(&marks).unwrap();
    let marks = marks.to_str().expect("a UTF-8 temporary folder");
    let base = build(dir.path(), "base", &[(ABORT_SECOND, marks)]);
    // A path of as many letters that is no folder: the head marks nothing.
    let nothing = "-".repeat(marks.len());
    let output = paired(dir.path(), &base, &[(ABORT_SECOND, &nothing)], &[]);
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(1), "{said}");
    let record = latest(dir.path());
    let failed: Vec<&CaseRecord> = record.cases.iter().filter(|c| c.error.is_some()).collect();
    let [crashed] = failed[..] else {
        panic!("one case fails, the one the base died in: {said}");
    };
    let message = &crashed.error.as_ref().expect("failed").message;
    assert!(
        message.starts_with("the base build failed it: ") && message.contains("SIGABRT"),
        "{message}"
    );
    // The second model's group is built on both builds at once; the base
    // died in its first case, and the worker that replaced it ran the
    // group's other case in this round and in the rounds after.
    let model = crashed
        .id
        .strip_prefix("infer/model=")
        .and_then(|id| id.split(',').next())
        .expect("a model case");
    let built_on_head = said.find(&format!("built {model} on head\n"));
    let building_on_base = said.find(&format!("building {model} on base\n"));
    assert!(
        matches!((building_on_base, built_on_head), (Some(base), Some(head)) if base < head),
        "{model} was built at once: {said}"
    );
    for case in record.cases.iter().filter(|c| c.id != crashed.id) {
        let p = case.paired.as_ref().expect("paired");
        assert!(p.rounds >= 8, "{}: {p:?}", case.id);
    }
    let expected = expected_builds(&record);
    assert_eq!(builds(&said, "head"), expected, "{said}");
    let again = [1, 2, 3].map(|m| usize::from(model == format!("Model({m})")));
    assert_eq!(
        builds(&said, "base"),
        [0, 1, 2].map(|at| expected[at] + again[at]),
        "{said}"
    );
}
