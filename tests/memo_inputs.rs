//! Fixtures derived from files are never used stale: a chain
//! file -> `Split` -> `Trained` -> `Scored`, each persisted, swept again
//! after the file changed, was touched, or could not be fingerprinted; in
//! this process (from memory and from the disk tier) and in a new one
//! (from the disk tier alone). Its own test binary: the tests share the
//! global cache and count every compute, so they run one at a time.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use nnbench::memo::{self, DiskTier};
use nnbench::store::{Format, Json};
use nnbench::{Memo, RunRecord, Runner};

static SPLITS: AtomicUsize = AtomicUsize::new(0);
static TRAININGS: AtomicUsize = AtomicUsize::new(0);
static SCORINGS: AtomicUsize = AtomicUsize::new(0);
/// Makes `Split::fingerprint` fail, as one that asks a server would.
static UNREACHABLE: AtomicBool = AtomicBool::new(false);

/// The rows of a text file of numbers, or of the files of a folder.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Split(PathBuf);

impl Memo for Split {
    type Value = Vec<u32>;
    fn compute(&self) -> nnbench::Result<Vec<u32>> {
        SPLITS.fetch_add(1, Ordering::SeqCst);
        let text = if self.0.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&self.0)?
                .map(|entry| entry.map(|e| e.path()))
                .collect::<Result<_, _>>()?;
            files.sort();
            let parts: Vec<String> = files
                .iter()
                .map(std::fs::read_to_string)
                .collect::<Result<_, _>>()?;
            parts.join(",")
        } else {
            std::fs::read_to_string(&self.0)?
        };
        Ok(text
            .split(',')
            .map(|n| n.trim().parse())
            .collect::<Result<_, _>>()?)
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u32>>>> {
        Some(Box::new(Json))
    }
    fn fingerprint(&self) -> nnbench::Result<Option<String>> {
        if UNREACHABLE.load(Ordering::SeqCst) {
            return Err(nnbench::Error::msg("the split's server is unreachable"));
        }
        memo::file_fingerprint(&self.0).map(Some)
    }
}

/// A "model" trained on a split; it has no fingerprint of its own.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Trained(Split);

impl Memo for Trained {
    type Value = Vec<u64>;
    fn compute(&self) -> nnbench::Result<Vec<u64>> {
        TRAININGS.fetch_add(1, Ordering::SeqCst);
        let split = memo::resolve(&self.0)?;
        Ok(split.iter().map(|&x| u64::from(x) * 2).collect())
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u64>>>> {
        Some(Box::new(Json))
    }
}

/// The score of a trained model.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Scored(Trained);

impl Memo for Scored {
    type Value = u64;
    fn compute(&self) -> nnbench::Result<u64> {
        SCORINGS.fetch_add(1, Ordering::SeqCst);
        Ok(memo::resolve(&self.0)?.iter().sum())
    }
    fn store(&self) -> Option<Box<dyn Format<u64>>> {
        Some(Box::new(Json))
    }
}

/// The split file every case reads: fixed, since the grid is, and kept in
/// cargo's folder for test files, which `cargo clean` empties.
fn split_file() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("memo-inputs-{}.txt", std::process::id()))
}

fn scored() -> Scored {
    Scored(Trained(Split(split_file())))
}

#[nnbench::product(score = [scored()])]
fn score(score: &u64) -> u64 {
    *score
}

#[nnbench::product(split = [Split(split_file())])]
fn rows(split: &[u32]) -> usize {
    split.len()
}

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

/// How many times each memo type computed during `f`: split, trained, scored.
fn computes(f: impl FnOnce()) -> [usize; 3] {
    let before = [&SPLITS, &TRAININGS, &SCORINGS].map(|c| c.load(Ordering::SeqCst));
    f();
    let after = [&SPLITS, &TRAININGS, &SCORINGS].map(|c| c.load(Ordering::SeqCst));
    [0, 1, 2].map(|i| after[i] - before[i])
}

fn run(filter: &str, tier: &Path) -> RunRecord {
    let record = Runner::new()
        .filter(filter)
        .quiet(true)
        .test_mode(true)
        .disk_tier(DiskTier::At(tier.to_owned()))
        .run()
        .unwrap();
    assert_eq!(record.failed(), 0, "{:#?}", record.cases);
    record
}

fn value(record: &RunRecord) -> u64 {
    record.cases[0].value.as_u64().unwrap()
}

fn warnings(record: &RunRecord) -> Vec<String> {
    record
        .cases
        .iter()
        .flat_map(|c| c.warnings.clone())
        .collect()
}

