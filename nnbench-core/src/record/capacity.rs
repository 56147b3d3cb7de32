//! The largest size of a family that fits in memory, in the record.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// The largest value of a family's `scaling` parameter whose peak memory
/// fits under a limit, predicted from the peaks at the sizes it ran:
/// `peak ≈ fixed_bytes + per_bytes × n^exponent`, solved for the `n`
/// whose peak is `limit_bytes`.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// for c in &record.capacity {
///     println!("{}: fits up to {} ≈ {:.0} [{:.0}, {:.0}] in {} bytes ({})",
///              c.label(), c.parameter, c.n, c.interval[0], c.interval[1],
///              c.limit_bytes, c.limit_from);
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CapacityRecord {
    /// The family.
    pub family: String,
    /// The parameter it grows with (`scaling = n`).
    pub parameter: String,
    /// The family's other parameters in this fit (a fit per combination of
    /// them); empty when it has none.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub params: Map<String, Json>,
    /// The memory fitted: `rss` (the case's resident peak, which a
    /// cgroup's limit holds) or `gpu` (the device allocator's peak).
    pub figure: String,
    /// The largest `n` predicted to fit; 0 where the fixed part alone
    /// reaches the limit.
    pub n: f64,
    /// Its 95% interval, from the spread of the peaks about the fit.
    pub interval: [f64; 2],
    /// The limit, in bytes.
    pub limit_bytes: u64,
    /// Where the limit came from: `cgroup` (the run's memory cgroup),
    /// `machine` (its memory), `flag` (`--capacity-limit`) or `device`
    /// (the GPU's memory).
    pub limit_from: String,
    /// The fit's fixed part: what the peak holds at any size.
    pub fixed_bytes: f64,
    /// The fit's growth: bytes per `n^exponent`.
    pub per_bytes: f64,
    /// How the growing part grows: 1 for `n`, 2 for `n²`.
    pub exponent: f64,
    /// How many values of the parameter it was fitted over.
    pub points: usize,
}

impl CapacityRecord {
    /// The family, with its other parameters where it has any:
    /// `train (model=small)`.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench::record::CapacityRecord) {
    /// println!("{}: {} ≈ {:.0}", c.label(), c.parameter, c.n);
    /// # }
    /// ```
    pub fn label(&self) -> String {
        super::scaling::label(&self.family, &self.params)
    }

    /// Whether `other` is the same prediction of another run: family,
    /// parameter, figure and other parameters.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(base: &nnbench::RunRecord, head: &nnbench::RunRecord) {
    /// for h in &head.capacity {
    ///     if let Some(b) = base.capacity.iter().find(|b| b.same_fit(h)) {
    ///         println!("{}: {:.0} -> {:.0}", h.label(), b.n, h.n);
    ///     }
    /// }
    /// # }
    /// ```
    pub fn same_fit(&self, other: &CapacityRecord) -> bool {
        self.family == other.family
            && self.parameter == other.parameter
            && self.figure == other.figure
            && self.params == other.params
    }
}
