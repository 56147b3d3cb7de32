#!/usr/bin/env bash
# mdbook, to build the guide in docs/ (`mdbook build docs`), from crates.io.
# Prints `export PATH=...` for `eval`: the mdbook on PATH if it is there,
# else one built once with `cargo install` (a few minutes) and kept under
# $NNBENCH_CACHE (default ~/.cache/nnbench), reused afterwards.
#
#   eval "$(scripts/mdbook.sh)" && mdbook build docs
set -euo pipefail

version="${MDBOOK_VERSION:-0.5.4}"
cache="${NNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nnbench}"
root="$cache/mdbook-$version"

if command -v mdbook >/dev/null && [[ "$(mdbook --version)" == *"$version"* ]]; then
  exit 0
fi
if [[ ! -x "$root/bin/mdbook" ]]; then
  echo "mdbook.sh: building mdbook $version from crates.io into $root" >&2
  cargo install mdbook --version "$version" --locked --no-default-features \
    --features search --root "$root" >&2
fi
echo "export PATH='$root/bin':\"\$PATH\""
