//! `nnbench bisect` on a history of a crate of its own, generated here: 16
//! commits, where commit 4 does not build, commit 5 fixes it, and commit 9
//! makes one case 5% slower. Every commit's bench is built once (into a
//! target folder kept between runs of this test, so that its dependencies
//! build once) and judged by paired runs.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Mutex, PoisonError};

use serde_json::Value as Json;

use support::git;

/// The crate's work: `slow_part` does 5% more of it from commit 9 on, and
/// commit 4 does not compile.
fn library(commit: usize) -> String {
    let slow = if commit >= 9 { 105 } else { 100 };
    let broken = if commit == 4 { "let" } else { "" };
    format!(
        "//! Commit {commit}.\n\n\
         pub const STEADY: u64 = 100;\n\
         pub const SLOW: u64 = {slow}; {broken}\n\n\
         /// Arithmetic in proportion to `units`: a chain of divisions,\n\
         /// whose latency bounds it wherever the linker puts the loop.\n\
         pub fn spin(units: u64) -> u64 {{\n\
         \x20   let (mut acc, mut i, by) = (u64::MAX, 0u64, std::hint::black_box(3u64));\n\
         \x20   while i < units * 500 {{\n\
         \x20       acc = std::hint::black_box((acc / by).wrapping_add(i) | 1 << 62);\n\
         \x20       i += 1;\n\
         \x20   }}\n\
         \x20   acc\n\
         }}\n"
    )
}

const BENCH: &str = "\
#[nnbench::benchmark]
fn steady() -> u64 {
    bisected::spin(bisected::STEADY)
}

#[nnbench::benchmark]
fn slow_part() -> u64 {
    bisected::spin(bisected::SLOW)
}

nnbench::main!();
";

/// A new repository of the crate at `dir/bisected`, with no commit yet.
fn scaffold(dir: &Path) -> PathBuf {
    let repo = dir.join("bisected");
    std::fs::create_dir_all(repo.join("benches")).unwrap();
    std::fs::create_dir_all(repo.join("src")).unwrap();
    let nnbench = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    std::fs::write(
        repo.join("Cargo.toml"),
        format!(
            "[package]\nname = \"bisected\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             # A workspace of its own, wherever its checkouts lie.\n[workspace]\n\n\
             [dev-dependencies]\nnnbench = {{ path = {nnbench:?}, features = [\"profile\"] }}\n\n\
             [[bench]]\nname = \"speed\"\nharness = false\n\n\
             # Built quickly: the commits are told apart by their work, not by the compiler.\n\
             [profile.bench]\nopt-level = 0\ndebug = false\nincremental = false\n\n\
             # The work itself optimized, so that its step is the commits' alone.\n\
             [profile.bench.package.bisected]\nopt-level = 1\n"
        ),
    )
    .unwrap();
    std::fs::write(repo.join("benches/speed.rs"), BENCH).unwrap();
    std::fs::write(repo.join(".gitignore"), "/target\n").unwrap();
    git(&repo, &["init", "--quiet", "--initial-branch", "main"]);
    repo
}

/// Writes `file` with `text`, commits it with `subject`: the commit.
fn commit(repo: &Path, file: &str, text: &str, subject: &str) -> String {
    std::fs::write(repo.join(file), text).unwrap();
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "--quiet", "-m", subject]);
    git(repo, &["rev-parse", "HEAD"])
}

/// The repository: commits 0 to 15 on `main`, and `side`, a branch off
/// commit 3.
fn repository(dir: &Path) -> (PathBuf, Vec<String>) {
    let repo = scaffold(dir);
    let mut commits = Vec::new();
    for n in 0..16 {
        let subject = match n {
            4 => "commit 4: breaks the build".to_owned(),
            5 => "commit 5: fixes the build".to_owned(),
            9 => "commit 9: slow_part does 5% more".to_owned(),
            n => format!("commit {n}"),
        };
        commits.push(commit(&repo, "src/lib.rs", &library(n), &subject));
    }
    git(&repo, &["checkout", "--quiet", "-b", "side", &commits[3]]);
    commit(&repo, "src/side.rs", "", "side");
    git(&repo, &["checkout", "--quiet", "main"]);
    (repo, commits)
}

