//! Per-call inputs off the clock: a routine that reads two elements of an
//! 8 MiB input made for each call, by `Bencher::with_inputs` or as a
//! by-value grid parameter, is timed without the input's making or
//! cloning, side by side with one that makes the same input on the clock.
//! Nothing asserts on a time but a ratio between cases of one run: timed
//! with its input's making or cloning, a routine would take about as long
//! as the case that makes it (an 8 MiB write, tens of microseconds). The
//! routine alone reads two cache lines of a fresh input, which a busy
//! machine's neighbours may have evicted: a microsecond or more, so the
//! ratio is held to 10 over sampled medians and 5 over single calls, not
//! to the hundreds a quiet machine shows. A routine that consumes its
//! input drops it on the clock, as one such drop costs alone: the batches
//! of large inputs hold one at a time, which is counted.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use nnbench::{Bencher, RunRecord, Runner, Sampling, Timing, black_box};

const BYTES: usize = 8 << 20;

fn input() -> Vec<u8> {
    vec![1u8; BYTES]
}

fn two(v: &[u8]) -> u8 {
    v[0].wrapping_add(v[v.len() - 1])
}

#[nnbench::benchmark]
fn inputs_values(b: Bencher) -> usize {
    // The input is handed back, so that its drop (an 8 MiB `munmap`) is
    // off the clock too.
    b.with_inputs(input).bench_values(|v| (two(&v), v));
    BYTES
}

#[nnbench::benchmark]
fn inputs_consumed(b: Bencher) {
    // The input is dropped with the call, on the clock.
    b.with_inputs(input).bench_values(|v| two(&v));
}

#[nnbench::benchmark]
fn inputs_refs(b: Bencher) {
    b.with_inputs(input).bench_refs(|v| {
        v[3] = 9;
        two(v)
    });
}

/// 8 MiB a grid parameter holds, named in ids by its size alone.
#[derive(Clone)]
struct Blob(Vec<u8>);

impl std::fmt::Debug for Blob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Blob({} bytes)", self.0.len())
    }
}

impl serde::Serialize for Blob {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{} bytes", self.0.len()))
    }
}

#[nnbench::parametrize([(data = Blob(input()))])]
fn inputs_by_value(data: Blob) -> (u8, Blob) {
    // Handed back, so that its drop is off the clock too.
    (two(&data.0), data)
}

#[nnbench::benchmark]
fn inputs_on_the_clock(b: Bencher) {
    b.bench(|| two(&black_box(input())));
}

#[nnbench::benchmark]
fn inputs_never_benched(b: Bencher) -> u8 {
    drop(b);
    7
}

#[nnbench::benchmark]
fn inputs_failed_before_benching(_b: Bencher) -> nnbench::Result<u8> {
    Err(nnbench::Error::msg("the data is missing"))
}

/// Held by each run: two runs at once would write their inputs side by
/// side.
static ONE_RUN: Mutex<()> = Mutex::new(());

/// The `inputs_` cases, timed by `timing`, one run at a time.
fn run(timing: Timing) -> RunRecord {
    let _one = ONE_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    Runner::new()
        .filter("inputs_")
        .timing(timing)
        .sampling(
            Sampling::new()
                .sample_size(10)
                .warm_up_time(Duration::from_millis(10))
                .measurement_time(Duration::from_millis(200)),
        )
        .quiet(true)
        .latest_dir(dir.path())
        .run()
        .unwrap()
}

fn median(record: &RunRecord, id: &str) -> f64 {
    let ids: Vec<&str> = record.cases.iter().map(|c| c.id.as_str()).collect();
    let case = record
        .cases
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no case {id} in {ids:?}"));
    assert!(case.error.is_none(), "{id}: {:?}", case.error);
    case.time.median_ns
}

/// Each case whose input is made off the clock takes less than `1 /
/// times` of the one that makes it on the clock.
fn off_the_clock(record: &RunRecord, times: f64) {
    let copy = median(record, "inputs_on_the_clock");
    for id in [
        "inputs_values",
        "inputs_consumed",
        "inputs_refs",
        "inputs_by_value/data=8388608 bytes",
    ] {
        let off = median(record, id);
        assert!(
            off * times < copy,
            "{id} took {off} ns a call, the input made on the clock {copy} ns"
        );
    }
}

#[test]
fn inputs_are_made_off_the_clock_when_sampled() {
    let record = run(Timing::Criterion);
    off_the_clock(&record, 10.0);
    let values = record
        .cases
        .iter()
        .find(|c| c.id == "inputs_values")
        .unwrap();
    assert_eq!(values.value, serde_json::json!(BYTES));
}

#[test]
fn inputs_are_made_off_the_clock_when_timed_once() {
    // One cold call each: a wider margin than the sampled medians'.
    off_the_clock(&run(Timing::Once), 5.0);
}

#[test]
fn a_bencher_never_used_fails_its_case_and_a_failure_of_its_own_is_kept() {
    let record = run(Timing::Once);
    let error = |id: &str| {
        let case = record.cases.iter().find(|c| c.id == id).unwrap();
        case.error
            .as_ref()
            .map(|e| e.message.clone())
            .unwrap_or_default()
    };
    assert!(
        error("inputs_never_benched").contains("never timed with it"),
        "{}",
        error("inputs_never_benched")
    );
    assert!(error("inputs_failed_before_benching").contains("the data is missing"));
}

/// Inputs alive now, and the most alive at once since the last reset.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static MOST_LIVE: AtomicUsize = AtomicUsize::new(0);

/// An input of `bytes` bytes whose making and drop are counted.
struct Counted(Vec<u8>);

impl Counted {
    fn new(bytes: usize) -> Counted {
        let live = LIVE.fetch_add(1, Ordering::SeqCst) + 1;
        MOST_LIVE.fetch_max(live, Ordering::SeqCst);
        Counted(vec![1u8; bytes])
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

#[nnbench::parametrize([(bytes = 8usize << 20), (bytes = 1usize << 10)])]
fn held_at_once(b: Bencher, bytes: usize) {
    b.with_inputs(|| Counted::new(bytes))
        .bench_values(|v| two(&v.0));
}

/// The most inputs of `bytes` alive at once while case `held_at_once` ran.
fn most_held(bytes: usize) -> usize {
    let _one = ONE_RUN.lock().unwrap_or_else(|e| e.into_inner());
    MOST_LIVE.store(0, Ordering::SeqCst);
    let record = Runner::new()
        .filter(format!("held_at_once/bytes={bytes}"))
        .timing(Timing::Criterion)
        .sampling(
            Sampling::new()
                .sample_size(10)
                .warm_up_time(Duration::from_millis(10))
                .measurement_time(Duration::from_millis(100)),
        )
        .quiet(true)
        .memory(false)
        .run()
        .unwrap();
    assert_eq!(record.cases.len(), 1);
    assert!(
        record.cases[0].error.is_none(),
        "{:?}",
        record.cases[0].error
    );
    assert_eq!(LIVE.load(Ordering::SeqCst), 0, "every input dropped");
    MOST_LIVE.load(Ordering::SeqCst)
}

#[test]
fn a_batch_holds_one_large_input_and_many_small_ones_within_its_bytes() {
    assert_eq!(most_held(8 << 20), 1, "8 MiB inputs are made one at a time");
    // 1 KiB inputs (a little more in the heap) are batched, up to 128 KiB.
    let small = most_held(1 << 10);
    assert!(
        (2..=128).contains(&small),
        "{small} 1 KiB inputs alive at once"
    );
}
