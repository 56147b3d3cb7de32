//! Output: what a run prints and which files it writes.

use std::path::PathBuf;

/// The output group of a run's settings.
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Output")]
pub(crate) struct Output {
    /// Print no progress lines and no table.
    #[arg(short, long)]
    pub quiet: bool,
    /// Also write the record to FILE (.json, or .ndjson for one case per line).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The record's `run`: the bench target's name in a bench binary.
    #[arg(skip)]
    pub name: Option<String>,
    /// Where `latest.json`, the progress file and baselines go: a bench
    /// binary's `target/nnbench/<bench>/` when measuring.
    #[arg(skip)]
    pub latest_dir: Option<PathBuf>,
    /// The folder whose git state the record's context describes.
    #[arg(skip)]
    pub repo_dir: Option<PathBuf>,
}
