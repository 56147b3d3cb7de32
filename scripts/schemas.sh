#!/usr/bin/env bash
# The validators of the example manifests and workflows (tests/examples.rs):
# `kubernetes-validate` (Kubernetes' schemas, bundled) and
# `check-jsonschema` (with GitHub's workflow schema, vendored), from PyPI,
# into a virtual environment kept under the target folder. Both then work
# offline. Prints `export NNBENCH_KUBERNETES_VALIDATE=... NNBENCH_CHECK_JSONSCHEMA=...`
# for `eval`; without Python 3 it prints nothing and says why on stderr:
# the test then skips, unless NNBENCH_REQUIRE_SCHEMAS is set.
set -euo pipefail

here=$(dirname "$(realpath "$0")")
venv=${CARGO_TARGET_DIR:-$here/../target}/nnbench/tools/schemas
packages=(kubernetes-validate==1.37.0 check-jsonschema==0.39.0)

if ! command -v python3 >/dev/null; then
  echo "schemas.sh: no python3 here to install the validators into" >&2
  exit 0
fi
if [[ ! -x $venv/bin/kubernetes-validate || ! -x $venv/bin/check-jsonschema ]]; then
  echo "schemas.sh: installing ${packages[*]} from PyPI into $venv" >&2
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${packages[@]}" >&2
fi
venv=$(realpath "$venv")
echo "export NNBENCH_KUBERNETES_VALIDATE=$venv/bin/kubernetes-validate NNBENCH_CHECK_JSONSCHEMA=$venv/bin/check-jsonschema"
