//! `--quiet` means quiet: a measuring run (`--bench`, criterion sampling)
//! over a damaged disk entry prints nothing, and its record keeps the
//! warning. The binary is a bench binary (`harness = false`): run by
//! `cargo test`, it runs itself as one and inspects what that printed.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use nnbench::store::{Binary, Format};
use nnbench::{Memo, RunRecord};

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Persisted;

impl Memo for Persisted {
    type Value = Vec<u32>;
    fn compute(&self) -> nnbench::Result<Vec<u32>> {
        Ok((0..4096).collect())
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u32>>>> {
        Some(Box::new(Binary))
    }
}

#[nnbench::product(p = [Persisted], timing = sampled)]
fn sums_a_persisted_memo(p: &[u32]) -> u64 {
    p.iter().map(|&v| u64::from(v)).sum()
}

fn run_child(dir: &Path, out: &Path) -> Output {
    support::bench_binary()
        .args(["--bench", "--quiet", "--sample-size", "10"])
        .args(["--warm-up-time", "10ms", "--measurement-time", "50ms"])
        .arg("--disk-tier-dir")
        .arg(dir)
        .arg("--out")
        .arg(out)
        .output()
        .expect("the child runs")
}

fn entry(dir: &Path) -> PathBuf {
    let folders = std::fs::read_dir(dir).expect("the tier's folder");
    folders
        .flatten()
        .flat_map(|t| std::fs::read_dir(t.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "memo"))
        .expect("an entry was saved")
}

fn main() {
    support::main(
        "quiet_run",
        support::checks![a_quiet_run_prints_nothing_and_its_record_keeps_the_warning],
    );
}

fn a_quiet_run_prints_nothing_and_its_record_keeps_the_warning() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (tier, out) = (dir.path().join("memo-cache"), dir.path().join("run.json"));

    let first = run_child(&tier, &out);
    assert!(first.status.success(), "{first:?}");
    let damaged = entry(&tier);
    let mut bytes = std::fs::read(&damaged).expect("entry");
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&damaged, bytes).expect("damage the entry");

    let second = run_child(&tier, &out);
    assert!(second.status.success(), "{second:?}");
    assert_eq!(String::from_utf8_lossy(&second.stdout), "", "stdout");
    assert_eq!(String::from_utf8_lossy(&second.stderr), "", "stderr");

    let record = RunRecord::read(&out).expect("the record");
    let case = &record.cases[0];
    assert_eq!(case.value, (0..4096u64).sum::<u64>());
    assert_eq!(case.time.mode, nnbench::record::TimingMode::Sampled);
    assert_eq!(case.memo.computes, 1, "the damaged entry is recomputed");
    assert!(
        case.warnings
            .iter()
            .any(|w| w.contains("corrupt") && w.contains(&damaged.display().to_string())),
        "{:?}",
        case.warnings
    );
}
