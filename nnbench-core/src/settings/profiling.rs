//! Profiling: a flamegraph of each case's calls (`--profile`).

use std::path::PathBuf;

/// The profiling group of a run's settings.
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Profiling")]
pub(crate) struct Profiling {
    /// After timing each case, sample its calls (memo loading, hooks and
    /// the harness left out) for the measurement time (1s unless set) and
    /// draw a flamegraph of them: target/nnbench/<bench>/profiles/<case>.svg,
    /// its path in the record's `profile`. With --paired, for each case
    /// that regressed, a differential flamegraph of the base build against
    /// this one: target/nnbench/<bench>/profiles/diff/<case>.svg. Needs
    /// nnbench's `profile` feature.
    #[arg(long, conflicts_with_all = ["instructions"])]
    pub profile: bool,
    /// Where the flamegraphs go: set by a bench binary, else
    /// `<latest_dir>/profiles`, else `target/nnbench/<run>/profiles`.
    #[arg(skip)]
    pub dir: Option<PathBuf>,
}
