//! What `--shard K/N` does with a sweep, measured side by side in one run:
//!
//! - the seed sweep's shape (3 models × 4 datasets × 2 batch sizes) in 3
//!   shards: the models each shard computes, with nnbench's plan and with a
//!   round-robin split of the same cases (every third case);
//! - balance on a grid of uneven models (1 to 16 units of work): each
//!   shard run for real, planned by case count and by the times of an
//!   earlier run (`--shard-costs`), the costliest shard against the mean,
//!   expected and measured.
//!
//! `cargo bench --bench sharding`

#[path = "support/harness.rs"]
mod harness;
use harness::Goal;

use std::hint::black_box;
use std::sync::Mutex;
use std::time::Instant;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use nnbench::shard::{Shard, ShardCosts};
use nnbench::{Memo, RunRecord, Runner};

/// Which memos were computed, in order: the models a shard loaded.
static COMPUTED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn computed(what: String) {
    COMPUTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(what);
}

fn take_computed() -> Vec<String> {
    std::mem::take(
        &mut *COMPUTED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
}

/// A model whose weights take `units` of work to make and to use.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Model {
    id: u32,
    units: u32,
}

/// Elements of one unit of work: small in test mode.
fn unit() -> usize {
    if harness::test_mode() {
        1 << 10
    } else {
        1 << 17
    }
}

