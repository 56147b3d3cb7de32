//! A small language model served token by token under an open loop: a
//! decoder of random weights (an embedding, attention and MLP layers with
//! a key-value cache, greedy decoding) that a memo holds, and prompts of
//! 16 to 256 tokens that each request takes one of. Its prefill costs in
//! proportion to the prompt, each output token a pass through the layers.
//! One engine runs one forward pass at a time, the requests in flight
//! interleaved token by token, as a server's scheduler interleaves them;
//! it leaves the client the machine's other cores.
//! At each rate the table shows time to first token and time per output
//! token; the search finds the highest rate at which nine requests in ten
//! meet both objectives.
//!
//! `cargo bench --bench decoder`

use std::fmt;
use std::sync::Mutex;

use ndarray::{Array1, Array2, ArrayView1, s};

/// A decoder's shape: its vocabulary, width, MLP width, layers and the
/// longest sequence its cache holds.
#[derive(Clone, Hash, PartialEq, Eq)]
struct Decoder {
    vocab: usize,
    dim: usize,
    hidden: usize,
    layers: usize,
    context: usize,
}

impl Decoder {
    const SMALL: Decoder = Decoder {
        vocab: 2048,
        dim: 64,
        hidden: 256,
        layers: 4,
        context: 512,
    };
}

/// Its name in a case's id: `d64x4`, its width and layers.
impl fmt::Debug for Decoder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "d{}x{}", self.dim, self.layers)
    }
}

/// The engine: one forward pass at a time.
static ENGINE: Mutex<()> = Mutex::new(());

/// One layer: attention's projections, then the MLP's.
struct Layer {
    query: Array2<f32>,
    key: Array2<f32>,
    value: Array2<f32>,
    out: Array2<f32>,
    up: Array2<f32>,
    down: Array2<f32>,
}

/// The weights, drawn from a seeded generator, scaled as initializers do
/// so that activations neither vanish nor blow up.
struct Weights {
    shape: Decoder,
    embedding: Array2<f32>,
    layers: Vec<Layer>,
}

impl nnbench::Memo for Decoder {
    type Value = Weights;

    fn compute(&self) -> nnbench::Result<Weights> {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut matrix = |rows: usize, cols: usize| {
            let scale = (3.0 / rows as f32).sqrt();
            Array2::from_shape_simple_fn((rows, cols), || (rng.f32() * 2.0 - 1.0) * scale)
        };
        let (d, h) = (self.dim, self.hidden);
        let embedding = matrix(self.vocab, d);
        let layers = (0..self.layers)
            .map(|_| Layer {
                query: matrix(d, d),
                key: matrix(d, d),
                value: matrix(d, d),
                out: matrix(d, d),
                up: matrix(d, h),
                down: matrix(h, d),
            })
            .collect();
        Ok(Weights {
            shape: self.clone(),
            embedding,
            layers,
        })
    }

    fn size_of(&self, _: &Weights) -> Option<u64> {
        let per_layer = 4 * self.dim * self.dim + 2 * self.dim * self.hidden;
        Some(((self.vocab * self.dim + self.layers * per_layer) * 4) as u64)
    }
}

/// Each layer's keys and values of the tokens seen so far.
struct Cache {
    keys: Vec<Array2<f32>>,
    values: Vec<Array2<f32>>,
    len: usize,
}

/// Scales `x` to a root mean square of one.
fn normalized(x: ArrayView1<f32>) -> Array1<f32> {
    let rms = (x.dot(&x) / x.len() as f32 + 1e-6).sqrt();
    x.mapv(|v| v / rms)
}

impl Weights {
    fn cache(&self) -> Cache {
        let empty = || Array2::zeros((self.shape.context, self.shape.dim));
        Cache {
            keys: (0..self.shape.layers).map(|_| empty()).collect(),
            values: (0..self.shape.layers).map(|_| empty()).collect(),
            len: 0,
        }
    }

