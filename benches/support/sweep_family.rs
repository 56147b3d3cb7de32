//! The seed sweep's family: three models (square `f64` matrices stored as
//! `.npy`) scored against one dataset, one model resident at a time. Both
//! `benches/sweep.rs` and `benches/seed_sweep.rs` register it.

use ndarray::Array2;
use nnbench::{Params, State};

use super::matrices::{self, MatrixFile};

/// Side of the models: `NNBENCH_SWEEP_N`, default 512 (2 MiB each).
pub fn side() -> usize {
    std::env::var("NNBENCH_SWEEP_N")
        .ok()
        .and_then(|n| n.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(512)
}

/// Frees the model as soon as its case is done. Automatic eviction after
/// the last use would too; this is the explicit form, as hooks written by
/// hand look.
fn evict_model(_state: &State, params: &Params) {
    if let Some(model) = params.memo::<MatrixFile>("model") {
        nnbench::memo::evict(model);
    }
}

#[nnbench::product(
    model = matrices::models(side()),
    data = [matrices::dataset(side())],
    teardown = evict_model,
    tags = ["cpu"],
)]
fn accuracy(model: &Array2<f64>, data: &Array2<f64>) -> f64 {
    matrices::accuracy(model, data)
}
