//! Builds of a bench that differ in how much work its `kernel` case does,
//! and one trial of a way of gating time on a pair of them: what
//! `benches/paired.rs` and `benches/false_alarms.rs` measure.
//!
//! The "builds" are the bench binary behind scripts that set how much
//! more work its `kernel` does, in tenths of a percent.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use nnbench::RunRecord;
use nnbench::record::Verdict;

/// Set in the processes this bench starts as a build of itself.
pub const CHILD: &str = "NNBENCH_PAIRED_CHILD";
/// How much more work this build's `kernel` does, in tenths of a percent.
const EXTRA: &str = "NNBENCH_PAIRED_EXTRA";

/// [`EXTRA`], read once before any case runs, so that reading it is no
/// part of what a call costs or counts.
static EXTRA_TENTHS: AtomicU64 = AtomicU64::new(0);

/// The numbers the kernel mixes in: 32 KiB, as a model's weights would
/// sit in the first-level cache.
static TABLE: [u64; 4096] = {
    let mut table = [0u64; 4096];
    let mut i = 0;
    while i < 4096 {
        table[i] = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        i += 1;
    }
    table
};

/// About 100 µs of single-threaded work, the change's more.
#[nnbench::benchmark]
fn kernel() -> u64 {
    const STEPS: u64 = 200_000;
    let steps = STEPS + STEPS * EXTRA_TENTHS.load(Ordering::Relaxed) / 1000;
    mix(steps, std::hint::black_box(&TABLE))
}

/// `steps` steps of a chain of rotations, mixing in `table`.
///
/// The accumulator stays in a register. Passed through `black_box` at
/// every step, it is stored and loaded back, and on some CPUs how fast
/// that load is served flips for milliseconds at a time, which made the
/// kernel's own speed the noise the figures measured.
pub fn mix(steps: u64, table: &[u64]) -> u64 {
    (0..steps).fold(0u64, |acc, i| {
        acc.rotate_left(5) ^ table[(i & 4095) as usize]
    })
}

/// A way of judging a pair of builds.
#[derive(Clone, Copy)]
pub enum Method {
    PairedWall,
    PairedCpu,
    PairedCpuTight,
    /// Paired CPU time at `--fail-on time=0.5%`: what `benches/paired.rs`
    /// measures beside a build, not among [`Method::ALL`].
    #[allow(dead_code, reason = "not every bench of builds tries it")]
    PairedCpuHalf,
    Instructions,
    Stored,
}

impl Method {
    pub const ALL: [Method; 5] = [
        Method::PairedWall,
        Method::PairedCpu,
        Method::PairedCpuTight,
        Method::Instructions,
        Method::Stored,
    ];

    /// What it is, without its limit ([`Method::limit`]).
    pub fn name(self) -> &'static str {
        match self {
            Method::PairedWall => "paired, wall time",
            Method::PairedCpu => "paired, CPU time",
            Method::PairedCpuTight | Method::PairedCpuHalf => "paired, CPU time",
            Method::Instructions => "instruction counts",
            Method::Stored => "stored baseline",
        }
    }

    /// The limit it judges a change by: the default one unless it says.
    pub fn limit(self) -> &'static str {
        match self {
            Method::PairedCpuTight => "1%",
            Method::PairedCpuHalf | Method::Instructions => "0.5%",
            Method::Stored => "10%",
            Method::PairedWall | Method::PairedCpu => "3%",
        }
    }
}

/// A build of this bench: a script that sets how much more work it does.
pub fn build(dir: &Path, tenths: u64) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let path = dir.join(format!("build-{tenths}"));
    let script = format!(
        "#!/bin/sh\nexport {CHILD}=1 {EXTRA}={tenths}\nexec '{}' \"$@\"\n",
        exe.display()
    );
    std::fs::write(&path, script).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// What one trial of a method on a pair of builds gave.
pub struct Trial {
    /// Whether the method called the head slower than the base.
    pub regressed: bool,
    /// How long the trial took, in seconds.
    pub seconds: f64,
    /// A paired run's rounds: each round's ratio of the builds' median
    /// wall-time samples, and of their least CPU-time samples.
    #[allow(dead_code, reason = "not every bench of builds reads the rounds")]
    pub rounds: (Vec<f64>, Vec<f64>),
}

/// One trial: whether `method` called the head (`tenths` more work) slower
/// than the base, how long it took, and its rounds.
pub fn trial(method: Method, dir: &Path, tenths: u64) -> Result<Trial, String> {
    let base = build(dir, 0)?;
    let head = build(dir, tenths)?;
    let out = dir.join("run.json");
    let bench = |build: &Path, flags: &[&str]| -> Result<i32, String> {
        let mut command = Command::new(build);
        command
            .env("CARGO_TARGET_DIR", dir)
            .args(["--bench", "--quiet", "--out"])
            .arg(&out)
            .args(flags)
            .args(["--exact", "kernel"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let status = command.status().map_err(|e| format!("{command:?}: {e}"))?;
        status
            .code()
            .filter(|code| *code <= 1)
            .ok_or_else(|| format!("{command:?} ended with {status}"))
    };
    let base_path = base.to_string_lossy().into_owned();
    let started = Instant::now();
    let mut rounds = (Vec::new(), Vec::new());
    let regressed = match method {
        Method::Stored => {
            bench(&base, &["--save-baseline", "base"])?;
            bench(&head, &["--baseline", "base"])? == 1
        }
        paired => {
            let flags: &[&str] = match paired {
                Method::PairedWall => &["--paired-clock", "wall"],
                Method::PairedCpu => &["--paired-clock", "cpu"],
                Method::PairedCpuTight => &["--paired-clock", "cpu", "--fail-on", "time=1%"],
                Method::PairedCpuHalf => &["--paired-clock", "cpu", "--fail-on", "time=0.5%"],
                _ => &["--instructions"],
            };
            let mut all = vec!["--paired", base_path.as_str()];
            all.extend(flags);
            bench(&head, &all)?;
            let record = RunRecord::read(&out).map_err(|e| e.to_string())?;
            let case = record.cases.first().ok_or("the paired run ran no case")?;
            if let Some(error) = &case.error {
                return Err(format!("{}: {}", method.name(), error.summary()));
            }
            let paired = case.paired.as_ref().ok_or("the case was not paired")?;
            rounds = (paired.wall_ratios.clone(), paired.cpu_ratios.clone());
            paired.verdict == Verdict::Regressed
        }
    };
    Ok(Trial {
        regressed,
        seconds: started.elapsed().as_secs_f64(),
        rounds,
    })
}

/// In a process this bench started as one of its builds, runs the bench
/// `name` as that build, and does not return.
pub fn run_as_build(name: &str) {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let tenths = std::env::var(EXTRA)
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    EXTRA_TENTHS.store(tenths, Ordering::Relaxed);
    nnbench::main!(bench = name);
}

/// The number of trials to run: `var`, else `default` (one in test
/// mode); and whether valgrind runs here, for instruction counts, which
/// are left out, with a note, where it does not.
pub fn trials_and_valgrind(var: &str, default: usize) -> (usize, bool) {
    let trials = match std::env::var(var) {
        Ok(n) => n.parse().unwrap_or(default),
        Err(_) if crate::harness::test_mode() => 1,
        Err(_) => default,
    };
    let valgrind = Command::new(std::env::var_os("NNBENCH_VALGRIND").unwrap_or("valgrind".into()))
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !valgrind {
        crate::harness::note(crate::harness::peer_missing(
            "instruction counts",
            "no valgrind here; scripts/valgrind.sh installs it",
        ));
    }
    (trials, valgrind)
}
