//! The lifecycle of one case: resolve memos, setup, call, release the
//! memos, teardown, evict, measure. A failure in any step is recorded on the
//! case; teardown and eviction still happen.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value as Json;

use super::engine::{self, Engine, Timed, TimingPlan};
use super::{profile, resolve};
use crate::error::panic_message;
use crate::measure::CaseMeter;
use crate::measure::energy::EnergyMeter;
use crate::memo::{self, ErasedMemo, Sizes, journal};
use crate::record::{
    CaseError, CaseRecord, ConcurrencyRecord, EnergyRecord, GpuMethod, LeakRecord, LoadRecord,
    MemoRecord, MemoryRecord, SearchRecord, Stage, ThreadsRecord, ThroughputRecord, TimeRecord,
    TimingMode, WorkRecord,
};
use crate::registry::{Args, Body, Call, Case, Hook};
use crate::runner::order::Ahead;
use crate::runner::report::console::Console;
use crate::settings::Settings;
use crate::{Error, Result, State};

/// Where a case stands in its family, for the [`State`] its hooks receive.
#[derive(Clone, Copy)]
pub(crate) struct Place {
    pub family_size: usize,
    pub family_index: usize,
}

/// What the run does around a case's steps.
pub(crate) trait Around {
    /// The case enters `stage`: a supervisor that sees the case die or
    /// time out names the step it was in.
    fn entering(&mut self, stage: Stage);
    /// Called once the case's memos are resolved and its setup is done,
    /// just before the call: may start loading the next case's memos, and
    /// returns their descriptions.
    fn prefetch(&mut self) -> Vec<String>;
    /// When `memo` is used next, for the choice of what to evict.
    fn ahead(&self, memo: &dyn ErasedMemo) -> Ahead;
}

/// What the run lends each case: its settings, the timing engine, the
/// console, and what it does around the case's steps.
pub(crate) struct CaseRun<'r> {
    pub settings: &'r Settings,
    pub engine: &'r mut Engine,
    pub console: &'r Console,
    pub around: &'r mut dyn Around,
}

/// The memos to let go after a case: `unused` (those no later case uses),
/// and the inner memos no memo of `pending` (those later cases use) may
/// need again.
#[derive(Clone, Copy)]
pub(crate) struct Release<'m> {
    pub unused: &'m [&'m dyn ErasedMemo],
    pub pending: &'m [&'m dyn ErasedMemo],
}

/// Runs `case`'s steps, each a stage of its own: resolve its memos, set
/// up, call, tear down and, unless `keep_memos`, evict what `release`
/// names; then its record.
pub(crate) fn run_case(
    case: &Case,
    place: Place,
    release: Release<'_>,
    run: &mut CaseRun<'_>,
) -> CaseRecord {
    let cache = memo::global_cache();
    let settings = run.settings;
    let (memo_resident, mut meter) = start_meter(case, settings);
    let mut failure = Failure::default();
    // Made only for families with hooks: the owned strings cost a case.
    let state = (case.family.setup.is_some() || case.family.teardown.is_some()).then(|| State {
        name: case.id.clone(),
        family: String::from(&*case.family_name),
        family_size: place.family_size,
        family_index: place.family_index,
    });
    let mut resolved = resolve::memos(case, settings, &mut *run.around, &mut failure);
    if let Body::BrokenGrid(message) = &case.body {
        failure.add(Stage::Grid, &Error::msg(message));
    }
    if failure.is_clear() {
        run.around.entering(Stage::Setup);
        failure.record(
            Stage::Setup,
            run_hook(case.family.setup, state.as_ref(), case),
        );
    }
    resolved.memo.prefetched = run.around.prefetch();
    let called = match (failure.is_clear(), &case.body) {
        (true, Body::Call(call)) => {
            let fixtures = resolved.timed_load || case.family.setup.is_some();
            let calling = Calling {
                case,
                call: &**call,
                args: &resolved.args,
                fixtures,
            };
            calling.run(run, meter.as_mut(), &mut failure)
        }
        _ => Called::nothing(),
    };
    // Release the case's references first, so that a memo the teardown (or
    // the runner) evicts is freed, not reported as held elsewhere.
    drop(resolved.args);
    run.around.entering(Stage::Teardown);
    failure.record(
        Stage::Teardown,
        run_hook(case.family.teardown, state.as_ref(), case),
    );
    if !settings.memory.keep_memos {
        cache.release(release.unused, release.pending);
    }
    let journal = journal::take();
    note_evictions(&mut resolved.memo, journal.evictions);
    let memory = meter.map_or_else(MemoryRecord::default, |m| {
        m.finish(memo_resident.host, memo_resident.device)
    });
    record(
        case,
        Outcome {
            error: failure.into_record(),
            load_ns: resolved.load_ns,
            memory,
            memo: resolved.memo,
            journal_warnings: journal.warnings,
            called,
        },
    )
}

