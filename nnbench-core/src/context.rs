//! The context of a run: host, repository and toolchain.

use std::path::Path;
use std::process::Command;

use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};

use crate::record::{Git, Host, RunContext};

/// Reads the context of a run started from `dir` (for the repository) with
/// `command` as its command line.
pub(crate) fn collect(dir: &Path, command: Vec<String>) -> RunContext {
    let rustc = env!("NNBENCH_RUSTC_VERSION");
    RunContext {
        host: host(),
        git: git(dir),
        nnbench: env!("CARGO_PKG_VERSION").to_owned(),
        rustc: (!rustc.is_empty()).then(|| rustc.to_owned()),
        command,
        gpu: crate::measure::gpu::context(),
    }
}

fn host() -> Host {
    let system = System::new_with_specifics(
        RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing())
            .with_memory(MemoryRefreshKind::nothing().with_ram()),
    )
    .ok();
    let os = match (System::name().ok(), System::os_version().ok()) {
        (Some(name), Some(version)) => Some(format!("{name} {version}")),
        (name, _) => name,
    };
    Host {
        hostname: System::host_name().ok(),
        os,
        kernel: System::kernel_version().ok(),
        arch: std::env::consts::ARCH.to_owned(),
        cpu: system
            .as_ref()
            .and_then(|s| s.cpus().first())
            .map(|cpu| cpu.brand().trim().to_owned())
            .filter(|brand| !brand.is_empty()),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        physical_cores: System::physical_core_count().ok(),
        memory_bytes: system.map(|s| s.total_memory()).filter(|&m| m > 0),
    }
}

fn git(dir: &Path) -> Option<Git> {
    let run = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    let commit = run(&["rev-parse", "HEAD"])?;
    let branch = run(&["rev-parse", "--abbrev-ref", "HEAD"]).filter(|b| b != "HEAD");
    let dirty =
        run(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(Git {
        commit,
        branch,
        dirty,
    })
}

/// Now, in RFC 3339, UTC, to the millisecond.
pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}
