//! libtorch's device allocator through the shim in `shim/torch_allocator.cpp`,
//! which turns every C++ exception into a message.

use std::ffi::{CStr, c_char, c_int};
use std::sync::OnceLock;

unsafe extern "C" {
    fn nnbench_torch_devices(
        name: *mut c_char,
        name_len: usize,
        message: *mut c_char,
        len: usize,
    ) -> c_int;
    fn nnbench_torch_memory(
        device: c_int,
        out: *mut i64,
        message: *mut c_char,
        len: usize,
    ) -> c_int;
    fn nnbench_torch_reset_peak(device: c_int, message: *mut c_char, len: usize) -> c_int;
    fn nnbench_torch_busy(device: c_int, message: *mut c_char, len: usize) -> c_int;
    fn nnbench_torch_synchronize(device: c_int, message: *mut c_char, len: usize) -> c_int;
    fn nnbench_torch_empty_cache(message: *mut c_char, len: usize) -> c_int;
}

const MESSAGE_LEN: usize = 512;

/// Calls `f` with a buffer for libtorch's message; a negative result is an
/// error carrying it.
fn call(f: impl FnOnce(*mut c_char, usize) -> c_int) -> Result<c_int, String> {
    let mut message = [0 as c_char; MESSAGE_LEN];
    let status = f(message.as_mut_ptr(), MESSAGE_LEN);
    if status >= 0 {
        return Ok(status);
    }
    // SAFETY: the shim leaves the buffer zeroed or writes a terminated string
    // that fits it.
    let text = unsafe { CStr::from_ptr(message.as_ptr()) };
    let text = text.to_string_lossy();
    // libtorch appends a C++ backtrace after the first line.
    Err(text.lines().next().unwrap_or("libtorch failed").to_owned())
}

/// The accelerator libtorch was built with and found, if any.
pub(crate) struct Devices {
    pub name: String,
    pub count: usize,
}

/// libtorch's accelerator, asked once per process.
pub(crate) fn devices() -> Result<&'static Devices, &'static str> {
    static DEVICES: OnceLock<Result<Devices, String>> = OnceLock::new();
    DEVICES
        .get_or_init(|| {
            let mut name = [0 as c_char; 64];
            // SAFETY: both buffers are as long as said; the shim terminates them.
            let count = call(|message, len| unsafe {
                nnbench_torch_devices(name.as_mut_ptr(), name.len(), message, len)
            })?;
            // SAFETY: zeroed, or terminated by the shim within its length.
            let name = unsafe { CStr::from_ptr(name.as_ptr()) }
                .to_string_lossy()
                .into_owned();
            match count {
                0 => {
                    Err("libtorch has no accelerator: a CPU build, or no GPU or driver".to_owned())
                }
                n => Ok(Devices {
                    name,
                    count: n as usize,
                }),
            }
        })
        .as_ref()
        .map_err(String::as_str)
}

/// `[allocated, allocated peak, reserved, reserved peak]` of `device`.
pub(crate) fn memory(device: usize) -> Result<[u64; 4], String> {
    let mut out = [0i64; 4];
    let device = c_int::try_from(device).map_err(|_| format!("no device {device}"))?;
    // SAFETY: `out` holds the four values the shim writes.
    call(|message, len| unsafe { nnbench_torch_memory(device, out.as_mut_ptr(), message, len) })?;
    Ok(out.map(|v| v.max(0) as u64))
}

pub(crate) fn reset_peak(device: usize) -> Result<(), String> {
    let device = c_int::try_from(device).map_err(|_| format!("no device {device}"))?;
    // SAFETY: the shim takes a message buffer of the length given.
    call(|message, len| unsafe { nnbench_torch_reset_peak(device, message, len) }).map(drop)
}

/// Whether the current stream of `device` has unfinished work.
pub(crate) fn busy(device: usize) -> Result<bool, String> {
    let device = c_int::try_from(device).map_err(|_| format!("no device {device}"))?;
    // SAFETY: the shim takes a message buffer of the length given.
    call(|message, len| unsafe { nnbench_torch_busy(device, message, len) }).map(|b| b == 1)
}

pub(crate) fn synchronize(device: usize) -> Result<(), String> {
    let device = c_int::try_from(device).map_err(|_| format!("no device {device}"))?;
    // SAFETY: the shim takes a message buffer of the length given.
    call(|message, len| unsafe { nnbench_torch_synchronize(device, message, len) }).map(drop)
}

pub(crate) fn empty_cache() -> Result<(), String> {
    // SAFETY: the shim takes a message buffer of the length given.
    call(|message, len| unsafe { nnbench_torch_empty_cache(message, len) }).map(drop)
}
