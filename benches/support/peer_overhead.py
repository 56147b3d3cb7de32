"""The harness's cost per case in Python nnbench 0.4: the peer that
benches/overhead.rs measures nnbench against. A 100 x 100 product of a
trivial function, each case called once, as nnbench's own grid there.

    python peer_overhead.py [--context]

prints the cases, the run's wall seconds and the cases' own seconds. The
run collects the cases (importing this file again), runs each and makes
the record; with `--context` it also records what nnbench always does,
the interpreter and the repository's state from git (as nnbench records
its toolchain and commit), which Python nnbench leaves out by default.
"""

import sys
import time

import nnbench
from nnbench.context import GitEnvironmentInfo, PythonInfo


@nnbench.product(a=range(100), b=range(100))
def overhead_grid(a: int, b: int) -> int:
    return a ^ b


if __name__ == "__main__":
    runner = nnbench.BenchmarkRunner()
    start = time.perf_counter_ns()
    context = (PythonInfo(), GitEnvironmentInfo()) if "--context" in sys.argv else ()
    record = runner.run(__file__, context=context)
    wall = time.perf_counter_ns() - start
    calls = 0
    for result in record.benchmarks:
        if result["error_occurred"]:
            sys.exit(f"{result['name']}: {result['error_message']}")
        calls += result["time_ns"]
    print(len(record.benchmarks), wall / 1e9, calls / 1e9)
