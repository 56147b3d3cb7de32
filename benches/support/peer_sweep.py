"""The seed sweep in Python nnbench 0.4 with numpy: the peer that
benches/seed_sweep.rs measures nnbench against, written as nnbench's memo
guide shows (a memo per file whose cached __call__ runs np.load, and a
tearDown that evicts the model).

    python peer_sweep.py DATA_DIR SIDE BATCH [keep]

prints one line per case: its name, value and time in seconds. With
`keep`, the tearDown is left out and every model stays cached.
"""

import sys
from pathlib import Path

import numpy as np
import nnbench
from nnbench.types.memo import cached_memo, evict_memo, get_memo_by_value

DATA_DIR, SIDE, BATCH = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
KEEP = sys.argv[4:] == ["keep"]


class ModelMemo(nnbench.Memo[np.ndarray]):
    def __init__(self, path: Path):
        self.path = path

    @cached_memo
    def __call__(self) -> np.ndarray:
        return np.load(self.path)


class DataMemo(ModelMemo):
    """The dataset, loaded as a model is."""


def evict_model(state, params) -> None:
    key = get_memo_by_value(params["model"])
    if key is not None:
        evict_memo(key)


@nnbench.product(
    model=[ModelMemo(DATA_DIR / f"model{i}-{SIDE}x{SIDE}.npy") for i in (1, 2, 3)],
    data=[DataMemo(DATA_DIR / f"data-{SIDE}x{BATCH}.npy")],
    **({} if KEEP else {"tearDown": evict_model}),
)
def accuracy(model: np.ndarray, data: np.ndarray) -> float:
    return float((model @ data).sum())


if __name__ == "__main__":
    record = nnbench.BenchmarkRunner().run(__file__)
    for result in record.benchmarks:
        if result["error_occurred"]:
            sys.exit(f"{result['name']}: {result['error_message']}")
        print(result["name"], result["value"], result["time_ns"] / 1e9)
