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
    /// The precision of `flops`: `f64`, or `f32` where the family wrote
    /// `flops = f32(EXPR)`; it picks the compute roof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<FloatPrecision>,
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

/// The precision of a case's floating point operations.
///
/// # Example
///
/// ```
/// let p: nnbench::record::FloatPrecision = serde_json::from_str("\"f32\"").unwrap();
/// assert_eq!(p, nnbench::record::FloatPrecision::F32);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FloatPrecision {
    /// Single precision.
    F32,
    /// Double precision.
    F64,
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
            precision: flops.map(|_| FloatPrecision::F64),
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

impl WorkRecord {
    /// Places the case under `roofs`, on `cores` cores (see
    /// [`RoofRates::for_cores`](super::RoofRates::for_cores)): its roof is the
    /// lower of the peak compute (of its precision) and its intensity
    /// times the memory bandwidth, the classic roofline (Williams,
    /// Waterman and Patterson, "Roofline", CACM 2009); a case that
    /// declares only one of the two is under that one's roof. Sets
    /// [`roof`](Self::roof) and [`roof_fraction`](Self::roof_fraction),
    /// the achieved rate over the roof.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(roofs: &nnbench::record::MachineRoofs) {
    /// use nnbench::record::WorkRecord;
    /// // A triad step of 64 MiB arrays, 50 times a second.
    /// let mut work = WorkRecord::new(Some(16.0 * 1024.0 * 1024.0), Some(3.0 * 64.0 * 1024.0 * 1024.0), 50.0);
    /// work.place(roofs, 1);
    /// println!("{:?} roof, {:.0}% of it", work.roof, 100.0 * work.roof_fraction.unwrap_or(0.0));
    /// # }
    /// ```
    pub fn place(&mut self, roofs: &super::MachineRoofs, cores: usize) {
        let peak = match self.precision {
            Some(FloatPrecision::F32) => roofs.flops_f32,
            _ => roofs.flops_f64,
        }
        .for_cores(cores);
        let bandwidth = roofs.bandwidth.for_cores(cores);
        let placed = match (self.flops_per_s, self.intensity, self.bytes_per_s) {
            (Some(rate), Some(intensity), _) if intensity * bandwidth < peak => {
                Some((Roof::Memory, rate / (intensity * bandwidth)))
            }
            (Some(rate), _, _) => Some((Roof::Compute, rate / peak)),
            (None, _, Some(rate)) => Some((Roof::Memory, rate / bandwidth)),
            (None, _, None) => None,
        };
        if let Some((roof, fraction)) = placed.filter(|(_, f)| f.is_finite() && *f > 0.0) {
            (self.roof, self.roof_fraction) = (Some(roof), Some(fraction));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn roofs() -> crate::record::MachineRoofs {
        crate::record::machine::example_roofs()
    }

    #[test]
    fn a_case_is_under_the_lower_of_its_two_roofs() {
        // A multiply of intensity 100 at 50 GFLOP/s: compute-bound (the
        // memory roof is 2 TFLOP/s there), at half of the f64 peak.
        let mut gemm = WorkRecord::new(Some(1e9), Some(1e7), 50.0);
        gemm.place(&roofs(), 1);
        assert_eq!(gemm.roof, Some(Roof::Compute));
        assert_eq!(gemm.roof_fraction, Some(0.5));
        // The same on two threads: the all-core peak.
        gemm.place(&roofs(), 2);
        assert_eq!(gemm.roof_fraction, Some(0.25));
        // Bandwidth on two cores saturates at what all of them moved
        // together, below twice one core's.
        let rates = roofs().bandwidth;
        assert_eq!(rates.for_cores(2), 3e10);
        let wide = crate::record::RoofRates {
            one_core: 1e9,
            all_cores: 8e9,
        };
        assert_eq!(wide.for_cores(3), 3e9, "three of eight cores");
        // A triad of intensity 1/12 at 16 GB/s: memory-bound, under
        // 20 GB/s times its intensity.
        let mut triad = WorkRecord::new(Some(1e6), Some(12e6), 1000.0 / 0.75);
        triad.place(&roofs(), 1);
        assert_eq!(triad.roof, Some(Roof::Memory));
        assert!((triad.roof_fraction.unwrap() - 16e9 / 20e9).abs() < 1e-12);
        // Single precision is under the f32 peak.
        let mut single = WorkRecord::new(Some(1e9), None, 50.0);
        single.precision = Some(FloatPrecision::F32);
        single.place(&roofs(), 1);
        assert_eq!(single.roof_fraction, Some(0.25));
        // Bytes alone: the bandwidth.
        let mut copy = WorkRecord::new(None, Some(1e9), 10.0);
        copy.place(&roofs(), 1);
        assert_eq!(
            (copy.roof, copy.roof_fraction),
            (Some(Roof::Memory), Some(0.5))
        );
    }
}
