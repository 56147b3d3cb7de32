//! The lifecycle of one case: resolve memos, setup, call, release the
//! memos, teardown, evict, measure. A failure in any step is recorded on the
//! case; teardown and eviction still happen.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use serde_json::Value as Json;

use crate::__private::{Args, Hook, Timer};
use crate::measure::CaseMeter;
use crate::memo::{self, ErasedMemo, Resolution, journal};
use crate::panic_message;
use crate::record::{CaseError, CaseRecord, LeakRecord, MemoRecord, Stage, TimeRecord};
use crate::registry::{Body, Case};
use crate::{Error, Result, State};

/// Runs `case` and evicts `unused` (memos no later case needs) unless
/// `keep_memos`.
pub(crate) fn run(
    case: &Case,
    state: &State,
    unused: &[&dyn ErasedMemo],
    keep_memos: bool,
) -> CaseRecord {
    let cache = memo::global_cache();
    let memo_resident_bytes = cache.stats().resident_bytes;
    journal::start();
    let meter = CaseMeter::start();
    let mut failure = Failure::default();

    let load_start = Instant::now();
    let mut args = Args::with_len(case.params.len());
    let mut memo_record = MemoRecord::default();
    for (index, memo) in case.params.memos() {
        let (value, how) = memo::resolve_erased(memo);
        match how {
            Resolution::Hit => memo_record.hits += 1,
            Resolution::Computed => memo_record.misses += 1,
        }
        match value {
            Ok(value) => args.set(index, value),
            Err(error) => failure.add(Stage::Memo, &Error::from(error)),
        }
    }
    let load_ns = load_start.elapsed().as_nanos() as u64;

    if let Body::BrokenGrid(message) = &case.body {
        failure.add(Stage::Grid, &Error::msg(message));
    }
    if failure.is_clear() {
        failure.record(Stage::Setup, run_hook(case.family.setup, state, case));
    }
    let mut value = Json::Null;
    let mut time = TimeRecord {
        samples: 0,
        iters: 0,
        ..TimeRecord::default()
    };
    if let (true, Body::Call(call)) = (failure.is_clear(), &case.body) {
        let mut timer = Timer::default();
        match guarded(|| call(&args, &mut timer)) {
            Ok(metric) => value = metric,
            Err(error) => failure.add(Stage::Call, &error),
        }
        if let Some(elapsed) = timer.elapsed() {
            time = TimeRecord::once(elapsed.as_nanos() as f64);
        }
    }
    // Release the case's references first, so that a memo the teardown (or
    // the runner) evicts is freed, not reported as held elsewhere.
    drop(args);
    failure.record(Stage::Teardown, run_hook(case.family.teardown, state, case));
    if !keep_memos {
        for memo in unused {
            cache.evict(*memo);
        }
    }
    for eviction in journal::take() {
        if eviction.references > 0 {
            memo_record.leaked.push(LeakRecord {
                memo: eviction.memo.clone(),
                references: eviction.references,
            });
        }
        memo_record.evicted.push(eviction.memo);
    }

    CaseRecord {
        id: case.id.clone(),
        family: case.family.name.clone(),
        params: case.params.to_json(),
        tags: case.family.tags.clone(),
        value,
        error: failure.into_record(),
        time,
        load_ns,
        memory: meter.finish(memo_resident_bytes),
        memo: memo_record,
    }
}

fn run_hook(hook: Option<Hook>, state: &State, case: &Case) -> Result<()> {
    match hook {
        Some(hook) => guarded(|| hook(state, &case.params)),
        None => Ok(()),
    }
}

/// Runs `f`, turning a panic into an error that carries its message.
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
        let error = CaseError::new(stage, error);
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
