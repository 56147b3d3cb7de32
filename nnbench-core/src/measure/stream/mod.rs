//! The requests of a case that streams (`stream`): each call's items
//! timed one by one as the harness takes them from the iterator it
//! returned, and kept for the case's [`StreamRecord`].
//!
//! A request starts when it was due, where an open loop says so
//! ([`due`]), else when its call was made; the items are timestamped into
//! a buffer of the calling thread, reused from request to request, so
//! that a token costs a clock read and a store. A finished request is
//! summed up and kept under one lock, once.

#[cfg(feature = "tokio")]
mod asynchronous;
mod goodput;
mod inputs;

use std::cell::{Cell, RefCell};
use std::sync::Mutex;
use std::time::Instant;

use nnbench_vocab::Objective;

pub use inputs::{InputTokens, request_input};

use crate::record::{LatencyPercentiles, StreamRecord, TokenCounts};

thread_local! {
    /// When the request this thread makes next was due, set by the open
    /// loop just before the call.
    static DUE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// The current request's item times.
    static ITEMS: RefCell<Vec<Instant>> = const { RefCell::new(Vec::new()) };
}

/// One finished request.
struct Request {
    start: Instant,
    end: Instant,
    /// Time to its first item, ns; none without items.
    first_ns: Option<f64>,
    tokens: usize,
    /// Its last item less its first, ns.
    span_ns: f64,
    /// Its longest gap between two items, ns; none with fewer than two.
    longest_gap_ns: Option<f64>,
    /// The tokens of the input it took with [`request_input`].
    input: Option<u64>,
}

impl Request {
    /// Its time per output token, ns: none with fewer than two.
    fn tpot_ns(&self) -> Option<f64> {
        (self.tokens >= 2).then(|| self.span_ns / (self.tokens - 1) as f64)
    }

    /// From its start to its last item, ns.
    fn e2e_ns(&self) -> f64 {
        self.end.saturating_duration_since(self.start).as_nanos() as f64
    }
}

/// The requests of the case running, and the gaps between their items.
struct Collected {
    requests: Vec<Request>,
    gaps_ns: Vec<(Instant, f64)>,
    /// Requests that start before this are the warm-up's.
    from: Option<Instant>,
}

static COLLECTED: Mutex<Collected> = Mutex::new(Collected {
    requests: Vec::new(),
    gaps_ns: Vec::new(),
    from: None,
});

fn collected() -> std::sync::MutexGuard<'static, Collected> {
    COLLECTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A request of a streaming case, started: [`Start::drain`] takes its
/// items. What the `stream` option generates; not for use by hand.
#[doc(hidden)]
pub struct Start {
    at: Instant,
    /// The input tokens it took, where it took them on another thread
    /// than the one draining it (an async request).
    input: Option<u64>,
}

impl Start {
    /// A request made now, or when the open loop said it was due.
    #[must_use]
    pub fn now() -> Self {
        let now = Instant::now();
        // An input taken by an earlier call that streamed nothing is not
        // this request's.
        inputs::take();
        Start {
            at: DUE.take().map_or(now, |due| due.min(now)),
            input: None,
        }
    }

    /// Takes every item of `items`, timing each, and keeps the request;
    /// the number of items is the call's value.
    pub fn drain<I: IntoIterator>(self, items: I) -> usize {
        let input = self.input.or_else(inputs::take);
        ITEMS.with_borrow_mut(|times| {
            times.clear();
            for item in items {
                times.push(Instant::now());
                drop(std::hint::black_box(item));
            }
            let end = times.last().copied().unwrap_or_else(Instant::now);
            keep(self.at, end, times, input);
            times.len()
        })
    }
}

