//! A disk tier entry on any bytes, where a valid one of each format was:
//! the memo is resolved from it (loaded, or computed again and saved over
//! it, with a warning), and the tier's entries are listed, as `nnbench
//! cache` lists them. The input's first byte picks the format.
//! `NNBENCH_FUZZ_SEEDS=DIR` writes the valid entries to DIR as inputs (the
//! seed corpus, `fuzz/corpus/disk_entry`).

#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use nnbench::Memo;
use nnbench::memo::{self, DiskTier};
use nnbench::store::{Binary, Format, Json, Npy};

/// A value of each format, made from its number.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Weights(u8);

impl Memo for Weights {
    type Value = Vec<u32>;
    fn compute(&self) -> nnbench::Result<Vec<u32>> {
        Ok((0..64).map(|i| i * u32::from(self.0)).collect())
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u32>>>> {
        Some(match self.0 % 2 {
            0 => Box::new(Json),
            _ => Box::new(Binary),
        })
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Matrix;

impl Memo for Matrix {
    type Value = ndarray::Array2<f64>;
    fn compute(&self) -> nnbench::Result<ndarray::Array2<f64>> {
        Ok(ndarray::Array2::from_shape_fn((8, 4), |(i, j)| {
            (i * 4 + j) as f64
        }))
    }
    fn store(&self) -> Option<Box<dyn Format<ndarray::Array2<f64>>>> {
        Some(Box::new(Npy))
    }
}

/// The tier, and the file of each format's entry in it.
struct Tier {
    dir: tempfile::TempDir,
    entries: Vec<PathBuf>,
}

static TIER: LazyLock<Tier> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("a folder for the tier");
    memo::set_disk_tier(DiskTier::At(dir.path().to_owned()));
    let mut entries = Vec::new();
    let mut made = |resolve: &dyn Fn()| {
        let before = files(dir.path());
        resolve();
        let after = files(dir.path());
        entries.extend(after.into_iter().filter(|f| !before.contains(f)));
    };
    made(&|| drop(memo::resolve(&Weights(2)).expect("a Json entry")));
    made(&|| drop(memo::resolve(&Weights(3)).expect("a Binary entry")));
    made(&|| drop(memo::resolve(&Matrix).expect("an Npy entry")));
    assert_eq!(entries.len(), 3, "one entry a format: {entries:?}");
    // The seed corpus: these entries as inputs, which only this target
    // can make (an entry names its memo's type, this crate's).
    if let Some(seeds) = std::env::var_os("NNBENCH_FUZZ_SEEDS") {
        for (pick, entry) in entries.iter().enumerate() {
            let mut input = vec![pick as u8];
            input.extend(std::fs::read(entry).expect("the entry read"));
            let seed = PathBuf::from(&seeds).join(format!("entry-{pick}"));
            std::fs::write(&seed, input).expect("the seed written");
        }
    }
    Tier { dir, entries }
});

/// The entries' files under `dir`.
fn files(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "memo") {
                found.push(path);
            }
        }
    }
    found
}

fuzz_target!(|bytes: &[u8]| {
    let Some((&pick, rest)) = bytes.split_first() else {
        return;
    };
    let tier = &*TIER;
    let at = usize::from(pick) % tier.entries.len();
    std::fs::write(&tier.entries[at], rest).expect("the entry written");
    memo::clear();
    let _ = match at {
        0 => memo::resolve(&Weights(2)).map(drop),
        1 => memo::resolve(&Weights(3)).map(drop),
        _ => memo::resolve(&Matrix).map(drop),
    };
    let _ = DiskTier::At(tier.dir.path().to_owned()).entries();
});
