//! GPU memory through NVML, which `measure/nvml.rs` loads at run time: a
//! binary built here runs on machines without a GPU or driver, and reports
//! why there is no figure instead.
//!
//! NVML lists the processes using each GPU by PID: the figure is what this
//! process and its descendants use, so that a case driving a child (a
//! Python model server, a `torchrun`) counts the child's memory. Inside a
//! PID namespace (a container) those are host PIDs that never match this
//! process's; there the figure falls back to the growth of the devices'
//! used memory during the case, which counts other processes on the same
//! GPUs too. The record says which method produced it.

use std::sync::OnceLock;

use super::nvml::Nvml;

pub use crate::record::GpuMethod;
use crate::record::{GpuContext, GpuDevice};

struct Gpu {
    nvml: Nvml,
    devices: u32,
    method: GpuMethod,
    pid: u32,
}

fn gpu() -> Result<&'static Gpu, &'static str> {
    static GPU: OnceLock<Result<Gpu, String>> = OnceLock::new();
    GPU.get_or_init(init).as_ref().map_err(String::as_str)
}

fn init() -> Result<Gpu, String> {
    if std::env::var_os("NNBENCH_NO_GPU").is_some() {
        return Err("disabled by NNBENCH_NO_GPU".into());
    }
    let nvml = Nvml::load()
        .map_err(|e| format!("NVML is not available ({e}): no NVIDIA driver or GPU"))?;
    let devices = nvml
        .device_count()
        .map_err(|e| format!("NVML could not count devices: {e}"))?;
    if devices == 0 {
        return Err("NVML found no GPU".into());
    }
    let method = if in_pid_namespace() {
        GpuMethod::DeviceDelta
    } else {
        GpuMethod::Process
    };
    Ok(Gpu {
        nvml,
        devices,
        method,
        pid: std::process::id(),
    })
}

/// Whether this process sees other PIDs than the host does: `NSpid` in
/// `/proc/self/status` lists one PID per nested namespace.
fn in_pid_namespace() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("NSpid:"))?;
            Some(line.split_whitespace().count() > 2)
        })
        .unwrap_or(false)
}

/// Whether GPU figures can be taken, and the method they use.
pub(crate) fn method() -> Option<GpuMethod> {
    gpu().ok().map(|g| g.method)
}

/// GPU memory now, as the method counts it (absolute: the caller takes the
/// delta for [`GpuMethod::DeviceDelta`]).
pub(crate) fn used_bytes() -> Option<u64> {
    let gpu = gpu().ok()?;
    let mut total = 0u64;
    for index in 0..gpu.devices {
        // `init` picks one of NVML's two methods: whole devices inside a
        // PID namespace, this process's own use elsewhere.
        total += if gpu.method == GpuMethod::DeviceDelta {
            gpu.nvml.memory(index)?.1
        } else {
            let processes = gpu.nvml.processes(index)?;
            // A process using the GPU for compute and graphics is listed
            // twice, with the same memory.
            let mut ours = std::collections::BTreeMap::new();
            for p in &processes {
                if descends_from(p.pid, gpu.pid) {
                    let bytes = p.used_bytes.unwrap_or(0);
                    let entry = ours.entry(p.pid).or_insert(0u64);
                    *entry = (*entry).max(bytes);
                }
            }
            ours.values().sum()
        };
    }
    Some(total)
}

/// The energy all the GPUs NVML sees have used since their driver loaded,
/// in millijoules: `None` where there is no GPU (the run's context says
/// why), why not where one of them keeps no count. The counter is the
/// device's: other work on the same GPUs counts too.
pub(crate) fn energy_millijoules() -> Option<Result<u64, String>> {
    let gpu = gpu().ok()?;
    let mut total = 0u64;
    for index in 0..gpu.devices {
        match gpu.nvml.energy_millijoules(index) {
            Ok(millijoules) => total = total.saturating_add(millijoules),
            Err(why) => return Some(Err(why)),
        }
    }
    Some(Ok(total))
}

/// Whether `pid` is `ancestor` or one of its descendants, by the parents
/// `/proc` gives: only the few processes NVML lists on a GPU are walked.
fn descends_from(pid: u32, ancestor: u32) -> bool {
    let mut pid = pid;
    // A chain longer than any real one ends the walk, should `/proc` ever
    // show a cycle while processes come and go.
    for _ in 0..64 {
        if pid == ancestor {
            return true;
        }
        match parent_of(pid) {
            Some(parent) if parent != 0 && parent != pid => pid = parent,
            _ => return false,
        }
    }
    false
}

/// The parent of `pid`, from `/proc/PID/stat`, whose second field (the
/// command name, in parentheses) may itself hold spaces and parentheses.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// `NNBENCH_GPU=nvml` takes the GPU figures from NVML even where libtorch's
/// allocator could give them, to compare the two: NVML counts what the
/// driver gave the process (its CUDA context, the allocator's cached
/// blocks, other libraries' memory), the allocator only live tensors.
#[cfg(feature = "tch")]
pub(crate) fn nvml_forced() -> bool {
    std::env::var("NNBENCH_GPU").is_ok_and(|v| v == "nvml")
}

/// The GPUs and driver for the run's context, or why there are none; the
/// method is libtorch's allocator where the `tch` feature finds an accelerator.
pub(crate) fn context() -> GpuContext {
    let context = nvml_context();
    // Asked here, as the run starts, so that libtorch's first answer is not
    // waited for inside a timed call.
    #[cfg(feature = "tch")]
    if !nvml_forced() && super::torch_allocator::accelerator().is_ok() {
        return GpuContext {
            available: true,
            reason: None,
            method: Some(GpuMethod::TorchAllocator),
            ..context
        };
    }
    context
}

fn nvml_context() -> GpuContext {
    match gpu() {
        Err(reason) => GpuContext {
            available: false,
            reason: Some(reason.to_owned()),
            ..GpuContext::default()
        },
        Ok(gpu) => GpuContext {
            available: true,
            reason: None,
            driver: gpu.nvml.driver_version(),
            method: Some(gpu.method),
            devices: (0..gpu.devices)
                .map(|index| GpuDevice {
                    index,
                    name: gpu.nvml.name(index),
                    memory_bytes: gpu.nvml.memory(index).map(|(total, _)| total),
                })
                .collect(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_descends_from_this_process() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep runs");
        let me = std::process::id();
        assert!(descends_from(child.id(), me));
        assert!(descends_from(me, me));
        assert!(!descends_from(me, child.id()));
        assert_eq!(parent_of(child.id()), Some(me));
        let _ = child.kill();
        let _ = child.wait();
    }
}
