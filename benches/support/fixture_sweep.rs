//! A sweep of slow fixtures, paired: three models of 64 MiB, each built in
//! memory in over a second (as one is loaded from a checkpoint), two batch
//! sizes each, paired as `--paired BASE` does by default or with a
//! `--paired-keep` of its own. What `benches/paired.rs` prints of it: the
//! verdicts, the cases judged again on new workers, how many times each
//! build built each model, and the run's time against a plain run's.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use nnbench::record::Verdict;
use nnbench::{Memo, RunRecord};

/// Which build this is, as its models say when they are built.
const SIDE: &str = "NNBENCH_SWEEP_SIDE";
/// The case this build makes 10% slower.
const SLOWER: &str = "NNBENCH_SWEEP_SLOWER";
/// How long building a model takes, in milliseconds, as [`build_and_keep`]
/// says.
const BUILD_MS: &str = "NNBENCH_SWEEP_BUILD_MS";

/// How long building a model takes, in milliseconds: a tenth of it in
/// test mode, where only that the sweep runs is checked.
pub fn build_ms() -> u64 {
    if crate::harness::test_mode() {
        120
    } else {
        1200
    }
}

/// A model: 64 MiB of weights, the first its number.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub struct Model(pub u64);

impl Memo for Model {
    type Value = Vec<u64>;
    fn compute(&self) -> nnbench::Result<Vec<u64>> {
        let started = Instant::now();
        let side = std::env::var(SIDE).unwrap_or_else(|_| "head".into());
        eprintln!("building {self:?} on {side}");
        let weights = (0..8u64 << 20)
            .map(|i| {
                if i == 0 {
                    self.0
                } else {
                    i.wrapping_mul(0x9E37_79B9)
                }
            })
            .collect();
        let build_ms = std::env::var(BUILD_MS)
            .ok()
            .and_then(|ms| ms.parse().ok())
            .unwrap_or(1200);
        std::thread::sleep(Duration::from_millis(build_ms).saturating_sub(started.elapsed()));
        Ok(weights)
    }
}

/// About 100 µs of work over the model's first 32 KiB, 10% more in the
/// case [`SLOWER`] names.
#[nnbench::product(model = [Model(1), Model(2), Model(3)], batch = [1, 2])]
fn infer(model: &[u64], batch: u64) -> u64 {
    let id = format!("infer/model=Model({}),batch={batch}", model[0]);
    let mut steps = 100_000 * batch;
    if std::env::var(SLOWER).is_ok_and(|s| s == id) {
        steps += steps / 10;
    }
    super::paired_builds::mix(steps, std::hint::black_box(&model[..4096]))
}

/// A build of the bench as `side`, making `slower` 10% slower.
fn build(dir: &Path, side: &str, slower: Option<&str>) -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let path = dir.join(format!("sweep-{side}"));
    let script = format!(
        "#!/bin/sh\nexport {}=1 {SIDE}={side} {SLOWER}='{}' {BUILD_MS}={}\nexec '{}' \"$@\"\n",
        super::paired_builds::CHILD,
        slower.unwrap_or(""),
        build_ms(),
        exe.display()
    );
    std::fs::write(&path, script).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// What one paired run of the sweep did.
pub struct Sweep {
    pub regressed: Vec<String>,
    pub unchanged: usize,
    /// The cases the kept workers called changed, judged again.
    pub again: usize,
    /// Per model, the builds on the head and on the base.
    pub builds: [(usize, usize); 3],
    pub rounds: u32,
    pub seconds: f64,
}

/// How many times `said` says each model was built on `side`.
fn builds_said(said: &str, side: &str) -> [usize; 3] {
    [1, 2, 3].map(|m| {
        said.matches(&format!("building Model({m}) on {side}\n"))
            .count()
    })
}

/// A plain run of the sweep on this build: its seconds, and how many
/// times it built each model.
pub fn plain(dir: &Path) -> Result<(f64, [usize; 3]), String> {
    let head = build(dir, "head", None)?;
    let started = Instant::now();
    let output = Command::new(&head)
        .env("CARGO_TARGET_DIR", dir)
        .args(["--bench", "--quiet", "infer/"])
        .output()
        .map_err(|e| format!("{}: {e}", head.display()))?;
    let seconds = started.elapsed().as_secs_f64();
    if !output.status.success() {
        return Err(format!(
            "the plain sweep ended with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok((
        seconds,
        builds_said(&String::from_utf8_lossy(&output.stderr), "head"),
    ))
}

/// One paired run of the sweep, the head making `slower` slower, with
/// `--paired-keep KEEP` where `keep` names one (none: the default).
pub fn pair(dir: &Path, slower: Option<&str>, keep: Option<&str>) -> Result<Sweep, String> {
    let base = build(dir, "base", None)?;
    let head = build(dir, "head", slower)?;
    let out = dir.join("sweep.json");
    let started = Instant::now();
    let output = Command::new(&head)
        .env("CARGO_TARGET_DIR", dir)
        .args(["--bench", "--quiet", "--out"])
        .arg(&out)
        .arg("--paired")
        .arg(&base)
        .args(
            keep.map(|keep| ["--paired-keep", keep])
                .into_iter()
                .flatten(),
        )
        .arg("infer/")
        // Each judged again on new workers builds its model in each round.
        .args(
            crate::harness::test_mode()
                .then_some(["--max-rounds", "12"])
                .into_iter()
                .flatten(),
        )
        .output()
        .map_err(|e| format!("{}: {e}", head.display()))?;
    let seconds = started.elapsed().as_secs_f64();
    if output.status.code().is_none_or(|c| c > 1) {
        return Err(format!(
            "the paired sweep ended with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let (head_builds, base_builds) = (builds_said(&said, "head"), builds_said(&said, "base"));
    let record = RunRecord::read(&out).map_err(|e| e.to_string())?;
    let mut sweep = Sweep {
        regressed: Vec::new(),
        unchanged: 0,
        again: 0,
        builds: [0, 1, 2].map(|m| (head_builds[m], base_builds[m])),
        rounds: 0,
        seconds,
    };
    for case in &record.cases {
        let paired = case
            .paired
            .as_ref()
            .ok_or_else(|| format!("{} was not paired: {:?}", case.id, case.error))?;
        sweep.rounds += paired.rounds;
        sweep.again += usize::from(
            case.warnings
                .iter()
                .any(|w| w.starts_with("on workers kept for its group")),
        );
        match paired.verdict {
            Verdict::Regressed => sweep.regressed.push(case.id.clone()),
            Verdict::Unchanged => sweep.unchanged += 1,
            _ => {}
        }
    }
    Ok(sweep)
}
