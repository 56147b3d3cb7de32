#!/usr/bin/env bash
# Builds the reference STREAM benchmark that benches/roofline.rs measures
# the triad roof against: McCalpin's stream.c (version 5.10) in the
# edition HPC Challenge ships, from Debian's source archive, compiled here
# with the system C compiler and OpenMP, beside scripts/stream/ (what it
# asks of HPCC and MPI, for one process). Prints the binary's path:
#
#   NNBENCH_STREAM="$(scripts/stream.sh)"
#   OMP_NUM_THREADS=1 "$NNBENCH_STREAM" 16777216   # three arrays of 2^24 doubles
#
# Idempotent: the build is cached under $NNBENCH_CACHE (default
# ~/.cache/nnbench) and reused while scripts/stream/ is unchanged. CC picks
# the compiler (default cc).
set -euo pipefail
cd "$(dirname "$0")"

cc="${CC:-cc}"
cache="${NNBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/nnbench}"
tarball=hpcc_1.5.0.orig.tar.gz
url="http://deb.debian.org/debian/pool/main/h/hpcc/$tarball"
sha256=0a6fef7ab9f3347e549fed65ebb98234feea9ee18aea0c8f59baefbe3cf7ffb8
shim=$(cat stream/hpcc.h stream/main.c | sha256sum | cut -c1-12)
dest="$cache/stream-hpcc-1.5.0-$shim"

say() { echo "stream.sh: $*" >&2; }

if [[ -x "$dest/stream" ]]; then
    say "using $dest/stream"
    echo "$dest/stream"
    exit 0
fi

command -v "$cc" > /dev/null || { say "$cc not found: set CC"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say "fetching $url"
curl -fsSL --retry 3 -o "$work/$tarball" "$url"
echo "$sha256  $work/$tarball" | sha256sum -c --quiet - >&2 \
    || { say "$tarball is not the file this script was written for"; exit 1; }
tar -xzf "$work/$tarball" -C "$work" hpcc-1.5.0/STREAM/stream.c
mkdir -p "$dest"
say "building $dest/stream with $cc"
# -march=native: the machine's own vector units, as the roofs use them.
"$cc" -O3 -march=native -fopenmp -w -I stream \
    "$work/hpcc-1.5.0/STREAM/stream.c" stream/main.c -o "$work/stream"
mv "$work/stream" "$dest/stream"
echo "$dest/stream"
