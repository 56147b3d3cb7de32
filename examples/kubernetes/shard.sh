#!/bin/sh
# One pod of a run's shards Job (shards-job.yaml): shard K of SHARDS, K =
# JOB_COMPLETION_INDEX + 1 (`--shard auto/SHARDS`), whose record is
# RESULTS/RUN/shard-K.json. submit.sh puts this script and the run's
# settings (RUN, SHARDS, BENCH, NNBENCH) in ConfigMaps; the same variables
# run it anywhere else:
#
#   RUN=r1 SHARDS=4 BENCH=./sweep JOB_COMPLETION_INDEX=0 RESULTS=/tmp/results sh shard.sh
#
# A shard that passed leaves shard-K.passed beside its record: a rerun of
# the run (submit.sh --rerun) starts every index again, and those that
# passed end at once, so only the failed shards run twice.
set -eu
: "${RESULTS:=/results}"
dir=$RESULTS/$RUN
k=$((JOB_COMPLETION_INDEX + 1))
record=$dir/shard-$k.json
mkdir -p "$dir"
if [ -e "$dir/shard-$k.passed" ]; then
  echo "shard $k of $SHARDS passed in an earlier attempt: $record"
  exit 0
fi

# Every shard of a run must plan its split by the same costs, but its pods
# start at different times, and another run's merge may replace last.json
# in between: the first pod to get here names the run's baseline (a copy
# of last.json, or none) in one atomic step, a symbolic link, and every
# pod, reruns included, reads that name.
if [ ! -L "$dir/baseline" ]; then
  mine=none
  if cp "$RESULTS/last.json" "$dir/.baseline-$k.json" 2>/dev/null; then
    mine=.baseline-$k.json
  fi
  ln -s "$mine" "$dir/baseline" 2>/dev/null || true
  if [ "$(readlink "$dir/baseline")" != "$mine" ]; then
    rm -f "$dir/.baseline-$k.json"
  fi
fi
baseline=$(readlink "$dir/baseline")

# A record an earlier attempt left holds what that attempt saw, not this one.
if [ -f "$record" ]; then
  rm "$record"
fi
set -- --bench --shard "auto/$SHARDS" --quiet --out "$record"
[ "$baseline" = none ] || set -- "$@" --shard-costs "$dir/$baseline"
# The bench runs as a child, not exec'd, so that the marker can follow it;
# the shell, the container's first process, passes on the SIGTERM a pod is
# stopped with, so that the bench ends as it does on a terminal.
"$BENCH" "$@" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
status=0
wait "$pid" || status=$?
while kill -0 "$pid" 2>/dev/null; do
  wait "$pid" || status=$?
done
[ "$status" -eq 0 ] || exit "$status"
touch "$dir/shard-$k.passed"
