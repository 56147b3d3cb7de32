//! Requests at a set rate: `rate = [...]`. A dispatcher issues each
//! request when it is due, whether or not the earlier ones are done, and
//! each request's latency counts from when it was due: a stall of the
//! service queues the requests that come meanwhile, and their waits are in
//! the tail, where a closed loop (`concurrency`) would have stopped sending
//! (coordinated omission).
//!
//! A sync function's requests run on a pool of threads that grows by one
//! whenever a request is due and every thread is busy, so that no request
//! waits for a thread: as many threads as requests in flight, up to
//! [`MOST_THREADS`]. The dispatcher has a core of its own where there are
//! two or more ([`dispatcher_core`](super::dispatcher_core)). An async
//! function's requests are futures polled together by the case's task,
//! handed to it by the dispatcher's thread; the runtime's threads are its
//! own to place, so there the dispatcher shares the cores.

use std::panic::resume_unwind;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use super::arrivals::OpenLoop;
use super::dispatcher_core::Cores;
use super::load::{LoadOutcome, LoadPlan, Tally};
use super::open_counts::OpenCounts;

/// The most threads a sync case's requests run on: a request due while
/// that many are in flight is dropped.
pub(crate) const MOST_THREADS: usize = 4096;

/// The most futures an async case keeps in flight.
#[cfg(feature = "tokio")]
const MOST_FUTURES: usize = 1 << 16;

/// The requests a case timed once makes (every case in test mode), from
/// its schedule's start.
const ONCE_REQUESTS: u64 = 5;

/// A request, as the dispatcher hands it on.
#[derive(Clone, Copy)]
struct Due {
    at: Instant,
    /// Into the timed period, where it is due in it.
    into: Option<Duration>,
}

/// When the requests are due and which are recorded.
struct Period {
    start: Instant,
    plan: LoadPlan,
    /// A request issued this long past when it was due was issued late.
    late: Duration,
}

impl Period {
    /// The request due `offset` from the start, or `None` past the end.
    fn due(&self, offset: Duration, index: u64) -> Option<Due> {
        let at = self.start + offset;
        if self.plan.once {
            return (index < ONCE_REQUESTS).then_some(Due {
                at,
                into: Some(offset),
            });
        }
        let into = offset.checked_sub(self.plan.warm_up);
        if into.is_some_and(|into| into >= self.plan.duration) {
            return None;
        }
        Some(Due { at, into })
    }

    /// The window of the timed period a request due `into` it falls in.
    fn window(&self, into: Duration) -> usize {
        let length = self.plan.duration.as_nanos().max(1);
        (into.as_nanos() * super::load::WINDOWS as u128 / length) as usize
    }

    /// Whether `ended` is within the timed period.
    fn within(&self, ended: Instant) -> bool {
        let from = self.start
            + if self.plan.once {
                Duration::ZERO
            } else {
                self.plan.warm_up
            };
        ended >= from && (self.plan.once || ended < from + self.plan.duration)
    }
}

/// What became of a request handed over when due.
enum Issued {
    Sent,
    /// More were in flight than the client holds.
    Dropped,
    /// No one takes requests any more.
    Closed,
}

/// Issues each request of `schedule` due in `period`, when it is due,
/// through `issue`, until `stop` is set or no one takes more. Returns how
/// many of the recorded requests were issued late, and how many dropped.
fn dispatch(
    period: &Period,
    schedule: impl Iterator<Item = Duration>,
    stop: &AtomicBool,
    spin: Duration,
    mut issue: impl FnMut(Due) -> Issued,
) -> (u64, u64) {
    let (mut late, mut dropped) = (0u64, 0u64);
    let mut previous = period.start;
    for (index, offset) in (0u64..).zip(schedule) {
        let Some(due) = period.due(offset, index) else {
            break;
        };
        // Busy a quarter of each gap at most: a real-time thread busy
        // for most of a second is stopped for the rest of it (the
        // kernel's real-time throttling), and the core's other threads
        // with it.
        let gap = due.at.saturating_duration_since(previous);
        previous = due.at;
        wait_until(due.at, spin.min((gap / 4).max(SPIN)));
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let recorded = u64::from(due.into.is_some());
        if Instant::now() > due.at + period.late {
            late += recorded;
        }
        match issue(due) {
            Issued::Sent => {}
            Issued::Dropped => dropped += recorded,
            Issued::Closed => break,
        }
    }
    (late, dropped)
}

/// How long before a request is due a dispatcher that shares its cores
/// stops sleeping and spins: a thread's sleep ends tens of microseconds
/// late.
const SPIN: Duration = Duration::from_micros(200);

