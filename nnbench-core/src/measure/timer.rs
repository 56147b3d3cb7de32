//! The time of a case's call: a timer around the user's function, and the
//! per-call statistics of the samples it took.

use std::time::{Duration, Instant};

use super::adaptive::{median, median_interval};
use crate::record::{Sampler, TimeRecord, TimingMode};

/// Times the user's function alone (argument fetching and metric
/// serialization stay outside), called `iters` times in a row.
pub struct Timer {
    iters: u64,
    elapsed: Option<Duration>,
}

impl Default for Timer {
    fn default() -> Self {
        Self::new(1)
    }
}

impl Timer {
    pub(crate) fn new(iters: u64) -> Self {
        Self {
            iters: iters.max(1),
            elapsed: None,
        }
    }

    /// Calls `f` `iters` times; returns the last value. The others are
    /// dropped inside the timed region, as criterion's `iter` drops them.
    #[inline(never)]
    pub fn time<R>(&mut self, mut f: impl FnMut() -> R) -> R {
        let start = Instant::now();
        for _ in 1..self.iters {
            std::hint::black_box(f());
        }
        let out = std::hint::black_box(f());
        wait_for_device();
        self.elapsed = Some(start.elapsed());
        out
    }

    /// [`time`](Self::time) for a function that returns a `Result`: stops at
    /// the first value that `failed` picks, so no `Err` goes unseen.
    #[inline(never)]
    pub fn time_fallible<R>(&mut self, mut f: impl FnMut() -> R, failed: impl Fn(&R) -> bool) -> R {
        let start = Instant::now();
        for _ in 1..self.iters {
            let out = f();
            if failed(&out) {
                self.elapsed = Some(start.elapsed());
                return out;
            }
            std::hint::black_box(out);
        }
        let out = std::hint::black_box(f());
        wait_for_device();
        self.elapsed = Some(start.elapsed());
        out
    }

    pub(crate) fn elapsed(&self) -> Option<Duration> {
        self.elapsed
    }
}

/// Kernels run asynchronously: with the `tch` feature, the clock stops
/// when the device has finished the work the calls queued.
#[inline]
fn wait_for_device() {
    #[cfg(feature = "tch")]
    super::torch_allocator::synchronize();
}

/// The record of samples of `(iterations, elapsed)` that `sampler` took:
/// mean, median (and its interval), standard deviation, min and max of the
/// time per iteration over the samples.
pub(crate) fn summarize(sampler: Sampler, samples: &[(u64, Duration)]) -> TimeRecord {
    let in_order: Vec<f64> = samples
        .iter()
        .filter(|(iters, _)| *iters > 0)
        .map(|(iters, elapsed)| elapsed.as_nanos() as f64 / *iters as f64)
        .collect();
    let mut per_iter = in_order.clone();
    per_iter.sort_by(f64::total_cmp);
    let n = per_iter.len();
    if n == 0 {
        return TimeRecord {
            mode: TimingMode::Sampled,
            sampler: Some(sampler),
            ..TimeRecord::default()
        };
    }
    let mean = per_iter.iter().sum::<f64>() / n as f64;
    let median = median(&per_iter);
    let std = if n > 1 {
        (per_iter.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    TimeRecord {
        mode: TimingMode::Sampled,
        sampler: Some(sampler),
        samples: n as u64,
        iters: samples.iter().map(|(iters, _)| iters).sum(),
        mean_ns: mean,
        median_ns: median,
        std_ns: std,
        min_ns: per_iter[0],
        max_ns: per_iter[n - 1],
        samples_ns: in_order,
        median_ci_ns: median_interval(&per_iter).map(|(low, high)| [low, high]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(iters: u64, ns: u64) -> (u64, Duration) {
        (iters, Duration::from_nanos(ns))
    }

    #[test]
    fn statistics_are_per_iteration() {
        // 10, 20, 30, 40 ns per iteration.
        let t = summarize(
            Sampler::Criterion,
            &[sample(1, 10), sample(2, 40), sample(3, 90), sample(4, 160)],
        );
        assert_eq!(t.mode, TimingMode::Sampled);
        assert_eq!(t.sampler, Some(Sampler::Criterion));
        assert_eq!((t.samples, t.iters), (4, 10));
        assert_eq!(
            (t.mean_ns, t.median_ns, t.min_ns, t.max_ns),
            (25.0, 25.0, 10.0, 40.0)
        );
        assert!((t.std_ns - 12.909_944).abs() < 1e-5, "{}", t.std_ns);
        assert_eq!(t.samples_ns, [10.0, 20.0, 30.0, 40.0], "per call, in order");
    }

    #[test]
    fn an_odd_count_takes_the_middle_and_one_sample_has_no_spread() {
        let t = summarize(
            Sampler::Adaptive,
            &[sample(1, 5), sample(1, 100), sample(1, 7)],
        );
        assert_eq!(t.median_ns, 7.0);
        let one = summarize(Sampler::Adaptive, &[sample(5, 50)]);
        assert_eq!((one.median_ns, one.std_ns), (10.0, 0.0));
        assert_eq!(summarize(Sampler::Adaptive, &[]).samples, 0);
        assert_eq!(one.median_ci_ns, None, "one sample has no interval");
    }
}
