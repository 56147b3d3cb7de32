//! A memory cgroup a test puts its bench in, where the machine gives one,
//! and memory held in it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A memory cgroup of a set size, removed when dropped.
pub struct Cgroup(PathBuf);

impl Cgroup {
    /// A new cgroup whose processes may hold `bytes`: under cgroup v2
    /// where `/sys/fs/cgroup` is the unified hierarchy, else under v1's
    /// memory controller; `None` where neither can be made (it takes root
    /// and a writable hierarchy).
    pub fn new(tag: &str, bytes: u64) -> Option<Self> {
        let name = format!("nnbench-{tag}-{}", std::process::id());
        let root = Path::new("/sys/fs/cgroup");
        // A v1 system mounts a plain tmpfs there: a folder made in it is no
        // cgroup, and the files written into it limit nothing.
        let (folder, limit_file) = if root.join("cgroup.controllers").is_file() {
            (root.join(&name), "memory.max")
        } else if root.join("memory/memory.limit_in_bytes").is_file() {
            (root.join("memory").join(&name), "memory.limit_in_bytes")
        } else {
            return None;
        };
        std::fs::create_dir(&folder).ok()?;
        let cgroup = Self(folder);
        std::fs::write(cgroup.0.join(limit_file), bytes.to_string()).ok()?;
        // Without swap, so the limit is the point of the out-of-memory
        // killer and not of paging.
        let swap = if limit_file == "memory.max" {
            "memory.swap.max"
        } else {
            "memory.swappiness"
        };
        let _ = std::fs::write(cgroup.0.join(swap), "0");
        Some(cgroup)
    }

    /// `command` run inside the cgroup, its standard output dropped.
    pub fn run(&self, command: &mut Command) -> Output {
        let mut inside = Command::new("sh");
        inside
            .arg("-c")
            .arg(r#"echo $$ > "$0/cgroup.procs" && exec "$@""#)
            .arg(&self.0)
            .arg(command.get_program())
            .args(command.get_args());
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => inside.env(key, value),
                None => inside.env_remove(key),
            };
        }
        inside
            .stdout(Stdio::null())
            .output()
            .expect("the bench runs in the cgroup")
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// A cgroup of `bytes` for a test, or `None` (the test skips) where none
/// can be made, unless `NNBENCH_REQUIRE_CGROUP` says one must be (as in
/// CI), where this panics.
pub fn for_test(tag: &str, bytes: u64) -> Option<Cgroup> {
    let cgroup = Cgroup::new(tag, bytes);
    let here = cgroup.is_some();
    assert!(
        here || std::env::var_os("NNBENCH_REQUIRE_CGROUP").is_none(),
        "NNBENCH_REQUIRE_CGROUP is set and no memory cgroup could be made (it takes root and a writable /sys/fs/cgroup)"
    );
    if !here {
        eprintln!(
            "skipped: no memory cgroup to run in (making one needs root and a writable /sys/fs/cgroup)"
        );
    }
    cgroup
}

/// Holds `bytes` while it runs, every page written, so that all of them
/// are resident.
pub fn hold(bytes: usize) -> u64 {
    let mut held = vec![0u8; bytes];
    for page in held.chunks_mut(4096) {
        page[0] = 1;
    }
    std::hint::black_box(&held)
        .iter()
        .step_by(4096)
        .map(|&b| u64::from(b))
        .sum()
}
