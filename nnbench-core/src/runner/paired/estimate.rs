//! From the rounds' ratios to a verdict. The ratios are taken as
//! logarithms (a ratio and its inverse weigh alike), which for two builds
//! measured alike scatter symmetrically around the true log ratio, however
//! ragged the machine: a round in a neighbour's burst is as likely to slow
//! either side. So the estimate is the Hodges–Lehmann estimate (the median
//! of the pairwise means of the logs) and its interval the Wilcoxon
//! signed-rank one, which a few wild rounds do not widen as they widen a
//! t interval, nor drag as they drag a mean.
//!
//! A case is looked at after every round from the eighth ([`MIN_ROUNDS`])
//! to `--max-rounds` (100 by default) and stops at the first look that
//! settles it: its interval wholly beyond the limit (regressed), or the
//! upper end of a 95% interval below it (not). Looking again and again
//! lets chance settle more often than one look at the end would, which is
//! why the interval that calls a regression is a 99% one: that error is a
//! false alarm, which a gate must make rare. Stopping a case within the
//! limit is the other error, a slowdown beyond the limit let through, and
//! only a slowdown close to the limit can be let through so: the 95%
//! bound settles an unchanged case on a noisy machine in fewer rounds,
//! and lets through about as many slowdowns (the test
//! `the_lower_bound_to_stop_within_the_limit_costs_no_catches` simulates
//! both).
//! Even so, for identical builds whose rounds are independent draws, the
//! interval of a case lies wholly above 1 at some look in a few cases in
//! 100 (the test below holds it between 1.5 and 5), not under 1. What keeps false alarms rarer is the limit: a
//! slowdown counts only when it is both significant and beyond the limit,
//! since a significance test alone calls the smallest steady difference a
//! regression. The test `identical_builds_looked_at_every_round` simulates
//! such cases (log ratios of 3% spread) and holds the share called
//! regressed to fall as the limit rises, to none at 5%; the repository's
//! `benches/false_alarms.rs` counts them for two identical builds on a
//! real machine.
//! On a real machine, whose rounds are not independent draws, a lasting
//! bias of one build's process (where its memory landed) can add to this,
//! which the fresh workers of each round are there to spread.

use statrs::distribution::{ContinuousCDF, Normal};

use crate::record::Verdict;

pub(crate) use crate::settings::MIN_ROUNDS;

/// How the interval is drawn, as the record says.
pub(crate) const TEST: &str = "99% Wilcoxon signed-rank interval of the Hodges-Lehmann log ratio";

/// The interval that calls a regression: 99%.
static INTERVAL: Level = Level::new(0.01);

/// The interval whose upper end stops a case within the limit: 95%.
static WITHIN: Level = Level::new(0.05);

/// Up to this many rounds the signed-rank distribution is counted exactly;
/// beyond, its normal approximation is within a rank of it.
const EXACT_UP_TO: usize = 100;

/// Head over base, with its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Estimate {
    pub ratio: f64,
    pub interval: [f64; 2],
    /// The upper end of the 95% interval.
    pub within_bound: f64,
}

impl Estimate {
    /// The estimate from the per-round ratios; `None` with fewer than two,
    /// or a ratio that is not a positive number.
    pub(crate) fn of(ratios: &[f64]) -> Option<Self> {
        let n = ratios.len();
        if n < 2 || ratios.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
            return None;
        }
        let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
        let mut means: Vec<f64> = logs
            .iter()
            .enumerate()
            .flat_map(|(i, &a)| logs[i..].iter().map(move |&b| (a + b) / 2.0))
            .collect();
        means.sort_by(f64::total_cmp);
        let count = means.len();
        let median = if count % 2 == 1 {
            means[count / 2]
        } else {
            (means[count / 2 - 1] + means[count / 2]) / 2.0
        };
        // The `depth`-th pairwise mean from either end bounds the interval;
        // at depth 0 (too few rounds for this confidence) it is unbounded.
        let bounds = |level: &Level| match level.depth(n) {
            0 => [0.0, f64::INFINITY],
            depth => [means[depth - 1].exp(), means[count - depth].exp()],
        };
        Some(Self {
            ratio: median.exp(),
            interval: bounds(&INTERVAL),
            within_bound: bounds(&WITHIN)[1],
        })
    }

    /// Regressed when the interval lies above 1 and the estimate beyond
    /// `limit` (a fraction: 0.01 is 1%); improved the other way round.
    pub(crate) fn verdict(&self, limit: f64) -> Verdict {
        if self.interval[0] > 1.0 && self.ratio > 1.0 + limit {
            Verdict::Regressed
        } else if self.interval[1] < 1.0 && self.ratio < 1.0 / (1.0 + limit) {
            Verdict::Improved
        } else {
            Verdict::Unchanged
        }
    }

    /// Whether the case is decided: its interval lies wholly beyond the
    /// limit, or its 95% upper bound within it.
    pub(crate) fn settled(&self, limit: f64) -> bool {
        self.beyond(limit) || self.within_bound < 1.0 + limit
    }

    /// Whether the interval lies wholly beyond the limit: slower by more
    /// than `limit` beyond doubt.
    pub(crate) fn beyond(&self, limit: f64) -> bool {
        self.interval[0] > 1.0 + limit
    }
}

