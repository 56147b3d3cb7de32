//! The highest rate under a latency target: `latency_target`.

use serde::{Deserialize, Serialize};

/// How the highest rate whose latency meets a family's `latency_target`
/// was found: each rate tried, a timed period of requests at it, and the
/// rate found. The case's `time` and `load` are those of the step at the
/// rate found.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::record::CaseRecord) {
/// if let Some(search) = &case.search {
///     println!("{}: at most {:.0} requests a second", search.target, search.max_rate);
///     for step in &search.steps {
///         println!("  {:.0}/s: {:.0} ns ({})", step.rate, step.latency_ns,
///                  if step.meets { "meets" } else { "misses" });
///     }
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SearchRecord {
    /// The target: `p99 <= 20ms`.
    pub target: String,
    /// The highest rate shown to meet it, in requests a second; 0 where
    /// none did. Where `client_bound_at` is set, only the highest shown to
    /// meet before the client fell behind: compare does not judge it.
    pub max_rate: f64,
    /// The lowest rate above it shown not to; absent where the search
    /// stopped before one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed_at: Option<f64>,
    /// The rate at which the client fell behind (issued more than 1% of its
    /// requests over 100 µs late), which ended the search: its latencies
    /// held the client's delay, not the service's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_bound_at: Option<f64>,
    /// Each rate tried, in the order tried.
    pub steps: Vec<SearchStep>,
}

/// One rate a search tried.
///
/// # Example
///
/// ```
/// # fn f(step: &nnbench::record::SearchStep) {
/// println!("{:.0}/s: {:.0} ns [{:.0}, {:.0}]", step.rate, step.latency_ns,
///          step.interval_ns[0], step.interval_ns[1]);
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SearchStep {
    /// Requests a second.
    pub rate: f64,
    /// The target's percentile of the latency, in nanoseconds.
    pub latency_ns: f64,
    /// Its 95% interval.
    pub interval_ns: [f64; 2],
    /// Requests recorded.
    pub requests: u64,
    /// The share the client issued late.
    pub late_fraction: f64,
    /// Whether it was shown to meet the target: the interval's upper end
    /// within it, and the client kept up.
    pub meets: bool,
    /// The client fell behind: the step neither met nor missed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub client_bound: bool,
}
