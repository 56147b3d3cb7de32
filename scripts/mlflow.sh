#!/usr/bin/env bash
# Makes the MLflow tracking server that the export test (`nnbench export
# --format mlflow`, nnbench-cli/tests/mlflow.rs) logs to: a virtual
# environment with MLflow from PyPI, and prints the line that points the
# test at its `mlflow` command:
#
#   eval "$(scripts/mlflow.sh)"     # sets NNBENCH_MLFLOW
#
# The test starts `mlflow server` on a free local port, with a SQLite
# store in a folder of its own, and stops it when it ends.
#
# Idempotent: the environment is cached under $NNBENCH_CACHE (default
# ~/.cache/nnbench) and reused. PYTHON picks the interpreter (default
# python3, 3.10 or newer, as MLflow 3 requires).
set -euo pipefail

version=3.17.2
python="${PYTHON:-python3}"
cache="${NNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nnbench}"
dest="$cache/mlflow-$version"

say() { echo "mlflow.sh: $*" >&2; }

if [[ ! -f "$dest/.complete" ]]; then
    command -v "$python" > /dev/null || { say "$python not found: set PYTHON"; exit 1; }
    rm -rf "$dest"
    mkdir -p "$cache"
    say "making $dest (MLflow $version from PyPI)"
    "$python" -m venv "$dest" >&2
    "$dest/bin/python" -m pip install --quiet --disable-pip-version-check \
        "mlflow==$version" >&2
    "$dest/bin/mlflow" --version >&2
    touch "$dest/.complete"
else
    say "using $dest"
fi
printf 'export NNBENCH_MLFLOW=%q\n' "$dest/bin/mlflow"
