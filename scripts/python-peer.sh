#!/usr/bin/env bash
# Makes the Python peer that benches/seed_sweep.rs measures this harness
# against: a virtual environment with Python nnbench 0.4 and numpy from
# PyPI, and prints the interpreter's path for the bench to use:
#
#   export NNBENCH_PEER_PYTHON="$(scripts/python-peer.sh)"
#
# Idempotent: the environment is cached under $NNBENCH_CACHE (default
# ~/.cache/nnbench) and reused. PYTHON picks the interpreter (default
# python3, 3.10 or newer, as nnbench 0.4 requires).
set -euo pipefail

python="${PYTHON:-python3}"
cache="${NNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nnbench}"
dest="$cache/python-peer-nnbench-0.4.0"

say() { echo "python-peer.sh: $*" >&2; }

if [[ -f "$dest/.complete" ]]; then
    say "using $dest"
    echo "$dest/bin/python"
    exit 0
fi

command -v "$python" > /dev/null || { say "$python not found: set PYTHON"; exit 1; }
rm -rf "$dest"
mkdir -p "$cache"
say "making $dest"
"$python" -m venv "$dest" >&2
"$dest/bin/python" -m pip install --quiet --disable-pip-version-check \
    "nnbench==0.4.0" "numpy>=2" >&2
"$dest/bin/python" -c "import nnbench, numpy" >&2
touch "$dest/.complete"
echo "$dest/bin/python"
