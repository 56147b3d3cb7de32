//! The readers a user's files reach, fuzzed: for each of the `.npy`
//! reader, the run record and baseline reader, a disk tier entry and the
//! history database's rows as the tool reads them, the inputs libFuzzer
//! tried from the seed corpus in `fuzz/corpus` and the crashes it found
//! (a panic, an abort, a hang past 10 s, or memory past 2 GiB), as
//! `scripts/fuzz.sh` runs them with cargo fuzz on the nightly toolchain.
//! An input that crashed is kept in `fuzz/found/` and replayed by
//! `tests/fuzz_found.rs`.
//!
//! `cargo bench --bench fuzz` (`NNBENCH_FUZZ_SECONDS` a target, default
//! 300, an optimized build); test mode fuzzes each target a few seconds,
//! unoptimized.

#[path = "support/harness.rs"]
mod harness;

use std::process::Command;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};

/// What `scripts/fuzz.sh` said of one target.
struct Fuzzed {
    target: String,
    inputs: u64,
    crashes: u64,
}

/// Reads the script's `fuzz TARGET: N inputs, K crashes` lines.
fn fuzzed(said: &str) -> Vec<Fuzzed> {
    said.lines()
        .filter_map(|line| {
            let (target, rest) = line.strip_prefix("fuzz ")?.split_once(": ")?;
            let (inputs, crashes) = rest.split_once(" inputs, ")?;
            Some(Fuzzed {
                target: target.to_owned(),
                inputs: inputs.parse().ok()?,
                crashes: crashes.strip_suffix(" crashes")?.parse().ok()?,
            })
        })
        .collect()
}

/// What each target reads.
fn reader(target: &str) -> &'static str {
    match target {
        "npy" => "`.npy` header and data (`npy::read_header`, `read`, `map`)",
        "record" => "run record and baseline (`RunRecord::read`, then compare and render)",
        "disk_entry" => "disk tier entry (a memo resolved from it, the tier listed)",
        "history" => "history database's rows (`nnbench history` and `report` reads)",
        _ => "another reader",
    }
}

fn main() {
    if !harness::should_run("fuzz") {
        return;
    }
    let test_mode = harness::test_mode();
    let seconds = if test_mode {
        "3".to_owned()
    } else {
        std::env::var("NNBENCH_FUZZ_SECONDS").unwrap_or_else(|_| "300".into())
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fuzz.sh");
    let mut command = Command::new(script);
    if !test_mode {
        command.arg("--release");
    }
    let output = command
        .arg(&seconds)
        .output()
        .unwrap_or_else(|e| panic!("{script}: {e}"));
    let said = String::from_utf8_lossy(&output.stdout);
    if output.status.code() == Some(2) {
        // No nightly toolchain here: the script says so.
        let why = String::from_utf8_lossy(&output.stderr);
        harness::note(harness::peer_missing("cargo fuzz", why.trim()));
        harness::publish("fuzz");
        return;
    }
    let runs = fuzzed(&said);
    assert_eq!(
        runs.len(),
        4,
        "a line a target from {script}:\n{said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut table = Table::new();
    table
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(["reader", "inputs tried", "crashes found"]);
    for run in &runs {
        table.add_row([
            format!("{}: {}", run.target, reader(&run.target)),
            run.inputs.to_string(),
            run.crashes.to_string(),
        ]);
    }
    harness::note(format!(
        "`scripts/fuzz.sh{} {seconds}`: each target {seconds} s from the seed corpus (numpy-written files, real records, entries and histories), under AddressSanitizer:",
        if test_mode { "" } else { " --release" }
    ));
    harness::table(&table);
    let crashes: u64 = runs.iter().map(|r| r.crashes).sum();
    harness::note(format!(
        "crashes: {crashes} {}",
        harness::verdict("crashes", crashes == 0, crashes == 0)
    ));
    assert!(
        output.status.success(),
        "{script} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    harness::publish("fuzz");
}
