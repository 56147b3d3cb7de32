//! `--shard K/N` and `nnbench merge`, as a team splitting a sweep across
//! machines meets them: this bench binary (`harness = false`, run again as
//! the bench) is started once per shard, side by side, and the shards'
//! records are merged by the `nnbench` tool.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use nnbench::{Memo, RunRecord};
use serde_json::Value as Json;

/// A model: its weights are made from its number, so every shard computes
/// the same values.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Model(u32);

impl Memo for Model {
    type Value = Vec<f64>;
    fn compute(&self) -> nnbench::Result<Vec<f64>> {
        Ok((0..256).map(|i| f64::from(self.0 * 31 + i) / 7.0).collect())
    }
}

/// A dataset, made the same way.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Data(u32);

impl Memo for Data {
    type Value = Vec<f64>;
    fn compute(&self) -> nnbench::Result<Vec<f64>> {
        Ok((0..256).map(|i| f64::from(self.0 + i % 5)).collect())
    }
}

/// Six models, four batch sizes: one memo a case. A score: higher is better.
#[nnbench::product(model = (0..6).map(Model), batch = [1, 2, 4, 8], timing = once, metric = higher)]
fn scored(model: &[f64], batch: u32) -> f64 {
    fail_in_the_pod_told();
    model.iter().sum::<f64>() * f64::from(batch)
}

/// The seed sweep's shape: 3 models × 4 datasets × 2 batch sizes.
#[nnbench::product(model = (10..13).map(Model), data = (0..4).map(Data), batch = [16, 32], timing = once)]
fn swept(model: &[f64], data: &[f64], batch: u32) -> f64 {
    fail_in_the_pod_told();
    let dot: f64 = model.iter().zip(data).map(|(m, d)| m * d).sum();
    dot / f64::from(batch)
}

/// Names the index of the one Kubernetes pod whose cases fail.
const FAIL_POD: &str = "NNBENCH_TEST_FAIL_POD";

/// Panics in the pod that `FAIL_POD` names: a case that fails on one
/// shard, as a bug that shows on one machine.
fn fail_in_the_pod_told() {
    let pod = std::env::var("JOB_COMPLETION_INDEX").ok();
    if pod.is_some() && std::env::var(FAIL_POD).ok() == pod {
        panic!("this pod's cases fail");
    }
}

