//! Work in proportion to a number of steps, at the same cost per step
//! however many there are: what families whose cost grows as a known
//! power are built from.

/// `steps` steps of arithmetic, each kept by `black_box`.
///
/// A plain loop: a range's iterator folded with `black_box` inside runs
/// slower per step the longer the call goes on, on some CPUs, so that its
/// cost grows faster than the steps, and, unoptimized, it checks its
/// bounds at a cost that grows a little with the length.
pub fn work(steps: u64) -> u64 {
    let (mut acc, mut i) = (1u64, 0u64);
    while i < steps {
        acc = std::hint::black_box(acc.wrapping_mul(6364136223846793005).wrapping_add(i));
        i += 1;
    }
    acc
}
