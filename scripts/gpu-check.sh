#!/usr/bin/env bash
# Checks nnbench's GPU paths on a real CUDA machine and prints their
# figures: allocator peaks, timing that waits for the device, NVML beside
# the allocator and alone, GPU memo budgets, --isolate and an out-of-memory
# on the device, the Fashion-MNIST sweep's CUDA cases and a paired run.
#
#   scripts/gpu-check.sh                   # both steps, on a CUDA machine with Rust
#   scripts/gpu-check.sh build             # step 1, here: target/gpu-check/bundle
#   scripts/gpu-check.sh run BUNDLE [OUT]  # step 2, on the CUDA machine
#
# The CUDA machine needs a python3 whose torch has CUDA, and nothing else:
# no Rust, no network. `build` compiles the benches against the libtorch
# of that torch's version (TORCH_VERSION, default 2.11.0), laid out from
# PyPI's wheel by scripts/libtorch.sh, with the tch release made for it:
# Cargo takes one `links = "tch"` package per build, so the swap is made
# in a copy of the workspace under target/gpu-check/. `run` loads the
# machine's own torch and NVIDIA libraries, runs each check, writes the
# records, each step's log and a summary (summary.json, summary.md) under
# OUT (default target/gpu-check/out), and exits 1 when a check failed.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
say() { echo "gpu-check.sh: $*" >&2; }

# The tch release made for each libtorch.
tch_for() {
    case "$1" in
        2.11.*) echo 0.24.0 ;;
        2.12.*) echo 0.25.0 ;;
        2.13.*) echo 0.26.0 ;;
        *) say "no tch release known for torch $1"; exit 1 ;;
    esac
}

# Executables of the bench targets a `cargo bench --no-run` built.
executables() {
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and "bench" in m["target"]["kind"]:
        print(m["target"]["name"], m["executable"])'
}

