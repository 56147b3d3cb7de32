//! The statistics the figure benches print.

use std::borrow::Borrow;

/// The median of `values` (the upper of the middle two for an even
/// count), NaN when there are none.
pub fn median<T: Borrow<f64>>(values: impl IntoIterator<Item = T>) -> f64 {
    let mut sorted: Vec<f64> = values.into_iter().map(|v| *v.borrow()).collect();
    sorted.sort_by(f64::total_cmp);
    sorted.get(sorted.len() / 2).copied().unwrap_or(f64::NAN)
}
