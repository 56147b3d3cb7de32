//! Memos beyond RAM: the memory budget, the disk tier, spills. Each run has
//! its own disk tier, but the memo cache is one for the process, as the
//! design has it: tests that assert on what it holds (a budget over all
//! resident memos, an empty cache, its counters) run one at a time.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use ndarray::{Array2, Ix2};
use nnbench::store::{Binary, Format, Json, MappedArray, MappedNpy, Npy};
use nnbench::{Memo, Params, RunRecord, Runner, State};

const MIB: u64 = 1 << 20;

static CACHE: RwLock<()> = RwLock::new(());

/// For tests that assert on the whole cache: nothing else runs beside them.
fn serial() -> RwLockWriteGuard<'static, ()> {
    CACHE.write().unwrap_or_else(PoisonError::into_inner)
}

/// For tests that touch only memos of their own: they run side by side.
fn shared() -> RwLockReadGuard<'static, ()> {
    CACHE.read().unwrap_or_else(PoisonError::into_inner)
}

fn runner(filter: &str, dir: &Path) -> Runner {
    Runner::new()
        .filter(filter)
        .quiet(true)
        .test_mode(true)
        .disk_tier(nnbench::memo::DiskTier::At(dir.into()))
}

fn values(record: &RunRecord) -> Vec<serde_json::Value> {
    record.cases.iter().map(|c| c.value.clone()).collect()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|t| std::fs::read_dir(t.path()).ok())
        .flat_map(|e| e.flatten().map(|e| e.path()))
        .collect();
    files.sort();
    files
}

// --- budget ---------------------------------------------------------------------

/// A 4 MiB "model".
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Model(u8);

impl Memo for Model {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        Ok(vec![self.0; (4 * MIB) as usize])
    }
    fn size_of(&self, value: &Vec<u8>) -> Option<u64> {
        Some(value.len() as u64)
    }
}

/// A 1 MiB "dataset".
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Data(u8);

impl Memo for Data {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        Ok(vec![self.0; MIB as usize])
    }
    fn size_of(&self, value: &Vec<u8>) -> Option<u64> {
        Some(value.len() as u64)
    }
}

const BUDGET: u64 = 5 * MIB;
static OVER_BUDGET: AtomicUsize = AtomicUsize::new(0);

/// Runs after the case's memos resolved: the budget holds then too.
fn check_budget(_: &State, _: &Params) {
    if nnbench::memo::stats().resident_bytes > BUDGET {
        OVER_BUDGET.fetch_add(1, Ordering::SeqCst);
    }
}

#[nnbench::product(model = [Model(1), Model(2), Model(3)], data = [Data(7)], setup = check_budget)]
fn budgeted(model: &[u8], data: &[u8]) -> u64 {
    model.iter().map(|&b| u64::from(b)).sum::<u64>() + u64::from(data[0])
}

#[test]
fn a_budget_of_one_model_holds_at_every_case_and_changes_no_result() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // Keeping memos, the three models would pile up; the budget evicts them.
    let free = runner("budgeted/", dir.path())
        .keep_memos(true)
        .run()
        .unwrap();
    nnbench::memo::clear();
    OVER_BUDGET.store(0, Ordering::SeqCst);
    let budgeted = runner("budgeted/", dir.path())
        .keep_memos(true)
        .memo_budget(BUDGET)
        .run()
        .unwrap();
    assert_eq!(budgeted.failed(), 0);
    assert_eq!(values(&budgeted), values(&free));
    assert_eq!(OVER_BUDGET.load(Ordering::SeqCst), 0);
    for case in &budgeted.cases {
        assert!(
            case.memory.memo_resident_bytes <= BUDGET,
            "{}: {}",
            case.id,
            case.memory.memo_resident_bytes
        );
    }
    assert!(
        budgeted.cases[1]
            .memo
            .evicted
            .contains(&"Model(1)".to_owned()),
        "{:?}",
        budgeted.cases[1].memo
    );
    nnbench::memo::clear();
}

