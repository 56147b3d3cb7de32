//! A user's crate outside this workspace, as the README sets it up: the
//! five crates are packed with `cargo package`, as crates.io would serve
//! them, and a new crate depends on them by version, patched to the
//! unpacked packages. Its Cargo.toml lines, data program and bench are the
//! README's, and every command of the README's quick start runs there as
//! written, in order; the tool is installed from the packed `nnbench-cli`
//! crate, which is what `cargo install nnbench-cli` fetches.
//!
//! The crate is kept under cargo's folder for test files, so that a second
//! run builds only what changed.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nnbench::RunRecord;
use nnbench_core::compare::Limits;
use support::quick_start::{CRATES, blocks, packed, quick_start_crate, readme};

/// What a bench must not compile: the tool's package, SQLite, and
/// criterion's report machinery.
const NOT_LINKED: [&str; 5] = [
    "nnbench-cli",
    "rusqlite",
    "libsqlite3-sys",
    "rayon",
    "plotters",
];

/// The README's shell block that runs `first`, its commands a line each.
fn commands(blocks: &[String], first: &str) -> Vec<String> {
    blocks
        .iter()
        .find(|b| b.lines().next().is_some_and(|l| l.starts_with(first)))
        .unwrap_or_else(|| panic!("the README has no commands starting {first}"))
        .lines()
        .map(|line| {
            line.split_once("  #")
                .map_or(line, |(command, _)| command)
                .trim()
                .to_owned()
        })
        .filter(|line| !line.is_empty())
        .collect()
}

/// The README's crate at `dir/user`, a git repository of one commit.
fn user_crate(dir: &Path, packages: &[PathBuf]) -> PathBuf {
    let user = dir.join("user");
    quick_start_crate(&user, packages);
    support::git(&user, &["init", "--quiet", "--initial-branch", "main"]);
    std::fs::write(
        user.join(".gitignore"),
        "/target\n/bin\n*.npy\n*.html\n.cargo\n",
    )
    .unwrap();
    support::git(&user, &["add", "-A"]);
    support::git(
        &user,
        &["commit", "--quiet", "--allow-empty", "-m", "sweep"],
    );
    user
}

/// Runs one README command in `user` with the installed tool first on
/// PATH, as a user's shell would, and asserts that it succeeded.
fn run(user: &Path, command: &str, packages: &[PathBuf]) -> Output {
    let output = shell(user, command, packages);
    assert!(
        output.status.success(),
        "`{command}` failed in the user's crate:\n{}",
        support::said(&output)
    );
    output
}

