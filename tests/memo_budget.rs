//! A sweep of 8 models by 6 datasets, each fixture 64 MiB, every case timed
//! once, under a memory budget that holds three fixtures and one that holds
//! six: the run plans a block order and loads near the fewest the budget
//! allows, every case runs, and the budget holds at every case; `--list`
//! shows the plan. The binary is a bench binary (`harness = false`) that
//! runs itself as one; its checks run one at a time, since they count what
//! the process's one memo cache holds.

mod support;

use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicU64, Ordering};

use nnbench::memo::{self, DiskTier};
use nnbench::{Memo, Params, RunRecord, Runner, State};

const MIB: u64 = 1 << 20;

/// A 64 MiB "checkpoint".
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Model(u8);

impl Memo for Model {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        Ok(vec![self.0; (64 * MIB) as usize])
    }
    fn size_of(&self, value: &Vec<u8>) -> Option<u64> {
        Some(value.len() as u64)
    }
}

/// A 64 MiB "evaluation set".
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Data(u8);

impl Memo for Data {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        Ok(vec![self.0; (64 * MIB) as usize])
    }
    fn size_of(&self, value: &Vec<u8>) -> Option<u64> {
        Some(value.len() as u64)
    }
}

/// The most the cache held after a case's memos resolved, over the run.
static MOST_HELD: AtomicU64 = AtomicU64::new(0);

fn note_held(_: &State, _: &Params) {
    MOST_HELD.fetch_max(memo::stats().resident_bytes, Ordering::SeqCst);
}

#[nnbench::product(
    model = [Model(1), Model(2), Model(3), Model(4), Model(5), Model(6), Model(7), Model(8)],
    data = [Data(1), Data(2), Data(3), Data(4), Data(5), Data(6)],
    timing = once,
    setup = note_held,
)]
fn evaluate(model: &[u8], data: &[u8]) -> u64 {
    u64::from(model[0]) * 10 + u64::from(data[0])
}

fn run(budget: u64) -> RunRecord {
    run_planned(budget, true)
}

fn run_planned(budget: u64, plan: bool) -> RunRecord {
    memo::clear();
    MOST_HELD.store(0, Ordering::SeqCst);
    let record = Runner::new()
        .filter("evaluate/")
        .quiet(true)
        .test_mode(true)
        .disk_tier(DiskTier::Off)
        .memo_budget(budget)
        .memo_plan(plan)
        .run()
        .unwrap();
    assert_eq!(record.failed(), 0, "{:#?}", record.cases);
    assert_eq!(record.cases.len(), 48, "every case runs");
    let mut values: Vec<u64> = record
        .cases
        .iter()
        .map(|c| c.value.as_u64().unwrap())
        .collect();
    values.sort_unstable();
    let expected: Vec<u64> = (1..=8)
        .flat_map(|m| (1..=6).map(move |d| m * 10 + d))
        .collect();
    assert_eq!(values, expected, "each case once, with its own fixtures");
    assert!(
        MOST_HELD.load(Ordering::SeqCst) <= budget,
        "{} held under a budget of {budget}",
        MOST_HELD.load(Ordering::SeqCst)
    );
    record
}

fn three_fixtures_of_room_take_at_most_thirty_loads() {
    let record = run(200 * MIB);
    let loads = record.memos.loads;
    assert!(loads <= 30, "{loads} loads");
    assert!(loads >= 14, "each fixture at least once: {loads}");
    assert_eq!(record.memos.bytes_loaded, loads * 64 * MIB);
    let plan = record.memos.plan.as_ref().unwrap();
    assert_eq!(plan.budget_bytes, Some(200 * MIB));
    assert_eq!(
        (plan.lower_bound_loads, plan.lower_bound_bytes),
        (14, 14 * 64 * MIB)
    );
    assert!(plan.order.contains("in blocks of"), "{}", plan.order);
    assert!(plan.peak_bytes <= 200 * MIB);
    // The run loads what it planned, give or take the first case, run
    // before the sizes were known.
    assert!(
        loads.abs_diff(plan.loads) <= 2,
        "{loads} loads, {} planned",
        plan.loads
    );
    assert_eq!(record.memos.sizes.len(), 14);
}

fn six_fixtures_of_room_take_at_most_twenty_loads() {
    let record = run(400 * MIB);
    assert!(record.memos.loads <= 20, "{} loads", record.memos.loads);
}

fn unplanned_the_declared_order_under_the_same_budget_loads_far_more() {
    let record = run_planned(200 * MIB, false);
    assert!(record.memos.loads > 40, "{} loads", record.memos.loads);
    assert!(record.memos.plan.is_none());
}

