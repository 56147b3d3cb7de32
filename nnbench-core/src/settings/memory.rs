//! Memory and memos: which figures are taken, how long memos stay, how
//! much they may hold, and where persisted ones live.

use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Command, FromArgMatches};

use super::parse;
use crate::memo::DiskTier;

/// The memory group of a run's settings.
#[derive(Clone, Debug, Default, clap::Args)]
#[command(next_help_heading = "Memory and memos")]
pub(crate) struct MemorySettings {
    /// Record no memory figures (what they cost a case is on the book's page
    /// of measured figures).
    #[arg(long)]
    pub no_memory: bool,
    /// Keep memos in the cache after their last use.
    #[arg(long)]
    pub keep_memos: bool,
    /// Keep resident memos within SIZE (such as 8GiB), evicting the least
    /// recently used first.
    #[arg(long, value_name = "SIZE", env = "NNBENCH_MEMO_BUDGET", value_parser = parse::size)]
    pub memo_budget: Option<u64>,
    /// Predict each family's capacity (the largest value of its `scaling`
    /// parameter whose resident peak fits) under SIZE (such as 16GiB),
    /// instead of the memory the run may have (its cgroup's limit, else
    /// the machine's).
    #[arg(long, value_name = "SIZE", value_parser = parse::size)]
    pub capacity_limit: Option<u64>,
    /// Keep the GPU memory of resident memos (tensors on a device) within
    /// SIZE, evicting the least recently used first.
    #[arg(long, value_name = "SIZE", env = "NNBENCH_MEMO_GPU_BUDGET", value_parser = parse::size)]
    pub memo_gpu_budget: Option<u64>,
    /// Under a memo budget, keep the declared order (evicting the least
    /// recently used) instead of the order planned for the fewest loads.
    #[arg(long)]
    pub no_memo_plan: bool,
    /// While a case runs, load the next case's memos in the background,
    /// when the memo budget (or the memory available) has room for them:
    /// the load shares the machine with the timed case.
    #[arg(long)]
    pub prefetch: bool,
    /// Where persisted memos live: `--disk-tier-dir DIR`, `--no-disk-tier`.
    #[command(flatten)]
    pub disk_tier: DiskTier,
    /// Keep the disk tier within SIZE (such as 50GiB), dropping the
    /// entries used least recently after each case.
    #[arg(long, value_name = "SIZE", env = "NNBENCH_DISK_TIER_MAX", value_parser = parse::size)]
    pub disk_tier_max: Option<u64>,
    /// `clear`: empty the disk tier before the run.
    #[arg(long = "disk-tier", value_name = "ACTION", value_enum)]
    pub disk_tier_action: Option<DiskTierAction>,
    /// Print, at the end, what the memo cache holds and did, per memo type
    /// (also NNBENCH_PRINT_CACHE_SIZE=1).
    #[arg(
        long,
        env = "NNBENCH_PRINT_CACHE_SIZE",
        value_parser = clap::builder::FalseyValueParser::new()
    )]
    pub print_cache: bool,
}

impl MemorySettings {
    /// Whether the disk tier is emptied before the run.
    pub(crate) fn clears_disk_tier(&self) -> bool {
        self.disk_tier_action == Some(DiskTierAction::Clear)
    }
}

/// What to do to the disk tier before the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DiskTierAction {
    /// Empty it.
    Clear,
}

const DIR: &str = "disk-tier-dir";
const OFF: &str = "no-disk-tier";

/// Two flags make one setting, hence by hand: `--disk-tier-dir DIR`
/// (`At`), `--no-disk-tier` (`Off`), neither (`Default`).
impl FromArgMatches for DiskTier {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(if matches.get_flag(OFF) {
            DiskTier::Off
        } else if let Some(dir) = matches.get_one::<PathBuf>(DIR) {
            DiskTier::At(dir.clone())
        } else {
            DiskTier::Default
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for DiskTier {
    fn augment_args(command: Command) -> Command {
        command
            .arg(
                Arg::new(DIR)
                    .long(DIR)
                    .value_name("DIR")
                    .value_parser(clap::value_parser!(PathBuf))
                    .conflicts_with(OFF)
                    .help(
                        "Folder of the disk tier of persisted memos \
                         (default target/nnbench/memo-cache)",
                    ),
            )
            .arg(
                Arg::new(OFF)
                    .long(OFF)
                    .action(ArgAction::SetTrue)
                    .help("Keep persisted memos in memory only: no disk tier"),
            )
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}