/// Runs one README command in `user` with the installed tool first on
/// PATH. `cargo install nnbench-cli` installs the packed crate instead of
/// crates.io's, patched as the crate is: cargo install reads no
/// configuration of the folder it runs in.
fn shell(user: &Path, command: &str, packages: &[PathBuf]) -> Output {
    let mut install = String::from("cargo install --quiet --root bin --force");
    for (name, path) in CRATES.iter().zip(packages).take(3) {
        install.push_str(&format!(
            " --config \"patch.crates-io.{name}.path='{}'\"",
            path.display()
        ));
    }
    install.push_str(&format!(" --path '{}'", packages[4].display()));
    let command = command.replace("cargo install nnbench-cli", &install);
    let path = format!(
        "{}:{}",
        user.join("bin/bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    eprintln!("$ {command}");
    Command::new("bash")
        .args(["-euo", "pipefail", "-c", &command])
        .current_dir(user)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", user.join("target"))
        // Cold release builds (the tool's, the crate's, and build-base's
        // of the base) are most of this test's time; what it checks does
        // not depend on how hard the compiler optimizes: a time judged
        // against the stored baseline may differ, and the paired run
        // compares two builds made alike.
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env_remove("NNBENCH_PAIRED_BASE")
        .output()
        .unwrap()
}

/// Runs one of the README's commands that judge the run against the
/// stored baseline (`--baseline main`, and `nnbench compare` of the two
/// records), which must pass but for time: a stored baseline times the
/// case in another process minutes earlier, and on a shared machine (the
/// README says so) a case may well be slower then for reasons of the
/// machine's own. Metrics and memory must hold, and the run must end with
/// its record.
fn against_stored_baseline(user: &Path, command: &str, packages: &[PathBuf]) -> Output {
    let output = shell(user, command, packages);
    let said = support::said(&output);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "`{command}`:\n{said}"
    );
    let base = record(user, "baselines/main.json");
    let head = record(user, "latest.json");
    let thresholds = Limits::default().with_spec("time=off").unwrap();
    let comparison = nnbench_core::compare::compare(&base, &head, &thresholds);
    assert!(
        !comparison.fails(),
        "`{command}` judged more than time:\n{said}"
    );
    output
}

/// What the quick start must show a user: commands, or the flags a
/// command ends with. Each is run, and checked below where it runs.
const QUICK_START: [&str; 5] = [
    "cargo bench",
    "--list",
    "--save-baseline main",
    "--baseline main",
    "cargo install nnbench-cli",
];

fn record(user: &Path, name: &str) -> RunRecord {
    RunRecord::read(user.join("target/nnbench/sweep").join(name)).unwrap()
}

#[test]
fn the_readmes_quick_start_works_in_a_crate_of_its_own() {
    if !support::end_to_end("the_readmes_quick_start_works_in_a_crate_of_its_own") {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("outside-crate");
    std::fs::create_dir_all(&dir).unwrap();
    let packages = packed(&dir);
    let user = user_crate(&dir, &packages);
    let readme = readme();
    let sh = blocks(&readme, "sh");

    let mut shown = Vec::new();
    for command in commands(&sh, "cargo run --release --example make_data") {
        let output =
            if command.ends_with("--baseline main") || command.starts_with("nnbench compare") {
                against_stored_baseline(&user, &command, &packages)
            } else {
                run(&user, &command, &packages)
            };
        let said = support::said(&output);
        shown.extend(
            QUICK_START
                .into_iter()
                .filter(|shows| command == *shows || command.ends_with(&format!(" {shows}"))),
        );
        if command == "cargo bench" {
            let latest = record(&user, "latest.json");
            assert_eq!(latest.cases.len(), 4, "{said}");
            assert_eq!(latest.failed(), 0, "{said}");
            let tree = run(
                &user,
                "cargo tree --edges normal,build,dev --prefix none",
                &packages,
            );
            let tree = String::from_utf8_lossy(&tree.stdout);
            for package in NOT_LINKED {
                assert!(
                    !tree.lines().any(|l| l.split(' ').next() == Some(package)),
                    "the bench's graph holds {package}:\n{tree}"
                );
            }
            // The quick start's crate has neither the `profile` nor the
            // `criterion` feature: their flags stop the run before a case
            // runs (the bench exits 2, cargo 101), naming the feature.
            for (flag, feature) in [("--profile", "profile"), ("--criterion", "criterion")] {
                let refused = shell(&user, &format!("cargo bench -- {flag}"), &packages);
                let said = support::said(&refused);
                assert!(!refused.status.success(), "{said}");
                assert!(said.contains(&format!("`{feature}` feature")), "{said}");
                assert!(!said.contains("[1/4]"), "no case ran: {said}");
            }
        } else if command.contains("--list") {
            let listed = String::from_utf8_lossy(&output.stdout);
            assert_eq!(listed.matches("accuracy/").count(), 4, "{listed}");
        } else if command.contains("--save-baseline main") {
            assert!(
                user.join("target/nnbench/sweep/baselines/main.json")
                    .is_file()
            );
        } else if command.contains("report -o report.html") {
            assert!(user.join("report.html").is_file());
        }
    }

    for expected in QUICK_START {
        assert!(
            shown.contains(&expected),
            "the README's quick start no longer runs `{expected}`"
        );
    }

    // The two lines share a shell variable: one shell runs both.
    let paired = commands(&sh, "BASE=$(nnbench build-base main --bench sweep)").join("\n");
    // The base is main's commit, this crate's own source: the gate passes.
    support::without_repeated_false_alarm(&paired, || {
        let output = shell(&user, &paired, &packages);
        let said = support::said(&output);
        support::paired_false_alarm(&record(&user, "latest.json"))
            .map_err(|wrong| format!("{wrong}\n{said}"))?;
        assert!(
            output.status.success(),
            "no case was called changed:\n{said}"
        );
        Ok(())
    });

    if support::valgrind_here() {
        let counted = run(&user, "cargo bench -- --instructions", &packages);
        let latest = record(&user, "latest.json");
        assert!(
            latest.cases.iter().all(|c| c.time.instructions.is_some()),
            "{}",
            support::said(&counted)
        );
    }
}