/// A confidence level's interval ends: how deep into the sorted pairwise
/// means they lie, for each number of rounds.
struct Level {
    /// The chance the interval leaves out the true ratio.
    alpha: f64,
    /// The exact depths up to [`EXACT_UP_TO`] rounds, counted once.
    exact: std::sync::OnceLock<Vec<usize>>,
}

impl Level {
    const fn new(alpha: f64) -> Self {
        Self {
            alpha,
            exact: std::sync::OnceLock::new(),
        }
    }

    /// The depth of the interval's ends for `n` rounds.
    fn depth(&self, n: usize) -> usize {
        if n > EXACT_UP_TO {
            return approximate_depth(n, self.alpha);
        }
        self.exact.get_or_init(|| exact_depths(self.alpha))[n]
    }
}

/// The largest `d` for which the signed-rank statistic of `n` rounds falls
/// below `d` with probability at most `alpha / 2`: the interval's ends are
/// the `d`-th smallest and largest pairwise means.
#[cfg(test)]
fn signed_rank_depth(n: usize, alpha: f64) -> usize {
    if n > EXACT_UP_TO {
        approximate_depth(n, alpha)
    } else {
        exact_depths(alpha)[n]
    }
}

/// `signed_rank_depth` for `n` past [`EXACT_UP_TO`], from the normal
/// approximation of the statistic.
fn approximate_depth(n: usize, alpha: f64) -> usize {
    let total = n * (n + 1) / 2;
    let sd = ((n * (n + 1) * (2 * n + 1)) as f64 / 24.0).sqrt();
    let z = Normal::standard().inverse_cdf(1.0 - alpha / 2.0);
    (total as f64 / 2.0 + 0.5 - z * sd).floor().max(0.0) as usize
}

