//! What an open loop offered and how its client kept up: counted by the
//! loop as it runs, kept in its outcome, written as the record's `load`.

use std::time::Duration;

use super::arrivals::{Arrivals, OpenLoop};
use super::dispatcher_core::Placement;
use crate::record::LoadRecord;

/// What an open loop offered, and how the client kept up.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct OpenCounts {
    pub rate: f64,
    pub arrivals: Arrivals,
    pub timeout: Option<Duration>,
    pub late_after: Duration,
    /// Requests that finished within the timed period.
    pub finished_in_period: u64,
    pub late: u64,
    pub dropped: u64,
    pub timed_out: u64,
    pub most_in_flight: u64,
    pub dispatcher: Placement,
}

impl OpenCounts {
    pub(super) fn new(open: &OpenLoop) -> Self {
        Self {
            rate: open.rate,
            arrivals: open.arrivals,
            timeout: open.timeout,
            late_after: open.late_after,
            ..Self::default()
        }
    }

    /// The record of a loop whose timed period of `duration` recorded
    /// `requests`.
    pub(super) fn record(&self, requests: u64, duration: Duration) -> LoadRecord {
        LoadRecord {
            offered_rate: self.rate,
            arrivals: self.arrivals.label(),
            achieved_rate: crate::record::per_second(
                self.finished_in_period,
                duration.as_nanos() as f64,
            ),
            requests,
            late_fraction: if requests == 0 {
                0.0
            } else {
                self.late as f64 / requests as f64
            },
            late_after_ns: (self.late_after != super::arrivals::LATE)
                .then_some(self.late_after.as_nanos() as f64),
            dropped: self.dropped,
            timed_out: self.timed_out,
            timeout_ns: self.timeout.map(|t| t.as_nanos() as f64),
            most_in_flight: self.most_in_flight,
            dispatcher: Some(self.dispatcher.name()),
        }
    }
}
