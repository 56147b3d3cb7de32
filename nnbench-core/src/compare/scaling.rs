//! How a family's growth compares between two runs: its exponent regressed
//! when it rose by more than the `scaling` limit (0.1 by default) with
//! intervals that do not overlap, improved when it fell so. Apart from the
//! cases' time at one size: a family can regress in both ways, or in one.

use serde::{Deserialize, Serialize};

use super::{Limits, Verdict};
use crate::record::{CaseRecord, Figure, RunRecord, ScalingRecord};

/// One fit of a family's figure against its `scaling` parameter, on both
/// sides.
///
/// # Example
///
/// ```
/// # fn f(c: &nnbench_core::compare::Comparison) {
/// for s in c.scaling.iter().filter(|s| s.regressed()) {
///     println!("{}: {} ∝ {}^{:.2} -> ^{:.2}", s.family, s.figure, s.parameter,
///              s.base.exponent, s.head.exponent);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ScalingComparison {
    /// The family.
    pub family: String,
    /// Its `scaling` parameter.
    pub parameter: String,
    /// `time`, `call_rss` or `heap`.
    pub figure: String,
    /// Its other parameters in this fit.
    #[serde(default, skip_serializing_if = "crate::record::ParamMap::is_empty")]
    pub params: crate::record::ParamMap,
    /// The base's exponent and interval.
    pub base: Exponent,
    /// The head's.
    pub head: Exponent,
    /// Regressed, improved or unchanged.
    pub verdict: Verdict,
    /// Whether a regression fails the comparison (`scaling=off` does not).
    pub gated: bool,
}

/// An exponent fitted, with its 95% interval.
///
/// # Example
///
/// ```
/// # fn f(e: &nnbench_core::compare::Exponent) {
/// println!("^{:.2} [{:.2}, {:.2}]", e.exponent, e.interval[0], e.interval[1]);
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Exponent {
    /// The power: `figure ∝ n^exponent`.
    pub exponent: f64,
    /// Its 95% interval.
    pub interval: [f64; 2],
}

impl ScalingComparison {
    /// Whether the exponent rose beyond its limit, gated.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench_core::compare::Comparison) {
    /// let worse = c.scaling.iter().filter(|s| s.regressed()).count();
    /// # }
    /// ```
    pub fn regressed(&self) -> bool {
        self.verdict == Verdict::Regressed && self.gated
    }

    /// The family, with its other parameters: `attention (heads=8)`.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(s: &nnbench_core::compare::ScalingComparison) {
    /// println!("{} grows as {}^{:.2}", s.label(), s.parameter, s.head.exponent);
    /// # }
    /// ```
    pub fn label(&self) -> String {
        crate::record::scaling_label(&self.family, &self.params)
    }

    /// `linear (k=8): time ∝ n^1.01 [0.98, 1.04] → n^2.00 [1.97, 2.03]`.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(s: &nnbench_core::compare::ScalingComparison) {
    /// println!("{}", s.line());
    /// # }
    /// ```
    pub fn line(&self) -> String {
        let p = &self.parameter;
        format!(
            "{}: {} ∝ {p}^{:.2} [{:.2}, {:.2}] → {p}^{:.2} [{:.2}, {:.2}]",
            self.label(),
            self.figure,
            self.base.exponent,
            self.base.interval[0],
            self.base.interval[1],
            self.head.exponent,
            self.head.interval[0],
            self.head.interval[1]
        )
    }
}

/// The fits of the base build a paired run's cases keep: their base
/// records, fitted as the head's are.
pub(crate) fn paired_base_fits(record: &RunRecord) -> Vec<ScalingRecord> {
    crate::scaling::fit(&paired_base_cases(record))
}

/// The base build's records that a paired run's cases keep, each with the
/// `scaling` parameter its head names.
pub(crate) fn paired_base_cases(record: &RunRecord) -> Vec<CaseRecord> {
    record
        .cases
        .iter()
        .filter_map(|c| {
            let mut base = (*c.paired.as_ref()?.base).clone();
            base.scales_with.clone_from(&c.scales_with);
            Some(base)
        })
        .collect()
}

/// The fits on both sides, judged under `limits`.
pub(crate) fn compare(
    base: &[ScalingRecord],
    head: &[ScalingRecord],
    limits: &Limits,
) -> Vec<ScalingComparison> {
    let limit = limits.get(Figure::Scaling);
    head.iter()
        .filter_map(|h| {
            let b = base.iter().find(|b| b.same_fit(h))?;
            let rose = h.exponent - b.exponent;
            let verdict = if !limit.exceeded(b.exponent, h.exponent) {
                Verdict::Unchanged
            } else if rose > 0.0 && h.interval[0] > b.interval[1] {
                Verdict::Regressed
            } else if rose < 0.0 && h.interval[1] < b.interval[0] {
                Verdict::Improved
            } else {
                Verdict::Unchanged
            };
            Some(ScalingComparison {
                family: h.family.clone(),
                parameter: h.parameter.clone(),
                figure: h.figure.clone(),
                params: h.params.clone(),
                base: Exponent {
                    exponent: b.exponent,
                    interval: b.interval,
                },
                head: Exponent {
                    exponent: h.exponent,
                    interval: h.interval,
                },
                verdict,
                gated: limit.gated,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fitted(exponent: f64, spread: f64) -> ScalingRecord {
        ScalingRecord {
            family: "linear".into(),
            parameter: "n".into(),
            figure: "time".into(),
            clock: None,
            params: crate::record::ParamMap::new(),
            exponent,
            interval: [exponent - spread, exponent + spread],
            constant: 1.0,
            fit: "power".into(),
            points: 5,
            rounds: 0,
        }
    }

    fn verdict(base: ScalingRecord, head: ScalingRecord, spec: &str) -> Verdict {
        let t = Limits::default().with_spec(spec).unwrap();
        compare(&[base], &[head], &t)[0].verdict
    }

    #[test]
    fn an_exponent_that_rose_beyond_the_limit_and_the_intervals_regressed() {
        assert_eq!(
            verdict(fitted(1.0, 0.02), fitted(2.0, 0.02), ""),
            Verdict::Regressed
        );
        assert_eq!(
            verdict(fitted(2.0, 0.02), fitted(1.0, 0.02), ""),
            Verdict::Improved
        );
        // Within the limit, or within the noise: unchanged.
        assert_eq!(
            verdict(fitted(1.0, 0.02), fitted(1.08, 0.02), ""),
            Verdict::Unchanged
        );
        assert_eq!(
            verdict(fitted(1.0, 0.2), fitted(1.3, 0.2), ""),
            Verdict::Unchanged
        );
        assert_eq!(
            verdict(fitted(1.0, 0.02), fitted(1.08, 0.02), "scaling=0.05"),
            Verdict::Regressed
        );
        let off = Limits::default().with_spec("scaling=off").unwrap();
        assert!(!compare(&[fitted(1.0, 0.02)], &[fitted(2.0, 0.02)], &off)[0].regressed());
    }
}