    /// Passes `token` through the layers at the cache's next position,
    /// keeping its keys and values; the last layer's output.
    fn forward(&self, token: u32, cache: &mut Cache) -> Array1<f32> {
        let _engine = ENGINE.lock().unwrap_or_else(|e| e.into_inner());
        let at = cache.len.min(self.shape.context - 1);
        let mut h = self.embedding.row(token as usize).to_owned();
        let scale = 1.0 / (self.shape.dim as f32).sqrt();
        for (i, layer) in self.layers.iter().enumerate() {
            let x = normalized(h.view());
            cache.keys[i].row_mut(at).assign(&x.dot(&layer.key));
            cache.values[i].row_mut(at).assign(&x.dot(&layer.value));
            let mut scores = cache.keys[i].slice(s![..=at, ..]).dot(&x.dot(&layer.query)) * scale;
            let top = scores.fold(f32::NEG_INFINITY, |a, &b| a.max(b));
            scores.mapv_inplace(|v| (v - top).exp());
            scores /= scores.sum();
            let attended = cache.values[i].slice(s![..=at, ..]).t().dot(&scores);
            h += &attended.dot(&layer.out);
            let x = normalized(h.view());
            h += &x.dot(&layer.up).mapv(|v| v.max(0.0)).dot(&layer.down);
        }
        cache.len = at + 1;
        h
    }

    /// The token the output `h` scores highest: greedy decoding.
    fn greedy(&self, h: &Array1<f32>) -> u32 {
        let _engine = ENGINE.lock().unwrap_or_else(|e| e.into_inner());
        let logits = self.embedding.dot(&normalized(h.view()));
        logits
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map_or(0, |(token, _)| token as u32)
    }
}

/// An answer being generated: each `next` decodes one more token.
struct Generation<'a> {
    model: &'a Weights,
    cache: Cache,
    next: u32,
    left: usize,
}

impl Iterator for Generation<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let token = self.next;
        if self.left > 0 {
            let h = self.model.forward(token, &mut self.cache);
            self.next = self.model.greedy(&h);
        }
        Some(token)
    }
}

/// Reads the prompt into the cache (prefill, a pass a token), then
/// decodes `answer` tokens from it, lazily.
fn generate<'a>(model: &'a Weights, prompt: &[u32], answer: usize) -> Generation<'a> {
    let mut cache = model.cache();
    let mut last = None;
    for &token in prompt {
        last = Some(model.forward(token, &mut cache));
    }
    let next = last.map_or(0, |h| model.greedy(&h));
    Generation {
        model,
        cache,
        next,
        left: answer,
    }
}

/// Prompts of 16 to 256 tokens, from a seeded generator: a realistic mix
/// of short questions and long contexts, the long ones rarer.
#[derive(Clone, Hash, PartialEq, Eq)]
struct Prompts {
    count: usize,
    vocab: u32,
}

/// Its name in a case's id: `200`, how many prompts.
impl fmt::Debug for Prompts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.count)
    }
}

impl nnbench::Memo for Prompts {
    type Value = Vec<Vec<u32>>;

    fn compute(&self) -> nnbench::Result<Vec<Vec<u32>>> {
        let mut rng = fastrand::Rng::with_seed(11);
        Ok((0..self.count)
            .map(|_| {
                // Log-uniform lengths: as many prompts of 16-32 tokens as
                // of 128-256.
                let len = (16.0 * 16f64.powf(rng.f64())) as usize;
                (0..len).map(|_| rng.u32(..self.vocab)).collect()
            })
            .collect())
    }
}

/// Tokens each answer decodes.
const ANSWER: usize = 32;

/// One request: the next prompt of the set, prefilled, then its answer
/// streamed token by token.
#[nnbench::product(
    model = [Decoder::SMALL],
    prompts = [Prompts { count: 200, vocab: 2048 }],
    stream,
    rate = [5, 10, 20, 40],
    slo = "ttft <= 100ms, tpot <= 10ms",
    goodput = 0.9,
    warm_up_time = "300ms",
    measurement_time = "2s",
)]
#[allow(clippy::ptr_arg)] // A memo is passed as a reference to its value.
fn serve(model: &Weights, prompts: &Vec<Vec<u32>>) -> impl Iterator<Item = u32> {
    let prompt = nnbench::request_input(prompts).map_or(&[][..], Vec::as_slice);
    generate(model, prompt, ANSWER)
}

nnbench::main!();
