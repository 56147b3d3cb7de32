//! `nnbench build-base REV --bench B`, on a repository of its own: a
//! crate whose bench prints which revision it was built from, so that the
//! executable the tool prints can be told apart by running it.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use support::git;

/// A repository with one crate, its bench printing `says`, committed.
fn repository(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("benches")).unwrap();
    std::fs::write(
        repo.join("Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
         [[bench]]\nname = \"speed\"\nharness = false\n",
    )
    .unwrap();
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/lib.rs"), "").unwrap();
    std::fs::write(repo.join(".gitignore"), "/target\n").unwrap();
    git(&repo, &["init", "--quiet"]);
    commit(&repo, "first");
    repo
}

fn commit(repo: &Path, says: &str) {
    std::fs::write(
        repo.join("benches/speed.rs"),
        format!("fn main() {{ println!(\"{says}\"); }}\n"),
    )
    .unwrap();
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "--quiet", "-m", says]);
}

fn build_base(repo: &Path, args: &[&str]) -> Output {
    command(repo, args).output().expect("nnbench runs")
}

fn command(repo: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_nnbench"));
    command
        .arg("build-base")
        .args(args)
        .current_dir(repo)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS");
    command
}

fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Runs what build-base printed; what it says.
fn run_built(output: &Output) -> String {
    assert_eq!(output.status.code(), Some(0), "{}", said(output));
    let path = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let ran = Command::new(&path).output().expect("the base runs");
    String::from_utf8_lossy(&ran.stdout).trim().to_owned()
}

#[test]
fn a_revisions_bench_is_built_beside_the_workspace_and_printed() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(dir.path());
    commit(&repo, "second");
    let first = build_base(&repo, &["HEAD~1", "--bench", "speed"]);
    assert_eq!(run_built(&first), "first");
    let path = String::from_utf8_lossy(&first.stdout).trim().to_owned();
    assert!(
        Path::new(&path).starts_with(repo.join("target/nnbench/base")),
        "{path}"
    );
    // The same worktree, checked out anew: the second base is its own file.
    let second = build_base(&repo, &["HEAD", "--bench", "speed"]);
    assert_eq!(run_built(&second), "second");
    assert_eq!(Command::new(&path).output().unwrap().stdout, b"first\n");
    // The repository's own checkout and target folder are left alone.
    assert!(!repo.join("target/release").exists());
    let status = Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(status.stdout.is_empty(), "{status:?}");
}

#[test]
fn what_cannot_be_built_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(dir.path());
    let unknown = build_base(&repo, &["no-such-branch", "--bench", "speed"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        said(&unknown).contains("`no-such-branch` is not a revision of this repository"),
        "{}",
        said(&unknown)
    );
    let no_bench = build_base(&repo, &["HEAD", "--bench", "sweep"]);
    assert_eq!(no_bench.status.code(), Some(2));
    assert!(
        said(&no_bench).contains("did not build bench `sweep`"),
        "{}",
        said(&no_bench)
    );
    let outside = dir.path().join("elsewhere");
    std::fs::create_dir(&outside).unwrap();
    let not_repo = build_base(&outside, &["HEAD", "--bench", "speed"]);
    assert_eq!(not_repo.status.code(), Some(2));
    assert!(
        said(&not_repo).contains("not in a git repository"),
        "{}",
        said(&not_repo)
    );
}

#[test]
fn a_revision_without_the_bench_gets_a_file_that_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(dir.path());
    // The change under review adds a second bench.
    let manifest = std::fs::read_to_string(repo.join("Cargo.toml")).unwrap();
    std::fs::write(
        repo.join("Cargo.toml"),
        format!("{manifest}\n[[bench]]\nname = \"added\"\nharness = false\n"),
    )
    .unwrap();
    std::fs::write(repo.join("benches/added.rs"), "fn main() {}\n").unwrap();
    let output = build_base(&repo, &["HEAD", "--bench", "added"]);
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    assert!(
        said(&output).contains("has no bench `added`, which this checkout adds"),
        "{}",
        said(&output)
    );
    let path = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    let says = std::fs::read_to_string(&path).unwrap();
    assert!(says.starts_with("nnbench: no base build\n"), "{says}");
    assert!(says.contains("has no bench `added`"), "{says}");
    // A bench that neither has stays an error.
    let neither = build_base(&repo, &["HEAD", "--bench", "nowhere"]);
    assert_eq!(neither.status.code(), Some(2), "{}", said(&neither));
}

#[test]
fn two_at_once_on_one_repository_each_build_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(dir.path());
    commit(&repo, "second");
    // Both start before either ends: they share one worktree and one
    // target folder, which one holds while the other waits.
    let spawn = |revision: &str| {
        command(&repo, &[revision, "--bench", "speed"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("nnbench runs")
    };
    let (first, second) = (spawn("HEAD~1"), spawn("HEAD"));
    let (first, second) = (
        first.wait_with_output().unwrap(),
        second.wait_with_output().unwrap(),
    );
    assert_eq!(run_built(&first), "first");
    assert_eq!(run_built(&second), "second");
    // Nothing written aside is left to be taken for a build.
    let left: Vec<_> = std::fs::read_dir(repo.join("target/nnbench/base"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".partial-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_build_with_other_flags_is_another_base() {
    let dir = tempfile::tempdir().unwrap();
    let repo = repository(dir.path());
    let plain = build_base(&repo, &["HEAD", "--bench", "speed"]);
    let flagged = command(&repo, &["HEAD", "--bench", "speed"])
        .env("RUSTFLAGS", "-C debug-assertions=on")
        .output()
        .expect("nnbench runs");
    assert_eq!(run_built(&plain), "first");
    assert_eq!(run_built(&flagged), "first");
    assert_ne!(plain.stdout, flagged.stdout, "one name for two builds");
}
