//! Baselines: the records a run is saved as and compared with.

use std::path::PathBuf;

use super::parse;
use crate::compare::Limits;

/// The baselines group of a run's settings.
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Baselines")]
pub(crate) struct Baselines {
    /// Save the run record as baseline NAME
    /// (target/nnbench/<bench>/baselines/NAME.json), and criterion's
    /// estimates under the same name.
    #[arg(long = "save-baseline", value_name = "NAME", value_parser = parse::baseline_name)]
    pub save: Option<String>,
    /// Compare the run against baseline NAME at its end, without
    /// overwriting it; print what changed and exit 1 if a case regressed.
    #[arg(
        long = "baseline",
        value_name = "NAME",
        value_parser = parse::baseline_name,
        conflicts_with = "save"
    )]
    pub compare: Option<String>,
    /// Limits for --baseline and --paired over the defaults, as
    /// `nnbench compare --fail-on` takes them:
    /// time=5%,rss=2%+4MiB,gpu=off,value=0.01.
    #[arg(long, value_name = "SPEC", value_parser = parse::thresholds)]
    pub fail_on: Option<Limits>,
    /// The tool's step, refused with the command that does it: a bench
    /// binary links no history (`nnbench history add RECORD`).
    #[arg(long, hide = true, value_name = "FILE", num_args = 0..=1, require_equals = true)]
    pub history: Option<Option<PathBuf>>,
}
