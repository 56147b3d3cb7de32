//! `async fn` under the attributes, with the `tokio` feature: awaited on a
//! runtime built once per run, its memos resolved before the call as a
//! sync case's are, timed once, sampled or by `auto`, failing as a sync
//! case fails (`cargo test -p nnbench --features tokio --test
//! async_cases`). Without the feature, the one test here says how to run
//! them.

#[cfg(feature = "tokio")]
#[path = "async_cases/cases.rs"]
mod cases;

#[cfg(not(feature = "tokio"))]
#[test]
#[ignore = "built without the tokio feature: cargo test -p nnbench --features tokio --test async_cases"]
fn the_async_tests_need_the_tokio_feature() {
    panic!(
        "built without the tokio feature: cargo test -p nnbench --features tokio --test async_cases"
    );
}
