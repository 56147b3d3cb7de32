//! libtorch models and tensors in benchmarks (the `tch` feature): GPU
//! memory from libtorch's own device allocator, and timing that waits for
//! the device.
//!
//! With the feature on and an accelerator present (CUDA on NVIDIA GPUs),
//! each case's `gpu_peak_bytes` comes from the allocator (`gpu_method:
//! "torch-allocator"`): its peak of live tensor bytes is reset when the case
//! starts, so the figure is the case's own, without the CUDA context or the
//! blocks the caching allocator keeps reserved (those are in
//! `gpu_reserved_peak_bytes`). A timed call waits for the device before the
//! clock stops: kernels run asynchronously, and a clock stopped at once
//! measures their launch. Elsewhere (a CPU build of libtorch, a machine
//! without a GPU) every function here answers [`Unavailable`] and the
//! harness falls back to NVML, as without the feature.
//!
//! The caching allocator keeps the blocks of freed tensors reserved for
//! reuse: evicting a GPU memo frees its tensors for the allocator, not for
//! other processes; [`empty_cache`] hands them back to the driver.
//!
//! # Example
//!
//! ```
//! match nnbench::torch::accelerator() {
//!     Ok(gpu) => println!("{} with {} devices", gpu.name, gpu.devices),
//!     Err(why) => println!("no GPU figures from libtorch: {why}"),
//! }
//! ```

mod network;
mod safetensors;
mod script;
mod tensor;

pub use crate::measure::torch_allocator::{
    Accelerator, DeviceMemory, Unavailable, accelerator, device_memory, empty_cache, synchronize,
};
pub use network::Network;
pub use safetensors::Safetensors;
pub use script::TorchScript;
pub use tensor::{NamedTensors, SharedTensor};

/// The `tch` crate these helpers are built on: use it through here, and the
/// versions cannot disagree.
pub use tch;
