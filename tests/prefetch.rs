//! `--prefetch`: the next case's memos load in the background while a case
//! runs, within the memory budget, and the record says so.

use std::sync::Mutex;

use nnbench::{Memo, RunRecord, Runner, Timing};

/// Which thread computed each memo, by memo.
static COMPUTED_ON: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// Whether `memo` was computed exactly once, on the run's own thread (not
/// loaded ahead, nor computed again after a load ahead).
fn computed_once_in_turn(memo: &str) -> bool {
    matches!(&computed_on(memo)[..], [thread] if thread != "nnbench-prefetch")
}

fn computed_on(memo: &str) -> Vec<String> {
    COMPUTED_ON
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, _)| m == memo)
        .map(|(_, thread)| thread.clone())
        .collect()
}

/// A model of one MiB that takes a moment to load.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Weights(&'static str);

impl Memo for Weights {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        let thread = std::thread::current().name().unwrap_or("?").to_owned();
        COMPUTED_ON
            .lock()
            .unwrap()
            .push((format!("{self:?}"), thread));
        if self.0.starts_with("broken") {
            return Err(nnbench::Error::msg("the weights file is truncated"));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        Ok(vec![7; 1 << 20])
    }
    fn size_of(&self, value: &Vec<u8>) -> Option<u64> {
        Some(value.len() as u64)
    }
}

#[nnbench::product(weights = [Weights("a1"), Weights("a2"), Weights("a3")], timing = once)]
fn prefetched(weights: &[u8]) -> usize {
    std::thread::sleep(std::time::Duration::from_millis(20));
    weights.len()
}

#[nnbench::product(weights = [Weights("b1"), Weights("b2")], timing = once)]
fn budgeted(weights: &[u8]) -> usize {
    weights.len()
}

#[nnbench::product(weights = [Weights("c1"), Weights("c2")], timing = once)]
fn in_order(weights: &[u8]) -> usize {
    weights.len()
}

#[nnbench::product(weights = [Weights("d1"), Weights("broken-d2")], timing = once)]
fn broken_next(weights: &[u8]) -> usize {
    weights.len()
}

/// One run at a time: the memo cache is the process's, and a run under a
/// budget makes room by evicting whatever is resident, another test's
/// prefetched memo too.
static ONE_RUN_AT_A_TIME: Mutex<()> = Mutex::new(());

fn run(runner: Runner) -> RunRecord {
    let _one = ONE_RUN_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    runner.quiet(true).memory(false).run().unwrap()
}

#[test]
fn the_next_cases_memos_load_in_the_background_and_the_record_says_so() {
    let record = run(Runner::new().filter("prefetched/").prefetch(true));
    assert!(record.prefetch);
    assert_eq!(record.failed(), 0);
    assert!(record.cases.iter().all(|c| c.value == 1 << 20));
    let lists: Vec<&[String]> = record
        .cases
        .iter()
        .map(|c| c.memo.prefetched.as_slice())
        .collect();
    assert_eq!(
        lists,
        [
            &["Weights(\"a2\")".to_owned()][..],
            &["Weights(\"a3\")".to_owned()],
            &[]
        ]
    );
    assert!(
        computed_once_in_turn("Weights(\"a1\")"),
        "{:?}",
        computed_on("Weights(\"a1\")")
    );
    assert_eq!(computed_on("Weights(\"a2\")"), ["nnbench-prefetch"]);
    assert_eq!(computed_on("Weights(\"a3\")"), ["nnbench-prefetch"]);
    let later = &record.cases[1].memo.counters;
    assert_eq!(
        (later.hits, later.computes),
        (1, 0),
        "the case found its model loaded"
    );
}

#[test]
fn without_room_in_the_budget_nothing_loads_ahead() {
    let record = run(Runner::new()
        .filter("budgeted/")
        .prefetch(true)
        .memo_budget(3 << 19));
    assert!(record.prefetch);
    assert!(record.cases.iter().all(|c| c.memo.prefetched.is_empty()));
    assert!(
        computed_once_in_turn("Weights(\"b2\")"),
        "{:?}",
        computed_on("Weights(\"b2\")")
    );
}