/// The memo cache's resident sizes as the case starts, and the meter of
/// its memory, unless memory figures are off.
fn start_meter(case: &Case, settings: &Settings) -> (Sizes, Option<CaseMeter>) {
    if settings.memory.no_memory {
        return (Sizes::default(), None);
    }
    // A scaling family's peaks are fitted against its sizes (and for its
    // capacity): each starts from what is live, and says what of it the
    // kernel could reclaim.
    let scaling = case.family.scaling.is_some();
    if scaling {
        crate::measure::rss::release_free_heap();
    }
    (
        memo::global_cache().resident_total(),
        Some(CaseMeter::start(scaling)),
    )
}

/// The call stage of a case whose memos resolved and whose setup passed.
struct Calling<'c> {
    case: &'c Case,
    call: &'c Call,
    args: &'c Args,
    /// Whether the case has fixtures (memos or a setup) whose memory is
    /// not the call's.
    fixtures: bool,
}

impl Calling<'_> {
    /// Times the call as the case's plan says, profiles it where asked,
    /// and counts its throughput and energy.
    fn run(
        &self,
        run: &mut CaseRun<'_>,
        mut meter: Option<&mut CaseMeter>,
        failure: &mut Failure,
    ) -> Called {
        let (case, settings) = (self.case, run.settings);
        let plan = engine::plan(case, &settings.timing);
        run.around.entering(Stage::Call);
        match meter.as_deref_mut() {
            Some(meter) if self.fixtures => meter.enter_call(),
            Some(meter) => meter.call_spans_case(),
            None => {}
        }
        let energy_meter = EnergyMeter::start();
        crate::measure::stream::begin_case(plan.seed);
        let timed = guarded(|| {
            run.engine.time(
                &case.id,
                self.call,
                self.args,
                &plan,
                run.console,
                meter.as_deref_mut(),
            )
        });
        // Before a profile's calls, which are not the timed ones.
        let energy_window = energy_meter.map(EnergyMeter::stop);
        // A search's requests are of several rates: the case's are those
        // of the rate it found.
        let streamed = match &timed {
            Ok(t) if t.search.is_some() => t.stream.as_deref().cloned(),
            Ok(_) => crate::measure::stream::finish_case(plan.slo),
            Err(_) => None,
        };
        let mut called = Called::nothing();
        if let (Ok(timed), true) = (&timed, settings.profiling.profile) {
            let profiling = profiled(
                case,
                self.call,
                self.args,
                &plan,
                timed,
                settings,
                meter.as_deref_mut(),
            );
            match profiling {
                Ok(Ok(path)) => called.profile = Some(path),
                Ok(Err(why)) => called.warnings.push(format!("no profile: {why}")),
                Err(error) => failure.add(Stage::Call, &error),
            }
        }
        if let Some(meter) = meter
            && case.family.teardown.is_some()
        {
            meter.leave_call();
        }
        let timed = match timed {
            Ok(timed) => timed,
            Err(error) => {
                failure.add(Stage::Call, &error);
                return called;
            }
        };
        if let Some(why) = missing_fields(case, &timed.metric) {
            failure.add(Stage::Call, &Error::msg(why));
        }
        match throughput_of(case, self.args, &timed) {
            Ok(rate) => called.throughput = rate,
            Err(error) => failure.add(Stage::Call, &error),
        }
        match work_of(case, self.args, &timed) {
            Ok(work) => called.work = work,
            Err(error) => failure.add(Stage::Call, &error),
        }
        let per_call = called.throughput.map(|t| t.per_call);
        called.energy = energy_window.map(|w| w.record(timed.time.median_ns, per_call));
        if let Some(late) = timed.load.as_deref().and_then(client_fell_behind) {
            called.warnings.push(late);
        }
        Called {
            value: timed.metric,
            time: timed.time,
            concurrency: timed.concurrency,
            threads: timed.threads,
            load: timed.load,
            search: timed.search,
            stream: streamed.map(Box::new),
            ..called
        }
    }
}

/// What to say of an open loop whose client could not keep up with its
/// rate: its latencies count from when each request was due, so they hold
/// the client's own delay, and a slower client reads as a slower service.
fn client_fell_behind(load: &LoadRecord) -> Option<String> {
    load.client_fell_behind().then(|| {
        format!(
            "the client issued {:.1}% of its requests more than {} late (at {}/s): the latencies hold its delay; a busy machine, a service that takes every core, or a rate beyond what one dispatcher thread issues",
            100.0 * load.late_fraction,
            nnbench_vocab::format_ns(load.late_after_ns.unwrap_or(1e5)),
            nnbench_vocab::format_count(load.offered_rate)
        )
    })
}

