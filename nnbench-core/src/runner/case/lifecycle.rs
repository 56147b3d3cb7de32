//! The lifecycle of one case: resolve memos, setup, call, release the
//! memos, teardown, evict, measure. A failure in any step is recorded on the
//! case; teardown and eviction still happen.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use nnbench_vocab::format_bytes;
use serde_json::Value as Json;

use super::engine::{self, Engine, Timed, TimingPlan};
use super::profile;
use crate::error::panic_message;
use crate::measure::CaseMeter;
use crate::measure::energy::EnergyMeter;
use crate::memo::{self, ErasedMemo, Resolution, Sizes, journal};
use crate::record::{
    CaseError, CaseRecord, ConcurrencyRecord, EnergyRecord, GpuMethod, LeakRecord, LoadRecord,
    MemoRecord, MemoSize, MemoryRecord, SearchRecord, Stage, ThreadsRecord, ThroughputRecord,
    TimeRecord, TimingMode,
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

/// Runs `case` and, unless `keep_memos`, evicts `unused` (memos no later
/// case uses) and the inner memos that no memo of `pending` (those later
/// cases use) may need again.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_case(
    case: &Case,
    place: Place,
    unused: &[&dyn ErasedMemo],
    pending: &[&dyn ErasedMemo],
    settings: &Settings,
    engine: &mut Engine,
    console: &Console,
    around: &mut dyn Around,
) -> CaseRecord {
    let cache = memo::global_cache();
    let (memo_resident, mut meter) = if settings.memory.no_memory {
        (Sizes::default(), None)
    } else {
        // A scaling family's peaks are fitted against its sizes (and for
        // its capacity): each starts from what is live.
        if case.family.scaling.is_some() {
            crate::measure::rss::release_free_heap();
        }
        (cache.resident_total(), Some(CaseMeter::start()))
    };
    let mut failure = Failure::default();

    // Made only for families with hooks: the owned strings cost a case.
    let state = (case.family.setup.is_some() || case.family.teardown.is_some()).then(|| State {
        name: case.id.clone(),
        family: String::from(&*case.family_name),
        family_size: place.family_size,
        family_index: place.family_index,
    });
    // Cases without memos skip the clock: two reads of it cost a case.
    let load_start = case.params.memos().next().map(|_| Instant::now());
    around.entering(Stage::Memo);
    let mut args = Args::default();
    let mut memo_record = MemoRecord::default();
    let budgeted =
        settings.memory.memo_budget.is_some() || settings.memory.memo_gpu_budget.is_some();
    for (index, memo) in case.params.memos() {
        if budgeted && !cache.contains(memo) {
            make_room(
                settings,
                cache.estimated_bytes(memo) + cache.expected_inputs_bytes(memo),
                case,
                around,
            );
        }
        memo_record.inputs.extend(memo.input());
        let (value, how) = memo::resolve_erased(memo);
        memo_record.counters += how.counters(value.is_err());
        if how == Resolution::Computed && value.is_ok() {
            memo_record.computed.push(memo.describe());
        }
        if how != Resolution::Hit && value.is_ok() {
            let size = cache.known_bytes(memo).unwrap_or_default();
            memo_record.loads += 1;
            memo_record.bytes_loaded += size.host + size.device;
        }
        if value.is_ok() && cache.made_by_other_build(memo) {
            memo_record.made_by_other_build.push(memo.describe());
        }
        if value.is_ok()
            && let Some(size) = cache.known_bytes(memo)
            && size.host + size.device > 0
        {
            memo_record.sizes.push(MemoSize {
                memo: memo.describe(),
                type_name: memo.type_name().to_owned(),
                bytes: size.host,
                device_bytes: size.device,
            });
        }
        if budgeted {
            make_room(settings, Sizes::default(), case, around);
        }
        match value {
            Ok(value) => args.set(index, value),
            Err(error) => failure.add(Stage::Memo, &Error::from(error)),
        }
    }
    let load_ns = load_start.map_or(0, |start| start.elapsed().as_nanos() as u64);

    if let Body::BrokenGrid(message) = &case.body {
        failure.add(Stage::Grid, &Error::msg(message));
    }
    if failure.is_clear() {
        around.entering(Stage::Setup);
        failure.record(
            Stage::Setup,
            run_hook(case.family.setup, state.as_ref(), case),
        );
    }
    memo_record.prefetched = around.prefetch();
    let mut value = Json::Null;
    let mut throughput = None;
    let mut energy = None;
    let (mut concurrency, mut threads, mut load, mut search) = (None, None, None, None);
    let (mut profile, mut warnings) = (None, Vec::new());
    let mut time = TimeRecord {
        samples: 0,
        iters: 0,
        ..TimeRecord::default()
    };
    if let (true, Body::Call(call)) = (failure.is_clear(), &case.body) {
        let plan = engine::plan(case, &settings.timing);
        around.entering(Stage::Call);
        let fixtures = load_start.is_some() || case.family.setup.is_some();
        match meter.as_mut() {
            Some(meter) if fixtures => meter.enter_call(),
            Some(meter) => meter.call_spans_case(),
            None => {}
        }
        let energy_meter = EnergyMeter::start();
        let timed =
            guarded(|| engine.time(&case.id, &**call, &args, &plan, console, meter.as_mut()));
        // Before a profile's calls, which are not the timed ones.
        let energy_window = energy_meter.map(EnergyMeter::stop);
        if let (Ok(timed), true) = (&timed, settings.profiling.profile) {
            match profiled(case, &**call, &args, &plan, timed, settings, meter.as_mut()) {
                Ok(Ok(path)) => profile = Some(path),
                Ok(Err(why)) => warnings.push(format!("no profile: {why}")),
                Err(error) => failure.add(Stage::Call, &error),
            }
        }
        if let Some(meter) = meter.as_mut()
            && case.family.teardown.is_some()
        {
            meter.leave_call();
        }
        match timed {
            Ok(timed) => {
                if let Some(why) = missing_fields(case, &timed.metric) {
                    failure.add(Stage::Call, &Error::msg(why));
                }
                match throughput_of(case, &args, &timed) {
                    Ok(rate) => throughput = rate,
                    Err(error) => failure.add(Stage::Call, &error),
                }
                energy = energy_window
                    .map(|w| w.record(timed.time.median_ns, throughput.map(|t| t.per_call)));
                (value, time) = (timed.metric, timed.time);
                (concurrency, threads) = (timed.concurrency, timed.threads);
                if let Some(late) = timed.load.as_deref().and_then(client_fell_behind) {
                    warnings.push(late);
                }
                (load, search) = (timed.load, timed.search);
            }
            Err(error) => failure.add(Stage::Call, &error),
        }
    }
    // Release the case's references first, so that a memo the teardown (or
    // the runner) evicts is freed, not reported as held elsewhere.
    drop(args);
    around.entering(Stage::Teardown);
    failure.record(
        Stage::Teardown,
        run_hook(case.family.teardown, state.as_ref(), case),
    );
    if !settings.memory.keep_memos {
        cache.release(unused, pending);
    }
    let journal = journal::take();
    note_evictions(&mut memo_record, journal.evictions);

    record(
        case,
        Outcome {
            value,
            error: failure.into_record(),
            time,
            load_ns,
            memory: meter.map_or_else(MemoryRecord::default, |m| {
                m.finish(memo_resident.host, memo_resident.device)
            }),
            memo: memo_record,
            warnings: if warnings.is_empty() {
                journal.warnings
            } else {
                [warnings, journal.warnings].concat()
            },
            throughput,
            concurrency,
            load,
            search,
            threads,
            energy,
            profile,
        },
    )
}

