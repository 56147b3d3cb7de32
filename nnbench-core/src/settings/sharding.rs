//! Sharding: which part of a sweep this machine runs.

use std::path::PathBuf;

use crate::shard::{Shard, ShardCosts};

/// The sharding group of a run's settings.
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Shards")]
pub(crate) struct Sharding {
    /// Run shard K of N of the selected cases (K counts from 1), split so
    /// that cases sharing a memo stay in one shard: `auto` (or `auto/N`)
    /// reads the scheduler's index (a Slurm job array, a Kubernetes
    /// indexed Job; with N, a Slurm task id is the shard number, so that a
    /// rerun of some tasks keeps theirs). Every shard of a sweep plans the
    /// same split.
    #[arg(long, value_name = "K/N", env = "NNBENCH_SHARD")]
    pub shard: Option<Shard>,
    /// Balance the shards by the times this record or baseline
    /// measured (give every shard the same one); without it, by case count.
    #[arg(
        long = "shard-costs",
        value_name = "FILE",
        env = "NNBENCH_SHARD_COSTS",
        requires = "shard"
    )]
    pub costs_file: Option<PathBuf>,
    /// The costs read from `costs_file`, or given to the runner.
    #[arg(skip)]
    pub costs: Option<ShardCosts>,
}
