//! What a case handles per call, and per second: a family's `throughput`.

use serde::{Deserialize, Serialize};

/// What a family's `throughput = elements(EXPR)` or `bytes(EXPR)` counts.
///
/// # Example
///
/// ```
/// use nnbench::record::ThroughputUnit;
/// assert_eq!(ThroughputUnit::Bytes.per_second_label(), "B/s");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ThroughputUnit {
    /// Items: images, tokens, rows.
    Elements,
    /// Bytes.
    Bytes,
}

impl ThroughputUnit {
    /// How a rate of this unit is labelled: `elem/s` or `B/s`.
    ///
    /// # Example
    ///
    /// ```
    /// assert_eq!(nnbench::record::ThroughputUnit::Elements.per_second_label(), "elem/s");
    /// ```
    pub fn per_second_label(self) -> &'static str {
        match self {
            ThroughputUnit::Elements => "elem/s",
            ThroughputUnit::Bytes => "B/s",
        }
    }
}

/// How much one call of a case handles, and at what rate: `per_call`
/// divided by the median time per call.
///
/// # Example
///
/// ```
/// use nnbench::record::{ThroughputRecord, ThroughputUnit};
/// let t = ThroughputRecord::new(ThroughputUnit::Elements, 10_000, 2_000_000.0);
/// assert_eq!(t.per_second, 5_000_000.0);
/// assert_eq!(t.to_string(), "5.00M elem/s");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ThroughputRecord {
    /// Elements or bytes.
    pub unit: ThroughputUnit,
    /// What one call handles, as the family's expression gave it.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub per_call: u64,
    /// `per_call` per second of the median call.
    pub per_second: f64,
}

impl ThroughputRecord {
    /// The throughput of calls handling `per_call` in `median_ns` each (0
    /// per second when the call took no measurable time).
    pub fn new(unit: ThroughputUnit, per_call: u64, median_ns: f64) -> Self {
        Self {
            unit,
            per_call,
            per_second: per_second(per_call, median_ns),
        }
    }
}

/// `count` per second of `ns` nanoseconds; 0 when `ns` is too short to
/// measure.
pub(crate) fn per_second(count: u64, ns: f64) -> f64 {
    if ns > 0.0 {
        count as f64 / (ns / 1e9)
    } else {
        0.0
    }
}

/// `1.23M elem/s`, `456 MB/s`: three significant digits, decimal prefixes.
impl std::fmt::Display for ThroughputRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.unit {
            ThroughputUnit::Bytes => f.write_str(&nnbench_vocab::format_rate(self.per_second, "B")),
            ThroughputUnit::Elements => {
                let (number, prefix) = nnbench_vocab::si_scaled(self.per_second);
                write!(f, "{number}{prefix} elem/s")
            }
        }
    }
}