/// A model "on the GPU": 4 MiB of device memory, as a memo of tensors on a
/// CUDA device reports it, and none of host memory.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct GpuModel(u8);

impl Memo for GpuModel {
    type Value = u8;
    fn compute(&self) -> nnbench::Result<u8> {
        Ok(self.0)
    }
    fn size_of(&self, _: &u8) -> Option<u64> {
        Some(0)
    }
    fn device_bytes(&self, _: &u8) -> u64 {
        4 * MIB
    }
}

#[nnbench::product(model = [GpuModel(1), GpuModel(2), GpuModel(3)])]
fn on_gpu(model: &u8) -> u8 {
    *model
}

/// GPU bytes the memo cache held at the start of each case.
fn gpu_held(record: &RunRecord) -> Vec<u64> {
    record
        .cases
        .iter()
        .map(|c| c.memory.memo_gpu_resident_bytes)
        .collect()
}

#[test]
fn a_gpu_budget_evicts_memos_by_their_device_bytes_and_the_record_counts_them() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    nnbench::memo::clear();
    let kept = runner("on_gpu/", dir.path())
        .keep_memos(true)
        .run()
        .unwrap();
    assert_eq!(
        gpu_held(&kept),
        [0, 4 * MIB, 8 * MIB],
        "GPU memos pile up when kept"
    );
    assert!(kept.cases.iter().all(|c| c.memory.memo_resident_bytes == 0));
    nnbench::memo::clear();

    let budgeted = runner("on_gpu/", dir.path())
        .keep_memos(true)
        .memo_gpu_budget(5 * MIB)
        .run()
        .unwrap();
    assert_eq!(
        gpu_held(&budgeted),
        [0, 4 * MIB, 4 * MIB],
        "one GPU model at a time"
    );
    assert_eq!(budgeted.cases[1].memo.evicted, ["GpuModel(1)"]);
    assert_eq!(budgeted.cases[2].memo.evicted, ["GpuModel(2)"]);
    nnbench::memo::clear();
}

// --- disk tier ------------------------------------------------------------------

static FEATURE_COMPUTES: AtomicUsize = AtomicUsize::new(0);

/// A persisted array memo.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Features {
    seed: u64,
    version: u32,
}

impl Memo for Features {
    type Value = Array2<f64>;
    fn compute(&self) -> nnbench::Result<Array2<f64>> {
        FEATURE_COMPUTES.fetch_add(1, Ordering::SeqCst);
        let seed = self.seed as f64;
        Ok(Array2::from_shape_fn((64, 32), |(i, j)| {
            seed + (i * 32 + j) as f64
        }))
    }
    fn store(&self) -> Option<Box<dyn Format<Array2<f64>>>> {
        Some(Box::new(Npy))
    }
    fn version(&self) -> u32 {
        self.version
    }
}

#[nnbench::product(features = [Features { seed: 1, version: 1 }, Features { seed: 2, version: 1 }, Features { seed: 3, version: 1 }])]
fn persisted_sum(features: &Array2<f64>) -> f64 {
    features.sum()
}

fn computes(record: &RunRecord) -> Vec<u64> {
    record.cases.iter().map(|c| c.memo.computes).collect()
}

#[test]
fn a_second_run_of_a_persisted_sweep_computes_nothing() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let first = runner("persisted_sum/", dir.path()).run().unwrap();
    assert_eq!(computes(&first), [1, 1, 1]);
    assert_eq!(entries(dir.path()).len(), 3);
    assert!(nnbench::memo::is_empty());

    let second = runner("persisted_sum/", dir.path()).run().unwrap();
    assert_eq!(computes(&second), [0, 0, 0]);
    assert!(second.cases.iter().all(|c| c.memo.disk_hits == 1));
    assert_eq!(second.memo.computes, 0);
    assert_eq!(second.memo.disk_hits, 3);
    assert!(second.memo.disk_bytes_at_end >= 3 * 64 * 32 * 8);
    assert_eq!(values(&second), values(&first));
}

