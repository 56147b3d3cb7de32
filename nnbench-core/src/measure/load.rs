//! Requests under load: `concurrency = [...]`. A number of workers each
//! make one request after another (a closed loop), so that as many are in
//! flight at every moment; each request's latency is recorded, and the
//! requests that finished within the timed period give the rate.
//!
//! A sync function's workers are threads; an async function's are futures
//! polled together by one task, as a client with many requests in flight
//! on one connection makes them.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::open_counts::OpenCounts;
use super::together;
use crate::record::{ConcurrencyRecord, Percentiles, Sampler, TimeRecord, TimingMode};

/// How long the timed period is split into windows, whose mean latencies
/// are the record's samples.
pub(super) const WINDOWS: usize = 10;

/// How a case is loaded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LoadPlan {
    /// Requests in flight at once.
    pub level: usize,
    /// Requests are made, not recorded, for this long first.
    pub warm_up: Duration,
    /// The timed period.
    pub duration: Duration,
    /// Each worker makes one request, no more, all of them recorded: a
    /// case timed once (and every case in test mode).
    pub once: bool,
    /// Requests due at a set rate instead of `level` kept in flight.
    pub open: Option<super::arrivals::OpenLoop>,
}

/// What the workers of one load measured, together.
pub(crate) struct LoadOutcome {
    level: usize,
    tally: Tally,
    duration: Duration,
    once: bool,
    /// Under an open loop, what it offered and how the client kept up.
    open: Option<OpenCounts>,
}

/// What one worker measured.
pub(super) struct Tally {
    latencies: Histogram<u64>,
    /// Per window of the timed period: the sum of the latencies of the
    /// requests that finished in it, and their number.
    windows: [(f64, u64); WINDOWS],
    /// Every latency, when each worker makes one request.
    each: Vec<f64>,
    /// When the last recorded request finished, from the start.
    last_end: Duration,
}

impl Tally {
    pub(super) fn new() -> Self {
        Self {
            // Grows to the latencies it sees, to three significant digits.
            latencies: Histogram::new(3).unwrap_or_else(|_| unreachable!("3 digits are valid")),
            windows: [(0.0, 0); WINDOWS],
            each: Vec::new(),
            last_end: Duration::ZERO,
        }
    }

    /// Records a latency; the histogram grows to hold it.
    pub(super) fn record(&mut self, ns: u64) {
        if self.latencies.record(ns).is_err() {
            self.latencies.saturating_record(ns);
        }
    }

    /// Records a latency of the timed period's window `window`.
    pub(super) fn record_in(&mut self, window: usize, ns: u64) {
        self.record(ns);
        let window = &mut self.windows[window.min(WINDOWS - 1)];
        window.0 += ns as f64;
        window.1 += 1;
    }

    pub(super) fn add(&mut self, other: Tally) {
        // Both histograms grow as needed: adding cannot fail for lack of room.
        let _ = self.latencies.add(&other.latencies);
        for (mine, theirs) in self.windows.iter_mut().zip(other.windows) {
            mine.0 += theirs.0;
            mine.1 += theirs.1;
        }
        self.each.extend(other.each);
        self.last_end = self.last_end.max(other.last_end);
    }
}

/// One worker's loop, apart from making the request: when to make the
/// next, and what to record of the last.
struct Worker<'a, R> {
    plan: LoadPlan,
    start: Instant,
    stop: &'a AtomicBool,
    made: u64,
    tally: Tally,
    /// The value of its last request.
    last: Option<R>,
}

impl<'a, R> Worker<'a, R> {
    fn new(plan: LoadPlan, start: Instant, stop: &'a AtomicBool) -> Self {
        Self {
            plan,
            start,
            stop,
            made: 0,
            tally: Tally::new(),
            last: None,
        }
    }

    /// The request that began at `began` returned `out`; whether to make
    /// another (a failed one stops every worker).
    fn returned(&mut self, began: Instant, out: R, failed: &impl Fn(&R) -> bool) -> bool {
        let failure = failed(&out);
        self.done(began, failure);
        self.last = Some(out);
        !failure
    }

    /// When the next request begins, or `None` when this worker is done:
    /// every worker makes one request at least.
    fn next(&self) -> Option<Instant> {
        let now = Instant::now();
        let first = self.made == 0;
        let over = self.plan.once || now >= self.start + self.plan.warm_up + self.plan.duration;
        (first || !(over || self.stop.load(Ordering::Relaxed))).then_some(now)
    }

