//! Instructions counted under Callgrind (`--instructions`, `timing =
//! instructions`), as a CI job meets them: this test binary
//! (`harness = false`) is the bench, started under valgrind by its own
//! supervisor. Nothing here asserts on a time: only on counts, which a
//! busy machine does not move. The first check is the fast suite's; the
//! others, a run under valgrind each, are end-to-end tests
//! (`NNBENCH_E2E=1`).

mod support;

use std::path::Path;
use std::process::{Command, Output};

use nnbench::record::CaseRecord;
use nnbench::record::TimingMode;
use nnbench::store::{Format, Json};
use nnbench::{Memo, Params, RunRecord, State};

/// How much more work this build does in the case it names, in tenths of
/// a percent: `kernel/n=2:10` is 1% more.
const EXTRA: &str = "INSTRUCTIONS_TEST_EXTRA";

/// The numbers the calls mix in.
const fn table() -> [u64; 4096] {
    let mut table = [0u64; 4096];
    let mut i = 0;
    while i < 4096 {
        table[i] = (i as u64).wrapping_mul(2_654_435_761);
        i += 1;
    }
    table
}

static TABLE: [u64; 4096] = table();

/// [`TABLE`] as a memo that is costly to make: a hundred times the work of
/// the call that uses it.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Table;

impl Memo for Table {
    type Value = Vec<u64>;
    fn compute(&self) -> nnbench::Result<Vec<u64>> {
        std::hint::black_box(support::spin(2_000_000, &TABLE));
        Ok(TABLE.to_vec())
    }
    fn store(&self) -> Option<Box<dyn Format<Vec<u64>>>> {
        Some(Box::new(Json))
    }
}

#[nnbench::parametrize([(n = 1), (n = 2)])]
fn kernel(n: u64) -> u64 {
    let steps = 50_000 * n;
    support::spin(
        steps + steps * support::extra_work(EXTRA, &format!("kernel/n={n}")) / 1000,
        &TABLE,
    )
}

/// A setup hook that does a hundred times the work of the call.
fn busy_setup(_: &State, _: &Params) {
    std::hint::black_box(support::spin(2_000_000, &TABLE));
}

/// The call of `bare`, with its table a memo and a busy setup beside it:
/// Callgrind must count the call alone, as it counts `bare`.
#[nnbench::product(table = [Table], setup = busy_setup, timing = instructions)]
fn with_fixtures(table: &[u64]) -> u64 {
    support::spin(20_000, table)
}

#[nnbench::benchmark(timing = instructions)]
fn bare() -> u64 {
    support::spin(20_000, &TABLE)
}

/// The call of `bare` on an input a hundred times costlier to make than
/// the call, made for it by a `Bencher`: Callgrind counts the call alone.
#[nnbench::benchmark(timing = instructions)]
fn on_inputs(b: nnbench::Bencher) {
    b.with_inputs(|| {
        std::hint::black_box(support::spin(2_000_000, &TABLE));
        TABLE.to_vec()
    })
    .bench_refs(|table| support::spin(20_000, table));
}

#[nnbench::benchmark(timing = instructions)]
fn panics() -> u64 {
    panic!("a counted case that panics")
}

fn main() {
    support::main(
        "instructions",
        support::checks!(
            counts_repeat_exactly_and_move_with_the_work,
            memos_and_hooks_stay_out_of_the_count,
            inputs_made_by_a_bencher_stay_out_of_the_count,
            a_one_percent_change_fails_the_baseline_naming_that_case,
            a_family_counted_by_its_attribute_runs_beside_timed_ones,
            without_valgrind_the_run_is_refused_naming_how_to_install_it,
        ),
    );
}

