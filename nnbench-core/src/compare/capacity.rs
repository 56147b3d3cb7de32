//! How a family's capacity compares between two runs: regressed where the
//! head fits a smaller size than the base, by more than the `capacity`
//! limit (5% by default) with intervals that do not overlap; improved
//! where it fits a larger one so. Both are judged under the head's limit:
//! the base's fit is solved again for it where the runs' limits differ.

use serde::{Deserialize, Serialize};

use super::{Limits, Verdict};
use crate::record::{CapacityRecord, Figure};

/// One family's capacity on both sides.
///
/// # Example
///
/// ```
/// # fn f(c: &nnbench_core::compare::Comparison) {
/// for lost in c.capacity.iter().filter(|c| c.regressed()) {
///     println!("{}", lost.line());
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CapacityComparison {
    /// The family.
    pub family: String,
    /// Its `scaling` parameter.
    pub parameter: String,
    /// The memory fitted (`rss`).
    pub figure: String,
    /// Its other parameters in this fit.
    #[serde(default, skip_serializing_if = "crate::record::ParamMap::is_empty")]
    pub params: crate::record::ParamMap,
    /// The limit both are judged under: the head's, in bytes.
    pub limit_bytes: u64,
    /// The base's largest size that fits, with its interval.
    pub base: Fits,
    /// The head's.
    pub head: Fits,
    /// Regressed (fits less), improved (fits more) or unchanged.
    pub verdict: Verdict,
    /// Whether a regression fails the comparison (`capacity=off` does not).
    pub gated: bool,
}

/// The largest size that fits, with its 95% interval.
///
/// # Example
///
/// ```
/// # fn f(fits: &nnbench_core::compare::Fits) {
/// println!("{:.0} [{:.0}, {:.0}]", fits.n, fits.interval[0], fits.interval[1]);
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Fits {
    /// The largest size.
    pub n: f64,
    /// Its 95% interval.
    pub interval: [f64; 2],
}

impl CapacityComparison {
    /// Whether the head fits less beyond its limit, gated.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench_core::compare::Comparison) {
    /// let lost = c.capacity.iter().filter(|c| c.regressed()).count();
    /// # }
    /// ```
    pub fn regressed(&self) -> bool {
        self.verdict == Verdict::Regressed && self.gated
    }

    /// `train (model=small): fits n ≈ 3.90k [3.70k, 4.10k] → 3.10k [3.00k,
    /// 3.20k] in 4.00 GiB (-20.5%)`.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench_core::compare::CapacityComparison) {
    /// println!("{}", c.line());
    /// # }
    /// ```
    pub fn line(&self) -> String {
        let count = crate::record::capacity::format_n;
        let fits = |f: &Fits| {
            format!(
                "{} [{}, {}]",
                count(f.n),
                count(f.interval[0]),
                count(f.interval[1])
            )
        };
        let change = if self.base.n > 0.0 {
            format!(" ({:+.1}%)", 100.0 * (self.head.n / self.base.n - 1.0))
        } else {
            String::new()
        };
        format!(
            "{}: fits {} ≈ {} → {} in {}{change}",
            crate::record::scaling_label(&self.family, &self.params),
            self.parameter,
            fits(&self.base),
            fits(&self.head),
            nnbench_vocab::format_bytes(self.limit_bytes),
        )
    }
}

/// The capacities of the base build that a paired run's cases keep: their
/// base records, predicted as the head's are, under the same limit.
pub(crate) fn paired_base_capacities(record: &crate::RunRecord) -> Vec<CapacityRecord> {
    crate::scaling::capacities(
        &super::scaling::paired_base_cases(record),
        crate::scaling::capacity::Limits::of(record),
    )
}

/// The capacities on both sides, judged under `limits`.
pub(crate) fn compare(
    base: &[CapacityRecord],
    head: &[CapacityRecord],
    limits: &Limits,
) -> Vec<CapacityComparison> {
    let limit = limits.get(Figure::Capacity);
    head.iter()
        .filter_map(|h| {
            let b = base.iter().find(|b| b.same_fit(h))?;
            let b_fits = under(b, h.limit_bytes);
            let h_fits = Fits {
                n: h.n,
                interval: h.interval,
            };
            // Past the reach of what was measured, neither side says how
            // far it fits.
            let verdict = if b.beyond_reach() || h.beyond_reach() {
                Verdict::NotComparable
            } else if !limit.exceeded(b_fits.n, h_fits.n) {
                Verdict::Unchanged
            } else if h_fits.n < b_fits.n && h_fits.interval[1] < b_fits.interval[0] {
                Verdict::Regressed
            } else if h_fits.n > b_fits.n && h_fits.interval[0] > b_fits.interval[1] {
                Verdict::Improved
            } else {
                Verdict::Unchanged
            };
            Some(CapacityComparison {
                family: h.family.clone(),
                parameter: h.parameter.clone(),
                figure: h.figure.clone(),
                params: h.params.clone(),
                limit_bytes: h.limit_bytes,
                base: b_fits,
                head: h_fits,
                verdict,
                gated: limit.gated,
            })
        })
        .collect()
}