fn bench(args: &[&str]) -> Command {
    let mut command = support::bench_binary();
    command
        .env_remove("NNBENCH_SHARD")
        .env_remove("SLURM_ARRAY_TASK_ID")
        .env_remove("JOB_COMPLETION_INDEX")
        .args(["--quiet", "--no-disk-tier"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn tool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nnbench"))
        .args(args)
        .output()
        .expect("nnbench runs")
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

/// Runs the `count` shards of the cases `filter` selects side by side,
/// each writing `dir/shard-K.json`; their files.
fn run_shards(dir: &Path, filter: &str, count: usize) -> Vec<PathBuf> {
    let children: Vec<(PathBuf, std::process::Child)> = (1..=count)
        .map(|k| {
            let out = dir.join(format!("shard-{k}.json"));
            let shard = format!("{k}/{count}");
            let child = bench(&[filter, "--shard", &shard, "--out", path(&out)])
                .spawn()
                .expect("a shard starts");
            (out, child)
        })
        .collect();
    children
        .into_iter()
        .map(|(out, child)| {
            let output = child.wait_with_output().expect("a shard ends");
            assert!(output.status.success(), "{}", support::said(&output));
            out
        })
        .collect()
}

fn values(record: &RunRecord) -> BTreeMap<String, Json> {
    record
        .cases
        .iter()
        .map(|c| (c.id.clone(), c.value.clone()))
        .collect()
}

/// The memo parameter `name` of a case, as its record describes it.
fn param(case: &nnbench::record::CaseRecord, name: &str) -> String {
    case.params[name].as_str().unwrap_or_default().to_owned()
}

fn shards_merged_give_the_unsharded_sweep_and_compute_each_model_once() {
    let dir = tempfile::tempdir().unwrap();
    let whole_path = dir.path().join("whole.json");
    let output = bench(&["scored/", "--out", path(&whole_path)])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", support::said(&output));
    let whole = RunRecord::read(&whole_path).unwrap();
    assert_eq!(whole.cases.len(), 24);
    for count in [1, 2, 3, 7] {
        let shards_dir = dir.path().join(format!("n{count}"));
        std::fs::create_dir_all(&shards_dir).unwrap();
        let files = run_shards(&shards_dir, "scored/", count);
        for (k, file) in files.iter().enumerate() {
            let record = RunRecord::read(file).unwrap();
            let shard = record.shard.as_ref().expect("a shard's record says so");
            assert_eq!((shard.index, shard.count, shard.cases), (k + 1, count, 24));
        }
        let merged_path = dir.path().join(format!("merged-{count}.json"));
        let merged = tool(&["merge", path(&shards_dir), "-o", path(&merged_path)]);
        assert!(merged.status.success(), "{}", support::said(&merged));
        let merged = RunRecord::read(&merged_path).unwrap();
        assert_eq!(values(&merged), values(&whole), "{count} shards");
        assert_eq!(merged.shards.len(), count);
        assert!(merged.shard.is_none());
        assert!(merged.cases.iter().all(|c| c.shard.is_some()));
        // Each model is computed in one shard only: the first case there
        // that uses it computes it, and no other case anywhere does.
        let mut computes: BTreeMap<String, u64> = BTreeMap::new();
        for case in &merged.cases {
            *computes.entry(param(case, "model")).or_default() += case.memo.computes;
        }
        assert_eq!(computes.len(), 6);
        assert!(
            computes.values().all(|&n| n == 1),
            "{count} shards: computes per model {computes:?}"
        );
        println!("  {count} shards: every model computed once, in one shard");
    }
}

fn the_seed_sweep_shape_loads_one_model_a_shard() {
    let dir = tempfile::tempdir().unwrap();
    let files = run_shards(dir.path(), "swept/", 3);
    let mut aware = Vec::new();
    for file in &files {
        let record = RunRecord::read(file).unwrap();
        let models: BTreeSet<String> = record.cases.iter().map(|c| param(c, "model")).collect();
        let datasets: BTreeSet<String> = record.cases.iter().map(|c| param(c, "data")).collect();
        let computes: u64 = record.cases.iter().map(|c| c.memo.computes).sum();
        assert_eq!(record.cases.len(), 8);
        assert_eq!(
            computes as usize,
            models.len() + datasets.len(),
            "each memo of the shard is computed once"
        );
        aware.push(models.len());
    }
    // What a naive split by position would do with the same cases.
    let listed = bench(&["swept/", "--list"]).output().unwrap();
    let ids: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(": benchmark").map(str::to_owned))
        .collect();
    assert_eq!(ids.len(), 24);
    let naive: Vec<usize> = (0..3)
        .map(|k| {
            ids.iter()
                .skip(k)
                .step_by(3)
                .map(|id| id.split("model=").nth(1).and_then(|r| r.split(',').next()))
                .collect::<BTreeSet<_>>()
                .len()
        })
        .collect();
    println!(
        "  3 models × 4 datasets × 2 batches in 3 shards: models loaded per shard {aware:?}, round-robin {naive:?}"
    );
    assert_eq!(aware, [1, 1, 1]);
    assert_eq!(naive, [3, 3, 3]);
}

fn list_shows_a_shards_cases_and_auto_reads_the_scheduler() {
    let list = |args: &[&str], env: &[(&str, &str)]| -> (Vec<String>, Output) {
        let mut command = bench(&["swept/", "--list"]);
        command.args(args);
        for (k, v) in env {
            command.env(k, v);
        }
        let output = command.output().unwrap();
        let ids = String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(str::to_owned)
            .collect();
        (ids, output)
    };
    let shards: Vec<Vec<String>> = (1..=3)
        .map(|k| list(&["--shard", &format!("{k}/3")], &[]).0)
        .collect();
    let all: BTreeSet<&String> = shards.iter().flatten().collect();
    assert_eq!(all.len(), 24, "the shards cover the sweep, without overlap");
    assert_eq!(shards.iter().map(Vec::len).sum::<usize>(), 24);
    let (_, output) = list(&["--shard", "2/3"], &[]);
    assert!(
        support::said(&output).contains("shard 2/3: 8 of 24 cases, 5 memo loads"),
        "{}",
        support::said(&output)
    );
    // A Slurm job array `--array=0-2`, task 1, is shard 2/3.
    let slurm = [
        ("SLURM_ARRAY_TASK_ID", "1"),
        ("SLURM_ARRAY_TASK_MIN", "0"),
        ("SLURM_ARRAY_TASK_MAX", "2"),
        ("SLURM_ARRAY_TASK_COUNT", "3"),
    ];
    assert_eq!(list(&["--shard", "auto"], &slurm).0, shards[1]);
    // With the count given, a Slurm task id is the shard number: task 2
    // rerun alone (`--array=2`) is still shard 2/3.
    let rerun = [
        ("SLURM_ARRAY_TASK_ID", "2"),
        ("SLURM_ARRAY_TASK_MIN", "2"),
        ("SLURM_ARRAY_TASK_MAX", "2"),
        ("SLURM_ARRAY_TASK_COUNT", "1"),
    ];
    assert_eq!(list(&["--shard", "auto/3"], &rerun).0, shards[1]);
    // A Kubernetes indexed Job of 3 completions, index 2, is shard 3/3.
    let kubernetes = [("JOB_COMPLETION_INDEX", "2")];
    assert_eq!(list(&["--shard", "auto/3"], &kubernetes).0, shards[2]);
    // A CI matrix passes its value through the environment.
    assert_eq!(list(&[], &[("NNBENCH_SHARD", "1/3")]).0, shards[0]);
    for (args, env, says) in [
        (&["--shard", "0/3"][..], &[][..], "count from 1"),
        (&["--shard", "auto"], &[], "SLURM_ARRAY_TASK_ID"),
        (&["--shard", "auto"], &kubernetes[..], "auto/N"),
        (
            &["--shard-costs", "x.json"],
            &[],
            "not provided:\n  --shard <K/N>",
        ),
    ] {
        let (_, output) = list(args, env);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            support::said(&output)
        );
        assert!(
            support::said(&output).contains(says),
            "{args:?}: {}",
            support::said(&output)
        );
    }
    let (_, output) = list(
        &["--shard", "1/3", "--shard-costs", "/no/such/costs.json"],
        &[],
    );
    assert_eq!(output.status.code(), Some(2));
    assert!(
        support::said(&output).contains("/no/such/costs.json"),
        "{}",
        support::said(&output)
    );
}

fn measured_costs_plan_the_shards_alike_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let costs = dir.path().join("costs.json");
    let output = bench(&["swept/", "--out", path(&costs)]).output().unwrap();
    assert!(output.status.success(), "{}", support::said(&output));
    let planned = |k: usize| {
        let out = dir.path().join(format!("planned-{k}.json"));
        let shard = format!("{k}/3");
        let output = bench(&[
            "swept/",
            "--shard",
            &shard,
            "--shard-costs",
            path(&costs),
            "--out",
            path(&out),
        ])
        .output()
        .unwrap();
        assert!(output.status.success(), "{}", support::said(&output));
        out
    };
    let files: Vec<PathBuf> = (1..=3).map(planned).collect();
    let record = RunRecord::read(&files[0]).unwrap();
    assert_eq!(record.shard.as_ref().unwrap().cost_unit, "ns");
    let merged = dir.path().join("merged.json");
    let paths: Vec<&str> = files.iter().map(|f| path(f)).collect();
    let output = tool(&[&["merge"], &paths[..], &["-o", path(&merged)]].concat());
    assert!(output.status.success(), "{}", support::said(&output));
    // A shard planned without the costs belongs to another plan.
    let unplanned = dir.path().join("unplanned-2.json");
    let output = bench(&["swept/", "--shard", "2/3", "--out", path(&unplanned)])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", support::said(&output));
    let output = tool(&[
        "merge",
        paths[0],
        path(&unplanned),
        paths[2],
        "-o",
        path(&merged),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        support::said(&output).contains("planned differently"),
        "{}",
        support::said(&output)
    );
}

fn merge_refuses_what_is_not_one_sweep_naming_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let files = run_shards(dir.path(), "swept/", 3);
    let [one, two, three] = [0, 1, 2].map(|i| path(&files[i]).to_owned());
    let out = dir.path().join("run.json");
    let out = path(&out);
    let refused = |args: &[&str], says: &[&str]| {
        let output = tool(&[&["merge"], args, &["-o", out]].concat());
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            support::said(&output)
        );
        for said in says {
            assert!(
                support::said(&output).contains(said),
                "{args:?}: {}",
                support::said(&output)
            );
        }
    };
    refused(&[&one, &three], &["1 of 3 shards is missing: 2", &one]);
    refused(&[&one, &two, &two, &three], &["shard 2/3 is in both", &two]);
    // Another commit.
    let mut other: RunRecord = RunRecord::read(&files[1]).unwrap();
    other.context.git = Some(nnbench::record::Git::new("0123456789abcdef", None, false));
    let other_commit = dir.path().join("other-commit.json");
    other.write(&other_commit).unwrap();
    refused(
        &[&one, path(&other_commit), &three],
        &["commits", "0123456789abcdef", path(&other_commit)],
    );
    // A case in two shards.
    let mut doubled = RunRecord::read(&files[1]).unwrap();
    doubled
        .cases
        .push(RunRecord::read(&files[0]).unwrap().cases[0].clone());
    let doubled_path = dir.path().join("doubled.json");
    doubled.write(&doubled_path).unwrap();
    refused(
        &[&one, path(&doubled_path), &three],
        &["is in both", path(&doubled_path)],
    );
    // Shards of another selection of cases.
    let narrower = dir.path().join("narrower.json");
    let output = bench(&[
        "swept/",
        "--skip",
        "batch=32",
        "--shard",
        "2/3",
        "--out",
        path(&narrower),
    ])
    .output()
    .unwrap();
    assert!(output.status.success(), "{}", support::said(&output));
    refused(&[&one, path(&narrower), &three], &["different case sets"]);
    // A whole sweep's record, and a damaged file.
    let whole = dir.path().join("whole.json");
    let output = bench(&["swept/", "--out", path(&whole)]).output().unwrap();
    assert!(output.status.success(), "{}", support::said(&output));
    refused(
        &[&one, path(&whole)],
        &["not a shard's record", path(&whole)],
    );
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"schema\": 1").unwrap();
    refused(&[&one, path(&broken)], &["not a run record", path(&broken)]);
    refused(&["/no/such/shard.json"], &["/no/such/shard.json"]);
    assert!(
        !Path::new(out).exists(),
        "nothing is written when the merge is refused"
    );
}

