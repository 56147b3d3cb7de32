//! The history of runs, as a user keeps it: records added from files
//! (`nnbench history add`) and by a bench binary as its run ends
//! (`--history`), listed and followed case by case; a damaged or foreign
//! file is refused and left as it was. This binary (`harness = false`) also
//! runs itself as a bench.

mod support;

use std::path::Path;
use std::process::{Command, Output};

use nnbench::{RunRecord, Runner};
use nnbench_cli::history::{History, HistoryError, Machine, RunFilter, StepSearch};
use nnbench_core::compare::Verdict;

#[nnbench::parametrize([(n = 1), (n = 2)], timing = once)]
fn square(n: u64) -> u64 {
    n * n
}

/// A model's accuracy: higher is better.
#[nnbench::benchmark(timing = once, metric = higher)]
fn accuracy() -> f64 {
    0.9
}

/// Deterministic noise of standard deviation 1: splitmix64, Box-Muller.
struct Noise(u64);

impl Noise {
    fn normal(&mut self) -> f64 {
        let mut uniform = || {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 + 1e-12
        };
        let (a, b) = (uniform(), uniform());
        (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
    }
}

/// The runs of commit `commit` (0, 1, ...) on main: `square/n=2` takes
/// `time_ns` per call and `accuracy` returns `accuracy`, each in 3% noise.
fn commit_runs(
    commit: usize,
    runs: usize,
    time_ns: f64,
    accuracy: f64,
    noise: &mut Noise,
) -> Vec<RunRecord> {
    let template = Runner::new()
        .filter("square/n=2")
        .filter("accuracy")
        .exact(true)
        .test_mode(true)
        .quiet(true)
        .run()
        .expect("the run");
    (0..runs)
        .map(|run| {
            let mut record = template.clone();
            record.started_at = format!(
                "2026-03-{:02}T{:02}:{run:02}:00Z",
                1 + commit / 24,
                commit % 24
            );
            record.context.git = Some(nnbench::record::Git::new(
                format!("{commit:040x}"),
                Some("main".into()),
                false,
            ));
            for case in &mut record.cases {
                // The template's own figures are this machine's: steady
                // made-up ones replace them.
                if case.id == "accuracy" {
                    case.value = serde_json::json!(accuracy * (1.0 + 0.003 * noise.normal()));
                    case.time.median_ns = 200.0 * (1.0 + 0.03 * noise.normal());
                } else {
                    case.time.median_ns = time_ns * (1.0 + 0.03 * noise.normal());
                }
                case.memory.rss_before_bytes = Some(100 << 20);
                case.memory.rss_peak_bytes = Some(101 << 20);
            }
            record
        })
        .collect()
}

fn record() -> RunRecord {
    Runner::new()
        .filter("square/")
        .test_mode(true)
        .quiet(true)
        .run()
        .expect("the run")
}

fn tool(args: &[&str], history: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nnbench"))
        .args(args)
        .env("NNBENCH_HISTORY", history)
        .output()
        .expect("nnbench runs")
}

fn adding_a_record_twice_keeps_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(dir.path().join("h.sqlite")).unwrap();
    let record = record();
    let first = history.add(&record, None).unwrap();
    let again = history.add(&record, None).unwrap();
    assert!(first.new && !again.new);
    assert_eq!(first.run, again.run);
    assert_eq!(first.machine, Machine::of(&record.context));
    assert_eq!(history.runs(&RunFilter::default()).unwrap().len(), 1);
    let points = history.case("square/n=2").unwrap();
    assert_eq!(points.len(), 1);
    assert_eq!(points[0].value, Some(4.0));
    assert!(points[0].time_ns.is_some_and(|t| t > 0.0));
    assert!(!points[0].failed);
}