/// The bench, with `flags` and the filter, in `target`, with `env` set
/// (an empty value removes a variable).
fn bench(target: &Path, flags: &[&str], env: &[(&str, &str)], filter: &str) -> Output {
    let mut command: Command = support::bench_binary();
    command.env("CARGO_TARGET_DIR", target).env_remove(EXTRA);
    for (key, value) in env {
        match value.is_empty() {
            true => command.env_remove(key),
            false => command.env(key, value),
        };
    }
    command.arg("--bench").args(flags).arg(filter);
    command.output().expect("the bench runs")
}

fn latest(target: &Path) -> RunRecord {
    RunRecord::read(target.join("nnbench/instructions/latest.json")).expect("latest.json")
}

fn case<'a>(record: &'a RunRecord, id: &str) -> &'a CaseRecord {
    record
        .cases
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("{id} is in {:?}", record.cases))
}

fn instructions(record: &RunRecord, id: &str) -> u64 {
    let case = case(record, id);
    assert!(case.error.is_none(), "{id}: {:?}", case.error);
    assert_eq!(case.time.mode, TimingMode::Instructions, "{id}");
    case.time.instructions.expect("counted")
}

fn counts_repeat_exactly_and_move_with_the_work() {
    if !support::valgrind_here() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for _ in 0..5 {
        let output = bench(dir.path(), &["--instructions"], &[], "kernel/");
        assert_eq!(output.status.code(), Some(0), "{}", support::said(&output));
        let record = latest(dir.path());
        runs.push([
            instructions(&record, "kernel/n=1"),
            instructions(&record, "kernel/n=2"),
        ]);
        let cache = case(&record, "kernel/n=1")
            .time
            .callgrind
            .as_deref()
            .copied()
            .expect("cache figures");
        assert!(
            cache.l1_hits > 0 && cache.estimated_cycles >= cache.l1_hits,
            "{cache:?}"
        );
    }
    assert!(
        runs.iter().all(|r| *r == runs[0]),
        "five runs count alike: {runs:?}"
    );
    let [one, two] = runs[0];
    let ratio = two as f64 / one as f64;
    assert!(
        (1.99..2.01).contains(&ratio),
        "twice the work, twice the instructions: {one} and {two}"
    );
}

fn inputs_made_by_a_bencher_stay_out_of_the_count() {
    if !support::end_to_end("inputs_made_by_a_bencher_stay_out_of_the_count")
        || !support::valgrind_here()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let output = bench(dir.path(), &["--exact"], &[], "on_inputs");
    assert_eq!(output.status.code(), Some(0), "{}", support::said(&output));
    let on_inputs = instructions(&latest(dir.path()), "on_inputs");
    let output = bench(dir.path(), &["--exact"], &[], "bare");
    assert_eq!(output.status.code(), Some(0), "{}", support::said(&output));
    let bare = instructions(&latest(dir.path()), "bare");
    // The input's making is a hundred times the call: counted, it would
    // show as a hundredfold.
    let ratio = on_inputs as f64 / bare as f64;
    assert!(
        (0.9..1.1).contains(&ratio),
        "the call on its input counts {on_inputs}, the bare call {bare}"
    );
}

fn memos_and_hooks_stay_out_of_the_count() {
    if !support::end_to_end("memos_and_hooks_stay_out_of_the_count") || !support::valgrind_here() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let output = bench(dir.path(), &[], &[], "with_fixtures");
    assert_eq!(output.status.code(), Some(0), "{}", support::said(&output));
    let record = latest(dir.path());
    let counted = instructions(&record, "with_fixtures/table=Table");
    let output = bench(dir.path(), &[], &[], "bare");
    assert_eq!(output.status.code(), Some(0), "{}", support::said(&output));
    let bare = instructions(&latest(dir.path()), "bare");
    // The memo and the setup each do a hundred times the call's work.
    assert!(
        counted.abs_diff(bare) * 200 < bare,
        "the call alone is counted: {counted} with fixtures, {bare} without"
    );
}

