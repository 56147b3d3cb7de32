//! The base64 crate's encoder over payloads of a few bytes to megabytes,
//! as its criterion bench measures it (`benches/base64_criterion.rs`),
//! written for nnbench: the book's page for criterion and divan users shows
//! both and what each prints (`scripts/coming-from-criterion.sh`).
//!
//! `cargo bench --bench base64`

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// A payload of `.0` bytes that are not all alike, as a real one is not,
/// made when its case starts and evicted after it.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Payload(usize);

impl nnbench::Memo for Payload {
    type Value = Vec<u8>;
    fn compute(&self) -> nnbench::Result<Vec<u8>> {
        Ok((0..self.0 as u64)
            .map(|i| (i.wrapping_mul(0x9E37_79B9) >> 7) as u8)
            .collect())
    }
}

#[nnbench::product(
    input = [Payload(3), Payload(50), Payload(3 * 1024), Payload(3 << 20)],
    throughput = bytes(input.len()),
)]
fn encode(input: &[u8]) -> usize {
    STANDARD.encode(input).len()
}

nnbench::main!();
