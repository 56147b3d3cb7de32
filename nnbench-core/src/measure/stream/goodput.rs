//! Judging a streaming case's requests against its family's objectives
//! (`slo`): which requests met every per-request one, and whether each
//! percentile objective was shown to hold.

use nnbench_vocab::{Objective, StreamLatency, format_slo};

use super::Request;
use crate::record::{GoodputRecord, PercentileObjective, share_bounds};

/// A request's latency that `latency` names, in nanoseconds; `None` where
/// it has none (no first token, or a single token for a time per token).
fn latency_of(request: &Request, latency: StreamLatency) -> Option<f64> {
    match latency {
        StreamLatency::Ttft => request.first_ns,
        StreamLatency::Tpot => request.tpot_ns(),
        StreamLatency::Itl => request.longest_gap_ns,
        StreamLatency::E2e => Some(request.e2e_ns()),
    }
}

/// Whether `request` met `objective`, a per-request one. A request with
/// no first token misses a bound on it; one with a single token has no
/// time per token or gap to miss.
fn met(request: &Request, objective: &Objective) -> bool {
    let limit = objective.limit.as_nanos() as f64;
    match latency_of(request, objective.latency) {
        Some(ns) => ns <= limit,
        None => objective.latency != StreamLatency::Ttft,
    }
}

/// The requests' goodput under `slo`, over `span_s` seconds; `gaps_ns` is
/// every gap between two tokens, which a percentile of `itl` is of.
pub(super) fn judge(
    slo: &[Objective],
    requests: &[&Request],
    gaps_ns: &[f64],
    span_s: f64,
) -> GoodputRecord {
    let per_request: Vec<&Objective> = slo.iter().filter(|o| o.quantile.is_none()).collect();
    let good = requests
        .iter()
        .filter(|r| per_request.iter().all(|o| met(r, o)))
        .count() as u64;
    let n = requests.len() as u64;
    let share = if n == 0 { 0.0 } else { good as f64 / n as f64 };
    let percentiles = slo
        .iter()
        .filter_map(|objective| {
            let q = objective.quantile?;
            let mut values: Vec<f64> = match objective.latency {
                StreamLatency::Itl => gaps_ns.to_vec(),
                latency => requests
                    .iter()
                    .filter_map(|r| latency_of(r, latency))
                    .collect(),
            };
            values.sort_by(f64::total_cmp);
            let (value_ns, upper_ns) = percentile_and_bound(&values, q);
            Some(PercentileObjective {
                objective: objective.to_string(),
                value_ns,
                upper_ns,
                met: !values.is_empty() && upper_ns <= objective.limit.as_nanos() as f64,
            })
        })
        .collect();
    GoodputRecord {
        slo: format_slo(slo),
        met: good,
        share,
        share_bound: if n == 0 {
            0.0
        } else {
            share_bounds(share, n)[0]
        },
        per_s: if span_s > 0.0 {
            good as f64 / span_s
        } else {
            0.0
        },
        percentiles,
    }
}

/// The value at quantile `q` of `sorted` (the nearest rank), and the upper
/// end of its 95% interval by order statistics: the rank a binomial count
/// of values below it is unlikely to pass.
fn percentile_and_bound(sorted: &[f64], q: f64) -> (f64, f64) {
    if sorted.is_empty() {
        return (0.0, f64::INFINITY);
    }
    let n = sorted.len() as f64;
    let value = crate::record::stream_nearest_rank(sorted, q);
    let rank = (n * q + 1.96 * (n * q * (1.0 - q)).sqrt() + 1.0).ceil() as usize;
    (value, sorted[rank.clamp(1, sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    fn request(first_ms: f64, tokens: usize, span_ms: f64, longest_gap_ms: f64) -> Request {
        let start = Instant::now();
        Request {
            start,
            end: start + Duration::from_secs_f64((first_ms + span_ms) / 1e3),
            first_ns: (tokens > 0).then_some(first_ms * 1e6),
            tokens,
            span_ns: span_ms * 1e6,
            longest_gap_ns: (tokens > 1).then_some(longest_gap_ms * 1e6),
            input: None,
        }
    }

    #[test]
    fn a_request_counts_where_it_meets_every_per_request_objective() {
        let slo = nnbench_vocab::parse_slo("ttft <= 200ms, tpot <= 25ms").unwrap();
        let requests = [
            request(100.0, 11, 200.0, 30.0), // tpot 20 ms: good
            request(300.0, 11, 200.0, 30.0), // ttft over
            request(100.0, 11, 400.0, 40.0), // tpot 40 ms
            request(100.0, 1, 0.0, 0.0),     // one token: no tpot to miss
            request(0.0, 0, 0.0, 0.0),       // no first token
        ];
        let refs: Vec<&Request> = requests.iter().collect();
        let g = judge(&slo, &refs, &[], 2.0);
        assert_eq!((g.met, g.share), (2, 0.4));
        assert_eq!(g.per_s, 1.0);
        assert!(g.share_bound < 0.4 && g.share_bound > 0.0, "{g:?}");
        assert_eq!(g.slo, "ttft <= 200ms, tpot <= 25ms");
        assert!(g.holds(0.1) && !g.holds(0.4));
    }

    #[test]
    fn a_percentile_objective_holds_only_where_its_bound_does() {
        let slo = nnbench_vocab::parse_slo("p90 ttft <= 100ms, itl <= 50ms").unwrap();
        // TTFTs 1..=100 ms: p90 is 90 ms, its bound a few ranks above.
        let requests: Vec<Request> = (1..=100)
            .map(|ms| request(f64::from(ms), 3, 20.0, if ms == 7 { 60.0 } else { 10.0 }))
            .collect();
        let refs: Vec<&Request> = requests.iter().collect();
        let g = judge(&slo, &refs, &[], 1.0);
        assert_eq!(g.met, 99, "one request's gap is past 50 ms");
        let p = &g.percentiles[0];
        assert_eq!(
            (p.objective.as_str(), p.value_ns),
            ("p90 ttft <= 100ms", 90e6)
        );
        assert!(p.upper_ns > 90e6 && p.upper_ns <= 100e6 && p.met, "{p:?}");
        let tight = nnbench_vocab::parse_slo("p90 ttft <= 92ms").unwrap();
        assert!(
            !judge(&tight, &refs, &[], 1.0).percentiles[0].met,
            "too close to tell"
        );
        assert!(
            !judge(&slo, &[], &[], 1.0).holds(0.0),
            "no requests, nothing shown"
        );
    }
}
