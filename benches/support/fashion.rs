//! Fashion-MNIST (from Debian's package, `scripts/fashion-mnist.sh`) and a
//! small MLP trained on it, as memos: the dataset is read once, the model
//! trained once and kept in the disk tier, so a second run trains nothing.

use std::path::{Path, PathBuf};
use std::time::Instant;

use nnbench::Memo;
use nnbench::memo::file_fingerprint;
use nnbench::torch::tch::nn::{self, Module, OptimizerConfig};
use nnbench::torch::tch::{self, Device, Kind, Tensor};
use nnbench::torch::{NamedTensors, Network, Safetensors, SharedTensor};
use serde::Serialize;

/// Where `scripts/fashion-mnist.sh` put the IDX files.
fn data_dir() -> nnbench::Result<PathBuf> {
    std::env::var_os("NNBENCH_FASHION_MNIST")
        .map(PathBuf::from)
        .ok_or_else(|| {
            nnbench::Error::msg(
                "NNBENCH_FASHION_MNIST is not set: run `eval \"$(scripts/fashion-mnist.sh)\"` first",
            )
        })
}

/// The training or the test images.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Split {
    Train,
    Test,
}

impl Split {
    fn prefix(self) -> &'static str {
        match self {
            Split::Train => "train",
            Split::Test => "t10k",
        }
    }
}

/// One split in host memory: the dataset memo.
#[derive(Clone, Hash, PartialEq, Eq)]
pub struct FashionMnist {
    split: Split,
}

impl FashionMnist {
    pub fn test() -> Self {
        Self { split: Split::Test }
    }

    pub fn train() -> Self {
        Self {
            split: Split::Train,
        }
    }

    fn file(&self, what: &str) -> nnbench::Result<PathBuf> {
        Ok(data_dir()?.join(format!("{}-{what}", self.split.prefix())))
    }
}

impl std::fmt::Debug for FashionMnist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "fashion-{}", self.split.prefix())
    }
}

/// Images (`n × 784` floats in [0, 1]) and their labels (`n` classes).
pub struct Images {
    pub images: SharedTensor,
    pub labels: SharedTensor,
}

impl Memo for FashionMnist {
    type Value = Images;

    fn compute(&self) -> nnbench::Result<Images> {
        let images = read_idx(&self.file("images-idx3-ubyte")?, 2051)?;
        let labels = read_idx(&self.file("labels-idx1-ubyte")?, 2049)?;
        let n = labels.len() as i64;
        if images.len() as i64 != n * 784 {
            return Err(nnbench::Error::msg(format!(
                "{:?}: {} image bytes for {n} labels",
                self,
                images.len()
            )));
        }
        Ok(Images {
            images: (Tensor::from_slice(&images)
                .view([n, 784])
                .to_kind(Kind::Float)
                / 255.0)
                .into(),
            labels: Tensor::from_slice(&labels).to_kind(Kind::Int64).into(),
        })
    }

    fn size_of(&self, value: &Images) -> Option<u64> {
        Some(value.images.host_bytes() + value.labels.host_bytes())
    }

    fn fingerprint(&self) -> nnbench::Result<Option<String>> {
        file_fingerprint(self.file("images-idx3-ubyte")?).map(Some)
    }
}

/// The data of an IDX file (big-endian magic, dimensions, then bytes).
fn read_idx(path: &Path, magic: u32) -> nnbench::Result<Vec<u8>> {
    let bytes = std::fs::read(path)
        .map_err(|e| nnbench::Error::from(e).context(format!("reading {}", path.display())))?;
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    let found = word(0).unwrap_or(0);
    if found != magic {
        return Err(nnbench::Error::msg(format!(
            "{}: not an IDX file of this kind (magic {found:#x}, expected {magic:#x})",
            path.display()
        )));
    }
    let dims = (magic & 0xff) as usize;
    let header = 4 + 4 * dims;
    let expected: usize = (0..dims)
        .map(|d| word(4 + 4 * d).unwrap_or(0) as usize)
        .product();
    match bytes.get(header..) {
        Some(data) if data.len() == expected => Ok(data.to_vec()),
        _ => Err(nnbench::Error::msg(format!(
            "{}: truncated ({} bytes after the header, {expected} expected)",
            path.display(),
            bytes.len().saturating_sub(header)
        ))),
    }
}

/// An MLP `784 → hidden → 10` trained on the training split for `epochs`
/// with Adam, on the CPU from a fixed seed: the same weights on every
/// machine that trains it. Its weights persist in the disk tier.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct Trained {
    hidden: i64,
    epochs: u32,
}

