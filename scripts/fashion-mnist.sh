#!/usr/bin/env bash
# Fetches Fashion-MNIST (70,000 28x28 images of clothes in 10 classes) from
# Debian's dataset-fashion-mnist package, unpacks its IDX files, and prints
# the environment variable that the `mnist` bench reads:
#
#   eval "$(scripts/fashion-mnist.sh)"
#   cargo bench --features tch --bench mnist
#
# Idempotent: the files are cached under $NNBENCH_CACHE (default
# ~/.cache/nnbench) and reused. Needs apt-get, as on Debian and Ubuntu.
set -euo pipefail

cache="${NNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nnbench}"
dest="$cache/fashion-mnist"
files=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)

say() { echo "fashion-mnist.sh: $*" >&2; }

if [[ -f "$dest/.complete" ]]; then
    say "using $dest"
    echo "export NNBENCH_FASHION_MNIST='$dest'"
    exit 0
fi

command -v apt-get > /dev/null || { say "apt-get not found: Debian's package is the source"; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/nnbench-fashion.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# apt-get download as root warns that its sandbox user cannot write here.
download() {
    (cd "$work" && apt-get download dataset-fashion-mnist 2>&1 |
        grep -v '^W: Download is performed unsandboxed' >&2)
    compgen -G "$work/dataset-fashion-mnist_*.deb" > /dev/null
}
say "downloading Debian's dataset-fashion-mnist"
if ! download; then
    # A machine whose package lists were never fetched (a fresh container).
    if [[ "$(id -u)" == 0 ]]; then
        say "refreshing apt's package lists"
        apt-get update -qq >&2 || true
    fi
    download || {
        say "apt-get could not download dataset-fashion-mnist (as root: apt-get update)"
        exit 1
    }
fi
dpkg-deb -x "$work"/dataset-fashion-mnist_*.deb "$work/root"
staged="$work/fashion-mnist"
mkdir -p "$staged"
for file in "${files[@]}"; do
    gzip -dc "$work/root/usr/share/datasets/fashion-mnist/$file.gz" > "$staged/$file"
done
touch "$staged/.complete"

mkdir -p "$cache"
rm -rf "$dest"
mv "$staged" "$dest"
say "done: $dest"
echo "export NNBENCH_FASHION_MNIST='$dest'"