/// The tests share where the benches are built, and its checkout.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Where the commits' benches are built: kept between runs of the test,
/// without the executables of earlier runs.
fn target() -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bisect-target");
    let bases = target.join("nnbench/base");
    for entry in std::fs::read_dir(&bases).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with("speed-") {
            std::fs::remove_file(entry.path()).unwrap();
        }
    }
    target
}

fn bisect(repo: &Path, target: &Path, good: &str, bad: &str) -> Output {
    support::tool()
        .args([
            "bisect",
            good,
            bad,
            "--bench",
            "speed",
            "--fail-on",
            "time=2%",
        ])
        .args(["--max-rounds", "40", "--format", "json"])
        .current_dir(repo)
        .env("CARGO_TARGET_DIR", target)
        .output()
        .expect("nnbench runs")
}

fn json(output: &Output) -> Json {
    assert_eq!(output.status.code(), Some(0), "{}", support::said(output));
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", support::said(output)))
}

#[test]
fn bisect_names_the_commit_that_made_a_case_slower() {
    if !support::end_to_end("bisect_names_the_commit_that_made_a_case_slower") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let (repo, commits) = repository(dir.path());
    let target = target();

    // The user's own last run and a run's progress that --resume would
    // continue, which bisect's runs must leave as they are.
    let own = target.join("nnbench/speed");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(own.join("latest.json"), "the user's run").unwrap();
    std::fs::write(own.join("progress.ndjson"), "the user's progress").unwrap();

    let found = json(&bisect(&repo, &target, &commits[0], &commits[15]));
    assert_eq!(
        std::fs::read_to_string(own.join("latest.json")).unwrap(),
        "the user's run"
    );
    assert_eq!(
        std::fs::read_to_string(own.join("progress.ndjson")).unwrap(),
        "the user's progress"
    );
    let first = &found["first_regressed"];
    assert_eq!(first["commit"], commits[9].as_str(), "{found:#}");
    assert_eq!(first["subject"], "commit 9: slow_part does 5% more");
    assert_eq!(
        first["cases"],
        serde_json::json!(["slow_part"]),
        "{found:#}"
    );
    assert_eq!(first["confirmed"], true);
    // The slowdown is 5%: its 99% interval reaches it (within the
    // rounds' spread on a busy machine) and lies above 1.
    let shift = &first["shifts"][0];
    let [low, high] = [0, 1].map(|i| shift["interval"][i].as_f64().unwrap());
    assert!(
        1.0 < low && low <= 1.07 && 1.03 <= high && shift["estimate"].as_f64() > Some(1.0),
        "{shift}"
    );
    assert_eq!(found["last_good"], commits[8].as_str());
    // The boundary's differential flamegraph: commit 9 against commit 8.
    let profile = first["profiles"][0]
        .as_str()
        .unwrap_or_else(|| panic!("{found:#}"));
    assert!(
        profile.ends_with("speed/bisect/profiles/diff/slow_part.svg"),
        "{profile}"
    );
    let svg = std::fs::read_to_string(profile).unwrap();
    assert!(svg.contains("grew most: "), "{svg}");
    let builds = found["builds"].as_u64().unwrap();
    assert!(builds <= 8, "{builds} builds: {found:#}");
    let steps = found["steps"].as_array().unwrap();
    assert!(
        steps
            .iter()
            .any(|s| s["confirmation"] == true && s["commit"] == commits[8].as_str())
    );
    // Commit 4 lies outside the halves this search visits.
    assert!(found["skipped"].as_array().unwrap().is_empty(), "{found:#}");

    // Below commit 9 nothing regressed: nothing is found.
    let none = json(&bisect(&repo, &target, &commits[0], &commits[8]));
    assert_eq!(none["first_regressed"], Json::Null, "{none:#}");
    assert_eq!(none["steps"].as_array().unwrap().len(), 1);

    // Over 0..9 the middle is the commit that does not build: it is
    // skipped and named, and its neighbour judged instead.
    let skipping = json(&bisect(&repo, &target, &commits[0], &commits[9]));
    assert_eq!(
        skipping["first_regressed"]["commit"],
        commits[9].as_str(),
        "{skipping:#}"
    );
    assert_eq!(skipping["skipped"], serde_json::json!([commits[4]]));
    let why = skipping["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["commit"] == commits[4].as_str())
        .map(|s| s["why"].as_str().unwrap().to_owned())
        .unwrap();
    assert!(why.contains("did not build bench `speed`"), "{why}");

    // The text names the commit and the case, the markdown too.
    let text = support::tool()
        .args(["bisect", &commits[7], &commits[10], "--bench", "speed"])
        .args([
            "--fail-on",
            "time=2%",
            "--max-rounds",
            "30",
            "--case",
            "slow",
        ])
        .current_dir(&repo)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    let said = support::said(&text);
    assert_eq!(text.status.code(), Some(0), "{said}");
    assert!(
        said.contains(&format!("first regressed: {}", &commits[9][..12])),
        "{said}"
    );
    assert!(said.contains("slow_part +"), "{said}");
    assert!(
        !said.contains("steady"),
        "--case slow leaves steady out: {said}"
    );
}

#[test]
fn bad_input_is_refused_and_a_good_that_does_not_build_is_exit_1() {
    if !support::end_to_end("bad_input_is_refused_and_a_good_that_does_not_build_is_exit_1") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let (repo, commits) = repository(dir.path());
    let target = target();
    let side = git(&repo, &["rev-parse", "side"]);
    let refused = |good: &str, bad: &str, bench: &str, says: &str| {
        let mut words = bench.split(' ');
        let out = support::tool()
            .args(["bisect", good, bad, "--bench"])
            .args(words.by_ref().take(1))
            .args(words)
            .current_dir(&repo)
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", support::said(&out));
        assert!(
            support::said(&out).contains(says),
            "{}",
            support::said(&out)
        );
    };
    refused(&side, &commits[15], "speed", "is not an ancestor of BAD");
    refused(
        "no-such-rev",
        &commits[15],
        "speed",
        "`no-such-rev` is not a revision",
    );
    refused(
        &commits[0],
        &commits[15],
        "sweep",
        "has no bench of that name",
    );
    refused(&commits[5], &commits[5], "speed", "nothing lies between");
    refused(
        &commits[0],
        &commits[15],
        "speed --fail-on time=lots",
        "--fail-on time=lots",
    );
    refused(
        &commits[0],
        &commits[15],
        "speed --case no-such-case",
        "--case no-such-case: no case of bench `speed`",
    );
    // Commit 4 does not build: a BAD that cannot be judged is no "no
    // regression".
    refused(&commits[3], &commits[4], "speed", "could not be judged");

    let broken = support::tool()
        .args(["bisect", &commits[4], &commits[6], "--bench", "speed"])
        .current_dir(&repo)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert_eq!(broken.status.code(), Some(1), "{}", support::said(&broken));
    assert!(support::said(&broken).contains("GOOD does not build"));
}

/// A pull request's branch, off `main` at M0, whose second commit makes
/// `slow_part` 5% slower, and into which `main` was merged after: `M0 -
/// M1 - M2` on main, `M0 - B1 - B2 - B3 - X` on the branch, X merging M2.
/// bisect, as git bisect does, names B2 from the merge base before main
/// was merged (M0) and from the one after (M2, from which the branch's
/// commits are reached only through the merge).
#[test]
fn bisect_finds_a_branchs_regression_behind_a_merge_of_main() {
    if !support::end_to_end("bisect_finds_a_branchs_regression_behind_a_merge_of_main") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
    let dir = tempfile::tempdir().unwrap();
    let repo = scaffold(dir.path());
    let target = target();
    let m0 = commit(&repo, "src/lib.rs", &library(0), "M0");
    commit(&repo, "NOTES.md", "main 1\n", "M1");
    let m2 = commit(&repo, "NOTES.md", "main 1\nmain 2\n", "M2");
    git(&repo, &["checkout", "--quiet", "-b", "pull", &m0]);
    commit(&repo, "BRANCH.md", "branch 1\n", "B1");
    let b2 = commit(
        &repo,
        "src/lib.rs",
        &library(9),
        "B2: slow_part does 5% more",
    );
    commit(&repo, "BRANCH.md", "branch 1\nbranch 3\n", "B3");
    git(&repo, &["merge", "--quiet", "--no-edit", "main"]);
    let x = git(&repo, &["rev-parse", "HEAD"]);
    for good in [&m0, &m2] {
        let found = json(&bisect(&repo, &target, good, &x));
        assert_eq!(
            found["first_regressed"]["commit"],
            b2.as_str(),
            "from {good}: {found:#}"
        );
        assert_eq!(
            found["first_regressed"]["cases"],
            serde_json::json!(["slow_part"])
        );
    }
}
