//! What the tests that start their own bench binary share.
//!
//! Such a test file is `harness = false`: its `main` is both the checks and
//! the bench binary they start (`nnbench::main!()` would be), told apart by
//! an environment variable, so that its cases are the bench's and the
//! signals, exits and files it is checked on are real.

#![allow(dead_code, unused_macros, unused_imports)]

pub mod cgroup;
pub mod quick_start;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::Command;

/// Set in the environment of the copy of a test binary that plays the bench.
pub const BENCH_CHILD: &str = "NNBENCH_TEST_BENCH_CHILD";

/// The test binary's `main`: as the bench child, runs the bench named
/// `bench` (and does not return); otherwise runs the `checks` whose names
/// contain the filters given on the command line (all without one), as
/// libtest would, and exits 101 if any failed.
pub fn main(bench: &str, checks: &[(&str, fn())]) {
    if std::env::var_os(BENCH_CHILD).is_some() {
        nnbench::main!(bench = bench);
    }
    let (filters, skips) = filters(std::env::args().skip(1));
    let chosen: Vec<&(&str, fn())> = checks
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .filter(|(name, _)| !skips.iter().any(|s| name.contains(s.as_str())))
        .collect();
    let chosen_count = chosen.len();
    println!("\nrunning {chosen_count} tests");
    let mut failed = Vec::new();
    for (name, check) in chosen {
        match catch_unwind(AssertUnwindSafe(check)) {
            Ok(()) => println!("test {name} ... ok"),
            Err(_) => {
                println!("test {name} ... FAILED");
                failed.push(*name);
            }
        }
    }
    let passed = chosen_count - failed.len();
    if failed.is_empty() {
        println!("\ntest result: ok. {passed} passed; 0 failed\n");
    } else {
        println!("\nfailures:\n    {}", failed.join("\n    "));
        println!(
            "\ntest result: FAILED. {passed} passed; {} failed\n",
            failed.len()
        );
        std::process::exit(101);
    }
}

/// The name filters and `--skip` filters among libtest's arguments: the
/// values of its other flags that take one (`--test-threads 1`, `--format
/// terse`) are neither.
fn filters(mut args: impl Iterator<Item = String>) -> (Vec<String>, Vec<String>) {
    const TAKING_A_VALUE: [&str; 5] = ["--test-threads", "--format", "--color", "--logfile", "-Z"];
    let (mut filters, mut skips) = (Vec::new(), Vec::new());
    while let Some(arg) = args.next() {
        if arg == "--skip" {
            skips.extend(args.next());
        } else if let Some(skip) = arg.strip_prefix("--skip=") {
            skips.push(skip.to_owned());
        } else if TAKING_A_VALUE.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            filters.push(arg);
        }
    }
    (filters, skips)
}

/// The checks of a test file, each named after its function, for [`main`].
macro_rules! checks {
    ($($check:ident),+ $(,)?) => {
        &[$((stringify!($check), $check as fn())),+]
    };
}
pub(crate) use checks;

/// This test binary as the bench it plays: set the flags, the target
/// folder and the environment on the command.
pub fn bench_binary() -> Command {
    let mut command = Command::new(std::env::current_exe().expect("the test binary's path"));
    command.env(BENCH_CHILD, "1");
    command
}

/// How much more work a "build" does in case `id`: the number after the
/// colon of `variable` (`kernel/n=2:10`) when it names that case, else 0.
/// The tests that pair or count builds tell them apart by such variables.
pub fn extra_work(variable: &str, id: &str) -> u64 {
    std::env::var(variable)
        .ok()
        .and_then(|spec| {
            let (case, amount) = spec.rsplit_once(':')?;
            (case == id).then(|| amount.parse().ok()).flatten()
        })
        .unwrap_or(0)
}

/// Single-threaded work in proportion to `steps`, mixing in `table`.
///
/// The accumulator stays in a register: passed through `black_box` at
/// every step, it is stored and loaded back, and on some CPUs how fast
/// that load is served flips between one and four times for milliseconds
/// at a time, which made the work's own speed the noise.
pub fn spin(steps: u64, table: &[u64]) -> u64 {
    let table = std::hint::black_box(table);
    (0..steps).fold(0u64, |acc, i| {
        acc.wrapping_mul(31) ^ table[(i as usize) % table.len()]
    })
}

/// Whether what a test needs (`what`, which `how` provides) is `here`;
/// where it is not, the test skips, unless environment variable `require`
/// says it must run (as in CI), and then it fails saying so.
pub fn here_or_skip(here: bool, what: &str, require: &str, how: &str) -> bool {
    assert!(
        here || std::env::var_os(require).is_none(),
        "{require} is set and there is no {what} ({how})"
    );
    if !here {
        eprintln!("skipped: no {what} ({how})");
    }
    here
}

