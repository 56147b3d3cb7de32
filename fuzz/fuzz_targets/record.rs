//! The run record reader on any bytes, as a bench's `--baseline` and the
//! tool's `compare` read a record or a saved baseline, and what they do
//! with one they read: judge it against itself, against the same run with
//! no case (every case new, or gone), and with its cases in reverse order,
//! and write the verdicts in each format.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use nnbench::RunRecord;
use nnbench_core::compare::{Format, Limits, compare};

static DIR: LazyLock<tempfile::TempDir> =
    LazyLock::new(|| tempfile::tempdir().expect("a folder for the inputs"));

fuzz_target!(|bytes: &[u8]| {
    let path = DIR.path().join("record.json");
    std::fs::write(&path, bytes).expect("the input written");
    let Ok(record) = RunRecord::read(&path) else {
        return;
    };
    let limits = Limits::default();
    let mut empty = record.clone();
    empty.cases.clear();
    let mut reversed = record.clone();
    reversed.cases.reverse();
    for comparison in [
        compare(&record, &record, &limits),
        compare(&empty, &record, &limits),
        compare(&record, &empty, &limits),
        compare(&reversed, &record, &limits),
    ] {
        for format in [
            Format::Table,
            Format::ColorTable,
            Format::Markdown,
            Format::Json,
        ] {
            let _ = comparison.render(format);
        }
        let _ = comparison.regressed();
    }
});
