//! A real model sweep: an MLP trained on Fashion-MNIST (two widths, on the
//! CPU and on CUDA where libtorch has it) classifying the 10,000 test
//! images in batches of 64 and 1024. Records accuracy, images per second
//! (the throughput of a pass, and the value's own figure of the first),
//! the tail of the passes' times, load time, peak RSS and GPU peak per
//! case. The training split is read once and each model trained once,
//! kept in the disk tier: the next run trains nothing. `forward` times one
//! pass of batches of 16 to 4096 images, and fits how the time grows with
//! the batch (`scaling = batch`).
//!
//! ```sh
//! eval "$(scripts/libtorch.sh)"; eval "$(scripts/fashion-mnist.sh)"
//! cargo bench --features tch --bench mnist
//! ```
//!
//! `benches/expected/mnist.json` is a run of it on this project's CI
//! machine: CI compares each run with it (`nnbench compare`), failing on a
//! case that fails or an accuracy that fell. `scripts/figures.sh mnist`
//! runs it whole four times (the first on an empty disk tier) and writes
//! its figures into the book (`support/mnist_figures.rs`).

#[path = "support/fashion.rs"]
mod fashion;
#[allow(dead_code, reason = "the figures judge no target")]
#[path = "support/harness.rs"]
mod harness;
#[path = "support/mnist_figures.rs"]
mod mnist_figures;
use harness::stats;

use fashion::{Eval, FashionMnist, Images};
use nnbench::torch::Network;
use nnbench::torch::tch::nn::Sequential;

#[nnbench::product(
    model = fashion::models(),
    data = [FashionMnist::test()],
    batch = [64i64, 1024],
    // Each pass over the test split is timed alone: the record keeps its
    // p50/p90/p99 beside the median.
    timing = sampled,
    throughput = elements(data.labels.size()[0]),
    tags = ["torch"],
    metric = "accuracy:higher, images_per_second:higher",
    // Throughput is the machine's as much as the model's: shown, judged
    // by paired runs, not against another machine's record.
    fail_on = "value.images_per_second=off",
)]
fn classify(model: &Network<Sequential>, data: &Images, batch: i64) -> Eval {
    fashion::evaluate(model, data, batch)
}

/// One forward pass of a batch of test images: how the model's time grows
/// with the batch size, the power fitted per model under the table
/// (`forward (model=...,data=...): time ∝ batch^0.71 [...]`), with where it bends
/// when one power does not fit (a small batch bound by the call's fixed
/// cost, a large one by the arithmetic).
#[nnbench::product(
    model = fashion::models(),
    data = [FashionMnist::test()],
    batch = [16i64, 64, 256, 1024, 4096],
    timing = sampled,
    scaling = batch,
    tags = ["torch"],
)]
fn forward(model: &Network<Sequential>, data: &Images, batch: i64) -> f64 {
    fashion::forward(model, data, batch)
}

fn main() {
    let measuring = std::env::var_os("NNBENCH_FIGURES").is_some()
        && std::env::var_os(mnist_figures::CHILD).is_none();
    if !measuring {
        nnbench::main!(bench = "mnist");
    }
    if harness::should_run("mnist") {
        mnist_figures::main();
    }
}
