#!/usr/bin/env bash
# Runs the figure benches, which measure nnbench itself side by side with
# its peers, and lets each write its section of the book's page of
# measured figures (docs/src/figures.md):
#
#   scripts/figures.sh                  # every figure bench (under an hour on 2 cores)
#   scripts/figures.sh overhead memory  # these
#   scripts/figures.sh --test           # each once, small, checking its section (CI)
#   scripts/figures.sh --lint           # clippy on each, as CI runs it
#
# They are `bench = false` in Cargo.toml, so that plain `cargo bench` runs
# the main job only. seed_sweep makes 1.5 GB of matrices and its Python
# peer (scripts/python-peer.sh, from PyPI, cached). mnist is the real
# sweep (the tch feature, libtorch and the data fetched by their
# scripts), run whole four times; CI runs it on its own, so --test leaves
# it out.
set -euo pipefail
cd "$(dirname "$0")/.."

all=(build_cost overhead sampling memory seed_sweep npy_load memo_tier memo_chain memo_plan isolation compare history sharding paired false_alarms scaling async_cases mnist)

test_mode=false
if [[ "${1:-}" == "--test" ]]; then
    test_mode=true
    shift
elif [[ "${1:-}" == "--lint" ]]; then
    # `bench = false` leaves them out of clippy's --all-targets. mnist
    # takes the tch feature, linted with it where libtorch is.
    args=()
    for bench in "${all[@]}"; do
        case $bench in
            mnist | history) ;;
            *) args+=(--bench "$bench") ;;
        esac
    done
    # With the workspace's features, as CI's lints of the workspace
    # checked what these link.
    cargo clippy --workspace --bench history -- -D warnings
    exec cargo clippy --workspace --features tokio "${args[@]}" -- -D warnings
fi
benches=("$@")
(( ${#benches[@]} )) || benches=("${all[@]}")

for bench in "${benches[@]}"; do
    if [[ " ${all[*]} " != *" $bench "* ]]; then
        echo "figures.sh: no figure bench \`$bench\` (they are: ${all[*]})" >&2
        exit 2
    fi
done

# The history bench is the tool's (nnbench-cli), the others the runtime's.
if $test_mode; then
    args=()
    for bench in "${benches[@]}"; do
        case $bench in
            mnist) ;;
            # With the workspace's features, as `cargo test --workspace`
            # built the libraries it links.
            history) cargo test --workspace --bench history ;;
            *) args+=(--bench "$bench") ;;
        esac
    done
    (( ${#args[@]} )) || exit 0
    exec cargo test --features tokio "${args[@]}"
fi
for bench in "${benches[@]}"; do
    case $bench in
        mnist)
            eval "$(scripts/libtorch.sh)"
            eval "$(scripts/fashion-mnist.sh)"
            NNBENCH_FIGURES=1 cargo bench --features tch --bench mnist
            ;;
        history) NNBENCH_FIGURES=1 cargo bench -p nnbench-cli --bench history ;;
        *) NNBENCH_FIGURES=1 cargo bench --features tokio --bench "$bench" ;;
    esac
done