impl Memo for Model {
    type Value = Vec<f64>;
    fn compute(&self) -> nnbench::Result<Vec<f64>> {
        computed(format!("model {}", self.id));
        let n = unit() * self.units as usize;
        Ok((0..n).map(|i| (i % 1000) as f64 * 1e-3).collect())
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Data(u32);

impl Memo for Data {
    type Value = Vec<f64>;
    fn compute(&self) -> nnbench::Result<Vec<f64>> {
        Ok((0..unit()).map(|i| f64::from(self.0) + i as f64).collect())
    }
}

fn seed_models() -> Vec<Model> {
    (0..3).map(|id| Model { id, units: 1 }).collect()
}

#[nnbench::product(model = seed_models(), data = (0..4).map(Data), batch = [16, 32], timing = once)]
fn seed_shape(model: &[f64], data: &[f64], batch: u32) -> f64 {
    let dot: f64 = model.iter().zip(data).map(|(m, d)| m * d).sum();
    dot / f64::from(batch)
}

/// Models of 1 to 16 units of work to make and to use.
fn uneven_models() -> Vec<Model> {
    [1, 2, 3, 4, 6, 8, 12, 16, 2, 5, 10]
        .into_iter()
        .enumerate()
        .map(|(id, units)| Model {
            id: 100 + id as u32,
            units,
        })
        .collect()
}

#[nnbench::product(model = uneven_models(), batch = 1..=8u32, timing = once)]
fn uneven(model: &[f64], batch: u32) -> f64 {
    model.iter().map(|w| black_box(w * f64::from(batch))).sum()
}

fn runner(filter: &str) -> Runner {
    Runner::new()
        .filter(filter)
        .disk_tier(nnbench::memo::DiskTier::Off)
        .quiet(true)
        .memory(false)
        .timing(nnbench::Timing::Once)
}

fn run(runner: Runner) -> Result<(RunRecord, f64), String> {
    let start = Instant::now();
    let record = runner.run().map_err(|e| e.to_string())?;
    Ok((record, start.elapsed().as_secs_f64()))
}

fn shard(k: usize, n: usize) -> Result<Shard, String> {
    Shard::new(k, n).map_err(|e| e.to_string())
}

/// Models computed per shard: nnbench's plan, then round-robin.
fn seed_sweep_loads() -> Result<(), String> {
    take_computed();
    let mut aware = Vec::new();
    for k in 1..=3 {
        let (record, _) = run(runner("seed_shape/").shard(shard(k, 3)?))?;
        aware.push((record.cases.len(), take_computed().len()));
    }
    let ids = runner("seed_shape/").list();
    let mut naive = Vec::new();
    for k in 0..3 {
        let mut picked = runner("seed_shape/").exact(true);
        for id in ids.iter().skip(k).step_by(3) {
            picked = picked.filter(id.clone());
        }
        let (record, _) = run(picked)?;
        naive.push((record.cases.len(), take_computed().len()));
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "3 models × 4 datasets × 2 batches, 3 shards",
        "shard 1",
        "shard 2",
        "shard 3",
        "model loads",
    ]);
    for (name, shards) in [("nnbench --shard K/3", &aware), ("round-robin", &naive)] {
        let mut row = vec![name.to_owned()];
        row.extend(
            shards
                .iter()
                .map(|(cases, models)| format!("{cases} cases, {models} models")),
        );
        row.push(shards.iter().map(|(_, m)| m).sum::<usize>().to_string());
        table.add_row(row);
    }
    harness::table(&table);
    let met = aware.iter().all(|&(_, m)| m == 1);
    harness::note(format!(
        "each shard loads one model: {} {}",
        if met { "yes" } else { "no" },
        // Loads counted: the same in test mode.
        harness::verdict("loads", met, met)
    ));
    Ok(())
}

/// How many times the shards of each plan are run, for the balance's
/// bounds.
const REPEATS: usize = 7;

/// The costliest of `values` over their mean.
fn spread(values: &[f64]) -> f64 {
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    values.iter().copied().fold(0.0, f64::max) / mean
}

/// Expected and measured balance of the uneven grid's shards.
fn balance() -> Result<(), String> {
    // The earlier run whose times plan the shards: the second of two, as
    // a machine that runs the sweep regularly has its pages warm.
    run(runner("uneven/"))?;
    let (earlier, whole_s) = run(runner("uneven/"))?;
    let costs = ShardCosts::from_record(&earlier);
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED).set_header([
        "uneven models, shards",
        "planned by",
        "expected costliest / mean",
        "measured costliest / mean",
        "shard wall times",
    ]);
    let repeats = if harness::test_mode() { 1 } else { REPEATS };
    // Per repeat, the costliest shard over the mean, at its worst over the
    // shard counts planned by measured times.
    let mut worsts = vec![0.0f64; repeats];
    let mut worst_expected: f64 = 0.0;
    for n in [2, 3, 4, 7] {
        for by_times in [false, true] {
            let mut expected = Vec::new();
            let mut measured = Vec::new();
            for worst in &mut worsts {
                let mut walls = Vec::new();
                for k in 1..=n {
                    let mut shard_runner = runner("uneven/").shard(shard(k, n)?);
                    if by_times {
                        shard_runner = shard_runner.shard_costs(costs.clone());
                    }
                    let (record, seconds) = run(shard_runner)?;
                    let planned = record.shard.ok_or("a shard's record names its shard")?;
                    if expected.len() < n {
                        expected.push(planned.expected_cost);
                    }
                    walls.push(seconds);
                }
                if by_times {
                    *worst = worst.max(spread(&walls));
                }
                measured = walls;
            }
            if by_times {
                worst_expected = worst_expected.max(spread(&expected));
            }
            let walls: Vec<String> = measured.iter().map(|s| format!("{:.0}", s * 1e3)).collect();
            table.add_row([
                n.to_string(),
                if by_times {
                    "measured times"
                } else {
                    "case count"
                }
                .to_owned(),
                format!("{:.2}", spread(&expected)),
                format!("{:.2}", spread(&measured)),
                format!("{} ms", walls.join(" / ")),
            ]);
        }
    }
    harness::table(&table);
    harness::note(format!(
        "the whole grid in one process: {:.0} ms",
        whole_s * 1e3
    ));
    // A grid of milliseconds in test mode, whose shards' start weighs.
    harness::note(format!(
        "shards planned by measured times, the costliest shard's wall time over the mean, the worst of the shard counts in each of {repeats} repeats: {} (the planner expected at most {worst_expected:.2}x; the table shows the last repeat)",
        harness::judged("balance", &worsts, Goal::AtMost(1.25), 2.0, |v| format!(
            "{v:.2}x"
        ))
    ));
    Ok(())
}

fn main() {
    if !harness::should_run("sharding") {
        return;
    }
    let outcome = seed_sweep_loads().and_then(|()| balance());
    if let Err(message) = outcome {
        eprintln!("sharding: {message}");
        std::process::exit(1);
    }
    harness::publish("sharding");
}
