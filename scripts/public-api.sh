#!/usr/bin/env bash
# The public API of `nnbench` as a user's crate sees it (the facade and
# what it re-exports from nnbench-core), one line per item, from rustdoc's
# JSON on the nightly toolchain: api/nnbench.txt. Every change to the API
# shows there in review.
#
#   scripts/public-api.sh           writes api/nnbench.txt
#   scripts/public-api.sh --check   fails where it differs from the code (CI)
#
# The docs of the whole workspace are built on the way, with rustdoc's
# warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "public-api.sh: rustdoc's JSON needs the nightly toolchain, and rustup has none (rustup toolchain install nightly)" >&2
    exit 2
fi
out=$PWD/target/public-api
RUSTDOCFLAGS="-D warnings -Z unstable-options --output-format json" \
    cargo +nightly doc --workspace --no-deps --target-dir "$out" >&2
python3 scripts/public_api.py "$out"/doc/{nnbench,nnbench_core,nnbench_vocab,nnbench_macros}.json >"$out/nnbench.txt"
if [[ "${1:-}" == "--check" ]]; then
    if ! diff -u api/nnbench.txt "$out/nnbench.txt"; then
        echo "public-api.sh: the public API changed (above: - the listing, + the code); if that is meant, run scripts/public-api.sh and say what changed for users in CHANGELOG.md" >&2
        exit 1
    fi
else
    mkdir -p api
    cp "$out/nnbench.txt" api/nnbench.txt
    echo "api/nnbench.txt: $(wc -l <api/nnbench.txt) items" >&2
fi
