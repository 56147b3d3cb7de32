//! Judging a run against another: per case present on both sides, per
//! figure, a verdict of improved, unchanged, regressed or not comparable.
//!
//! Time is tested on the raw samples (`time.samples_ns`) with the
//! Mann-Whitney U test and must also move by more than its limit, as
//! asv does: in the lower quartile, the steadiest estimate on a shared runner
//! (contention slows samples, never speeds one up), with the median moving
//! the same way; memory figures and the metric, which repeat exactly or nearly,
//! are judged by percentage and absolute limits; the metric only when
//! its family says which way is better. Cases on one side only are listed,
//! failed cases are never improved, and a different machine or toolchain
//! is reported beside the verdicts.

mod capacity;
mod figures;
mod limits;
mod mann_whitney;
mod paired;
mod render;
mod scaling;

use serde::{Deserialize, Serialize};

pub use crate::record::Verdict;
use crate::record::{CaseRecord, Figure, RunRecord};

pub use capacity::{CapacityComparison, Fits};
#[allow(deprecated)]
pub use limits::{
    Limit, LimitError, Limits, Threshold, ThresholdError, Thresholds, measured_field,
};
pub use paired::{paired, rounds_table};
pub use render::Format;
pub use scaling::{Exponent, ScalingComparison};

/// One figure of one case on both sides.
///
/// # Example
///
/// ```
/// # fn f(fig: &nnbench_core::compare::FigureComparison) {
/// println!("{}: {:?} -> {:?} ({:?})", fig.figure, fig.base, fig.head, fig.verdict);
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FigureComparison {
    /// Which figure.
    pub figure: Figure,
    /// For the value, the field of a struct metric (`accuracy`, nested
    /// fields by dots); `None` for a figure of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// Its value on the base side (the median, for time).
    pub base: Option<f64>,
    /// Its value on the head side.
    pub head: Option<f64>,
    /// `head / base`, when both are there and base is not zero.
    pub ratio: Option<f64>,
    /// The p-value of the time test, when one was made.
    pub p: Option<f64>,
    /// What the comparison concluded.
    pub verdict: Verdict,
    /// Whether a regression of this figure fails the comparison.
    pub gated: bool,
    /// Why the verdict is what it is, when that is not plain from the figures.
    pub note: Option<String>,
}

/// Whether a case is on both sides.
///
/// # Example
///
/// ```
/// use nnbench_core::compare::Presence;
/// assert_eq!(serde_json::to_string(&Presence::New).unwrap(), "\"new\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Presence {
    /// On both sides: compared.
    Both,
    /// On the head side only.
    New,
    /// On the base side only.
    Gone,
}

/// One case on both sides.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench_core::compare::CaseComparison) {
/// if case.regressed() {
///     println!("{} got worse", case.id);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CaseComparison {
    /// The case's id.
    pub id: String,
    /// Whether it is on both sides.
    pub presence: Presence,
    /// Why the case failed on the base side, if it did.
    pub base_error: Option<String>,
    /// Why the case failed on the head side, if it did.
    pub head_error: Option<String>,
    /// The figures, in [`Figure::ALL`] order (a struct metric's fields
    /// in the value's place); empty unless on both sides.
    pub figures: Vec<FigureComparison>,
    /// The case's verdict: regressed if a gated figure regressed or it now
    /// fails, improved if a figure improved and none regressed.
    pub verdict: Verdict,
    /// What the verdict should be read with: a memo whose model or data
    /// changed between the runs, a family `fail_on` not understood.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Its figures moved both ways: one improved while another got worse
    /// (accuracy up and latency up, say). A trade-off whose worse move is
    /// a regression beyond its limit still fails.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub trade_off: bool,
    /// The head's flamegraph of the case (`--profile`): of a paired run's
    /// regressed case, the differential one of the base build against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
}

