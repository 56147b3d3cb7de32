//! A case run under load: `concurrency = [...]`.

use serde::{Deserialize, Serialize};

/// How a case of a family with `concurrency = [1, 8, 64]` ran: `level`
/// requests kept in flight for the timed period, each new one started as
/// one finished. The latency of each request is the case's `time` (its
/// `percentiles` included); this is the load that gave it.
///
/// # Example
///
/// ```
/// use nnbench::record::ConcurrencyRecord;
/// let c = ConcurrencyRecord::new(8, 4_000, 2e9);
/// assert_eq!(c.requests_per_second, 2_000.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ConcurrencyRecord {
    /// Requests in flight at once.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub level: u64,
    /// Requests that finished within the timed period.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub requests: u64,
    /// How long the timed period lasted, in nanoseconds.
    pub duration_ns: f64,
    /// `requests` per second of `duration_ns`: the throughput at this load.
    pub requests_per_second: f64,
}

impl ConcurrencyRecord {
    /// `requests` finished in `duration_ns` at `level` requests in flight
    /// (0 per second for a period too short to measure).
    pub fn new(level: u64, requests: u64, duration_ns: f64) -> Self {
        Self {
            level,
            requests,
            duration_ns,
            requests_per_second: super::throughput::per_second(requests, duration_ns),
        }
    }
}
