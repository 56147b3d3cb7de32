//! Isolation: cases in worker processes, and how long and how large a case
//! may grow before it is stopped.

use std::time::Duration;

use super::parse;

/// The isolation group of a run's settings.
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Isolation")]
pub(crate) struct Isolation {
    /// Run the cases in a worker process started from this binary: a case
    /// that aborts, segfaults or is killed (out of memory) is recorded as
    /// failed with its cause, and a new worker runs the cases after it.
    #[arg(long)]
    pub isolate: bool,
    /// The longest a case may run (seconds, or a duration such as 10m):
    /// with --isolate its worker is killed and the run goes on; without,
    /// the case is recorded as timed out and the run stops there.
    #[arg(long, value_name = "DURATION", value_parser = parse::duration)]
    pub case_timeout: Option<Duration>,
    /// Limit each worker's address space to SIZE (such as 16GiB): a case
    /// that allocates past it fails as out of memory, not the machine.
    #[arg(long, value_name = "SIZE", value_parser = parse::size, requires = "isolate")]
    pub worker_memory_limit: Option<u64>,
}
