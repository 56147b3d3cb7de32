//! nnbench's own sampler: warm up, settle on a number of calls per sample,
//! then take samples until the median is known precisely enough, or until
//! the time allowed for the case is spent.
//!
//! criterion spends its full warm-up and measurement time on every case
//! (8 s by default), however steady the function; a grid of a thousand
//! small kernels then takes hours. Most kernels give a median known within
//! 1% after a few dozen samples of a millisecond.

use std::time::{Duration, Instant};

use super::cpu::Elapsed;

/// When the sampler stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Precision {
    /// Samples taken whatever the precision.
    pub min_samples: usize,
    /// Time the function runs before sampling, which also settles how many
    /// calls make a sample.
    pub warm_up: Duration,
    /// Sampling stops after this long, precise or not (once `min_samples`
    /// are taken).
    pub time_cap: Duration,
    /// Sampling stops when both ends of the median's 95% interval lie
    /// within this fraction of the median.
    pub relative: f64,
}

/// The defaults of `auto` and `sampled` cases.
pub(crate) const MIN_SAMPLES: usize = 10;
pub(crate) const WARM_UP: Duration = Duration::from_millis(25);
pub(crate) const TIME_CAP: Duration = Duration::from_secs(1);
pub(crate) const RELATIVE: f64 = 0.01;

/// How long one sample lasts at least: long enough that the clock's
/// resolution (tens of nanoseconds) and its read are lost in it, short
/// enough that a case takes dozens of samples in a fraction of a second.
const SAMPLE_TIME: Duration = Duration::from_millis(1);

/// How long the warm-up may go on past its time to settle the calls per
/// sample, at least.
const SETTLE_LIMIT: Duration = Duration::from_millis(50);

/// How much the calls per sample may grow from one warm-up round to the
/// next: the first rounds are too short to trust their time.
const MAX_GROWTH: u64 = 16;

impl Default for Precision {
    fn default() -> Self {
        Self {
            min_samples: MIN_SAMPLES,
            warm_up: WARM_UP,
            time_cap: TIME_CAP,
            relative: RELATIVE,
        }
    }
}

/// Samples `routine` (which makes the calls it is given and returns their
/// time) as `precision` says, by wall time; returns the `(calls, elapsed)`
/// samples taken after warm-up, all with the same number of calls.
pub(crate) fn sample<E>(
    precision: &Precision,
    mut routine: impl FnMut(u64) -> Result<Elapsed, E>,
) -> Result<Vec<(u64, Elapsed)>, E> {
    let iters = warm_up(precision.warm_up, &mut |iters| {
        routine(iters).map(|e| e.wall)
    })?;
    let started = Instant::now();
    let mut samples = Vec::new();
    // Per-call times, kept in order for the interval.
    let mut sorted: Vec<f64> = Vec::new();
    loop {
        let elapsed = routine(iters)?;
        samples.push((iters, elapsed));
        let per_call = elapsed.wall.as_nanos() as f64 / iters as f64;
        let at = sorted.partition_point(|&t| t < per_call);
        sorted.insert(at, per_call);
        if samples.len() < precision.min_samples.max(2) {
            continue;
        }
        if started.elapsed() >= precision.time_cap
            || (is_precise(&sorted, precision.relative)
                && halves_agree(&samples, precision.relative))
        {
            return Ok(samples);
        }
    }
}

/// Runs `routine` for `time`, growing the calls per round until a round
/// lasts [`SAMPLE_TIME`]; returns the calls a sample makes.
fn warm_up<E>(
    time: Duration,
    routine: &mut impl FnMut(u64) -> Result<Duration, E>,
) -> Result<u64, E> {
    let started = Instant::now();
    let mut iters = 1u64;
    loop {
        let elapsed = routine(iters)?;
        let next = calls_for(SAMPLE_TIME, iters, elapsed);
        let settled = next <= iters;
        iters = next.max(iters);
        if settled && started.elapsed() >= time {
            return Ok(iters);
        }
        // Long past the warm-up time, a function whose rounds keep getting
        // faster must not hold sampling back.
        if started.elapsed() >= time.saturating_mul(4).max(SETTLE_LIMIT) {
            return Ok(iters);
        }
    }
}

/// The calls that make a round of `target`, from a round of `iters` calls
/// that took `elapsed`; at most [`MAX_GROWTH`] times `iters`.
fn calls_for(target: Duration, iters: u64, elapsed: Duration) -> u64 {
    let cap = iters.saturating_mul(MAX_GROWTH);
    if elapsed.is_zero() {
        return cap;
    }
    let wanted = (target.as_nanos() as f64 / elapsed.as_nanos() as f64 * iters as f64).ceil();
    (wanted as u64).clamp(1, cap)
}

/// Whether the 95% interval of the median of `sorted` lies within
/// `relative` of the median on both sides.
pub(crate) fn is_precise(sorted: &[f64], relative: f64) -> bool {
    let Some((low, high)) = median_interval(sorted) else {
        return false;
    };
    let median = median(sorted);
    median > 0.0 && median - low <= relative * median && high - median <= relative * median
}

