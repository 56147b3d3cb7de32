//! Memos built from memos: a corpus, models trained on it, and quantized
//! models derived from those, swept as a user would. Its own test binary:
//! the run empties the global cache and counts every compute.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use nnbench::memo::{self, DiskTier};
use nnbench::store::Json;
use nnbench::{Memo, Runner};

static CORPUS: AtomicUsize = AtomicUsize::new(0);
static TRAINED: AtomicUsize = AtomicUsize::new(0);
static QUANTIZED: AtomicUsize = AtomicUsize::new(0);

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Corpus;

impl Memo for Corpus {
    type Value = Vec<f32>;
    fn compute(&self) -> nnbench::Result<Vec<f32>> {
        CORPUS.fetch_add(1, Ordering::SeqCst);
        Ok((0..4096).map(|i| (i % 17) as f32).collect())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Trained {
    width: usize,
}

impl Memo for Trained {
    type Value = Vec<f32>;
    fn compute(&self) -> nnbench::Result<Vec<f32>> {
        TRAINED.fetch_add(1, Ordering::SeqCst);
        let corpus = memo::resolve(&Corpus)?;
        Ok(corpus.chunks(self.width).map(|c| c.iter().sum()).collect())
    }
    fn store(&self) -> Option<Box<dyn nnbench::store::Format<Vec<f32>>>> {
        Some(Box::new(Json))
    }
}

/// A view over the trained weights: it keeps them alive, as a derived
/// model sharing its parent's tensors does.
struct Scaled {
    weights: Arc<Vec<f32>>,
    scale: f32,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Quantized {
    width: usize,
}

impl Memo for Quantized {
    type Value = Scaled;
    fn compute(&self) -> nnbench::Result<Scaled> {
        QUANTIZED.fetch_add(1, Ordering::SeqCst);
        let weights = memo::resolve(&Trained { width: self.width })?;
        Ok(Scaled {
            weights,
            scale: 0.5,
        })
    }
}

#[nnbench::product(model = [Quantized { width: 2 }, Quantized { width: 4 }], batch = [1usize, 8])]
fn infer(model: &Scaled, batch: usize) -> f32 {
    model.weights.iter().take(batch).sum::<f32>() * model.scale
}

fn evicted_by(record: &nnbench::RunRecord, memo: &str) -> Vec<usize> {
    record
        .cases
        .iter()
        .enumerate()
        .filter(|(_, c)| c.memo.evicted.iter().any(|e| e == memo))
        .map(|(at, _)| at)
        .collect()
}

#[test]
fn a_chain_of_memos_is_computed_once_and_each_goes_after_its_last_dependent_case() {
    let disk = tempfile::tempdir().unwrap();
    let run = || {
        Runner::new()
            .test_mode(true)
            .quiet(true)
            .disk_tier(DiskTier::At(disk.path().to_owned()))
            .run()
            .unwrap()
    };

    let first = run();
    assert_eq!(first.failed(), 0);
    let ids: Vec<&str> = first.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "infer/model=Quantized { width: 2 },batch=1",
            "infer/model=Quantized { width: 2 },batch=8",
            "infer/model=Quantized { width: 4 },batch=1",
            "infer/model=Quantized { width: 4 },batch=8",
        ]
    );
    // The corpus is read once for both trainings, each model trained and
    // derived once.
    assert_eq!(CORPUS.load(Ordering::SeqCst), 1);
    assert_eq!(TRAINED.load(Ordering::SeqCst), 2);
    assert_eq!(QUANTIZED.load(Ordering::SeqCst), 2);
    // Nothing outlived its eviction, and nothing was left behind.
    for case in &first.cases {
        assert!(case.warnings.is_empty(), "{}: {:?}", case.id, case.warnings);
        assert!(
            case.memo.leaked.is_empty(),
            "{}: {:?}",
            case.id,
            case.memo.leaked
        );
    }
    assert!(first.warnings.is_empty(), "{:?}", first.warnings);
    assert!(memo::is_empty(), "left in the cache: {}", memo::len());
    // Each memo is evicted once: the first derived model after its last
    // case; the corpus and the second chain after the last case. The first
    // trained model stays until the second derived model is computed and
    // seen not to be built from it: before, it might have been.
    assert_eq!(evicted_by(&first, "Quantized { width: 2 }"), [1]);
    assert_eq!(evicted_by(&first, "Quantized { width: 4 }"), [3]);
    assert_eq!(evicted_by(&first, "Trained { width: 4 }"), [3]);
    assert_eq!(evicted_by(&first, "Corpus"), [3]);
    assert_eq!(evicted_by(&first, "Trained { width: 2 }"), [2]);
    assert_eq!(first.memo.evictions, 5);

    // The cache report shows the chain.
    let by_type = memo::stats_by_type();
    let built_from = |name: &str| {
        by_type
            .iter()
            .find(|t| t.type_name.ends_with(name))
            .map(|t| t.built_from.clone())
            .unwrap()
    };
    assert_eq!(built_from("::Quantized"), ["memo_chain::Trained"]);
    assert_eq!(built_from("::Trained"), ["memo_chain::Corpus"]);
    assert!(built_from("::Corpus").is_empty());
    let summary = memo::summary();
    assert!(summary.contains("built from"), "{summary}");
    assert!(summary.contains("memo_chain::Corpus"), "{summary}");

    // The trained models persist: a second run loads them and reads no
    // corpus at all.
    let second = run();
    assert_eq!(second.failed(), 0);
    assert_eq!(CORPUS.load(Ordering::SeqCst), 1);
    assert_eq!(TRAINED.load(Ordering::SeqCst), 2);
    assert_eq!(QUANTIZED.load(Ordering::SeqCst), 4);
    assert_eq!(second.memo.disk_hits, 2);
    assert!(memo::is_empty(), "left in the cache: {}", memo::len());
}
