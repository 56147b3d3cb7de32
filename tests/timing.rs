//! Timing modes: once, sampled by criterion, auto; test mode; flags.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use nnbench::record::{Sampler, Stage, TimingMode};
use nnbench::{Memo, Runner, Sampling, Timing};

/// Quick sampling, so the tests stay short: criterion's minimum sample size.
fn quick() -> Sampling {
    Sampling::new()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(10))
        .measurement_time(Duration::from_millis(60))
}

/// Runs side by side with the other tests. Resident-memory peaks are the
/// process's, and a run that measures them resets the high-water mark, so
/// only the test about the peak measures memory.
fn runner(filter: &str) -> Runner {
    Runner::new()
        .filter(filter)
        .quiet(true)
        .sampling(quick())
        .memory(false)
}

/// The process's memory, which the test about the peak measures: it runs
/// alone, the others side by side (one that frees a buffer while the peak
/// is measured would hide the case's growth).
static PROCESS: RwLock<()> = RwLock::new(());

fn side_by_side() -> RwLockReadGuard<'static, ()> {
    PROCESS.read().unwrap_or_else(PoisonError::into_inner)
}

fn alone() -> RwLockWriteGuard<'static, ()> {
    PROCESS.write().unwrap_or_else(PoisonError::into_inner)
}

static SAMPLED_CALLS: AtomicUsize = AtomicUsize::new(0);

#[nnbench::benchmark(timing = sampled, sample_size = 10, warm_up_time = "10ms", measurement_time = "60ms")]
fn sampled_kernel() -> u64 {
    SAMPLED_CALLS.fetch_add(1, Ordering::Relaxed);
    (0..200u64).map(std::hint::black_box).sum()
}

#[test]
fn sampled_cases_stop_once_the_median_is_precise_and_keep_the_first_calls_metric() {
    let _process = side_by_side();
    let record = Runner::new()
        .filter("sampled_kernel")
        .quiet(true)
        .memory(false)
        .run()
        .unwrap();
    let case = &record.cases[0];
    assert!(case.error.is_none(), "{:?}", case.error);
    assert_eq!(case.value, 19900);
    let t = &case.time;
    assert_eq!(t.mode, TimingMode::Sampled);
    assert_eq!(t.sampler, Some(Sampler::Adaptive));
    assert!(t.samples >= 10, "sample_size is the least: {t:?}");
    assert_eq!(t.samples_ns.len() as u64, t.samples);
    assert_eq!(
        t.iters % t.samples,
        0,
        "every sample makes the same calls: {t:?}"
    );
    assert!(
        t.min_ns > 0.0 && t.min_ns <= t.median_ns && t.median_ns <= t.max_ns,
        "{t:?}"
    );
    let [low, high] = t.median_ci_ns.expect("ten samples bound the median");
    assert!(low <= t.median_ns && t.median_ns <= high, "{t:?}");
    // Stopped when precise within 1% or out of time, after 60 ms of
    // sampling at most (and one sample more).
    let sampled_ms = t.samples_ns.iter().sum::<f64>() * (t.iters / t.samples) as f64 / 1e6;
    assert!(
        sampled_ms < 200.0,
        "the cap is 60 ms: {sampled_ms} ms, {t:?}"
    );
    assert!(
        t.median_ns < 1e6,
        "a 200-element sum takes well under a millisecond: {t:?}"
    );
    let calls = SAMPLED_CALLS.load(Ordering::Relaxed) as u64;
    assert!(
        calls > t.iters,
        "warm-up and the first call come on top: {calls} calls, {} iters",
        t.iters
    );
}

#[test]
fn the_runs_sampled_timing_hands_sampling_to_criterion_with_its_settings() {
    let _process = side_by_side();
    let record = runner("sampled_kernel")
        .timing(Timing::Criterion)
        .run()
        .unwrap();
    let t = &record.cases[0].time;
    assert_eq!(t.sampler, Some(Sampler::Criterion));
    assert_eq!(t.samples, 10, "criterion's samples after warm-up");
    assert!(
        nnbench::record::target_dir()
            .join("criterion/sampled_kernel/new/estimates.json")
            .is_file(),
        "criterion's own analysis is written"
    );
}

/// A case whose family says nothing of its timing.
#[nnbench::benchmark]
fn unsaid_timing() -> u64 {
    (0..100u64).map(std::hint::black_box).sum()
}

#[test]
fn sampled_as_the_runs_timing_is_nnbenchs_sampler_and_the_old_flag_still_means_criterion() {
    let _process = side_by_side();
    let record = runner("unsaid_timing")
        .timing(Timing::Sampled)
        .run()
        .unwrap();
    assert_eq!(record.cases[0].time.sampler, Some(Sampler::Adaptive));
    assert!(record.warnings.iter().all(|w| !w.contains("renamed")));
    // `--sampled`, criterion's flag before 0.1.0, is taken one more release
    // and the record says what to write instead.
    let record = Runner::from_args(["--sampled"])
        .unwrap()
        .test_mode(false)
        .filter("sampled_kernel")
        .quiet(true)
        .sampling(quick())
        .memory(false)
        .run()
        .unwrap();
    let case = &record.cases[0];
    assert!(case.error.is_none(), "{:?}", case.error);
    assert_eq!(case.time.sampler, Some(Sampler::Criterion));
    assert!(
        record
            .warnings
            .iter()
            .any(|w| w.starts_with("--sampled is renamed --criterion")),
        "{:?}",
        record.warnings
    );
}

