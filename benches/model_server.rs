//! A model server under load: each request waits on the network, then
//! classified by a two-layer perceptron that a memo holds, on the
//! runtime's blocking pool, as a tokio service would. Swept over how many
//! requests are in flight, the table shows the latency each level gives
//! (median and p99) and the requests per second it serves: throughput
//! grows until the cores are busy, then only the tail grows.
//!
//! `cargo bench --features tokio --bench model_server`

use std::sync::Arc;
use std::time::Duration;

use ndarray::{Array1, Array2};

/// A perceptron of `inputs → hidden → 10` with fixed pseudo-random
/// weights: a small image classifier.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Classifier {
    inputs: usize,
    hidden: usize,
}

struct Weights {
    first: Array2<f32>,
    second: Array2<f32>,
}

impl nnbench::Memo for Classifier {
    type Value = Weights;

    fn compute(&self) -> nnbench::Result<Weights> {
        let mut seed = 0x9e37_79b9_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed % 2000) as f32 / 1000.0 - 1.0
        };
        Ok(Weights {
            first: Array2::from_shape_simple_fn((self.inputs, self.hidden), &mut next),
            second: Array2::from_shape_simple_fn((self.hidden, 10), &mut next),
        })
    }

    fn size_of(&self, _: &Weights) -> Option<u64> {
        Some(((self.inputs + 10) * self.hidden * 4) as u64)
    }
}

impl Weights {
    /// The class the image scores highest.
    fn classify(&self, image: &Array1<f32>) -> usize {
        let hidden = image.dot(&self.first).mapv(|x| x.max(0.0));
        let scores = hidden.dot(&self.second);
        scores
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or(0, |(class, _)| class)
    }
}

/// One request: a millisecond on the network, then the model's forward pass on
/// a blocking thread. Returns the class it answered.
#[nnbench::product(
    model = [Classifier { inputs: 784, hidden: 256 }, Classifier { inputs: 784, hidden: 1024 }],
    concurrency = [1, 4, 16, 64],
    runtime = multi_thread,
    warm_up_time = "200ms",
    measurement_time = "1s",
)]
async fn classify(model: Arc<Weights>) -> nnbench::Result<usize> {
    tokio::time::sleep(Duration::from_millis(1)).await;
    let image = Array1::from_shape_fn(784, |i| (i % 17) as f32 / 17.0);
    let class = tokio::task::spawn_blocking(move || model.classify(&image)).await?;
    Ok(class)
}

nnbench::main!();
