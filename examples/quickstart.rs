//! A product over memo models, run through `nnbench::Runner`.
//!
//! `cargo run --example quickstart`

use ndarray::Array2;
use nnbench::{Memo, Runner};

/// A model described by its seed and size; computed (here: generated) once,
/// when the first case that needs it starts.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Model {
    seed: u64,
    side: usize,
}

impl Memo for Model {
    type Value = Array2<f64>;
    fn compute(&self) -> nnbench::Result<Array2<f64>> {
        let (seed, side) = (self.seed as f64, self.side as f64);
        Ok(Array2::from_shape_fn((self.side, self.side), |(i, j)| {
            ((i as f64 * seed + j as f64) / side).sin()
        }))
    }
}

/// Each case takes about a millisecond, under the 100 ms from which
/// automatic timing keeps one call, so criterion samples it: briefly here.
#[nnbench::product(
    model = [Model { seed: 1, side: 128 }, Model { seed: 2, side: 128 }],
    batch = [16, 64],
    sample_size = 20,
    warm_up_time = "200ms",
    measurement_time = "500ms",
)]
fn score(model: &Array2<f64>, batch: usize) -> f64 {
    let inputs = Array2::<f64>::ones((model.ncols(), batch));
    model.dot(&inputs).mean().unwrap_or(f64::NAN)
}

fn main() -> nnbench::Result<()> {
    let record = Runner::new().name("quickstart").run()?;
    println!(
        "{} cases, {} memos left in the cache",
        record.cases.len(),
        nnbench::memo::len()
    );
    Ok(())
}