static ONCE_CALLS: AtomicUsize = AtomicUsize::new(0);

#[nnbench::benchmark(timing = once)]
fn once_only() -> u8 {
    ONCE_CALLS.fetch_add(1, Ordering::SeqCst);
    1
}

#[test]
fn once_calls_the_function_exactly_once() {
    let _process = side_by_side();
    let record = runner("once_only").run().unwrap();
    assert_eq!(ONCE_CALLS.load(Ordering::SeqCst), 1);
    let t = &record.cases[0].time;
    assert_eq!((t.mode, t.samples, t.iters), (TimingMode::Once, 1, 1));
    assert_eq!(t.min_ns, t.max_ns);
}

#[nnbench::parametrize([(ms = 0), (ms = 40)])]
fn auto_sleep(ms: u64) -> u64 {
    std::thread::sleep(Duration::from_millis(ms));
    ms
}

#[test]
fn auto_keeps_slow_cases_to_one_call_and_samples_fast_ones() {
    let _process = side_by_side();
    let record = runner("auto_sleep/")
        .auto_threshold(Duration::from_millis(20))
        .run()
        .unwrap();
    assert_eq!(record.failed(), 0);
    assert_eq!(
        record.case("auto_sleep/ms=0").unwrap().time.mode,
        TimingMode::Sampled
    );
    let slow = &record.case("auto_sleep/ms=40").unwrap().time;
    assert_eq!(slow.mode, TimingMode::Once);
    assert!(slow.median_ns >= 40e6, "{slow:?}");
}

#[test]
fn test_mode_and_the_runs_timing_override_the_family() {
    let _process = side_by_side();
    let before = SAMPLED_CALLS.load(Ordering::Relaxed);
    let record = runner("sampled_kernel").test_mode(true).run().unwrap();
    assert_eq!(record.cases[0].time.mode, TimingMode::Once);
    assert!(SAMPLED_CALLS.load(Ordering::Relaxed) > before);

    let record = runner("sampled_kernel").timing(Timing::Once).run().unwrap();
    assert_eq!(record.cases[0].time.samples, 1);
}

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Table;

static TABLE_COMPUTES: AtomicUsize = AtomicUsize::new(0);

impl Memo for Table {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        TABLE_COMPUTES.fetch_add(1, Ordering::SeqCst);
        Ok(vec![1; 1024])
    }
}

// 48 MiB: above glibc's largest mmap threshold (32 MiB), so the scratch is
// always fresh pages. A 32 MiB one came, after the other tests had freed
// large buffers (which raise the threshold), from memory the process
// already held, and the peak did not move (1 run in 3 here).
#[nnbench::product(table = [Table], scratch_mib = [48usize], timing = sampled)]
fn sampled_with_memo(table: &[u8], scratch_mib: usize) -> usize {
    let mut scratch = vec![0u8; scratch_mib << 20];
    for page in scratch.chunks_mut(4096) {
        page[0] = 1;
    }
    table.len() + std::hint::black_box(&scratch).len()
}

#[test]
fn under_sampling_memos_resolve_once_and_the_peak_covers_every_call() {
    let _process = alone();
    let record = runner("sampled_with_memo/").memory(true).run().unwrap();
    let case = &record.cases[0];
    assert!(case.error.is_none(), "{:?}", case.error);
    assert_eq!(case.time.mode, TimingMode::Sampled);
    assert_eq!(TABLE_COMPUTES.load(Ordering::SeqCst), 1);
    assert_eq!((case.memo.misses, case.memo.hits), (1, 0));
    let memory = &case.memory;
    if let (Some(peak), Some(before)) = (memory.rss_peak_bytes, memory.rss_before_bytes) {
        assert!(
            peak.saturating_sub(before) >= 46 << 20,
            "peak {peak}, before {before}"
        );
    }
}

static FLAKY_CALLS: Mutex<u32> = Mutex::new(0);

#[nnbench::benchmark(timing = sampled)]
fn fails_while_sampled() -> Result<u32, String> {
    let mut calls = FLAKY_CALLS.lock().unwrap();
    *calls += 1;
    if *calls > 5 {
        Err(format!("diverged at call {calls}"))
    } else {
        Ok(*calls)
    }
}

#[nnbench::benchmark(timing = sampled)]
fn panics_while_sampled() -> u32 {
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    if CALLS.fetch_add(1, Ordering::SeqCst) > 3 {
        panic!("out of memory in layer 2");
    }
    1
}

