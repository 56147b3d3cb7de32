//! The base64 crate's encoder over payloads of a few bytes to megabytes,
//! as criterion measures it: the original that `benches/base64.rs` is
//! converted from, for the book's page for criterion and divan users.
//!
//! `cargo bench --bench base64_criterion`

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use criterion::{BenchmarkId, Criterion, Throughput};

/// Bytes that are not all alike, as a real payload is not.
fn payload(len: usize) -> Vec<u8> {
    (0..len as u64)
        .map(|i| (i.wrapping_mul(0x9E37_79B9) >> 7) as u8)
        .collect()
}

fn encode(c: &mut Criterion) {
    let mut group = c.benchmark_group("encode");
    for size in [3usize, 50, 3 * 1024, 3 << 20] {
        let input = payload(size);
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_with_input(BenchmarkId::from_parameter(size), &input, |b, input| {
            b.iter(|| STANDARD.encode(std::hint::black_box(input)))
        });
    }
    group.finish();
}

criterion::criterion_group!(benches, encode);
criterion::criterion_main!(benches);