fn machines_are_kept_apart() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(dir.path().join("h.sqlite")).unwrap();
    let here = record();
    let mut there = record();
    there.context.host.cpu = Some("Another CPU".into());
    there.started_at = "2030-01-01T00:00:00Z".into();
    let a = history.add(&here, None).unwrap();
    let b = history.add(&there, None).unwrap();
    assert_ne!(a.machine.key, b.machine.key);
    let named = history
        .add(&record(), Some(&Machine::named("ci-runner")))
        .unwrap();
    assert_eq!(named.machine.key, "ci-runner");
    let only = |machine: &str| {
        history
            .runs(&RunFilter {
                machine: Some(machine.into()),
                ..RunFilter::default()
            })
            .unwrap()
            .len()
    };
    assert_eq!(only(&a.machine.key), 1);
    assert_eq!(only("Another CPU"), 1, "by part of the description");
    assert_eq!(only("ci-runner"), 1);
    let machines: Vec<String> = history
        .case("square/n=1")
        .unwrap()
        .into_iter()
        .map(|p| p.machine)
        .collect();
    assert_eq!(machines.len(), 3);
}

fn writers_side_by_side_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let base = record();
    std::thread::scope(|scope| {
        for writer in 0..4 {
            let (path, base) = (&path, &base);
            scope.spawn(move || {
                let mut history = History::open(path).expect("each writer opens it");
                for run in 0..10 {
                    let mut record = base.clone();
                    record.started_at = format!("2026-01-01T00:{writer:02}:{run:02}Z");
                    assert!(history.add(&record, None).expect("added").new);
                }
            });
        }
    });
    let history = History::open(&path).unwrap();
    assert_eq!(history.runs(&RunFilter::default()).unwrap().len(), 40);
}

fn damaged_and_foreign_files_are_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.sqlite");
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&garbage, &bytes).unwrap();
    let error = History::open(&garbage).expect_err("refused");
    assert!(matches!(error, HistoryError::Sqlite { .. }), "{error}");
    assert!(
        error
            .to_string()
            .starts_with(&garbage.display().to_string())
    );
    assert_eq!(std::fs::read(&garbage).unwrap(), bytes, "left as it was");

    let foreign = dir.path().join("foreign.sqlite");
    {
        let connection = rusqlite::Connection::open(&foreign).unwrap();
        connection
            .execute_batch("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine');")
            .unwrap();
    }
    let before = std::fs::read(&foreign).unwrap();
    let error = History::open(&foreign).expect_err("refused");
    assert!(
        error.to_string().contains("not an nnbench history"),
        "{error}"
    );
    assert_eq!(std::fs::read(&foreign).unwrap(), before, "left as it was");

    let newer = dir.path().join("newer.sqlite");
    drop(History::open(&newer).unwrap());
    rusqlite::Connection::open(&newer)
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let error = History::open(&newer).expect_err("refused");
    assert!(
        error.to_string().contains("written by a newer nnbench"),
        "{error}"
    );

    let cut = dir.path().join("cut.sqlite");
    {
        let mut history = History::open(&cut).unwrap();
        history.add(&record(), None).unwrap();
    }
    let whole = std::fs::read(&cut).unwrap();
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let outcome = History::open(&cut).and_then(|h| h.runs(&RunFilter::default()));
    assert!(
        outcome
            .as_ref()
            .is_err_and(|e| e.to_string().starts_with(&cut.display().to_string())),
        "a file cut in half is an error naming it: {outcome:?}"
    );
}

