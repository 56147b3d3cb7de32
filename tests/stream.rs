//! `stream`: a case whose call returns its answer token by token, each
//! token timed as the harness takes it. The service sleeps: a prefill
//! before the first token, then a gap before each next one; one request
//! in twenty stalls between two of its tokens.

#[path = "support/alone.rs"]
mod alone;
#[path = "support/streamed.rs"]
mod streamed;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use streamed::streamed;

const PREFILL: Duration = Duration::from_millis(8);
const GAP: Duration = Duration::from_millis(2);
const STALL: Duration = Duration::from_millis(50);
const TOKENS: usize = 6;

/// One answer: the prefill now, then the tokens as they are taken, the
/// third one `stall` late.
fn answer(stall: Duration) -> impl Iterator<Item = usize> {
    std::thread::sleep(PREFILL);
    (0..TOKENS).inspect(move |&token| {
        if token > 0 {
            std::thread::sleep(GAP);
        }
        if token == 3 {
            std::thread::sleep(stall);
        }
    })
}

#[nnbench::benchmark(stream, timing = once)]
fn one_answer() -> impl Iterator<Item = usize> {
    answer(Duration::ZERO)
}

static MADE: AtomicU64 = AtomicU64::new(0);

/// Answers at 40 a second, every twentieth one stalled.
#[nnbench::benchmark(stream, rate = [40], warm_up_time = "100ms", measurement_time = "1500ms")]
fn stalled_answers() -> impl Iterator<Item = usize> {
    let stalls = MADE.fetch_add(1, Ordering::Relaxed) % 20 == 19;
    answer(if stalls { STALL } else { Duration::ZERO })
}

/// The same answers, none stalled.
#[nnbench::benchmark(stream, rate = [40], warm_up_time = "100ms", measurement_time = "1500ms")]
fn steady_answers() -> impl Iterator<Item = usize> {
    answer(Duration::ZERO)
}

/// Two answers in flight at a time.
#[nnbench::benchmark(stream, concurrency = [2], warm_up_time = "50ms", measurement_time = "300ms")]
fn answers_two_at_a_time() -> impl Iterator<Item = usize> {
    answer(Duration::ZERO)
}

/// A fallible stream: its items, or why there are none.
#[nnbench::benchmark(stream, timing = once)]
fn fallible_answer() -> Result<Vec<u8>, std::io::Error> {
    Ok(vec![1, 2, 3])
}

#[test]
fn each_token_of_a_request_is_timed() {
    let (case, stream) = streamed("one_answer");
    assert_eq!(stream.requests, 1);
    assert_eq!(case.value, TOKENS, "the value is the tokens streamed");
    assert_eq!(stream.output_tokens.p50, TOKENS as f64);
    let ns = |d: Duration| d.as_nanos() as f64;
    // A sleep lasts at least what it asks.
    assert!(stream.ttft.p50_ns >= ns(PREFILL), "{stream:?}");
    assert!(stream.tpot.p50_ns >= ns(GAP), "{stream:?}");
    assert!(stream.itl.p50_ns >= ns(GAP), "{stream:?}");
    assert!(
        stream.e2e.p50_ns >= ns(PREFILL + GAP * (TOKENS as u32 - 1)),
        "{stream:?}"
    );
    assert!(stream.e2e.p50_ns >= stream.ttft.p50_ns);
    let (case, stream) = streamed("fallible_answer");
    assert_eq!((case.value.clone(), stream.requests), (3.into(), 1));
    // Under a closed loop, each request from when it was made: about as
    // many as two at a time fit in the period.
    let (case, stream) = streamed("answers_two_at_a_time");
    let made = case.concurrency.as_ref().expect("a closed loop").requests;
    assert!(
        stream.requests >= 2 && stream.requests <= made + 2,
        "{stream:?}"
    );
    assert!(stream.ttft.p50_ns >= ns(PREFILL), "{stream:?}");
}

#[test]
fn a_stall_shows_in_the_time_per_token_and_the_longest_gap_not_the_first_token() {
    let (_, steady) = streamed("steady_answers");
    MADE.store(0, Ordering::Relaxed);
    let (case, stalled) = streamed("stalled_answers");
    let load = case.load.as_deref().expect("an open loop");
    // 1.5 s at 40 a second.
    assert!(
        (40..=80).contains(&stalled.requests),
        "{} requests measured of {}",
        stalled.requests,
        load.requests
    );
    assert!(
        stalled.itl.max_ns >= STALL.as_nanos() as f64,
        "the longest gap holds the stall: {stalled:?}"
    );
    // The stalled requests' time per token is several times the rest's.
    assert!(
        stalled.tpot.p99_ns > 3.0 * stalled.tpot.p50_ns,
        "{stalled:?}"
    );
    assert!(steady.itl.max_ns < stalled.itl.max_ns, "{steady:?}");
    // The first token comes before the stall: the median is the steady
    // run's, measured beside it.
    let ratio = stalled.ttft.p50_ns / steady.ttft.p50_ns;
    assert!(
        (0.5..2.0).contains(&ratio),
        "TTFT p50 {ratio} times the steady run's"
    );
}
