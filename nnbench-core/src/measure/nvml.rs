//! The few NVML calls the GPU figures make, through NVML's C bindings
//! (`nvml-wrapper-sys`), which load the driver's library at run time: a
//! binary built here runs where there is no driver, and says so.
//!
//! Each entry point is looked up before it is called, so that a driver too
//! old to have one gives no figure instead of a panic.

use std::ffi::{CStr, c_char, c_uint};

use nvml_wrapper_sys::bindings::{
    NvmlLib, nvmlDevice_t, nvmlMemory_t, nvmlProcessInfo_t,
    nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_SIZE, nvmlReturn_enum_NVML_SUCCESS, nvmlReturn_t,
};

/// Driver installs ship `libnvidia-ml.so.1`; the unversioned name exists
/// only where the development package is installed.
#[cfg(not(windows))]
const LIBRARIES: &[&str] = &["libnvidia-ml.so.1", "libnvidia-ml.so"];
/// The Windows driver puts NVML in the system folder.
#[cfg(windows)]
const LIBRARIES: &[&str] = &["nvml.dll"];

/// Room for a name or version string: NVML's largest buffer sizes.
const TEXT: usize = 96;

/// NVML, loaded and initialized.
pub(crate) struct Nvml {
    lib: NvmlLib,
}

/// One process on a GPU, as NVML lists it.
pub(crate) struct GpuProcess {
    pub pid: u32,
    /// `None` where NVML cannot say (under WDDM, or without permission).
    pub used_bytes: Option<u64>,
}

impl Nvml {
    /// Loads the driver's library and initializes NVML; says why not.
    pub(crate) fn load() -> Result<Self, String> {
        let mut failures = Vec::new();
        for &name in LIBRARIES {
            // SAFETY: loading NVML runs only its library constructors, which
            // have no preconditions.
            match unsafe { NvmlLib::new(name) } {
                Ok(lib) => {
                    let nvml = Self { lib };
                    let init = nvml
                        .lib
                        .nvmlInit_v2
                        .as_ref()
                        .map_err(|e| format!("{name} has no nvmlInit_v2: {e}"))?;
                    // SAFETY: nvmlInit_v2 takes no arguments.
                    let status = unsafe { init() };
                    return if status == nvmlReturn_enum_NVML_SUCCESS {
                        Ok(nvml)
                    } else {
                        Err(format!("nvmlInit_v2 failed: {}", nvml.error(status)))
                    };
                }
                Err(error) => failures.push(format!("{name}: {error}")),
            }
        }
        Err(failures.join("; "))
    }