/// Keeps a request that started at `start`, ended at `end`, and gave
/// items at `times`.
fn keep(start: Instant, end: Instant, times: &[Instant], input: Option<u64>) {
    let ns = |from: Instant, to: Instant| to.saturating_duration_since(from).as_nanos() as f64;
    let mut collected = collected();
    let before = collected.gaps_ns.len();
    collected
        .gaps_ns
        .extend(times.windows(2).map(|w| (start, ns(w[0], w[1]))));
    let longest_gap_ns = collected.gaps_ns[before..]
        .iter()
        .map(|&(_, gap)| gap)
        .max_by(f64::total_cmp);
    collected.requests.push(Request {
        start,
        end,
        first_ns: times.first().map(|&first| ns(start, first)),
        tokens: times.len(),
        span_ns: match (times.first(), times.last()) {
            (Some(&first), Some(&last)) => ns(first, last),
            _ => 0.0,
        },
        longest_gap_ns,
        input,
    });
}

/// The request the calling thread makes next was due at `at`.
pub(crate) fn due(at: Instant) {
    DUE.set(Some(at));
}

/// Forgets every request kept: a case starts, its inputs taken in the
/// order `seed` draws.
pub(crate) fn begin_case(seed: u64) {
    inputs::begin_case(seed);
    let mut collected = collected();
    collected.requests.clear();
    collected.gaps_ns.clear();
    collected.from = None;
    DUE.set(None);
}

/// Requests that start from `at` on are measured; those before, the
/// warm-up's, are left out.
pub(crate) fn measuring_from(at: Instant) {
    collected().from = Some(at);
}

/// The requests streamed since the case (or the search's step) began,
/// summed up and judged against `slo`, then forgotten; `None` where it
/// streamed none.
pub(crate) fn finish_case(slo: &[Objective]) -> Option<StreamRecord> {
    let mut collected = collected();
    let from = collected.from;
    let measured = |start: Instant| from.is_none_or(|from| start >= from);
    let requests: Vec<&Request> = collected
        .requests
        .iter()
        .filter(|r| measured(r.start))
        .collect();
    if requests.is_empty() {
        collected.requests.clear();
        collected.gaps_ns.clear();
        return None;
    }
    let mut ttft: Vec<f64> = requests.iter().filter_map(|r| r.first_ns).collect();
    let mut tpot: Vec<f64> = requests.iter().filter_map(|r| r.tpot_ns()).collect();
    let mut e2e: Vec<f64> = requests.iter().map(|r| r.e2e_ns()).collect();
    let mut tokens: Vec<f64> = requests.iter().map(|r| r.tokens as f64).collect();
    let mut inputs: Vec<f64> = requests
        .iter()
        .filter_map(|r| r.input.map(|n| n as f64))
        .collect();
    let mut gaps: Vec<f64> = collected
        .gaps_ns
        .iter()
        .filter(|(start, _)| measured(*start))
        .map(|(_, gap)| *gap)
        .collect();
    let total: f64 = tokens.iter().sum();
    let first = requests.iter().map(|r| r.start).min();
    let last = requests.iter().map(|r| r.end).max();
    let span = first
        .zip(last)
        .map_or(0.0, |(a, b)| b.saturating_duration_since(a).as_secs_f64());
    let goodput = (!slo.is_empty()).then(|| goodput::judge(slo, &requests, &gaps, span));
    let record = StreamRecord {
        requests: requests.len() as u64,
        ttft: LatencyPercentiles::of(&mut ttft),
        tpot: LatencyPercentiles::of(&mut tpot),
        itl: LatencyPercentiles::of(&mut gaps),
        e2e: LatencyPercentiles::of(&mut e2e),
        tokens_per_s: if span > 0.0 { total / span } else { 0.0 },
        output_tokens: TokenCounts::of(&mut tokens),
        input_tokens: (!inputs.is_empty()).then(|| TokenCounts::of(&mut inputs)),
        goodput,
    };
    collected.requests.clear();
    collected.gaps_ns.clear();
    Some(record)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::{Mutex, MutexGuard, PoisonError};

    /// The stream's state is the process's: its tests run one at a time.
    pub(crate) fn alone() -> MutexGuard<'static, ()> {
        static ALONE: Mutex<()> = Mutex::new(());
        ALONE.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
