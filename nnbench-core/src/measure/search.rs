//! The highest rate under a latency target: `latency_target = "p99 <=
//! 20ms"` with `rate = [...]` (or whose goodput holds: `goodput = 0.9`).
//! Each step runs an open loop at one rate for the timed period and judges
//! its percentile against the target:
//!
//! - it **meets** the target where the upper end of the percentile's 95%
//!   interval (order statistics over the step's requests) lies within it;
//! - it **misses** otherwise: beyond the target, or too close to it for
//!   the step's requests to tell (a rate is accepted only where it is
//!   shown to meet);
//! - it is **client-bound** where the client issued more than
//!   [`LATE_SHARE`](crate::record::load::LATE_SHARE) of its requests late, judged on the share's bound
//!   ([`fell_behind`]): their latencies, counted from
//!   when they were due, hold the client's delay, so the step says nothing
//!   of the service, and the search ends there, with no rate found.
//!
//! Under `goodput = 0.9` (with a streaming case's `slo`), a step meets
//! where the lower end of the one-sided 95% interval (Wilson's) of the
//! share of its requests that met every per-request objective is at least
//! the goodput, and every percentile objective's bound lies within its
//! limit; client-bound steps end the search as above.
//!
//! A step lasts the timed period, or longer where that holds too few
//! requests for the percentile's bound to say something: the upper end of
//! its 95% interval must lie no further out than halfway from the
//! percentile to the slowest request (for a p99, at p99.5 or below), which
//! takes `(1.96 / 0.5)² · q / (1 − q)` requests for the quantile `q`: 1,521
//! for a p99, 138 for a p90. It lasts at most [`LONGEST_STEP`]. From the
//! lowest rate the family lists, the search doubles while steps meet
//! (halves while they miss, three times at most) to bracket the highest
//! rate that meets, then bisects the bracket (geometrically) until its ends
//! are within 5% of each other. The figure is the bracket's lower end: a
//! rate shown to meet the target, with the next one tried shown not to.

use std::time::Duration;

use nnbench_vocab::{LatencyTarget, Objective};

use crate::record::fell_behind;

/// What a search looks for the highest rate of.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Goal {
    /// A percentile of the requests' latency within a limit:
    /// `latency_target`.
    Latency(LatencyTarget),
    /// At least `share` of the requests meeting every per-request
    /// objective of `slo`, and its percentile objectives met: `goodput`.
    Goodput {
        slo: &'static [Objective],
        share: f64,
    },
}

impl Goal {
    /// The quantile whose bound a step must place: the target's
    /// percentile, or the goodput's share (or a higher percentile of the
    /// objectives).
    pub(crate) fn quantile(&self) -> f64 {
        match self {
            Goal::Latency(target) => target.quantile,
            Goal::Goodput { slo, share } => {
                slo.iter().filter_map(|o| o.quantile).fold(*share, f64::max)
            }
        }
    }
}

impl std::fmt::Display for Goal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Goal::Latency(target) => write!(f, "{target}"),
            Goal::Goodput { slo, share } => write!(
                f,
                "goodput >= {share} under {}",
                nnbench_vocab::format_slo(slo)
            ),
        }
    }
}

/// Bisection stops once the bracket's ends are this close.
const PRECISION: f64 = 0.05;
/// The most steps that double the first rate.
const MOST_DOUBLING: usize = 12;
/// The most steps that halve it: a target missed at an eighth of the
/// lowest rate the family lists is missed at every rate it is about.
const MOST_HALVING: usize = 3;
/// The most bisection steps.
const MOST_BISECTING: usize = 8;

/// The longest a step lasts to record them.
const LONGEST_STEP: Duration = Duration::from_secs(10);

/// The requests a step needs for the upper end of the 95% interval of its
/// quantile `q` to lie at most halfway from `q` to 1: the interval's upper
/// rank is about `n·q + 1.96·√(n·q·(1 − q))`, and it must stay within
/// `n·(1 − (1 − q)/2)`.
pub(crate) fn requests_needed(quantile: f64) -> f64 {
    let q = quantile.clamp(0.0, 1.0 - 1e-6);
    (1.96f64 / 0.5).powi(2) * q / (1.0 - q)
}

