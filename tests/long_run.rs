//! A long run leaks nothing: another 100,000 cases whose memo is computed, evicted
//! by the teardown and computed again for the next case end with the memo
//! cache empty and the heap and resident memory back where they started.
//! An end-to-end test, for its length (`NNBENCH_E2E=1`).

mod support;

use nnbench::{Memo, Params, Runner, State};

#[global_allocator]
static ALLOC: nnbench::alloc::TrackingAllocator = nnbench::alloc::TrackingAllocator::system();

/// 64 KiB of "weights", one per shard.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Shard(u32);

impl Memo for Shard {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        Ok(vec![self.0 as u8; 64 << 10])
    }
    fn size_of(&self, value: &Vec<u8>) -> Option<u64> {
        Some(value.len() as u64)
    }
}

fn evict_shard(_: &State, params: &Params) {
    if let Some(shard) = params.memo::<Shard>("shard") {
        nnbench::memo::evict(shard);
    }
}

fn shards() -> Vec<Shard> {
    (0..100).map(Shard).collect()
}

#[nnbench::product(shard = shards(), step = 0..1000u32, teardown = evict_shard, timing = once)]
fn long_sweep(shard: &[u8], step: u32) -> u32 {
    u32::from(shard[0]) + step
}

/// Bytes the heap holds now, and anonymous resident memory after returning
/// free memory to the system (a leak stays; allocator slack does not).
/// File-backed pages are left out: the kernel drops and re-reads the test
/// binary's code on a busy machine, which moves resident memory by
/// megabytes with no leak at all.
fn held() -> (u64, u64) {
    // SAFETY: malloc_trim only releases memory glibc's malloc holds free.
    unsafe { libc::malloc_trim(0) };
    let heap = nnbench::alloc::stats().expect("installed").current_bytes;
    let status = std::fs::read_to_string("/proc/self/status").expect("Linux");
    let anon_kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("RssAnon:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .expect("RssAnon in /proc/self/status");
    (heap, anon_kib * 1024)
}

/// Fixes glibc's mmap and trim thresholds, which it otherwise raises to
/// the size of the largest block freed (up to 32 MiB; a run of 100,000
/// cases frees blocks of megabytes): blocks under the raised threshold
/// then come from a thread's arena, whose free top `malloc_trim` never
/// returns, and resident memory keeps 5-10 MiB more after a run, some
/// runs in a row, with nothing leaked (seen with the heap unchanged to
/// the byte).
fn pin_the_allocators_thresholds() {
    for (option, bytes) in [
        (libc::M_MMAP_THRESHOLD, 128 << 10),
        (libc::M_TRIM_THRESHOLD, 128 << 10),
    ] {
        // SAFETY: mallopt only changes malloc's tuning; 1 means it took.
        assert_eq!(
            unsafe { libc::mallopt(option, bytes) },
            1,
            "mallopt({option})"
        );
    }
}

fn run() -> usize {
    let record = Runner::new()
        .filter("long_sweep/")
        .quiet(true)
        .run()
        .expect("the run");
    assert_eq!(record.failed(), 0);
    assert!(record.cases.iter().all(|c| c.memo.counters.computes == 1));
    record.cases.len()
}

#[test]
fn a_hundred_thousand_cases_leave_nothing_behind() {
    if !support::end_to_end("a_hundred_thousand_cases_leave_nothing_behind") {
        return;
    }
    pin_the_allocators_thresholds();
    // The first runs grow what stays for good: the registry, thread
    // stacks, the allocator's arenas (measured here: 4.5 MiB more
    // resident after the second run).
    assert_eq!(run(), 100_000);
    assert_eq!(run(), 100_000);
    let (heap_before, rss_before) = held();
    assert_eq!(run(), 100_000);
    let (heap_after, rss_after) = held();
    assert_eq!(run(), 100_000);
    let (_, rss_last) = held();
    assert_eq!(nnbench::memo::stats().entries, 0, "the memo cache is empty");
    let mib = |b: u64| b as f64 / 1048576.0;
    assert!(
        heap_after <= heap_before + (256 << 10),
        "heap grew from {:.2} to {:.2} MiB",
        mib(heap_before),
        mib(heap_after)
    );
    // The heap above is exact; resident memory is the allocator's too,
    // whose arenas, with its thresholds pinned, still keep up to 6 MiB
    // more after one run than after another (seen 5.1, 2.7, 8.1 MiB in
    // three runs, the heap unchanged to the byte). What leaks outside the
    // heap (a thread's stack, a mapping) leaks a page or more a case, 400
    // MiB a run; a page in 25 cases grows it 16 MiB a run, run after run:
    // two runs in a row must grow it that much for a failure.
    let grew = |from: u64, to: u64| to > from + (16 << 20);
    assert!(
        !(grew(rss_before, rss_after) && grew(rss_after, rss_last)),
        "anonymous resident memory grew from {:.1} to {:.1} to {:.1} MiB",
        mib(rss_before),
        mib(rss_after),
        mib(rss_last)
    );
    println!(
        "after 100,000 cases, twice: heap {:.2} -> {:.2} MiB, anonymous resident {:.1} -> {:.1} -> {:.1} MiB",
        mib(heap_before),
        mib(heap_after),
        mib(rss_before),
        mib(rss_after),
        mib(rss_last)
    );
}
