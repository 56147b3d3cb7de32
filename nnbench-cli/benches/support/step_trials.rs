//! How well the history's step search (`nnbench history regressions`)
//! finds a step: series of figures along commits drawn in normal noise,
//! with a step and without, searched as the history searches them.

use nnbench_cli::history::steps::{self, Step};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Distribution, StandardNormal};

/// The commits of each series.
pub const COMMITS: usize = 50;
/// The step, a share of the figure.
pub const STEP: f64 = 0.10;
/// The noise's standard deviation, a share of the figure.
pub const NOISE: f64 = 0.03;

/// Where the search put the step of series that had one.
#[derive(Default)]
pub struct Located {
    pub exact: usize,
    pub one_off: usize,
    /// No step, more than one, or one further away.
    pub wrong: usize,
}

/// `COMMITS` commits of `runs` runs each, `STEP` higher from commit `at`
/// on (none without).
fn series(rng: &mut StdRng, runs: usize, at: Option<usize>) -> Vec<Vec<f64>> {
    (0..COMMITS)
        .map(|i| {
            let level = if at.is_some_and(|at| i >= at) {
                1.0 + STEP
            } else {
                1.0
            };
            (0..runs)
                .map(|_| {
                    let z: f64 = StandardNormal.sample(rng);
                    level * (1.0 + NOISE * z)
                })
                .collect()
        })
        .collect()
}

/// `trials` series with a step at commit 10 to 34 (in turn), `runs` runs
/// a commit, searched at `significance`.
pub fn locate(trials: usize, runs: usize, significance: f64) -> Located {
    let mut rng = StdRng::seed_from_u64(1);
    let mut located = Located::default();
    for trial in 0..trials {
        let at = 10 + trial % 25;
        match steps::find(&series(&mut rng, runs, Some(at)), significance)[..] {
            [Step { at: found, .. }] if found == at => located.exact += 1,
            [Step { at: found, .. }] if found.abs_diff(at) == 1 => located.one_off += 1,
            _ => located.wrong += 1,
        }
    }
    located
}

/// Of `trials` series without a step, one run a commit, how many the
/// search at `significance` says have one.
pub fn false_alarms(trials: usize, significance: f64) -> usize {
    let mut rng = StdRng::seed_from_u64(2);
    (0..trials)
        .filter(|_| !steps::find(&series(&mut rng, 1, None), significance).is_empty())
        .count()
}
