//! How a family's figures grow with its `scaling` parameter, in the record.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// `family (name=value,...)`, or the family alone without `params`.
pub(crate) fn label(family: &str, params: &super::ParamMap) -> String {
    if params.is_empty() {
        return family.to_owned();
    }
    let params: Vec<String> = params
        .iter()
        .map(|(name, value)| match value {
            Json::String(text) => format!("{name}={text}"),
            other => format!("{name}={other}"),
        })
        .collect();
    format!("{family} ({})", params.join(","))
}

/// One power fitted to a family's figure against its `scaling` parameter:
/// `figure ≈ constant × n^exponent`, for one combination of its other
/// parameters.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// for s in &record.scaling {
///     println!("{}: {} ∝ {}^{:.2} [{:.2}, {:.2}]", s.label(), s.figure, s.parameter,
///              s.exponent, s.interval[0], s.interval[1]);
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ScalingRecord {
    /// The family.
    pub family: String,
    /// The parameter fitted against (`scaling = n`).
    pub parameter: String,
    /// The figure fitted: `time` (per call: each size's lower quartile,
    /// as comparisons judge time), `call_rss` (the call's growth of
    /// resident memory) or `heap` (of the heap).
    pub figure: String,
    /// For time, the clock: `cpu` (the calling thread's CPU time, which
    /// other processes do not stretch) where every case's calls computed
    /// on one thread, as paired runs judge them, else `wall`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
    /// The family's other parameters in this fit (a fit per combination of
    /// them); empty when it has none.
    #[serde(default, skip_serializing_if = "super::ParamMap::is_empty")]
    pub params: super::ParamMap,
    /// The power: 1 for a figure that grows as `n`, 2 as `n²`.
    pub exponent: f64,
    /// Its 95% interval, from the spread of the samples and of the points
    /// about the line.
    pub interval: [f64; 2],
    /// The figure at `n = 1` on the fitted line, in its unit (nanoseconds,
    /// bytes).
    pub constant: f64,
    /// `power` when one power fits all sizes, else where it bends:
    /// `bends at n=4096: n^1.02 below, n^2.01 above`.
    pub fit: String,
    /// How many values of the parameter it was fitted over.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub points: usize,
    /// For time, how many interleaved rounds it was fitted from (each
    /// round's sizes against each other, which a drifting machine does not
    /// bend); 0 when it was fitted from each size's own samples, taken one
    /// size after another, or from counted instructions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rounds: usize,
}

impl ScalingRecord {
    /// The family, with its other parameters where it has any:
    /// `attention (heads=8)`.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(s: &nnbench::record::ScalingRecord) {
    /// println!("{}: {} ∝ n^{:.2}", s.label(), s.figure, s.exponent);
    /// # }
    /// ```
    pub fn label(&self) -> String {
        label(&self.family, &self.params)
    }

    /// Whether `other` is the same fit of another run: family, parameter,
    /// figure and other parameters.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(base: &nnbench::RunRecord, head: &nnbench::RunRecord) {
    /// for h in &head.scaling {
    ///     if let Some(b) = base.scaling.iter().find(|b| b.same_fit(h)) {
    ///         println!("{}: {:.2} -> {:.2}", h.label(), b.exponent, h.exponent);
    ///     }
    /// }
    /// # }
    /// ```
    pub fn same_fit(&self, other: &ScalingRecord) -> bool {
        self.family == other.family
            && self.parameter == other.parameter
            && self.figure == other.figure
            && self.params == other.params
    }
}
