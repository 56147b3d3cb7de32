"""Writes the npy target's seed corpus with numpy, as users' files are written:
`python fuzz/make_npy_seeds.py` in the repository, with numpy (the Python peer's
environment has it: `$(scripts/python-peer.sh) fuzz/make_npy_seeds.py`)."""

import os

import numpy as np
from numpy.lib import format as npy_format

out = os.path.join(os.path.dirname(__file__), "corpus", "npy")
os.makedirs(out, exist_ok=True)
arrays = {
    "f64-2d": np.arange(12, dtype="<f8").reshape(3, 4),
    "f32-2d-fortran": np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)),
    "f64-big-endian": np.arange(5, dtype=">f8"),
    "i64-1d": np.arange(7, dtype="<i8"),
    "u8-3d": np.arange(24, dtype="u1").reshape(2, 3, 4),
    "bool-1d": np.array([True, False, True]),
    "f64-0d": np.array(3.5),
    "f64-empty": np.zeros((0, 3)),
    "f16": np.arange(4, dtype="<f2"),
    "unicode": np.array(["ab", "c"]),
}
for name, array in arrays.items():
    np.save(os.path.join(out, name + ".npy"), array)
np.save(os.path.join(out, "object.npy"), np.array([1, "a"], dtype=object), allow_pickle=True)
for version in [(2, 0), (3, 0)]:
    with open(os.path.join(out, f"f64-v{version[0]}.npy"), "wb") as f:
        npy_format.write_array(f, np.arange(3, dtype="<f8"), version=version)
