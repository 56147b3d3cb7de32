//! The seed sweep: three models (square `f64` matrices stored as `.npy`)
//! scored against one dataset, one model resident at a time.
//!
//! The matrices are generated deterministically under
//! `target/nnbench/sweep-data/` on first use; `NNBENCH_SWEEP_N` sets their
//! side (default 512, 2 MiB each).
//!
//! `cargo bench --bench sweep -- --out run.json`

use std::path::PathBuf;

use ndarray::Array2;
use nnbench::{Memo, Params, State};

/// Side of every matrix.
fn side() -> usize {
    std::env::var("NNBENCH_SWEEP_N")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(512)
}

/// A square matrix stored as `.npy`, generated from `seed` if missing: the
/// memo of each model and of the dataset.
///
/// Its `Debug` form names the case in ids and records, so it is short and
/// the same on every machine (no absolute path).
#[derive(Clone, Hash, PartialEq, Eq)]
struct MatrixFile {
    name: &'static str,
    seed: u64,
    side: usize,
}

impl std::fmt::Debug for MatrixFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}x{}", self.name, self.side, self.side)
    }
}

impl MatrixFile {
    fn new(name: &'static str, seed: u64) -> Self {
        Self {
            name,
            seed,
            side: side(),
        }
    }

    fn path(&self) -> PathBuf {
        nnbench::target_dir()
            .join("nnbench/sweep-data")
            .join(format!("{}-{}.npy", self.name, self.side))
    }

    fn load(&self) -> nnbench::Result<Array2<f64>> {
        let path = self.path();
        if !path.exists() {
            nnbench::npy::write(&path, &generate(self.side, self.seed))?;
        }
        Ok(nnbench::npy::read(&path)?)
    }
}

/// Values in [-1, 1) from a SplitMix64 stream: the same matrix on every machine.
fn generate(side: usize, seed: u64) -> Array2<f64> {
    let mut state = seed;
    Array2::from_shape_simple_fn((side, side), || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    })
}

impl Memo for MatrixFile {
    type Value = Array2<f64>;
    fn compute(&self) -> nnbench::Result<Array2<f64>> {
        self.load()
    }
    fn size_of(&self, value: &Array2<f64>) -> Option<u64> {
        Some(std::mem::size_of_val(value.as_slice()?) as u64)
    }
}

/// Frees the model as soon as its case is done (automatic eviction would
/// too; this is the explicit form, as hooks written by hand look).
fn evict_model(_state: &State, params: &Params) {
    if let Some(model) = params.memo::<MatrixFile>("model") {
        nnbench::memo::evict(model);
    }
}

#[nnbench::product(
    model = [
        MatrixFile::new("model1", 1),
        MatrixFile::new("model2", 2),
        MatrixFile::new("model3", 3),
    ],
    data = [MatrixFile::new("data", 1000)],
    teardown = evict_model,
    tags = ["cpu"],
)]
fn accuracy(model: &Array2<f64>, data: &Array2<f64>) -> f64 {
    model.dot(data).sum()
}

nnbench::main!();
