//! Runs far off their neighbours on both sides: outliers, told from steps.
//!
//! A step moves every run after it; an outlier is one run (or two) far off
//! the runs around it. So a run is an outlier when it lies more than
//! [`OUTLIER_Z`] robust standard deviations from the median of every
//! stretch of [`WINDOW`] successive runs that holds it. A run at a step is
//! near the median of a stretch on its own side of it; so are the newest
//! runs when three of them agree, and they then stand as a step would.
//!
//! The noise's standard deviation comes from the differences of successive
//! runs (1.4826 times their median absolute deviation, over √2), which a
//! step changes in one place and an outlier in two: neither inflates it.

use super::robust::median;

/// How far off the median of every stretch that holds it a run is an
/// outlier, in robust standard deviations: Iglewicz and Hoaglin's cut,
/// which normal noise passes about 5 times in 10,000 on each side.
///
/// # Example
///
/// ```
/// use nnbench_cli::history::steps::OUTLIER_Z;
///
/// println!("an outlier lies over {OUTLIER_Z} robust standard deviations off");
/// ```
pub const OUTLIER_Z: f64 = 3.5;

/// How many successive runs a stretch holds.
const WINDOW: usize = 5;

/// For each of `values` (the runs of a series, oldest first), `Some` with
/// the value it counts as where it is an outlier: the nearest of its
/// stretches' medians, as if it had been a typical run there (counted any
/// further off, a lone run at the newest commit could still read as a
/// step). `None` where it is not, and for every run of a series whose
/// successive runs mostly agree exactly (no spread to judge by).
pub(super) fn lone_runs(values: &[f64]) -> Vec<Option<f64>> {
    let spread = noise(values);
    if spread.is_nan() || spread <= 0.0 {
        return vec![None; values.len()];
    }
    let reach = OUTLIER_Z * spread;
    let width = WINDOW.min(values.len());
    (0..values.len())
        .map(|i| {
            let x = values[i];
            let first = i.saturating_sub(width - 1);
            let last = i.min(values.len() - width);
            let nearest = (first..=last)
                .map(|start| median(&values[start..start + width]))
                .min_by(|a, b| (x - a).abs().total_cmp(&(x - b).abs()))?;
            ((x - nearest).abs() > reach).then_some(nearest)
        })
        .collect()
}

/// The noise's standard deviation, from successive differences.
fn noise(values: &[f64]) -> f64 {
    let differences: Vec<f64> = values.windows(2).map(|w| w[1] - w[0]).collect();
    let middle = median(&differences);
    let deviations: Vec<f64> = differences.iter().map(|d| (d - middle).abs()).collect();
    1.4826 * median(&deviations) / std::f64::consts::SQRT_2
}

#[cfg(test)]
mod tests {
    use super::super::steps::tests_support::Noise;
    use super::*;

    /// `level` in a little normal noise.
    fn steady(len: usize, level: f64) -> Vec<f64> {
        let mut noise = Noise(len as u64 + level.to_bits());
        (0..len)
            .map(|_| level * (1.0 + 0.003 * noise.normal()))
            .collect()
    }

    #[test]
    fn normal_noise_has_few() {
        let mut noise = Noise(3);
        let values: Vec<f64> = (0..20_000).map(|_| 1.0 + 0.03 * noise.normal()).collect();
        let share = lone_runs(&values).iter().filter(|o| o.is_some()).count() as f64 / 20_000.0;
        assert!(share < 0.002, "{share}");
    }

    fn flagged(values: &[f64]) -> Vec<usize> {
        let runs = lone_runs(values);
        (0..values.len()).filter(|&i| runs[i].is_some()).collect()
    }

    #[test]
    fn a_lone_run_is_an_outlier_anywhere() {
        for at in [0, 1, 17, 38, 39] {
            let mut values = steady(40, 1.0);
            values[at] *= 0.6;
            assert_eq!(flagged(&values), [at]);
            let counted = lone_runs(&values)[at].unwrap_or(0.0);
            assert!((counted - 1.0).abs() < 0.01, "counted as {counted}");
        }
    }

    #[test]
    fn runs_at_a_step_are_not_nor_three_that_agree_at_the_newest_commit() {
        let mut values = steady(30, 1.0);
        values.extend(steady(10, 0.89));
        assert!(flagged(&values).is_empty(), "{:?}", flagged(&values));
        let mut newest = steady(30, 1.0);
        newest.extend([1.1, 1.1 * 1.002, 1.1 * 0.998]);
        assert!(flagged(&newest).is_empty(), "{:?}", flagged(&newest));
        newest.pop();
        assert_eq!(flagged(&newest), [30, 31], "two alone are outliers");
    }

    #[test]
    fn two_far_runs_together_are_outliers_and_exact_series_have_none() {
        let mut values = steady(40, 1.0);
        values[20] = 1.4;
        values[21] = 1.41;
        assert_eq!(flagged(&values), [20, 21]);
        let mut counts = vec![1000.0; 40];
        counts[7] = 1200.0;
        assert!(flagged(&counts).is_empty());
    }
}