fn steps_are_found_at_their_commit_and_judged_by_direction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let mut history = History::open(&path).unwrap();
    let mut noise = Noise(3);
    for commit in 0..30 {
        let time = if commit < 20 { 1000.0 } else { 1150.0 };
        let accuracy = if commit < 12 { 0.90 } else { 0.93 };
        for record in commit_runs(commit, 2, time, accuracy, &mut noise) {
            history.add(&record, None).unwrap();
        }
    }
    let steps = history.steps(&StepSearch::default()).unwrap();
    let found: Vec<(&str, String, &str, Verdict)> = steps
        .iter()
        .map(|s| {
            (
                s.case.as_str(),
                s.figure.to_string(),
                &s.commit[30..],
                s.verdict,
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("accuracy", "value".into(), "000000000c", Verdict::Improved),
            (
                "square/n=2",
                "time".into(),
                "0000000014",
                Verdict::Regressed
            ),
        ],
        "{steps:#?}"
    );
    let slower = &steps[1];
    assert!((slower.change - 0.15).abs() < 0.02, "{}", slower.change);
    assert!(slower.p_value < 1e-6 && !slower.newest && slower.gated);
    assert_eq!(slower.previous[30..], *"0000000013");
    // The step names the bisect that finds its commit, at half its change.
    let bisect = format!(
        "nnbench bisect {} {} --bench {} --case 'square/n=2' --fail-on time={:.1}%",
        &slower.previous[..12],
        &slower.commit[..12],
        slower.bench,
        slower.change * 50.0
    );
    assert_eq!(slower.bisect.as_deref(), Some(bisect.as_str()));

    // The tool: regressions only, unless --all; --fail only for a
    // regression at the newest commit.
    let listed = tool(&["history", "regressions"], &path);
    assert_eq!(listed.status.code(), Some(0), "{}", support::said(&listed));
    assert!(
        support::said(&listed).contains("1 regressions in"),
        "{}",
        support::said(&listed)
    );
    assert!(
        support::said(&listed).contains("+1"),
        "{}",
        support::said(&listed)
    );
    assert!(
        support::said(&listed).contains(&format!(
            "to find the commit of each regression:\n  nnbench bisect {} {} --bench",
            &slower.previous[..12],
            &slower.commit[..12]
        )),
        "{}",
        support::said(&listed)
    );
    let all = tool(
        &["history", "regressions", "--all", "--format", "json"],
        &path,
    );
    let json: serde_json::Value = serde_json::from_slice(&all.stdout).expect("JSON");
    assert_eq!(json.as_array().map(Vec::len), Some(2));
    assert_eq!(
        tool(&["history", "regressions", "--fail"], &path)
            .status
            .code(),
        Some(0)
    );
    // The newest commit: three runs, its accuracy 5% lower.
    for record in commit_runs(30, 3, 1150.0, 0.93 * 0.95, &mut noise) {
        history.add(&record, None).unwrap();
    }
    let failed = tool(&["history", "regressions", "--fail"], &path);
    assert_eq!(failed.status.code(), Some(1), "{}", support::said(&failed));
    assert!(
        support::said(&failed).contains("regressed (newest)"),
        "{}",
        support::said(&failed)
    );
    let tolerant = tool(
        &["history", "regressions", "--fail", "--fail-on", "value=off"],
        &path,
    );
    assert_eq!(
        tolerant.status.code(),
        Some(0),
        "value=off reports without failing"
    );
}

fn an_older_layout_is_brought_up_to_date() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    History::open(&path).unwrap().add(&record(), None).unwrap();
    {
        // As the first layout left it: no direction of the metric, no
        // instruction counts, no fields of struct metrics, no throughput,
        // p99, requests per second, profiles, scaling fits, capacities,
        // searches, declared work or roofs.
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection
            .execute_batch(
                "ALTER TABLE case_params DROP COLUMN direction;
                 ALTER TABLE case_params DROP COLUMN directions;
                 ALTER TABLE figures DROP COLUMN instructions;
                 ALTER TABLE figures DROP COLUMN throughput;
                 ALTER TABLE figures DROP COLUMN p99_ns;
                 ALTER TABLE figures DROP COLUMN requests_per_second;
                 ALTER TABLE figures DROP COLUMN profile;
                 DROP TABLE field_values;
                 DROP TABLE scaling;
                 DROP TABLE capacity;
                 DROP TABLE searches;
                 DROP TABLE work;
                 DROP TABLE streams;
                 ALTER TABLE runs DROP COLUMN roofs;
                 PRAGMA user_version = 1;",
            )
            .unwrap();
    }
    let mut history = History::open(&path).expect("migrated");
    let mut newer = record();
    newer.started_at = "2030-01-01T00:00:00Z".into();
    assert!(history.add(&newer, None).unwrap().new);
    assert_eq!(history.runs(&RunFilter::default()).unwrap().len(), 2);
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 13);
}

