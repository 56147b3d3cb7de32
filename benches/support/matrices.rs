//! Matrices stored as `.npy` under the target folder, generated
//! deterministically on first use: the fixtures of the seed sweep.

use std::path::PathBuf;

use ndarray::Array2;
use nnbench::Memo;

/// A matrix stored as `.npy`, generated from `seed` if missing: the memo
/// of a model or of a dataset.
///
/// Its `Debug` form names the case in ids and records, so it is short and
/// the same on every machine (no absolute path).
#[derive(Clone, Hash, PartialEq, Eq)]
pub struct MatrixFile {
    name: &'static str,
    seed: u64,
    rows: usize,
    cols: usize,
}

impl std::fmt::Debug for MatrixFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-{}x{}", self.name, self.rows, self.cols)
    }
}

impl MatrixFile {
    pub fn new(name: &'static str, seed: u64, rows: usize, cols: usize) -> Self {
        Self {
            name,
            seed,
            rows,
            cols,
        }
    }

    fn path(&self) -> PathBuf {
        nnbench::record::target_dir()
            .join("nnbench/sweep-data")
            .join(format!("{}-{}x{}.npy", self.name, self.rows, self.cols))
    }
}

impl Memo for MatrixFile {
    type Value = Array2<f64>;

    fn compute(&self) -> nnbench::Result<Array2<f64>> {
        let path = self.path();
        if !path.exists() {
            nnbench::npy::write(&path, &generate(self.rows, self.cols, self.seed))?;
        }
        Ok(nnbench::npy::read(&path)?)
    }

    fn size_of(&self, value: &Array2<f64>) -> Option<u64> {
        Some(std::mem::size_of_val(value.as_slice()?) as u64)
    }
}

/// Values in [-1, 1) from a SplitMix64 stream: the same matrix on every machine.
fn generate(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let mut state = seed;
    Array2::from_shape_simple_fn((rows, cols), || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    })
}

/// Columns of the dataset: a batch of inputs.
pub const BATCH: usize = 16;

/// The sweep's three models, `side × side`.
pub fn models(side: usize) -> [MatrixFile; 3] {
    [("model1", 1), ("model2", 2), ("model3", 3)]
        .map(|(name, seed)| MatrixFile::new(name, seed, side, side))
}

/// The sweep's dataset, `side × BATCH`.
pub fn dataset(side: usize) -> MatrixFile {
    MatrixFile::new("data", 1000, side, BATCH)
}

/// `sum(model · data)`, the sweep's metric.
pub fn accuracy(model: &Array2<f64>, data: &Array2<f64>) -> f64 {
    model.dot(data).sum()
}
