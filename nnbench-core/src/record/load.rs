//! A case run under an open loop: `rate = [...]`.

use serde::{Deserialize, Serialize};

/// How a case of a family with `rate = [100, 200, 400]` ran: requests due
/// at `offered_rate` a second, each issued when due whether or not the
/// earlier ones were done, its latency counted from when it was due. The
/// latencies are the case's `time` (its `percentiles` included); this is
/// the load that gave them, and how far the client itself kept up.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::record::CaseRecord) {
/// if let Some(load) = &case.load {
///     println!("{} req/s offered, {:.0} done; {} timed out, {:.2}% sent late",
///              load.offered_rate, load.achieved_rate, load.timed_out,
///              100.0 * load.late_fraction);
/// }
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LoadRecord {
    /// Requests due a second, on average.
    pub offered_rate: f64,
    /// How the gaps between them were drawn: `poisson` or `uniform`.
    pub arrivals: String,
    /// Requests that finished within the timed period, a second.
    pub achieved_rate: f64,
    /// Requests due in the timed period and issued, whose latencies are
    /// the case's time.
    pub requests: u64,
    /// The share of them the client issued more than 100 µs after they
    /// were due (or [`late_after_ns`](Self::late_after_ns)): where it is
    /// more than a few percent, the client could not keep up with the
    /// rate, and the latencies hold its delay too.
    pub late_fraction: f64,
    /// Where the requests are judged against limits of more than 10 ms on
    /// latencies counted from when they were due (a latency target, a
    /// `ttft` or `e2e` objective), a request is late only this far past
    /// when it was due: a hundredth of the tightest such limit, a delay
    /// that changes no verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_after_ns: Option<f64>,
    /// Requests not issued: more were in flight than the client can hold.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub dropped: u64,
    /// Requests that took longer than the family's `request_timeout`.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub timed_out: u64,
    /// The `request_timeout`, in nanoseconds; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ns: Option<f64>,
    /// The most requests that were in flight at once.
    pub most_in_flight: u64,
    /// Where the client's dispatcher ran: `own core` (the last core the
    /// process may use, the requests on the others: a core fewer for the
    /// service) or `shared` (one core, or an async case, whose requests run
    /// on the runtime's threads); then, where it was raised, its priority:
    /// `, real-time` (`SCHED_FIFO`) or `, raised priority` (nice). Absent
    /// in records that predate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dispatcher: Option<String>,
}

/// The share of an open loop's requests its client may issue late (more
/// than 100 µs after they were due) before its latencies are said to hold
/// the client's delay, and are not judged.
pub(crate) const LATE_SHARE: f64 = 0.01;

/// Whether a client that issued `late` of `requests` late fell behind: the
/// lower end of the late share's one-sided 95% interval (Wilson's) lies
/// above [`LATE_SHARE`]. Judged on its bound, a step of a hundred requests
/// is not called client-bound for one or two late by chance.
pub(crate) fn fell_behind(late_fraction: f64, requests: u64) -> bool {
    requests > 0 && share_bounds(late_fraction, requests)[0] > LATE_SHARE
}

/// The one-sided 95% bounds (Wilson's score interval) of a share `p`
/// measured over `n` trials: the least and the most it is likely to be.
pub(crate) fn share_bounds(p: f64, n: u64) -> [f64; 2] {
    if n == 0 {
        return [0.0, 1.0];
    }
    let (n, z) = (n as f64, 1.645f64);
    let centre = p + z * z / (2.0 * n);
    let spread = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    let scale = 1.0 + z * z / n;
    [(centre - spread) / scale, (centre + spread) / scale]
}

impl LoadRecord {
    /// Whether the client fell behind the rate: see [`fell_behind`].
    pub(crate) fn client_fell_behind(&self) -> bool {
        fell_behind(self.late_fraction, self.requests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_falls_behind_by_its_bound() {
        assert!(!fell_behind(3.0 / 130.0, 130), "3 of 130 may be chance");
        assert!(fell_behind(10.0 / 130.0, 130));
        assert!(fell_behind(0.02, 100_000));
        assert!(!fell_behind(0.009, 100_000));
        assert!(!fell_behind(1.0, 0));
    }
}
