//! The tests of `tests/async_cases.rs`, built with the `tokio` feature.

#[path = "../support/alone.rs"]
mod alone;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use alone::run;
use ndarray::Array1;
use nnbench::Memo;
use nnbench::record::{RunRecord, Stage, TimingMode};

/// Waits `ms` milliseconds: a call takes at least that long.
#[nnbench::product(ms = [2u64, 5], timing = once)]
async fn sleeper(ms: u64) -> u64 {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    ms
}

#[test]
fn an_async_call_is_awaited_and_its_wait_timed() {
    let record = run("sleeper/");
    assert_eq!(record.cases.len(), 2);
    for case in &record.cases {
        assert!(case.error.is_none(), "{:?}", case.error);
        let ms = case.params["ms"].as_u64().unwrap();
        assert_eq!(case.value, ms);
        assert_eq!(case.time.mode, TimingMode::Once);
        // A sleep lasts at least what it was asked for; the clock runs
        // from before the first poll to after the last.
        assert!(
            case.time.median_ns >= (ms * 1_000_000) as f64,
            "{}: {} ns",
            case.id,
            case.time.median_ns
        );
    }
}

static CORPUS_COMPUTES: AtomicUsize = AtomicUsize::new(0);

/// A corpus of `n` numbers, computed once for the cases that share it.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Corpus(usize);

impl Memo for Corpus {
    type Value = Array1<f64>;
    fn compute(&self) -> nnbench::Result<Array1<f64>> {
        CORPUS_COMPUTES.fetch_add(1, Ordering::SeqCst);
        Ok(Array1::range(0.0, self.0 as f64, 1.0))
    }
}

/// Scores a corpus in chunks, yielding between them as a server would.
#[nnbench::product(corpus = [Corpus(1000)], chunk = [10usize, 100], timing = sampled,
                   sample_size = 10, warm_up_time = "5ms", measurement_time = "30ms")]
async fn score(corpus: &Array1<f64>, chunk: usize) -> f64 {
    let mut total = 0.0;
    for part in corpus.exact_chunks(chunk) {
        total += part.sum();
        tokio::task::yield_now().await;
    }
    total
}

#[test]
fn sampled_async_cases_share_their_memos_and_keep_the_first_calls_value() {
    let record = run("score/");
    assert_eq!(record.cases.len(), 2);
    assert_eq!(CORPUS_COMPUTES.load(Ordering::SeqCst), 1, "one corpus");
    for case in &record.cases {
        assert!(case.error.is_none(), "{:?}", case.error);
        assert_eq!(case.value, 499_500.0);
        let t = &case.time;
        assert_eq!(t.mode, TimingMode::Sampled);
        assert!(t.samples >= 10, "{t:?}");
        assert_eq!(t.iters % t.samples, 0, "{t:?}");
        assert!(t.min_ns > 0.0 && t.min_ns <= t.median_ns, "{t:?}");
    }
    assert!(record.cases[0].memo.hits + record.cases[1].memo.hits >= 1);
}

/// Spawns `tasks` tasks and reports on how many threads they ran.
#[nnbench::product(tasks = [8usize], runtime = multi_thread, timing = once)]
async fn fan_out(tasks: usize) -> usize {
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            tokio::spawn(async {
                std::thread::sleep(Duration::from_millis(20));
                std::thread::current().id()
            })
        })
        .collect();
    let mut threads = BTreeSet::new();
    for handle in handles {
        threads.insert(format!("{:?}", handle.await.expect("a task")));
    }
    threads.len()
}

