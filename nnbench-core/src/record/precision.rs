//! How precisely nnbench's sampler pinned a case's median, and why it
//! stopped sampling.

use serde::{Deserialize, Serialize};

/// The precision of a sampled case's median when nnbench's sampler
/// stopped: the farther end of the median's 95% interval, or the
/// disagreement of the medians of the samples' four quarters in time
/// order where that is wider, as a fraction of the median, on the clock
/// that judged it.
///
/// The sampler stops as soon as `reached` is within `target`; or, once it
/// has enough samples to tell, when their spread says that even sampling
/// until the time allowed for the case would not bring it there (an
/// interval narrows as one over the square root of the samples): the
/// machine's own noise is then wider than the target, and the record says
/// how precise the median is instead of sampling to the cap.
///
/// # Example
///
/// ```
/// # fn f(case: &nnbench::record::CaseRecord) {
/// use nnbench::record::{Clock, StopReason};
/// if let Some(p) = &case.time.precision {
///     let on = match p.clock {
///         Clock::Cpu => "the thread's CPU time",
///         _ => "wall time",
///     };
///     let why = match p.stopped_by {
///         StopReason::Target => "its target",
///         StopReason::Spread => "the machine's spread",
///         _ => "the time allowed",
///     };
///     println!("{}: median within ±{:.1}% by {on}, stopped by {why}", case.id, 100.0 * p.reached);
/// }
/// # }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Precision {
    /// The precision reached, a fraction of the median (0.01: ±1%).
    pub reached: f64,
    /// The precision sampling aimed at.
    pub target: f64,
    /// The clock whose samples judged it, and whose median it is about:
    /// the thread's CPU time for a call that computes on one thread (other
    /// processes do not stretch it), wall time otherwise.
    pub clock: Clock,
    /// Why sampling stopped.
    pub stopped_by: StopReason,
}

/// A clock that times a call, or judges a paired case.
///
/// # Example
///
/// ```
/// use nnbench::record::Clock;
/// assert_eq!(serde_json::to_string(&Clock::Cpu).unwrap(), "\"cpu\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Clock {
    /// Wall time: the call end to end, waits and other processes' turns
    /// included (`median_ns`).
    Wall,
    /// The calling thread's CPU time (`cpu_median_ns`): for
    /// single-threaded calls that compute, where it leaves out the time the
    /// machine gave to other processes.
    Cpu,
    /// Instructions counted by Callgrind on each build (`timing =
    /// instructions`, `--instructions`): the clock of a paired verdict on
    /// counted cases, one round, exact. No sampler's.
    Instructions,
}

/// Why nnbench's sampler stopped sampling a case.
///
/// # Example
///
/// ```
/// use nnbench::record::StopReason;
/// assert_eq!(serde_json::to_string(&StopReason::Spread).unwrap(), "\"spread\"");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The median was known within the target.
    Target,
    /// The samples' spread was too wide for the target to be reached
    /// within the time allowed.
    Spread,
    /// The time allowed for the case was spent.
    TimeCap,
}
