//! nnbench's own sampler: warm up, settle on a number of calls per sample,
//! then take samples until the median is known precisely enough, until
//! the samples show that the machine cannot tell it that precisely in the
//! time allowed, or until that time is spent.
//!
//! criterion spends its full warm-up and measurement time on every case
//! (8 s by default), however steady the function; a grid of a thousand
//! small kernels then takes hours. Most kernels give a median known within
//! 1% after a few dozen samples of half a millisecond, on the clock that other
//! processes do not stretch.

use std::time::{Duration, Instant};

use super::cpu::Elapsed;
use super::placement::{self, Placement};
use crate::record::{Clock, Precision, StopReason};

/// When the sampler stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct StopRule {
    /// Samples taken whatever the precision.
    pub min_samples: usize,
    /// Time the function runs before sampling, which also settles how many
    /// calls make a sample.
    pub warm_up: Duration,
    /// Sampling stops after this long, precise or not (once `min_samples`
    /// are taken).
    pub time_cap: Duration,
    /// Sampling stops when the median is known within this fraction of
    /// itself (see [`reached`]).
    pub relative: f64,
}

/// The defaults of `auto` and `sampled` cases. The warm-up only settles
/// the calls a sample makes and lets caches fill; what makes a median hold
/// on a shared machine is the span its samples cover, since the machine
/// drifts over tens of milliseconds and a few samples close together all
/// see the same moment. Forty samples of half a millisecond span 20 ms.
pub(crate) const MIN_SAMPLES: usize = 40;
pub(crate) const WARM_UP: Duration = Duration::from_millis(10);
pub(crate) const TIME_CAP: Duration = Duration::from_secs(1);
pub(crate) const RELATIVE: f64 = 0.01;

/// The samples from which their spread may stop sampling short of the
/// target: enough that the median's interval and the parts' medians
/// measure the spread rather than the luck of a few samples.
pub(crate) const SPREAD_SAMPLES: usize = 30;

/// The parts, in time order, whose medians must agree within the target:
/// on a shared machine the samples come in spells (a virtual CPU that
/// shares its core for a while runs at half speed), and a spell that holds
/// some of the samples moves some parts, where the halves alone miss a
/// spell in the middle. Four parts: a spell in any quarter shows, and on a
/// steady machine parts of a quarter of the samples each still agree within
/// the target after some tens of samples.
const BLOCKS: usize = 4;

/// How long one sample lasts at least: long enough that the clocks' reads
/// (under a microsecond, the three of them) are lost in it, short enough
/// that a case takes dozens of samples in a fraction of a second. A shorter
/// sample catches another process's turn or an interrupt less often,
/// and the median leaves out the samples that did.
pub(crate) const SAMPLE_TIME: Duration = Duration::from_micros(500);

/// How long the warm-up may go on past its time to settle the calls per
/// sample, at least.
const SETTLE_LIMIT: Duration = Duration::from_millis(50);

/// How much the calls per sample may grow from one warm-up round to the
/// next: the first rounds are too short to trust their time.
const MAX_GROWTH: u64 = 16;

