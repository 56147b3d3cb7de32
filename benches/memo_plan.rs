//! Loads under a memory budget: a 2-D grid (8 models x 6 datasets) and a
//! 3-D grid (6 models x 5 datasets x 4 tokenizers) at three budgets each,
//! run with the plan and without it (`--no-memo-plan`: the declared order,
//! least recently used evicted), against each memo loaded once and, on the
//! 2-D grid of equal fixtures, the best block order worked out by hand;
//! and the time planning 10,000 cases takes.
//!
//! `cargo bench --bench memo_plan`

#[path = "support/harness.rs"]
mod harness;
use harness::Goal;

use std::hint::black_box;
use std::time::Instant;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::memo::{self, DiskTier};
use nnbench::{Memo, Runner, Timing};
use nnbench_vocab::{format_bytes, format_ns};

/// The fixture size: 64 MiB, as the sweep; 1 MiB in test mode.
fn unit() -> u64 {
    if harness::test_mode() {
        1 << 20
    } else {
        64 << 20
    }
}

/// A fixture of `units` of [`unit`] bytes, told apart by its id.
macro_rules! fixture {
    ($name:ident, $units:expr) => {
        #[derive(Clone, Debug, Hash, PartialEq, Eq)]
        struct $name(u8);

        impl Memo for $name {
            type Value = Vec<u8>;
            fn compute(&self) -> nnbench::Result<Vec<u8>> {
                Ok(vec![self.0; ($units * unit() as f64) as usize])
            }
            fn size_of(&self, value: &Vec<u8>) -> Option<u64> {
                Some(value.len() as u64)
            }
        }
    };
}

fixture!(Model, 1.0);
fixture!(Data, 1.0);
fixture!(Checkpoint, 2.0);
fixture!(Corpus, 1.0);
fixture!(Tokenizer, 0.25);

#[nnbench::product(
    model = (1..=8u8).map(Model),
    data = (1..=6u8).map(Data),
    timing = once,
)]
fn grid_2d(model: &[u8], data: &[u8]) -> u8 {
    model[0] ^ data[0]
}

#[nnbench::product(
    model = (1..=6u8).map(Checkpoint),
    data = (1..=5u8).map(Corpus),
    tokenizer = (1..=4u8).map(Tokenizer),
    timing = once,
)]
fn grid_3d(model: &[u8], data: &[u8], tokenizer: &[u8]) -> u8 {
    model[0] ^ data[0] ^ tokenizer[0]
}

/// A memo whose size it claims, holding nothing: the planning of 10,000
/// cases costs the same whatever the fixtures hold.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Claimed(u16);

impl Memo for Claimed {
    type Value = u16;
    fn compute(&self) -> nnbench::Result<u16> {
        Ok(self.0)
    }
    fn size_of(&self, _: &u16) -> Option<u64> {
        Some(1 << 30)
    }
}

#[nnbench::product(a = (0..100u16).map(Claimed), b = (100..200u16).map(Claimed), timing = once)]
fn plan_10k(a: &u16, b: &u16) -> u16 {
    black_box(*a ^ *b)
}

/// The loads of a run of `family` under `budget`, with or without the plan,
/// and the loads the plan expected.
fn loads(family: &str, budget: u64, plan: bool) -> (u64, Option<u64>) {
    memo::clear();
    let record = Runner::new()
        .filter(format!("{family}/"))
        .timing(Timing::Once)
        .quiet(true)
        .test_mode(harness::test_mode())
        .disk_tier(DiskTier::Off)
        .memo_budget(budget)
        .memo_plan(plan)
        .run()
        .unwrap_or_else(|e| panic!("{family}: {e:#}"));
    assert_eq!(record.failed(), 0, "{family}");
    (
        record.memos.loads,
        record.memos.plan.as_ref().map(|p| p.loads),
    )
}

/// The best block order of an `a` x `b` grid of equal fixtures when
/// `room` of them fit: hold `room - 1` of one axis, stream the other in a
/// serpentine, the last streamed fixture kept across each block boundary.
fn best_block_order(a: u64, b: u64, room: u64) -> u64 {
    let held = room.saturating_sub(1).max(1);
    let order = |hold: u64, stream: u64| {
        let blocks = hold.div_ceil(held);
        hold + blocks * stream - (blocks - 1)
    };
    order(a, b).min(order(b, a))
}

