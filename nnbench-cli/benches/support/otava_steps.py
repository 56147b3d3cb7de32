"""Apache Otava's change points, with its defaults, for each series of a
JSON file: reads `[[value, ...], ...]` from the first argument and writes
`[[index, ...], ...]` (the index of the first value after each change) to
the second."""

import json
import sys

from otava.analysis import compute_change_points
from otava.series import AnalysisOptions


def main(inp, out):
    with open(inp) as f:
        series = json.load(f)
    options = AnalysisOptions()
    found = []
    for values in series:
        points, _weak = compute_change_points(
            values,
            window_len=options.window_len,
            max_pvalue=options.max_pvalue,
            min_magnitude=options.min_magnitude,
        )
        found.append(sorted(int(p.index) for p in points))
    with open(out, "w") as f:
        json.dump(found, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