#[test]
fn corrupt_truncated_foreign_and_outdated_entries_are_recomputed() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    runner("persisted_sum/", dir.path()).run().unwrap();
    let files = entries(dir.path());
    assert_eq!(files.len(), 3);
    let path_of = |seed: u64| -> PathBuf {
        nnbench::memo::set_disk_tier(nnbench::memo::DiskTier::At(dir.path().to_owned()));
        let before = entries(dir.path());
        // Which file belongs to which memo: the one whose header names it.
        before
            .into_iter()
            .find(|p| {
                let bytes = std::fs::read(p).unwrap();
                String::from_utf8_lossy(&bytes[..512]).contains(&format!("seed: {seed},"))
            })
            .unwrap()
    };
    let (one, two, three) = (path_of(1), path_of(2), path_of(3));

    // Seed 1: a flipped byte in the payload.
    let mut bytes = std::fs::read(&one).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&one, bytes).unwrap();
    // Seed 2: truncated.
    let bytes = std::fs::read(&two).unwrap();
    std::fs::write(&two, &bytes[..bytes.len() - 100]).unwrap();
    // Seed 3: another memo's entry in its place.
    std::fs::copy(&one, &three).unwrap();

    let before = FEATURE_COMPUTES.load(Ordering::SeqCst);
    let record = runner("persisted_sum/", dir.path()).run().unwrap();
    assert_eq!(record.failed(), 0);
    assert_eq!(
        computes(&record),
        [1, 1, 1],
        "every damaged entry is recomputed"
    );
    assert_eq!(FEATURE_COMPUTES.load(Ordering::SeqCst), before + 3);
    let expected = |seed: f64| (0..64 * 32).map(|k| seed + k as f64).sum::<f64>();
    assert_eq!(
        values(&record),
        [expected(1.0), expected(2.0), expected(3.0)].map(serde_json::Value::from)
    );

    // ...and rewritten: the next run loads all three.
    let again = runner("persisted_sum/", dir.path()).run().unwrap();
    assert_eq!(computes(&again), [0, 0, 0]);

    // A new version of the memo does not read the old entries.
    let newer = Features {
        seed: 1,
        version: 2,
    };
    let before = FEATURE_COMPUTES.load(Ordering::SeqCst);
    nnbench::memo::resolve(&newer).unwrap();
    assert_eq!(FEATURE_COMPUTES.load(Ordering::SeqCst), before + 1);
    nnbench::memo::evict(&newer);
    nnbench::memo::set_disk_tier(nnbench::memo::DiskTier::Off);
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Mapped(u64);

