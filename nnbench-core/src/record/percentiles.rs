//! Percentiles of the time per call, for calls timed one by one.

use serde::{Deserialize, Serialize};

/// The 50th, 90th and 99th percentiles and the maximum of the time of one
/// call, by nearest rank over calls timed one by one (a sample of one
/// call each): the tail that a median hides. With fewer than a hundred
/// calls the 99th percentile is the slowest call.
///
/// # Example
///
/// ```
/// use nnbench::record::Percentiles;
/// let calls: Vec<f64> = (1..=100).map(f64::from).collect();
/// let p = Percentiles::of(&calls).unwrap();
/// assert_eq!((p.p50_ns, p.p90_ns, p.p99_ns, p.max_ns), (50.0, 90.0, 99.0, 100.0));
/// assert!(Percentiles::of(&[]).is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Percentiles {
    /// Half the calls took at most this long.
    pub p50_ns: f64,
    /// Nine calls in ten.
    pub p90_ns: f64,
    /// 99 calls in 100.
    pub p99_ns: f64,
    /// 999 calls in 1000: requests under load, where a thousand or more
    /// were recorded (fewer cannot place it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p999_ns: Option<f64>,
    /// The slowest call.
    pub max_ns: f64,
}

impl Percentiles {
    /// The percentiles of `calls` (nanoseconds, in any order); `None` when
    /// there are none.
    pub fn of(calls: &[f64]) -> Option<Self> {
        if calls.is_empty() {
            return None;
        }
        let mut sorted = calls.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let rank = |p: f64| -> Option<f64> {
            let at = ((p * n as f64).ceil() as usize).clamp(1, n);
            sorted.get(at - 1).copied()
        };
        Some(Self {
            p50_ns: rank(0.50)?,
            p90_ns: rank(0.90)?,
            p99_ns: rank(0.99)?,
            p999_ns: if n >= 1000 { rank(0.999) } else { None },
            max_ns: *sorted.last()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_over_a_known_distribution() {
        // 1000 calls: 990 of 1 ms and a tail of 10 at 50 ms, shuffled.
        let mut calls: Vec<f64> = vec![1e6; 990];
        calls.extend([5e7; 10]);
        calls.rotate_left(317);
        let p = Percentiles::of(&calls).unwrap();
        assert_eq!(
            (p.p50_ns, p.p90_ns, p.p99_ns, p.max_ns),
            (1e6, 1e6, 1e6, 5e7)
        );
        assert_eq!(p.p999_ns, Some(5e7));
        calls.push(5e7);
        let p = Percentiles::of(&calls).unwrap();
        assert_eq!(p.p99_ns, 5e7);
        let one = Percentiles::of(&[7.0]).unwrap();
        assert_eq!((one.p50_ns, one.p99_ns, one.max_ns), (7.0, 7.0, 7.0));
        assert_eq!(one.p999_ns, None, "one call cannot place it");
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        let p = Percentiles::of(&ten).unwrap();
        assert_eq!((p.p50_ns, p.p90_ns, p.p99_ns), (5.0, 9.0, 10.0));
    }
}