/// Writes the split file with `rows`, keeping its time one second later
/// than before, as an edit a second later would.
fn write_split(rows: &str) {
    let path = split_file();
    let later = std::fs::metadata(&path)
        .and_then(|m| m.modified())
        .map(|t| t + std::time::Duration::from_secs(1))
        .unwrap_or_else(|_| std::time::SystemTime::now());
    std::fs::write(&path, rows).unwrap();
    set_time(&path, later);
}

fn set_time(path: &Path, time: std::time::SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

fn touch_split() {
    let path = split_file();
    let later =
        std::fs::metadata(&path).unwrap().modified().unwrap() + std::time::Duration::from_secs(1);
    set_time(&path, later);
}

/// A fresh process of this test binary that runs the `score` sweep on
/// `tier` and prints its computes and value.
fn in_a_new_process(tier: &Path) -> ([usize; 3], u64) {
    in_a_checkout(tier, Path::new("."), &split_file())
}

/// The same, started in folder `checkout`, with the split named `file`
/// (relative to that folder, or absolute), as a bench in another checkout
/// of a repository would name it.
fn in_a_checkout(tier: &Path, checkout: &Path, file: &Path) -> ([usize; 3], u64) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "child_helper_sweep",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .current_dir(checkout)
        .env("MEMO_INPUTS_CHILD_TIER", tier)
        .env("MEMO_INPUTS_CHILD_FILE", file)
        .output()
        .unwrap();
    let line = support::child_line(&out);
    let numbers: Vec<u64> = line.split(' ').map(|n| n.parse().unwrap()).collect();
    let counts = [0, 1, 2].map(|i| usize::try_from(numbers[i]).unwrap());
    (counts, numbers[3])
}

/// The body of [`in_a_checkout`]'s process, not a test of its own: it
/// fails where that process's environment is not set.
#[test]
#[ignore = "a child process's body, run by in_a_checkout"]
fn child_helper_sweep() {
    let (Some(tier), Some(file)) = (
        std::env::var_os("MEMO_INPUTS_CHILD_TIER"),
        std::env::var_os("MEMO_INPUTS_CHILD_FILE"),
    ) else {
        panic!("run by in_a_checkout, with MEMO_INPUTS_CHILD_TIER and MEMO_INPUTS_CHILD_FILE set");
    };
    let grid = Scored(Trained(Split(file.into())));
    let mut value = 0;
    let counts = computes(|| {
        value = *memo::with_disk_tier(DiskTier::At(tier.into()), || memo::resolve(&grid)).unwrap();
    });
    println!("child: {} {} {} {value}", counts[0], counts[1], counts[2]);
}

#[test]
fn a_changed_file_recomputes_the_chain_and_an_unchanged_one_nothing() {
    let _serial = serial();
    memo::clear();
    let tier = tempfile::tempdir().unwrap();
    write_split("1,2,3");
    assert_eq!(
        computes(|| assert_eq!(value(&run("score/", tier.path())), 12)),
        [1, 1, 1]
    );

    // Unchanged: from the disk tier, here and in a new process.
    memo::clear();
    assert_eq!(
        computes(|| assert_eq!(value(&run("score/", tier.path())), 12)),
        [0, 0, 0]
    );
    assert_eq!(in_a_new_process(tier.path()), ([0, 0, 0], 12));

    // Changed: every level again, with the reason in the record.
    write_split("1,2,3,4");
    memo::clear();
    let mut record = None;
    assert_eq!(
        computes(|| record = Some(run("score/", tier.path()))),
        [1, 1, 1]
    );
    let record = record.unwrap();
    assert_eq!(value(&record), 20);
    let said = warnings(&record).join("\n");
    assert!(said.contains("recomputed: its input `Split("), "{said}");
    assert!(said.contains("changed: file "), "{said}");

    // Changed again, and seen by a new process that resolved none of them.
    write_split("5");
    assert_eq!(in_a_new_process(tier.path()), ([1, 1, 1], 10));
}

#[test]
fn a_touched_file_with_the_same_bytes_recomputes_only_what_its_fingerprint_covers() {
    let _serial = serial();
    memo::clear();
    let tier = tempfile::tempdir().unwrap();
    write_split("7,8");
    assert_eq!(
        computes(|| {
            run("score/", tier.path());
            run("rows/", tier.path());
        }),
        [1, 1, 1]
    );
    touch_split();
    memo::clear();
    // The split's fingerprint is its file's time: it is made again. What
    // was built from it read the same bytes and stays.
    assert_eq!(
        computes(|| {
            run("rows/", tier.path());
        }),
        [1, 0, 0]
    );
    assert_eq!(
        computes(|| assert_eq!(value(&run("score/", tier.path())), 30)),
        [0, 0, 0]
    );
    touch_split();
    assert_eq!(in_a_new_process(tier.path()), ([0, 0, 0], 30));
}

