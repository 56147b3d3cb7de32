#!/usr/bin/env bash
# Runs the `sweep` bench as a Slurm job array of SHARDS tasks, then merges
# the shards' records in a job that starts when every task succeeded:
#
#   examples/slurm/submit.sh [SHARDS] [RESULTS]
#
# The bench is built once, here, and every task runs the same executable
# (a shared file system holds it and the results).
set -euo pipefail
shards=${1:-4}
results=$(realpath -m "${2:-nnbench-results}")
here=$(dirname "$(realpath "$0")")
mkdir -p "$results"

bench=$(cargo bench --bench sweep --no-run --message-format=json \
  | python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "sweep" and m.get("executable"):
        print(m["executable"])')

array=$(sbatch --parsable --array="0-$((shards - 1))" --output="$results/slurm-%A_%a.out" \
  "$here/shard.sbatch" "$bench" "$results")
sbatch --parsable --dependency="afterok:$array" --output="$results/slurm-merge-%j.out" \
  "$here/merge.sbatch" "$results"
echo "submitted array $array of $shards shards; results in $results"