    /// NVML's words for `status`.
    fn error(&self, status: nvmlReturn_t) -> String {
        let Ok(describe) = self.lib.nvmlErrorString.as_ref() else {
            return format!("NVML error {status}");
        };
        // SAFETY: nvmlErrorString returns a static C string for any value.
        let text = unsafe { describe(status) };
        if text.is_null() {
            return format!("NVML error {status}");
        }
        // SAFETY: not null, and NUL-terminated by NVML.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    }

    /// How many GPUs NVML sees.
    pub(crate) fn device_count(&self) -> Result<u32, String> {
        let count_devices = self
            .lib
            .nvmlDeviceGetCount_v2
            .as_ref()
            .map_err(|e| e.to_string())?;
        let mut count: c_uint = 0;
        // SAFETY: `count` outlives the call, which writes one integer.
        let status = unsafe { count_devices(&mut count) };
        if status == nvmlReturn_enum_NVML_SUCCESS {
            Ok(count)
        } else {
            Err(self.error(status))
        }
    }

    /// The handle of GPU `index`, valid while NVML is initialized.
    fn device(&self, index: u32) -> Option<nvmlDevice_t> {
        let by_index = self.lib.nvmlDeviceGetHandleByIndex_v2.as_ref().ok()?;
        let mut device: nvmlDevice_t = std::ptr::null_mut();
        // SAFETY: `device` outlives the call, which writes one handle.
        let status = unsafe { by_index(index, &mut device) };
        (status == nvmlReturn_enum_NVML_SUCCESS && !device.is_null()).then_some(device)
    }

    /// GPU `index`'s memory: `(total, used)` bytes.
    pub(crate) fn memory(&self, index: u32) -> Option<(u64, u64)> {
        let device = self.device(index)?;
        let memory_info = self.lib.nvmlDeviceGetMemoryInfo.as_ref().ok()?;
        let mut memory = nvmlMemory_t {
            total: 0,
            free: 0,
            used: 0,
        };
        // SAFETY: a valid handle, and `memory` outlives the call.
        let status = unsafe { memory_info(device, &mut memory) };
        (status == nvmlReturn_enum_NVML_SUCCESS).then_some((memory.total, memory.used))
    }

    /// GPU `index`'s energy counter: millijoules since the driver loaded,
    /// or NVML's words for why it has none (GPUs before Volta count none).
    pub(crate) fn energy_millijoules(&self, index: u32) -> Result<u64, String> {
        let device = self
            .device(index)
            .ok_or_else(|| format!("NVML gave no handle for GPU {index}"))?;
        let energy = self
            .lib
            .nvmlDeviceGetTotalEnergyConsumption
            .as_ref()
            .map_err(|e| format!("the driver has no nvmlDeviceGetTotalEnergyConsumption: {e}"))?;
        let mut millijoules: std::ffi::c_ulonglong = 0;
        // SAFETY: a valid handle, and `millijoules` outlives the call, which
        // writes one integer.
        let status = unsafe { energy(device, &mut millijoules) };
        if status == nvmlReturn_enum_NVML_SUCCESS {
            Ok(millijoules)
        } else {
            Err(format!(
                "GPU {index} counts no energy: {}",
                self.error(status)
            ))
        }
    }

    /// The processes with a compute or graphics context on GPU `index`
    /// (one using both is listed twice); `None` when NVML cannot list them.
    pub(crate) fn processes(&self, index: u32) -> Option<Vec<GpuProcess>> {
        let device = self.device(index)?;
        let mut all = self.listed(device, Kind::Compute)?;
        all.extend(self.listed(device, Kind::Graphics).unwrap_or_default());
        Some(all)
    }

    fn listed(&self, device: nvmlDevice_t, kind: Kind) -> Option<Vec<GpuProcess>> {
        let list = match kind {
            Kind::Compute => self.lib.nvmlDeviceGetComputeRunningProcesses_v3.as_ref(),
            Kind::Graphics => self.lib.nvmlDeviceGetGraphicsRunningProcesses_v3.as_ref(),
        }
        .ok()?;
        // Processes come and go between asking how many and listing them:
        // room for a few more, and asked again while it is too small.
        let mut room: c_uint = 8;
        for _ in 0..4 {
            let mut infos = vec![
                nvmlProcessInfo_t {
                    pid: 0,
                    usedGpuMemory: 0,
                    gpuInstanceId: 0,
                    computeInstanceId: 0,
                };
                room as usize
            ];
            let mut count = room;
            // SAFETY: a valid handle; `infos` holds `count` entries, and NVML
            // writes at most that many and their number into `count`.
            let status = unsafe { list(device, &mut count, infos.as_mut_ptr()) };
            if status == nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_SIZE {
                room = count.max(room) + 8;
                continue;
            }
            if status != nvmlReturn_enum_NVML_SUCCESS {
                return None;
            }
            infos.truncate(count as usize);
            return Some(
                infos
                    .into_iter()
                    .map(|info| GpuProcess {
                        pid: info.pid,
                        // NVML_VALUE_NOT_AVAILABLE, -1 as an unsigned long long.
                        used_bytes: (info.usedGpuMemory != u64::MAX).then_some(info.usedGpuMemory),
                    })
                    .collect(),
            );
        }
        None
    }

    /// The driver's version, as `nvidia-smi` prints it.
    pub(crate) fn driver_version(&self) -> Option<String> {
        let version = self.lib.nvmlSystemGetDriverVersion.as_ref().ok()?;
        let mut text = [0 as c_char; TEXT];
        // SAFETY: NVML writes a NUL-terminated string of at most `TEXT` bytes.
        let status = unsafe { version(text.as_mut_ptr(), TEXT as c_uint) };
        (status == nvmlReturn_enum_NVML_SUCCESS).then(|| string(&text))
    }

    /// GPU `index`'s product name.
    pub(crate) fn name(&self, index: u32) -> Option<String> {
        let device = self.device(index)?;
        let name = self.lib.nvmlDeviceGetName.as_ref().ok()?;
        let mut text = [0 as c_char; TEXT];
        // SAFETY: a valid handle; NVML writes a NUL-terminated string of at
        // most `TEXT` bytes.
        let status = unsafe { name(device, text.as_mut_ptr(), TEXT as c_uint) };
        (status == nvmlReturn_enum_NVML_SUCCESS).then(|| string(&text))
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Compute,
    Graphics,
}

/// A buffer NVML filled, up to its NUL (or whole, should there be none).
fn string(text: &[c_char]) -> String {
    let bytes: Vec<u8> = text
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_ends_at_its_nul() {
        let mut text = [0 as c_char; 8];
        for (slot, byte) in text.iter_mut().zip(b"H200\0xx") {
            *slot = *byte as c_char;
        }
        assert_eq!(string(&text), "H200");
        assert_eq!(string(&[b'a' as c_char; 3]), "aaa");
    }

    #[test]
    fn without_a_driver_loading_says_why() {
        // CI machines have no NVIDIA driver; where one is, NVML loads.
        match Nvml::load() {
            Ok(nvml) => assert!(nvml.device_count().is_ok()),
            Err(why) => assert!(
                why.contains("libnvidia-ml") || why.contains("nvml"),
                "{why}"
            ),
        }
    }
}