fn the_tool_adds_lists_and_shows() {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("h.sqlite");
    let file = dir.path().join("run.json");
    record().write(&file).unwrap();
    let name = file.to_str().unwrap();
    let added = tool(&["history", "add", name], &history);
    assert!(added.status.success(), "{}", support::said(&added));
    assert!(
        support::said(&added).contains("added as run 1"),
        "{}",
        support::said(&added)
    );
    let again = tool(&["history", "add", name], &history);
    assert!(support::said(&again).contains("already in the history as run 1"));
    let list = tool(&["history", "list"], &history);
    assert!(list.status.success());
    assert!(
        support::said(&list).contains("1 runs in"),
        "{}",
        support::said(&list)
    );
    let show = tool(&["history", "show", "square/n=2"], &history);
    assert!(show.status.success(), "{}", support::said(&show));
    assert!(
        support::said(&show).contains("┆ 4 "),
        "{}",
        support::said(&show)
    );
    let missing = tool(&["history", "show", "no/such"], &history);
    assert_eq!(missing.status.code(), Some(2));
    assert!(support::said(&missing).contains("no run has a case `no/such`"));
    let bad = tool(
        &[
            "history",
            "add",
            dir.path().join("absent.json").to_str().unwrap(),
        ],
        &history,
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(support::said(&bad).contains("absent.json"));
    let nowhere = tool(&["history", "list"], &dir.path().join("none.sqlite"));
    assert_eq!(nowhere.status.code(), Some(2));
    assert!(support::said(&nowhere).contains("no history here"));
}

/// A CI run far off its neighbours (40% fast in the middle, 40% slow at the
/// newest commit) is no step, and does not hide the 11% step five commits
/// after it; `history show` marks both runs, and the report draws them
/// apart from the line.
fn a_lone_outlier_run_is_marked_and_neither_a_step_nor_hides_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.sqlite");
    let mut history = History::open(&path).unwrap();
    let mut noise = Noise(17);
    for commit in 0..40 {
        let time = if commit < 25 { 1000.0 } else { 890.0 };
        for mut record in commit_runs(commit, 1, time, 0.9, &mut noise) {
            if commit == 20 || commit == 39 {
                let case = record.cases.iter_mut().find(|c| c.id == "square/n=2");
                let case = case.expect("the case");
                case.time.median_ns *= if commit == 20 { 0.6 } else { 1.4 };
            }
            history.add(&record, None).unwrap();
        }
    }
    let all = StepSearch {
        case: Some("square/n=2".into()),
        ..StepSearch::default()
    };
    let steps = history.steps(&all).unwrap();
    let time: Vec<_> = steps
        .iter()
        .filter(|s| s.figure == nnbench::record::Figure::Time)
        .collect();
    assert_eq!(time.len(), 1, "{steps:#?}");
    assert_eq!(time[0].commit[30..], *"0000000019", "{steps:#?}");
    assert!((time[0].change + 0.11).abs() < 0.02, "{}", time[0].change);

    let show = tool(&["history", "show", "square/n=2"], &path);
    let said = support::said(&show);
    assert!(show.status.success(), "{said}");
    let marked: Vec<&str> = said.lines().filter(|l| l.contains(" *")).collect();
    assert_eq!(marked.len(), 2, "{said}");
    assert!(marked[0].contains("0000000000") && marked[1].contains("0000000000"));
    assert!(said.contains("* an outlier"), "{said}");
    // The same runs, as JSON: each run's figures, the two far off marked.
    let json = tool(
        &["history", "show", "square/n=2", "--format", "json"],
        &path,
    );
    assert!(json.status.success(), "{}", support::said(&json));
    let runs: Vec<serde_json::Value> = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(runs.len(), 40);
    let outliers: Vec<&serde_json::Value> = runs.iter().filter(|r| r["outlier"] == true).collect();
    assert_eq!(outliers.len(), 2, "{runs:#?}");
    for (run, slow) in outliers.iter().zip([false, true]) {
        assert_eq!(run["figures"]["time"]["outlier"], true, "{run}");
        let time = run["figures"]["time"]["value"].as_f64().unwrap();
        assert!((time > 1100.0) == slow, "{run}");
    }
    assert_eq!(runs[0]["figures"]["time"]["outlier"], false);

    let page = dir.path().join("report.html");
    let report = tool(&["report", "-o", page.to_str().unwrap()], &path);
    assert!(report.status.success(), "{}", support::said(&report));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("class=\"outlier").count(), 2, "two rings");
}

