//! A case's first stage: its memos resolved through the cache, within the
//! memory budgets, and what that did in its memo record.

use std::time::Instant;

use nnbench_vocab::format_bytes;

use super::lifecycle::{Around, Failure};
use crate::Error;
use crate::memo::{self, ErasedMemo, Resolution, Sizes, journal};
use crate::record::{MemoRecord, MemoSize, Stage};
use crate::registry::{Args, Case};
use crate::runner::order::Ahead;
use crate::settings::Settings;

/// A case's memos, resolved.
pub(super) struct Resolved {
    /// The case's arguments, its memos' values among them.
    pub args: Args,
    /// What resolving them did: hits, loads, sizes.
    pub memo: MemoRecord,
    /// How long resolving them took, where the case has memos.
    pub load_ns: u64,
    /// Whether the case has memos, whose loading was timed.
    pub timed_load: bool,
}

/// Resolves `case`'s memos, making room in the memory budgets first; a
/// memo that fails is `failure`'s.
pub(super) fn memos(
    case: &Case,
    settings: &Settings,
    around: &mut dyn Around,
    failure: &mut Failure,
) -> Resolved {
    let cache = memo::global_cache();
    // Cases without memos skip the clock: two reads of it cost a case.
    let load_start = case.params.memos().next().map(|_| Instant::now());
    around.entering(Stage::Memo);
    let mut args = Args::default();
    let mut record = MemoRecord::default();
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
        record.inputs.extend(memo.input());
        let (value, how) = memo::resolve_erased(memo);
        note(&mut record, memo, how, value.is_ok());
        if budgeted {
            make_room(settings, Sizes::default(), case, around);
        }
        match value {
            Ok(value) => args.set(index, value),
            Err(error) => failure.add(Stage::Memo, &Error::from(error)),
        }
    }
    Resolved {
        args,
        memo: record,
        load_ns: load_start.map_or(0, |start| start.elapsed().as_nanos() as u64),
        timed_load: load_start.is_some(),
    }
}

/// Notes on `record` how `memo` was resolved (`how`), and where it
/// resolved (`ok`), whether it was loaded, its size and who made it.
fn note(record: &mut MemoRecord, memo: &dyn ErasedMemo, how: Resolution, ok: bool) {
    let cache = memo::global_cache();
    record.counters += how.counters(!ok);
    if !ok {
        return;
    }
    if how == Resolution::Computed {
        record.computed.push(memo.describe());
    }
    let size = cache.known_bytes(memo);
    if how != Resolution::Hit {
        let size = size.unwrap_or_default();
        record.loads += 1;
        record.bytes_loaded += size.host + size.device;
    }
    if cache.made_by_other_build(memo) {
        record.made_by_other_build.push(memo.describe());
    }
    if let Some(size) = size
        && size.host + size.device > 0
    {
        record.sizes.push(MemoSize {
            memo: memo.describe(),
            type_name: memo.type_name().to_owned(),
            bytes: size.host,
            device_bytes: size.device,
        });
    }
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