/// Notes on a case's memo record what it evicted, and which of those
/// stayed alive through a reference held elsewhere.
pub(crate) fn note_evictions(record: &mut MemoRecord, evictions: Vec<journal::Eviction>) {
    for eviction in evictions {
        if eviction.references > 0 {
            record.leaked.push(LeakRecord {
                memo: eviction.memo.clone(),
                references: eviction.references,
            });
        }
        record.evicted.push(eviction.memo);
    }
}

/// The case's throughput, for a family that declares one and a call that
/// was timed: its expression counted over the case's arguments, at the
/// rate of the median call, or of the requests that finished under load.
fn throughput_of(case: &Case, args: &Args, timed: &Timed) -> Result<Option<ThroughputRecord>> {
    let Some((unit, count)) = &case.throughput else {
        return Ok(None);
    };
    let per_call = guarded(|| count(args)).map_err(|e| e.context("counting its throughput"))?;
    Ok(calls_per_second(timed).map(|rate| ThroughputRecord {
        unit: *unit,
        per_call,
        per_second: per_call as f64 * rate,
    }))
}

/// The work a case's call does and the rates it was done at, for a family
/// that declares it and a call that was timed, at the rate
/// [`calls_per_second`] gives.
fn work_of(case: &Case, args: &Args, timed: &Timed) -> Result<Option<WorkRecord>> {
    let Some(work) = &case.work else {
        return Ok(None);
    };
    let per_call = guarded(|| work(args)).map_err(|e| e.context("counting its work"))?;
    Ok(calls_per_second(timed).map(|rate| {
        let mut record = WorkRecord::new(per_call.flops, per_call.bytes, rate);
        if per_call.single && record.flops.is_some() {
            record.precision = Some(crate::record::FloatPrecision::F32);
        }
        record
    }))
}

/// Calls a second: the requests that finished under load, else one over
/// the median call; none for a call not timed in time (`instructions`).
fn calls_per_second(timed: &Timed) -> Option<f64> {
    let under_load = timed
        .concurrency
        .map(|c| c.requests_per_second)
        .or(timed.load.as_ref().map(|l| l.achieved_rate));
    let time = &timed.time;
    under_load.or(
        (time.median_ns > 0.0 && time.mode != TimingMode::Instructions)
            .then(|| 1e9 / time.median_ns),
    )
}

fn run_hook(hook: Option<Hook>, state: Option<&State>, case: &Case) -> Result<()> {
    match (hook, state) {
        (Some(hook), Some(state)) => guarded(|| hook(state, &case.params)),
        _ => Ok(()),
    }
}

/// Runs `f`, turning a panic into an error that carries its message.
/// The case's calls under the profiler, once they were timed: the path
/// of their flamegraph, or why there is none. What the profiled calls
/// used is not the case's memory.
fn profiled(
    case: &Case,
    call: &Call,
    args: &Args,
    plan: &TimingPlan,
    timed: &Timed,
    settings: &Settings,
    mut meter: Option<&mut CaseMeter>,
) -> Result<std::result::Result<PathBuf, String>> {
    if let Some(why) = profile::refused(plan) {
        return Ok(Err(why));
    }
    if let Some(meter) = meter.as_deref_mut() {
        meter.checkpoint();
    }
    let per_call = Duration::from_nanos(timed.time.median_ns as u64);
    let dir = profile::dir(settings);
    let taken = guarded(|| profile::take(&case.id, call, args, plan, per_call, &dir));
    if let Some(meter) = meter {
        meter.forget_since_checkpoint();
    }
    taken
}

fn guarded<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        Err(Error::msg(format!(
            "panicked: {}",
            panic_message(&*payload)
        )))
    })
}

/// The first failure of a case, with later ones attached.
#[derive(Default)]
pub(super) struct Failure(Option<CaseError>);

impl Failure {
    fn is_clear(&self) -> bool {
        self.0.is_none()
    }

    pub(super) fn add(&mut self, stage: Stage, error: &Error) {
        let error = CaseError::of(stage, error);
        match &mut self.0 {
            None => self.0 = Some(error),
            Some(first) => first.also.push(error),
        }
    }

    fn record(&mut self, stage: Stage, outcome: Result<()>) {
        if let Err(error) = outcome {
            self.add(stage, &error);
        }
    }

    fn into_record(self) -> Option<CaseError> {
        self.0
    }
}

