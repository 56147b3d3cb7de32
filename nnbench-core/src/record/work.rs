//! The work one call does, and the rate it was done at: a family's
//! `flops = EXPR` and `bytes = EXPR`.

use serde::{Deserialize, Serialize};

/// The work a family declares one call does (`flops = 2 * m * n * k`,
/// `bytes = 8 * (m * k + k * n + m * n)`), and the rates the case reached:
/// the declared work per second of the median call, or of the requests
/// that finished under load.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::record::CaseRecord) {
/// if let Some(work) = &case.work {
///     if let (Some(rate), Some(intensity)) = (work.flops_per_s, work.intensity) {
///         println!("{:.1} GFLOP/s at {intensity:.2} FLOP a byte", rate / 1e9);
///     }
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct WorkRecord {
    /// Floating point operations one call does, as `flops` gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops: Option<f64>,
    /// Bytes one call must move to or from memory, as `bytes` gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<f64>,
    /// `flops` a second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops_per_s: Option<f64>,
    /// `bytes` a second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_per_s: Option<f64>,
    /// Arithmetic intensity: `flops` over `bytes`, operations a byte moved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intensity: Option<f64>,
    /// Which of the machine's roofs bounds the case at its intensity,
    /// where the machine's roofs are known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roof: Option<Roof>,
    /// The achieved rate over that roof, in (0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roof_fraction: Option<f64>,
}

/// The roof that bounds a case: the machine's peak compute, or its memory
/// bandwidth times the case's arithmetic intensity.
///
/// # Example
///
/// ```
/// assert_eq!(nnbench::record::Roof::Memory.to_string(), "memory");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Roof {
    /// Peak floating point operations a second.
    Compute,
    /// Memory bandwidth times the intensity.
    Memory,
}

impl std::fmt::Display for Roof {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Roof::Compute => "compute",
            Roof::Memory => "memory",
        })
    }
}

impl WorkRecord {
    /// The record of `flops` and `bytes` per call (either may be absent),
    /// done `per_second` times a second.
    ///
    /// # Example
    ///
    /// ```
    /// use nnbench::record::WorkRecord;
    /// // A 512³ multiply of f64 matrices, 100 calls a second.
    /// let w = WorkRecord::new(Some(2.0 * 512f64.powi(3)), Some(8.0 * 3.0 * 512.0 * 512.0), 100.0);
    /// assert_eq!(w.flops_per_s, Some(2.0 * 512f64.powi(3) * 100.0));
    /// assert!((w.intensity.unwrap() - 512.0 / 12.0).abs() < 1e-9);
    /// ```
    pub fn new(flops: Option<f64>, bytes: Option<f64>, per_second: f64) -> Self {
        let rate = |amount: Option<f64>| {
            amount
                .map(|a| a * per_second)
                .filter(|r| r.is_finite() && per_second > 0.0)
        };
        Self {
            flops,
            bytes,
            flops_per_s: rate(flops),
            bytes_per_s: rate(bytes),
            intensity: flops
                .zip(bytes)
                .filter(|&(_, b)| b > 0.0)
                .map(|(f, b)| f / b),
            roof: None,
            roof_fraction: None,
        }
    }
}

impl std::fmt::Display for WorkRecord {
    /// The rates, as the console's column shows them: `41.2 GFLOP/s, 3.10
    /// GB/s`, with the share of the roof where it is known.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some(rate) = self.flops_per_s {
            parts.push(nnbench_vocab::format_rate(rate, "FLOP"));
        }
        if let Some(rate) = self.bytes_per_s {
            parts.push(nnbench_vocab::format_rate(rate, "B"));
        }
        if let (Some(fraction), Some(roof)) = (self.roof_fraction, self.roof) {
            parts.push(format!("{:.0}% of the {roof} roof", fraction * 100.0));
        }
        f.write_str(&parts.join(", "))
    }
}
