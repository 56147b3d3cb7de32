//! A case that streams its answer (`stream` on its attribute): each item
//! it yields is a token, each call a request, timed token by token.

use serde::{Deserialize, Serialize};

/// How the requests of a streaming case went, token by token: time to
/// first token (`ttft`, from when the request was due, under `rate`, else
/// from when it was made), time per output token (`tpot`, a request's last
/// token less its first over its tokens less one), the gaps between
/// tokens (`itl`, every gap of every request) and the whole request
/// (`e2e`), each as percentiles; the output tokens a second across the
/// measured requests, and the tokens each request gave.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::record::CaseRecord) {
/// if let Some(stream) = &case.stream {
///     println!("TTFT p99 {:.1} ms, TPOT p50 {:.2} ms, {:.0} tokens/s",
///              stream.ttft.p99_ns / 1e6, stream.tpot.p50_ns / 1e6, stream.tokens_per_s);
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct StreamRecord {
    /// Requests measured: those due (or made) in the timed period.
    pub requests: u64,
    /// Time to first token, of the requests that gave one.
    pub ttft: LatencyPercentiles,
    /// Time per output token, of the requests that gave two or more.
    pub tpot: LatencyPercentiles,
    /// Each gap between two tokens of a request.
    pub itl: LatencyPercentiles,
    /// From when the request was due (or made) to its last token.
    pub e2e: LatencyPercentiles,
    /// Output tokens a second: every measured request's tokens over the
    /// time from the first one's start to the last one's end.
    pub tokens_per_s: f64,
    /// The output tokens of each request.
    pub output_tokens: TokenCounts,
    /// The input tokens of each request, where the case took its inputs
    /// with [`request_input`](crate::request_input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<TokenCounts>,
    /// How the requests met the family's `slo`, where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goodput: Option<GoodputRecord>,
}

/// How a streaming case's requests met its family's objectives, such as
/// `slo = "ttft <= 200ms, tpot <= 25ms"`: the requests that met every
/// per-request objective (its goodput), and each objective on a
/// percentile across the requests, such as `p99 ttft <= 300ms`, judged on
/// the limit of its 95% interval.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::record::CaseRecord) {
/// if let Some(goodput) = case.stream.as_ref().and_then(|s| s.goodput.as_ref()) {
///     println!("{}: {:.1}% of requests met it (at least {:.1}%), {:.1} a second",
///              goodput.slo, 100.0 * goodput.share, 100.0 * goodput.share_bound, goodput.per_s);
///     assert!(goodput.holds(0.0) == goodput.percentiles.iter().all(|p| p.met));
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GoodputRecord {
    /// The objectives: `ttft <= 200ms, tpot <= 25ms`.
    pub slo: String,
    /// Requests that met every per-request objective.
    pub met: u64,
    /// Their share of the requests measured.
    pub share: f64,
    /// The least that share is likely to be: the lower end of its
    /// one-sided 95% interval (Wilson's).
    pub share_bound: f64,
    /// Goodput: the requests that met every per-request objective, a
    /// second, over the time from the first request's start to the last
    /// one's end.
    pub per_s: f64,
    /// Each objective on a percentile across the requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<PercentileObjective>,
}

impl GoodputRecord {
    /// Whether the requests were shown to meet the objectives with at
    /// least `goodput` of them meeting every per-request one: the share's
    /// bound at least `goodput`, and every percentile objective met.
    pub fn holds(&self, goodput: f64) -> bool {
        self.share_bound >= goodput && self.percentiles.iter().all(|p| p.met)
    }
}

/// An objective on a percentile of a latency across the requests, such as
/// `p99 ttft <= 300ms`, and how the requests met it.
///
/// # Example
///
/// ```
/// # fn f(p: &nnbench::record::PercentileObjective) {
/// println!("{}: {:.1} ms, at most {:.1} ms: {}", p.objective, p.value_ns / 1e6,
///          p.upper_ns / 1e6, if p.met { "met" } else { "not shown to meet" });
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PercentileObjective {
    /// The objective: `p99 ttft <= 300ms`.
    pub objective: String,
    /// The requests' percentile, in nanoseconds.
    pub value_ns: f64,
    /// The upper end of its 95% interval (order statistics).
    pub upper_ns: f64,
    /// Whether that upper end lies within the limit.
    pub met: bool,
}

/// The 50th, 90th and 99th percentiles of a latency (the nearest rank: a
/// latency some request had), its longest and its mean, in nanoseconds.
///
/// # Example
///
/// ```
/// let p = nnbench::record::LatencyPercentiles::of(&mut vec![3.0, 1.0, 2.0]);
/// assert_eq!((p.p50_ns, p.p99_ns), (2.0, 3.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LatencyPercentiles {
    /// Half the requests (or gaps) at most this.
    pub p50_ns: f64,
    /// Nine in ten.
    pub p90_ns: f64,
    /// 99 in 100.
    pub p99_ns: f64,
    /// The longest.
    pub max_ns: f64,
    /// The mean, which queueing theory predicts.
    pub mean_ns: f64,
}

impl LatencyPercentiles {
    /// The percentiles of `values` (sorted here); zeros where there are
    /// none.
    pub fn of(values: &mut [f64]) -> Self {
        values.sort_by(f64::total_cmp);
        Self {
            p50_ns: nearest_rank(values, 0.5),
            p90_ns: nearest_rank(values, 0.9),
            p99_ns: nearest_rank(values, 0.99),
            max_ns: values.last().copied().unwrap_or(0.0),
            mean_ns: if values.is_empty() {
                0.0
            } else {
                values.iter().sum::<f64>() / values.len() as f64
            },
        }
    }
}

/// The tokens of each request: their mean, median and 99th percentile.
///
/// # Example
///
/// ```
/// let counts = nnbench::record::TokenCounts::of(&mut vec![10.0, 30.0, 20.0]);
/// assert_eq!((counts.mean, counts.p50), (20.0, 20.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TokenCounts {
    /// The mean count.
    pub mean: f64,
    /// Half the requests had at most this many.
    pub p50: f64,
    /// 99 in 100.
    pub p99: f64,
}

impl TokenCounts {
    /// The counts' mean and percentiles (`counts` sorted here).
    pub fn of(counts: &mut [f64]) -> Self {
        counts.sort_by(f64::total_cmp);
        let mean = if counts.is_empty() {
            0.0
        } else {
            counts.iter().sum::<f64>() / counts.len() as f64
        };
        Self {
            mean,
            p50: nearest_rank(counts, 0.5),
            p99: nearest_rank(counts, 0.99),
        }
    }
}

/// The value at quantile `q` of `sorted` by the nearest rank; 0 where it
/// is empty.
pub(crate) fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_rank_is_a_value_some_request_had() {
        let mut values: Vec<f64> = (1..=100).map(f64::from).collect();
        values.reverse();
        let p = LatencyPercentiles::of(&mut values);
        assert_eq!((p.p50_ns, p.p90_ns, p.p99_ns), (50.0, 90.0, 99.0));
        assert_eq!(
            LatencyPercentiles::of(&mut []),
            LatencyPercentiles::default()
        );
    }
}
