//! Hostile files: valid `.npy` files, disk-tier entries and run records,
//! mutated (cut short, bytes flipped or overwritten, garbage appended,
//! header fields replaced by huge shapes and foreign dtypes), fed to every
//! reader. Each returns an error that names the file, or a value; none
//! panics, and none allocates much more than the file holds.
//!
//! One test, sequential, so that the heap peaks measured around each read
//! are the read's own. `NNBENCH_HOSTILE_CASES` scales the inputs tried
//! (default 20,000 in all, drawn anew each run); the count is printed.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use ndarray::{Array2, Ix1, Ix2, IxDyn};
use nnbench::memo::DiskTier;
use nnbench::store::{Binary, Format, Json, Npy};
use nnbench::{Memo, RunRecord};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

#[global_allocator]
static ALLOC: nnbench::alloc::TrackingAllocator = nnbench::alloc::TrackingAllocator::system();

/// One change to a file's bytes.
#[derive(Clone, Debug)]
enum Mutation {
    Truncate(Index),
    Flip(Index, u8),
    Overwrite(Index, Vec<u8>),
    Append(Vec<u8>),
    /// The `.npy` header's length field (bytes 8 and 9 of version 1).
    HeaderLength(u16),
    /// The `.npy` header's text, replaced whole.
    Header(String),
}

impl Mutation {
    fn apply(&self, bytes: &mut Vec<u8>) {
        match self {
            Mutation::Truncate(at) => bytes.truncate(at.index(bytes.len() + 1)),
            Mutation::Flip(at, mask) if !bytes.is_empty() => {
                let i = at.index(bytes.len());
                bytes[i] ^= mask;
            }
            Mutation::Overwrite(at, with) if !bytes.is_empty() => {
                let start = at.index(bytes.len());
                for (i, b) in with.iter().enumerate() {
                    match bytes.get_mut(start + i) {
                        Some(slot) => *slot = *b,
                        None => bytes.push(*b),
                    }
                }
            }
            Mutation::Append(tail) => bytes.extend_from_slice(tail),
            Mutation::HeaderLength(n) if bytes.len() >= 10 => {
                bytes[8..10].copy_from_slice(&n.to_le_bytes());
            }
            Mutation::Header(text) if bytes.len() >= 10 => {
                let old = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
                let data = bytes.split_off((10 + old).min(bytes.len()));
                bytes.truncate(8);
                bytes.extend_from_slice(&(text.len() as u16).to_le_bytes());
                bytes.extend_from_slice(text.as_bytes());
                bytes.extend_from_slice(&data);
            }
            _ => {}
        }
    }
}

/// Header texts a hostile or broken writer could leave.
fn header() -> impl Strategy<Value = String> {
    let descr = prop_oneof![
        Just("'<f8'".to_owned()),
        Just("'<f4'".to_owned()),
        Just("'>f8'".to_owned()),
        Just("'|u1'".to_owned()),
        Just("'<c16'".to_owned()),
        Just("'|O'".to_owned()),
        Just("'<U8'".to_owned()),
        Just("[('a', '<f8')]".to_owned()),
        "[ -~]{0,12}".prop_map(|s| format!("'{s}'")),
    ];
    let dimension = prop_oneof![
        0u64..8,
        Just(u64::MAX),
        Just(1 << 40),
        Just(u64::from(u32::MAX)),
        any::<u64>(),
    ]
    .prop_map(|n| n.to_string());
    let shape = prop::collection::vec(
        prop_oneof![dimension, Just("-1".to_owned()), Just("x".to_owned())],
        0..5,
    )
    .prop_map(|dims| format!("({},)", dims.join(", ")));
    let order = prop_oneof![Just("False"), Just("True"), Just("0"), Just("None")];
    (descr, order, shape, 0usize..80).prop_map(|(descr, order, shape, pad)| {
        format!(
            "{{'descr': {descr}, 'fortran_order': {order}, 'shape': {shape}, }}{}\n",
            " ".repeat(pad)
        )
    })
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => any::<Index>().prop_map(Mutation::Truncate),
        3 => (any::<Index>(), 1u8..).prop_map(|(at, mask)| Mutation::Flip(at, mask)),
        2 => (any::<Index>(), prop::collection::vec(any::<u8>(), 1..24))
            .prop_map(|(at, with)| Mutation::Overwrite(at, with)),
        1 => prop::collection::vec(any::<u8>(), 1..64).prop_map(Mutation::Append),
        1 => any::<u16>().prop_map(Mutation::HeaderLength),
        3 => header().prop_map(Mutation::Header),
    ]
}

fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    prop::collection::vec(mutation(), 1..4)
}

/// How many inputs each reader is given: a share of 20,000, or of
/// `NNBENCH_HOSTILE_CASES`. The inputs are drawn anew each run, so runs
/// add up to more than any one of them tries.
fn cases(share: f64) -> u32 {
    let total: f64 = std::env::var("NNBENCH_HOSTILE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000.0);
    (total * share).ceil() as u32
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    })
}

/// Runs `read`; a panic fails the input, and an error must name `path`.
fn survives<T, E: std::fmt::Display>(
    path: &Path,
    read: impl FnOnce() -> Result<T, E>,
) -> Result<Option<T>, TestCaseError> {
    match catch_unwind(AssertUnwindSafe(read)) {
        Err(_) => Err(TestCaseError::fail("the reader panicked")),
        Ok(Err(error)) => {
            let name = path.file_name().unwrap().to_string_lossy();
            let message = error.to_string();
            prop_assert!(
                message.contains(&*name),
                "{message:?} does not name the file"
            );
            Ok(None)
        }
        Ok(Ok(value)) => Ok(Some(value)),
    }
}

/// Heap the closure allocated at its peak, beyond what it started with.
fn heap_peak<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let before = nnbench::alloc::stats().map_or(0, |s| s.current_bytes);
    nnbench::alloc::reset_peak();
    let out = f();
    let peak = nnbench::alloc::stats().map_or(0, |s| s.peak_bytes);
    (out, peak.saturating_sub(before))
}

/// The `.npy` readers on mutated arrays.
fn npy_readers(dir: &Path) -> u32 {
    let clean = dir.join("clean.npy");
    nnbench::npy::write(
        &clean,
        &Array2::from_shape_fn((6, 5), |(i, j)| (i * 5 + j) as f64),
    )
    .unwrap();
    let original = std::fs::read(&clean).unwrap();
    let path = dir.join("hostile.npy");
    let n = cases(0.6);
    runner(n)
        .run(&mutations(), |changes| {
            let mut bytes = original.clone();
            for change in &changes {
                change.apply(&mut bytes);
            }
            std::fs::write(&path, &bytes).unwrap();
            let (read, peak) =
                heap_peak(|| survives(&path, || nnbench::npy::read::<f64, Ix2>(&path)));
            read?;
            // What a valid file of this length could hold, and bookkeeping.
            let allowed = 2 * bytes.len() as u64 + (64 << 10);
            prop_assert!(
                peak <= allowed,
                "read allocated {peak} bytes for a {}-byte file",
                bytes.len()
            );
            survives(&path, || nnbench::npy::read::<f32, IxDyn>(&path))?;
            survives(&path, || nnbench::npy::read::<u8, Ix1>(&path))?;
            survives(&path, || nnbench::npy::read_header(&path))?;
            survives(&path, || nnbench::npy::map::<f64, Ix2>(&path))?;
            Ok(())
        })
        .unwrap_or_else(|e| panic!("npy readers: {e}"));
    println!("{n} hostile .npy files, each read by 5 readers");
    n
}

