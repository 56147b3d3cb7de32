#!/usr/bin/env bash
# Runs the figure benches, which measure nnbench itself side by side with
# its peers, and lets each write its section of the book's page of
# measured figures (docs/src/figures.md):
#
#   scripts/figures.sh                  # every figure bench
#   scripts/figures.sh overhead memory  # these
#   scripts/figures.sh --test           # each once, small, checking its section (CI)
#   scripts/figures.sh --lint           # clippy on each, as CI runs it
#   scripts/figures.sh --stale          # the sections measured before a change to what they measure
#   scripts/figures.sh --stale --mark   # those, and each is marked so on the page
#
# Each section is stamped with the commit it measured (`-dirty` where
# files outside the book differed from it). `--stale` names each section
# whose commit is missing, dirty or unknown here, or since which the code
# it measures changed (its bench, the benches' support, and the packages
# it runs), and exits 1 when there is one; the GPU section, written from
# `scripts/gpu-check.sh` on a CUDA machine, is judged the same way.
#
# They are `bench = false` in Cargo.toml, so that plain `cargo bench` runs
# the main job only. seed_sweep makes 1.5 GB of matrices and its Python
# peer (scripts/python-peer.sh, from PyPI, cached); history sets the step
# search beside Apache Otava's (scripts/otava.sh, from PyPI, cached);
# roofline sets the roofs beside numpy (the Python peer) and STREAM
# (scripts/stream.sh, from Debian's source archive, cached). mnist is the real
# sweep (the tch feature, libtorch and the data fetched by their
# scripts), run whole four times; CI runs it on its own, so --test leaves
# it out. capacity runs with libtorch linked (the tch feature, libtorch
# fetched by its script), as a libtorch user's bench. fuzz fuzzes the readers of users' files with cargo fuzz on the
# nightly toolchain (scripts/fuzz.sh); CI runs that script on its own, so
# --test leaves it out too.
set -euo pipefail
cd "$(dirname "$0")/.."

all=(build_cost overhead sampling inputs memory seed_sweep npy_load memo_tier memo_chain memo_plan isolation capacity serving compare history sharding paired false_alarms scaling async_cases roofline streaming fuzz mnist)

test_mode=false
if [[ "${1:-}" == "--test" ]]; then
    test_mode=true
    shift
elif [[ "${1:-}" == "--stale" ]]; then
    mark=false
    [[ "${2:-}" == "--mark" ]] && mark=true
    runtime="nnbench-core/src src nnbench-macros/src nnbench-vocab/src Cargo.lock"
    measures() {
        case $1 in
            npy_load) echo "benches/npy_load.rs benches/support nnbench-core/src/npy Cargo.lock" ;;
            compare) echo "benches/compare.rs benches/support nnbench-core/src/compare nnbench-core/src/record nnbench-vocab/src Cargo.lock" ;;
            history) echo "nnbench-cli/benches benches/support nnbench-cli/src nnbench-core/src/compare nnbench-core/src/record nnbench-vocab/src Cargo.lock" ;;
            build_cost) echo "benches/build_cost.rs benches/support $runtime Cargo.toml nnbench-core/Cargo.toml nnbench-macros/Cargo.toml nnbench-vocab/Cargo.toml" ;;
            roofline) echo "benches/roofline.rs benches/support scripts/stream.sh scripts/stream $runtime" ;;
            fuzz) echo "benches/fuzz.rs benches/support fuzz scripts/fuzz.sh $runtime nnbench-cli/src" ;;
            gpu) echo "benches/gpu.rs benches/mnist.rs benches/support scripts/gpu-check.sh scripts/gpu_check.py $runtime" ;;
            *) echo "benches/$1.rs benches/support $runtime" ;;
        esac
    }
    # The GPU section is measured where a CUDA machine is, not here.
    gpu_hint() { [[ "$1" == gpu ]] && echo " (scripts/gpu-check.sh measures it again on a CUDA machine)"; true; }
    page=docs/src/figures.md
    # A section measured before a change to what it measures stays so
    # until it is measured again, which rewrites it: the line below its
    # stamp says so, once, naming the commit that found it, on every page
    # of the book that shows the section.
    mark_stale() {
        python3 - "$1" "$2" docs/src/*.md <<'PY'
import sys
bench, head, *pages = sys.argv[1:]
again = "`scripts/gpu-check.sh` on a CUDA machine" if bench == "gpu" else f"`scripts/figures.sh {bench}`"
note = "**Measured before a change to the code it measures** (found at "
for page in pages:
    lines = open(page).read().split("\n")
    at = next((i for i, l in enumerate(lines) if l.startswith(f"<!-- figures {bench}:")), None)
    if at is not None and not lines[at + 3].startswith(note):
        lines.insert(at + 2, "")
        lines.insert(at + 3, note + f"{head}): its figures may no longer hold; {again} measures them again.")
        open(page, "w").write("\n".join(lines))
PY
    }
    stale=0
    for bench in "${all[@]}" gpu; do
        stamp=$(grep -A1 -F "<!-- figures $bench:" "$page" | sed -n 2p || true)
        if [[ -z "$stamp" ]]; then
            echo "$bench: no section on $page"
            stale=1
            continue
        elif [[ "$stamp" == "<!-- end figures"* ]]; then
            echo "$bench: never measured"
            stale=1
            continue
        fi
        commit=$(grep -oE '(at |, )[0-9a-f]{7,40}(-dirty)?[,;]' <<<"$stamp" | head -1 | sed -E 's/^(at |, )//; s/[,;]$//' || true)
        day=$(grep -oE '[0-9]{4}-[0-9]{2}-[0-9]{2}' <<<"$stamp" | head -1 || true)
        if [[ -z "$commit" ]]; then
            echo "$bench: measured on $day, before sections carried their commit"
            stale=1
        elif [[ "$commit" == *-dirty ]]; then
            echo "$bench: measured on $day at $commit, on uncommitted changes$(gpu_hint "$bench")"
            stale=1
            $mark && mark_stale "$bench" "$(git rev-parse --short=10 HEAD)"
        elif ! git cat-file -e "$commit^{commit}" 2>/dev/null; then
            echo "$bench: measured on $day at $commit, a commit this repository does not have"
            stale=1
        else
            # shellcheck disable=SC2046 # the paths are words
            changed=$(git diff --name-only "$commit" -- $(measures "$bench"))
            if [[ -n "$changed" ]]; then
                count=$(wc -l <<<"$changed")
                echo "$bench: measured on $day at $commit; since, $count changed file(s) it measures: $(head -3 <<<"$changed" | paste -sd, -)$( ((count > 3)) && echo ", ...")$(gpu_hint "$bench")"
                stale=1
                $mark && mark_stale "$bench" "$(git rev-parse --short=10 HEAD)"
            fi
        fi
    done
    exit $stale
elif [[ "${1:-}" == "--lint" ]]; then
    # `bench = false` leaves them out of clippy's --all-targets. mnist
    # takes the tch feature, linted with it where libtorch is.
    # The book's converted bench (base64, as criterion's and as nnbench's)
    # is `bench = false` too, and linted with them.
    args=(--bench base64 --bench base64_criterion)
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
            mnist | fuzz) ;;
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
        # As a libtorch user's bench: its code's pages resident in every
        # worker, which the prediction must leave out.
        capacity)
            eval "$(scripts/libtorch.sh)"
            NNBENCH_FIGURES=1 cargo bench --features tokio,tch --bench capacity
            ;;
        *) NNBENCH_FIGURES=1 cargo bench --features tokio --bench "$bench" ;;
    esac
done