fn a_merged_record_keeps_each_shards_machine_for_history_and_compare() {
    let dir = tempfile::tempdir().unwrap();
    let files = run_shards(dir.path(), "swept/", 2);
    let mut records: Vec<(PathBuf, RunRecord)> = files
        .iter()
        .map(|f| (f.clone(), RunRecord::read(f).unwrap()))
        .collect();
    records[1].1.context.host.cpu = Some("Another CPU".into());
    let merged = nnbench_core::shard::merge(records).unwrap();
    let on_second = merged.cases.iter().find(|c| c.shard == Some(2)).unwrap();
    assert_eq!(
        merged.context_of(on_second).host.cpu.as_deref(),
        Some("Another CPU")
    );
    let mut history = nnbench_cli::history::History::in_memory().unwrap();
    let added = history.add(&merged, None).unwrap();
    assert_eq!(added.also.len(), 1, "one run per machine");
    assert_eq!(added.cases + added.also[0].cases, 24);
    assert_ne!(added.machine.key, added.also[0].machine.key);
    // Against an unsharded run, the second shard's cases ran on another CPU.
    let whole = dir.path().join("whole.json");
    let output = bench(&["swept/", "--out", path(&whole)]).output().unwrap();
    assert!(output.status.success(), "{}", support::said(&output));
    let comparison = nnbench_core::compare::compare(
        &RunRecord::read(&whole).unwrap(),
        &merged,
        &nnbench_core::compare::Limits::default(),
    );
    let says = comparison.differences.join("\n");
    assert!(
        says.contains("shard 2") && says.contains("Another CPU"),
        "{says}"
    );
}