fn mlp(root: &nn::Path, hidden: i64) -> nn::Sequential {
    nn::seq()
        .add(nn::linear(root / "fc1", 784, hidden, Default::default()))
        .add_fn(|xs| xs.relu())
        .add(nn::linear(root / "fc2", hidden, 10, Default::default()))
}

impl Memo for Trained {
    type Value = NamedTensors;

    fn compute(&self) -> nnbench::Result<NamedTensors> {
        let started = Instant::now();
        tch::manual_seed(0);
        let data = FashionMnist::train();
        let train = nnbench::memo::resolve(&data)?;
        let vs = nn::VarStore::new(Device::Cpu);
        let net = mlp(&vs.root(), self.hidden);
        let mut adam = nn::Adam::default().build(&vs, 1e-3)?;
        for _ in 0..self.epochs {
            for (images, labels) in
                tch::data::Iter2::new(&train.images, &train.labels, 128).shuffle()
            {
                let loss = net.forward(&images).cross_entropy_for_logits(&labels);
                adam.backward_step(&loss);
            }
        }
        eprintln!(
            "trained {self:?} in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        Ok(Network::new(vs, net).weights())
    }

    fn size_of(&self, value: &NamedTensors) -> Option<u64> {
        Some(value.host_bytes())
    }

    fn store(&self) -> Option<Box<dyn nnbench::store::Format<NamedTensors>>> {
        Some(Box::new(Safetensors::on(Device::Cpu)))
    }

    fn version(&self) -> u32 {
        1
    }
}

/// The trained MLP on a device, in eval mode: the sweep's model memo.
#[derive(Clone, Hash, PartialEq, Eq)]
pub struct Mlp {
    hidden: i64,
    device: Device,
}

impl std::fmt::Debug for Mlp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let device = match self.device {
            Device::Cpu => "cpu".to_owned(),
            Device::Cuda(i) => format!("cuda:{i}"),
            other => format!("{other:?}").to_lowercase(),
        };
        write!(f, "mlp{}@{device}", self.hidden)
    }
}

impl Memo for Mlp {
    type Value = Network<nn::Sequential>;

    fn compute(&self) -> nnbench::Result<Network<nn::Sequential>> {
        let trained = Trained {
            hidden: self.hidden,
            epochs: 1,
        };
        let weights = nnbench::memo::resolve(&trained)?;
        Network::from_weights(&weights, self.device, |root| mlp(root, self.hidden))
    }

    fn size_of(&self, value: &Network<nn::Sequential>) -> Option<u64> {
        Some(value.host_bytes())
    }

    fn device_bytes(&self, value: &Network<nn::Sequential>) -> u64 {
        value.device_bytes()
    }
}

/// The sweep's models: two widths, on the CPU and, where libtorch has
/// one, the first CUDA device.
pub fn models() -> Vec<Mlp> {
    let mut devices = vec![Device::Cpu];
    if tch::Cuda::is_available() {
        devices.push(Device::Cuda(0));
    }
    devices
        .into_iter()
        .flat_map(|device| [64, 512].map(|hidden| Mlp { hidden, device }))
        .collect()
}

/// One forward pass of the first `batch` images of `data`, waited for;
/// the sum of the logits, so that the pass cannot be left out.
pub fn forward(model: &Network<nn::Sequential>, data: &Images, batch: i64) -> f64 {
    let device = model.var_store().device();
    let images = data.images.narrow(0, 0, batch).to_device(device);
    let sum = model.forward(&images).sum(Kind::Float).double_value(&[]);
    nnbench::torch::synchronize();
    sum
}

/// What one evaluation of the test split measured.
#[derive(Serialize)]
pub struct Eval {
    /// Share of the test images classified right.
    pub accuracy: f64,
    /// Images classified per second, host-to-device copies included.
    pub images_per_second: f64,
}

/// Classifies every test image in batches of `batch`, on the model's
/// device.
pub fn evaluate(model: &Network<nn::Sequential>, data: &Images, batch: i64) -> Eval {
    let device = model.var_store().device();
    let started = Instant::now();
    let mut correct = Tensor::zeros([], (Kind::Int64, device));
    let n = data.labels.size()[0];
    for start in (0..n).step_by(batch as usize) {
        let len = batch.min(n - start);
        let images = data.images.narrow(0, start, len).to_device(device);
        let labels = data.labels.narrow(0, start, len).to_device(device);
        let logits = model.forward(&images);
        correct += logits.argmax(-1, false).eq_tensor(&labels).sum(Kind::Int64);
    }
    let correct = correct.int64_value(&[]);
    nnbench::torch::synchronize();
    let seconds = started.elapsed().as_secs_f64();
    Eval {
        accuracy: correct as f64 / n as f64,
        images_per_second: n as f64 / seconds,
    }
}