#[test]
fn prefetch_is_off_by_default_and_in_test_mode() {
    let record = run(Runner::new().filter("in_order/"));
    assert!(!record.prefetch);
    assert!(record.cases.iter().all(|c| c.memo.prefetched.is_empty()));
    let tested = run(Runner::new()
        .filter("in_order/")
        .prefetch(true)
        .test_mode(true)
        .timing(Timing::Once));
    assert!(tested.cases.iter().all(|c| c.memo.prefetched.is_empty()));
    assert!(
        computed_on("Weights(\"c2\")")
            .iter()
            .all(|t| t != "nnbench-prefetch")
    );
}

#[test]
fn a_memo_that_fails_in_the_background_fails_the_case_that_uses_it() {
    let record = run(Runner::new().filter("broken_next/").prefetch(true));
    assert_eq!(computed_on("Weights(\"broken-d2\")"), ["nnbench-prefetch"]);
    let first = &record.cases[0];
    assert!(first.error.is_none(), "{:?}", first.error);
    let broken = &record.cases[1];
    let error = broken
        .error
        .as_ref()
        .expect("the broken model fails its case");
    assert!(
        error.message.contains("truncated") || error.causes.iter().any(|c| c.contains("truncated")),
        "{error:?}"
    );
}

/// A model of 64 MiB; the second takes a while to load, long enough that
/// the case beside which it loads ends first, however busy the machine.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct SlowModel(u8);

impl Memo for SlowModel {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        if self.0 == 2 {
            std::thread::sleep(std::time::Duration::from_millis(400));
        }
        Ok(vec![self.0; 64 << 20])
    }
    fn size_of(&self, value: &Vec<u8>) -> Option<u64> {
        Some(value.len() as u64)
    }
}

#[nnbench::product(model = [SlowModel(1), SlowModel(2)], timing = once)]
fn outlasted(model: &[u8]) -> u8 {
    model[0]
}

#[test]
fn a_model_loaded_after_a_case_ended_is_resident_as_the_next_starts() {
    let _one = ONE_RUN_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let record = Runner::new()
        .filter("outlasted/")
        .prefetch(true)
        .quiet(true)
        .run()
        .unwrap();
    assert_eq!(record.failed(), 0);
    let (first, second) = (&record.cases[0], &record.cases[1]);
    assert_eq!(first.memo.prefetched, ["SlowModel(2)"]);
    // The first case's call outran the load beside it, which the run
    // waited for before the second case started: the second case started
    // with the model resident, the first ended without it.
    let (ended, started) = (
        first.memory.rss_after_bytes.expect("read"),
        second.memory.rss_before_bytes.expect("read"),
    );
    assert!(
        started >= ended + (48 << 20),
        "the second case started with {started} bytes resident, the first ended with {ended}"
    );
}

/// A model of 64 MiB that two cases share: the second evicts it as it ends
/// without having loaded it.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct SharedModel;

impl Memo for SharedModel {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        Ok(vec![1; 64 << 20])
    }
    fn size_of(&self, value: &Vec<u8>) -> Option<u64> {
        Some(value.len() as u64)
    }
}

#[nnbench::product(model = [SharedModel], scale = [1, 2], timing = once)]
fn shared_then_evicted(model: &[u8], scale: u8) -> u8 {
    model[0] * scale
}

#[test]
fn a_case_that_evicts_a_model_it_did_not_load_ends_without_it() {
    let _one = ONE_RUN_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Resident above the peak this process inherited from cargo, the run
    // reads the kernel's mark as a bench binary's run does, and a case
    // that faults nothing in may end on its start's reading.
    let _ballast = std::hint::black_box(vec![1u8; inherited_peak() + (64 << 20)]);
    let record = Runner::new()
        .filter("shared_then_evicted/")
        .quiet(true)
        .run()
        .unwrap();
    assert_eq!(record.failed(), 0);
    let last = &record.cases[1];
    assert_eq!(last.memo.evicted, ["SharedModel"], "{:?}", last.memo);
    let (started, ended) = (
        last.memory.rss_before_bytes.expect("read"),
        last.memory.rss_after_bytes.expect("read"),
    );
    assert!(
        ended + (48 << 20) <= started,
        "the last case started with {started} bytes resident and ended with {ended}, \
         64 MiB evicted"
    );
}

/// The largest of this process's peak and the one it inherited, in bytes.
fn inherited_peak() -> usize {
    // SAFETY: getrusage only writes the plain struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) }, 0);
    usize::try_from(usage.ru_maxrss).expect("a peak") * 1024
}
