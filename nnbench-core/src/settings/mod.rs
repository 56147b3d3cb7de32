//! What a run is asked to do, as plain values in the groups a user thinks
//! in: which cases, how they are timed, memory and memos, isolation,
//! output, baselines, shards, paired runs, profiles.
//!
//! A bench binary's command line is these groups (each field's doc comment
//! is its `--help` line, [`CommandLine`] adds the flags that are actions
//! rather than settings); [`Runner`](crate::Runner)'s builder methods set
//! the same fields; the runner reads them. Nothing here runs anything.

mod baselines;
mod command_line;
mod isolation;
mod memory;
mod output;
mod pairing;
mod parse;
mod profiling;
mod renamed;
mod selection;
mod sharding;
mod timing;

pub(crate) use baselines::Baselines;
pub(crate) use command_line::CommandLine;
pub(crate) use isolation::Isolation;
pub(crate) use memory::{DiskTierAction, MemorySettings};
pub(crate) use output::Output;
pub(crate) use pairing::{ClockChoice, Keep, MIN_ROUNDS, Pairing, WITHIN_LIMIT_ROUNDS};
pub(crate) use profiling::Profiling;
pub(crate) use selection::Selection;
pub(crate) use sharding::Sharding;
pub(crate) use timing::{Forced, TimingSettings};
pub use timing::{Sampling, Timing};

/// Everything a run is configured with.
#[derive(Clone, Debug, Default, clap::Args)]
pub(crate) struct Settings {
    #[command(flatten)]
    pub selection: Selection,
    #[command(flatten)]
    pub timing: TimingSettings,
    #[command(flatten)]
    pub memory: MemorySettings,
    #[command(flatten)]
    pub isolation: Isolation,
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub baselines: Baselines,
    #[command(flatten)]
    pub sharding: Sharding,
    #[command(flatten)]
    pub pairing: Pairing,
    #[command(flatten)]
    pub profiling: Profiling,
    /// What kind of process runs: set by the bench binary, not by flags.
    #[arg(skip)]
    pub process: Process,
    /// What to say of each renamed flag given under its old name.
    #[arg(skip)]
    pub renamed: Vec<String>,
}

/// What the process running the cases can do.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Process {
    /// This is a bench binary's run (`nnbench::main!()`): its executable
    /// can be started again as a worker, and may end on a timed-out case.
    pub bench_binary: bool,
    /// Stop after the running case when `SIGINT` or `SIGTERM` arrives
    /// (bench binaries, which catch them).
    pub interruptible: bool,
}
