//! One disk tier shared by processes, as shards on one file system share
//! it: processes that miss an entry together compute it once; a process
//! killed while computing leaves no lock that stops the next one;
//! `--disk-tier-max` keeps the tier's size; `nnbench disk-tier` lists, prunes
//! and clears it. The child processes are this test binary again, running
//! `child_sweep`.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use nnbench::memo::{self, DiskTier};
use nnbench::store::{Binary, Format};
use nnbench::{Memo, Runner};

const MIB: usize = 1 << 20;

/// A 1 MiB fixture whose compute takes the time the child is told to
/// (`SHARED_TIER_COMPUTE_MS`), so that processes started together miss it
/// together.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Slow(u8);

impl Memo for Slow {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        if let Some(flag) = std::env::var_os("SHARED_TIER_COMPUTING") {
            std::fs::write(flag, b"")?;
        }
        let ms = std::env::var("SHARED_TIER_COMPUTE_MS").map_or(Ok(0), |ms| ms.parse())?;
        std::thread::sleep(Duration::from_millis(ms));
        Ok(vec![self.0; MIB])
    }
    fn size_of(&self, value: &Vec<u8>) -> Option<u64> {
        Some(value.len() as u64)
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u8>>>> {
        Some(Box::new(Binary))
    }
}

/// A fixture built from one of the others, for the inputs `nnbench disk-tier`
/// lists.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Doubled(Slow);

impl Memo for Doubled {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        Ok(memo::resolve(&self.0)?
            .iter()
            .map(|b| b.wrapping_mul(2))
            .collect())
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u8>>>> {
        Some(Box::new(Binary))
    }
}

#[nnbench::product(fixture = [Slow(1), Slow(2), Slow(3)])]
fn shared(fixture: &[u8]) -> u64 {
    fixture.iter().map(|&b| u64::from(b)).sum()
}

#[nnbench::product(fixture = [Slow(11), Slow(12), Slow(13), Slow(14), Slow(15), Slow(16)])]
fn limited(fixture: &[u8]) -> usize {
    fixture.len()
}

#[nnbench::product(fixture = [Doubled(Slow(21))])]
fn derived(fixture: &[u8]) -> u8 {
    fixture[0]
}

/// Run by the parent as a child process, not a test of its own: the
/// `shared` sweep on the tier it is given, printing what it computed and
/// loaded.
#[test]
#[ignore = "a child process's body, run by the tests of this file"]
fn child_helper_sweep() {
    let tier =
        std::env::var_os("SHARED_TIER_DIR").expect("run by a test, with SHARED_TIER_DIR set");
    let record = Runner::new()
        .filter("shared/")
        .quiet(true)
        .test_mode(true)
        .disk_tier(DiskTier::At(tier.into()))
        .run()
        .unwrap();
    assert_eq!(record.failed(), 0, "{:#?}", record.cases);
    println!(
        "child: computes={} disk_hits={}",
        record.memo.computes, record.memo.disk_hits
    );
}