/// How long a step at `rate` lasts: the timed `period`, or longer where
/// that holds too few requests for the target's percentile
/// ([`requests_needed`]), up to [`LONGEST_STEP`].
pub(crate) fn step_period(goal: &Goal, rate: f64, period: Duration) -> Duration {
    let requests = requests_needed(goal.quantile());
    let needed = Duration::from_secs_f64((requests / rate.max(f64::MIN_POSITIVE)).min(1e6));
    period.max(needed.min(LONGEST_STEP))
}

/// What one step measured at a rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Step {
    pub rate: f64,
    /// The target's percentile (a goodput search's: the p99), and its 95%
    /// interval, in nanoseconds.
    pub latency_ns: f64,
    pub interval_ns: [f64; 2],
    pub requests: u64,
    /// The share of requests the client issued late.
    pub late_fraction: f64,
    /// Under a goodput search: the share of requests that met every
    /// per-request objective, the lower end of its 95% interval, and
    /// whether the percentile objectives were met.
    pub goodput: Option<(f64, f64, bool)>,
}

impl Step {
    /// Whether the step shows the rate meets `goal`: a client that kept
    /// up, and the latency's interval within the target (the goodput's
    /// above its share).
    pub(crate) fn meets(&self, goal: &Goal) -> bool {
        !self.client_bound()
            && self.requests > 0
            && match (goal, self.goodput) {
                (Goal::Latency(target), _) => self.interval_ns[1] <= target.limit.as_nanos() as f64,
                (Goal::Goodput { share, .. }, Some((_, bound, percentiles))) => {
                    bound >= *share && percentiles
                }
                (Goal::Goodput { .. }, None) => false,
            }
    }

    /// Whether the client fell behind: the step says nothing of the
    /// service.
    pub(crate) fn client_bound(&self) -> bool {
        fell_behind(self.late_fraction, self.requests)
    }
}

/// The search's outcome: every step in the order taken, and the bracket.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Found {
    pub steps: Vec<Step>,
    /// The highest rate shown to meet the target; 0 where none did.
    pub max_rate: f64,
    /// The lowest rate above it shown not to; infinite where the
    /// bracketing ran out of steps first.
    pub missed_at: f64,
    /// The rate whose step's client fell behind, which ended the search:
    /// `max_rate` is then only the highest shown to meet before it.
    pub client_bound_at: Option<f64>,
}