/// `RunRecord::read` on mutated records.
fn record_reader(dir: &Path) -> u32 {
    let clean = dir.join("clean.json");
    let record = nnbench::Runner::new()
        .filter("hostile_record_case")
        .quiet(true)
        .test_mode(true)
        .out(&clean)
        .run()
        .unwrap();
    assert_eq!(record.cases.len(), 1);
    let original = std::fs::read(&clean).unwrap();
    let path = dir.join("hostile.json");
    let n = cases(0.3);
    runner(n)
        .run(&mutations(), |changes| {
            let mut bytes = original.clone();
            for change in changes
                .iter()
                .filter(|c| !matches!(c, Mutation::Header(_) | Mutation::HeaderLength(_)))
            {
                change.apply(&mut bytes);
            }
            std::fs::write(&path, &bytes).unwrap();
            let (read, peak) = heap_peak(|| survives(&path, || RunRecord::read(&path)));
            read?;
            let allowed = 16 * bytes.len() as u64 + (64 << 10);
            prop_assert!(
                peak <= allowed,
                "read allocated {peak} bytes for a {}-byte record",
                bytes.len()
            );
            Ok(())
        })
        .unwrap_or_else(|e| panic!("record reader: {e}"));
    println!("{n} hostile run records");
    n
}

#[nnbench::benchmark]
fn hostile_record_case() -> f64 {
    0.5
}

/// A persisted array, a binary and a JSON entry of the disk tier.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Weights;

impl Memo for Weights {
    type Value = Array2<f64>;
    fn compute(&self) -> nnbench::Result<Array2<f64>> {
        Ok(Array2::from_shape_fn((4, 3), |(i, j)| (i + j) as f64))
    }
    fn store(&self) -> Option<Box<dyn Format<Array2<f64>>>> {
        Some(Box::new(Npy))
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Counts;

impl Memo for Counts {
    type Value = Vec<u32>;
    fn compute(&self) -> nnbench::Result<Vec<u32>> {
        Ok((0..40).collect())
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u32>>>> {
        Some(Box::new(Binary))
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Vocabulary;

impl Memo for Vocabulary {
    type Value = Vec<String>;
    fn compute(&self) -> nnbench::Result<Vec<String>> {
        Ok(["the", "cat", "sat"].map(str::to_owned).to_vec())
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<String>>>> {
        Some(Box::new(Json))
    }
}

/// The one file under `dir` (the disk tier keeps an entry per memo).
fn entry_in(dir: &Path) -> std::path::PathBuf {
    let mut files: Vec<_> = walk(dir);
    files.retain(|p| p.extension().is_none_or(|e| e != "tmp"));
    assert_eq!(files.len(), 1, "{files:?}");
    files.remove(0)
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|e| {
            let path = e.path();
            if path.is_dir() {
                walk(&path)
            } else {
                vec![path]
            }
        })
        .collect()
}

/// A damaged entry is recomputed, with the right value, never a panic.
fn disk_entries<M: Memo>(dir: &Path, memo: M) -> u32
where
    M::Value: PartialEq + std::fmt::Debug,
{
    let tier = dir.join(format!("{memo:?}"));
    let tier_of = || DiskTier::At(tier.clone());
    let expected = memo.compute().unwrap();
    nnbench::memo::with_disk_tier(tier_of(), || nnbench::memo::resolve(&memo).unwrap());
    nnbench::memo::evict(&memo);
    let entry = entry_in(&tier);
    let original = std::fs::read(&entry).unwrap();
    let n = cases(0.1 / 3.0);
    runner(n)
        .run(&mutations(), |changes| {
            let mut bytes = original.clone();
            for change in &changes {
                change.apply(&mut bytes);
            }
            std::fs::write(&entry, &bytes).unwrap();
            let value = catch_unwind(AssertUnwindSafe(|| {
                nnbench::memo::with_disk_tier(tier_of(), || nnbench::memo::resolve(&memo))
            }));
            nnbench::memo::evict(&memo);
            let value =
                value.map_err(|_| TestCaseError::fail("resolving a damaged entry panicked"))?;
            let value = value.map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
            prop_assert_eq!(&*value, &expected);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("disk entries of {memo:?}: {e}"));
    println!("{n} hostile disk-tier entries of {memo:?}");
    n
}

#[test]
fn every_reader_survives_hostile_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut tried = npy_readers(dir.path());
    tried += record_reader(dir.path());
    tried += disk_entries(dir.path(), Weights);
    tried += disk_entries(dir.path(), Counts);
    tried += disk_entries(dir.path(), Vocabulary);
    println!("hostile files tried: {tried}");
    assert!(tried >= cases(1.0), "{tried}");
}