    fn done(&mut self, began: Instant, failed: bool) {
        let ended = Instant::now();
        self.made += 1;
        if failed {
            self.stop.store(true, Ordering::Relaxed);
            return;
        }
        let latency = ended.duration_since(began);
        let since = ended.duration_since(self.start);
        let ns = latency.as_nanos() as u64;
        if self.plan.once {
            self.tally.record(ns);
            self.tally.each.push(ns as f64);
            self.tally.last_end = self.tally.last_end.max(since);
            return;
        }
        let Some(into) = since.checked_sub(self.plan.warm_up) else {
            return;
        };
        if into >= self.plan.duration {
            return;
        }
        let window = (into.as_nanos() * WINDOWS as u128 / self.plan.duration.as_nanos().max(1))
            .min(WINDOWS as u128 - 1) as usize;
        self.tally.record(ns);
        self.tally.windows[window].0 += ns as f64;
        self.tally.windows[window].1 += 1;
    }
}

/// Keeps `plan.level` calls of `f` in flight on as many threads, this one
/// among them. Returns this thread's last value, or the first failed one,
/// and what was measured.
///
/// # Panics
///
/// When the system cannot start a thread, and again here when a call
/// panicked on any thread.
pub(crate) fn on_threads<R: Send>(
    plan: LoadPlan,
    f: &(impl Fn() -> R + Sync),
    failed: &(impl Fn(&R) -> bool + Sync),
) -> (R, LoadOutcome) {
    let stop = AtomicBool::new(false);
    let start = OnceLock::new();
    let workers = together::scoped(plan.level, "nnbench-request", || {
        let began = *start.get_or_init(|| {
            let now = Instant::now();
            if !plan.once {
                super::stream::measuring_from(now + plan.warm_up);
            }
            now
        });
        let mut worker = Worker::new(plan, began, &stop);
        while let Some(began) = worker.next() {
            if !worker.returned(began, f(), failed) {
                break;
            }
        }
        worker
    });
    joined(workers, failed, plan)
}

/// Keeps `plan.level` futures of `f` in flight, polled together by the
/// calling task. Returns the first worker's last value, or the first
/// failed one, and what was measured.
#[cfg(feature = "tokio")]
pub(crate) async fn in_flight<F: Future>(
    plan: LoadPlan,
    f: &impl Fn() -> F,
    failed: &impl Fn(&F::Output) -> bool,
) -> (F::Output, LoadOutcome) {
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let workers = (0..plan.level.max(1)).map(|_| async {
        let mut worker = Worker::new(plan, start, &stop);
        while let Some(began) = worker.next() {
            if !worker.returned(began, f().await, failed) {
                break;
            }
        }
        worker
    });
    joined(futures_util::future::join_all(workers).await, failed, plan)
}

/// The workers of one load, done: the first one's last value, unless
/// another's failed, and every tally together.
fn joined<'a, R: 'a>(
    workers: impl IntoIterator<Item = Worker<'a, R>>,
    failed: impl Fn(&R) -> bool,
    plan: LoadPlan,
) -> (R, LoadOutcome) {
    let mut tally = Tally::new();
    let mut lasts = Vec::new();
    for worker in workers {
        tally.add(worker.tally);
        lasts.extend(worker.last);
    }
    let out = together::first_failed(lasts, failed)
        .unwrap_or_else(|| unreachable!("every worker makes a request"));
    (out, LoadOutcome::new(plan, tally))
}

impl LoadOutcome {
    fn new(plan: LoadPlan, tally: Tally) -> Self {
        Self {
            level: plan.level.max(1),
            duration: if plan.once {
                tally.last_end
            } else {
                plan.duration
            },
            once: plan.once,
            tally,
            open: None,
        }
    }

    /// An open loop's: its requests recorded in `tally`, what it offered
    /// and how the client kept up in `counts`.
    pub(super) fn open(plan: LoadPlan, tally: Tally, counts: OpenCounts) -> Self {
        Self {
            level: counts.most_in_flight.max(1) as usize,
            open: Some(counts),
            ..Self::new(plan, tally)
        }
    }

    /// The latency at quantile `q` of the recorded requests, and its 95%
    /// interval by order statistics (the ranks a binomial count of
    /// requests below it leaves likely), in nanoseconds; `None` without
    /// requests.
    pub(crate) fn quantile(&self, q: f64) -> Option<(f64, [f64; 2])> {
        let h = &self.tally.latencies;
        if h.is_empty() {
            return None;
        }
        let n = h.len() as f64;
        let spread = 1.96 * (n * q * (1.0 - q)).sqrt();
        let rank = |k: f64| (k / n).clamp(0.0, 1.0);
        let at = |q: f64| h.value_at_quantile(q) as f64;
        Some((
            at(q),
            [
                at(rank(n * q - spread - 1.0)),
                at(rank(n * q + spread + 1.0)),
            ],
        ))
    }