/// Whether the medians of the first and the second half of `samples` (in
/// the order taken) lie within `relative` of each other. A machine that
/// slowed down for part of the samples (another process, a frequency
/// change) moves one half: the interval, which assumes every sample alike,
/// cannot tell.
fn halves_agree(samples: &[(u64, Elapsed)], relative: f64) -> bool {
    let half_median = |half: &[(u64, Elapsed)]| {
        let mut per_call: Vec<f64> = half
            .iter()
            .map(|(iters, elapsed)| elapsed.wall.as_nanos() as f64 / *iters as f64)
            .collect();
        per_call.sort_by(f64::total_cmp);
        median(&per_call)
    };
    let (first, second) = samples.split_at(samples.len() / 2);
    let (a, b) = (half_median(first), half_median(second));
    (a - b).abs() <= relative * a.min(b)
}

/// The median of sorted values (the mean of the middle two for an even count).
pub(crate) fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    match n {
        0 => f64::NAN,
        _ if !n.is_multiple_of(2) => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// The distribution-free 95% interval of the median of sorted values: the
/// order statistics whose ranks the binomial(n, 1/2) bounds, by its normal
/// approximation (exact enough from the ten samples taken at least).
/// `None` under six values, which no interval at 95% can bound.
pub(crate) fn median_interval(sorted: &[f64]) -> Option<(f64, f64)> {
    let n = sorted.len();
    if n < 6 {
        return None;
    }
    let spread = 1.96 * (n as f64).sqrt() / 2.0;
    let half = n as f64 / 2.0;
    // 1-based ranks, rounded to the nearest as the sign test's tables are.
    let low = ((half - spread).round() as usize).max(1);
    let high = ((half + 1.0 + spread).round() as usize).min(n);
    Some((sorted[low - 1], sorted[high - 1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample that only the wall clock timed.
    fn wall(wall: Duration) -> Elapsed {
        Elapsed {
            wall,
            ..Elapsed::default()
        }
    }

    #[test]
    fn the_interval_of_ten_samples_is_the_second_to_the_ninth() {
        let values: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(median_interval(&values), Some((2.0, 9.0)));
        assert_eq!(median_interval(&values[..5]), None);
        // n = 100: ranks 40 and 61, as tables of the sign test give.
        let hundred: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(median_interval(&hundred), Some((40.0, 61.0)));
    }

    #[test]
    fn precision_asks_both_ends_within_the_fraction() {
        let steady: Vec<f64> = (0..20).map(|i| 100.0 + f64::from(i) * 0.05).collect();
        assert!(is_precise(&steady, 0.01));
        let spread: Vec<f64> = (0..20).map(|i| 100.0 + f64::from(i) * 2.0).collect();
        assert!(!is_precise(&spread, 0.01));
        assert!(!is_precise(&[0.0; 20], 0.01), "no median to be relative to");
    }

    #[test]
    fn a_slowdown_over_part_of_the_samples_keeps_sampling() {
        // No warm-up time: four rounds settle on 1,000 calls a sample.
        let precision = Precision {
            warm_up: Duration::ZERO,
            ..Precision::default()
        };
        let mut taken = 0u64;
        let samples = sample::<()>(&precision, |iters| {
            taken += 1;
            // Each half alone is steady; the machine is 10% slower from
            // the seventh sample on.
            let per_call = if taken <= 10 { 1_000 } else { 1_100 };
            Ok(wall(Duration::from_nanos(per_call * iters)))
        })
        .unwrap();
        assert!(samples.len() > MIN_SAMPLES, "{}", samples.len());
        let slow = Duration::from_nanos(1_100_000);
        let slow_ones = samples.iter().filter(|s| s.1.wall == slow).count();
        assert!(
            slow_ones * 2 > samples.len() + 6,
            "sampling went on until both halves are mostly slow: {slow_ones} of {}",
            samples.len()
        );
    }

    #[test]
    fn a_steady_function_stops_at_the_minimum_and_samples_share_their_calls() {
        let precision = Precision {
            warm_up: Duration::from_millis(2),
            ..Precision::default()
        };
        let samples = sample::<()>(&precision, |iters| {
            Ok(wall(Duration::from_nanos(1_000 * iters)))
        })
        .unwrap();
        assert_eq!(samples.len(), MIN_SAMPLES);
        let calls = samples[0].0;
        assert!(samples.iter().all(|&(i, _)| i == calls));
        assert_eq!(calls, 1_000, "1 µs calls: a thousand make a millisecond");
    }

    #[test]
    fn a_noisy_function_samples_until_the_time_cap() {
        let precision = Precision {
            warm_up: Duration::from_millis(1),
            time_cap: Duration::from_millis(30),
            ..Precision::default()
        };
        let mut flip = 0u64;
        let started = Instant::now();
        let samples = sample::<()>(&precision, |iters| {
            flip += 1;
            // Half the samples twice as slow: the median is never pinned.
            let per_call = if flip.is_multiple_of(2) { 2_000 } else { 1_000 };
            std::thread::sleep(Duration::from_micros(200));
            Ok(wall(Duration::from_nanos(per_call * iters)))
        })
        .unwrap();
        assert!(samples.len() > MIN_SAMPLES, "{}", samples.len());
        assert!(started.elapsed() >= Duration::from_millis(30));
    }

    #[test]
    fn an_error_stops_sampling_at_once() {
        let mut calls = 0;
        let outcome = sample(&Precision::default(), |_| {
            calls += 1;
            if calls == 3 {
                Err("broken")
            } else {
                Ok(wall(Duration::from_micros(1)))
            }
        });
        assert_eq!(outcome, Err("broken"));
        assert_eq!(calls, 3);
    }
}
