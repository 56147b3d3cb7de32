#!/usr/bin/env bash
# Makes the peer that nnbench-cli/benches/history.rs measures the step
# search against: a virtual environment with Apache Otava 0.8.0 from PyPI,
# and prints the interpreter's path for the bench to use:
#
#   export NNBENCH_OTAVA_PYTHON="$(scripts/otava.sh)"
#
# Idempotent: the environment is cached under $NNBENCH_CACHE (default
# ~/.cache/nnbench) and reused. PYTHON picks the interpreter (default
# python3).
set -euo pipefail

python="${PYTHON:-python3}"
cache="${NNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nnbench}"
dest="$cache/otava-0.8.0"

say() { echo "otava.sh: $*" >&2; }

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
    "apache-otava==0.8.0" >&2
"$dest/bin/python" -c "import otava.analysis" >&2
touch "$dest/.complete"
echo "$dest/bin/python"