/// The record of a case that never finished (its process died, or it ran
/// past `--case-timeout`): failed in `stage` with `message`, nothing timed.
pub(crate) fn unfinished(
    case: &Case,
    stage: Stage,
    message: String,
    causes: Vec<String>,
    memory: MemoryRecord,
) -> CaseRecord {
    record(
        case,
        Outcome {
            error: Some(CaseError {
                stage,
                message,
                causes,
                also: Vec::new(),
            }),
            load_ns: 0,
            memory,
            memo: MemoRecord::default(),
            journal_warnings: Vec::new(),
            called: Called::nothing(),
        },
    )
}

/// What a case came to: the parts of its record that running it made.
struct Outcome {
    error: Option<CaseError>,
    load_ns: u64,
    memory: MemoryRecord,
    memo: MemoRecord,
    /// What was said while the case ran, besides its call's warnings.
    journal_warnings: Vec<String>,
    called: Called,
}

/// What a case's call came to: nothing timed where it was not called.
struct Called {
    value: Json,
    time: TimeRecord,
    throughput: Option<ThroughputRecord>,
    work: Option<WorkRecord>,
    concurrency: Option<ConcurrencyRecord>,
    load: Option<Box<LoadRecord>>,
    search: Option<Box<SearchRecord>>,
    stream: Option<Box<crate::record::StreamRecord>>,
    threads: Option<ThreadsRecord>,
    energy: Option<Box<EnergyRecord>>,
    profile: Option<PathBuf>,
    warnings: Vec<String>,
}

impl Called {
    /// A case that was not called: no value, no samples.
    fn nothing() -> Self {
        Called {
            value: Json::Null,
            time: TimeRecord {
                samples: 0,
                iters: 0,
                ..TimeRecord::default()
            },
            throughput: None,
            work: None,
            concurrency: None,
            load: None,
            search: None,
            stream: None,
            threads: None,
            energy: None,
            profile: None,
            warnings: Vec::new(),
        }
    }
}

/// The record of `case`, which came to `outcome`.
fn record(case: &Case, outcome: Outcome) -> CaseRecord {
    let Outcome {
        error,
        load_ns,
        memory,
        memo,
        journal_warnings,
        called,
    } = outcome;
    let mut time = called.time;
    // A call that synchronizes itself leaves nothing queued for the clock
    // to wait for; the device memory it took tells that it used one.
    time.used_device |= memory.gpu_method == Some(GpuMethod::TorchAllocator)
        && memory.call_gpu_peak_bytes.is_some_and(|b| b > 0);
    let warnings = if called.warnings.is_empty() {
        journal_warnings
    } else {
        [called.warnings, journal_warnings].concat()
    };
    CaseRecord {
        id: case.id.clone(),
        family: String::from(&*case.family_name),
        params: case.take_record_params(),
        tags: case.family.tags.iter().map(|&t| t.to_owned()).collect(),
        value: called.value,
        direction: case.family.direction,
        fail_on: case.family.fail_on.map(str::to_owned),
        error: error.map(Box::new),
        time,
        load_ns,
        memory,
        memo,
        warnings,
        shard: None,
        paired: None,
        throughput: called.throughput.map(Box::new),
        work: called.work.map(Box::new),
        concurrency: called.concurrency.map(Box::new),
        load: called.load,
        search: called.search,
        stream: called.stream,
        threads: called.threads.map(Box::new),
        energy: called.energy,
        profile: called.profile,
        directions: case
            .family
            .directions
            .iter()
            .map(|&(path, direction)| (path.to_owned(), direction))
            .collect(),
        scales_with: case.family.scaling.map(str::to_owned),
    }
}

/// Why `value` cannot be judged as the family's `metric` names its fields:
/// a field it lacks, or one that holds no number.
fn missing_fields(case: &Case, value: &Json) -> Option<String> {
    let missing: Vec<&str> = case
        .family
        .directions
        .iter()
        .map(|&(path, _)| path)
        .filter(|path| {
            crate::record::field(value, path)
                .and_then(Json::as_f64)
                .is_none()
        })
        .collect();
    if missing.is_empty() {
        return None;
    }
    let has: Vec<String> = crate::record::numeric_fields(value)
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    let named: Vec<String> = missing.iter().map(|p| format!("`{p}`")).collect();
    Some(format!(
        "metric names {} {}, which the returned value does not hold as a number ({})",
        if missing.len() == 1 {
            "field"
        } else {
            "fields"
        },
        named.join(", "),
        if has.is_empty() {
            format!("it returned {value}")
        } else {
            format!("its numeric fields: {}", has.join(", "))
        }
    ))
}
