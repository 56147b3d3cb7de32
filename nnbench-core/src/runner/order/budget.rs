//! A run under a memory budget plans its order: by the sizes known before
//! it starts (memos loaded earlier in the process, the disk tier's entries,
//! the last run's record), planning again once the first memo of a type
//! whose size was not known has loaded. What it planned goes in the
//! record, and `--list` prints it.

use std::collections::HashMap;

use nnbench_vocab::format_bytes;

use super::blocks::BlockOrder;
use super::{MemoId, Schedule};
use crate::memo::{self, ErasedMemo, Sizes};
use crate::record::{CaseRecord, MemoSize, PlanRecord, RunRecord};
use crate::settings::Settings;

/// The plan of a run with a memory budget.
pub(crate) struct Planning {
    budget: Sizes,
    /// `--memo-budget`, `--memo-gpu-budget`.
    flags: (Option<u64>, Option<u64>),
    /// Sizes from the disk tier's headers and the last run's record, by
    /// [`key`].
    recorded: HashMap<String, Sizes>,
    /// The largest recorded size per memo type.
    recorded_types: HashMap<String, Sizes>,
    /// Memos whose size is not known yet.
    unknown: Vec<MemoId>,
    /// The cases' loads so far.
    loaded: (u64, u64),
    plan: Option<PlanRecord>,
}

fn key(type_name: &str, memo: &str) -> String {
    format!("{type_name}\u{0}{memo}")
}

impl Planning {
    /// The planning of a run of `schedule`'s cases, if a budget is set.
    pub(crate) fn new(settings: &Settings, schedule: &Schedule<'_>) -> Option<Self> {
        let flags = (settings.memory.memo_budget, settings.memory.memo_gpu_budget);
        if flags == (None, None) || settings.memory.no_memo_plan {
            return None;
        }
        let mut planning = Planning {
            budget: Sizes {
                host: flags.0.unwrap_or(u64::MAX),
                device: flags.1.unwrap_or(u64::MAX),
            },
            flags,
            recorded: HashMap::new(),
            recorded_types: HashMap::new(),
            unknown: Vec::new(),
            loaded: (0, 0),
            plan: None,
        };
        if let Some(dir) = &settings.output.latest_dir
            && let Ok(last) = RunRecord::read(dir.join("latest.json"))
        {
            for size in last.memos.sizes {
                planning.note(
                    &size.type_name,
                    &size.memo,
                    Sizes {
                        host: size.bytes,
                        device: size.device_bytes,
                    },
                );
            }
        }
        memo::with_disk_tier(settings.memory.disk_tier.clone(), || {
            for memo in schedule.memos() {
                if let Some(size) = on_disk(*memo) {
                    planning.note(memo.type_name(), &memo.describe(), size);
                }
            }
        });
        planning.unknown = (0..schedule.memos().len()).collect();
        planning.forget_known(schedule);
        Some(planning)
    }

    fn note(&mut self, type_name: &str, memo: &str, size: Sizes) {
        self.recorded.insert(key(type_name, memo), size);
        let largest = self.recorded_types.entry(type_name.to_owned()).or_default();
        *largest = Sizes {
            host: largest.host.max(size.host),
            device: largest.device.max(size.device),
        };
    }

    /// What `memo` is expected to hold: as loaded in this process, as
    /// recorded, or as the largest of its type either way.
    fn size(&self, memo: &dyn ErasedMemo) -> Option<Sizes> {
        let cache = memo::global_cache();
        cache
            .known_bytes(memo)
            .or_else(|| {
                self.recorded
                    .get(&key(memo.type_name(), &memo.describe()))
                    .copied()
            })
            .or_else(|| cache.type_bytes(memo))
            .or_else(|| self.recorded_types.get(memo.type_name()).copied())
    }

    /// Drops from `unknown` the memos whose size is known now; says
    /// whether there were any.
    fn forget_known(&mut self, schedule: &Schedule<'_>) -> bool {
        let before = self.unknown.len();
        let memos = schedule.memos();
        let mut unknown = std::mem::take(&mut self.unknown);
        unknown.retain(|&id| self.size(memos[id]).is_none());
        self.unknown = unknown;
        self.unknown.len() < before
    }

    /// Plans the cases left.
    pub(crate) fn plan(&mut self, schedule: &mut Schedule<'_>) {
        let cache = memo::global_cache();
        let plan = schedule.replan(&|m| self.size(m), self.budget, &|m| cache.contains(m));
        self.plan = Some(self.record(&plan, schedule));
    }