/// Searches the highest rate that meets `goal`, from `first`, running
/// each step with `step`.
pub(crate) fn search(
    target: &Goal,
    first: f64,
    most: f64,
    mut step: impl FnMut(f64) -> Step,
) -> Found {
    let mut steps = Vec::new();
    let mut client_bound_at = None;
    // Whether the step at `rate` met the target; `None` where its client
    // fell behind, which ends the search.
    let mut take = |rate: f64, steps: &mut Vec<Step>| {
        let s = step(rate);
        steps.push(s);
        if s.client_bound() {
            client_bound_at = Some(rate);
            return None;
        }
        Some(s.meets(target))
    };
    let (mut low, mut high) = (0.0, f64::INFINITY);
    let mut rate = first.clamp(f64::MIN_POSITIVE, most);
    let (mut doubled, mut halved) = (0, 0);
    let found = |steps, low, high, client_bound_at| Found {
        steps,
        max_rate: low,
        missed_at: high,
        client_bound_at,
    };
    loop {
        let Some(met) = take(rate, &mut steps) else {
            return found(steps, low, high, client_bound_at);
        };
        if met {
            low = rate;
            if high.is_finite() || rate >= most || doubled == MOST_DOUBLING {
                break;
            }
            rate = (rate * 2.0).min(most);
            doubled += 1;
        } else {
            high = rate;
            if low > 0.0 || halved == MOST_HALVING {
                break;
            }
            rate /= 2.0;
            halved += 1;
        }
    }
    if low > 0.0 && high.is_finite() {
        for _ in 0..MOST_BISECTING {
            if high / low <= 1.0 + PRECISION {
                break;
            }
            let middle = (low * high).sqrt();
            match take(middle, &mut steps) {
                Some(true) => low = middle,
                Some(false) => high = middle,
                None => break,
            }
        }
    }
    found(steps, low, high, client_bound_at)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target() -> Goal {
        Goal::Latency(nnbench_vocab::parse_latency_target("p99 <= 5ms").unwrap())
    }

    /// A service whose p99 crosses 5 ms at `knee` requests a second.
    fn service(knee: f64) -> impl FnMut(f64) -> Step {
        move |rate| {
            let latency = if rate <= knee { 4e6 } else { 9e6 };
            Step {
                rate,
                latency_ns: latency,
                interval_ns: [latency * 0.9, latency * 1.1],
                requests: 1000,
                late_fraction: 0.0,
                goodput: None,
            }
        }
    }

    #[test]
    fn the_search_brackets_then_bisects_to_within_five_percent() {
        let found = search(&target(), 100.0, 1e6, service(730.0));
        assert!(
            found.max_rate <= 730.0 && found.max_rate >= 730.0 / 1.05,
            "{found:?}"
        );
        assert!(found.missed_at > 730.0 && found.missed_at / found.max_rate <= 1.05);
        // Up from 100: 200, 400 and 800 bracket it.
        let rates: Vec<f64> = found.steps.iter().map(|s| s.rate).collect();
        assert_eq!(rates[..4], [100.0, 200.0, 400.0, 800.0]);
    }

    #[test]
    fn a_first_rate_that_misses_halves_and_none_that_meets_is_zero() {
        let found = search(&target(), 1000.0, 1e6, service(300.0));
        assert!(
            found.max_rate >= 300.0 / 1.05 && found.max_rate <= 300.0,
            "{found:?}"
        );
        let never = search(&target(), 1000.0, 1e6, service(0.0));
        assert_eq!(never.max_rate, 0.0);
        assert_eq!(never.steps.len(), MOST_HALVING + 1);
    }

    #[test]
    fn a_step_lasts_long_enough_to_place_its_percentile() {
        let second = Duration::from_secs(1);
        assert_eq!(requests_needed(0.99).round(), 1521.0);
        assert_eq!(requests_needed(0.9).round(), 138.0);
        assert_eq!(step_period(&target(), 2000.0, second), second);
        assert_eq!(step_period(&target(), 1.0, second), LONGEST_STEP);
        let at_500 = step_period(&target(), 500.0, second).as_secs_f64();
        assert!((at_500 - 1521.0 / 500.0).abs() < 0.01, "{at_500}");
    }

    #[test]
    fn a_step_whose_client_fell_behind_ends_the_search_with_no_rate() {
        // The client falls behind from 800 a second on, below the knee.
        let mut served = service(1000.0);
        let found = search(&target(), 100.0, 1e6, |rate| Step {
            late_fraction: if rate >= 800.0 { 0.05 } else { 0.0 },
            ..served(rate)
        });
        assert_eq!(found.client_bound_at, Some(800.0), "{found:?}");
        assert_eq!(found.max_rate, 400.0, "the highest shown to meet before");
        assert!(!found.steps.last().is_some_and(|s| s.meets(&target())));
        assert_eq!(found.steps.len(), 4, "no step after it");
    }

    #[test]
    fn a_step_too_close_to_tell_misses() {
        let limit = 5e6;
        let mut step = Step {
            rate: 100.0,
            latency_ns: limit * 0.95,
            interval_ns: [limit * 0.9, limit * 1.02],
            requests: 500,
            late_fraction: 0.0,
            goodput: None,
        };
        assert!(
            !step.meets(&target()),
            "its interval reaches past the limit"
        );
        step.interval_ns[1] = limit;
        assert!(step.meets(&target()));
        step.requests = 0;
        assert!(!step.meets(&target()), "nothing recorded");
    }

    #[test]
    fn a_goodput_step_meets_where_its_share_is_shown_above_the_goal() {
        static SLO: [Objective; 0] = [];
        let goal = Goal::Goodput {
            slo: &SLO,
            share: 0.9,
        };
        let step = |share: f64, bound: f64, percentiles: bool| Step {
            rate: 10.0,
            latency_ns: 1e6,
            interval_ns: [1e6, 1e6],
            requests: 200,
            late_fraction: 0.0,
            goodput: Some((share, bound, percentiles)),
        };
        assert!(step(0.97, 0.93, true).meets(&goal));
        assert!(!step(0.92, 0.88, true).meets(&goal), "too close to tell");
        assert!(!step(0.97, 0.93, false).meets(&goal), "a percentile missed");
        assert_eq!(goal.quantile(), 0.9);
        assert_eq!(goal.to_string(), "goodput >= 0.9 under ");
    }
}