impl CaseComparison {
    /// Whether this case fails the comparison.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench_core::compare::Comparison) {
    /// let failing: Vec<&str> = c.cases.iter().filter(|k| k.regressed()).map(|k| k.id.as_str()).collect();
    /// # }
    /// ```
    pub fn regressed(&self) -> bool {
        self.verdict == Verdict::Regressed
    }

    /// Whether this case fails the comparison: it regressed, or it failed
    /// on the head side, new or failing before too: a case that cannot run
    /// is no pass, whatever the base did.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench_core::compare::Comparison) {
    /// let failing: Vec<&str> = c.cases.iter().filter(|k| k.fails()).map(|k| k.id.as_str()).collect();
    /// # }
    /// ```
    pub fn fails(&self) -> bool {
        self.regressed() || self.head_error.is_some()
    }
}

/// Which run a side of a comparison is.
///
/// # Example
///
/// ```
/// # fn f(c: &nnbench_core::compare::Comparison) {
/// println!("{} at {:?} vs {} at {:?}", c.base.run, c.base.commit, c.head.run, c.head.commit);
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Side {
    /// Where it was read from (a file, a baseline, a folder).
    pub source: String,
    /// The record's `run`.
    pub run: String,
    /// When it started.
    pub started_at: String,
    /// The commit it measured, if known.
    pub commit: Option<String>,
}

/// Two runs compared, case by case.
///
/// # Example
///
/// ```
/// use nnbench_core::compare::{compare, Limits};
///
/// #[nnbench::benchmark]
/// fn compared() -> u32 { 7 }
///
/// let run = || nnbench::Runner::new().filter("compared").test_mode(true).quiet(true).run().unwrap();
/// let (base, head) = (run(), run());
/// let comparison = compare(&base, &head, &Limits::default());
/// assert_eq!(comparison.cases.len(), 1);
/// assert!(!comparison.regressed());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Comparison {
    /// The run compared against.
    pub base: Side,
    /// The run judged.
    pub head: Side,
    /// The limits used.
    #[serde(alias = "thresholds")]
    pub limits: Limits,
    /// Every case of either side: those on both first, in head order, then
    /// new ones, then gone ones.
    pub cases: Vec<CaseComparison>,
    /// How the two runs' machines, toolchains or inputs differ: figures
    /// from different ones are compared, but not as equals.
    pub differences: Vec<String>,
    /// How each family with a `scaling` parameter grows, on both sides:
    /// a verdict of its own, apart from its cases' at each size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scaling: Vec<ScalingComparison>,
    /// The largest size of each family with a `scaling` parameter that
    /// fits in memory, on both sides, under the head's limit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity: Vec<CapacityComparison>,
}

impl Comparison {
    /// Whether any case regressed (a case that failed only on the head
    /// side among them); [`Comparison::fails`] also counts a case that
    /// fails on both sides or is new and fails.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench_core::compare::Comparison) {
    /// let regressed = c.regressed();
    /// # }
    /// ```
    pub fn regressed(&self) -> bool {
        self.cases.iter().any(CaseComparison::regressed)
            || self.scaling.iter().any(ScalingComparison::regressed)
            || self.capacity.iter().any(CapacityComparison::regressed)
    }

    /// Whether the comparison fails: a case regressed, or failed on the
    /// head side (see [`CaseComparison::fails`]). `nnbench compare` exits 1
    /// when it does.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench_core::compare::Comparison) {
    /// std::process::exit(if c.fails() { 1 } else { 0 });
    /// # }
    /// ```
    pub fn fails(&self) -> bool {
        self.cases.iter().any(CaseComparison::fails)
            || self.scaling.iter().any(ScalingComparison::regressed)
            || self.capacity.iter().any(CapacityComparison::regressed)
    }

    /// How many cases have `verdict`.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: &nnbench_core::compare::Comparison) {
    /// println!("{} improved", c.count(nnbench_core::compare::Verdict::Improved));
    /// # }
    /// ```
    pub fn count(&self, verdict: Verdict) -> usize {
        self.cases.iter().filter(|c| c.verdict == verdict).count()
    }

