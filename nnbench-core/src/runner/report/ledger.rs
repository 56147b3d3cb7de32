//! What a run has so far, and how it becomes the run's record. The loop
//! adds to the ledger as cases finish; the watchdog of `--case-timeout`
//! may have to close the run from its own thread while a case still runs,
//! so both reach the ledger through a lock.

use super::console::Console;
use super::progress::Progress;
use crate::Result;
use crate::memo::journal::Said;
use crate::memo::{self, MemoStats};
use crate::record::{
    CaseRecord, MemoSize, MemosRecord, PlanRecord, RunContext, RunMemoRecord, RunRecord, SCHEMA,
    ShardRecord,
};
use crate::runner::setup::interrupt::Signal;
use crate::settings::Settings;

/// The finished cases and the run's warnings so far.
pub(crate) struct Ledger {
    pub records: Vec<CaseRecord>,
    pub warnings: Vec<String>,
    /// The warnings its cases said once a run.
    pub said: Vec<Said>,
    /// The progress file, written as cases finish.
    pub progress: Option<Progress>,
    /// The plan of the cases run in this process, and their memos' sizes.
    pub loading: Loading,
}

/// What the run in this process planned, and the sizes of the memos it
/// loaded.
#[derive(Default)]
pub(crate) struct Loading {
    pub plan: Option<PlanRecord>,
    pub sizes: Vec<MemoSize>,
}

impl Ledger {
    /// Prints `record`'s line, writes it to the progress file, keeps it.
    pub(crate) fn add(&mut self, record: CaseRecord, console: &Console) {
        console.case(&record);
        self.keep(record);
    }

    /// Writes `record` to the progress file and keeps it.
    pub(crate) fn keep(&mut self, record: CaseRecord) {
        if let Some(warning) = self.progress.as_mut().and_then(|p| p.append(&record)) {
            self.warnings.push(warning);
        }
        self.records.push(record);
    }
}

/// Why a run stopped before every case ran.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stop {
    Signal(Signal),
    /// A case ran past `--case-timeout` without `--isolate`.
    CaseTimeout,
}

impl Stop {
    /// The record's `interrupted`.
    fn name(self) -> &'static str {
        match self {
            Stop::Signal(signal) => signal.name(),
            Stop::CaseTimeout => "case-timeout",
        }
    }

    fn says(self) -> String {
        match self {
            Stop::Signal(signal) => format!("interrupted by {}", signal.name()),
            Stop::CaseTimeout => "stopped by --case-timeout".into(),
        }
    }
}

/// What the record takes from the run's start.
pub(crate) struct Closing {
    pub settings: Settings,
    pub name: String,
    pub started_at: String,
    pub context: RunContext,
    /// How busy the machine was as the cases started.
    pub busy: crate::measure::busy::Before,
    pub stats_before: MemoStats,
    /// Cases selected, those resumed from an earlier run included.
    pub total: usize,
    /// The shard of the sweep the run holds.
    pub shard: Option<ShardRecord>,
}

impl Closing {
    /// The run's record from what `ledger` holds. `workers_memo` is what workers
    /// did with their caches under `--isolate`; otherwise this process's
    /// cache since the run started.
    /// What this process's memo cache did during the run.
    pub(crate) fn local_memo(&self) -> RunMemoRecord {
        let after = memo::global_cache().stats();
        // Other threads of the process (tests running side by side)
        // count too; a bench binary runs alone.
        RunMemoRecord {
            counters: after.counters - self.stats_before.counters,
            entries_at_end: after.entries,
            resident_bytes_at_end: after.resident_bytes,
            disk_bytes_at_end: after.disk_bytes,
        }
    }

    pub(crate) fn record(
        &self,
        ledger: &mut Ledger,
        stop: Option<Stop>,
        workers_memo: Option<RunMemoRecord>,
    ) -> RunRecord {
        let mut warnings = std::mem::take(&mut ledger.warnings);
        warnings.extend(ledger.said.drain(..).map(|said| said.say()));
        match (stop, ledger.progress.take()) {
            (Some(stop), progress) => {
                // The file stays for `--resume`.
                drop(progress);
                warnings.push(format!(
                    "{}: {} of {} cases did not run; `--resume` runs them",
                    stop.says(),
                    self.total.saturating_sub(ledger.records.len()),
                    self.total
                ));
                if let Some(name) = &self.settings.baselines.save {
                    warnings.push(format!(
                        "baseline `{name}` is not saved from an interrupted run; `--resume --save-baseline {name}` saves the completed one"
                    ));
                }
            }
            (None, Some(progress)) => progress.remove(),
            (None, None) => {}
        }
        let cases_here = workers_memo.is_none();
        let memo = workers_memo.unwrap_or_else(|| self.local_memo());
        let plan = std::mem::take(&mut ledger.loading);
        let mut cases = std::mem::take(&mut ledger.records);
        if let Some(roofs) = self.context.machine.as_ref().and_then(|m| m.roofs.as_ref()) {
            for case in &mut cases {
                // One core, unless the case runs its calls on threads.
                let cores = case.threads.as_ref().map_or(1, |t| t.count as usize);
                if let Some(work) = &mut case.work {
                    work.place(roofs, cores);
                }
            }
        }
        if let Some(shard) = &self.shard {
            for case in &mut cases {
                case.shard = Some(shard.index);
            }
        }
        RunRecord {
            schema: SCHEMA,
            run: self.name.clone(),
            started_at: self.started_at.clone(),
            context: self.context_after(),
            memos: MemosRecord::of_cases(&cases, plan.plan, plan.sizes),
            scaling: crate::scaling::fit(&cases),
            capacity: crate::scaling::capacities(
                &cases,
                crate::scaling::capacity::Limits::of_run(
                    self.settings.memory.capacity_limit,
                    cases_here,
                    &self.context.gpu,
                ),
            ),
            cases,
            memo,
            warnings,
            prefetch: self.settings.memory.prefetch,
            isolate: self.settings.isolation.isolate,
            interrupted: stop.map(|s| s.name().to_owned()),
            shard: self.shard.clone(),
            shards: Vec::new(),
            paired: None,
        }
    }

    /// The run's context, with how busy the machine was around the run.
    fn context_after(&self) -> RunContext {
        let mut context = self.context.clone();
        if let Some(machine) = &mut context.machine {
            machine.busy = Some(self.busy.after());
        }
        context
    }

    /// Prints the table, then writes `latest.json`, the baseline and
    /// `--out` where the settings ask.
    pub(crate) fn finish(&self, record: &RunRecord, console: &Console) -> Result<()> {
        let settings = &self.settings;
        console.summary(record);
        // Under --isolate each worker prints its own cache as it ends.
        if settings.memory.print_cache && !settings.isolation.isolate {
            println!("\n{}", memo::summary());
        }
        if let Some(dir) = &settings.output.latest_dir {
            record.write(dir.join("latest.json"))?;
            // Half a run is no baseline: `--resume` completes it, and saves.
            if let Some(name) = &settings.baselines.save
                && record.interrupted.is_none()
            {
                record.write(crate::paths::baseline_path(dir, name))?;
            }
        }
        if let Some(out) = &settings.output.out {
            record.write(out)?;
        }
        Ok(())
    }
}
