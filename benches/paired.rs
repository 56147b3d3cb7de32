//! How well each way of gating time tells a slower build from an
//! unchanged one on this machine, measured side by side in one run.
//!
//! The "builds" are this bench binary behind scripts that set how much
//! more work its `kernel` case does (0, 1, 2, 5 or 10% more): the base does
//! none more, the head the change. Each trial judges one pair of builds
//! with one method, trials of every method and change interleaved:
//!
//! - paired wall time: `--paired BASE --paired-clock wall`;
//! - paired CPU time: `--paired BASE --paired-clock cpu`, at the default
//!   limit (3%) and at `--fail-on time=1%`;
//! - instruction counts: `--paired BASE --instructions` (one call counted
//!   under Callgrind on each build);
//! - the stored baseline: the base run with `--save-baseline`, then the
//!   head with `--baseline`, each a plain run.
//!
//! It prints, per method, the false alarms among identical builds, the
//! trials that caught each change, the smallest change caught 19 times in
//! 20, and what a run costs; and what a paired run costs against one plain
//! run of the same case.
//!
//! `cargo bench --bench paired` (twenty trials of each; about half an hour
//! on 2 cores); `NNBENCH_PAIRED_TRIALS=N` for another number.

#[path = "support/harness.rs"]
mod harness;
#[path = "support/stats.rs"]
mod stats;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::RunRecord;
use nnbench::record::Verdict;
use nnbench_units::format_ns;
use stats::median;

/// Set in the processes this bench starts as a build of itself.
const CHILD: &str = "NNBENCH_PAIRED_CHILD";
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
    (0..steps).fold(0u64, |acc, i| {
        std::hint::black_box(acc.rotate_left(5) ^ TABLE[(i & 4095) as usize])
    })
}

/// A way of judging a pair of builds.
#[derive(Clone, Copy)]
enum Method {
    PairedWall,
    PairedCpu,
    PairedCpuTight,
    Instructions,
    Stored,
}

impl Method {
    const ALL: [Method; 5] = [
        Method::PairedWall,
        Method::PairedCpu,
        Method::PairedCpuTight,
        Method::Instructions,
        Method::Stored,
    ];

    fn name(self) -> &'static str {
        match self {
            Method::PairedWall => "paired, wall time",
            Method::PairedCpu => "paired, CPU time",
            Method::PairedCpuTight => "paired, CPU time, time=1%",
            Method::Instructions => "instruction counts",
            Method::Stored => "stored baseline",
        }
    }

    /// The changes it is tried on, in tenths of a percent: instruction
    /// counts on a 1% change too.
    fn changes(self) -> &'static [u64] {
        match self {
            Method::Instructions => &[0, 10, 20, 50, 100],
            _ => &[0, 20, 50, 100],
        }
    }
}

/// A build of this bench: a script that sets how much more work it does.
fn build(dir: &Path, tenths: u64) -> Result<PathBuf, String> {
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

/// One trial: whether `method` called the head (`tenths` more work) slower
/// than the base, and how long it took.
fn trial(method: Method, dir: &Path, tenths: u64) -> Result<(bool, f64), String> {
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
            case.paired
                .as_ref()
                .is_some_and(|p| p.verdict == Verdict::Regressed)
        }
    };
    Ok((regressed, started.elapsed().as_secs_f64()))
}

/// What one method did over its trials: per change, the trials that
/// called the head slower; and the seconds each trial took.
struct Tally {
    caught: Vec<(u64, usize)>,
    seconds: Vec<f64>,
}

