//! How long `nnbench compare` takes on two 10,000-case records, and the
//! memory it needs: reading both files, comparing every case (a
//! Mann-Whitney U test on 100 samples a side for each), and writing the
//! table, as the tool does. Target: under 1 s.
//!
//! `cargo bench --bench compare`

#[path = "support/harness.rs"]
mod harness;
use harness::Goal;
use harness::stats;
#[path = "support/synthetic.rs"]
mod synthetic;

use std::time::Instant;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::RunRecord;
use nnbench_core::compare::{Format, Limits, compare};
use nnbench_core::measure::rss;
use nnbench_vocab::{format_bytes, format_ns};
use stats::median;
use synthetic::synthetic;

/// Comparisons timed: enough to bound their median at 95%.
const RUNS: usize = 7;

fn main() {
    if !harness::should_run("compare") {
        return;
    }
    let cases = if harness::test_mode() { 500 } else { 10_000 };
    let dir = tempfile::tempdir().expect("temp dir");
    let (base_path, head_path) = (dir.path().join("base.json"), dir.path().join("head.json"));
    synthetic(cases, 100, 1.0).write(&base_path).expect("base");
    synthetic(cases, 100, 1.3).write(&head_path).expect("head");
    let file_bytes = std::fs::metadata(&head_path).map_or(0, |m| m.len());

    let mut times = Vec::new();
    let mut regressed = 0;
    rss::reset_peak();
    let before = rss::current_bytes().unwrap_or(0);
    for _ in 0..RUNS {
        let start = Instant::now();
        let base = RunRecord::read(&base_path).expect("read base");
        let head = RunRecord::read(&head_path).expect("read head");
        let comparison = compare(&base, &head, &Limits::default());
        let table = comparison.render(Format::Table);
        times.push(start.elapsed().as_nanos() as f64);
        regressed = comparison.count(nnbench_core::compare::Verdict::Regressed);
        std::hint::black_box(table);
    }
    let peak = rss::peak_bytes().unwrap_or(0).saturating_sub(before);
    let median = median(&times);

    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(["figure", "measured", "target"]);
    table.add_row([
        format!("compare two {cases}-case records (read, judge, render), median of {RUNS}"),
        format_ns(median),
        // A tenth of the cases, unoptimized, takes about what the whole
        // takes optimized: the same goal in test mode.
        harness::judged("compare", &times, Goal::AtMost(1e9), 1.0, format_ns),
    ]);
    table.add_row([
        "peak RSS growth while comparing".to_owned(),
        format_bytes(peak),
        format!("each record file {}", format_bytes(file_bytes)),
    ]);
    table.add_row([
        "cases flagged (every tenth made 30% slower)".to_owned(),
        regressed.to_string(),
        (cases / 10).to_string(),
    ]);
    harness::table(&table);
    assert_eq!(
        regressed,
        cases / 10,
        "exactly the slowed cases are flagged"
    );
    harness::publish("compare");
}