/// The switch that runs the end-to-end tests: `NNBENCH_E2E=1 cargo test
/// --workspace`, as CI does. They build whole crates (the user's crate from
/// the packed crates, bisect's generated history, the workflow's scratch
/// repository) or start clusters and browsers, and take most of the suite's
/// time; the contributor's `cargo test --workspace` leaves them out.
pub const END_TO_END: &str = "NNBENCH_E2E";

/// Whether `test`, an end-to-end test, runs: with [`END_TO_END`] set (to
/// anything but `0`); without it, it says how to run it and passes.
pub fn end_to_end(test: &str) -> bool {
    let on = std::env::var_os(END_TO_END).is_some_and(|v| v != "0");
    if !on {
        eprintln!("skipped: {test} is an end-to-end test ({END_TO_END}=1 runs it)");
    }
    on
}

/// Whether valgrind is here to count instructions; where it is not, the
/// checks that count skip, unless `NNBENCH_REQUIRE_VALGRIND` says it must
/// be (as in CI).
pub fn valgrind_here() -> bool {
    let valgrind = std::env::var_os("NNBENCH_VALGRIND").unwrap_or_else(|| "valgrind".into());
    let here = Command::new(valgrind)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    here_or_skip(
        here,
        "valgrind",
        "NNBENCH_REQUIRE_VALGRIND",
        "scripts/valgrind.sh installs Debian's",
    )
}

/// What a child test process printed after `child: ` (a test that runs
/// this test binary again as one), once it succeeded.
pub fn child_line(output: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{}", said(output));
    stdout
        .lines()
        .find_map(|l| l.split_once("child: ").map(|(_, rest)| rest.to_owned()))
        .unwrap_or_else(|| panic!("no child line in {}", said(output)))
}

/// Runs git in `repo` as a test's own committer; its trimmed output.
pub fn git(repo: &std::path::Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args([
            "-c",
            "user.name=nnbench",
            "-c",
            "user.email=nnbench@example.com",
        ])
        .args(args)
        .current_dir(repo)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {output:?}");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

/// A process's stdout and stderr together, for messages in assertions.
pub fn said(output: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A "build" of the bench a test binary plays: a script at `dir/name` that
/// unsets `unset` (the supervisor's environment is the head build's; the
/// base's own differences are set afresh), exports `env` and runs this
/// binary.
pub fn build_script(
    dir: &std::path::Path,
    name: &str,
    unset: &[&str],
    env: &[(&str, &str)],
) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut script = format!("#!/bin/sh\nunset {}\n", unset.join(" "));
    for (key, value) in env {
        script.push_str(&format!("export {key}='{value}'\n"));
    }
    script.push_str(&format!("exec '{}' \"$@\"\n", exe.display()));
    let path = dir.join(name);
    std::fs::write(&path, script).expect("the build's script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// Why a paired run of two builds of one source is a false alarm: a case
/// that was not paired, or that was judged anything but unchanged.
pub fn paired_false_alarm(record: &nnbench::RunRecord) -> Result<(), String> {
    use nnbench::record::Verdict;
    for case in &record.cases {
        let paired = case
            .paired
            .as_ref()
            .ok_or_else(|| format!("{} was not paired", case.id))?;
        if paired.verdict != Verdict::Unchanged {
            return Err(format!(
                "{} called {:?} at {:.3} between builds of one source",
                case.id, paired.verdict, paired.estimate
            ));
        }
    }
    Ok(())
}

/// Runs `gate`, a time gate over two builds of the same code, which must
/// call nothing changed. Its false alarms are rare by design, not
/// impossible: the figures page bounds the paired gate's rate on identical
/// builds at its default limits under 1% a case (`scripts/figures.sh
/// false_alarms`), so with the few cases of a test one false alarm in a
/// run is a one-in-a-hundred event, and the gate is run again; two in a
/// row, about one in ten thousand, fail the test.
pub fn without_repeated_false_alarm(what: &str, mut gate: impl FnMut() -> Result<(), String>) {
    let Err(first) = gate() else {
        return;
    };
    eprintln!("{what}: a false alarm ({first}); one in a row is allowed: running it again");
    if let Err(again) = gate() {
        panic!(
            "{what}: a false alarm twice in a row on identical code, which the gate's bounded rate does not explain: {first}\nthen: {again}"
        );
    }
}
