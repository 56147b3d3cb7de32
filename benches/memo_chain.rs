//! The harness's cost per case in a sweep whose models are trained from a
//! few shared splits (memos built from memos), at 1,000 and 4,000 models,
//! measured side by side: after each case, eviction decides which splits
//! the models still to run may need, and that must cost in proportion to
//! the cases, not to their square.
//!
//! A bench of its own, so that its 5,000 cases do not weigh on the
//! per-case figures of `benches/overhead.rs`: every run expands every
//! registered family.
//!
//! `cargo bench --bench memo_chain`

#[path = "support/harness.rs"]
mod harness;
use harness::Goal;
use harness::stats;

use std::hint::black_box;
use std::time::Instant;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::{Memo, Runner, Timing};
use nnbench_vocab::format_ns;
use stats::median;

/// How many splits the models share.
const SPLITS: u32 = 8;

/// One of the data splits that every model is trained from.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Split(u32);

impl Memo for Split {
    type Value = u32;
    fn compute(&self) -> nnbench::Result<u32> {
        Ok(self.0)
    }
}

/// A model trained from split `id % SPLITS`.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Trained(u32);

impl Memo for Trained {
    type Value = u32;
    fn compute(&self) -> nnbench::Result<u32> {
        Ok(*nnbench::memo::resolve(&Split(self.0 % SPLITS))? ^ self.0)
    }
}

#[nnbench::product(model = (0..1_000u32).map(Trained), timing = once)]
fn chain_1k(model: &u32) -> u32 {
    black_box(*model)
}

#[nnbench::product(model = (0..4_000u32).map(Trained), timing = once)]
fn chain_4k(model: &u32) -> u32 {
    black_box(*model)
}

/// Harness time per case of the family `family`: the whole run, memos,
/// their eviction and the record included, less the function's own time.
fn per_case_cost(family: &str) -> f64 {
    let start = Instant::now();
    let record = Runner::new()
        .filter(format!("{family}/"))
        .timing(Timing::Once)
        .quiet(true)
        .run()
        .unwrap_or_else(|e| panic!("{family} run: {e:#}"));
    let total = start.elapsed().as_nanos() as f64;
    let calls: f64 = record.cases.iter().map(|c| c.time.median_ns).sum();
    (total - calls) / record.cases.len() as f64
}

fn main() {
    if !harness::should_run("memo_chain") {
        return;
    }
    let test_mode = harness::test_mode();
    // Alternated, so that both sizes see the same machine.
    let (mut small, mut large) = (Vec::new(), Vec::new());
    for _ in 0..if test_mode { 1 } else { 7 } {
        small.push(per_case_cost("chain_1k"));
        large.push(per_case_cost("chain_4k"));
    }
    let growths: Vec<f64> = large.iter().zip(&small).map(|(l, s)| l / s).collect();
    let (small, large) = (median(&small), median(&large));

    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "models trained from 8 shared splits",
        "harness cost per case",
    ]);
    table.add_row(["1,000".to_owned(), format_ns(small)]);
    table.add_row(["4,000".to_owned(), format_ns(large)]);
    harness::table(&table);
    // Unoptimized, the walk's constant costs weigh more at the smaller
    // size; a walk that grew with the square would still show 4.
    harness::note(format!(
        "cost per case at 4,000 models / at 1,000: {} (4 if eviction's walk grew with the square of the models)",
        harness::judged("growth", &growths, Goal::AtMost(2.0), 1.9, |v| format!(
            "{v:.2}"
        ))
    ));
    harness::note(format!(
        "medians of {} alternated runs, memory recorded",
        if test_mode { 1 } else { 7 }
    ));
    harness::publish("memo_chain");
}