    /// The open loop's record, under `rate`.
    pub(crate) fn open_record(&self) -> Option<crate::record::LoadRecord> {
        self.open
            .as_ref()
            .map(|counts| counts.record(self.tally.latencies.len(), self.duration))
    }

    /// How long the timed period lasted.
    pub(crate) fn duration(&self) -> Duration {
        self.duration
    }

    /// The load, and the rate of the requests that finished under it.
    pub(crate) fn concurrency(&self) -> ConcurrencyRecord {
        ConcurrencyRecord::new(
            self.level as u64,
            self.tally.latencies.len(),
            self.duration.as_nanos() as f64,
        )
    }

    /// The latency of one request as the case's time: its mean, spread and
    /// percentiles over every request recorded, and the mean of each
    /// window of the period as the samples.
    pub(crate) fn time(&self) -> TimeRecord {
        let h = &self.tally.latencies;
        let samples_ns: Vec<f64> = if self.once {
            self.tally.each.clone()
        } else {
            self.tally
                .windows
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(sum, n)| sum / *n as f64)
                .collect()
        };
        let at = |q: f64| h.value_at_quantile(q) as f64;
        TimeRecord {
            mode: if self.once {
                TimingMode::Once
            } else {
                TimingMode::Sampled
            },
            sampler: Some(Sampler::Load),
            samples: samples_ns.len() as u64,
            iters: h.len(),
            mean_ns: h.mean(),
            median_ns: at(0.5),
            std_ns: h.stdev(),
            min_ns: h.min() as f64,
            max_ns: h.max() as f64,
            samples_ns,
            percentiles: (!h.is_empty()).then(|| {
                Box::new(Percentiles {
                    p50_ns: at(0.5),
                    p90_ns: at(0.9),
                    p99_ns: at(0.99),
                    p999_ns: (h.len() >= 1000).then(|| at(0.999)),
                    max_ns: h.max() as f64,
                })
            }),
            ..TimeRecord::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(level: usize, once: bool) -> LoadPlan {
        LoadPlan {
            level,
            warm_up: Duration::from_millis(10),
            duration: Duration::from_millis(100),
            once,
            open: None,
        }
    }

    #[test]
    fn sleeping_requests_overlap_so_the_rate_grows_with_the_level() {
        let nap = || std::thread::sleep(Duration::from_millis(5));
        let (_, one) = on_threads(plan(1, false), &nap, &|_| false);
        let (_, eight) = on_threads(plan(8, false), &nap, &|_| false);
        let (one, eight) = (one.concurrency(), eight.concurrency());
        assert_eq!((one.level, eight.level), (1, 8));
        assert!(
            eight.requests_per_second > 3.0 * one.requests_per_second,
            "{one:?} {eight:?}"
        );
    }

    #[test]
    fn once_makes_one_request_per_worker_and_records_each() {
        let (out, outcome) = on_threads(plan(4, true), &|| 3, &|_| false);
        let time = outcome.time();
        assert_eq!(out, 3);
        assert_eq!(
            (time.mode, time.samples, time.iters),
            (TimingMode::Once, 4, 4)
        );
        assert_eq!(outcome.concurrency().requests, 4);
        let p = time.percentiles.expect("percentiles of the four");
        assert!(p.p50_ns <= p.p90_ns && p.p90_ns <= p.p99_ns && p.p99_ns <= p.max_ns);
    }

    #[test]
    fn a_failed_request_stops_the_load_and_is_the_value() {
        let made = std::sync::atomic::AtomicU64::new(0);
        let (out, _) = on_threads(
            plan(3, false),
            &|| made.fetch_add(1, Ordering::Relaxed),
            &|n: &u64| *n == 5,
        );
        assert_eq!(out, 5);
        assert!(made.into_inner() < 1_000, "the others stopped soon after");
    }

    #[test]
    fn the_timed_period_is_split_into_windows() {
        let nap = || std::thread::sleep(Duration::from_millis(1));
        let (_, outcome) = on_threads(plan(2, false), &nap, &|_| false);
        let time = outcome.time();
        assert_eq!(time.mode, TimingMode::Sampled);
        assert_eq!(time.samples, WINDOWS as u64);
        assert!(time.median_ns >= 1e6, "{time:?}");
        assert_eq!(outcome.duration(), Duration::from_millis(100));
    }
}
