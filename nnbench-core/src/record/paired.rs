//! What a paired run (`--paired BASE`) keeps: per case, the base build's
//! figures beside the head's, the per-round ratios and the verdict drawn
//! from them; on the run, which build was the base.

use serde::{Deserialize, Serialize};

use super::CaseRecord;
use super::precision::Clock;
use super::verdict::Verdict;

/// The name [`Clock`] had on a paired record before 0.1.0.
#[doc(hidden)]
#[deprecated(
    since = "0.1.0",
    note = "one clock for samples and pairs: `nnbench::record::Clock`"
)]
pub type PairedClock = Clock;

/// One case measured on the base build and on the head build in
/// alternation, and judged from the ratios of their rounds.
///
/// Each round runs the case on a fresh base worker and a fresh head
/// worker, in random order and on one CPU, with the same number of calls
/// per sample; the round's ratio is the head's median time per call over
/// the base's. The estimate is the Hodges–Lehmann estimate of the ratios
/// (on their logarithms), and its interval the 99% Wilcoxon signed-rank
/// interval.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::record::CaseRecord) {
/// if let Some(p) = &case.paired {
///     println!("{}: {:.3}x [{:.3}, {:.3}] by {:?} time over {} rounds: {:?}",
///         case.id, p.estimate, p.interval[0], p.interval[1], p.clock, p.rounds, p.verdict);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PairedRecord {
    /// The case on the base build: its last round's record, with the time
    /// of all its rounds.
    pub base: Box<CaseRecord>,
    /// The clock the ratios below were judged on.
    pub clock: Clock,
    /// How many rounds measured both builds.
    pub rounds: u32,
    /// Head over base per round, by wall time: each build's median sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wall_ratios: Vec<f64>,
    /// Head over base per round, by the calling thread's CPU time: each
    /// build's least sample, since other processes only ever raise a
    /// thread's CPU time. Empty where the system does not tell it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_ratios: Vec<f64>,
    /// Head over base: the Hodges–Lehmann estimate from the ratios on
    /// `clock` (the median of the pairwise geometric means); NaN under 2
    /// rounds (a run stopped early), left out of the JSON then.
    #[serde(default = "no_estimate", skip_serializing_if = "is_nan")]
    pub estimate: f64,
    /// The 99% interval of `estimate`; `[0, inf]` under 8 rounds, too few
    /// to bound it, left out of the JSON then.
    #[serde(default = "unbounded", skip_serializing_if = "is_unbounded")]
    pub interval: [f64; 2],
    /// How the interval was drawn.
    pub test: String,
    /// The slowdown allowed, as a fraction (0.01 is 1%).
    pub limit: f64,
    /// Regressed when the interval lies above 1 and the estimate beyond
    /// the limit; improved the other way round; not comparable when a side
    /// failed.
    pub verdict: Verdict,
}

/// The run's side of `--paired BASE`.
///
/// # Example
///
/// ```
/// # fn f(run: &nnbench::RunRecord) {
/// if let Some(p) = &run.paired {
///     println!("paired with {} ({} rounds at most)", p.base, p.max_rounds);
///     for b in &p.builds {
///         println!("{} built {} times here, {} on the base", b.memo, b.head, b.base);
///     }
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PairedRun {
    /// The base build's executable.
    pub base: String,
    /// The most rounds a case was given.
    pub max_rounds: u32,
    /// Cases of the base build that this one does not have.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gone: Vec<String>,
    /// The groups of cases (those that share memos, named by them, or
    /// `"cases without memos"`) whose workers were kept, one a build, for
    /// all their rounds: starting new workers and building their fixtures
    /// would cost more than their calls cost in a round, or
    /// `--paired-keep` said so.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kept: Vec<String>,
    /// How many times each memo the cases use was computed on each
    /// build, in the rounds: once a side where its group's workers were
    /// kept, once a round where new workers ran it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub builds: Vec<MemoBuilds>,
}

impl MemoBuilds {
    /// `memo` computed `head` times on this build and `base` times on the
    /// base build.
    ///
    /// # Example
    ///
    /// ```
    /// let b = nnbench::record::MemoBuilds::new("Model(1)", 1, 1);
    /// assert_eq!((b.head, b.base), (1, 1));
    /// ```
    pub fn new(memo: impl Into<String>, head: u32, base: u32) -> Self {
        Self {
            memo: memo.into(),
            head,
            base,
        }
    }
}

/// How many times a paired run computed one memo on each build.
///
/// # Example
///
/// ```
/// # fn f(b: &nnbench::record::MemoBuilds) {
/// println!("{}: {} / {}", b.memo, b.head, b.base);
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MemoBuilds {
    /// The memo, as its cases' ids name it.
    pub memo: String,
    /// Its computes on this build.
    pub head: u32,
    /// Its computes on the base build.
    pub base: u32,
}

/// JSON has no NaN: an estimate there is none of is left out, and read
/// back as NaN.
fn no_estimate() -> f64 {
    f64::NAN
}

fn is_nan(value: &f64) -> bool {
    value.is_nan()
}

/// JSON has no infinity: an interval too few rounds bound is left out,
/// and read back as `[0, inf]`.
fn unbounded() -> [f64; 2] {
    [0.0, f64::INFINITY]
}

fn is_unbounded(interval: &[f64; 2]) -> bool {
    !interval.iter().all(|bound| bound.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A paired record of a run stopped after `rounds` rounds, read from
    /// JSON without its estimate and interval.
    fn stopped_early(rounds: u32) -> PairedRecord {
        serde_json::from_value(serde_json::json!({
            "base": {
                "id": "kernel", "family": "kernel", "params": {}, "value": 1,
                "time": {"mode": "sampled", "samples": 3, "iters": 30, "mean_ns": 100.0,
                         "median_ns": 100.0, "std_ns": 0.0, "min_ns": 100.0, "max_ns": 100.0},
                "load_ns": 0, "memory": {}, "memo": {}
            },
            "clock": "cpu", "rounds": rounds, "test": "t", "limit": 0.03,
            "verdict": "not_comparable"
        }))
        .expect("a paired record without its estimate reads")
    }

    #[test]
    fn an_estimate_and_interval_json_cannot_hold_are_left_out_and_read_back() {
        let mut record = stopped_early(1);
        assert!(record.estimate.is_nan());
        assert_eq!(record.interval, [0.0, f64::INFINITY]);
        let written = serde_json::to_value(&record).unwrap();
        assert!(written.get("estimate").is_none() && written.get("interval").is_none());
        // Bounded by enough rounds: written as measured.
        record.estimate = 1.01;
        record.interval = [0.99, 1.02];
        let again: PairedRecord =
            serde_json::from_value(serde_json::to_value(&record).unwrap()).expect("it reads back");
        assert_eq!((again.estimate, again.interval), (1.01, [0.99, 1.02]));
    }
}