#[test]
fn a_multi_thread_runtime_runs_spawned_tasks_in_parallel() {
    let record = run("fan_out/");
    let case = &record.cases[0];
    assert!(case.error.is_none(), "{:?}", case.error);
    let threads = case.value.as_u64().unwrap();
    // Each task holds its thread for 20 ms: on more than one core, the
    // runtime's workers take them side by side.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores > 1 {
        assert!(threads > 1, "{threads} thread(s) on {cores} cores");
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the model server refused batch {0}")]
struct Refused(usize);

#[nnbench::product(batch = [1usize, 2], timing = once)]
async fn serve(batch: usize) -> Result<usize, Refused> {
    tokio::task::yield_now().await;
    if batch == 2 {
        return Err(Refused(batch));
    }
    Ok(batch)
}

#[nnbench::benchmark(timing = once)]
async fn panics_when_polled() -> u8 {
    tokio::task::yield_now().await;
    panic!("the request handler panicked")
}

#[test]
fn an_async_err_or_panic_fails_its_case_and_the_run_goes_on() {
    let record = run("serve/");
    let ok = record
        .cases
        .iter()
        .find(|c| c.id.ends_with("batch=1"))
        .unwrap();
    assert!(ok.error.is_none(), "{:?}", ok.error);
    let refused = record
        .cases
        .iter()
        .find(|c| c.id.ends_with("batch=2"))
        .unwrap();
    let error = refused.error.as_ref().expect("failed");
    assert_eq!(error.stage, Stage::Call);
    assert!(error.message.contains("refused batch 2"), "{error:?}");

    let record = run("panics_when_polled");
    let error = record.cases[0].error.as_ref().expect("failed");
    assert!(
        error.message.contains("the request handler panicked"),
        "{error:?}"
    );
}

/// Awaits nothing: whether it can run at all is what is tested.
#[nnbench::benchmark(timing = once)]
async fn ready() -> u8 {
    7
}

#[test]
fn a_run_from_inside_a_tokio_runtime_fails_its_async_cases_by_name() {
    let outer = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    // The runner blocks on its own runtime, which it cannot do from a task
    // of another: the case fails, saying what to do, and the run goes on.
    let record = outer.block_on(async { run("ready") });
    let error = record.cases[0].error.as_ref().expect("failed");
    assert_eq!(error.stage, Stage::Call);
    assert!(
        error.message.contains("from inside another tokio runtime")
            && error.message.contains("spawn_blocking"),
        "{error:?}"
    );
    // Outside it, the same case runs.
    let record = run("ready");
    assert!(
        record.cases[0].error.is_none(),
        "{:?}",
        record.cases[0].error
    );
    assert_eq!(record.cases[0].value, 7);
}

/// A request that awaits a reply for 2 ms.
#[nnbench::benchmark(concurrency = [1, 16], warm_up_time = "20ms", measurement_time = "200ms")]
async fn awaiting() -> u8 {
    tokio::time::sleep(Duration::from_millis(2)).await;
    1
}

/// A request that only computes, on a runtime of one thread.
#[nnbench::benchmark(concurrency = [1, 16], warm_up_time = "20ms", measurement_time = "200ms")]
async fn crunching() -> u64 {
    tokio::task::yield_now().await;
    (0..20_000u64).fold(0, |acc, n| acc.wrapping_add(std::hint::black_box(n * n)))
}

fn requests_per_second(record: &RunRecord, level: u64) -> f64 {
    let case = record
        .cases
        .iter()
        .find(|c| c.params["concurrency"] == level)
        .expect("a case at this level");
    assert!(case.error.is_none(), "{:?}", case.error);
    let p = case
        .time
        .percentiles
        .as_deref()
        .expect("each request's latency");
    assert!(p.p50_ns <= p.p90_ns && p.p90_ns <= p.p99_ns && p.p99_ns <= p.max_ns);
    case.concurrency
        .as_deref()
        .expect("the load")
        .requests_per_second
}

#[test]
fn requests_in_flight_overlap_their_waits_but_not_their_work() {
    let waiting = run("awaiting/");
    let (one, many) = (
        requests_per_second(&waiting, 1),
        requests_per_second(&waiting, 16),
    );
    // Sixteen 2 ms waits overlap: close to sixteen times the rate.
    assert!(many > 4.0 * one, "{one} req/s at 1, {many} at 16");

    let crunching = run("crunching/");
    let (one, many) = (
        requests_per_second(&crunching, 1),
        requests_per_second(&crunching, 16),
    );
    // One task polls all sixteen on one thread: the work cannot overlap.
    // The two rates are measured apart, and a busy machine can slow either
    // by more than half, so the bound sits far from both one and sixteen
    // times the rate.
    assert!(many < 4.0 * one, "{one} req/s at 1, {many} at 16");
}

#[inline(never)]
fn polled_hot_loop() -> u64 {
    (0..std::hint::black_box(2_000_000u64)).fold(0, |a, x| a ^ x.wrapping_mul(x))
}

#[inline(never)]
fn blocking_hot_loop() -> u64 {
    (0..std::hint::black_box(2_000_000u64)).fold(1, |a, x| a.wrapping_add(x ^ 5))
}

/// Work done as it is polled, and work handed to the runtime's blocking
/// threads.
#[nnbench::benchmark(runtime = multi_thread, timing = once)]
async fn profiled_server() -> u64 {
    let blocking = tokio::task::spawn_blocking(blocking_hot_loop);
    polled_hot_loop() ^ blocking.await.unwrap_or(0)
}

#[test]
fn a_profile_holds_the_polled_work_and_the_runtimes() {
    let _alone = alone::alone();
    let dir = tempfile::tempdir().unwrap();
    let record = nnbench::Runner::new()
        .filter("profiled_server")
        .quiet(true)
        .latest_dir(dir.path())
        .sampling(nnbench::Sampling::new().measurement_time(Duration::from_millis(400)))
        .profile(true)
        .run()
        .expect("the run");
    let case = &record.cases[0];
    let path = case
        .profile
        .as_ref()
        .unwrap_or_else(|| panic!("{:?}", case.warnings));
    let svg = std::fs::read_to_string(path).unwrap();
    assert!(
        svg.contains("polled_hot_loop"),
        "the work polled on the calling thread"
    );
    assert!(
        svg.contains("blocking_hot_loop"),
        "the work on the runtime's threads"
    );
    assert!(
        svg.contains(">nnbench-async ("),
        "the runtime's threads under their name"
    );
}

/// Each request waits 20 ms: at 200 a second, about four are in flight.
#[nnbench::benchmark(rate = [200], warm_up_time = "20ms", measurement_time = "300ms")]
async fn paced() -> u8 {
    tokio::time::sleep(Duration::from_millis(20)).await;
    1
}

/// Each request waits 50 ms, past its 10 ms timeout.
#[nnbench::benchmark(rate = [100], arrivals = uniform, request_timeout = "10ms", warm_up_time = "20ms", measurement_time = "200ms")]
async fn past_its_timeout() -> u8 {
    tokio::time::sleep(Duration::from_millis(50)).await;
    1
}

#[test]
fn async_requests_at_a_rate_overlap_and_a_late_one_is_cut_at_its_timeout() {
    let record = run("paced/");
    let case = &record.cases[0];
    assert!(case.error.is_none(), "{:?}", case.error);
    let load = case.load.as_deref().expect("an open loop's record");
    assert!(load.requests >= 30, "about 60 due: {load:?}");
    assert!(load.most_in_flight >= 3, "requests overlap: {load:?}");
    assert!(case.time.mean_ns >= 20e6, "{:?}", case.time);

    let record = run("past_its_timeout/");
    let case = &record.cases[0];
    assert!(case.error.is_none(), "{:?}", case.error);
    let load = case.load.as_deref().expect("an open loop's record");
    assert_eq!(load.arrivals, "uniform");
    assert_eq!(load.requests, 20, "{load:?}");
    assert_eq!(load.timed_out, load.requests, "{load:?}");
    // Counted at their timeout, not at the 50 ms they would have taken.
    assert!(case.time.max_ns < 40e6, "{:?}", case.time);
}

/// Prompt lengths, in milliseconds of prefill.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Prompts;

impl Memo for Prompts {
    type Value = Vec<usize>;
    fn compute(&self) -> nnbench::Result<Vec<usize>> {
        Ok(vec![2, 4, 6])
    }
}

/// An answer streamed on the runtime's timer: its prompt's prefill, then
/// four tokens a millisecond apart.
#[nnbench::product(prompts = [Prompts], stream, rate = [40], runtime = multi_thread,
                   warm_up_time = "50ms", measurement_time = "500ms")]