impl Memo for Mapped {
    type Value = MappedArray<f32, Ix2>;
    fn compute(&self) -> nnbench::Result<MappedArray<f32, Ix2>> {
        let n = self.0 as usize;
        Ok(MappedArray::from_array(Array2::from_shape_fn(
            (n, n),
            |(i, j)| (i * n + j) as f32,
        )))
    }
    fn store(&self) -> Option<Box<dyn Format<MappedArray<f32, Ix2>>>> {
        Some(Box::new(MappedNpy))
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Vocabulary(&'static str);

impl Memo for Vocabulary {
    type Value = Vec<String>;
    fn compute(&self) -> nnbench::Result<Vec<String>> {
        Ok(self.0.split(' ').map(str::to_owned).collect())
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<String>>>> {
        Some(Box::new(Json))
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Counts(u32);

impl Memo for Counts {
    type Value = Vec<u32>;
    fn compute(&self) -> nnbench::Result<Vec<u32>> {
        Ok((0..self.0).collect())
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u32>>>> {
        Some(Box::new(Binary))
    }
}

#[test]
fn mapped_json_and_binary_formats_round_trip() {
    let _shared = shared();
    let dir = tempfile::tempdir().unwrap();
    let tier = nnbench::memo::DiskTier::At(dir.path().to_owned());
    nnbench::memo::with_disk_tier(tier, || formats_round_trip(dir.path()));
}

fn formats_round_trip(dir: &Path) {
    let computed = nnbench::memo::resolve(&Mapped(64)).unwrap();
    assert!(!computed.is_mapped());
    let sum = computed.view().sum();
    drop(computed);
    nnbench::memo::evict(&Mapped(64));
    let loaded = nnbench::memo::resolve(&Mapped(64)).unwrap();
    assert!(loaded.is_mapped(), "loaded from disk as a memory map");
    assert_eq!(loaded.view().sum(), sum);
    assert_eq!(loaded.view()[[2, 3]], 131.0);
    drop(loaded);
    nnbench::memo::evict(&Mapped(64));

    for _ in 0..2 {
        assert_eq!(
            *nnbench::memo::resolve(&Vocabulary("a b c")).unwrap(),
            ["a", "b", "c"]
        );
        assert_eq!(
            nnbench::memo::resolve(&Counts(5))
                .unwrap()
                .iter()
                .sum::<u32>(),
            10
        );
        nnbench::memo::evict(&Vocabulary("a b c"));
        nnbench::memo::evict(&Counts(5));
    }
    let stats = nnbench::memo::stats_by_type();
    let disk_hits = |name: &str| {
        stats
            .iter()
            .find(|t| t.type_name.ends_with(name))
            .unwrap()
            .stats
            .disk_hits
    };
    assert!(disk_hits("Vocabulary") >= 1 && disk_hits("Counts") >= 1 && disk_hits("Mapped") >= 1);
    let files = entries(dir);
    assert!(
        files
            .iter()
            .any(|p| String::from_utf8_lossy(&std::fs::read(p).unwrap())
                .contains(r#"["a","b","c"]"#)),
        "JSON stays readable: {files:?}"
    );
}

#[test]
fn a_prune_passes_over_an_entry_a_value_holds_mapped() {
    let _shared = shared();
    let dir = tempfile::tempdir().unwrap();
    let tier = nnbench::memo::DiskTier::At(dir.path().to_owned());
    nnbench::memo::with_disk_tier(tier.clone(), || {
        let memo = Mapped(33);
        drop(nnbench::memo::resolve(&memo).unwrap());
        nnbench::memo::evict(&memo);
        let loaded = nnbench::memo::resolve(&memo).unwrap();
        assert!(loaded.is_mapped());
        // A prune or clear, here or on another node, would pull the
        // mapped pages from under the value (SIGBUS on a network file
        // system): they pass over the entry while it is mapped.
        assert_eq!(tier.clear().unwrap(), 0);
        let pruned = tier.prune(0).unwrap();
        assert!(pruned.removed.is_empty(), "{pruned:?}");
        assert_eq!(pruned.kept, 1);
        assert_eq!(loaded.view()[[1, 1]], 34.0);
        drop(loaded);
        nnbench::memo::evict(&memo);
        assert_eq!(tier.clear().unwrap(), 1);
        assert!(entries(dir.path()).is_empty());
    });
}

// --- spill ------------------------------------------------------------------------

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Spilled(u8);

static SPILLED_COMPUTES: AtomicUsize = AtomicUsize::new(0);

impl Memo for Spilled {
    type Value = Vec<u64>;
    fn compute(&self) -> nnbench::Result<Vec<u64>> {
        SPILLED_COMPUTES.fetch_add(1, Ordering::SeqCst);
        Ok(vec![u64::from(self.0); 256 * 1024])
    }
    fn size_of(&self, value: &Vec<u64>) -> Option<u64> {
        Some(8 * value.len() as u64)
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u64>>>> {
        Some(Box::new(Binary))
    }
}

#[nnbench::product(s = [Spilled(2)])]
fn needs_room(s: &[u64]) -> u64 {
    s[0]
}

#[test]
fn under_a_budget_an_evicted_persisted_memo_is_spilled_not_lost() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // Computed while the tier is off: not on disk yet.
    nnbench::memo::set_disk_tier(nnbench::memo::DiskTier::Off);
    drop(nnbench::memo::resolve(&Spilled(1)).unwrap());
    let spills = nnbench::memo::stats().spills;

    let record = runner("needs_room/", dir.path())
        .memo_budget(3 * MIB)
        .run()
        .unwrap();
    assert_eq!(record.failed(), 0);
    assert_eq!(
        record.cases[0].memo.evicted[0], "Spilled(1)",
        "{:?}",
        record.cases[0].memo
    );
    assert_eq!(nnbench::memo::stats().spills, spills + 1);
    assert_eq!(record.memo.spills, 1);

    // The run's tier was its own: resolving outside it names the folder.
    nnbench::memo::set_disk_tier(nnbench::memo::DiskTier::At(dir.path().to_owned()));
    let before = SPILLED_COMPUTES.load(Ordering::SeqCst);
    assert_eq!(nnbench::memo::resolve(&Spilled(1)).unwrap()[0], 1);
    assert_eq!(
        SPILLED_COMPUTES.load(Ordering::SeqCst),
        before,
        "read back from its spill"
    );
    nnbench::memo::clear();
    nnbench::memo::set_disk_tier(nnbench::memo::DiskTier::Off);
}

// --- processes sharing the tier ---------------------------------------------------

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Raced;

impl Memo for Raced {
    type Value = Vec<u32>;
    fn compute(&self) -> nnbench::Result<Vec<u32>> {
        std::thread::sleep(std::time::Duration::from_millis(50));
        Ok((0..100_000).collect())
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u32>>>> {
        Some(Box::new(Binary))
    }
}

/// The body of the racing child processes, not a test of its own: it
/// fails where their environment is not set.
#[test]
#[ignore = "a child process's body, run by two_processes_racing_to_write_one_entry_leave_one_valid_entry"]
fn child_helper_race() {
    let dir = std::env::var_os("NNBENCH_TEST_RACE_DIR")
        .expect("run by the racing test, with NNBENCH_TEST_RACE_DIR set");
    nnbench::memo::set_disk_tier(nnbench::memo::DiskTier::At(dir.into()));
    assert_eq!(nnbench::memo::resolve(&Raced).unwrap().len(), 100_000);
}

#[test]
fn two_processes_racing_to_write_one_entry_leave_one_valid_entry() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["child_helper_race", "--exact", "--ignored", "--quiet"])
                .env("NNBENCH_TEST_RACE_DIR", dir.path())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let files = entries(dir.path());
    assert_eq!(
        files.len(),
        1,
        "one entry, no temporary file left: {files:?}"
    );

    nnbench::memo::set_disk_tier(nnbench::memo::DiskTier::At(dir.path().to_owned()));
    let hits = nnbench::memo::stats().disk_hits;
    assert_eq!(
        nnbench::memo::resolve(&Raced)
            .unwrap()
            .iter()
            .map(|&v| u64::from(v))
            .sum::<u64>(),
        4_999_950_000
    );
    assert_eq!(
        nnbench::memo::stats().disk_hits,
        hits + 1,
        "the entry is valid"
    );
    nnbench::memo::clear();
    nnbench::memo::set_disk_tier(nnbench::memo::DiskTier::Off);
}

#[test]
fn memo_cache_flags_parse() {
    for args in [
        vec!["--memo-budget", "8GiB"],
        vec!["--memo-budget", "512 MB", "--disk-tier-dir", "/tmp/x"],
        vec!["--no-disk-tier", "--disk-tier", "clear"],
        vec!["--memo-gpu-budget", "40GiB"],
    ] {
        assert!(Runner::from_args(args.clone()).is_ok(), "{args:?}");
    }
    for (args, named) in [
        (vec!["--memo-budget", "lots"], "lots"),
        (vec!["--memo-gpu-budget", "all"], "all"),
        (vec!["--disk-tier", "purge"], "purge"),
        (
            vec!["--no-disk-tier", "--disk-tier-dir", "x"],
            "--disk-tier-dir",
        ),
    ] {
        let err = Runner::from_args(args.clone())
            .err()
            .unwrap_or_else(|| panic!("{args:?} accepted"));
        assert!(err.to_string().contains(named), "{args:?}: {err}");
    }
}
