//! Series of the kinds a real history holds, with a planted step or
//! without, for the step search and a peer's to be judged on side by side:
//! normal noise, heavy tails (Student's t with 3 degrees of freedom),
//! bimodal runs, lone outliers, a slow drift, and short histories.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal, StudentT};

/// The noise's scale, a share of the figure.
pub const NOISE: f64 = 0.03;

/// How a run's figure scatters about its level.
#[derive(Clone, Copy)]
pub enum Noise {
    /// Normal, with a standard deviation of [`NOISE`].
    Normal,
    /// Student's t with 3 degrees of freedom, scaled to the standard
    /// deviation of [`NOISE`]: a run far off now and then.
    HeavyTailed,
    /// Two modes [`NOISE`] apart, the upper a third of the runs (a cache
    /// that sometimes misses), each with a third of the normal noise.
    Bimodal,
}

/// A kind of series.
#[derive(Clone, Copy)]
pub struct Kind {
    pub name: &'static str,
    pub commits: usize,
    pub noise: Noise,
    /// The step planted, a share of the level; 0 for none.
    pub step: f64,
    /// Runs far below their neighbours (0.6 of the level), placed at random.
    pub outliers: usize,
    /// How far the level drifts from the first commit to the last, a share.
    pub drift: f64,
}

impl Kind {
    const fn normal(name: &'static str, step: f64) -> Self {
        Kind {
            name,
            commits: 100,
            noise: Noise::Normal,
            step,
            outliers: 0,
            drift: 0.0,
        }
    }
}

/// The kinds of series, each searched with its step and without.
pub const KINDS: [Kind; 9] = [
    Kind::normal("normal 3% noise, a 2% step", 0.02),
    Kind::normal("normal 3% noise, a 5% step", 0.05),
    Kind::normal("normal 3% noise, a 10% step", 0.10),
    Kind::normal("normal 3% noise, a 20% step", 0.20),
    Kind {
        noise: Noise::HeavyTailed,
        ..Kind::normal("heavy-tailed noise (t, 3 df), a 5% step", 0.05)
    },
    Kind {
        noise: Noise::Bimodal,
        ..Kind::normal("bimodal runs, a 5% step", 0.05)
    },
    Kind {
        outliers: 3,
        ..Kind::normal("3 lone outliers at -40%, a 5% step", 0.05)
    },
    Kind {
        drift: 0.10,
        ..Kind::normal("a slow 10% drift, a 5% step", 0.05)
    },
    Kind {
        commits: 20,
        ..Kind::normal("20 commits, a 10% step", 0.10)
    },
];

/// One series of `kind`, one run a commit, its step (where `stepped`) at
/// a commit drawn from the middle three fifths; the series and that commit.
pub fn draw(kind: &Kind, stepped: bool, rng: &mut StdRng) -> (Vec<f64>, Option<usize>) {
    let n = kind.commits;
    let at = stepped.then(|| rng.random_range(n / 5..n - n / 5));
    let t3 = StudentT::new(3.0).expect("3 degrees of freedom");
    let mut values: Vec<f64> = (0..n)
        .map(|i| {
            let mut level = 1.0 + kind.drift * i as f64 / (n - 1) as f64;
            if at.is_some_and(|at| i >= at) {
                level *= 1.0 + kind.step;
            }
            let z: f64 = StandardNormal.sample(rng);
            let scatter = match kind.noise {
                Noise::Normal => NOISE * z,
                // t with 3 df has variance 3.
                Noise::HeavyTailed => NOISE * t3.sample(rng) / 3f64.sqrt(),
                Noise::Bimodal => {
                    let upper = if rng.random_bool(1.0 / 3.0) {
                        NOISE
                    } else {
                        0.0
                    };
                    upper + NOISE / 3.0 * z
                }
            };
            level * (1.0 + scatter)
        })
        .collect();
    for _ in 0..kind.outliers {
        let i = rng.random_range(0..n);
        values[i] *= 0.6;
    }
    (values, at)
}

/// `trials` series of `kind` with a step and `trials` without, seeded by
/// `seed`: each series and its planted step.
pub fn trials(kind: &Kind, trials: usize, seed: u64) -> Vec<(Vec<f64>, Option<usize>)> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..2 * trials)
        .map(|i| draw(kind, i % 2 == 0, &mut rng))
        .collect()
}

/// How a search did on a kind's series: series with a step in which it
/// found one within [`NEAR`] commits of it, of how many; steps it found,
/// and how many of those lay within [`NEAR`] of a planted one.
#[derive(Clone, Copy, Default)]
pub struct Scored {
    pub found_planted: usize,
    pub planted: usize,
    pub true_steps: usize,
    pub steps: usize,
}

/// How far from the planted commit a step found still counts as it: the
/// margin of 5 points that van den Burg and Williams set for their
/// benchmark of change point detectors ("An Evaluation of Change Point
/// Detection Algorithms", 2020, arXiv:2003.06222), on which Mozilla's
/// study of its own performance alerts scores detectors too. With one run
/// a commit, the noise alone moves where a 5% step in 3% noise is placed
/// by a few commits in some series, whatever the method (the normal
/// likelihood's best split included): a tighter margin would score that,
/// not whether the step is found.
pub const NEAR: usize = 5;

/// Scores `found` (each series' steps, as first commits after them)
/// against `series`' planted steps.
pub fn score(series: &[(Vec<f64>, Option<usize>)], found: &[Vec<usize>]) -> Scored {
    let mut scored = Scored::default();
    for ((_, at), steps) in series.iter().zip(found) {
        let near = |s: &usize| at.is_some_and(|at| s.abs_diff(at) <= NEAR);
        if at.is_some() {
            scored.planted += 1;
            if steps.iter().any(near) {
                scored.found_planted += 1;
            }
        }
        scored.steps += steps.len();
        // Two found beside one planted step: one is true, the other false.
        scored.true_steps += usize::from(steps.iter().any(near));
    }
    scored
}
