//! The CI example, `examples/ci/nnbench.yml`, run as GitHub Actions runs
//! its pull request job: its `run:` steps in order, with the workflow's
//! and the job's environment, `GITHUB_ENV` and `GITHUB_STEP_SUMMARY`, each
//! step's `if:` and `continue-on-error`, in a scratch git repository whose
//! crate depends on this nnbench and has a base commit and a head commit.
//! The `uses:` steps are the runner's (checkout, toolchain, caches, which
//! start empty here) and the tool's install step fetches the release: the
//! tool on `PATH` is this workspace's build instead.
//!
//! The gate must pass when the head changes nothing that runs, and fail
//! when it plants a regression of time (in the case tagged `gate`), of
//! accuracy, and of fixture memory, each named where a user looks.

mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use nnbench::RunRecord;
use nnbench::record::Verdict;
use yaml_rust2::{Yaml, YamlLoader};

fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The scratch crate's bench, with the figures a commit sets.
fn bench_source(steps: u64, accuracy: &str, words: &str, comment: &str) -> String {
    format!(
        r#"//! A model sweep, as a user's crate gates it. {comment}
use nnbench::Memo;

/// A model: weights built in memory.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Model(u64);

impl Memo for Model {{
    type Value = Vec<u64>;
    fn compute(&self) -> nnbench::Result<Vec<u64>> {{
        let words: u64 = {words};
        Ok((0..words).map(|i| i.wrapping_mul(self.0 | 1)).collect())
    }}
    fn size_of(&self, weights: &Vec<u64>) -> Option<u64> {{
        Some(8 * weights.len() as u64)
    }}
}}

/// The call whose time the pull request's gate pairs.
#[nnbench::product(model = [Model(1)], tags = ["gate"])]
fn latency(model: &[u64]) -> u64 {{
    // In a register, not through black_box at each step: a value stored
    // and loaded back at each step runs at a speed that flips on some CPUs.
    let model = std::hint::black_box(&model[..4096]);
    (0..{steps}u64).fold(0u64, |acc, i| {{
        acc.rotate_left(5) ^ model[(i & 4095) as usize]
    }})
}}

/// What the model scores.
#[nnbench::product(model = [Model(1)], metric = higher)]
fn accuracy(model: &[u64]) -> f64 {{
    std::hint::black_box(model.len());
    {accuracy}
}}

nnbench::main!();
"#
    )
}

/// The scratch repository, its crate at the base commit on `main`: a
/// model of 32 MiB, an accuracy of 0.91, a call of 200k steps. Its
/// `target` is kept between runs of this test, as rust-cache keeps it.
fn repository() -> (PathBuf, String) {
    let repo = Path::new(env!("CARGO_TARGET_TMPDIR")).join("workflow");
    std::fs::create_dir_all(&repo).unwrap();
    for entry in std::fs::read_dir(&repo).unwrap().flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n != "target") {
            let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
        }
    }
    let toml = format!(
        "[package]\nname = \"user-gate\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [dev-dependencies]\nnnbench = {{ path = {:?} }}\n\n\
         [lib]\nbench = false\n\n[[bench]]\nname = \"sweep\"\nharness = false\n\n\
         [profile.release.package.user-gate]\nopt-level = 1\n",
        workspace()
    );
    std::fs::write(repo.join("Cargo.toml"), toml).unwrap();
    std::fs::copy(workspace().join("Cargo.lock"), repo.join("Cargo.lock")).unwrap();
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/lib.rs"), "//! A crate with a model.\n").unwrap();
    std::fs::create_dir_all(repo.join("benches")).unwrap();
    write_bench(&repo, &bench_source(200_000, "0.91", "4 << 20", ""));
    std::fs::write(repo.join(".gitignore"), "/target\n/.nnbench\n/*.md\n").unwrap();
    support::git(&repo, &["init", "--quiet", "--initial-branch", "main"]);
    support::git(&repo, &["add", "-A"]);
    support::git(&repo, &["commit", "--quiet", "-m", "base"]);
    let base = support::git(&repo, &["rev-parse", "HEAD"]);
    (repo, base)
}

fn write_bench(repo: &Path, source: &str) {
    std::fs::write(repo.join("benches/sweep.rs"), source).unwrap();
}