fn a_one_percent_change_fails_the_baseline_naming_that_case() {
    if !support::end_to_end("a_one_percent_change_fails_the_baseline_naming_that_case")
        || !support::valgrind_here()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let output = bench(
        dir.path(),
        &["--instructions", "--save-baseline", "main"],
        &[],
        "kernel/",
    );
    assert_eq!(output.status.code(), Some(0), "{}", support::said(&output));
    let same = bench(
        dir.path(),
        &["--instructions", "--baseline", "main"],
        &[],
        "kernel/",
    );
    assert_eq!(same.status.code(), Some(0), "{}", support::said(&same));
    let slower = bench(
        dir.path(),
        &["--instructions", "--baseline", "main"],
        &[(EXTRA, "kernel/n=2:10")],
        "kernel/",
    );
    let said = support::said(&slower);
    assert_eq!(slower.status.code(), Some(1), "{said}");
    assert!(
        said.contains("1 of 2 cases regressed against baseline main"),
        "{said}"
    );
    let record = latest(dir.path());
    let ratio =
        instructions(&record, "kernel/n=2") as f64 / instructions(&record, "kernel/n=1") as f64;
    assert!((2.015..2.025).contains(&ratio), "1% more work: {ratio}");
}

fn a_family_counted_by_its_attribute_runs_beside_timed_ones() {
    if !support::end_to_end("a_family_counted_by_its_attribute_runs_beside_timed_ones")
        || !support::valgrind_here()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let output = bench(dir.path(), &[], &[], "");
    let said = support::said(&output);
    assert_eq!(
        output.status.code(),
        Some(1),
        "the panicking case fails: {said}"
    );
    let record = latest(dir.path());
    let timed = &case(&record, "kernel/n=1").time;
    assert_ne!(timed.mode, TimingMode::Instructions);
    assert_eq!(timed.instructions, None);
    // The processor's own count, where it has a counter; else a note.
    assert!(
        timed.hw_instructions.is_some_and(|n| n > 10_000.0)
            || record
                .warnings
                .iter()
                .any(|w| w.contains("no hardware instruction counts here")),
        "{timed:?} {:?}",
        record.warnings
    );
    instructions(&record, "bare");
    let panicked = case(&record, "panics");
    let error = panicked.error.as_ref().expect("it failed");
    assert!(
        error.message.contains("a counted case that panics"),
        "{error:?}"
    );
    assert_eq!(
        record.failed(),
        1,
        "the cases counted after it are counted alone"
    );
    // A Runner in this process cannot count: the counted case says why.
    let in_process = nnbench::Runner::new()
        .filter("bare")
        .quiet(true)
        .run()
        .unwrap();
    let error = in_process.cases[0]
        .error
        .as_ref()
        .expect("not counted here");
    assert!(error.message.contains("only a bench binary"), "{error:?}");
}

fn without_valgrind_the_run_is_refused_naming_how_to_install_it() {
    let dir = tempfile::tempdir().unwrap();
    let nowhere = dir.path().join("no-bin");
    let no_valgrind = [
        ("PATH", nowhere.to_str().unwrap()),
        ("NNBENCH_VALGRIND", ""),
    ];
    let output = bench(dir.path(), &["--instructions"], &no_valgrind, "kernel/");
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(
        said.contains("needs valgrind") && said.contains("scripts/valgrind.sh"),
        "{said}"
    );
    let output = bench(
        dir.path(),
        &["--instructions"],
        &[("NNBENCH_VALGRIND", "/bin/echo")],
        "kernel/",
    );
    let said = support::said(&output);
    assert_eq!(output.status.code(), Some(2), "{said}");
    assert!(
        said.contains("NNBENCH_VALGRIND=/bin/echo") && said.contains("is not valgrind"),
        "{said}"
    );
    assert!(
        !dir.path().join("nnbench/instructions/latest.json").exists(),
        "nothing ran"
    );
    // A run that counts nothing needs no valgrind.
    let output = bench(dir.path(), &["--once"], &no_valgrind, "kernel/");
    assert_eq!(output.status.code(), Some(0), "{}", support::said(&output));
}
