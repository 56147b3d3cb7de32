//! The function's own memory apart from its fixtures: a case whose memo
//! holds 256 MiB and whose function allocates and touches 64 MiB. One
//! test function in a binary of its own, because resident memory is the
//! whole process's.

use std::hint::black_box;

use nnbench::alloc::TrackingAllocator;
use nnbench::record::CaseRecord;
use nnbench::record::RssMethod;
use nnbench::{Memo, Runner};

#[global_allocator]
static ALLOC: TrackingAllocator = TrackingAllocator::system();

const MIB: u64 = 1 << 20;

/// A model of 256 MiB, every page written.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Model;

impl Memo for Model {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        Ok(vec![1u8; 256 << 20])
    }
}

/// Allocates 64 MiB of working memory, writes every page, holds it a few
/// milliseconds (so a sampler sees it too), and frees it.
#[nnbench::product(model = [Model], run = [1, 2], timing = once)]
fn evaluate(model: &[u8], run: u32) -> u64 {
    let mut working = vec![0u8; 64 << 20];
    for page in working.chunks_mut(4096) {
        page[0] = model[page.len()];
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    black_box(&working)
        .iter()
        .step_by(4096)
        .map(|&b| u64::from(b))
        .sum::<u64>()
        + u64::from(run)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / MIB as f64
}

fn check(cases: &[CaseRecord], method: RssMethod) {
    assert_eq!(cases.len(), 2);
    let expected = 64 * MIB;
    let tolerance = expected / 50 + 4 * MIB;
    for case in cases {
        assert!(case.error.is_none(), "{:?}", case.error);
        assert_eq!(case.memory.rss_method, Some(method));
        let call = case.call_rss_growth_bytes().expect("the call's growth");
        assert!(
            call.abs_diff(expected) <= tolerance,
            "{method:?} {}: the call grew resident memory by {:.1} MiB, not 64",
            case.id,
            mib(call)
        );
        let heap = case
            .call_heap_growth_bytes()
            .expect("the call's heap growth");
        assert!(
            heap.abs_diff(expected) <= tolerance,
            "{method:?} {}: the call grew the heap by {:.1} MiB",
            case.id,
            mib(heap)
        );
        println!(
            "  {method:?} {}: call +{:.1} MiB (heap +{:.1} MiB), whole case +{:.1} MiB from {:.1} MiB",
            case.id,
            mib(call),
            mib(heap),
            mib(case.rss_growth_bytes().unwrap_or(0)),
            mib(case.memory.rss_before_bytes.unwrap_or(0))
        );
    }
    // The whole case covers the model and the working memory: the first
    // case loaded the model, the second started with it resident.
    let start = cases[0].memory.rss_before_bytes.expect("a start");
    let both = 320 * MIB - (320 * MIB / 50 + 4 * MIB);
    for case in cases {
        let peak = case.memory.rss_peak_bytes.expect("a peak");
        assert!(
            peak.saturating_sub(start) >= both,
            "{method:?} {}: the whole case's peak is {:.1} MiB over the first start",
            case.id,
            mib(peak - start)
        );
    }
    assert!(cases[0].rss_growth_bytes().expect("growth") >= both);
    assert!(cases[0].memory.heap_peak_bytes >= cases[0].memory.call_heap_peak_bytes);
}

#[test]
fn the_call_peak_leaves_out_the_memo_and_the_whole_case_peak_keeps_it() {
    let run = || {
        Runner::new()
            .filter("evaluate/")
            .test_mode(true)
            .quiet(true)
            .disk_tier(nnbench::memo::DiskTier::Off)
            .run()
            .unwrap()
    };
    let exact = run();
    if std::fs::write("/proc/self/clear_refs", b"5").is_ok() {
        check(&exact.cases, RssMethod::Hwm);
    } else {
        check(&exact.cases, RssMethod::Sampled);
    }
    // SAFETY: this binary's only test; no other thread reads the environment.
    unsafe { std::env::set_var("NNBENCH_RSS", "sampled") };
    check(&run().cases, RssMethod::Sampled);
}