/// How long one with a core of its own spins: an idle virtual CPU that
/// its host descheduled may take milliseconds to run again once its timer
/// fires, so it is kept busy over the last stretch, yielding but for the
/// last [`SPIN`]. The core is the dispatcher's alone: at ten requests a
/// second it is busy a fiftieth of the time, and at any rate a quarter of
/// each gap at most.
const OWN_CORE_SPIN: Duration = Duration::from_millis(2);

/// Sleeps until `due`, the last `spin` spinning.
fn wait_until(due: Instant, spin: Duration) {
    loop {
        let now = Instant::now();
        let Some(left) = due.checked_duration_since(now).filter(|l| !l.is_zero()) else {
            return;
        };
        if left > spin + Duration::from_micros(100) {
            std::thread::sleep(left - spin);
        } else if left > SPIN {
            // The request threads it starts begin on its core, at its
            // priority, until they move: they run while it yields.
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

/// What one request thread measured.
struct Served<R> {
    tally: Tally,
    finished_in_period: u64,
    timed_out: u64,
    last: Option<R>,
}

impl<R> Served<R> {
    fn new() -> Self {
        Self {
            tally: Tally::new(),
            finished_in_period: 0,
            timed_out: 0,
            last: None,
        }
    }
}

/// Issues the requests of `open` at its rate for `plan`'s period, each a
/// call of `f` on a thread of a pool as large as the requests in flight.
/// Returns the last value, or the first that `failed` picks (which stops
/// the loop), and what was measured.
///
/// # Panics
///
/// When the system cannot start a thread, and again here when a call
/// panicked on any thread.
pub(crate) fn on_threads<R: Send>(
    plan: LoadPlan,
    open: OpenLoop,
    f: &(impl Fn() -> R + Sync),
    failed: &(impl Fn(&R) -> bool + Sync),
) -> (R, LoadOutcome) {
    let (sender, receiver) = mpsc::channel::<Due>();
    let receiver = Mutex::new(receiver);
    let idle = AtomicUsize::new(0);
    let in_flight = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let first_failure: Mutex<Option<R>> = Mutex::new(None);
    let mut counts = OpenCounts::new(&open);
    let cores = Cores::of_this_thread();
    // The first request is due once the first threads are up.
    let period = Period {
        start: Instant::now() + Duration::from_millis(1),
        plan,
        late: open.late_after,
    };
    if !plan.once {
        super::stream::measuring_from(period.start + plan.warm_up);
    }
    let serve = || {
        let _placed = cores.requests();
        let mut served = Served::new();
        loop {
            let next = receiver
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .recv();
            let Ok(due) = next else { break };
            super::stream::due(due.at);
            let out = f();
            let ended = Instant::now();
            in_flight.fetch_sub(1, Ordering::Relaxed);
            if failed(&out) {
                stop.store(true, Ordering::Relaxed);
                let mut first = first_failure
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                first.get_or_insert(out);
            } else {
                record(&period, &open, due, ended, &mut served);
                served.last = Some(out);
            }
            idle.fetch_add(1, Ordering::Release);
        }
        served
    };
    let results = std::thread::scope(|scope| {
        let mut threads = Vec::new();
        let start_thread = |number: usize| {
            std::thread::Builder::new()
                .name(format!("nnbench-request-{number}"))
                .spawn_scoped(scope, || {
                    let mut out = None;
                    super::profile::within(&mut || out = Some(serve()));
                    out.unwrap_or_else(|| unreachable!("the profiler calls its work"))
                })
                .unwrap_or_else(|error| panic!("could not start request thread {number}: {error}"))
        };
        let mut most_in_flight = 0;
        let placed = cores.dispatcher();
        let spin = if placed.placement().own_core {
            OWN_CORE_SPIN
        } else {
            SPIN
        };
        (counts.late, counts.dropped) = dispatch(&period, open.schedule(), &stop, spin, |due| {
            // An idle thread takes it, else a new one; past the most
            // threads, it is dropped.
            let reserved = idle
                .fetch_update(Ordering::Acquire, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok();
            if !reserved {
                if threads.len() >= MOST_THREADS {
                    return Issued::Dropped;
                }
                threads.push(start_thread(threads.len() + 1));
            }
            let now = in_flight.fetch_add(1, Ordering::Relaxed) + 1;
            most_in_flight = most_in_flight.max(now);
            match sender.send(due) {
                Ok(()) => Issued::Sent,
                Err(_) => Issued::Closed,
            }
        });
        counts.dispatcher = placed.placement();
        drop(placed);
        counts.most_in_flight = most_in_flight;
        drop(sender);
        if threads.is_empty() {
            // Not even the first request was due in the period: make it,
            // so that the case has a value.
            let due = Due {
                at: Instant::now(),
                into: None,
            };
            let out = f();
            let mut served = Served::new();
            record(&period, &open, due, Instant::now(), &mut served);
            served.last = Some(out);
            return vec![Ok(served)];
        }
        threads.into_iter().map(|t| t.join()).collect::<Vec<_>>()
    });
    let mut tally = Tally::new();
    let mut last = None;
    let mut panicked = None;
    for result in results {
        match result {
            Ok(served) => {
                tally.add(served.tally);
                counts.finished_in_period += served.finished_in_period;
                counts.timed_out += served.timed_out;
                last = served.last.or(last);
            }
            Err(payload) => panicked = Some(payload),
        }
    }
    if let Some(payload) = panicked {
        resume_unwind(payload);
    }
    let failure = first_failure
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let out = failure
        .or(last)
        .unwrap_or_else(|| unreachable!("a request is made, or one failed"));
    (out, LoadOutcome::open(plan, tally, counts))
}

/// Records a request that was due at `due` and ended at `ended`.
fn record<R>(period: &Period, open: &OpenLoop, due: Due, ended: Instant, served: &mut Served<R>) {
    let latency = ended.saturating_duration_since(due.at);
    if period.within(ended) {
        served.finished_in_period += 1;
    }
    let Some(into) = due.into else { return };
    if open.timeout.is_some_and(|t| latency > t) {
        served.timed_out += 1;
    }
    served
        .tally
        .record_in(period.window(into), latency.as_nanos() as u64);
}

/// [`on_threads`] for an async function: a thread of its own issues the
/// requests when due, and the calling task polls them together. A request
/// past the family's `request_timeout` is dropped (its future cancelled)
/// and counts at the timeout.
#[cfg(feature = "tokio")]
pub(crate) async fn in_flight<F: Future>(
    plan: LoadPlan,
    open: OpenLoop,
    f: &impl Fn() -> F,
    failed: &impl Fn(&F::Output) -> bool,
) -> (F::Output, LoadOutcome) {
    use futures_util::stream::{FuturesUnordered, StreamExt};
    use std::sync::Arc;
    use std::task::Poll;

    let period = Period {
        start: Instant::now() + Duration::from_millis(1),
        plan,
        late: open.late_after,
    };
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<Due>();
    let stop = Arc::new(AtomicBool::new(false));
    let full = Arc::new(AtomicBool::new(false));
    let dispatcher = {
        let (stop, full) = (Arc::clone(&stop), Arc::clone(&full));
        let (start, schedule) = (period.start, open.schedule());
        let period = Period {
            start,
            plan,
            late: open.late_after,
        };
        std::thread::Builder::new()
            .name("nnbench-arrivals".into())
            .spawn(move || {
                dispatch(&period, schedule, &stop, SPIN, |due| {
                    if full.load(Ordering::Relaxed) {
                        Issued::Dropped
                    } else if sender.send(due).is_ok() {
                        Issued::Sent
                    } else {
                        Issued::Closed
                    }
                })
            })
    };
    let Ok(dispatcher) = dispatcher else {
        // No thread for the arrivals: one request, so that the case has a
        // value, and nothing recorded.
        let out = f().await;
        return (
            out,
            LoadOutcome::open(plan, Tally::new(), OpenCounts::new(&open)),
        );
    };
    let mut counts = OpenCounts::new(&open);
    let mut served = Served::new();
    let mut failure = None;
    let mut requests = FuturesUnordered::new();
    let mut open_channel = true;
    loop {
        enum Event<T> {
            Due(Due),
            Closed,
            Done(Due, Option<T>),
        }
        if !open_channel && requests.is_empty() {
            break;
        }
        let event = std::future::poll_fn(|cx| {
            if let Poll::Ready(Some(done)) = requests.poll_next_unpin(cx) {
                let (due, out) = done;
                return Poll::Ready(Event::Done(due, out));
            }
            if open_channel {
                return match receiver.poll_recv(cx) {
                    Poll::Ready(Some(due)) => Poll::Ready(Event::Due(due)),
                    Poll::Ready(None) => Poll::Ready(Event::Closed),
                    Poll::Pending => Poll::Pending,
                };
            }
            Poll::Pending
        });
        match event.await {
            Event::Due(due) => {
                super::stream::due(due.at);
                let request = f();
                let timeout = open.timeout;
                requests.push(async move {
                    let out = match timeout {
                        Some(limit) => tokio::time::timeout(limit, request).await.ok(),
                        None => Some(request.await),
                    };
                    (due, out)
                });
                counts.most_in_flight = counts.most_in_flight.max(requests.len() as u64);
                full.store(requests.len() >= MOST_FUTURES, Ordering::Relaxed);
            }
            Event::Closed => open_channel = false,
            Event::Done(due, out) => {
                full.store(requests.len() >= MOST_FUTURES, Ordering::Relaxed);
                let ended = Instant::now();
                match out {
                    Some(out) if failed(&out) => {
                        stop.store(true, Ordering::Relaxed);
                        failure.get_or_insert(out);
                    }
                    Some(out) => {
                        record(&period, &open, due, ended, &mut served);
                        served.last = Some(out);
                    }
                    // Cancelled at its timeout: counted there.
                    None => {
                        let at = due.at + open.timeout.unwrap_or_default();
                        record(&period, &open, due, at.max(ended), &mut served);
                    }
                }
            }
        }
    }
    let (late, dropped) = dispatcher
        .join()
        .unwrap_or_else(|payload| resume_unwind(payload));
    counts.late = late;
    counts.dropped = dropped;
    counts.finished_in_period = served.finished_in_period;
    counts.timed_out = served.timed_out;
    let out = match failure.or(served.last) {
        Some(out) => out,
        // Every request timed out, or none was due: one more, waited
        // for, so that the case has a value.
        None => f().await,
    };
    (out, LoadOutcome::open(plan, served.tally, counts))
}

#[cfg(test)]
mod tests {
    use super::super::arrivals::Arrivals;
    use super::*;

    fn plan(duration_ms: u64) -> LoadPlan {
        LoadPlan {
            level: 1,
            warm_up: Duration::from_millis(20),
            duration: Duration::from_millis(duration_ms),
            once: false,
            open: None,
        }
    }

    fn open(rate: f64, arrivals: Arrivals) -> OpenLoop {
        OpenLoop {
            rate,
            arrivals,
            timeout: None,
            seed: 1,
            late_after: crate::measure::arrivals::LATE,
        }
    }

    #[test]
    fn requests_are_issued_at_the_rate_whether_or_not_earlier_ones_are_done() {
        // Each takes 20 ms; due every 2 ms: about ten in flight at once.
        let nap = || std::thread::sleep(Duration::from_millis(20));
        let (_, outcome) = on_threads(plan(200), open(500.0, Arrivals::Uniform), &nap, &|_| false);
        let load = outcome.open_record().expect("an open loop's record");
        assert_eq!(load.requests, 100, "{load:?}");
        assert!(load.most_in_flight >= 8, "{load:?}");
        assert!(load.achieved_rate > 400.0, "{load:?}");
        assert_eq!((load.dropped, load.timed_out), (0, 0));
        assert!(outcome.time().median_ns >= 20e6);
    }

    #[test]
    fn a_stalled_service_queues_the_requests_due_meanwhile() {
        // One server: a lock around 5 ms of work, due every 10 ms, and
        // one request that stalls it for 100 ms. The requests due during
        // the stall wait for it, and their latencies say so.
        let server = Mutex::new(0u32);
        let serve = || {
            let mut n = server
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *n += 1;
            let work = if *n == 5 { 100 } else { 5 };
            std::thread::sleep(Duration::from_millis(work));
        };
        let (_, outcome) = on_threads(plan(300), open(100.0, Arrivals::Uniform), &serve, &|_| {
            false
        });
        let p = outcome.time().percentiles.expect("percentiles");
        assert!(p.max_ns >= 90e6, "{p:?}");
        // The four or more due during the stall waited for it.
        assert!(p.p90_ns >= 40e6, "{p:?}");
    }

    #[test]
    fn a_request_past_its_timeout_is_counted() {
        let nap = || std::thread::sleep(Duration::from_millis(15));
        let mut loop_ = open(100.0, Arrivals::Uniform);
        loop_.timeout = Some(Duration::from_millis(5));
        let (_, outcome) = on_threads(plan(100), loop_, &nap, &|_| false);
        let load = outcome.open_record().unwrap();
        assert_eq!(load.timed_out, load.requests, "{load:?}");
        assert_eq!(load.timeout_ns, Some(5e6));
    }

    #[test]
    fn once_makes_five_requests_and_a_failure_stops_the_loop() {
        let mut once = plan(100);
        once.once = true;
        let made = AtomicU64::new(0);
        let count = || made.fetch_add(1, Ordering::Relaxed);
        let (_, outcome) = on_threads(once, open(1000.0, Arrivals::Poisson), &count, &|_| false);
        assert_eq!(outcome.open_record().unwrap().requests, ONCE_REQUESTS);
        let (out, _) = on_threads(plan(500), open(1000.0, Arrivals::Poisson), &count, &|n| {
            *n == 12
        });
        assert_eq!(out, 12);
        assert!(
            made.load(Ordering::Relaxed) < 100,
            "the loop stopped soon after"
        );
    }
}
