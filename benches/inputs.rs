//! What dropping a per-call input costs a routine that consumes it, side by
//! side in one run, for an input of 8 MiB (which glibc keeps in its heap
//! once a chunk that size was freed) and one of 64 MiB (past glibc's
//! largest threshold for that: each is its own mapping, and each drop
//! unmaps it):
//!
//! - nnbench timing a routine that reads two elements of the input and
//!   consumes it (`with_inputs(..).bench_values(|v| ..)`), its drop on the
//!   clock;
//! - the same routine handing the input back, its drop off the clock: the
//!   difference is the drop as nnbench's clock sees it;
//! - one drop alone: a plain loop that makes one input off the clock,
//!   reads the two elements, and times the drop, one input at a time, as
//!   a program that consumes its inputs one by one would;
//! - the routine copying a held input on the clock instead.
//!
//! Rounds alternate them; each round's ratios are judged on their medians'
//! 95% bounds: the drop on nnbench's clock within 1.5x of one drop alone,
//! and the routine far under copying its input.
//!
//! `cargo bench --bench inputs`

#[path = "support/harness.rs"]
mod harness;
use harness::Goal;
use harness::stats::median;

use std::hint::black_box;
use std::time::{Duration, Instant};

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::{Bencher, RunRecord, Runner, Sampling, Timing};
use nnbench_vocab::{format_bytes, format_ns};

/// The inputs' sizes: in glibc's heap, and each a mapping of its own.
const SIZES: [usize; 2] = [8 << 20, 64 << 20];

fn input(bytes: usize) -> Vec<u8> {
    vec![1u8; bytes]
}

fn two(v: &[u8]) -> u8 {
    v[0].wrapping_add(v[v.len() - 1])
}

#[nnbench::product(bytes = SIZES)]
fn consumed(b: Bencher, bytes: usize) {
    b.with_inputs(|| input(bytes)).bench_values(|v| two(&v));
}

#[nnbench::product(bytes = SIZES)]
fn handed_back(b: Bencher, bytes: usize) {
    b.with_inputs(|| input(bytes))
        .bench_values(|v| (two(&v), v));
}

#[nnbench::product(bytes = SIZES)]
fn copied(b: Bencher, bytes: usize) {
    let held = input(bytes);
    b.bench(|| two(&black_box(held.clone())));
}

const FAMILIES: [&str; 3] = ["consumed", "handed_back", "copied"];

/// Per size, the three families' medians per call, in one run.
fn nnbench_round(test_mode: bool) -> Vec<[f64; 3]> {
    let (sample_size, time) = if test_mode { (10, 50) } else { (30, 1000) };
    let mut runner = Runner::new();
    for family in FAMILIES {
        runner = runner.filter(format!("{family}/"));
    }
    let record: RunRecord = runner
        .timing(Timing::Criterion)
        .sampling(
            Sampling::new()
                .sample_size(sample_size)
                .warm_up_time(Duration::from_millis(time / 5))
                .measurement_time(Duration::from_millis(time)),
        )
        .quiet(true)
        .memory(false)
        .run()
        .unwrap_or_else(|e| panic!("the run: {e:#}"));
    SIZES
        .iter()
        .map(|bytes| {
            FAMILIES.map(|family| {
                let id = format!("{family}/bytes={bytes}");
                let case = record.case(&id).unwrap_or_else(|| panic!("{id} ran"));
                assert!(case.error.is_none(), "{id}: {:?}", case.error);
                case.time.median_ns
            })
        })
        .collect()
}

/// The median time of dropping one input of `bytes`, made off the clock
/// and read, one input at a time.
fn one_drop_alone(bytes: usize, calls: usize) -> f64 {
    let times: Vec<f64> = (0..calls)
        .map(|_| {
            let v = input(bytes);
            black_box(two(&v));
            let started = Instant::now();
            drop(black_box(v));
            started.elapsed().as_nanos() as f64
        })
        .collect();
    median(&times)
}

fn main() {
    if !harness::should_run("inputs") {
        return;
    }
    let test_mode = harness::test_mode();
    let rounds = if test_mode { 1 } else { 9 };
    // Per round, per size: the drop alone, and nnbench's three cases.
    let mut alone: Vec<Vec<f64>> = Vec::new();
    let mut ours: Vec<Vec<[f64; 3]>> = Vec::new();
    for _ in 0..rounds {
        let calls = if test_mode { 10 } else { 100 };
        alone.push(SIZES.iter().map(|&b| one_drop_alone(b, calls)).collect());
        ours.push(nnbench_round(test_mode));
    }

    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "input",
        "consumed (drop on the clock)",
        "handed back (drop off it)",
        "the drop on nnbench's clock",
        "one drop alone",
        "copied on the clock",
    ]);
    let mut verdicts = Vec::new();
    for (at, bytes) in SIZES.iter().enumerate() {
        let of = |family: usize| -> Vec<f64> { ours.iter().map(|r| r[at][family]).collect() };
        let (consumed, handed_back, copied) = (of(0), of(1), of(2));
        let alone: Vec<f64> = alone.iter().map(|r| r[at]).collect();
        let drops: Vec<f64> = consumed
            .iter()
            .zip(&handed_back)
            .map(|(c, h)| c - h)
            .collect();
        table.add_row([
            format_bytes(*bytes as u64),
            format_ns(median(&consumed)),
            format_ns(median(&handed_back)),
            format_ns(median(&drops)),
            format_ns(median(&alone)),
            format_ns(median(&copied)),
        ]);
        let per_round = |top: &[f64], bottom: &[f64]| -> Vec<f64> {
            top.iter().zip(bottom).map(|(t, b)| t / b).collect()
        };
        let size = format_bytes(*bytes as u64);
        // Unoptimized and in a few calls, the drop of an input in the heap
        // is a few nanoseconds beside the clock's own: the factor is test
        // mode's noise, not the build's.
        verdicts.push(format!(
            "{size}: the drop on nnbench's clock / one drop alone: {}",
            harness::judged(
                &format!("{size} drop"),
                &per_round(&drops, &alone),
                Goal::AtMost(1.5),
                20.0,
                |v| format!("{v:.2}")
            )
        ));
        verdicts.push(format!(
            "{size}: consumed / copied on the clock: {}",
            harness::judged(
                &format!("{size} consumed"),
                &per_round(&consumed, &copied),
                Goal::AtMost(0.25),
                2.0,
                |v| format!("{v:.3}")
            )
        ));
    }
    harness::note(format!(
        "medians of {rounds} alternated rounds, nnbench's cases sampled; a routine reading two elements of the input:"
    ));
    harness::table(&table);
    for verdict in verdicts {
        harness::note(verdict);
    }
    harness::publish("inputs");
}