fn child(tier: &Path, compute_ms: u64, computing_flag: Option<&Path>) -> Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args([
            "child_helper_sweep",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("SHARED_TIER_DIR", tier)
        .env("SHARED_TIER_COMPUTE_MS", compute_ms.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(flag) = computing_flag {
        command.env("SHARED_TIER_COMPUTING", flag);
    }
    command.spawn().unwrap()
}

/// The (computes, disk hits) a child printed.
fn counts(out: &Output) -> (u64, u64) {
    let line = support::child_line(out);
    let number = |name: &str| -> u64 {
        line.split(' ')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .unwrap()
            .parse()
            .unwrap()
    };
    (number("computes"), number("disk_hits"))
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|folder| {
            std::fs::read_dir(folder.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.path())
        .collect()
}

#[test]
fn four_processes_started_together_on_a_cold_tier_compute_each_memo_once() {
    let tier = tempfile::tempdir().unwrap();
    let children: Vec<Child> = (0..4).map(|_| child(tier.path(), 400, None)).collect();
    let outputs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    let (computes, hits): (Vec<u64>, Vec<u64>) = outputs.iter().map(counts).unzip();
    assert_eq!(
        computes.iter().sum::<u64>(),
        3,
        "computes per process: {computes:?}"
    );
    assert_eq!(
        hits.iter().sum::<u64>(),
        9,
        "disk hits per process: {hits:?}"
    );
    let mut files = files_under(tier.path());
    files.sort();
    assert_eq!(
        files.len(),
        3,
        "three entries, no lock or partial file: {files:?}"
    );
    assert!(
        files
            .iter()
            .all(|f| f.extension().is_some_and(|x| x == "memo"))
    );
}

#[cfg(unix)]
#[test]
fn a_process_killed_while_computing_leaves_no_lock_that_stops_the_next() {
    let tier = tempfile::tempdir().unwrap();
    let flag = tier.path().join("computing");
    let mut doomed = child(tier.path(), 600_000, Some(&flag));
    let started = Instant::now();
    while !flag.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the child never started computing"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let locks: Vec<PathBuf> = files_under(tier.path())
        .into_iter()
        .filter(|f| f.to_string_lossy().ends_with(".lock"))
        .collect();
    assert_eq!(
        locks.len(),
        1,
        "the computing process holds its entry: {locks:?}"
    );
    doomed.kill().unwrap();
    doomed.wait().unwrap();

    let next = child(tier.path(), 0, None);
    let out = next.wait_with_output().unwrap();
    assert_eq!(counts(&out), (3, 0));
    assert!(started.elapsed() < Duration::from_secs(300));
    assert!(
        files_under(tier.path())
            .iter()
            .all(|f| !f.to_string_lossy().ends_with(".lock")),
        "the lock the killed process left was taken over and let go"
    );
}

/// Runs in this process share the memo cache: one at a time, so that each
/// computes (and saves to its own tier) what it uses.
static ONE_RUN_AT_A_TIME: Mutex<()> = Mutex::new(());

fn run(filter: &str, tier: &Path, max: Option<u64>) -> nnbench::RunRecord {
    let _one = ONE_RUN_AT_A_TIME
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let mut runner = Runner::new()
        .filter(filter)
        .quiet(true)
        .test_mode(true)
        .disk_tier(DiskTier::At(tier.to_owned()));
    if let Some(max) = max {
        runner = runner.disk_tier_max(max);
    }
    let record = runner.run().unwrap();
    assert_eq!(record.failed(), 0, "{:#?}", record.cases);
    record
}

#[test]
fn disk_tier_max_keeps_the_tier_within_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let tier = DiskTier::At(dir.path().to_owned());
    let max = 3 * MIB as u64 + 64 * 1024;
    let record = run("limited/", dir.path(), Some(max));
    let bytes: u64 = tier.entries().unwrap().iter().map(|e| e.bytes).sum();
    assert!(bytes <= max, "{bytes} bytes on disk");
    assert_eq!(tier.entries().unwrap().len(), 3);
    assert!(
        record
            .warnings
            .iter()
            .any(|w| w.contains("--disk-tier-max")),
        "{:?}",
        record.warnings
    );
    // The entries kept are those used last.
    let kept: Vec<String> = tier
        .entries()
        .unwrap()
        .into_iter()
        .map(|e| e.memo)
        .collect();
    assert_eq!(kept, ["Slow(16)", "Slow(15)", "Slow(14)"]);
}

fn tool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_nnbench"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn nnbench_disk_tier_lists_prunes_and_clears_the_tier() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    run("derived/", dir.path(), None);
    run("limited/", dir.path(), None);

    let listed = stdout(&tool(&["disk-tier", "--dir", path]));
    assert!(
        listed.contains("shared_tier::Doubled") && listed.contains("Doubled(Slow(21))"),
        "{listed}"
    );
    assert!(
        listed.contains("Slow(21)") && listed.contains("1.00 MiB"),
        "{listed}"
    );
    assert!(listed.contains("8 entries"), "{listed}");
    let json: serde_json::Value = serde_json::from_str(&stdout(&tool(&[
        "disk-tier",
        "--dir",
        path,
        "--format",
        "json",
    ])))
    .unwrap();
    let doubled = json
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["memo"] == "Doubled(Slow(21))")
        .unwrap();
    assert_eq!(doubled["inputs"], serde_json::json!(["Slow(21)"]));
    assert!(doubled["last_use"].as_str().unwrap().ends_with('Z'));

    let pruned = stdout(&tool(&[
        "disk-tier",
        "--dir",
        path,
        "prune",
        "--max",
        "4.5MiB",
    ]));
    assert!(pruned.starts_with("removed 4 entries"), "{pruned}");
    assert_eq!(DiskTier::At(dir.path().into()).entries().unwrap().len(), 4);
    let cleared = stdout(&tool(&["disk-tier", "--dir", path, "clear"]));
    assert!(cleared.starts_with("removed 4 entries"), "{cleared}");
    assert!(files_under(dir.path()).is_empty());

    let bad = tool(&["disk-tier", "--dir", path, "prune", "--max", "lots"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("lots"));

    // The command's name before 0.1.0 is taken one more release, and says
    // what to write instead.
    let old = tool(&["cache", "--dir", path]);
    assert!(old.status.success());
    assert!(String::from_utf8_lossy(&old.stdout).contains("0 entries"));
    assert!(
        String::from_utf8_lossy(&old.stderr)
            .contains("`nnbench cache` is renamed `nnbench disk-tier`")
    );
}

/// Without `--dir`, the tier is the one in the target folder of the cargo
/// project around the current folder, wherever in it the tool runs; out of
/// any project, the tool says to give `--dir`.
#[test]
fn nnbench_disk_tier_finds_the_projects_tier_or_asks_for_dir() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join("src/deep")).unwrap();
    std::fs::write(
        project.join("Cargo.toml"),
        "[package]\nname = \"project\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(project.join("src/lib.rs"), "").unwrap();
    let tier = project.join("target/nnbench/memo-cache");
    std::fs::create_dir_all(&tier).unwrap();
    let cache = |at: &Path| {
        Command::new(env!("CARGO_BIN_EXE_nnbench"))
            .arg("disk-tier")
            .current_dir(at)
            .env_remove("CARGO_TARGET_DIR")
            .output()
            .unwrap()
    };
    let listed = stdout(&cache(&project.join("src/deep")));
    assert!(listed.contains(&tier.display().to_string()), "{listed}");
    let nowhere = dir.path().join("nowhere");
    std::fs::create_dir_all(&nowhere).unwrap();
    let refused = cache(&nowhere);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--dir"));
}