    /// After a case: counts its loads, and plans again if it taught the
    /// size of a memo type not known before.
    pub(crate) fn after(&mut self, schedule: &mut Schedule<'_>, case: &CaseRecord) {
        self.loaded.0 += case.memo.loads;
        self.loaded.1 += case.memo.bytes_loaded;
        if case.memo.loads > 0 && !self.unknown.is_empty() && self.forget_known(schedule) {
            self.plan(schedule);
        }
    }

    pub(crate) fn into_record(self) -> Option<PlanRecord> {
        self.plan
    }

    /// The record of `plan`, made after the loads so far.
    fn record(&self, plan: &BlockOrder, schedule: &Schedule<'_>) -> PlanRecord {
        let memos = schedule.memos();
        let all: Vec<Sizes> = memos
            .iter()
            .map(|m| self.size(*m).unwrap_or_default())
            .collect();
        let mut unknown: Vec<String> = self
            .unknown
            .iter()
            .map(|&id| memos[id].type_name().to_owned())
            .collect();
        unknown.sort_unstable();
        unknown.dedup();
        PlanRecord {
            order: plan.order.clone(),
            budget_bytes: self.flags.0,
            gpu_budget_bytes: self.flags.1,
            loads: self.loaded.0 + plan.cost.loads,
            bytes: self.loaded.1 + plan.cost.bytes,
            peak_bytes: plan.cost.peak.host,
            peak_gpu_bytes: plan.cost.peak.device,
            lower_bound_loads: memos.len() as u64,
            lower_bound_bytes: all.iter().map(|s| s.host + s.device).sum(),
            unknown_sizes: unknown,
        }
    }
}

/// What the disk tier's entry of `memo` says it holds, if it has one.
fn on_disk(memo: &dyn ErasedMemo) -> Option<Sizes> {
    if !memo.persists() {
        return None;
    }
    let (path, _) = memo.disk_key(&memo.seen())?;
    let header = memo::disk::header(&path).ok()?;
    Some(Sizes {
        host: header.meta.bytes?,
        device: header.meta.device_bytes,
    })
}

/// The sizes of the memos of the cases run, for the next run's plan.
#[derive(Default)]
pub(crate) struct Sizebook {
    noted: Vec<bool>,
    sizes: Vec<MemoSize>,
}

impl Sizebook {
    /// Notes the sizes of the memos of the case at `at`, once each.
    pub(crate) fn note(&mut self, schedule: &Schedule<'_>, at: usize) {
        let memos = schedule.memos();
        if self.noted.len() < memos.len() {
            self.noted.resize(memos.len(), false);
        }
        let cache = memo::global_cache();
        for &id in schedule.memos_of(at) {
            if self.noted[id] {
                continue;
            }
            if let Some(size) = cache.known_bytes(memos[id]) {
                self.noted[id] = true;
                self.sizes.push(MemoSize {
                    memo: memos[id].describe(),
                    type_name: memos[id].type_name().to_owned(),
                    bytes: size.host,
                    device_bytes: size.device,
                });
            }
        }
    }

    pub(crate) fn into_sizes(self) -> Vec<MemoSize> {
        self.sizes
    }
}

/// What `--list` says of the plan: the loads, bytes and peak it expects,
/// and the lower bound.
pub(crate) fn describe(plan: &PlanRecord) -> Vec<String> {
    let budgets: Vec<String> = [
        plan.budget_bytes
            .map(|b| format!("--memo-budget {}", format_bytes(b))),
        plan.gpu_budget_bytes
            .map(|b| format!("--memo-gpu-budget {}", format_bytes(b))),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut lines = vec![
        format!(
            "plan under {}: {} loads ({}), expected peak {}{}; order: {}",
            budgets.join(" and "),
            plan.loads,
            format_bytes(plan.bytes),
            format_bytes(plan.peak_bytes),
            if plan.peak_gpu_bytes > 0 {
                format!(" and {} of GPU memory", format_bytes(plan.peak_gpu_bytes))
            } else {
                String::new()
            },
            plan.order
        ),
        format!(
            "lower bound: {} loads ({}), each memo once",
            plan.lower_bound_loads,
            format_bytes(plan.lower_bound_bytes)
        ),
    ];
    if !plan.unknown_sizes.is_empty() {
        lines.push(format!(
            "sizes not known before they load (no disk entry or earlier record): {}; the run plans again once the first of each has loaded",
            plan.unknown_sizes.join(", ")
        ));
    }
    lines
}