/// What to say of an open loop whose client could not keep up with its
/// rate: its latencies count from when each request was due, so they hold
/// the client's own delay, and a slower client reads as a slower service.
fn client_fell_behind(load: &LoadRecord) -> Option<String> {
    (load.late_fraction > crate::record::LATE_SHARE).then(|| {
        format!(
            "the client issued {:.1}% of its requests more than 100 µs late (at {} a second): the latencies hold its delay; a busy machine, or a rate beyond what one dispatcher thread issues",
            100.0 * load.late_fraction,
            load.offered_rate
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
    let time = &timed.time;
    let under_load = timed
        .concurrency
        .map(|c| c.requests_per_second)
        .or(timed.load.as_ref().map(|l| l.achieved_rate));
    if let Some(rate) = under_load {
        return Ok(Some(ThroughputRecord {
            unit: *unit,
            per_call,
            per_second: per_call as f64 * rate,
        }));
    }
    Ok(
        (time.median_ns > 0.0 && time.mode != TimingMode::Instructions)
            .then(|| ThroughputRecord::new(*unit, per_call, time.median_ns)),
    )
}

/// Evicts memos that `case` does not use until what it `need`s more fits
/// in the host and GPU budgets: under a plan, those used furthest ahead
/// first (memos that are no case's parameter before any that is), else the
/// least recently used. When the case's own memos exceed a budget, they
/// load anyway, with a warning said once a run.
fn make_room(settings: &Settings, need: Sizes, case: &Case, around: &dyn Around) {
    let ahead = |memo: &dyn ErasedMemo| match around.ahead(memo) {
        Ahead::Unplanned => 0,
        Ahead::In(places) => places as u64,
        Ahead::Outside => u64::MAX - 1,
        Ahead::Never => u64::MAX,
    };
    if let Some(budget) = settings.memory.memo_budget {
        make_room_in(budget, need.host, false, case, &ahead);
    }
    if let Some(budget) = settings.memory.memo_gpu_budget {
        make_room_in(budget, need.device, true, case, &ahead);
    }
}

/// [`make_room`] in one budget: GPU memory if `on_device`, else host.
fn make_room_in(
    budget: u64,
    need: u64,
    on_device: bool,
    case: &Case,
    ahead: &dyn Fn(&dyn ErasedMemo) -> u64,
) {
    let cache = memo::global_cache();
    let held = || {
        let total = cache.resident_total();
        if on_device { total.device } else { total.host }
    };
    let keep = |m: &dyn ErasedMemo| case.params.memos().any(|(_, own)| own.same_as(m));
    while held().saturating_add(need) > budget {
        if !cache.evict_one(&keep, on_device, ahead) {
            // Said once a run: each case over the budget says the same.
            journal::warn_once(format!(
                "a case's memos need more than the memo {}budget of {}; they load anyway",
                if on_device { "GPU " } else { "" },
                format_bytes(budget)
            ));
            return;
        }
    }
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
struct Failure(Option<CaseError>);

impl Failure {
    fn is_clear(&self) -> bool {
        self.0.is_none()
    }

    fn add(&mut self, stage: Stage, error: &Error) {
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
            value: Json::Null,
            error: Some(CaseError {
                stage,
                message,
                causes,
                also: Vec::new(),
            }),
            time: TimeRecord {
                samples: 0,
                iters: 0,
                ..TimeRecord::default()
            },
            load_ns: 0,
            memory,
            memo: MemoRecord::default(),
            warnings: Vec::new(),
            throughput: None,
            concurrency: None,
            load: None,
            search: None,
            threads: None,
            energy: None,
            profile: None,
        },
    )
}

/// What a case came to: the parts of its record that running it made.
struct Outcome {
    value: Json,
    error: Option<CaseError>,
    time: TimeRecord,
    load_ns: u64,
    memory: MemoryRecord,
    memo: MemoRecord,
    warnings: Vec<String>,
    throughput: Option<ThroughputRecord>,
    concurrency: Option<ConcurrencyRecord>,
    load: Option<Box<LoadRecord>>,
    search: Option<Box<SearchRecord>>,
    threads: Option<ThreadsRecord>,
    energy: Option<Box<EnergyRecord>>,
    profile: Option<PathBuf>,
}

/// The record of `case`, which came to `outcome`.
fn record(case: &Case, mut outcome: Outcome) -> CaseRecord {
    // A call that synchronizes itself leaves nothing queued for the clock
    // to wait for; the device memory it took tells that it used one.
    outcome.time.used_device |= outcome.memory.gpu_method == Some(GpuMethod::TorchAllocator)
        && outcome.memory.call_gpu_peak_bytes.is_some_and(|b| b > 0);
    CaseRecord {
        id: case.id.clone(),
        family: String::from(&*case.family_name),
        params: case.take_record_params(),
        tags: case.family.tags.iter().map(|&t| t.to_owned()).collect(),
        value: outcome.value,
        direction: case.family.direction,
        fail_on: case.family.fail_on.map(str::to_owned),
        error: outcome.error.map(Box::new),
        time: outcome.time,
        load_ns: outcome.load_ns,
        memory: outcome.memory,
        memo: outcome.memo,
        warnings: outcome.warnings,
        shard: None,
        paired: None,
        throughput: outcome.throughput.map(Box::new),
        concurrency: outcome.concurrency.map(Box::new),
        load: outcome.load,
        search: outcome.search,
        threads: outcome.threads.map(Box::new),
        energy: outcome.energy,
        profile: outcome.profile,
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
