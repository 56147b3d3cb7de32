//! What awaiting costs: the same work sampled as a sync case and as an
//! async case on the current-thread runtime, side by side in one run,
//! alternating; the ratio of their medians per call, for a call of about
//! 20 µs and for a trivial one.
//!
//! `cargo bench --features tokio --bench async_cases`

#[path = "support/harness.rs"]
mod harness;
use harness::Goal;
use harness::stats;

use std::hint::black_box;
use std::time::Duration;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::{Runner, Sampling, Timing};
use nnbench_vocab::format_ns;
use stats::median;

/// `n` rounds of a chain of arithmetic the optimizer cannot remove: each
/// waits for the one before.
#[inline(never)]
fn work(n: u64) -> u64 {
    let mut x = n;
    for i in 0..n {
        x = black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(i));
    }
    x
}

#[nnbench::product(n = [64u64, 20_000], timing = sampled)]
fn sync_work(n: u64) -> u64 {
    work(n)
}

#[nnbench::product(n = [64u64, 20_000], timing = sampled)]
async fn async_work(n: u64) -> u64 {
    work(n)
}

fn sampling(test_mode: bool) -> Sampling {
    Sampling::new()
        .sample_size(if test_mode { 10 } else { 50 })
        .warm_up_time(Duration::from_millis(if test_mode { 10 } else { 300 }))
        .measurement_time(Duration::from_millis(if test_mode { 50 } else { 1500 }))
}

/// The median per call of each case of the family `family`, by `n`:
/// sampled by criterion, or in test mode by nnbench's sampler (criterion's
/// analysis of a case takes seconds in an unoptimized build).
fn medians(family: &str, test_mode: bool) -> Vec<(u64, f64)> {
    let mut runner = Runner::new().filter(format!("{family}/"));
    if !test_mode {
        runner = runner.timing(Timing::Criterion);
    }
    let record = runner
        .sampling(sampling(test_mode))
        .memory(false)
        .quiet(true)
        .run()
        .unwrap_or_else(|e| panic!("{family}: {e:#}"));
    record
        .cases
        .iter()
        .map(|case| {
            assert!(case.error.is_none(), "{}: {:?}", case.id, case.error);
            (case.params["n"].as_u64().unwrap_or(0), case.time.median_ns)
        })
        .collect()
}

fn main() {
    if !harness::should_run("async_cases") {
        return;
    }
    let test_mode = harness::test_mode();
    let rounds = if test_mode { 1 } else { 9 };
    let mut sync: Vec<Vec<(u64, f64)>> = Vec::new();
    let mut asynchronous: Vec<Vec<(u64, f64)>> = Vec::new();
    // Alternated, so that both sides see the same machine.
    for _ in 0..rounds {
        sync.push(medians("sync_work", test_mode));
        asynchronous.push(medians("async_work", test_mode));
    }
    let of = |runs: &[Vec<(u64, f64)>], n: u64| {
        median(
            runs.iter()
                .flat_map(|run| run.iter().filter(|(m, _)| *m == n).map(|(_, t)| *t))
                .collect::<Vec<_>>(),
        )
    };
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "work per call",
        "sync",
        "async",
        "async / sync",
        "target",
    ]);
    for (n, what, target) in [(20_000u64, "about 20 µs", 1.03), (64, "trivial", f64::NAN)] {
        let (s, a) = (of(&sync, n), of(&asynchronous, n));
        let ratio = a / s;
        let goal = if target.is_nan() {
            format!("reported: {} a call more", format_ns(a - s))
        } else {
            // Each round's own ratio: the rounds alternate the sides.
            let ratios: Vec<f64> = (0..rounds)
                .map(|r| of(&asynchronous[r..=r], n) / of(&sync[r..=r], n))
                .collect();
            harness::judged("async / sync", &ratios, Goal::AtMost(target), 1.5, |v| {
                format!("{v:.3}")
            })
        };
        table.add_row([
            format!("{what} (n = {n})"),
            format_ns(s),
            format_ns(a),
            format!("{ratio:.3}"),
            goal,
        ]);
    }
    harness::table(&table);
    harness::note(format!(
        "medians of {rounds} alternated runs of each side, sampled; the async side awaits each call on the current-thread runtime{}",
        if test_mode {
            " (test mode: one short run, by nnbench's sampler)"
        } else {
            ""
        }
    ));
    harness::publish("async_cases");
}
