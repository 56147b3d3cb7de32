//! The load a CI runner or a developer's machine has: a cold release build
//! of this workspace, started again each time it ends. What the figure
//! benches measure "beside a build" runs while one is held.

use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A cold release build of the workspace into a folder of its own, started
/// again each time it ends, until dropped.
pub struct Build {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl Build {
    /// Starts the build, and waits out its first seconds, which resolve and
    /// read: its compiling is the load.
    pub fn start() -> Result<Build, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let target = dir.path().join("target");
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || build_until(&flag, &target));
        std::thread::sleep(Duration::from_secs(10));
        Ok(Build {
            stop,
            thread: Some(thread),
            _dir: dir,
        })
    }
}

impl Drop for Build {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn build_until(stop: &AtomicBool, target: &Path) {
    while !stop.load(Ordering::Relaxed) {
        let _ = std::fs::remove_dir_all(target);
        let Ok(mut child) = cargo_build(target) else {
            return;
        };
        while !stop.load(Ordering::Relaxed) {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        end(&mut child);
    }
}

/// Ends the build and every compiler it started: cargo killed alone
/// leaves its rustc processes compiling for seconds after it, a load on
/// whatever is measured next.
fn end(child: &mut Child) {
    match i32::try_from(child.id()) {
        // SAFETY: kill only sends a signal; the negative id names the
        // process group that `cargo_build` made for the build alone.
        Ok(group) => unsafe {
            libc::kill(-group, libc::SIGKILL);
        },
        Err(_) => {
            let _ = child.kill();
        }
    }
    let _ = child.wait();
}

fn cargo_build(target: &Path) -> std::io::Result<Child> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Command::new(cargo)
        .args([
            "build",
            "--release",
            "--offline",
            "--workspace",
            "--target-dir",
        ])
        .arg(target)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // A group of its own, which `end` kills whole.
        .process_group(0)
        .spawn()
}

/// The load average over the last minute.
pub fn load() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}
