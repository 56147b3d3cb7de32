//! The example Kubernetes manifests and GitHub Actions workflows, checked
//! against their published schemas by the validators `scripts/schemas.sh`
//! installs from PyPI (`kubernetes-validate --strict`, `check-jsonschema`
//! with GitHub's workflow schema). Skips without them, unless
//! `NNBENCH_REQUIRE_SCHEMAS` says they must be there (as in CI).

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
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| endings.iter().any(|e| path.to_string_lossy().ends_with(e)))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no examples in {}", dir.display());
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

#[test]
fn kubernetes_manifests_match_the_kubernetes_schemas() {
    let Some(tool) = validator("NNBENCH_KUBERNETES_VALIDATE") else {
        return;
    };
    validate(&tool, &["--strict"], &examples("kubernetes", &[".yaml"]));
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
