//! `--disk-tier-max`: the run keeps its disk tier within a size, dropping
//! the entries used least recently when it starts and after each case that
//! saved one.

use std::time::SystemTime;

use nnbench_vocab::format_bytes;

use crate::memo::{self, DiskTier, journal};
use crate::settings::Settings;

pub(crate) struct TierLimit {
    max: Option<u64>,
    tier: DiskTier,
    started: SystemTime,
    /// The entries saved by the process when the tier was last pruned.
    saves: u64,
}

impl TierLimit {
    pub(crate) fn new(settings: &Settings) -> Self {
        Self {
            max: settings.memory.disk_tier_max,
            tier: settings.memory.disk_tier.clone(),
            started: SystemTime::now(),
            saves: u64::MAX,
        }
    }

    /// Prunes the tier if something may have been saved to it since the
    /// last time; says so where it dropped entries this run used.
    pub(crate) fn keep(&mut self) {
        let Some(max) = self.max else { return };
        let saves = memo::disk::SAVES.load(std::sync::atomic::Ordering::Relaxed);
        if saves == self.saves {
            return;
        }
        self.saves = saves;
        match self.tier.prune(max) {
            Ok(pruned) => {
                let used: Vec<&str> = pruned
                    .removed
                    .iter()
                    .filter(|e| e.last_use >= self.started)
                    .map(|e| e.memo.as_str())
                    .collect();
                if !used.is_empty() {
                    journal::warn(format!(
                        "--disk-tier-max {} dropped entries this run used ({}): the tier holds \
                         less than the run needs, and later runs compute them again",
                        format_bytes(max),
                        used.join(", ")
                    ));
                }
            }
            Err(e) => journal::warn(format!("--disk-tier-max: {e:#}")),
        }
    }
}
