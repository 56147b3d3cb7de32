"""The rate numpy's BLAS multiplies two n x n f64 matrices at on one
thread of one core: the best of `repeats` multiplies, in FLOP/s
(2 n^3 a multiply), printed alone. The thread count is set before numpy
loads its BLAS, which reads it once."""

import os
import sys
import time

for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[name] = "1"

import numpy as np  # noqa: E402  (after the thread count)


def main() -> None:
    n, repeats = int(sys.argv[1]), int(sys.argv[2])
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n)), rng.random((n, n))
    a @ b  # loads and warms the kernels
    best = min(timed(a, b) for _ in range(repeats))
    print(2.0 * n**3 / best)


def timed(a, b) -> float:
    start = time.perf_counter()
    a @ b
    return time.perf_counter() - start


main()
