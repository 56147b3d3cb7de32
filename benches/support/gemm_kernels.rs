//! Three ways to multiply square f64 matrices, stored row by row, from
//! the slowest to the fastest: the roofline bench's kernels.

/// `c = a · b` by the textbook triple loop: each element of `c` a dot
/// product of a row of `a` and a column of `b`, read one row apart.
pub fn naive(n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    for i in 0..n {
        for j in 0..n {
            let mut sum = 0.0;
            for k in 0..n {
                sum += a[i * n + k] * b[k * n + j];
            }
            c[i * n + j] = sum;
        }
    }
}

/// The edge of the tiles [`blocked`] works on: three tiles of f64 fit a
/// core's 64 KiB or larger first-level and second-level caches.
const TILE: usize = 64;

/// `c = a · b` in tiles that stay in the caches, each row of a tile of
/// `c` updated by a row of `b`'s tile scaled by an element of `a`'s: a
/// loop the compiler turns into vector multiply-adds.
pub fn blocked(n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    c.fill(0.0);
    for i0 in (0..n).step_by(TILE) {
        for k0 in (0..n).step_by(TILE) {
            for j0 in (0..n).step_by(TILE) {
                let j1 = (j0 + TILE).min(n);
                for i in i0..(i0 + TILE).min(n) {
                    let row = &mut c[i * n + j0..i * n + j1];
                    for k in k0..(k0 + TILE).min(n) {
                        let scale = a[i * n + k];
                        let from = &b[k * n + j0..k * n + j1];
                        for (to, from) in row.iter_mut().zip(from) {
                            *to += scale * from;
                        }
                    }
                }
            }
        }
    }
}

/// `c = a · b` by the `matrixmultiply` crate's GEMM, with the widest
/// kernels this CPU has.
pub fn library(n: usize, a: &[f64], b: &[f64], c: &mut [f64]) {
    assert!(a.len() >= n * n && b.len() >= n * n && c.len() >= n * n);
    let stride = isize::try_from(n).expect("a matrix edge fits an isize");
    // SAFETY: each slice holds n × n elements (checked above), laid out
    // row by row with row stride n and column stride 1, and c is written
    // only (β = 0) and aliases neither a nor b.
    unsafe {
        matrixmultiply::dgemm(
            n,
            n,
            n,
            1.0,
            a.as_ptr(),
            stride,
            1,
            b.as_ptr(),
            stride,
            1,
            0.0,
            c.as_mut_ptr(),
            stride,
            1,
        );
    }
}