/// A pull request's head: a branch from `base` whose bench is `source`.
fn head(repo: &Path, base: &str, branch: &str, source: &str) -> String {
    support::git(repo, &["checkout", "--quiet", "-B", branch, base]);
    write_bench(repo, source);
    support::git(repo, &["commit", "--quiet", "-am", branch]);
    support::git(repo, &["rev-parse", "HEAD"])
}

/// What a job's run left.
struct Ran {
    /// Each step with an `id`: whether it succeeded.
    outcomes: HashMap<String, bool>,
    /// Whether the job failed.
    failed: bool,
    /// `GITHUB_STEP_SUMMARY`.
    summary: String,
    /// What every step printed, for messages.
    log: String,
}

/// The value of `${{ expression }}` in a pull request's event: the SHAs.
fn expression(expression: &str, base: &str, head: &str) -> String {
    match expression.trim() {
        "github.event.pull_request.base.sha" => base.to_owned(),
        "github.event.pull_request.head.sha" => head.to_owned(),
        other => panic!("the test knows no value for the expression `{other}`"),
    }
}

/// `text` with each `${{ ... }}` replaced by its value.
fn expand(text: &str, base: &str, head: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(from) = rest.find("${{") {
        out.push_str(&rest[..from]);
        let to = rest[from..]
            .find("}}")
            .map(|t| from + t)
            .expect("an expression is closed");
        out.push_str(&expression(&rest[from + 3..to], base, head));
        rest = &rest[to + 2..];
    }
    out.push_str(rest);
    out
}

/// Whether a step with `condition` runs: `always()`, or a disjunction of
/// `steps.ID.outcome == 'failure'`, which (as any condition without a
/// status function) also needs the job not to have failed yet.
fn runs(condition: Option<&str>, outcomes: &HashMap<String, bool>, failed: bool) -> bool {
    let Some(condition) = condition else {
        return !failed;
    };
    if condition.trim() == "always()" {
        return true;
    }
    !failed
        && condition.split("||").any(|term| {
            let id = term
                .trim()
                .strip_prefix("steps.")
                .and_then(|t| t.strip_suffix(".outcome == 'failure'"))
                .unwrap_or_else(|| panic!("the test cannot evaluate `if: {condition}`"));
            outcomes.get(id) == Some(&false)
        })
}

/// The variables of an `env:` map.
fn variables(env: &Yaml, base: &str, head: &str) -> Vec<(String, String)> {
    env.as_hash()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let value = match v {
                Yaml::String(s) => s.clone(),
                Yaml::Integer(i) => i.to_string(),
                other => panic!("an env value the test cannot read: {other:?}"),
            };
            (
                k.as_str().expect("a variable's name").to_owned(),
                expand(&value, base, head),
            )
        })
        .collect()
}