/// What `record` fits under `limit` bytes: its own prediction where it
/// was made under that limit, else its fit solved for it, the interval
/// moved in proportion.
fn under(record: &CapacityRecord, limit: u64) -> Fits {
    let own = Fits {
        n: record.n,
        interval: record.interval,
    };
    if record.limit_bytes == limit {
        return own;
    }
    let fit = crate::scaling::capacity::Affine {
        fixed: record.fixed_bytes,
        per: record.per_bytes,
        exponent: record.exponent,
    };
    let n = fit.largest_under(limit as f64);
    let scale = if record.n > 0.0 { n / record.n } else { 0.0 };
    Fits {
        n,
        interval: record.interval.map(|bound| bound * scale),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1024.0 * 1024.0;

    /// A family that holds `per` MiB an n beside 100 MiB, under 4 GiB,
    /// its prediction `spread` either way.
    fn fitted(per: f64, spread: f64) -> CapacityRecord {
        let limit = 4096.0 * MIB;
        let n = (limit - 100.0 * MIB) / (per * MIB);
        CapacityRecord {
            family: "train".into(),
            parameter: "batch".into(),
            figure: "rss".into(),
            n,
            interval: [n * (1.0 - spread), n * (1.0 + spread)],
            limit_bytes: limit as u64,
            limit_from: "flag".into(),
            fixed_bytes: 100.0 * MIB,
            per_bytes: per * MIB,
            exponent: 1.0,
            points: 5,
            ..CapacityRecord::default()
        }
    }

    fn verdict(base: CapacityRecord, head: CapacityRecord, spec: &str) -> Verdict {
        let t = Limits::default().with_spec(spec).unwrap();
        compare(&[base], &[head], &t)[0].verdict
    }

    #[test]
    fn a_fifth_more_memory_an_item_loses_capacity_and_regresses() {
        let lost = compare(
            &[fitted(1.0, 0.01)],
            &[fitted(1.2, 0.01)],
            &Limits::default(),
        );
        assert_eq!(lost[0].verdict, Verdict::Regressed);
        assert!(lost[0].regressed());
        assert!(lost[0].line().contains("(-16.7%)"), "{}", lost[0].line());
        assert_eq!(
            verdict(fitted(1.2, 0.01), fitted(1.0, 0.01), ""),
            Verdict::Improved
        );
    }

    #[test]
    fn a_prediction_far_past_the_sizes_measured_is_neither_judged_nor_printed() {
        // About 4,000 fit; the largest measured 400 (10x), then 40 (100x).
        let measured = |largest: f64| CapacityRecord {
            largest_measured: largest,
            ..fitted(1.0, 0.01)
        };
        assert_eq!(
            verdict(measured(400.0), fitted(1.2, 0.01), ""),
            Verdict::Regressed,
            "within reach"
        );
        assert_eq!(
            verdict(measured(40.0), fitted(1.2, 0.01), ""),
            Verdict::NotComparable
        );
        let near = measured(400.0).to_string();
        assert!(
            near.contains("≈ 4.00k") && near.contains("10.0x the largest measured"),
            "{near}"
        );
        let far = measured(40.0).to_string();
        assert!(
            far.contains("beyond 10x the largest measured (40)"),
            "{far}"
        );
        assert!(!far.contains('≈'), "no size printed so far out: {far}");
    }

    #[test]
    fn within_the_limit_or_the_intervals_is_unchanged() {
        // 3% less: within the default 5%.
        assert_eq!(
            verdict(fitted(1.0, 0.01), fitted(1.03, 0.01), ""),
            Verdict::Unchanged
        );
        // A fifth less, but the intervals overlap.
        assert_eq!(
            verdict(fitted(1.0, 0.15), fitted(1.2, 0.15), ""),
            Verdict::Unchanged
        );
        assert_eq!(
            verdict(fitted(1.0, 0.005), fitted(1.03, 0.005), "capacity=2%"),
            Verdict::Regressed
        );
        let off = Limits::default().with_spec("capacity=off").unwrap();
        assert!(!compare(&[fitted(1.0, 0.01)], &[fitted(1.2, 0.01)], &off)[0].regressed());
    }

    #[test]
    fn a_base_under_another_limit_is_solved_again_for_the_heads() {
        let mut base = fitted(1.0, 0.01);
        // The same fit, predicted under 8 GiB on a larger machine.
        base.limit_bytes = (8192.0 * MIB) as u64;
        base.n = 8092.0;
        base.interval = [8011.0, 8173.0];
        let same = compare(&[base], &[fitted(1.0, 0.01)], &Limits::default());
        assert_eq!(same[0].verdict, Verdict::Unchanged);
        assert!((same[0].base.n - 3996.0).abs() < 1.0, "{:?}", same[0].base);
    }
}
