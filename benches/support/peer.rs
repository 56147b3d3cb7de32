//! Whole processes measured from outside, and the Python peer: Python
//! nnbench 0.4 with numpy in a virtual environment that
//! `scripts/python-peer.sh` makes from PyPI (cached), running the scripts
//! beside this file.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Runs `command` to its end; its wall time and peak resident memory.
///
/// The peak is the largest of the child's high-water mark (`VmHWM`) and
/// resident memory (`VmRSS`) read every millisecond: nnbench resets the
/// high-water mark at each case (that is how it gets exact per-case
/// peaks), which the resident memory read between resets makes up for.
/// The kernel's `ru_maxrss` would not do: a child keeps the high-water
/// mark of the memory it was started from, so it counts this process.
#[allow(
    dead_code,
    reason = "not every bench with a peer measures whole processes"
)]
pub fn measure(command: &mut Command) -> Result<(Duration, u64), String> {
    let started = Instant::now();
    let mut child = command.spawn().map_err(|e| format!("{command:?}: {e}"))?;
    let done = Arc::new(AtomicBool::new(false));
    let poller = std::thread::spawn({
        let (done, status) = (Arc::clone(&done), format!("/proc/{}/status", child.id()));
        move || {
            let mut peak = 0u64;
            while !done.load(Ordering::Relaxed) {
                let text = std::fs::read_to_string(&status).unwrap_or_default();
                for line in text.lines() {
                    let kib = ["VmHWM:", "VmRSS:"]
                        .iter()
                        .find_map(|field| line.strip_prefix(field))
                        .and_then(|rest| rest.trim().trim_end_matches(" kB").parse::<u64>().ok());
                    peak = peak.max(kib.unwrap_or(0) * 1024);
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            peak
        }
    });
    let status = child.wait();
    let wall = started.elapsed();
    done.store(true, Ordering::Relaxed);
    let peak = poller.join().unwrap_or(0);
    let status = status.map_err(|e| format!("waiting for {command:?}: {e}"))?;
    if !status.success() {
        return Err(format!("{command:?} failed ({status})"));
    }
    Ok((wall, peak))
}

/// This repository.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Python peer's interpreter: `NNBENCH_PEER_PYTHON`, or the one the
/// script makes (or finds cached).
pub fn python() -> Result<PathBuf, String> {
    made_by("scripts/python-peer.sh", "NNBENCH_PEER_PYTHON")
}

/// The path `variable` names, else the one the repository's `script`
/// prints as it makes (or finds cached) what it makes.
pub fn made_by(script: &str, variable: &str) -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os(variable) {
        return Ok(path.into());
    }
    let output = Command::new("bash")
        .arg(repo().join(script))
        .output()
        .map_err(|e| format!("{script}: {e}"))?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(format!("{script} failed: {}", said.trim()));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().into())
}

/// The peer's script `name` (under `benches/support/`) with `args`, run
/// by `python`.
pub fn script(python: &Path, name: &str, args: &[String]) -> Command {
    let mut command = Command::new(python);
    command
        .arg(repo().join("benches/support").join(name))
        .args(args);
    command
}

/// The seed sweep in Python nnbench (`peer_sweep.py`) on the `side × side`
/// models and the `side × batch` dataset in `data`, evicting each model in
/// its teardown unless `keep`: its wall time and peak resident memory.
#[allow(dead_code, reason = "not every bench with a peer runs the sweep")]
pub fn sweep(
    python: &Path,
    data: &Path,
    side: usize,
    batch: usize,
    keep: bool,
) -> Result<(Duration, u64), String> {
    let mut args = vec![
        data.display().to_string(),
        side.to_string(),
        batch.to_string(),
    ];
    if keep {
        args.push("keep".into());
    }
    let mut command = script(python, "peer_sweep.py", &args);
    command.stdout(std::process::Stdio::null());
    measure(&mut command)
}
