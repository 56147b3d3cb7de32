//! The loop over a run's cases, in the process that runs them: order them
//! by their memos, run each through its lifecycle, hand each record to a
//! [`Sink`], stop when asked. The runner's own process and an `--isolate`
//! worker share it; they differ in their sinks.

use super::tier_limit::TierLimit;
use crate::measure::rss;
use crate::memo::journal::{self, Said};
use crate::memo::{self, ErasedMemo};
use crate::record::{CaseRecord, Stage};
use crate::registry::Case;
use crate::runner::case::engine::Engine;
use crate::runner::case::lifecycle::{self, Around};
use crate::runner::case::prefetch::Prefetcher;
use crate::runner::case::scaling_rounds::{CaseRounds, Groups, Taken};
use crate::runner::order::{Ahead, Schedule};
use crate::runner::order::{Planning, Sizebook};
use crate::runner::report::console::Console;
use crate::runner::report::ledger::Loading;
use crate::runner::setup::interrupt::Signal;
use crate::settings::Settings;

/// Where the cases of a run report as they go.
pub(crate) trait Sink {
    /// `case` starts: its memos resolve next.
    fn starting(&mut self, case: &Case);
    /// The running case enters `stage`.
    fn stage(&mut self, stage: Stage);
    /// A case finished, failed or not.
    fn finished(&mut self, record: CaseRecord);
    /// Whether the run should stop, and why: checked before each case and
    /// after it.
    fn stop(&mut self) -> Option<Signal>;
}

/// How the loop ended.
pub(crate) struct End {
    /// The signal that stopped it before every case ran.
    pub interrupted: Option<Signal>,
    /// What was said between cases: the run's warnings.
    pub warnings: Vec<String>,
    /// The warnings its cases said once a run.
    pub said: Vec<Said>,
    /// What it planned, and its memos' sizes.
    pub loading: Loading,
    /// The interleaved rounds of its scaling families, for the records
    /// the sink was given.
    pub rounds: Vec<CaseRounds>,
}

/// Runs `selected` in the order their memos make cheapest; each record
/// goes to `sink`. The memos of `later` (cases a later run of this
/// process is given) stay resident.
pub(crate) fn run_cases(
    selected: &[&Case],
    later: &[&Case],
    settings: &Settings,
    console: &Console,
    sink: &mut dyn Sink,
) -> End {
    let mut places = Places::of(selected);
    memo::begin_run();
    crate::measure::read_rss_choice();
    // What was resident as an earlier run's last case ended is no figure
    // for this run's first.
    rss::forget_reading();
    let mut tier_limit = TierLimit::new(settings);
    tier_limit.keep();
    let mut schedule = Schedule::keeping(selected, later);
    let mut planning = Planning::new(settings, &schedule);
    if let Some(planning) = &mut planning {
        planning.plan(&mut schedule);
    }
    let mut sizebook = Sizebook::default();
    let cache = memo::global_cache();
    let mut engine = Engine::new(settings.baselines.clone());
    let mut prefetcher = Prefetcher::new(settings);
    let mut groups = Groups::of(selected, settings);
    if settings.profiling.profile {
        crate::measure::profile::prepare();
    }
    let mut end = End {
        interrupted: None,
        warnings: Vec::new(),
        said: Vec::new(),
        loading: Loading::default(),
        rounds: Vec::new(),
    };
    while let Some(at) = schedule.next(|m| cache.resident_bytes(m)) {
        if let Some(signal) = sink.stop() {
            end.interrupted = Some(signal);
            break;
        }
        let case = selected[at];
        let unused = groups.hold(schedule.finish(at));
        let pending = schedule.pending();
        let place = places.next(case);
        // What was said between cases belongs to the run.
        end.warnings.extend(journal::take().warnings);
        journal::next_case();
        sink.starting(case);
        // The load started beside the last case belongs to this one; what
        // it made resident, this case reads as it starts.
        if prefetcher.in_flight() {
            rss::forget_reading();
        }
        let (loaded, waited) = prefetcher.wait();
        let mut around = Steps {
            sink: &mut *sink,
            schedule: &mut schedule,
            prefetcher: &mut prefetcher,
            selected,
        };
        let release = lifecycle::Release {
            unused: &unused,
            pending: &pending,
        };
        let mut run = lifecycle::CaseRun {
            settings,
            engine: &mut engine,
            console,
            around: &mut around,
        };
        let mut record = lifecycle::run_case(case, place, release, &mut run);
        record.load_ns += waited.as_nanos() as u64;
        record.warnings.extend(loaded);
        sizebook.note(&schedule, at);
        if let Some(planning) = &mut planning {
            planning.after(&mut schedule, &record);
        }
        let stop = sink.stop();
        if stop.is_none()
            && let Some(taken) = groups.finished(at, &record)
        {
            let pending = schedule.pending();
            end.rounds
                .extend(rounds_taken(taken, &mut record, &pending, settings));
        }
        if let Some(signal) = stop {
            record.warnings.push(format!(
                "the run was interrupted ({}) while this case ran: it finished, the cases after it did not run",
                signal.name()
            ));
        }
        sink.finished(record);
        tier_limit.keep();
        if stop.is_some() {
            end.interrupted = stop;
            break;
        }
    }
    // A load started beside the last case finishes before the record.
    prefetcher.wait();
    engine.finish(console);
    end.warnings.extend(journal::take().warnings);
    end.said = journal::take_said();
    end.loading = Loading {
        plan: planning.and_then(Planning::into_record),
        sizes: sizebook.into_sizes(),
    };
    end
}