build() {
    local version="${TORCH_VERSION:-2.11.0}"
    local tch
    tch="$(tch_for "$version")"
    local out="$root/target/gpu-check"
    local ws="$out/workspace" bundle="$out/bundle"

    eval "$(TORCH_VERSION="$version" LIBTORCH_CUDA=1 "$root/scripts/libtorch.sh")"
    eval "$("$root/scripts/fashion-mnist.sh")"

    say "copying the workspace to $ws, with tch $tch"
    rm -rf "$ws"
    mkdir -p "$ws"
    (cd "$root" && git ls-files -z --cached --others --exclude-standard |
        tar --null -T - -cf - | tar -xf - -C "$ws")
    sed -i -E \
        -e "s/^tch = \\{ version = \"[^\"]*\"/tch = { version = \"=$tch\"/" \
        -e "s/^torch-sys = \\{ version = \"[^\"]*\"/torch-sys = { version = \"=$tch\"/" \
        "$ws/nnbench-core/Cargo.toml"
    grep -q "^tch = { version = \"=$tch\"" "$ws/nnbench-core/Cargo.toml" ||
        { say "could not pin tch $tch in the copy"; exit 1; }

    rm -rf "$bundle"
    mkdir -p "$bundle/bin"
    # libtorch_cuda's own NVIDIA libraries are the CUDA machine's: they
    # are not here to resolve its symbols against at link time.
    say "building the benches with the tch feature"
    (cd "$ws" && CARGO_TARGET_DIR="$out/target" \
        RUSTFLAGS="-C link-arg=-Wl,--allow-shlib-undefined" \
        cargo bench -p nnbench --features tch --bench gpu --bench mnist --no-run \
        --message-format json 2> "$out/build-tch.log") | executables |
        while read -r name exe; do cp "$exe" "$bundle/bin/$name-tch"; done
    say "building the bench without it (NVML alone)"
    (cd "$root" && cargo bench -p nnbench --bench gpu --no-run --message-format json \
        2> "$out/build.log") | executables |
        while read -r name exe; do cp "$exe" "$bundle/bin/$name"; done
    for exe in gpu-tch mnist-tch gpu; do
        [[ -x "$bundle/bin/$exe" ]] || { say "$exe was not built: see $out/build*.log"; exit 1; }
        strip "$bundle/bin/$exe"
    done

    mkdir -p "$bundle/fashion-mnist"
    for file in "$NNBENCH_FASHION_MNIST"/*-ubyte; do
        gzip -c "$file" > "$bundle/fashion-mnist/$(basename "$file").gz"
    done
    cp "$root/scripts/gpu-check.sh" "$root/scripts/gpu_check.py" "$bundle/"
    echo "torch $version, tch $tch, $(cd "$root" && git describe --always --dirty)" > "$bundle/BUILT"
    du -sh "$bundle" >&2
    echo "$bundle"
}

run() {
    local bundle out
    bundle="$(cd "${1:?scripts/gpu-check.sh run BUNDLE [OUT]}" && pwd)"
    out="${2:-$root/target/gpu-check/out}"
    mkdir -p "$out"
    out="$(cd "$out" && pwd)"
    local python="${PYTHON:-python3}"

    # The machine's torch and the NVIDIA libraries its wheels installed.
    local libs
    libs="$("$python" - <<'EOF'
import glob, os, torch
site = os.path.dirname(os.path.dirname(torch.__file__))
dirs = [os.path.join(os.path.dirname(torch.__file__), "lib")]
dirs += sorted({os.path.dirname(p) for p in glob.glob(os.path.join(site, "nvidia", "**", "lib*.so*"), recursive=True)})
print(":".join(dirs))
EOF
)"
    # NVML (libnvidia-ml.so.1) comes with the driver, which containers
    # mount where the loader may not look.
    local driver
    for driver in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
        [[ -e "$driver/libnvidia-ml.so.1" ]] && libs="$libs:$driver"
    done
    export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export NNBENCH_GPU_CHECK_PYTHON="$python"
    # Scratch: the data unpacked, the disk tier, the base copies of the
    # paired runs.
    local work
    work="$(mktemp -d "${TMPDIR:-/tmp}/nnbench-gpu-check.XXXXXX")"
    export NNBENCH_FASHION_MNIST="$work/fashion-mnist"
    mkdir -p "$NNBENCH_FASHION_MNIST"
    for gz in "$bundle"/fashion-mnist/*.gz; do
        gunzip -c "$gz" > "$NNBENCH_FASHION_MNIST/$(basename "$gz" .gz)"
    done
    # The records' and the disk tier's folder (the trained models).
    export CARGO_TARGET_DIR="$work/target"
    local bin="$bundle/bin"
    cd "$out"

    # Each step's output goes to its log, and the device's used memory,
    # every 50 ms while it runs, to its .smi file; a step that fails is
    # recorded and the next one runs.
    step() {
        local name="$1"
        shift
        say "$name: $*"
        local started=$SECONDS status=0
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 50 \
            > "$out/$name.smi" 2> /dev/null &
        local smi=$!
        # No step may take the whole lease of a borrowed machine.
        timeout "${GPU_CHECK_STEP_TIMEOUT:-180}" "$@" > "$out/$name.log" 2>&1 || status=$?
        kill "$smi" 2> /dev/null || true
        wait "$smi" 2> /dev/null || true
        echo "$name $status $((SECONDS - started))" >> "$out/steps"
    }
    : > "$out/steps"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/device.txt" || true
    cat "$bundle/BUILT" >> "$out/device.txt"

    local quick=(--warm-up-time 0.5 --measurement-time 2)
    step reference "$python" "$bundle/gpu_check.py" reference --out "$out/reference.json"
    step alloc "$bin/gpu-tch" --bench alloc/ --out "$out/alloc.json"
    step alloc-nvml env NNBENCH_GPU=nvml "$bin/gpu-tch" --bench alloc/ --out "$out/alloc-nvml.json"
    step alloc-isolate "$bin/gpu-tch" --bench alloc/ --isolate --out "$out/alloc-isolate.json"
    step matmul "$bin/gpu-tch" --bench matmul/ "${quick[@]}" --out "$out/matmul.json"
    cp "$bin/gpu-tch" "$work/gpu-base"
    step matmul-paired "$bin/gpu-tch" --bench matmul/ --paired "$work/gpu-base" --max-rounds 12 --out "$out/matmul-paired.json"
    step pair "$bin/gpu-tch" --bench pair/ --out "$out/pair.json"
    step pair-budget "$bin/gpu-tch" --bench pair/ --memo-gpu-budget 2.5GiB --out "$out/pair-budget.json"
    step oom "$bin/gpu-tch" --bench oom/ alloc/ --out "$out/oom.json"
    step child "$bin/gpu" --bench child/ --out "$out/child.json"
    step mnist "$bin/mnist-tch" --bench classify/ "${quick[@]}" --out "$out/mnist.json"
    cp "$bin/mnist-tch" "$work/mnist-base"
    step mnist-paired "$bin/mnist-tch" --bench @cuda --skip forward/ --paired "$work/mnist-base" \
        --max-rounds 12 --out "$out/mnist-paired.json"
    rm -rf "$work"
    "$python" "$bundle/gpu_check.py" judge "$out"
}

case "${1:-all}" in
    build) build > /dev/null ;;
    run) shift; run "$@" ;;
    all) run "$(build)" ;;
    *) say "unknown step $1: build, run BUNDLE [OUT], or nothing for both"; exit 1 ;;
esac