/// Seconds to plan the 10,000 cases of `plan_10k`: the time `--list` takes
/// with a budget (sizes known from one case run) less the time without.
fn planning_ns() -> Vec<f64> {
    memo::clear();
    Runner::new()
        .filter("plan_10k/a=Claimed(0),b=Claimed(100)")
        .quiet(true)
        .test_mode(true)
        .disk_tier(DiskTier::Off)
        .run()
        .expect("one case of plan_10k");
    let listing = |budget: Option<u64>| {
        let mut runner = Runner::new().filter("plan_10k/").disk_tier(DiskTier::Off);
        if let Some(budget) = budget {
            runner = runner.memo_budget(budget);
        }
        let start = Instant::now();
        let ids = runner.list();
        let elapsed = start.elapsed().as_nanos() as f64;
        assert_eq!(ids.len(), 10_000);
        elapsed
    };
    let (mut planned, mut plain) = (Vec::new(), Vec::new());
    for _ in 0..if harness::test_mode() { 1 } else { 7 } {
        plain.push(listing(None));
        planned.push(listing(Some(20 << 30)));
    }
    // Each alternated pair's own difference: what planning added.
    planned
        .iter()
        .zip(&plain)
        .map(|(p, q)| (p - q).max(0.0))
        .collect()
}

/// A grid the figures run: its family, its shape, the loads of each memo
/// once, the budgets tried (in units of its largest memo), and, where its
/// memos are alike, its models and datasets.
type Grid = (
    &'static str,
    &'static str,
    u64,
    [f64; 3],
    Option<(u64, u64)>,
);

fn main() {
    if !harness::should_run("memo_plan") {
        return;
    }
    let unit = unit();
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "grid",
        "budget",
        "each memo once",
        "best block order",
        "declared order (--no-memo-plan)",
        "planned",
        "run",
        "run / best",
    ]);
    let grids: [Grid; 2] = [
        (
            "grid_2d",
            "8 models x 6 datasets, 64 MiB each",
            14,
            [3.1, 4.1, 6.25],
            Some((8, 6)),
        ),
        (
            "grid_3d",
            "6 models (128 MiB) x 5 datasets (64 MiB) x 4 tokenizers (16 MiB)",
            15,
            [4.3, 6.3, 10.3],
            None,
        ),
    ];
    let mut worst: f64 = 0.0;
    for (family, shape, once, budgets, uniform) in grids {
        for room in budgets {
            let budget = (room * unit as f64) as u64;
            let (unplanned, _) = loads(family, budget, false);
            let (run, planned) = loads(family, budget, true);
            let best = uniform.map(|(a, b)| best_block_order(a, b, room as u64));
            let against = best.unwrap_or(once) as f64;
            let ratio = run as f64 / against;
            worst = worst.max(run as f64 / best.unwrap_or(run) as f64);
            table.add_row([
                shape.to_owned(),
                format!("{} ({room} x {})", format_bytes(budget), format_bytes(unit)),
                once.to_string(),
                best.map_or_else(|| "-".to_owned(), |b| b.to_string()),
                unplanned.to_string(),
                planned.map_or_else(|| "-".to_owned(), |p| p.to_string()),
                run.to_string(),
                match best {
                    Some(_) => format!("{ratio:.2}"),
                    None => format!("{ratio:.2} of each once"),
                },
            ]);
        }
    }
    harness::table(&table);
    // Loads are counted, not timed: the same in test mode.
    harness::note(format!(
        "2-D grid, run / best block order, the largest: {worst:.2}, target <= 1.10 {}",
        harness::verdict("loads", worst <= 1.10, worst <= 1.10)
    ));
    harness::note(format!(
        "planning 10,000 cases (a 100 x 100 grid of 1 GiB memos under 20 GiB): {}",
        harness::judged(
            "planning",
            &planning_ns(),
            Goal::AtMost(50e6),
            harness::DEBUG_SLACK,
            format_ns
        )
    ));
    harness::note(
        "loads count the cases' memos loaded; a run's first case loads before any size is known, and the run plans once it has",
    );
    harness::publish("memo_plan");
}
