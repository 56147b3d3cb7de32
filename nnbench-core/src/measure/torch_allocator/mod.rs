//! GPU memory and device synchronization from libtorch's own caching
//! allocator (the `tch` feature), read through the shim in
//! `shim/torch_allocator.cpp`. [`crate::torch`] presents these to users;
//! the case meter and the timer use them to measure.

mod ffi;

/// Why libtorch's allocator cannot be asked.
///
/// # Example
///
/// ```
/// if let Err(why) = nnbench::torch::device_memory(0) {
///     eprintln!("{why}");
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("libtorch's device allocator is unavailable: {0}")]
pub struct Unavailable(String);

/// The accelerator libtorch found.
///
/// # Example
///
/// ```
/// if let Ok(gpu) = nnbench::torch::accelerator() {
///     assert!(gpu.devices > 0);
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Accelerator {
    /// Its kind, as libtorch names it (`cuda`).
    pub name: String,
    /// How many devices it has.
    pub devices: usize,
}

/// The accelerator libtorch was built with and found, or why there is none.
///
/// # Errors
///
/// [`Unavailable`] on a CPU build of libtorch or a machine without a GPU.
///
/// # Example
///
/// ```
/// let figures_from_allocator = nnbench::torch::accelerator().is_ok();
/// ```
pub fn accelerator() -> Result<Accelerator, Unavailable> {
    ffi::devices()
        .map(|d| Accelerator {
            name: d.name.clone(),
            devices: d.count,
        })
        .map_err(|why| Unavailable(why.to_owned()))
}

/// One device's memory as libtorch's allocator counts it.
///
/// # Example
///
/// ```
/// if let Ok(m) = nnbench::torch::device_memory(0) {
///     println!("{} bytes in tensors, {} reserved", m.allocated_bytes, m.reserved_bytes);
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceMemory {
    /// Bytes of live tensors.
    pub allocated_bytes: u64,
    /// Their peak since the last reset (each case start, in a run).
    pub allocated_peak_bytes: u64,
    /// Bytes the allocator holds from the driver: live tensors and cached
    /// free blocks.
    pub reserved_bytes: u64,
    /// Their peak since the last reset.
    pub reserved_peak_bytes: u64,
}

/// The allocator's figures for `device`.
///
/// # Errors
///
/// [`Unavailable`] without an accelerator, or for a device that does not exist.
///
/// # Example
///
/// ```
/// let memory = nnbench::torch::device_memory(0);
/// # let _ = memory;
/// ```
pub fn device_memory(device: usize) -> Result<DeviceMemory, Unavailable> {
    let [allocated, allocated_peak, reserved, reserved_peak] =
        ffi::memory(device).map_err(Unavailable)?;
    Ok(DeviceMemory {
        allocated_bytes: allocated,
        allocated_peak_bytes: allocated_peak,
        reserved_bytes: reserved,
        reserved_peak_bytes: reserved_peak,
    })
}

/// Hands the blocks the caching allocator keeps reserved back to the
/// driver, as `torch.cuda.empty_cache()` does: call it from a teardown hook
/// after evicting GPU memos when other processes need the memory.
///
/// # Errors
///
/// [`Unavailable`] without an accelerator.
///
/// # Example
///
/// ```
/// fn release(_state: &nnbench::State, _params: &nnbench::Params) {
///     let _ = nnbench::torch::empty_cache();
/// }
/// ```
pub fn empty_cache() -> Result<(), Unavailable> {
    ffi::devices().map_err(|why| Unavailable(why.to_owned()))?;
    ffi::empty_cache().map_err(Unavailable)
}

/// Waits until every device has finished the work queued on it; nothing
/// without an accelerator. Timed calls do this before the clock stops.
///
/// # Example
///
/// ```
/// nnbench::torch::synchronize();
/// ```
pub fn synchronize() {
    if let Ok(devices) = ffi::devices() {
        for device in 0..devices.count {
            // A device that cannot synchronize has no queued work to wait for.
            let _ = ffi::synchronize(device);
        }
    }
}

/// Waits for every device, as [`synchronize`] does; true when one still
/// had work queued, which the wait then timed.
pub(crate) fn wait_for_queued() -> bool {
    let Ok(devices) = ffi::devices() else {
        return false;
    };
    let mut waited = false;
    for device in 0..devices.count {
        waited |= ffi::busy(device).unwrap_or(false);
        // A device that cannot synchronize has no queued work to wait for.
        let _ = ffi::synchronize(device);
    }
    waited
}

/// Resets every device's peaks for a case starting; false without an
/// accelerator.
pub(crate) fn reset_peaks() -> bool {
    let Ok(devices) = ffi::devices() else {
        return false;
    };
    (0..devices.count).all(|device| ffi::reset_peak(device).is_ok())
}

/// Bytes of live tensors now, summed over the devices.
pub(crate) fn allocated() -> Option<u64> {
    let devices = ffi::devices().ok()?;
    (0..devices.count).try_fold(0u64, |total, device| {
        Some(total + device_memory(device).ok()?.allocated_bytes)
    })
}

/// The case's allocated and reserved peaks, summed over the devices.
pub(crate) fn peaks() -> Option<(u64, u64)> {
    let devices = ffi::devices().ok()?;
    (0..devices.count).try_fold((0u64, 0u64), |(allocated, reserved), device| {
        let m = device_memory(device).ok()?;
        Some((
            allocated + m.allocated_peak_bytes,
            reserved + m.reserved_peak_bytes,
        ))
    })
}
