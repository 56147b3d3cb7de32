//! A family's capacity: the largest value of its `scaling` parameter
//! whose resident peak fits under a limit, predicted from the sizes it
//! ran. One test function in a binary of its own, because resident memory
//! is the whole process's.

use std::hint::black_box;

use nnbench::Runner;
use nnbench::memo::DiskTier;

const MIB: usize = 1 << 20;

/// Holds `n` MiB for the call, every page written.
#[nnbench::product(n = [16, 32, 64, 128, 256], scaling = n, timing = once)]
fn grow(n: usize) -> u64 {
    let mut held = vec![0u8; n * MIB];
    for page in held.chunks_mut(4096) {
        page[0] = 1;
    }
    black_box(&held)
        .iter()
        .step_by(4096)
        .map(|&b| u64::from(b))
        .sum()
}

#[test]
fn a_family_that_holds_a_mib_an_n_fits_the_limit_less_what_the_process_holds() {
    let record = Runner::from_args(["--capacity-limit", "1GiB"])
        .expect("the flag is known")
        .filter("grow/")
        .test_mode(true)
        .quiet(true)
        .disk_tier(DiskTier::Off)
        .run()
        .expect("the run");
    let capacity = record
        .capacity
        .iter()
        .find(|c| c.family == "grow")
        .unwrap_or_else(|| panic!("no capacity of grow: {:?}", record.capacity));
    println!(
        "  n ≈ {:.0} [{:.0}, {:.0}]: {:.1} MiB fixed, {:.3} MiB × n^{:.3}",
        capacity.n,
        capacity.interval[0],
        capacity.interval[1],
        capacity.fixed_bytes / MIB as f64,
        capacity.per_bytes / MIB as f64,
        capacity.exponent
    );
    assert_eq!(
        (capacity.limit_bytes, capacity.limit_from.as_str()),
        (1 << 30, "flag")
    );
    assert_eq!(
        (capacity.parameter.as_str(), capacity.figure.as_str()),
        ("n", "rss")
    );
    assert_eq!(capacity.points, 5);
    assert!((capacity.exponent - 1.0).abs() < 0.1, "{capacity:?}");
    // What the process held before its first call stays at every size.
    let held = record.cases[0]
        .memory
        .rss_before_bytes
        .expect("the resident memory before the case") as f64;
    let expected = ((1u64 << 30) as f64 - held) / MIB as f64;
    assert!(
        (capacity.n / expected - 1.0).abs() < 0.05,
        "predicted {:.0}, where {expected:.0} fit: {capacity:?}",
        capacity.n
    );
    assert!(
        capacity.interval[0] <= capacity.n && capacity.n <= capacity.interval[1],
        "{capacity:?}"
    );
}
