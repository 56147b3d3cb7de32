#!/usr/bin/env bash
# Runs a bench as a Slurm job array, one task per shard, then a
# merge job: one record of the shards, compared with the last merged run;
# the merge job fails on a regression or a failed case.
#
#   examples/slurm/submit.sh [OPTIONS] [-- SBATCH_OPTIONS...]
#   examples/slurm/submit.sh --rerun RESULTS/SUBMISSION
#
#   --bench NAME      the bench target (default sweep), built here with
#                     `cargo bench --bench NAME --no-run`
#   --shards N        tasks in the array (default 4)
#   --results DIR     where submissions go (default nnbench-results)
#   --cpus N          CPUs of each task (default 2)
#   --mem SIZE        memory of each task (default 4G)
#   --time LIMIT      time limit of each task (default 1:00:00)
#   --partition NAME  the partition (default: the cluster's)
#   --fail-on SPEC    the merge's thresholds (nnbench compare --fail-on)
#   -- ...            any other sbatch options, given to every job
#   --rerun DIR       in submission DIR, the shards that left no record or
#                     a failed case run again, then the merge
#
# The request is checked with `sbatch --test-only` first: one that the
# cluster can never run fails here with Slurm's reason. The bench is built
# once, here, and copied with the nnbench tool (this workspace's, else the
# one on PATH from `cargo install nnbench-cli`) into the submission's
# folder, DIR/<time>/, which a shared file system holds: the shards'
# records shard-K.json (K = 1..N, the array's task ids), the jobs' output,
# run.json (merged) and comparison.md. DIR/last.json is the last merged run
# that passed: the next submission's baseline and the costs its shards are
# balanced by.
set -euo pipefail
here=$(dirname "$(realpath "$0")")
say() { echo "submit.sh: $*" >&2; }

bench_name=sweep shards=4 results=nnbench-results cpus=2 mem=4G limit=1:00:00 partition='' fail_on='' rerun=''
extra=()
while (($#)); do
  case $1 in
    --bench | --shards | --results | --cpus | --mem | --time | --partition | --fail-on | --rerun)
      (($# >= 2)) || { say "$1 needs a value (see --help)"; exit 2; }
      case $1 in
        --bench) bench_name=$2 ;;
        --shards) shards=$2 ;;
        --results) results=$2 ;;
        --cpus) cpus=$2 ;;
        --mem) mem=$2 ;;
        --time) limit=$2 ;;
        --partition) partition=$2 ;;
        --fail-on) fail_on=$2 ;;
        --rerun) rerun=$2 ;;
      esac
      shift 2
      ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) say "unknown option $1 (see --help)"; exit 2 ;;
  esac
done

# The executable of cargo target `$1` among cargo's JSON messages on stdin.
executable() {
  python3 -c 'import json, sys
found = [m["executable"] for m in map(json.loads, sys.stdin)
         if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m.get("executable")]
if not found:
    sys.exit(1)
print(found[-1])' "$1"
}

# Shard numbers of `$submission` whose record is missing or holds a failed case.
# shellcheck disable=SC2153 # SHARDS and the OPTIONS come from submission.env
failed_shards() {
  local k
  for k in $(seq "$SHARDS"); do
    if ! python3 -c 'import json, sys
cases = json.load(open(sys.argv[1])).get("cases", [])
sys.exit(any(c.get("error") for c in cases))' "$submission/shard-$k.json" 2>/dev/null; then
      echo "$k"
    fi
  done
}

# Submits tasks `$1` (an sbatch --array list) of the array and the merge
# after them; notes the merge's job id in the submission.
submit() {
  local tasks=$1 array merge
  # shellcheck disable=SC2153
  array=$(sbatch --parsable --array="$tasks" "${OPTIONS[@]}" \
    --output="$submission/slurm-%A_%a.out" "$here/shard.sbatch" "$submission" "$SHARDS")
  # shellcheck disable=SC2153
  merge=$(sbatch --parsable --dependency="afterany:${array%%;*}" "${MERGE_OPTIONS[@]}" \
    --output="$submission/slurm-merge-%j.out" "$here/merge.sbatch" "$submission" "$SHARDS")
  echo "MERGE_JOB=$merge" >>"$submission/submission.env"
  echo "submission: $submission"
  echo "shards: job array ${array%%;*}, tasks $tasks of 1-$SHARDS"
  echo "merge: job $merge, once the shards end (fails on a regression or a failed case)"
  echo "rerun failed shards: $0 --rerun $submission"
}

if [[ -n $rerun ]]; then
  submission=$(realpath "$rerun")
  [[ -f $submission/submission.env ]] || { say "$rerun: not a submission (no submission.env)"; exit 2; }
  # shellcheck source=/dev/null
  source "$submission/submission.env"
  mapfile -t failed < <(failed_shards)
  if ((${#failed[@]} == 0)); then
    say "every shard of $submission has its record, without a failed case: nothing to rerun"
    exit 0
  fi
  # The merge of the last attempt, if it still waits, is replaced.
  scancel "$MERGE_JOB" 2>/dev/null || true
  for k in "${failed[@]}"; do rm -f "$submission/shard-$k.json"; done
  submit "$(IFS=,; echo "${failed[*]}")"
  exit 0
fi

[[ $shards =~ ^[1-9][0-9]*$ ]] || { say "--shards $shards: a number of shards, 1 or more"; exit 2; }
options=(--cpus-per-task="$cpus" --mem="$mem" --time="$limit")
[[ -z $partition ]] || options+=(--partition="$partition")
options+=("${extra[@]}")
merge_options=(--cpus-per-task=1 --mem=1G --time=0:10:00)
[[ -z $partition ]] || merge_options+=(--partition="$partition")
merge_options+=("${extra[@]}")
if ! why=$(sbatch --test-only --array="1-$shards" "${options[@]}" "$here/shard.sbatch" 2>&1); then
  say "Slurm would never run the shards as asked (${options[*]}): ${why#sbatch: error: }"
  exit 1
fi

results=$(realpath -m "$results")
submission=$results/$(date -u +%Y%m%dT%H%M%SZ)
while [[ -e $submission ]]; do submission+=x; done
mkdir -p "$submission"
bench=$(cargo bench --bench "$bench_name" --no-run --message-format=json | executable "$bench_name") || {
  say "no bench \`$bench_name\` was built (--bench names a [[bench]] target with harness = false)"
  exit 2
}
# This workspace's own tool where it has one, so that the tool reads the
# records its bench writes; else the installed one.
if ! tool=$(cargo build --release -p nnbench-cli --bin nnbench --message-format=json 2>/dev/null | executable nnbench) \
  && ! tool=$(command -v nnbench); then
  say "no nnbench tool: install it with \`cargo install nnbench-cli\`"
  exit 2
fi
cp "$bench" "$submission/bench"
cp "$tool" "$submission/nnbench"
if [[ -f $results/last.json ]]; then
  cp "$results/last.json" "$submission/baseline.json"
fi
{
  echo "SHARDS=$shards"
  echo "FAIL_ON=${fail_on@Q}"
  echo "OPTIONS=(${options[*]@Q})"
  echo "MERGE_OPTIONS=(${merge_options[*]@Q})"
} >"$submission/submission.env"
# shellcheck source=/dev/null
source "$submission/submission.env"
submit "1-$shards"
