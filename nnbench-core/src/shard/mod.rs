//! Splitting a sweep across the machines of an existing scheduler (a CI
//! matrix, a Slurm job array, a Kubernetes indexed Job), and merging the
//! shards' records into one.
//!
//! Each machine runs the same bench binary with `--shard K/N` (or `--shard
//! auto`, reading the scheduler's index); every one of them plans the same
//! split from the same case set, so none needs to talk to another. The plan
//! keeps the cases that share a memo in one shard where the balance allows:
//! a `model × dataset × batch` sweep in as many shards as it has models
//! loads each model on one machine, where a round-robin split would load
//! every model everywhere. [`merge`] makes one record of the shards' records.
//!
//! # Example
//!
//! ```
//! #[nnbench::parametrize([(n = 1), (n = 2), (n = 3), (n = 4)])]
//! fn halves(n: u32) -> u32 { n }
//!
//! let shard = |k| nnbench::shard::Shard::new(k, 2).unwrap();
//! let first = nnbench::Runner::new().filter("halves/").shard(shard(1)).list();
//! let second = nnbench::Runner::new().filter("halves/").shard(shard(2)).list();
//! assert_eq!(first.len() + second.len(), 4);
//! assert!(first.iter().all(|id| !second.contains(id)));
//! ```

mod costs;
mod merge;
pub(crate) mod plan;
mod spec;

use std::path::PathBuf;

pub use costs::ShardCosts;
pub use merge::{MergeError, merge};
pub use spec::Shard;

/// Why a shard could not be chosen or planned.
///
/// # Example
///
/// ```
/// let err = "3/2".parse::<nnbench::shard::Shard>().unwrap_err();
/// assert!(matches!(err, nnbench::shard::ShardError::OutOfRange { index: 3, count: 2 }));
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShardError {
    /// Not `K/N`, `auto` or `auto/N`.
    #[error("--shard `{spec}`: write K/N with 1 <= K <= N (such as 2/3), auto, or auto/N")]
    Malformed {
        /// What was given.
        spec: String,
    },
    /// `K` outside `1..=N`.
    #[error(
        "--shard {index}/{count}: shards count from 1 to N (1/{count} is the first; a 0-based index i is shard i+1)"
    )]
    OutOfRange {
        /// The index given.
        index: usize,
        /// The count given.
        count: usize,
    },
    /// `--shard auto` where no scheduler set its variables.
    #[error(
        "--shard auto: no scheduler's index in the environment (neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set); write --shard K/N"
    )]
    NoScheduler,
    /// A Kubernetes index without the count.
    #[error(
        "--shard auto: JOB_COMPLETION_INDEX gives the index but not how many there are: write --shard auto/N with the Job's completions"
    )]
    NoCount,
    /// `auto/N` in a Slurm array task whose id is no shard number.
    #[error(
        "--shard auto/{count}: Slurm array task {id} is no shard: with a count given, the task ids are the shard numbers, 1 to {count} (sbatch --array=1-{count}, or some of them to rerun those shards)"
    )]
    TaskNotShard {
        /// `SLURM_ARRAY_TASK_ID`.
        id: usize,
        /// The count given.
        count: usize,
    },
    /// A scheduler's variable that cannot be read.
    #[error("--shard auto: {name}={value} is {why}")]
    Variable {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A Slurm array whose ids are no evenly stepped range.
    #[error(
        "--shard auto: Slurm array task {id} (from {min}, step {step}) is not in an evenly stepped range: submit the array as --array=0-N (or 1-N, or with a step), or write --shard K/N"
    )]
    IrregularArray {
        /// `SLURM_ARRAY_TASK_ID`.
        id: usize,
        /// `SLURM_ARRAY_TASK_MIN`.
        min: usize,
        /// `SLURM_ARRAY_TASK_STEP`.
        step: usize,
    },
    /// A costs file that cannot be used.
    #[error("--shard-costs {}: {reason}", path.display())]
    Costs {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}
