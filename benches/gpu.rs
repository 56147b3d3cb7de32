//! The GPU paths on a real device: cases whose GPU memory and time are
//! known in advance, so that `scripts/gpu-check.sh` can run this bench on
//! a CUDA machine and judge what nnbench recorded against them
//! (`scripts/gpu_check.py`).
//!
//! - `alloc`: a call that allocates a tensor of `mib` MiB beside a
//!   256 MiB fixture on the device (the case's peak holds both, the
//!   call's own peak the call's tensor alone).
//! - `matmul`: a product of two 8192×8192 float matrices on the device,
//!   sampled; its value is how long queuing the product took, without
//!   waiting for the device.
//! - `pair`: every pair of three 1 GiB left and three 1 GiB right
//!   fixtures; its value is the bytes of live tensors during the call,
//!   which `--memo-gpu-budget` bounds.
//! - `oom`: a call that asks for a tensor larger than any device.
//! - `child`: a call whose child process, a Python torch program, holds
//!   `mib` MiB on the device (NVML alone: no `tch` needed).
//!
//! Without a CUDA device (or, for `child`, without
//! `NNBENCH_GPU_CHECK_PYTHON` naming a Python with CUDA torch) the grids
//! are empty, and the bench runs no case.
//!
//! ```sh
//! scripts/gpu-check.sh build && scripts/gpu-check.sh run target/gpu-check/bundle
//! ```

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The child's program: `mib` MiB of float32 on the first CUDA device,
/// held until its standard input closes.
const CHILD: &str = "import sys, torch
x = torch.ones(int(sys.argv[1]) << 18, device='cuda')
torch.cuda.synchronize()
print('ready', flush=True)
sys.stdin.read()
";

/// The sizes the child holds, where a Python with CUDA torch is named.
fn child_sizes() -> Vec<u64> {
    if std::env::var_os("NNBENCH_GPU_CHECK_PYTHON").is_some() {
        vec![1024]
    } else {
        Vec::new()
    }
}

/// Starts the child, waits until it holds its memory, lets the sampler
/// see it for a while, and ends it.
#[nnbench::product(mib = child_sizes(), timing = once)]
fn child(mib: u64) -> nnbench::Result<u64> {
    let python = std::env::var_os("NNBENCH_GPU_CHECK_PYTHON")
        .ok_or_else(|| nnbench::Error::msg("NNBENCH_GPU_CHECK_PYTHON is not set"))?;
    let mut process = Command::new(&python)
        .args(["-c", CHILD, &mib.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| nnbench::Error::msg(format!("{}: {e}", python.to_string_lossy())))?;
    let mut line = String::new();
    if let Some(out) = process.stdout.take() {
        BufReader::new(out).read_line(&mut line)?;
    }
    std::thread::sleep(Duration::from_millis(200));
    if let Some(mut input) = process.stdin.take() {
        let _ = input.flush();
    }
    let status = process.wait()?;
    if line.trim() != "ready" || !status.success() {
        return Err(nnbench::Error::msg(format!(
            "the child did not hold its memory ({status})"
        )));
    }
    Ok(mib)
}

#[cfg(feature = "tch")]
mod cuda {
    use std::time::Instant;

    use nnbench::Memo;
    use nnbench::torch::SharedTensor;
    use nnbench::torch::tch::{Cuda, Device, Kind, Tensor};

    /// `mib` MiB of float32 ones on the first CUDA device; `tag` tells
    /// fixtures of one size apart.
    #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    pub struct OnDevice {
        mib: i64,
        tag: u8,
    }

    impl Memo for OnDevice {
        type Value = SharedTensor;

        fn compute(&self) -> nnbench::Result<SharedTensor> {
            let t = Tensor::f_ones([self.mib << 18], (Kind::Float, Device::Cuda(0)))?;
            Ok(t.into())
        }

        fn size_of(&self, value: &SharedTensor) -> Option<u64> {
            Some(value.host_bytes())
        }

        fn device_bytes(&self, value: &SharedTensor) -> u64 {
            value.device_bytes()
        }
    }

    /// Two `n`×`n` float matrices on the first CUDA device, one tensor.
    #[derive(Clone, Debug, Hash, PartialEq, Eq)]
    pub struct Operands {
        n: i64,
    }

    impl Memo for Operands {
        type Value = SharedTensor;

        fn compute(&self) -> nnbench::Result<SharedTensor> {
            let t = Tensor::f_randn([2, self.n, self.n], (Kind::Float, Device::Cuda(0)))?;
            // cuBLAS sets itself up on its first product: not in a call.
            drop(t.get(0).f_matmul(&t.get(1))?);
            nnbench::torch::synchronize();
            Ok(t.into())
        }

        fn size_of(&self, value: &SharedTensor) -> Option<u64> {
            Some(value.host_bytes())
        }

        fn device_bytes(&self, value: &SharedTensor) -> u64 {
            value.device_bytes()
        }
    }

    /// `items`, where libtorch finds a CUDA device; none elsewhere.
    fn on_cuda<T>(items: Vec<T>) -> Vec<T> {
        if Cuda::is_available() {
            items
        } else {
            Vec::new()
        }
    }

    pub fn resident() -> Vec<OnDevice> {
        on_cuda(vec![OnDevice { mib: 256, tag: 0 }])
    }

    pub fn operands() -> Vec<Operands> {
        on_cuda(vec![Operands { n: 8192 }])
    }

    pub fn side(tag: u8) -> Vec<OnDevice> {
        on_cuda(
            (0..3)
                .map(|i| OnDevice {
                    mib: 1024,
                    tag: tag * 3 + i,
                })
                .collect(),
        )
    }

    pub fn huge() -> Vec<i64> {
        on_cuda(vec![1 << 20])
    }

    /// The call's tensor: `mib` MiB, summed so that it is made.
    #[nnbench::product(fixture = resident(), mib = [512i64, 64], timing = once)]
    fn alloc(fixture: &SharedTensor, mib: i64) -> f64 {
        let t = Tensor::ones([mib << 18], (Kind::Float, fixture.device()));
        // In its own kind: a sum in another would convert a copy first.
        t.sum(Kind::Float).double_value(&[])
    }

    /// Seconds spent queuing the product: what a clock that did not wait
    /// for the device would time.
    #[nnbench::product(operands = operands(), timing = sampled, sample_size = 20)]
    fn matmul(operands: &SharedTensor) -> f64 {
        let started = Instant::now();
        let product = operands.get(0).matmul(&operands.get(1));
        let queued = started.elapsed().as_secs_f64();
        drop(product);
        queued
    }

    /// Bytes of live tensors while the call runs: the memos resident.
    #[nnbench::product(left = side(0), right = side(1), timing = once)]
    fn pair(left: &SharedTensor, right: &SharedTensor) -> f64 {
        let _ = (left, right);
        nnbench::torch::device_memory(0).map_or(f64::NAN, |m| m.allocated_bytes as f64)
    }

    /// A tensor of `gib` GiB, which no device holds.
    #[nnbench::product(gib = huge(), timing = once)]
    fn oom(gib: i64) -> f64 {
        let t = Tensor::ones([gib << 28], (Kind::Float, Device::Cuda(0)));
        t.sum(Kind::Double).double_value(&[])
    }
}

nnbench::main!();
