//! Where a run's figures come from: the host, the repository's state and
//! the toolchain, gathered into the record's `context`.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use sysinfo::{CpuRefreshKind, MemoryRefreshKind, RefreshKind, System};

use super::git_head::{self, Head};
use crate::record::{Git, Host, RunContext};

/// Reads the context of a run started from `dir` (for the repository) with
/// `command` as its command line.
pub(crate) fn collect(dir: &Path, command: Vec<String>) -> RunContext {
    let rustc = env!("NNBENCH_RUSTC_VERSION");
    // git runs while the host is read: the run waits for the context
    // before its first case, and git takes tens of milliseconds.
    let git = GitQuery::start(dir);
    let host = host();
    let gpu = crate::measure::gpu::context();
    RunContext {
        host,
        git: git.finish(),
        nnbench: env!("CARGO_PKG_VERSION").to_owned(),
        rustc: (!rustc.is_empty()).then(|| rustc.to_owned()),
        command,
        gpu,
        machine: None,
    }
}

fn host() -> Host {
    let system = System::new_with_specifics(
        RefreshKind::nothing()
            .with_cpu(CpuRefreshKind::nothing())
            .with_memory(MemoryRefreshKind::nothing().with_ram()),
    );
    let os = match (System::name(), System::os_version()) {
        (Some(name), Some(version)) => Some(format!("{name} {version}")),
        (name, _) => name,
    };
    Host {
        hostname: System::host_name(),
        os,
        kernel: System::kernel_version(),
        arch: std::env::consts::ARCH.to_owned(),
        cpu: system
            .cpus()
            .first()
            .map(|cpu| cpu.brand().trim().to_owned())
            .filter(|brand| !brand.is_empty()),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        physical_cores: System::physical_core_count(),
        memory_bytes: Some(system.total_memory()).filter(|&m| m > 0),
    }
}

/// What describes the checkout: its HEAD, read from its files where they
/// settle it, else from `git rev-parse`; and `git status`, started side
/// by side with that.
struct GitQuery {
    head: Option<Head>,
    /// `rev-parse HEAD --abbrev-ref HEAD`: the commit, then the branch.
    revisions: Option<Child>,
    status: Option<Child>,
}

impl GitQuery {
    fn start(dir: &Path) -> Self {
        let spawn = |args: &[&str]| {
            Command::new("git")
                .args(args)
                .current_dir(dir)
                // `git status` refreshes a stale index and writes it back,
                // under index.lock: a git command of the user's meanwhile
                // would fail on the lock. A variable, which a git too old
                // to know it ignores, where the flag would fail it.
                .env("GIT_OPTIONAL_LOCKS", "0")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .ok()
        };
        let status = spawn(&["status", "--porcelain", "--untracked-files=no"]);
        let head = git_head::read(dir);
        Self {
            revisions: match head {
                Some(_) => None,
                None => spawn(&["rev-parse", "HEAD", "--abbrev-ref", "HEAD"]),
            },
            head,
            status,
        }
    }

    fn finish(self) -> Option<Git> {
        let output = |child: Option<Child>| -> Option<String> {
            let out = child?.wait_with_output().ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
        };
        // Without its status, the checkout's state is unknown: a commit
        // recorded as clean might not be what ran.
        let status = output(self.status)?;
        let Head { commit, branch } = match self.head {
            Some(head) => head,
            None => {
                let revisions = output(self.revisions)?;
                let mut lines = revisions.lines().map(str::trim);
                Head {
                    commit: lines.next().filter(|c| !c.is_empty())?.to_owned(),
                    branch: lines.next().filter(|b| *b != "HEAD").map(str::to_owned),
                }
            }
        };
        Some(Git {
            commit,
            branch,
            dirty: !status.trim().is_empty(),
        })
    }
}