fn judge(trials: usize, valgrind: bool) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let methods: Vec<Method> = Method::ALL
        .into_iter()
        .filter(|m| valgrind || !matches!(m, Method::Instructions))
        .collect();
    let mut tallies: Vec<Tally> = methods
        .iter()
        .map(|m| Tally {
            caught: m.changes().iter().map(|&c| (c, 0)).collect(),
            seconds: Vec::new(),
        })
        .collect();
    // Trial by trial, every method and change in turn: a slow spell of the
    // machine falls on all of them alike.
    for _ in 0..trials {
        for (method, tally) in methods.iter().zip(&mut tallies) {
            for (change, caught) in &mut tally.caught {
                let (regressed, seconds) = trial(*method, dir.path(), *change)?;
                *caught += usize::from(regressed);
                tally.seconds.push(seconds);
            }
        }
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "method",
        "false alarms",
        "1% caught",
        "2% caught",
        "5% caught",
        "10% caught",
        "smallest caught 19 in 20",
        "a trial",
    ]);
    let mut smallest = Vec::new();
    for (method, tally) in methods.iter().zip(&tallies) {
        let of = |change: u64| {
            tally
                .caught
                .iter()
                .find(|(c, _)| *c == change)
                .map(|(_, n)| *n)
        };
        let cell = |change: u64| of(change).map_or("-".into(), |n| format!("{n} of {trials}"));
        let caught_well = tally
            .caught
            .iter()
            .filter(|(c, n)| *c > 0 && *n * 20 >= trials * 19)
            .map(|(c, _)| *c)
            .min();
        smallest.push((method.name(), of(0), caught_well));
        table.add_row([
            method.name().to_owned(),
            cell(0),
            cell(10),
            cell(20),
            cell(50),
            cell(100),
            caught_well.map_or("none of those tried".into(), |c| {
                format!("{}%", c as f64 / 10.0)
            }),
            format_ns(median(&tally.seconds) * 1e9),
        ]);
    }
    harness::note(format!(
        "{trials} trials of each method on each change of a ~100 µs single-threaded case, interleaved; the default limits unless the method says (paired time 3%, instructions 0.5%, stored baseline 10%):"
    ));
    harness::table(&table);
    for (name, false_alarms, caught) in smallest {
        let ok = false_alarms.is_some_and(|n| n * 20 <= trials);
        harness::note(format!(
            "{name}: {} false alarms in {trials} identical pairs (target at most 1 in 20) {}; smallest change caught 19 times in 20: {}",
            false_alarms.unwrap_or(0),
            harness::verdict(ok),
            caught.map_or("none of those tried".into(), |c| format!(
                "{}%",
                c as f64 / 10.0
            )),
        ));
    }
    cost(dir.path())
}

/// A paired run of the case against one plain run of it, whole processes
/// alternating, medians of seven.
fn cost(dir: &Path) -> Result<(), String> {
    let runs = if harness::test_mode() { 1 } else { 7 };
    let base = build(dir, 0)?;
    let base_path = base.to_string_lossy().into_owned();
    let time = |flags: &[&str]| -> Result<f64, String> {
        let started = Instant::now();
        let status = Command::new(&base)
            .env("CARGO_TARGET_DIR", dir)
            .args(["--bench", "--quiet"])
            .args(flags)
            .args(["--exact", "kernel"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| e.to_string())?;
        if status.code().is_some_and(|c| c <= 1) {
            Ok(started.elapsed().as_secs_f64())
        } else {
            Err(format!("a run with {flags:?} ended with {status}"))
        }
    };
    let (mut plain, mut paired) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        plain.push(time(&[])?);
        paired.push(time(&["--paired", &base_path])?);
    }
    let ratio = median(&paired) / median(&plain);
    harness::note(format!(
        "a paired run of the case {} against a plain run {}: {ratio:.2}x (target at most 2.5x) {}",
        format_ns(median(&paired) * 1e9),
        format_ns(median(&plain) * 1e9),
        harness::verdict(ratio <= 2.5)
    ));
    Ok(())
}

fn main() {
    if std::env::var_os(CHILD).is_some() {
        let tenths = std::env::var(EXTRA)
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        EXTRA_TENTHS.store(tenths, Ordering::Relaxed);
        nnbench::__private::main("paired", env!("CARGO_MANIFEST_DIR"));
    }
    if !harness::should_run("paired") {
        return;
    }
    let trials = match std::env::var("NNBENCH_PAIRED_TRIALS") {
        Ok(n) => n.parse().unwrap_or(20),
        Err(_) if harness::test_mode() => 1,
        Err(_) => 20,
    };
    let valgrind = Command::new(std::env::var_os("NNBENCH_VALGRIND").unwrap_or("valgrind".into()))
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !valgrind {
        harness::note(
            "no valgrind here (scripts/valgrind.sh installs it): instruction counts are left out",
        );
    }
    if let Err(message) = judge(trials, valgrind) {
        eprintln!("paired: {message}");
        std::process::exit(1);
    }
    harness::publish("paired");
}
