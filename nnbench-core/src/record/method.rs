//! How the memory figures of a case were taken: the record says, since the
//! methods differ in what they count.

use serde::{Deserialize, Serialize};

/// How a case's peak resident memory was measured.
///
/// # Example
///
/// ```
/// use nnbench::record::RssMethod;
/// assert_eq!(serde_json::to_string(&RssMethod::Hwm).unwrap(), "\"hwm\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RssMethod {
    /// The kernel's high-water mark (`VmHWM`), reset before the case: exact.
    Hwm,
    /// The largest of samples taken every millisecond: a spike shorter
    /// than that can be missed.
    Sampled,
}

/// How a case's GPU figure was taken.
///
/// # Example
///
/// ```
/// use nnbench::record::GpuMethod;
/// assert_eq!(serde_json::to_string(&GpuMethod::DeviceDelta).unwrap(), "\"device_delta\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum GpuMethod {
    /// This process's own used memory, summed over the devices.
    Process,
    /// The devices' used memory minus what they used when the case started.
    DeviceDelta,
    /// libtorch's device allocator (the CUDA caching allocator): bytes of
    /// live tensors at their peak, the allocator's peak reset when the case
    /// started. The CUDA context and blocks kept reserved are not counted
    /// (`gpu_reserved_peak_bytes` has the latter).
    #[serde(rename = "torch-allocator")]
    TorchAllocator,
}
