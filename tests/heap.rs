//! With the tracking allocator installed, records carry the heap figures.

use nnbench::Runner;
use nnbench::alloc::TrackingAllocator;

#[global_allocator]
static ALLOC: TrackingAllocator = TrackingAllocator::system();

const BYTES: u64 = 10 << 20;

#[nnbench::benchmark]
fn heap_ten_mib() -> usize {
    let buffer: Vec<u8> = Vec::with_capacity(BYTES as usize);
    std::hint::black_box(&buffer).capacity()
}

#[nnbench::benchmark]
fn heap_many_small() -> usize {
    (0..1000)
        .map(|i| std::hint::black_box(vec![i as u8; 16]).len())
        .sum()
}

#[test]
fn heap_peak_is_exact_to_4_kib_and_allocations_are_counted() {
    let record = Runner::new()
        .filter("heap_")
        .test_mode(true)
        .quiet(true)
        .run()
        .unwrap();
    let big = &record.case("heap_ten_mib").unwrap().memory;
    let growth = big.heap_peak_bytes.unwrap() - big.heap_before_bytes.unwrap();
    assert!(
        growth.abs_diff(BYTES) <= 4096,
        "heap grew {growth} bytes for a {BYTES}-byte Vec"
    );
    assert!(big.heap_allocations.unwrap() >= 1);

    let small = &record.case("heap_many_small").unwrap().memory;
    assert!(small.heap_allocations.unwrap() >= 1000);
    let growth = small.heap_peak_bytes.unwrap() - small.heap_before_bytes.unwrap();
    assert!(
        growth < 64 << 10,
        "1000 short-lived 16-byte Vecs peak at {growth} bytes"
    );

    let stats = nnbench::alloc::stats().unwrap();
    assert!(stats.peak_bytes >= stats.current_bytes);
}