/// The signed-rank depth for every number of rounds up to
/// [`EXACT_UP_TO`], counted exactly: the distribution of the statistic
/// for `n` rounds is that for `n - 1` with the rank `n` added.
fn exact_depths(alpha: f64) -> Vec<usize> {
    let most = EXACT_UP_TO * (EXACT_UP_TO + 1) / 2;
    // ways[s]: the subsets of the ranks so far whose sum is s.
    let mut ways = vec![0f64; most + 1];
    ways[0] = 1.0;
    let mut depths = vec![0; EXACT_UP_TO + 1];
    for n in 1..=EXACT_UP_TO {
        let total = n * (n + 1) / 2;
        for sum in (n..=total).rev() {
            ways[sum] += ways[sum - n];
        }
        let all = 2f64.powi(n as i32);
        let (mut below, mut depth) = (0.0, 0);
        while depth < total && (below + ways[depth]) / all <= alpha / 2.0 {
            below += ways[depth];
            depth += 1;
        }
        depths[n] = depth;
    }
    depths
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Standard normal draws, the same on every run.
    fn normal(seed: u64) -> impl FnMut() -> f64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        move || {
            let (u, v) = (1.0 - rng.f64(), rng.f64());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        }
    }

    /// `cases` simulated pairs whose rounds' log ratios are drawn from one
    /// normal distribution (`spread`, around `ratio`), looked at after every
    /// round from [`MIN_ROUNDS`] to 50, as a paired run looks, stopping at
    /// the first look that `settles` the case: for each of `limits`, the
    /// share called regressed and the mean rounds taken.
    fn simulate<const N: usize>(
        ratio: f64,
        spread: f64,
        limits: [f64; N],
        cases: usize,
        settles: impl Fn(&Estimate, f64) -> bool,
    ) -> [(f64, f64); N] {
        let mut normal = normal(7);
        let mut out = [(0usize, 0usize); N];
        for _ in 0..cases {
            let ratios: Vec<f64> = (0..50).map(|_| ratio * (spread * normal()).exp()).collect();
            let looks: Vec<Estimate> = (MIN_ROUNDS..=50)
                .map(|n| Estimate::of(&ratios[..n]).unwrap())
                .collect();
            for ((regressed, rounds), limit) in out.iter_mut().zip(limits) {
                let stop = looks.iter().position(|e| settles(e, limit));
                let at = stop.unwrap_or(looks.len() - 1);
                *regressed += usize::from(looks[at].verdict(limit) == Verdict::Regressed);
                *rounds += MIN_ROUNDS + at;
            }
        }
        out.map(|(regressed, rounds)| {
            (
                regressed as f64 / cases as f64,
                rounds as f64 / cases as f64,
            )
        })
    }

    /// The shares of `cases` simulated identical builds (3% spread) called
    /// regressed at each of `limits`.
    fn false_alarms<const N: usize>(limits: [f64; N], cases: usize) -> [f64; N] {
        simulate(1.0, 0.03, limits, cases, Estimate::settled).map(|(share, _)| share)
    }

    #[test]
    fn the_lower_bound_to_stop_within_the_limit_costs_no_catches() {
        // The stop as it would be with the 99% interval alone.
        let at_99 = |e: &Estimate, limit: f64| e.beyond(limit) || e.interval[1] < 1.0 + limit;
        // Identical builds on a noisy machine (5% spread), at the default
        // limit: fewer rounds, and no more false alarms.
        let [(alarms, rounds)] = simulate(1.0, 0.05, [0.03], 400, Estimate::settled);
        let [(alarms_99, rounds_99)] = simulate(1.0, 0.05, [0.03], 400, at_99);
        assert!(rounds < rounds_99 * 0.8, "{rounds} against {rounds_99}");
        assert!(alarms <= alarms_99, "{alarms} against {alarms_99}");
        // A slowdown a third beyond the limit, and one of twice the limit,
        // are caught as often within a case or two in 400.
        for (ratio, spread, limit) in [(1.04, 0.05, 0.03), (1.02, 0.02, 0.01)] {
            let [(caught, _)] = simulate(ratio, spread, [limit], 400, Estimate::settled);
            let [(caught_99, _)] = simulate(ratio, spread, [limit], 400, at_99);
            assert!(
                caught >= caught_99 - 0.005,
                "{ratio} at {limit}: {caught} against {caught_99}"
            );
        }
    }

    #[test]
    fn identical_builds_looked_at_every_round() {
        let [none, half, one, five] = false_alarms([0.0, 0.005, 0.01, 0.05], 600);
        // Repeated looks make a 99% interval call about 3 in 100...
        assert!((0.015..0.05).contains(&none), "{none}");
        // ...and the limit is what brings false alarms down.
        assert!(half < none && one <= half, "{none} {half} {one}");
        assert!(one < 0.015, "{one}");
        assert_eq!(five, 0.0);
    }

    #[test]
    fn steady_ratios_give_a_tight_interval_around_them() {
        let e = Estimate::of(&[1.05; 10]).unwrap();
        assert!((e.ratio - 1.05).abs() < 1e-12);
        assert!((e.interval[0] - 1.05).abs() < 1e-12 && (e.interval[1] - 1.05).abs() < 1e-12);
        assert_eq!(e.verdict(0.01), Verdict::Regressed);
        assert!(e.settled(0.01));
    }

    #[test]
    fn the_depth_is_the_signed_rank_tables_critical_value_plus_one() {
        // Two-sided critical values of Wilcoxon's T, as printed in tables.
        assert_eq!(signed_rank_depth(10, 0.05), 9);
        assert_eq!(signed_rank_depth(20, 0.05), 53);
        assert_eq!(signed_rank_depth(20, 0.01), 38);
        assert_eq!(signed_rank_depth(30, 0.01), 110);
        // Too few rounds for 99%: even all of them one way is not enough.
        assert_eq!(signed_rank_depth(7, 0.01), 0);
        assert_eq!(signed_rank_depth(8, 0.01), 1);
        // The normal approximation takes over within a rank of the count.
        let exact = signed_rank_depth(EXACT_UP_TO, 0.01) as i64;
        let n = EXACT_UP_TO + 1;
        let approx = signed_rank_depth(n, 0.01) as i64;
        let step = n as i64; // the count grows by about n/2 per round
        assert!(
            (approx - exact - step / 2).abs() <= step,
            "{exact} {approx}"
        );
    }

    #[test]
    fn a_few_wild_rounds_move_neither_the_estimate_nor_the_verdict() {
        let mut ratios = vec![1.001, 0.999, 1.0, 1.002, 0.998, 1.0, 1.001, 0.999, 1.0, 1.0];
        ratios.extend([1.35, 1.4]);
        let e = Estimate::of(&ratios).unwrap();
        assert!((e.ratio - 1.0).abs() < 0.01, "{e:?}");
        assert_eq!(e.verdict(0.01), Verdict::Unchanged);
        // The mean of the logs would have called it 6% slower.
        let mean = ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64;
        assert!(mean.exp() > 1.05);
    }

    #[test]
    fn a_small_steady_change_within_the_limit_is_unchanged_and_settled() {
        let e = Estimate::of(&[1.003, 1.004, 1.002, 1.003, 1.004, 1.003, 1.002, 1.004]).unwrap();
        assert!(e.interval[0] > 1.0, "significant: {e:?}");
        assert_eq!(e.verdict(0.01), Verdict::Unchanged);
        assert!(e.settled(0.01));
        let faster = Estimate::of(&[0.9, 0.91, 0.89, 0.9, 0.9, 0.91, 0.89, 0.9]).unwrap();
        assert_eq!(faster.verdict(0.01), Verdict::Improved);
    }

    #[test]
    fn under_eight_rounds_nothing_is_settled() {
        let e = Estimate::of(&[1.2; 7]).unwrap();
        assert_eq!(e.interval, [0.0, f64::INFINITY]);
        assert_eq!(e.verdict(0.01), Verdict::Unchanged);
        assert!(!e.settled(0.01));
    }

    #[test]
    fn too_few_or_broken_ratios_give_no_estimate() {
        assert_eq!(Estimate::of(&[1.0]), None);
        assert_eq!(Estimate::of(&[1.0, 0.0]), None);
        assert_eq!(Estimate::of(&[1.0, f64::NAN]), None);
    }
}