/// Where each case stands in its family, counted as the cases run.
struct Places {
    sizes: Vec<usize>,
    seen: Vec<usize>,
}

impl Places {
    fn of(selected: &[&Case]) -> Self {
        let families = selected.iter().map(|c| c.family_ordinal + 1).max();
        let mut sizes = vec![0; families.unwrap_or(0)];
        for case in selected {
            sizes[case.family_ordinal] += 1;
        }
        let seen = vec![0; sizes.len()];
        Places { sizes, seen }
    }

    /// The place of `case`, the next of its family to run.
    fn next(&mut self, case: &Case) -> lifecycle::Place {
        let index = &mut self.seen[case.family_ordinal];
        let place = lifecycle::Place {
            family_size: self.sizes[case.family_ordinal],
            family_index: *index,
        };
        *index += 1;
        place
    }
}

/// Once a scaling family's last case ran (`record`), what its rounds held
/// is evicted now, as the case's eviction, and what they said is said of
/// the case; their rounds, for the run.
fn rounds_taken(
    taken: Taken<'_>,
    record: &mut CaseRecord,
    pending: &[&dyn ErasedMemo],
    settings: &Settings,
) -> Vec<CaseRounds> {
    if !settings.memory.keep_memos {
        memo::global_cache().release(&taken.held, pending);
        rss::forget_reading();
    }
    let journal = journal::take();
    lifecycle::note_evictions(&mut record.memo, journal.evictions);
    record.warnings.extend(journal.warnings);
    taken.rounds
}

/// The running case's steps, told to the sink; the next case's memos,
/// loaded beside its call.
struct Steps<'s, 'a> {
    sink: &'s mut dyn Sink,
    schedule: &'s mut Schedule<'a>,
    prefetcher: &'s mut Prefetcher,
    selected: &'s [&'a Case],
}

impl Around for Steps<'_, '_> {
    fn entering(&mut self, stage: Stage) {
        self.sink.stage(stage);
    }

    fn prefetch(&mut self) -> Vec<String> {
        // The next case is looked up only for a load.
        if !self.prefetcher.enabled() {
            return Vec::new();
        }
        let cache = memo::global_cache();
        let Some(next) = self.schedule.peek(|m| cache.resident_bytes(m)) else {
            return Vec::new();
        };
        let memos: Vec<_> = self.selected[next].params.memos().map(|(_, m)| m).collect();
        self.prefetcher.start(&memos)
    }

    fn ahead(&self, memo: &dyn ErasedMemo) -> Ahead {
        self.schedule.ahead(memo)
    }
}
