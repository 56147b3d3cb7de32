//! examples/slurm on a real Slurm: the one-node cluster of
//! `scripts/slurm-local.sh` (`eval "$(scripts/slurm-local.sh start)"` sets
//! `SLURM_CONF`). The sweep is submitted as the README says, merged and
//! checked against a run in one process; a shard is failed on purpose,
//! rerun with the documented command, and merged; a regression fails the
//! merge job. Skips without a cluster, unless `NNBENCH_REQUIRE_SLURM` says
//! it must run (as in CI).

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use nnbench::RunRecord;

/// The sweep's size: small, so that the shards run in seconds.
const SWEEP_N: &str = "32";

/// Only a large change of time is judged here: three runs on one busy
/// machine differ by tens of percent, not by ten times.
const FAIL_ON: &str = "time=200%,rss=off,heap=off,load=off";

fn cluster_here() -> bool {
    let here = std::env::var_os("SLURM_CONF").is_some()
        && Command::new("sinfo")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    support::here_or_skip(
        here,
        "Slurm cluster",
        "NNBENCH_REQUIRE_SLURM",
        "eval \"$(scripts/slurm-local.sh start)\" starts one, as root",
    )
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn submit(args: &[&str]) -> Output {
    let output = Command::new(repo().join("examples/slurm/submit.sh"))
        .args(args)
        .current_dir(repo())
        .env("NNBENCH_SWEEP_N", SWEEP_N)
        // The script's release builds of the bench and the tool are most
        // of this test's time, and what it checks does not depend on how
        // hard the compiler optimizes (a regression is a baseline ten
        // times faster): unoptimized, into a folder kept between runs.
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("slurm-target"),
        )
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .output()
        .expect("submit.sh runs");
    eprintln!("{}", support::said(&output));
    output
}

/// The value after `label: ` on a line of submit.sh's output.
fn said_after(output: &Output, label: &str) -> String {
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .find_map(|line| line.strip_prefix(label))
        .unwrap_or_else(|| panic!("no `{label}` line in {text}"))
        .to_owned()
}

fn submission(output: &Output) -> PathBuf {
    said_after(output, "submission: ").into()
}

/// The job ids submit.sh names: the array's, then the merge's.
fn jobs(output: &Output) -> (String, String) {
    let array = said_after(output, "shards: job array ");
    let merge = said_after(output, "merge: job ");
    let first_word = |s: &str| s.split([',', ' ']).next().unwrap().to_owned();
    (first_word(&array), first_word(&merge))
}

