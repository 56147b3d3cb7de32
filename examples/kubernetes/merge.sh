#!/bin/sh
# The pod of a run's merge Job (merge-job.yaml), started by submit.sh once
# the shards Job has ended, succeeded or not: one record of the SHARDS
# shards, RESULTS/RUN/run.json, and what changed since the run's baseline,
# comparison.md. Fails (exit 1) on a missing shard, a failed case or a
# regression; a run that passes becomes RESULTS/last.json, the next run's
# baseline. Like shard.sh, it runs anywhere with the same variables:
#
#   RUN=r1 SHARDS=4 NNBENCH=nnbench RESULTS=/tmp/results sh merge.sh
set -eu
: "${RESULTS:=/results}"
: "${FAIL_ON:=}"
dir=$RESULTS/$RUN
missing='' failed='' count=0
set -- # the records, one argument each
k=1
while [ "$k" -le "$SHARDS" ]; do
  if [ -f "$dir/shard-$k.json" ]; then
    set -- "$@" "$dir/shard-$k.json"
    [ -e "$dir/shard-$k.passed" ] || failed="$failed $k"
  else
    missing="$missing $k"
    count=$((count + 1))
  fi
  k=$((k + 1))
done
rerun="examples/kubernetes/submit.sh --rerun $RUN"
if [ -n "$missing" ]; then
  echo "merge: $count of $SHARDS shards left no record:$missing (their pods' logs: kubectl logs -l nnbench/run=$RUN,nnbench/part=shards --prefix)" >&2
  echo "merge: rerun them, and this merge after them: $rerun" >&2
  exit 1
fi
"$NNBENCH" merge "$@" -o "$dir/run.json"

baseline=none
[ ! -L "$dir/baseline" ] || baseline=$(readlink "$dir/baseline")
if [ "$baseline" = none ]; then
  # No baseline yet: the summary of this run alone, its failed cases judged.
  set -- "$dir/run.json" "$dir/run.json"
else
  set -- "$dir/$baseline" "$dir/run.json"
  [ -z "$FAIL_ON" ] || set -- "$@" --fail-on "$FAIL_ON"
fi
status=0
"$NNBENCH" compare "$@" --format markdown --out "$dir/comparison.md" || status=$?
[ ! -f "$dir/comparison.md" ] || cat "$dir/comparison.md"
if [ "$status" -ne 0 ]; then
  echo "merge: the comparison failed (exit $status): $dir/comparison.md; $RESULTS/last.json stays the baseline" >&2
  if [ -n "$failed" ]; then
    echo "merge: shards$failed had a failed case; rerun them, and this merge after them: $rerun" >&2
  fi
  exit "$status"
fi
cp "$dir/run.json" "$RESULTS/.last-$RUN.json"
mv "$RESULTS/.last-$RUN.json" "$RESULTS/last.json"