fn without_a_budget_the_declared_order_loads_each_fixture_once() {
    memo::clear();
    let record = Runner::new()
        .filter("evaluate/model=Model(1)")
        .quiet(true)
        .test_mode(true)
        .disk_tier(DiskTier::Off)
        .run()
        .unwrap();
    assert_eq!(record.memos.loads, 7);
    assert!(record.memos.plan.is_none());
    let ids: Vec<&str> = record.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids[0], "evaluate/model=Model(1),data=Data(1)");
    assert_eq!(ids[5], "evaluate/model=Model(1),data=Data(6)");
}

/// A budget below what every case needs: each loads anyway, and the run
/// says so once, with the number of cases, where a user reads it.
fn a_budget_below_every_case_is_said_once_a_run() {
    memo::clear();
    let record = Runner::new()
        .filter("evaluate/")
        .quiet(true)
        .test_mode(true)
        .disk_tier(DiskTier::Off)
        .memo_budget(100 * MIB)
        .run()
        .unwrap();
    assert_eq!(record.failed(), 0, "{:#?}", record.cases);
    let said = "a case's memos need more than the memo budget of 100 MiB; they load anyway";
    let cases: Vec<&str> = record
        .cases
        .iter()
        .filter(|c| c.warnings.iter().any(|w| w == said))
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(cases.len(), 1, "said with the first case only: {cases:?}");
    assert_eq!(
        record.warnings,
        [format!("{said} (48 cases)")],
        "the run's record says it once, with its cases"
    );
    let target = tempfile::tempdir().unwrap();
    let run = bench_under(target.path(), "100MiB", &["evaluate/"]);
    assert!(run.status.success(), "{}", support::said(&run));
    assert_eq!(
        support::said(&run).matches("they load anyway").count(),
        2,
        "the first case's warning and the run's: {}",
        support::said(&run)
    );
    let isolated = bench_under(target.path(), "100MiB", &["evaluate/", "--isolate"]);
    assert!(isolated.status.success(), "{}", support::said(&isolated));
    let record = RunRecord::read(target.path().join("nnbench/memo_budget/latest.json")).unwrap();
    assert_eq!(
        record.warnings,
        [format!("{said} (48 cases)")],
        "workers' cases are counted as one run's"
    );
}

fn bench(target: &Path, args: &[&str]) -> Output {
    bench_under(target, "200MiB", args)
}

fn bench_under(target: &Path, budget: &str, args: &[&str]) -> Output {
    support::bench_binary()
        .env("CARGO_TARGET_DIR", target)
        .args(["--bench", "--memo-budget", budget])
        .args(args)
        .output()
        .expect("the child runs")
}

fn list_shows_the_plan_by_the_sizes_the_last_run_recorded() {
    let target = tempfile::tempdir().unwrap();
    let before = bench(target.path(), &["--list"]);
    let said = support::said(&before);
    assert!(before.status.success(), "{said}");
    assert_eq!(
        said.lines().filter(|l| l.ends_with(": benchmark")).count(),
        48
    );
    assert!(said.contains("sizes not known before they load"), "{said}");
    assert!(
        said.contains("memo_budget::Model") && said.contains("memo_budget::Data"),
        "{said}"
    );

    let ran = bench(target.path(), &["--quiet", "--no-disk-tier"]);
    assert!(ran.status.success(), "{}", support::said(&ran));
    let listed = bench(target.path(), &["--list"]);
    let said = support::said(&listed);
    assert!(
        said.contains("plan under --memo-budget 200 MiB: 28 loads (1.75 GiB), expected peak 192 MiB; order: `data` in blocks of 2, `model` streamed"),
        "{said}"
    );
    assert!(
        said.contains("lower bound: 14 loads (896 MiB), each memo once"),
        "{said}"
    );
    // The list is in the planned order: the first two datasets held while
    // the models stream.
    let ids: Vec<&str> = said
        .lines()
        .filter_map(|l| l.strip_suffix(": benchmark"))
        .collect();
    assert_eq!(ids[0], "evaluate/model=Model(1),data=Data(1)");
    assert_eq!(ids[1], "evaluate/model=Model(1),data=Data(2)");
    assert_eq!(ids[2], "evaluate/model=Model(2),data=Data(1)");
    assert_eq!(ids[15], "evaluate/model=Model(8),data=Data(2)");
    assert!(
        ids[16].ends_with("data=Data(3)") || ids[16].ends_with("data=Data(4)"),
        "{ids:?}"
    );
    let terse = bench(target.path(), &["--list", "--format", "terse"]);
    assert!(!support::said(&terse).contains("plan under"));
}

fn main() {
    support::main(
        "memo_budget",
        support::checks![
            three_fixtures_of_room_take_at_most_thirty_loads,
            six_fixtures_of_room_take_at_most_twenty_loads,
            unplanned_the_declared_order_under_the_same_budget_loads_far_more,
            without_a_budget_the_declared_order_loads_each_fixture_once,
            a_budget_below_every_case_is_said_once_a_run,
            list_shows_the_plan_by_the_sizes_the_last_run_recorded,
        ],
    );
}