impl Default for StopRule {
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
/// time) as `rule` says; returns the `(calls, elapsed)` samples taken
/// after warm-up, all with the same number of calls, and the precision
/// they pin the median to.
///
/// Each time a sample is added, the stop is judged on the steadiest clock
/// the samples allow ([`steadiest`]). Sampling stops at the first of:
/// the median known within `rule.relative`; from [`SPREAD_SAMPLES`] on,
/// a spread that even the time left could not narrow to it (an interval
/// narrows as one over the square root of the samples); the time cap.
pub(crate) fn sample<E>(
    rule: &StopRule,
    mut routine: impl FnMut(u64) -> Result<Elapsed, E>,
) -> Result<(Vec<(u64, Elapsed)>, Precision), E> {
    let iters = warm_up(rule.warm_up, &mut |iters| routine(iters).map(|e| e.wall))?;
    let started = Instant::now();
    super::stream::measuring_from(started);
    let mut samples = Vec::new();
    // Per-call times on each clock, kept in order for the interval.
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    loop {
        let elapsed = routine(iters)?;
        samples.push((iters, elapsed));
        insert_sorted(&mut wall, per_call(iters, Some(elapsed.wall)));
        insert_sorted(&mut cpu, per_call(iters, elapsed.thread_cpu));
        let n = samples.len();
        if n < rule.min_samples.max(2) {
            continue;
        }
        let clock = steadiest(&samples);
        let sorted = match clock {
            Clock::Cpu => &cpu,
            _ => &wall,
        };
        let reached = reached(sorted, &samples, clock);
        let spent = started.elapsed();
        // Times still falling when sampling began (the parts' disagreement
        // keeps the precision short of the target): the first part is left
        // to the warm-up, and sampling goes on.
        if reached > rule.relative
            && spent < SPREAD_LIMIT
            && let Some(settled_from) = settled_from(&samples, clock, rule.relative)
        {
            samples.drain(..settled_from);
            wall = sorted_per_call(&samples, Clock::Wall);
            cpu = sorted_per_call(&samples, Clock::Cpu);
            continue;
        }
        let stopped_by = if reached <= rule.relative {
            StopReason::Target
        } else if spent >= rule.time_cap {
            StopReason::TimeCap
        } else if n >= SPREAD_SAMPLES.max(rule.min_samples)
            && out_of_reach(reached, n, spent, rule)
            && !(spent < SPREAD_LIMIT && falling(&samples, clock, rule.relative))
        {
            StopReason::Spread
        } else {
            continue;
        };
        let precision = Precision {
            reached,
            target: rule.relative,
            clock,
            stopped_by,
        };
        return Ok((samples, precision));
    }
}

/// The time of one call in a sample of `iters` calls that took `elapsed`
/// (NaN where the clock was not read).
fn per_call(iters: u64, elapsed: Option<Duration>) -> f64 {
    elapsed.map_or(f64::NAN, |e| e.as_nanos() as f64 / iters.max(1) as f64)
}

/// `samples`' per-call times on `clock`, sorted.
fn sorted_per_call(samples: &[(u64, Elapsed)], clock: Clock) -> Vec<f64> {
    let mut sorted: Vec<f64> = samples
        .iter()
        .map(|(iters, e)| match clock {
            Clock::Cpu => per_call(*iters, e.thread_cpu),
            _ => per_call(*iters, Some(e.wall)),
        })
        .collect();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// Whether `samples`' last part of [`BLOCKS`] in time order is faster on
/// `clock` than their first by more than twice `relative`: times still
/// falling, which more samples, once the first part is left to the
/// warm-up ([`settled_from`]), will show settled, where the spread of
/// samples that are not yet would stop sampling short.
fn falling(samples: &[(u64, Elapsed)], clock: Clock, relative: f64) -> bool {
    let n = samples.len();
    if n < 2 * BLOCKS {
        return false;
    }
    let part = |i: usize| {
        median(&sorted_per_call(
            &samples[i * n / BLOCKS..(i + 1) * n / BLOCKS],
            clock,
        ))
    };
    part(0) > part(BLOCKS - 1) * (1.0 + 2.0 * relative)
}

/// Where `samples` settle, if they had not when sampling began: the end
/// of their first part of [`BLOCKS`] in time order where its median on
/// `clock` is slower than every later part's by more than twice
/// `relative`. A call slower at first (a thread pool not yet spread over
/// the cores, caches and pages still filling after a memo's load) reads
/// that way; a machine slowed later on does not, and is judged as the
/// parts' disagreement.
fn settled_from(samples: &[(u64, Elapsed)], clock: Clock, relative: f64) -> Option<usize> {
    let n = samples.len();
    if n < 2 * BLOCKS {
        return None;
    }
    let part = |i: usize| {
        median(&sorted_per_call(
            &samples[i * n / BLOCKS..(i + 1) * n / BLOCKS],
            clock,
        ))
    };
    let first = part(0);
    let slowest_later = (1..BLOCKS).map(part).fold(f64::NAN, f64::max);
    (first > slowest_later * (1.0 + 2.0 * relative)).then_some(n / BLOCKS)
}

fn insert_sorted(sorted: &mut Vec<f64>, value: f64) {
    let at = sorted.partition_point(|&t| t < value);
    sorted.insert(at, value);
}

/// The clock that judges `samples`: the calling thread's CPU time where
/// every sample has it and the calls computed on that thread alone (the
/// whole process's CPU time within a tenth of the thread's, and the
/// thread busy for half of some sample's wall time: other processes can
/// stretch a sample's wall time, never its CPU time), wall time otherwise.
/// A call that waits (a device, a file, a lock) or uses other threads is
/// not measured by the thread's CPU time.
pub(crate) fn steadiest(samples: &[(u64, Elapsed)]) -> Clock {
    let (mut thread, mut process) = (Duration::ZERO, Duration::ZERO);
    let mut computes = false;
    for (_, e) in samples {
        let (Some(t), Some(p)) = (e.thread_cpu, e.process_cpu) else {
            return Clock::Wall;
        };
        if e.used_device {
            return Clock::Wall;
        }
        thread += t;
        process += p;
        computes |= t.as_nanos() * 2 >= e.wall.as_nanos();
    }
    if computes && !thread.is_zero() && process.as_nanos() * 10 <= thread.as_nanos() * 11 {
        Clock::Cpu
    } else {
        Clock::Wall
    }
}

/// The precision to which `samples` pin their median on `clock`, as a
/// fraction of it: the farther end of the median's 95% interval, or the
/// disagreement of the medians of the samples' [`BLOCKS`] parts in time
/// order (the largest less the smallest, over the smallest) where that is
/// wider. A machine that slowed down for part of the samples (another
/// process, a frequency change, a virtual CPU sharing its core) moves the
/// parts it slowed, which the interval, which takes every sample as alike,
/// cannot tell. Under six samples, which no interval at 95% bounds, the
/// whole range. A median of zero is known to no fraction of itself: 1.
pub(crate) fn reached(sorted: &[f64], samples: &[(u64, Elapsed)], clock: Clock) -> f64 {
    let middle = median(sorted);
    if middle.is_nan() || middle <= 0.0 {
        return 1.0;
    }
    let (low, high) = median_interval(sorted).unwrap_or((sorted[0], sorted[sorted.len() - 1]));
    let interval = (middle - low).max(high - middle) / middle;
    let part_median = |part: &[(u64, Elapsed)]| median(&sorted_per_call(part, clock));
    let n = samples.len();
    // Each part holds two samples at least.
    let parts = BLOCKS.min(n / 2).max(1);
    let (mut fastest, mut slowest) = (f64::INFINITY, 0.0f64);
    for part in 0..parts {
        let m = part_median(&samples[part * n / parts..(part + 1) * n / parts]);
        fastest = fastest.min(m);
        slowest = slowest.max(m);
    }
    let apart = (slowest - fastest) / fastest;
    let reached = interval.max(if apart.is_finite() { apart } else { 0.0 });
    reached.min(1.0)
}

/// Whether the time left to the cap could not bring a precision of
/// `reached`, after `n` samples in `spent`, within the target: at the
/// rate samples come, the cap allows so many, and an interval narrows as
/// one over the square root of their number.
fn out_of_reach(reached: f64, n: usize, spent: Duration, rule: &StopRule) -> bool {
    let per_sample = spent.as_secs_f64() / n as f64;
    let left = rule.time_cap.saturating_sub(spent).as_secs_f64();
    let at_cap = n as f64
        + if per_sample > 0.0 {
            left / per_sample
        } else {
            f64::INFINITY
        };
    reached * (n as f64 / at_cap).sqrt() > rule.relative
}

/// How long warm-up goes on, at most, for the call's threads to spread
/// over the process's cores.
const SPREAD_LIMIT: Duration = Duration::from_millis(500);

/// The stretch of calls after which warm-up judges again whether the
/// call's threads have spread.
const STRETCH: Duration = Duration::from_millis(5);

/// Runs `routine` for `time`, growing the calls per round until a round
/// lasts [`SAMPLE_TIME`], then for as long as the calling thread waits for
/// a core while another of the process's cores idles (its threads have not
/// spread yet, see [`placement`](super::placement)), up to
/// [`SPREAD_LIMIT`]; returns the calls a sample makes.
fn warm_up<E>(
    time: Duration,
    routine: &mut impl FnMut(u64) -> Result<Duration, E>,
) -> Result<u64, E> {
    let cpus = placement::allowed_cpus();
    // No warm-up asked for: none, whatever the cores do.
    let before = if cpus.len() > 1 && !time.is_zero() {
        Placement::now(&cpus)
    } else {
        None
    };
    let iters = calls_per_sample(time, routine)?;
    let Some(mut before) = before else {
        return Ok(iters);
    };
    let started = Instant::now();
    while let Some(after) = Placement::now(&cpus)
        && before.crowded_until(&after)
        && started.elapsed() < SPREAD_LIMIT
    {
        before = after;
        while before.at().elapsed() < STRETCH {
            routine(iters)?;
        }
    }
    Ok(iters)
}

/// Runs `routine` for `time`, growing the calls per round until a round
/// lasts [`SAMPLE_TIME`]; returns the calls a sample makes.
fn calls_per_sample<E>(
    time: Duration,
    routine: &mut impl FnMut(u64) -> Result<Duration, E>,
) -> Result<u64, E> {
    let started = Instant::now();
    let mut iters = 1u64;
    loop {
        let elapsed = routine(iters)?;
        let next = calls_for(SAMPLE_TIME, iters, elapsed);
        // A sample up to a ninth short of its time is long enough: on a
        // noisy machine, rounds of the same calls differ by that much.
        let settled = next <= iters + iters / 8;
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

    /// Samples of a steady set of per-call times, by wall time alone.
    fn walls(per_call: &[f64]) -> (Vec<f64>, Vec<(u64, Elapsed)>) {
        let samples: Vec<(u64, Elapsed)> = per_call
            .iter()
            .map(|&ns| (1, wall(Duration::from_nanos(ns as u64))))
            .collect();
        let mut sorted = per_call.to_vec();
        sorted.sort_by(f64::total_cmp);
        (sorted, samples)
    }

    #[test]
    fn precision_is_the_farther_end_of_the_interval_or_the_parts() {
        let steady: Vec<f64> = (0..20).map(|i| 100.0 + f64::from(i) * 0.05).collect();
        let (sorted, samples) = walls(&steady);
        assert!(reached(&sorted, &samples, Clock::Wall) <= 0.01);
        let spread: Vec<f64> = (0..20).map(|i| 100.0 + f64::from(i) * 2.0).collect();
        let (sorted, samples) = walls(&spread);
        assert!(reached(&sorted, &samples, Clock::Wall) > 0.1);
        // A tight interval, but the second half is 5% slower: the parts
        // say how far the median can be trusted.
        let stepped: Vec<f64> = (0..40)
            .map(|i| if i < 20 { 100.0 } else { 105.0 })
            .collect();
        let (sorted, samples) = walls(&stepped);
        assert!((reached(&sorted, &samples, Clock::Wall) - 0.05).abs() < 1e-9);
        let (sorted, samples) = walls(&[0.0; 20]);
        assert_eq!(
            reached(&sorted, &samples, Clock::Wall),
            1.0,
            "no median to be relative to"
        );
    }

    #[test]
    fn a_spell_in_the_middle_of_the_samples_shows_in_their_quarters() {
        // Samples 15 to 24 of 40 are 10% slower: each half holds five of
        // them and the interval none, but the second and third quarters
        // hold five of their ten.
        let spell: Vec<f64> = (0..40)
            .map(|i| if (15..25).contains(&i) { 110.0 } else { 100.0 })
            .collect();
        let (sorted, samples) = walls(&spell);
        assert!((reached(&sorted, &samples, Clock::Wall) - 0.05).abs() < 1e-9);
    }

    /// Sampled with no warm-up time (a few rounds settle on 500 calls a
    /// sample), each round's calls taking `per_call(round)` nanoseconds,
    /// rounds counted from 1.
    fn sampled(per_call: impl Fn(u64) -> u64) -> (Vec<(u64, Elapsed)>, Precision) {
        let rule = StopRule {
            warm_up: Duration::ZERO,
            ..StopRule::default()
        };
        let mut taken = 0u64;
        sample::<()>(&rule, |iters| {
            taken += 1;
            Ok(wall(Duration::from_nanos(per_call(taken) * iters)))
        })
        .unwrap()
    }

    #[test]
    fn a_call_slower_at_first_is_sampled_once_it_has_settled() {
        // A thread pool that takes turns on one core for the first 30
        // samples, then runs spread: twice as fast.
        let (samples, precision) = sampled(|taken| if taken <= 30 { 2_000 } else { 1_000 });
        let (sorted, _) = walls(
            &samples
                .iter()
                .map(|(iters, e)| e.wall.as_nanos() as f64 / *iters as f64)
                .collect::<Vec<_>>(),
        );
        assert_eq!(median(&sorted), 1_000.0, "the settled calls' median");
        assert_eq!(precision.stopped_by, StopReason::Target);
        assert!(precision.reached <= 0.01, "{precision:?}");
    }

    #[test]
    fn only_a_first_part_slower_than_all_later_ones_is_left_to_the_warm_up() {
        let (_, falling_first) =
            walls(&[[200.0; 10], [100.0; 10], [101.0; 10], [100.0; 10]].concat());
        assert_eq!(settled_from(&falling_first, Clock::Wall, 0.01), Some(10));
        assert!(falling(&falling_first, Clock::Wall, 0.01));
        // Slower later: the machine, not the warm-up.
        let (_, rising) = walls(&[[100.0; 10], [100.0; 10], [100.0; 10], [200.0; 10]].concat());
        assert_eq!(settled_from(&rising, Clock::Wall, 0.01), None);
        assert!(!falling(&rising, Clock::Wall, 0.01));
        // A spell in the middle, slower than the first part.
        let (_, spell) = walls(&[[100.0; 10], [150.0; 10], [100.0; 10], [100.0; 10]].concat());
        assert_eq!(settled_from(&spell, Clock::Wall, 0.01), None);
        let (_, steady) = walls(&[100.0; 40]);
        assert_eq!(settled_from(&steady, Clock::Wall, 0.01), None);
    }

    #[test]
    fn a_slowdown_over_part_of_the_samples_keeps_sampling() {
        // Each half alone is steady; the machine is 10% slower from the
        // seventh sample on.
        let (samples, precision) = sampled(|taken| if taken <= 10 { 1_000 } else { 1_100 });
        assert!(samples.len() > MIN_SAMPLES, "{}", samples.len());
        let slow = Duration::from_nanos(1_100 * samples[0].0);
        let slow_ones = samples.iter().filter(|s| s.1.wall == slow).count();
        assert!(
            slow_ones * 2 > samples.len() + 6,
            "sampling went on until every quarter is mostly slow: {slow_ones} of {}",
            samples.len()
        );
        assert_eq!(precision.stopped_by, StopReason::Target);
    }

    #[test]
    fn a_steady_function_stops_at_the_minimum_and_samples_share_their_calls() {
        let rule = StopRule {
            warm_up: Duration::from_millis(2),
            ..StopRule::default()
        };
        let (samples, precision) =
            sample::<()>(&rule, |iters| Ok(wall(Duration::from_nanos(1_000 * iters)))).unwrap();
        assert_eq!(samples.len(), MIN_SAMPLES);
        let calls = samples[0].0;
        assert!(samples.iter().all(|&(i, _)| i == calls));
        assert_eq!(
            calls, 500,
            "1 µs calls: five hundred make half a millisecond"
        );
        assert_eq!(precision.reached, 0.0);
        assert_eq!(precision.clock, Clock::Wall, "no CPU clock was read");
    }

    /// Half the samples twice as slow as the others: no number of samples
    /// pins the median within 1%.
    fn flipping(flip: &mut u64, iters: u64) -> Elapsed {
        *flip += 1;
        let per_call = if flip.is_multiple_of(2) { 2_000 } else { 1_000 };
        wall(Duration::from_nanos(per_call * iters))
    }

    #[test]
    fn a_spread_wider_than_the_target_stops_once_it_is_known() {
        // Fewer samples asked for than the spread needs to be judged.
        let rule = StopRule {
            warm_up: Duration::ZERO,
            min_samples: 10,
            ..StopRule::default()
        };
        let mut flip = 0;
        let (samples, precision) = sample::<()>(&rule, |iters| {
            // A sample takes some time, so that the cap's samples are
            // counted from a rate.
            std::thread::sleep(Duration::from_micros(100));
            Ok(flipping(&mut flip, iters))
        })
        .unwrap();
        assert_eq!(samples.len(), SPREAD_SAMPLES);
        assert_eq!(precision.stopped_by, StopReason::Spread);
        assert!(precision.reached > 0.1, "{precision:?}");
    }

    #[test]
    fn a_spread_the_cap_could_narrow_samples_on() {
        // Up to 10% apart at random: an interval of about ±1.8% at 30
        // samples, which an hour's samples would narrow within 1%.
        let rule = StopRule {
            warm_up: Duration::ZERO,
            time_cap: Duration::from_secs(3600),
            ..StopRule::default()
        };
        let mut rng = fastrand::Rng::with_seed(7);
        let (samples, precision) = sample::<()>(&rule, |iters| {
            std::thread::sleep(Duration::from_micros(50));
            let per_call = 1_000 + rng.u64(..100);
            Ok(wall(Duration::from_nanos(per_call * iters)))
        })
        .unwrap();
        assert!(samples.len() > SPREAD_SAMPLES, "{}", samples.len());
        assert_eq!(precision.stopped_by, StopReason::Target);
        assert!(precision.reached <= 0.01);
    }

    #[test]
    fn a_noisy_function_stops_at_the_time_cap() {
        let rule = StopRule {
            warm_up: Duration::from_millis(1),
            time_cap: Duration::from_millis(30),
            min_samples: 100,
            ..StopRule::default()
        };
        let mut flip = 0;
        let started = Instant::now();
        let (samples, precision) = sample::<()>(&rule, |iters| {
            std::thread::sleep(Duration::from_micros(400));
            Ok(flipping(&mut flip, iters))
        })
        .unwrap();
        assert!(samples.len() >= 100, "{}", samples.len());
        assert!(started.elapsed() >= Duration::from_millis(30));
        assert_eq!(precision.stopped_by, StopReason::TimeCap);
    }

    #[test]
    fn a_call_that_computes_on_its_thread_is_judged_on_its_cpu_time() {
        // Other processes stretch the wall time of every other sample by
        // half; the thread's CPU time stays put.
        let rule = StopRule {
            warm_up: Duration::ZERO,
            ..StopRule::default()
        };
        let mut taken = 0u64;
        let (samples, precision) = sample::<()>(&rule, |iters| {
            taken += 1;
            let cpu = Duration::from_nanos(1_000 * iters);
            let wall = if taken.is_multiple_of(2) {
                cpu * 3 / 2
            } else {
                cpu
            };
            Ok(Elapsed {
                wall,
                thread_cpu: Some(cpu),
                process_cpu: Some(cpu),
                ..Elapsed::default()
            })
        })
        .unwrap();
        assert_eq!(samples.len(), MIN_SAMPLES);
        assert_eq!(
            (precision.clock, precision.stopped_by),
            (Clock::Cpu, StopReason::Target)
        );
    }

    #[test]
    fn calls_on_other_threads_or_waiting_are_judged_on_wall_time() {
        let sample = |thread: u64, process: u64, wall: u64| {
            (
                1,
                Elapsed {
                    wall: Duration::from_nanos(wall),
                    thread_cpu: Some(Duration::from_nanos(thread)),
                    process_cpu: Some(Duration::from_nanos(process)),
                    ..Elapsed::default()
                },
            )
        };
        assert_eq!(steadiest(&[sample(100, 100, 110)]), Clock::Cpu);
        assert_eq!(
            steadiest(&[sample(100, 400, 110)]),
            Clock::Wall,
            "four threads"
        );
        assert_eq!(steadiest(&[sample(10, 10, 110)]), Clock::Wall, "it waited");
        let device = (
            1,
            Elapsed {
                used_device: true,
                ..sample(100, 100, 110).1
            },
        );
        assert_eq!(steadiest(&[device]), Clock::Wall, "a device's time");
    }

    #[test]
    fn an_error_stops_sampling_at_once() {
        let mut calls = 0;
        let outcome = sample(&StopRule::default(), |_| {
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
