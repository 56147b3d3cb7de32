//! The highest rate under a latency target (`latency_target`), or whose
//! goodput meets a streaming case's objectives (`slo` with `goodput`).

use serde::{Deserialize, Serialize};

/// How the highest rate whose latency meets a family's `latency_target`
/// (or, with `slo` and `goodput`, at which at least that share of the
/// requests meets every objective) was found: each rate tried, a timed
/// period of requests at it, and the rate found. The case's `time` and `load` are those of the step at the
/// rate found.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::record::CaseRecord) {
/// if let Some(search) = &case.search {
///     match (search.max_rate, search.client_bound) {
///         (Some(rate), _) => println!("{}: at most {rate:.0} requests a second", search.target),
///         (None, Some(at)) => println!("{}: client-bound at {at:.0}/s", search.target),
///         (None, None) => {}
///     }
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
    /// The target: `p99 <= 20ms`, or `goodput >= 0.9 under ttft <= 200ms`.
    pub target: String,
    /// Under a goodput search: the least share of the requests that must
    /// meet every objective. Its rate found is the `max_goodput_rate`
    /// figure, and a latency search's the `max_rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<f64>,
    /// The highest rate shown to meet it, in requests a second; 0 where
    /// none did. Absent where the search ended [client-bound](Self::client_bound):
    /// no rate of the service was found, and compare has none to judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<f64>,
    /// The lowest rate above it shown not to; absent where the search
    /// stopped before one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missed_at: Option<f64>,
    /// The rate, in requests a second, at which the client fell behind
    /// (issued more than 1% of its requests over 100 µs late), which ended
    /// the search: its latencies held the client's delay, not the
    /// service's. Records written before this name read it from
    /// `client_bound_at`.
    #[serde(
        default,
        alias = "client_bound_at",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_bound: Option<f64>,
    /// Each rate tried, in the order tried.
    pub steps: Vec<SearchStep>,
}

impl SearchRecord {
    /// What the search found, as the console and the report say it: `up
    /// to 640/s`, `client-bound at 336/s`, or `at no rate tried`.
    ///
    /// # Example
    ///
    /// ```
    /// # fn f(case: &nnbench::record::CaseRecord) {
    /// if let Some(search) = &case.search {
    ///     println!("{} {}", search.target, search.outcome());
    /// }
    /// # }
    /// ```
    pub fn outcome(&self) -> String {
        use nnbench_vocab::format_count;
        match (self.client_bound, self.max_rate) {
            (Some(at), _) => format!("client-bound at {}/s", format_count(at)),
            (None, Some(rate)) if rate > 0.0 => format!("up to {}/s", format_count(rate)),
            _ => "at no rate tried".to_owned(),
        }
    }
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
    /// The target's percentile of the latency (under a goodput search, the
    /// p99), in nanoseconds.
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
    /// Under a goodput search: the share of its requests that met every
    /// per-request objective.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<f64>,
    /// The lower end of that share's one-sided 95% interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput_bound: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_bound_search_has_no_max_rate_and_reads_the_older_key() {
        let bound = SearchRecord {
            target: "p99 <= 5ms".into(),
            client_bound: Some(336.0),
            ..Default::default()
        };
        let json = serde_json::to_value(&bound).unwrap();
        assert_eq!(json["client_bound"], 336.0);
        assert!(json.get("max_rate").is_none(), "{json}");
        assert_eq!(bound.outcome(), "client-bound at 336/s");
        let older: SearchRecord = serde_json::from_value(serde_json::json!({
            "target": "p99 <= 5ms", "max_rate": 300.0, "client_bound_at": 336.0, "steps": [],
        }))
        .unwrap();
        assert_eq!(older.client_bound, Some(336.0));
        assert_eq!(older.outcome(), "client-bound at 336/s");
        let found = SearchRecord {
            max_rate: Some(640.0),
            ..Default::default()
        };
        assert_eq!(found.outcome(), "up to 640/s");
        assert_eq!(SearchRecord::default().outcome(), "at no rate tried");
    }
}