fn the_slurm_scripts_run_an_array_and_merge_it() {
    // A submission as submit.sh leaves it: the bench (this binary) and the
    // tool copied in, and what the jobs read.
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let submission = results.join("20260101T000000Z");
    std::fs::create_dir_all(&submission).unwrap();
    std::fs::copy(std::env::current_exe().unwrap(), submission.join("bench")).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_nnbench"), submission.join("nnbench")).unwrap();
    std::fs::write(
        submission.join("submission.env"),
        "SHARDS=3\nFAIL_ON=''\nOPTIONS=()\nMERGE_OPTIONS=()\n",
    )
    .unwrap();
    let scripts = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join("examples/slurm");
    // What Slurm sets in each task of `sbatch --array=1-3`; the third
    // task reruns alone (`--array=3`), and is still shard 3.
    for (task, min, count) in [("1", "1", "3"), ("2", "1", "3"), ("3", "3", "1")] {
        let output = Command::new("bash")
            .arg(scripts.join("shard.sbatch"))
            .args([path(&submission), "3"])
            .env(support::BENCH_CHILD, "1")
            .env("CARGO_TARGET_DIR", dir.path().join("target"))
            .env("SLURM_ARRAY_JOB_ID", "4242")
            .env("SLURM_ARRAY_TASK_ID", task)
            .env("SLURM_ARRAY_TASK_MIN", min)
            .env("SLURM_ARRAY_TASK_COUNT", count)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "task {task}: {}",
            support::said(&output)
        );
        let shard = RunRecord::read(submission.join(format!("shard-{task}.json"))).unwrap();
        assert_eq!(shard.cases[0].shard, Some(task.parse().unwrap()));
    }
    let output = Command::new("bash")
        .arg(scripts.join("merge.sbatch"))
        .args([path(&submission), "3"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", support::said(&output));
    let merged = RunRecord::read(submission.join("run.json")).unwrap();
    assert_eq!(merged.shards.len(), 3);
    assert_eq!(merged.cases.len(), 48, "every case of this bench");
    assert_eq!(merged.failed(), 0);
    assert!(submission.join("comparison.md").is_file());
    assert!(results.join("last.json").is_file(), "the next baseline");
    // A shard's record gone: the merge says which, and how to rerun it.
    std::fs::remove_file(submission.join("shard-2.json")).unwrap();
    let output = Command::new("bash")
        .arg(scripts.join("merge.sbatch"))
        .args([path(&submission), "3"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let said = support::said(&output);
    assert!(said.contains("1 of 3 shards left no record: 2"), "{said}");
    assert!(said.contains("submit.sh --rerun"), "{said}");
}

/// examples/kubernetes' pod scripts, run here as the Jobs run them: each
/// pod of the shards Job side by side, with the variables the controller
/// and the run's ConfigMap give it, then the merge's pod.
struct KubernetesRun {
    results: PathBuf,
    run: &'static str,
}

impl KubernetesRun {
    fn script(name: &str) -> PathBuf {
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .join("examples/kubernetes")
            .join(name)
    }

    fn folder(&self) -> PathBuf {
        self.results.join(self.run)
    }

    fn command(&self, script: &str) -> Command {
        let mut command = Command::new("sh");
        command
            .arg(Self::script(script))
            .env("RESULTS", &self.results)
            .env("RUN", self.run)
            .env("SHARDS", "3")
            .env("BENCH", std::env::current_exe().unwrap())
            .env("NNBENCH", env!("CARGO_BIN_EXE_nnbench"))
            .env("FAIL_ON", "time=off,load=off,rss=off,heap=off")
            .env(support::BENCH_CHILD, "1")
            .env("CARGO_TARGET_DIR", self.results.join("target"))
            .env_remove("NNBENCH_SHARD")
            .env_remove("SLURM_ARRAY_TASK_ID")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// The shards Job's three pods, side by side; `failing` names the
    /// index whose cases fail. Their outputs, by index.
    fn shards(&self, failing: Option<&str>) -> Vec<Output> {
        let pods: Vec<std::process::Child> = (0..3)
            .map(|index| {
                let mut pod = self.command("shard.sh");
                pod.env("JOB_COMPLETION_INDEX", index.to_string());
                match failing {
                    Some(index) => pod.env(FAIL_POD, index),
                    None => pod.env_remove(FAIL_POD),
                };
                pod.spawn().expect("a pod starts")
            })
            .collect();
        pods.into_iter()
            .map(|pod| pod.wait_with_output().expect("a pod ends"))
            .collect()
    }

    fn merge(&self) -> Output {
        self.command("merge.sh").output().expect("the merge runs")
    }
}

fn the_kubernetes_pods_run_shards_rerun_a_failed_one_and_gate() {
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let last = results.join("last.json");
    let first = KubernetesRun {
        results: results.clone(),
        run: "20260101t000000z",
    };
    for (index, pod) in first.shards(None).iter().enumerate() {
        assert!(pod.status.success(), "pod {index}: {}", support::said(pod));
    }
    let merge = first.merge();
    assert!(merge.status.success(), "{}", support::said(&merge));
    let merged = RunRecord::read(first.folder().join("run.json")).unwrap();
    assert_eq!(merged.shards.len(), 3);
    assert_eq!(merged.cases.len(), 48, "every case of this bench");
    assert!(String::from_utf8_lossy(&merge.stdout).contains("48 cases"));
    assert_eq!(
        std::fs::read(&last).unwrap(),
        std::fs::read(first.folder().join("run.json")).unwrap(),
        "a run that passed is the next baseline"
    );

    // The second run's pod 1 (shard 2) fails a case: its index fails, the
    // others pass, and the merge fails, naming the shard and the rerun.
    let second = KubernetesRun {
        results: results.clone(),
        run: "20260102t000000z",
    };
    let pods = second.shards(Some("1"));
    assert_eq!(
        pods[1].status.code(),
        Some(1),
        "{}",
        support::said(&pods[1])
    );
    assert!(pods[0].status.success() && pods[2].status.success());
    // Every pod planned by the same costs: the baseline the first of them
    // named, a copy of last.json.
    let named = std::fs::read_link(second.folder().join("baseline")).unwrap();
    assert_eq!(
        std::fs::read(second.folder().join(&named)).unwrap(),
        std::fs::read(&last).unwrap()
    );
    let copies = std::fs::read_dir(second.folder())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".baseline-")
        })
        .count();
    assert_eq!(
        copies, 1,
        "the pods that lost the race removed their copies"
    );
    let merge = second.merge();
    assert_eq!(merge.status.code(), Some(1), "{}", support::said(&merge));
    let said = support::said(&merge);
    assert!(said.contains("shards 2 had a failed case"), "{said}");
    assert!(
        said.contains("submit.sh --rerun 20260102t000000z"),
        "{said}"
    );
    assert_eq!(
        std::fs::read(&last).unwrap(),
        std::fs::read(first.folder().join("run.json")).unwrap(),
        "a run with a failed case is no baseline"
    );

    // The rerun: every index starts again, the shards that passed end at
    // once, shard 2 runs again, and the merge passes.
    let pods = second.shards(None);
    for (index, pod) in pods.iter().enumerate() {
        assert!(pod.status.success(), "pod {index}: {}", support::said(pod));
    }
    for index in [0, 2] {
        let said = support::said(&pods[index]);
        assert!(said.contains("passed in an earlier attempt"), "{said}");
    }
    assert!(!support::said(&pods[1]).contains("earlier attempt"));
    let merge = second.merge();
    assert!(merge.status.success(), "{}", support::said(&merge));
    let rerun_merged = RunRecord::read(second.folder().join("run.json")).unwrap();
    assert_eq!(values(&rerun_merged), values(&merged));
    assert_eq!(rerun_merged.failed(), 0);

    // A baseline whose every score is doubled: the third run's scores
    // regressed, its merge fails with the comparison, and the baseline
    // stays; with no failed shard, no rerun is offered.
    let mut baseline: Json = serde_json::from_slice(&std::fs::read(&last).unwrap()).unwrap();
    for case in baseline["cases"].as_array_mut().unwrap() {
        if case["family"] != "scored" {
            continue;
        }
        let doubled = case["value"].as_f64().unwrap() * 2.0;
        case["value"] = serde_json::json!(doubled);
    }
    std::fs::write(&last, baseline.to_string()).unwrap();
    let third = KubernetesRun {
        results: results.clone(),
        run: "20260103t000000z",
    };
    assert!(third.shards(None).iter().all(|pod| pod.status.success()));
    let merge = third.merge();
    assert_eq!(merge.status.code(), Some(1), "{}", support::said(&merge));
    let said = support::said(&merge);
    assert!(said.contains("❌"), "{said}");
    assert!(!said.contains("--rerun"), "{said}");
    assert_eq!(
        std::fs::read(&last).unwrap(),
        baseline.to_string().as_bytes()
    );

    // A shard that cannot write its record (a folder is where it goes)
    // leaves none: the merge names it and the rerun.
    let fourth = KubernetesRun {
        results,
        run: "20260104t000000z",
    };
    std::fs::create_dir_all(fourth.folder().join("shard-3.json")).unwrap();
    let pods = fourth.shards(None);
    assert_eq!(
        pods[2].status.code(),
        Some(1),
        "{}",
        support::said(&pods[2])
    );
    let merge = fourth.merge();
    assert_eq!(merge.status.code(), Some(1));
    let said = support::said(&merge);
    assert!(said.contains("1 of 3 shards left no record: 3"), "{said}");
    assert!(
        said.contains("submit.sh --rerun 20260104t000000z"),
        "{said}"
    );
}

fn main() {
    support::main(
        "shard",
        support::checks![
            shards_merged_give_the_unsharded_sweep_and_compute_each_model_once,
            the_seed_sweep_shape_loads_one_model_a_shard,
            list_shows_a_shards_cases_and_auto_reads_the_scheduler,
            measured_costs_plan_the_shards_alike_everywhere,
            merge_refuses_what_is_not_one_sweep_naming_the_files,
            a_merged_record_keeps_each_shards_machine_for_history_and_compare,
            the_slurm_scripts_run_an_array_and_merge_it,
            the_kubernetes_pods_run_shards_rerun_a_failed_one_and_gate,
        ],
    );
}
