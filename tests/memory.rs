//! Per-case resident memory is exact: one test function, in a binary of its
//! own, because resident memory is the whole process's and other tests
//! running alongside would add to it.

use std::hint::black_box;

use nnbench::Runner;
use nnbench::record::CaseRecord;
use nnbench::record::RssMethod;

const MIB: u64 = 1 << 20;

/// Allocates `bytes`, writes every page, holds it for a few milliseconds
/// (so a 1 ms sampler sees it too), and frees it.
fn touch(bytes: usize) -> u64 {
    let mut buffer = vec![0u8; bytes];
    for page in buffer.chunks_mut(4096) {
        page[0] = 1;
    }
    std::thread::sleep(std::time::Duration::from_millis(20));
    black_box(&buffer)
        .iter()
        .step_by(4096)
        .map(|&b| u64::from(b))
        .sum()
}

#[nnbench::benchmark]
fn a_touch_256_mib() -> u64 {
    touch(256 << 20)
}

#[nnbench::benchmark]
fn b_peak_1_gib() -> u64 {
    touch(1 << 30)
}

#[nnbench::benchmark]
fn c_allocate_nothing() -> u64 {
    std::thread::sleep(std::time::Duration::from_millis(5));
    0
}

fn growth(case: &CaseRecord) -> u64 {
    let memory = &case.memory;
    let peak = memory.rss_peak_bytes.expect("a peak");
    peak - memory.rss_before_bytes.expect("a start")
}

fn check(record: &nnbench::RunRecord, method: RssMethod) {
    assert_eq!(record.failed(), 0);
    let ids: Vec<&str> = record.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        ["a_touch_256_mib", "b_peak_1_gib", "c_allocate_nothing"]
    );
    for case in &record.cases {
        assert_eq!(case.memory.rss_method, Some(method), "{}", case.id);
    }

    let expected = 256 * MIB;
    let got = growth(&record.cases[0]);
    let tolerance = expected / 50 + 4 * MIB;
    assert!(
        got.abs_diff(expected) <= tolerance,
        "{method:?}: 256 MiB case grew {} MiB",
        got as f64 / MIB as f64
    );
    assert!(
        growth(&record.cases[1]) >= 1000 * MIB,
        "{method:?}: the 1 GiB case"
    );
    let idle = growth(&record.cases[2]);
    assert!(
        idle < 8 * MIB,
        "{method:?}: a case right after a 1 GiB peak reports {} MiB of growth",
        idle as f64 / MIB as f64
    );
}

#[test]
fn peak_rss_is_per_case_and_within_2_percent_plus_4_mib() {
    let exact = Runner::new().test_mode(true).quiet(true).run().unwrap();
    if std::fs::write("/proc/self/clear_refs", b"5").is_ok() {
        check(&exact, RssMethod::Hwm);
    } else {
        check(&exact, RssMethod::Sampled);
    }

    // SAFETY: this binary's only test; no other thread reads the environment.
    unsafe { std::env::set_var("NNBENCH_RSS", "sampled") };
    let sampled = Runner::new().test_mode(true).quiet(true).run().unwrap();
    check(&sampled, RssMethod::Sampled);
}
