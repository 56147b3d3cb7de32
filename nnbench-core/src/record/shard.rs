//! Which part of a sharded sweep a record holds, and, in a record merged
//! from shards, where each shard ran.

use serde::{Deserialize, Serialize};

use super::{RunContext, RunMemoRecord};

/// The shard of a sweep a run ran (`--shard K/N`): its record's `shard`.
///
/// Every shard of one sweep has the same `count`, `case_set` and `plan`;
/// `nnbench merge` refuses shards that differ in any of them.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// if let Some(shard) = &record.shard {
///     println!("shard {} of {}: {} of the sweep's {} cases", shard.index, shard.count, record.cases.len(), shard.cases);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ShardRecord {
    /// Which shard, counted from 1 as `--shard K/N` counts.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub index: usize,
    /// How many shards the sweep was split into.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub count: usize,
    /// How many cases the whole sweep selected, across every shard.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub cases: usize,
    /// A digest of the sweep's case ids: equal on every shard of a sweep.
    pub case_set: String,
    /// A digest of which case went to which shard: equal on every shard
    /// planned from the same cases and costs.
    pub plan: String,
    /// This shard's expected cost, in `cost_unit`s.
    pub expected_cost: f64,
    /// The unit of `expected_cost`: `"ns"` when measured times planned the
    /// shards (`--shard-costs`), else `"cases"` (a case, or a memo's load,
    /// counts one).
    pub cost_unit: String,
}

/// One shard of a record merged by `nnbench merge`: the record's
/// `shards`, where each case's `shard` points.
///
/// # Example
///
/// ```
/// # fn f(record: &nnbench::RunRecord) {
/// for shard in &record.shards {
///     println!("shard {}/{} ran on {:?}", shard.index, shard.count, shard.context.host.hostname);
/// }
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ShardRun {
    /// Which shard, counted from 1.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub index: usize,
    /// How many shards the sweep was split into.
    #[serde(default, skip_serializing_if = "crate::record::is_zero")]
    pub count: usize,
    /// When the shard's run started.
    pub started_at: String,
    /// The machine, source and toolchain of the shard's run.
    pub context: RunContext,
    /// What the shard's memo cache did.
    #[serde(default)]
    pub memo: RunMemoRecord,
    /// What the shard's plan expected it to cost, in `cost_unit`s.
    pub expected_cost: f64,
    /// The unit of `expected_cost`.
    pub cost_unit: String,
}
