//! The statistics the figure benches print.

use std::borrow::Borrow;

/// The median of `values` (the upper of the middle two for an even
/// count), NaN when there are none.
pub fn median<T: Borrow<f64>>(values: impl IntoIterator<Item = T>) -> f64 {
    let mut sorted: Vec<f64> = values.into_iter().map(|v| *v.borrow()).collect();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The largest relative difference between two of `values`: how far
/// repeated measurements of one figure moved.
#[allow(dead_code, reason = "not every figure bench repeats a figure")]
pub fn spread(values: &[f64]) -> f64 {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(0.0, f64::max);
    high / low - 1.0
}

/// The one-sided Clopper-Pearson bounds, at `confidence`, of a rate seen
/// `k` times in `n`: the lowest and the highest rate it leaves likely.
#[allow(dead_code, reason = "not every figure bench counts a rate")]
pub fn rate_bounds(k: usize, n: usize, confidence: f64) -> (f64, f64) {
    use statrs::distribution::{Beta, ContinuousCDF};
    let (k, n) = (k.min(n) as f64, n as f64);
    let lower = Beta::new(k, n - k + 1.0).map_or(0.0, |b| b.inverse_cdf(1.0 - confidence));
    let upper = Beta::new(k + 1.0, n - k).map_or(1.0, |b| b.inverse_cdf(confidence));
    (lower, upper)
}

/// The distribution-free bounds, at `confidence` (two-sided), of the
/// median of what `values` were drawn from: the order statistics that
/// enclose it at least that often (binomial, half a chance each side).
/// `None` where there are too few values for that confidence: five or
/// fewer at 95%, whose smallest and largest enclose the median 94% of the
/// time at most.
#[allow(dead_code, reason = "not every figure bench bounds a median")]
pub fn median_bounds(values: &[f64], confidence: f64) -> Option<(f64, f64)> {
    use statrs::distribution::{Binomial, DiscreteCDF};
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let binomial = Binomial::new(0.5, n as u64).ok()?;
    // The largest k with P(X < k) <= (1 - confidence) / 2: the k-th
    // smallest value (1-based) lies above the median that rarely.
    let tail = (1.0 - confidence) / 2.0;
    let k = (1..=n / 2)
        .take_while(|&k| binomial.cdf(k as u64 - 1) <= tail)
        .last()?;
    Some((sorted[k - 1], sorted[n - k]))
}