#[test]
fn values_kept_in_memory_are_checked_again_by_the_next_run() {
    let _serial = serial();
    memo::clear();
    write_split("1,1");
    let keep = |filter: &str| {
        Runner::new()
            .filter(filter)
            .quiet(true)
            .test_mode(true)
            .keep_memos(true)
            .disk_tier(DiskTier::Off)
            .run()
            .unwrap()
    };
    assert_eq!(
        computes(|| assert_eq!(value(&keep("score/")), 4)),
        [1, 1, 1]
    );
    assert_eq!(
        computes(|| assert_eq!(value(&keep("score/")), 4)),
        [0, 0, 0]
    );
    write_split("1,1,1");
    let mut record = None;
    assert_eq!(computes(|| record = Some(keep("score/"))), [1, 1, 1]);
    let record = record.unwrap();
    assert_eq!(value(&record), 6);
    assert!(
        warnings(&record).iter().any(|w| w.contains("recomputed")),
        "{:?}",
        warnings(&record)
    );
    memo::clear();
}

#[test]
fn an_inner_memo_whose_fingerprint_fails_is_recomputed_never_loaded_stale() {
    let _serial = serial();
    memo::clear();
    let tier = tempfile::tempdir().unwrap();
    write_split("2,2");
    assert_eq!(
        computes(|| {
            run("score/", tier.path());
        }),
        [1, 1, 1]
    );
    UNREACHABLE.store(true, Ordering::SeqCst);
    memo::clear();
    let mut record = None;
    let counts = computes(|| record = Some(run("score/", tier.path())));
    UNREACHABLE.store(false, Ordering::SeqCst);
    assert_eq!(counts, [1, 1, 1]);
    let said = warnings(&record.unwrap()).join("\n");
    assert!(
        said.contains("cannot be fingerprinted: the split's server is unreachable"),
        "{said}"
    );
    assert!(said.contains("is not saved to the disk tier"), "{said}");
    // What was made meanwhile was not kept: the next run, able to
    // fingerprint the split again, loads what the first run saved.
    memo::clear();
    assert_eq!(
        computes(|| assert_eq!(value(&run("score/", tier.path())), 8)),
        [0, 0, 0]
    );
}

#[test]
fn two_checkouts_sharing_a_tier_each_score_the_split_they_name() {
    let tier = tempfile::tempdir().unwrap();
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(one.path().join("split.txt"), "1,2").unwrap();
    std::fs::write(two.path().join("split.txt"), "1,2,3").unwrap();
    let split = Path::new("split.txt");
    assert_eq!(
        in_a_checkout(tier.path(), one.path(), split),
        ([1, 1, 1], 6)
    );
    // The entry the first checkout left names its split by the same
    // relative path: the second checkout's file is another, so the chain
    // is made again from it.
    assert_eq!(
        in_a_checkout(tier.path(), two.path(), split),
        ([1, 1, 1], 12)
    );
    assert_eq!(in_a_checkout(tier.path(), one.path(), split).1, 6);
}

#[test]
fn two_checkouts_sharing_a_tier_each_score_the_folder_they_name() {
    let tier = tempfile::tempdir().unwrap();
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for (checkout, rows) in [(&one, "1,2"), (&two, "3,4")] {
        std::fs::create_dir(checkout.path().join("data")).unwrap();
        std::fs::write(checkout.path().join("data/part-0.txt"), rows).unwrap();
    }
    let data = Path::new("data");
    assert_eq!(in_a_checkout(tier.path(), one.path(), data), ([1, 1, 1], 6));
    assert_eq!(
        in_a_checkout(tier.path(), two.path(), data),
        ([1, 1, 1], 14)
    );
    // A file added to the second checkout's folder is a change there.
    std::fs::write(two.path().join("data/part-1.txt"), "5").unwrap();
    assert_eq!(
        in_a_checkout(tier.path(), two.path(), data),
        ([1, 1, 1], 24)
    );
}

#[test]
fn an_absolute_path_shared_by_two_checkouts_is_computed_once() {
    let tier = tempfile::tempdir().unwrap();
    let (one, two, data) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let shared = data.path().join("split.txt");
    std::fs::write(&shared, "4,5").unwrap();
    assert_eq!(
        in_a_checkout(tier.path(), one.path(), &shared),
        ([1, 1, 1], 18)
    );
    assert_eq!(
        in_a_checkout(tier.path(), two.path(), &shared),
        ([0, 0, 0], 18)
    );
}