/// A bench binary links no history: `--history` is refused before any
/// case runs, with the tool's command that adds the run; that command
/// adds it.
fn a_bench_run_is_added_by_the_tool() {
    let dir = tempfile::tempdir().unwrap();
    let history = dir.path().join("h.sqlite");
    let run = |args: &[&str]| {
        support::bench_binary()
            .env("CARGO_TARGET_DIR", dir.path())
            .args(["square/", "--once", "--bench"])
            .args(args)
            .output()
            .expect("the bench runs")
    };
    let refused = run(&["--history"]);
    let said = support::said(&refused);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(said.contains("nnbench history add"), "{said}");
    assert!(!dir.path().join("nnbench").exists(), "no case ran: {said}");

    let measured = run(&[]);
    assert!(measured.status.success(), "{}", support::said(&measured));
    let latest = std::fs::read_dir(dir.path().join("nnbench"))
        .unwrap()
        .flatten()
        .map(|bench| bench.path().join("latest.json"))
        .find(|latest| latest.is_file())
        .expect("the run's record");
    let added = tool(&["history", "add", latest.to_str().unwrap()], &history);
    assert!(added.status.success(), "{}", support::said(&added));
    assert_eq!(
        History::open(&history)
            .unwrap()
            .runs(&RunFilter::default())
            .unwrap()
            .len(),
        1
    );
}

/// A family's exponent that rose at a commit is a step of its own, named
/// by its fit, with the bisect that finds it.
fn a_step_in_a_scaling_exponent_is_found_like_any_other() {
    let dir = tempfile::tempdir().unwrap();
    let mut history = History::open(dir.path().join("h.sqlite")).unwrap();
    let mut noise = Noise(7);
    for commit in 0..30 {
        let exponent = if commit < 20 { 1.0 } else { 2.0 };
        for mut record in commit_runs(commit, 2, 1000.0, 0.9, &mut noise) {
            let e = exponent + 0.01 * noise.normal();
            let mut fit = nnbench::record::ScalingRecord::default();
            fit.family = "square".into();
            fit.parameter = "n".into();
            fit.figure = "time".into();
            fit.exponent = e;
            fit.interval = [e - 0.03, e + 0.03];
            fit.constant = 10.0;
            fit.fit = "power".into();
            fit.points = 5;
            record.scaling = vec![fit];
            history.add(&record, None).unwrap();
        }
    }
    let steps = history.steps(&StepSearch::default()).unwrap();
    let grew = steps
        .iter()
        .find(|s| s.figure == nnbench::record::Figure::Scaling)
        .unwrap_or_else(|| panic!("{steps:#?}"));
    assert_eq!(
        (grew.case.as_str(), grew.name()),
        ("square", "scaling.time".to_owned())
    );
    assert_eq!(grew.verdict, Verdict::Regressed);
    assert_eq!(&grew.commit[30..], "0000000014");
    assert!(
        (grew.change - 1.0).abs() < 0.05,
        "the exponent's change: {grew:?}"
    );
    let bisect = grew.bisect.as_deref().unwrap();
    assert!(
        bisect.contains("--case 'square/' --fail-on scaling=0.50"),
        "{bisect}"
    );
    let listed = tool(&["history", "regressions"], &dir.path().join("h.sqlite"));
    assert!(
        support::said(&listed).contains("scaling.time"),
        "{}",
        support::said(&listed)
    );
}

fn main() {
    support::main(
        "history",
        support::checks![
            a_step_in_a_scaling_exponent_is_found_like_any_other,
            adding_a_record_twice_keeps_one_run,
            machines_are_kept_apart,
            writers_side_by_side_lose_nothing,
            damaged_and_foreign_files_are_refused_and_left_alone,
            steps_are_found_at_their_commit_and_judged_by_direction,
            an_older_layout_is_brought_up_to_date,
            the_tool_adds_lists_and_shows,
            a_bench_run_is_added_by_the_tool,
            a_lone_outlier_run_is_marked_and_neither_a_step_nor_hides_one,
        ],
    );
}
