//! Summary statistics of sampled timings, per call.

use std::time::Duration;

use crate::record::{TimeRecord, TimingMode};

/// The record of samples of `(iterations, elapsed)`: mean, median, standard
/// deviation, min and max of the time per iteration over the samples.
pub(crate) fn summarize(samples: &[(u64, Duration)]) -> TimeRecord {
    let mut per_iter: Vec<f64> = samples
        .iter()
        .filter(|(iters, _)| *iters > 0)
        .map(|(iters, elapsed)| elapsed.as_nanos() as f64 / *iters as f64)
        .collect();
    per_iter.sort_by(f64::total_cmp);
    let n = per_iter.len();
    if n == 0 {
        return TimeRecord {
            mode: TimingMode::Sampled,
            ..TimeRecord::default()
        };
    }
    let mean = per_iter.iter().sum::<f64>() / n as f64;
    let median = if n % 2 == 1 {
        per_iter[n / 2]
    } else {
        (per_iter[n / 2 - 1] + per_iter[n / 2]) / 2.0
    };
    let std = if n > 1 {
        (per_iter.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    TimeRecord {
        mode: TimingMode::Sampled,
        samples: n as u64,
        iters: samples.iter().map(|(iters, _)| iters).sum(),
        mean_ns: mean,
        median_ns: median,
        std_ns: std,
        min_ns: per_iter[0],
        max_ns: per_iter[n - 1],
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
        let t = summarize(&[sample(1, 10), sample(2, 40), sample(3, 90), sample(4, 160)]);
        assert_eq!(t.mode, TimingMode::Sampled);
        assert_eq!((t.samples, t.iters), (4, 10));
        assert_eq!(
            (t.mean_ns, t.median_ns, t.min_ns, t.max_ns),
            (25.0, 25.0, 10.0, 40.0)
        );
        assert!((t.std_ns - 12.909_944).abs() < 1e-5, "{}", t.std_ns);
    }

    #[test]
    fn an_odd_count_takes_the_middle_and_one_sample_has_no_spread() {
        let t = summarize(&[sample(1, 5), sample(1, 100), sample(1, 7)]);
        assert_eq!(t.median_ns, 7.0);
        let one = summarize(&[sample(5, 50)]);
        assert_eq!((one.median_ns, one.std_ns), (10.0, 0.0));
        assert_eq!(summarize(&[]).samples, 0);
    }
}
