#!/usr/bin/env bash
# Lays out a CPU libtorch for the `tch` feature from PyPI's torch wheel, the
# only place these builds can fetch one from, and prints the environment to
# build and run with:
#
#   eval "$(scripts/libtorch.sh)"
#   cargo test --features tch
#
# The wheel is a CUDA build: its libtorch_cpu needs the CUDA runtime and
# CUPTI libraries at load time, which two small nvidia wheels provide, while
# libtorch_cuda is left out (torch-sys links it whenever it is present).
# libtorch.so, which pulls libtorch_cuda in, becomes a link to libtorch_cpu.
#
# LIBTORCH_CUDA=1 lays out the whole wheel instead, libtorch_cuda
# included, to build binaries that run on a CUDA machine against that
# machine's own torch and NVIDIA libraries (scripts/gpu-check.sh): the
# NVIDIA libraries are not fetched, so such a layout links but does not
# load here.
#
# Idempotent: the layout is cached under $NNBENCH_CACHE (default
# ~/.cache/nnbench) and reused. TORCH_VERSION picks the wheel (default
# 2.13.0, the libtorch of tch 0.26); PYTHON the interpreter whose pip fetches.
set -euo pipefail

version="${TORCH_VERSION:-2.13.0}"
python="${PYTHON:-python3}"
cache="${NNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nnbench}"
cuda_layout="${LIBTORCH_CUDA:-0}"
if [[ "$cuda_layout" == 1 ]]; then
    dest="$cache/libtorch-$version-cuda"
else
    dest="$cache/libtorch-$version-cpu"
fi

say() { echo "libtorch.sh: $*" >&2; }

print_env() {
    echo "export LIBTORCH='$dest'"
    echo "export LIBTORCH_CXX11_ABI=1"
    [[ "$cuda_layout" == 1 ]] && return
    echo "export LD_LIBRARY_PATH='$dest/lib:$dest/cuda-lib'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
}

# Moves the layout staged under $staged into the cache, described.
install() {
    echo "$1" > "$staged/VERSION"
    touch "$staged/.complete"
    mkdir -p "$cache"
    rm -rf "$dest"
    mv "$staged" "$dest"
    say "done: $dest"
    print_env
}

if [[ -f "$dest/.complete" ]]; then
    say "using $dest"
    print_env
    exit 0
fi

command -v "$python" > /dev/null || { say "$python not found: set PYTHON"; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/nnbench-libtorch.XXXXXX")"
trap 'rm -rf "$work"' EXIT

say "downloading torch $version from PyPI"
"$python" -m pip download --quiet --no-deps --only-binary=:all: \
    --dest "$work/wheels" "torch==$version" >&2
wheel="$(ls "$work"/wheels/torch-"$version"-*.whl)"

if [[ "$cuda_layout" == 1 ]]; then
    say "laying out $dest, libtorch_cuda included"
    unzip -q "$wheel" 'torch/include/*' 'torch/lib/*.so*' -d "$work/torch"
    staged="$work/libtorch"
    mkdir -p "$staged"
    mv "$work/torch/torch/include" "$staged/include"
    mv "$work/torch/torch/lib" "$staged/lib"
    install "torch $version from PyPI, CUDA build, without its NVIDIA libraries"
    exit 0
fi
# The CUDA runtime and CUPTI the wheel was built against, as it names them:
# through the cuda-toolkit meta package (CUDA 13 wheels), or directly.
requires="$(unzip -p "$wheel" "torch-$version.dist-info/METADATA" | sed -n 's/^Requires-Dist: //p')"
toolkit="$(sed -n 's/^cuda-toolkit\[.*\]==\([0-9.]*\).*/\1/p' <<< "$requires" | head -n 1)"
if [[ -n "$toolkit" ]]; then
    cuda="CUDA $toolkit"
    say "downloading the $cuda runtime and CUPTI libraries"
    "$python" -m pip download --quiet --only-binary=:all: \
        --dest "$work/wheels" "cuda-toolkit[cudart,cupti]==$toolkit" >&2
else
    mapfile -t runtime < <(sed -n 's/^\(nvidia-cuda-\(runtime\|cupti\)-cu[0-9]*==[0-9.]*\).*/\1/p' <<< "$requires")
    [[ ${#runtime[@]} -gt 0 ]] || { say "torch $version names no CUDA runtime wheel"; exit 1; }
    cuda="${runtime[*]}"
    say "downloading $cuda"
    "$python" -m pip download --quiet --no-deps --only-binary=:all: \
        --dest "$work/wheels" "${runtime[@]}" >&2
fi

say "laying out $dest"
mkdir -p "$work/torch" "$work/nvidia"
unzip -q "$wheel" 'torch/include/*' 'torch/lib/libc10.so' 'torch/lib/libtorch_cpu.so' \
    'torch/lib/libgomp.so.1' 'torch/lib/libshm.so' -d "$work/torch"
for nvidia in "$work"/wheels/nvidia_cuda_*.whl; do
    unzip -q -o "$nvidia" -d "$work/nvidia"
done
staged="$work/libtorch"
mkdir -p "$staged/lib" "$staged/cuda-lib"
mv "$work/torch/torch/include" "$staged/include"
mv "$work"/torch/torch/lib/* "$staged/lib/"
ln -s libtorch_cpu.so "$staged/lib/libtorch.so"
ln -s libgomp.so.1 "$staged/lib/libgomp.so"
find "$work/nvidia" \( -name 'libcudart.so*' -o -name 'libcupti.so*' \) \
    -exec cp -P {} "$staged/cuda-lib/" \;
install "torch $version from PyPI, with the $cuda runtime"
