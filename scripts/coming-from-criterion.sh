#!/usr/bin/env bash
# Runs the base64 encoder's bench as criterion measures it and as nnbench
# does, one after the other on this machine, and writes what each printed,
# stamped with the commit, the machine and the date, to
# docs/src/images/base64-outputs.txt, which the book's page "Coming from
# criterion or divan" shows.
#
#   scripts/coming-from-criterion.sh
set -euo pipefail
cd "$(dirname "$0")/.."

out=docs/src/images/base64-outputs.txt
commit=$(git rev-parse --short=7 HEAD)
[[ -z "$(git status --porcelain -- . ':!docs')" ]] || commit="$commit-dirty"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
machine="$cpu, $(nproc) cores"
cargo bench --bench base64_criterion --bench base64 --no-run >&2
# A first run of each: criterion compares with its last run where it has one.
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
rm -rf "$target/criterion/encode"
criterion=$(cargo bench -q --bench base64_criterion 2>/dev/null)
nnbench=$(cargo bench -q --bench base64 2>&1 | grep -v "^$")
{
    echo '```text'
    echo "# commit $commit, $machine, $(date -u +%Y-%m-%d)"
    echo '$ cargo bench --bench base64_criterion'
    printf '%s\n' "$criterion" | grep -v '^$'
    echo
    echo '$ cargo bench --bench base64'
    printf '%s\n' "$nnbench"
    echo '```'
} >"$out"
echo "$out: written" >&2