    /// Names the sides by where they were read from.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(c: nnbench_core::compare::Comparison) {
    /// let c = c.with_sources("main", "target/nnbench/sweep/latest.json");
    /// # }
    /// ```
    pub fn with_sources(mut self, base: impl Into<String>, head: impl Into<String>) -> Self {
        self.base.source = base.into();
        self.head.source = head.into();
        self
    }
}

/// Compares one case present on both sides, as [`compare`] does for each.
pub(crate) fn compare_case(
    base: &CaseRecord,
    head: &CaseRecord,
    limits: &Limits,
) -> CaseComparison {
    figures::case(base, head, limits)
}

/// Compares `head` against `base`.
///
/// # Example
///
/// ```
/// # fn f(base: &nnbench::RunRecord, head: &nnbench::RunRecord) {
/// let comparison = nnbench_core::compare::compare(base, head, &Default::default());
/// print!("{}", comparison.render(nnbench_core::compare::Format::Table));
/// # }
/// ```
pub fn compare(base: &RunRecord, head: &RunRecord, limits: &Limits) -> Comparison {
    let base_cases: std::collections::HashMap<&str, &CaseRecord> =
        base.cases.iter().map(|c| (c.id.as_str(), c)).collect();
    let head_ids: std::collections::HashSet<&str> =
        head.cases.iter().map(|c| c.id.as_str()).collect();
    let mut cases: Vec<CaseComparison> = Vec::with_capacity(head.cases.len());
    let mut new = Vec::new();
    let elsewhere = figures::other_machine(&base.context, &head.context);
    for case in &head.cases {
        match base_cases.get(case.id.as_str()) {
            Some(old) => {
                let mut compared = figures::case(old, case, limits);
                if let Some(why) = &elsewhere {
                    figures::judged_elsewhere(&mut compared, why);
                }
                cases.push(compared);
            }
            None => new.push(one_sided(case, Presence::New)),
        }
    }
    cases.extend(new);
    cases.extend(
        base.cases
            .iter()
            .filter(|c| !head_ids.contains(c.id.as_str()))
            .map(|c| one_sided(c, Presence::Gone)),
    );
    Comparison {
        base: side(base),
        head: side(head),
        limits: limits.clone(),
        cases,
        differences: figures::differences(base, head),
        scaling: scaling::compare(
            &crate::scaling::of_record(base),
            &crate::scaling::of_record(head),
            limits,
        ),
        capacity: capacity::compare(&base.capacity, &head.capacity, limits),
    }
}

fn side(record: &RunRecord) -> Side {
    Side {
        source: record.run.clone(),
        run: record.run.clone(),
        started_at: record.started_at.clone(),
        commit: record.context.git.as_ref().map(|g| g.commit.clone()),
    }
}

fn one_sided(case: &CaseRecord, presence: Presence) -> CaseComparison {
    let error = case.error.as_ref().map(|e| e.summary());
    let (base_error, head_error) = match presence {
        Presence::Gone => (error, None),
        _ => (None, error),
    };
    CaseComparison {
        id: case.id.clone(),
        presence,
        base_error,
        head_error,
        figures: Vec::new(),
        verdict: Verdict::NotComparable,
        notes: Vec::new(),
        trade_off: false,
        profile: profile_of(case),
    }
}

/// Where `case`'s flamegraph is, as a comparison names it.
fn profile_of(case: &CaseRecord) -> Option<String> {
    case.profile.as_ref().map(|p| p.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comparison_written_with_thresholds_is_read_with_its_limits() {
        let record = crate::record::tests::sample();
        let limits = Limits::default().with_spec("time=3%").unwrap();
        let comparison = compare(&record, &record, &limits);
        let mut json = serde_json::to_value(&comparison).unwrap();
        let object = json.as_object_mut().unwrap();
        let written = object.remove("limits").expect("written as limits");
        object.insert("thresholds".into(), written);
        let read: Comparison = serde_json::from_value(json).unwrap();
        assert_eq!(read.limits, limits);
    }
}
