//! Latency targets: `latency_target = "p99 <= 20ms"`.

use std::time::Duration;

/// A percentile of a request's latency and the most it may be.
///
/// # Example
///
/// ```
/// let target = nnbench_vocab::parse_latency_target("p99 <= 20ms").unwrap();
/// assert_eq!(target.quantile, 0.99);
/// assert_eq!(target.limit, std::time::Duration::from_millis(20));
/// assert_eq!(target.to_string(), "p99 <= 20ms");
/// assert!(nnbench_vocab::parse_latency_target("p99 20ms").is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyTarget {
    /// The percentile, as a fraction: 0.99 for `p99`.
    pub quantile: f64,
    /// The most it may be.
    pub limit: Duration,
}

/// The percentiles a target may name, and their fractions.
const PERCENTILES: [(&str, f64); 5] = [
    ("p50", 0.5),
    ("p90", 0.9),
    ("p99", 0.99),
    ("p99.9", 0.999),
    ("p999", 0.999),
];

/// The fraction a percentile's name stands for: 0.99 for `p99`.
pub(crate) fn quantile_of(name: &str) -> Option<f64> {
    PERCENTILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, q)| *q)
}

/// `p50`, `p90`, `p99` or `p99.9` (`p999`), `<=`, and a duration (`20ms`,
/// or seconds).
///
/// # Errors
///
/// A message that says what is wrong with `text`.
///
/// # Example
///
/// ```
/// let target = nnbench_vocab::parse_latency_target("p99.9<=1.5").unwrap();
/// assert_eq!((target.quantile, target.limit.as_millis()), (0.999, 1500));
/// ```
pub fn parse_latency_target(text: &str) -> Result<LatencyTarget, String> {
    const FORM: &str = "a latency target is a percentile, `<=` and a duration: \"p99 <= 20ms\" (p50, p90, p99 or p99.9)";
    let Some((name, limit)) = text.split_once("<=") else {
        return Err(format!("`{text}`: {FORM}"));
    };
    let name = name.trim();
    let quantile = quantile_of(name).ok_or_else(|| format!("`{name}` is no percentile: {FORM}"))?;
    let limit = crate::parse_duration(limit).map_err(|e| format!("`{}`: {e}", limit.trim()))?;
    Ok(LatencyTarget { quantile, limit })
}

impl LatencyTarget {
    /// The percentile's name: `p99`, `p99.9`.
    pub fn percentile(&self) -> String {
        let percent = self.quantile * 100.0;
        format!("p{}", format!("{percent:.1}").trim_end_matches(".0"))
    }
}

impl std::fmt::Display for LatencyTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} <= {}",
            self.percentile(),
            humantime::format_duration(self.limit)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_percentile_reads_and_writes_back() {
        for text in ["p50 <= 1ms", "p90 <= 2ms", "p99 <= 20ms", "p99.9 <= 1s"] {
            assert_eq!(parse_latency_target(text).unwrap().to_string(), text);
        }
        assert_eq!(parse_latency_target("p999 <= 5ms").unwrap().quantile, 0.999);
        let err = parse_latency_target("p95 <= 5ms").unwrap_err();
        assert!(err.contains("`p95` is no percentile"), "{err}");
        let err = parse_latency_target("p99 <= soon").unwrap_err();
        assert!(err.starts_with("`soon`"), "{err}");
    }
}
