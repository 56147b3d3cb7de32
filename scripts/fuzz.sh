#!/usr/bin/env bash
# Fuzzes the readers a user's files reach (fuzz/fuzz_targets: the .npy
# reader, the run record and baseline reader, a disk tier entry, the
# history database's rows as the tool reads them) with cargo fuzz on the
# nightly toolchain, from the seed corpus in fuzz/corpus, and fails on any
# crash, hang or input that takes memory beyond libFuzzer's limit:
#
#   scripts/fuzz.sh              # each target 10 s, an unoptimized build (CI)
#   scripts/fuzz.sh 60           # each target 60 s
#   scripts/fuzz.sh --release 600
#
# cargo-fuzz is installed from crates.io into a cache ($NNBENCH_CACHE,
# default ~/.cache/nnbench) once. The build and what it finds go under
# target/fuzz: the inputs found interesting in corpus/TARGET (the seeds
# are read from fuzz/corpus, never written), a crash's input in
# artifacts/TARGET. An input that crashed is kept as a test: copy it to
# fuzz/found/TARGET/, which tests/fuzz_found.rs replays. Prints a line a
# target, `fuzz TARGET: N inputs, K crashes`, which the figure bench
# benches/fuzz.rs reads.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=--dev
if [[ "${1:-}" == "--release" ]]; then
    profile=--release
    shift
fi
seconds="${1:-10}"
targets=(npy record disk_entry history)

if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "fuzz.sh: cargo fuzz needs the nightly toolchain, and rustup has none (rustup toolchain install nightly)" >&2
    exit 2
fi
cache="${NNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nnbench}/cargo-fuzz-0.13.2"
if [[ ! -x "$cache/bin/cargo-fuzz" ]]; then
    echo "fuzz.sh: installing cargo-fuzz 0.13.2 into $cache" >&2
    cargo install --quiet --locked cargo-fuzz --version 0.13.2 --root "$cache" >&2
fi
export PATH="$cache/bin:$PATH"

out=$PWD/target/fuzz
mode=debug
[[ "$profile" == --release ]] && mode=release
(cd fuzz && cargo +nightly fuzz build "$profile" --target-dir "$out/build" >&2)
bin="$out/build/x86_64-unknown-linux-gnu/$mode"

# ASan takes the constant tables of SQLite's amalgamation, linked once, for
# globals defined twice.
export ASAN_OPTIONS="detect_odr_violation=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
failed=0
for target in "${targets[@]}"; do
    mkdir -p "$out/corpus/$target" "$out/artifacts/$target"
    rm -f "$out/artifacts/$target"/*
    log="$out/$target.log"
    status=0
    "$bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$out/artifacts/$target/" \
        "$out/corpus/$target" "fuzz/corpus/$target" >"$log" 2>&1 || status=$?
    runs=$(grep -oE '^Done [0-9]+ runs' "$log" | grep -oE '[0-9]+' || echo 0)
    crashes=$(find "$out/artifacts/$target" -type f ! -name 'slow-unit-*' | wc -l)
    echo "fuzz $target: $runs inputs, $crashes crashes"
    if ((status != 0 || crashes > 0)); then
        failed=1
        echo "fuzz.sh: $target failed (exit $status); its log: $log; the input: $(find "$out/artifacts/$target" -type f | head -1)" >&2
        tail -30 "$log" >&2
    fi
done
exit $failed
