//! A case run on several threads at once: `threads = [...]`.

use serde::{Deserialize, Serialize};

/// How a case of a family with `threads = [1, 2, 4]` ran: every call made
/// on `count` threads at once, started together at a barrier. The case's
/// `time` is per call of the round, from the first thread's start to the
/// last one's end (a busy machine may run threads released together one
/// after another), its CPU times the threads' mean; a time that rises
/// with `count` is contention.
///
/// # Example
///
/// ```
/// use nnbench::record::ThreadsRecord;
/// let t = ThreadsRecord::new(vec![100.0, 110.0, 120.0]);
/// assert_eq!(t.count, 3);
/// assert!((t.spread - 20.0 / 110.0).abs() < 1e-12);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ThreadsRecord {
    /// Threads that made the calls together.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub count: u64,
    /// Each thread's median time per call over the samples, in nanoseconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_thread_ns: Vec<f64>,
    /// How far apart the threads were: the slowest thread's time per call
    /// minus the fastest's, over the median thread's. Zero for one thread.
    pub spread: f64,
}

impl ThreadsRecord {
    /// The record of threads whose time per call was `per_thread_ns`.
    pub fn new(per_thread_ns: Vec<f64>) -> Self {
        let mut sorted = per_thread_ns.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let spread = match (sorted.first(), sorted.last()) {
            (Some(fastest), Some(slowest)) => {
                let median = (sorted[(n - 1) / 2] + sorted[n / 2]) / 2.0;
                if median > 0.0 {
                    (slowest - fastest) / median
                } else {
                    0.0
                }
            }
            _ => 0.0,
        };
        Self {
            count: n as u64,
            per_thread_ns,
            spread,
        }
    }
}