/// Runs job `job` of the workflow in `repo`, checked out at `head`, for a
/// pull request from `base`.
fn run_job(job: &str, repo: &Path, base: &str, head: &str) -> Ran {
    let path = workspace().join("examples/ci/nnbench.yml");
    let docs = YamlLoader::load_from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let workflow = &docs[0];
    let body = &workflow["jobs"][job];
    assert!(!body.is_badvalue(), "the workflow has no job {job}");
    let mut env = variables(&workflow["env"], base, head);
    env.extend(variables(&body["env"], base, head));
    let files = tempfile::tempdir().unwrap();
    let github_env = files.path().join("github_env");
    let summary = files.path().join("summary");
    std::fs::write(&github_env, "").unwrap();
    std::fs::write(&summary, "").unwrap();
    let tool = PathBuf::from(env!("CARGO_BIN_EXE_nnbench"));
    let path = format!(
        "{}:{}",
        tool.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut ran = Ran {
        outcomes: HashMap::new(),
        failed: false,
        summary: String::new(),
        log: String::new(),
    };
    for step in body["steps"].as_vec().expect("the job's steps") {
        let Some(script) = step["run"].as_str() else {
            continue;
        };
        let name = step["name"].as_str().unwrap_or("a step");
        if script.trim_start().starts_with("cargo install") {
            // The release from crates.io: this workspace's tool stands in.
            continue;
        }
        if !runs(step["if"].as_str(), &ran.outcomes, ran.failed) {
            continue;
        }
        // What earlier steps wrote to GITHUB_ENV, as the runner reads it.
        let set: Vec<(String, String)> = std::fs::read_to_string(&github_env)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let output = Command::new("bash")
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c"])
            .arg(expand(script, base, head))
            .current_dir(repo)
            .env_remove("CARGO_TARGET_DIR")
            .env("PATH", &path)
            .env("CI", "true")
            .env("GITHUB_ACTIONS", "true")
            .env("GITHUB_WORKSPACE", repo)
            .env("GITHUB_ENV", &github_env)
            .env("GITHUB_STEP_SUMMARY", &summary)
            // Two cold release builds (the head's, and build-base's of the
            // base) are most of this test's time; what it checks does not
            // depend on how hard the compiler optimizes the dependencies.
            // The crate's own work stays optimized (its manifest says so).
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
            .envs(env.iter().cloned())
            .envs(set)
            .output()
            .unwrap();
        let ok = output.status.success();
        ran.log.push_str(&format!(
            "--- {name}: {}\n{}",
            output.status,
            support::said(&output)
        ));
        if let Some(id) = step["id"].as_str() {
            ran.outcomes.insert(id.to_owned(), ok);
        }
        if !ok && step["continue-on-error"].as_bool() != Some(true) {
            ran.failed = true;
        }
    }
    ran.summary = std::fs::read_to_string(&summary).unwrap();
    ran
}

fn paired_record(repo: &Path) -> RunRecord {
    RunRecord::read(repo.join(".nnbench/runs/paired.json")).expect("the paired run's record")
}

#[test]
fn the_ci_example_gates_a_pull_request() {
    if !support::end_to_end("the_ci_example_gates_a_pull_request") {
        return;
    }
    let (repo, base) = repository();

    // A head that changes nothing that runs passes.
    let same = head(
        &repo,
        &base,
        "same",
        &bench_source(200_000, "0.91", "4 << 20", "Reworded."),
    );
    let mut ran = None;
    support::without_repeated_false_alarm("the gate on a head that changes nothing", || {
        let _ = std::fs::remove_dir_all(repo.join(".nnbench"));
        let job = run_job("gate", &repo, &base, &same);
        let log = &job.log;
        assert_eq!(job.outcomes.get("values"), Some(&true), "{log}");
        support::paired_false_alarm(&paired_record(&repo))
            .map_err(|wrong| format!("{wrong}\n{log}"))?;
        assert_eq!(job.outcomes.get("time"), Some(&true), "{log}");
        assert!(!job.failed, "{log}");
        ran = Some(job);
        Ok(())
    });
    let ran = ran.expect("the gate ran");
    let paired = paired_record(&repo);
    assert!(
        ran.summary.contains("## Accuracy and memory") && ran.summary.contains("## Time, paired"),
        "{}",
        ran.summary
    );
    assert_eq!(
        paired
            .cases
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>(),
        ["latency/model=Model(1)"],
        "only the case tagged `gate` is paired"
    );

    // A head 30% slower in the gated call, less accurate, and holding its
    // model at twice the size fails, each regression named.
    std::fs::remove_dir_all(repo.join(".nnbench")).unwrap();
    let worse = head(
        &repo,
        &base,
        "worse",
        &bench_source(260_000, "0.87", "8 << 20", ""),
    );
    let ran = run_job("gate", &repo, &base, &worse);
    let log = &ran.log;
    assert!(ran.failed, "the gate fails: {log}");
    assert_eq!(ran.outcomes.get("values"), Some(&false), "{log}");
    assert_eq!(ran.outcomes.get("time"), Some(&false), "{log}");
    let values = std::fs::read_to_string(repo.join("values.md")).unwrap();
    for named in ["accuracy/model=Model(1)", "Model(1)", "memo"] {
        assert!(values.contains(named), "{named} in {values}");
    }
    let paired = paired_record(&repo);
    let latency = paired.cases[0].paired.as_ref().expect("paired");
    assert_eq!(latency.verdict, Verdict::Regressed, "{latency:?}");
    assert!(
        ran.summary.contains(&worse[..7]),
        "bisect names the head's commit: {}",
        ran.summary
    );
}
