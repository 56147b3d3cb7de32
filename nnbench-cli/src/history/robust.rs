//! A level that one far-off run barely moves.

/// The middle of `values` (the mean of the middle two for an even count);
/// NaN for none.
pub(super) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_far_value_barely_moves_it() {
        let mut values: Vec<f64> = (0..21).map(|i| 100.0 + f64::from(i % 7) - 3.0).collect();
        let level = median(&values);
        values[4] = 1e9;
        assert!((median(&values) - level).abs() <= 1.0);
        assert!(median(&[]).is_nan());
        assert_eq!(median(&[3.0, 1.0]), 2.0);
    }
}