#[allow(clippy::ptr_arg)] // A memo is passed as a reference to its value.
async fn streamed(prompts: &Vec<usize>) -> impl futures_util::Stream<Item = usize> {
    let prefill = nnbench::request_input(prompts).copied().unwrap_or(1);
    tokio::time::sleep(Duration::from_millis(prefill as u64)).await;
    futures_util::stream::unfold(0, |token| async move {
        if token == 4 {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
        Some((token, token + 1))
    })
}

/// A fallible async stream: its tokens, or why there are none.
#[nnbench::benchmark(stream, timing = once)]
async fn streamed_or_not()
-> Result<futures_util::stream::Iter<std::vec::IntoIter<u8>>, std::io::Error> {
    tokio::task::yield_now().await;
    Ok(futures_util::stream::iter(vec![1, 2, 3]))
}

#[test]
fn an_async_stream_times_each_token_and_keeps_each_request_s_prompt() {
    let record = run("streamed/");
    let case = &record.cases[0];
    assert!(case.error.is_none(), "{:?}", case.error);
    let stream = case.stream.as_deref().expect("a stream record");
    assert!(stream.requests >= 10, "about 20 due: {stream:?}");
    assert_eq!(stream.output_tokens.p50, 4.0);
    // The prompts taken on the runtime's threads are the request's.
    let inputs = stream.input_tokens.expect("the prompts' lengths");
    assert_eq!((inputs.p50, inputs.p99), (4.0, 6.0), "{inputs:?}");
    // A sleep lasts at least what it asks.
    assert!(stream.ttft.p50_ns >= 4e6, "{stream:?}");
    assert!(stream.tpot.p50_ns >= 1e6, "{stream:?}");
    assert!(stream.e2e.p50_ns >= stream.ttft.p50_ns + 3e6, "{stream:?}");

    let record = run("streamed_or_not");
    let case = &record.cases[0];
    assert!(case.error.is_none(), "{:?}", case.error);
    assert_eq!(case.value, 3, "the tokens streamed");
    assert_eq!(case.stream.as_deref().map(|s| s.requests), Some(1));
}