#[test]
fn a_failure_while_sampling_fails_the_case_with_its_message() {
    let _process = side_by_side();
    let record = runner("_while_sampled").run().unwrap();
    let error = record
        .case("fails_while_sampled")
        .unwrap()
        .error
        .clone()
        .expect("failed");
    assert_eq!(error.stage, Stage::Call);
    assert_eq!(error.message, "diverged at call 6");
    let error = record
        .case("panics_while_sampled")
        .unwrap()
        .error
        .clone()
        .expect("failed");
    assert!(
        error.message.contains("out of memory in layer 2"),
        "{error:?}"
    );
}

#[test]
fn timing_flags_parse_like_criterions() {
    let _process = side_by_side();
    let ok = [
        vec![
            "--criterion",
            "--sample-size",
            "10",
            "--warm-up-time",
            "0.5",
            "--measurement-time",
            "2s",
        ],
        vec!["--once", "--bench"],
        vec!["--auto-threshold", "250ms", "--save-baseline", "main"],
        vec![
            "--baseline",
            "main",
            "--list",
            "--format",
            "terse",
            "--ignored",
            "--nocapture",
        ],
        vec![
            "--exact",
            "some/case",
            "--test-threads",
            "1",
            "--include-ignored",
        ],
    ];
    for args in ok {
        assert!(Runner::from_args(args.clone()).is_ok(), "{args:?}");
    }
    let bad = [
        (vec!["--sample-size", "5"], "5"),
        (vec!["--once", "--criterion"], "--criterion"),
        (vec!["--warm-up-time", "soon"], "soon"),
        (vec!["--measurement-time", "0"], "longer than zero"),
        (
            vec!["--save-baseline", "a", "--baseline", "b"],
            "--baseline",
        ),
    ];
    for (args, named) in bad {
        let err = Runner::from_args(args.clone())
            .err()
            .unwrap_or_else(|| panic!("{args:?} accepted"));
        assert!(err.to_string().contains(named), "{args:?}: {err}");
    }
}

#[test]
fn ignored_selects_nothing() {
    let _process = side_by_side();
    let runner = Runner::from_args(["--ignored", "once_only"]).unwrap();
    assert!(runner.list().is_empty());
}

#[nnbench::parametrize([(work = "sleep"), (work = "compute"), (work = "threads")])]
fn clocks(work: &str) -> u64 {
    let spin = || (0..300_000u64).fold(0, |x, i| std::hint::black_box(x ^ i.wrapping_mul(7)));
    match work {
        "sleep" => {
            std::thread::sleep(Duration::from_millis(20));
            0
        }
        "compute" => spin(),
        _ => std::thread::scope(|s| {
            let a = s.spawn(spin);
            let b = s.spawn(spin);
            a.join().unwrap_or(0) ^ b.join().unwrap_or(0)
        }),
    }
}

/// CPU time is checked against the wall time of the same calls: a sleep
/// takes wall time and next to no CPU, and work on spawned threads counts
/// for the process and not for the calling thread, whatever else the
/// machine is doing.
#[test]
fn every_sample_is_also_timed_by_thread_and_process_cpu_time() {
    let _process = side_by_side();
    let record = runner("clocks").timing(Timing::Criterion).run().unwrap();
    let case = |work: &str| {
        let case = record
            .cases
            .iter()
            .find(|c| c.id.ends_with(&format!("work={work}")))
            .unwrap_or_else(|| panic!("no {work} case in {:?}", record.cases));
        assert!(case.error.is_none(), "{:?}", case.error);
        let t = case.time.clone();
        assert_eq!(t.cpu_samples_ns.len() as u64, t.samples, "{t:?}");
        assert_eq!(t.process_cpu_samples_ns.len() as u64, t.samples, "{t:?}");
        (
            t.median_ns,
            t.cpu_median_ns.expect("Linux tells a thread's CPU time"),
            t.process_cpu_median_ns.expect("and the process's"),
        )
    };
    let (wall, cpu, _) = case("sleep");
    assert!(
        cpu * 4.0 < wall,
        "a 20 ms sleep: wall {wall} ns, CPU {cpu} ns"
    );
    let (_, cpu, process) = case("compute");
    assert!(
        cpu > 0.0 && process >= cpu * 0.9,
        "thread {cpu} ns, process {process} ns"
    );
    let (_, cpu, process) = case("threads");
    assert!(
        process > cpu * 4.0,
        "two spawned threads work while the caller waits: thread {cpu} ns, process {process} ns"
    );
    // A case timed once on one thread reads the wall clock alone.
    let once = runner("clocks").timing(Timing::Once).run().unwrap();
    for case in &once.cases {
        assert_eq!(case.time.samples_ns.len(), 1, "{:?}", case.time);
        assert!(case.time.cpu_samples_ns.is_empty(), "{:?}", case.time);
        assert!(case.time.cpu_median_ns.is_none(), "{:?}", case.time);
    }
}
