//! A sampled case whose struct metric holds measurements the call made of
//! itself (`images_per_second`, `latency_ms`): the record keeps the median
//! of the sampled calls' figures, not the first call's, which is the
//! coldest one (a device's first kernels, cold caches); a result field
//! stays the first call's.

use std::sync::atomic::{AtomicU64, Ordering};

use nnbench::Runner;
use serde::Serialize;

static CALLS: AtomicU64 = AtomicU64::new(0);

#[derive(Serialize)]
struct Eval {
    accuracy: f64,
    images_per_second: f64,
    /// Which call this was: a result, by its name, so the first call's.
    call: u64,
}

#[nnbench::benchmark(
    timing = sampled,
    warm_up_time = "5ms",
    measurement_time = "50ms",
    metric = "accuracy:higher, images_per_second:higher"
)]
fn classify() -> Eval {
    let call = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
    Eval {
        accuracy: 0.9,
        // The first call is the cold one: a tenth of the warm rate.
        images_per_second: if call == 1 { 100.0 } else { 1000.0 },
        call,
    }
}

#[test]
fn a_measured_field_is_the_warm_calls_and_a_result_the_first_calls() {
    let record = Runner::new()
        .filter("classify")
        .quiet(true)
        .memory(false)
        .run()
        .expect("the run");
    let case = &record.cases[0];
    assert!(case.error.is_none(), "{:?}", case.error);
    assert!(case.time.samples > 1, "sampled: {:?}", case.time);
    assert_eq!(case.value["images_per_second"], 1000.0, "{}", case.value);
    assert_eq!(case.value["accuracy"], 0.9);
    assert_eq!(case.value["call"], 1);
}
