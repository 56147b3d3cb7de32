//! A sweep of slow fixtures, paired: three models of 64 MiB, each built in
//! memory in over a second (as one is loaded from a checkpoint), two batch
//! sizes each, paired with `--paired-keep 1s`. What `benches/paired.rs`
//! prints of it: the verdicts, the cases judged again on new workers, and
//! how many times each build built each model.

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

/// How long building a model takes, in milliseconds, and the
/// `--paired-keep` that keeps it: a tenth of that in test mode, where only
/// that the sweep runs is checked.
pub fn build_and_keep() -> (u64, &'static str) {
    if crate::harness::test_mode() {
        (120, "100ms")
    } else {
        (1200, "1s")
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
        build_and_keep().0,
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

/// One paired run of the sweep, the head making `slower` slower, its
/// workers kept for their fixtures where `keep` (`--paired-keep`), else
/// new ones every round.
pub fn pair(dir: &Path, slower: Option<&str>, keep: bool) -> Result<Sweep, String> {
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
            keep.then_some(["--paired-keep", build_and_keep().1])
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
    let count = |m: u64, side: &str| {
        said.matches(&format!("building Model({m}) on {side}\n"))
            .count()
    };
    let record = RunRecord::read(&out).map_err(|e| e.to_string())?;
    let mut sweep = Sweep {
        regressed: Vec::new(),
        unchanged: 0,
        again: 0,
        builds: [1, 2, 3].map(|m| (count(m, "head"), count(m, "base"))),
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
                .any(|w| w.starts_with("on workers kept for its fixtures")),
        );
        match paired.verdict {
            Verdict::Regressed => sweep.regressed.push(case.id.clone()),
            Verdict::Unchanged => sweep.unchanged += 1,
            _ => {}
        }
    }
    Ok(sweep)
}