/// `JobState` and `ExitCode` of job `id`, once it has ended.
fn ended(id: &str) -> (String, String) {
    let until = Instant::now() + Duration::from_secs(600);
    loop {
        let shown = Command::new("scontrol")
            .args(["show", "job", id])
            .output()
            .expect("scontrol runs");
        let text = String::from_utf8_lossy(&shown.stdout);
        let field = |name: &str| {
            text.split_whitespace()
                .find_map(|w| w.strip_prefix(name))
                .unwrap_or_default()
                .to_owned()
        };
        let state = field("JobState=");
        if !matches!(
            state.as_str(),
            "PENDING" | "RUNNING" | "CONFIGURING" | "COMPLETING" | ""
        ) {
            return (state, field("ExitCode="));
        }
        assert!(
            Instant::now() < until,
            "job {id} still {state} after 10 minutes"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn release(jobs: &[&str]) {
    for job in jobs {
        let released = Command::new("scontrol")
            .args(["release", job])
            .output()
            .unwrap();
        assert!(released.status.success(), "{}", support::said(&released));
    }
}

fn values(record: &RunRecord) -> BTreeMap<String, serde_json::Value> {
    record
        .cases
        .iter()
        .map(|c| (c.id.clone(), c.value.clone()))
        .collect()
}

#[test]
fn a_sweep_runs_as_an_array_fails_a_shard_reruns_it_and_gates_a_regression() {
    if !support::end_to_end(
        "a_sweep_runs_as_an_array_fails_a_shard_reruns_it_and_gates_a_regression",
    ) {
        return;
    }
    if !cluster_here() {
        return;
    }
    let results = tempfile::tempdir().unwrap();
    let dir = results.path().to_str().unwrap();
    let common = ["--shards", "3", "--results", dir, "--fail-on", FAIL_ON];

    // A request no node can hold is refused at once, with Slurm's reason.
    let refused = submit(&[&common[..], &["--cpus", "4096"]].concat());
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        support::said(&refused).contains("Slurm would never run the shards"),
        "{}",
        support::said(&refused)
    );

    // A bench the crate does not have is named.
    let unknown = submit(&[&common[..], &["--bench", "no_such_bench"]].concat());
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        support::said(&unknown).contains("no bench `no_such_bench` was built"),
        "{}",
        support::said(&unknown)
    );

    // The README's command, as is.
    let first = submit(&[&common[..], &["--bench", "sweep"]].concat());
    assert!(first.status.success());
    let one = submission(&first);
    let (_, merge) = jobs(&first);
    assert_eq!(ended(&merge), ("COMPLETED".into(), "0:0".into()));
    let merged = RunRecord::read(one.join("run.json")).unwrap();
    assert_eq!(merged.shards.len(), 3);
    // The same cases and values as the bench in one process.
    let alone = one.join("alone.json");
    let ran = Command::new(one.join("bench"))
        .args(["--bench", "--once", "--quiet", "--out"])
        .arg(&alone)
        .env("NNBENCH_SWEEP_N", SWEEP_N)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", support::said(&ran));
    assert_eq!(values(&merged), values(&RunRecord::read(&alone).unwrap()));
    // Each model in one shard, so computed in one.
    let mut seen = BTreeSet::new();
    for k in 1..=3 {
        let shard = RunRecord::read(one.join(format!("shard-{k}.json"))).unwrap();
        let models: BTreeSet<String> = shard
            .cases
            .iter()
            .map(|c| c.params["model"].to_string())
            .collect();
        for model in models {
            assert!(seen.insert(model.clone()), "{model} ran in two shards");
        }
    }
    assert!(results.path().join("last.json").is_file());
    assert!(
        std::fs::read_to_string(one.join("comparison.md"))
            .unwrap()
            .contains("3 cases")
    );

    // Shard 2 cannot write its record: a folder stands where it would go.
    // Held (`-- --hold`, an sbatch option like any other) until it is.
    let held = submit(&[&common[..], &["--", "--hold"]].concat());
    assert!(held.status.success());
    let two = submission(&held);
    let (array, merge) = jobs(&held);
    std::fs::create_dir(two.join("shard-2.json")).unwrap();
    release(&[&array, &merge]);
    assert_eq!(
        ended(&merge).0,
        "FAILED",
        "the merge fails on the missing shard"
    );
    let task = std::fs::read_to_string(two.join(format!("slurm-{array}_2.out"))).unwrap();
    assert!(task.contains("a folder is there"), "{task}");
    assert_eq!(
        task.matches("a folder is there").count(),
        1,
        "said once: {task}"
    );
    let merge_out = std::fs::read_to_string(two.join(format!("slurm-merge-{merge}.out"))).unwrap();
    assert!(merge_out.contains("left no record: 2"), "{merge_out}");
    assert!(merge_out.contains("submit.sh --rerun"), "{merge_out}");

    // The documented rerun: exactly shard 2, then the merge.
    std::fs::remove_dir(two.join("shard-2.json")).unwrap();
    let rerun = submit(&["--rerun", two.to_str().unwrap()]);
    assert!(rerun.status.success());
    assert!(said_after(&rerun, "shards: job array ").contains("tasks 2 of 1-3"));
    let (array, merge) = jobs(&rerun);
    // The rerun asks what the submission asked, `--hold` included.
    release(&[&array, &merge]);
    assert_eq!(ended(&merge), ("COMPLETED".into(), "0:0".into()));
    let rerun_merged = RunRecord::read(two.join("run.json")).unwrap();
    assert_eq!(values(&rerun_merged), values(&merged));

    // A baseline ten times faster: the next run regressed, its merge job
    // fails, and the baseline stays.
    let last = results.path().join("last.json");
    let mut baseline: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&last).unwrap()).unwrap();
    for case in baseline["cases"].as_array_mut().unwrap() {
        for (field, figure) in case["time"].as_object_mut().unwrap() {
            if field.ends_with("_ns") {
                tenth(figure);
            }
        }
    }
    let faster = baseline.to_string();
    std::fs::write(&last, &faster).unwrap();
    let third = submit(&common);
    assert!(third.status.success());
    let (_, merge) = jobs(&third);
    assert_eq!(ended(&merge), ("FAILED".into(), "1:0".into()));
    let three = submission(&third);
    let comparison = std::fs::read_to_string(three.join("comparison.md")).unwrap();
    assert!(comparison.contains("❌"), "{comparison}");
    assert!(
        std::fs::read_to_string(&last).unwrap() == faster,
        "a run that failed its gate is no baseline"
    );
}

/// A tenth of each number in `figure`.
fn tenth(figure: &mut serde_json::Value) {
    match figure {
        serde_json::Value::Number(n) => *figure = serde_json::json!(n.as_f64().unwrap() / 10.0),
        serde_json::Value::Array(items) => items.iter_mut().for_each(tenth),
        _ => {}
    }
}
